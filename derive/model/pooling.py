r"""The pooling of a model: a weight scheme of the catalogue (:mod:`derive.model.schemes`) resolved for ``T`` positions
and a sign family into the weights (normalized to sum 1) and the scalars every law needs,
:math:`\alpha = w^\top Rw`, :math:`\kappa = \|w\|^2`, :math:`W = \sum_t w_t`."""
from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

import sympy as sp

from derive.errors import ParameterError
from derive.model.attention import kappa, sum_w
from derive.model.schemes import Scheme, parse_scheme
from derive.model.families import as_family
from derive.model.signs import Length, SignFamily, check_T
from derive.numbers import Digits, Displayed, Reals, check_digits
from derive.resources import KAPPA_RANGE

__all__ = ["scheme_weights", "Pooling", "pooling", "model_pooling"]


def scheme_weights(scheme, T_value, family: SignFamily | None = None, digits: int = 30,
                   **options) -> tuple[list, str | None]:
    """The weights of a scheme (a :class:`~derive.model.schemes.Scheme`, or a spec of the catalogue
    :mod:`derive.model.schemes` with its options) normalized to sum 1, and a note when they are not unique.

    >>> scheme_weights("causal", 3, mask="strict")
    ([3/4, 1/4, 0], None)
    """
    if family is not None and not isinstance(family, SignFamily):
        raise ParameterError("signs", f"must be a SignFamily or None, got {type(family).__name__}")
    n = check_T(T_value) if family is None else family.check(T_value)
    if not isinstance(scheme, Scheme):
        if not isinstance(scheme, str):
            raise ParameterError("scheme", f"must be a string or a Scheme, got {scheme!r}")
        scheme = parse_scheme(scheme, n, **options)
    return _weights(scheme, n, family, check_digits(digits))


def _weights(scheme: Scheme, n: Length, family: SignFamily | None, digits: Digits) -> tuple[list, str | None]:
    """:func:`scheme_weights` of values checked together (``n`` for ``family``): the limits of the computation only."""
    if family is not None and n > family.max_T:
        raise ParameterError("T", f"{family.syntax} signs are supported for T <= {family.max_T}, got {n}")
    scheme.check(n, family, digits)
    return scheme.normalize(*scheme.weights(n, family, digits))


@dataclass(frozen=True)
class Pooling(Displayed):
    r"""A pooling scheme resolved: the weights (sum 1), the exact ``R`` of the sign family (``None``
    without one), :math:`\alpha = w^\top R w` (``None`` without ``R``), :math:`\kappa = \|w\|^2`,
    :math:`W = \sum_t w_t` and a note when the weights are not unique. A notebook shows it as a table."""

    _DISPLAYED = ("weights", "family", "alpha", "kappa", "W", "note")

    weights: tuple
    family: SignFamily | None
    alpha: sp.Expr | None
    kappa: sp.Expr
    W: sp.Expr
    note: str | None = None
    law: object = None
    r"""For a scheme whose weights vary from sequence to sequence (``softmax``): their law
    (:class:`derive.model.softmax.SoftmaxLaw`); ``weights`` are then their mean, ``alpha`` and ``kappa`` the expectations
    :math:`E[w^\top Rw]` and :math:`E\|w\|^2`, within ``errors``."""
    errors: dict | None = None
    """Absolute errors of ``alpha`` and ``kappa`` where they are computed numerically (``None``: exact)."""

    @property
    def kappa_moments(self) -> tuple:
        r""":math:`(E\|w\|^2, E\|w\|^4)` over the sequences (:math:`(\kappa, \kappa^2)` for fixed weights)."""
        return self.law.kappa_moments if self.law is not None else (self.kappa, self.kappa ** 2)

    @property
    def R(self) -> sp.Matrix | None:
        """The exact ``T x T`` matrix ``R`` (formed on demand: ``alpha`` does not need it)."""
        return None if self.family is None else self.family.R(len(self.weights))

    def floats(self) -> list[float]:
        """The weights as floats (for the Monte Carlo)."""
        return [float(x) for x in self.weights]


def pooling(scheme, T_value, signs=None, *, digits: int = 30, **options) -> Pooling:
    """The one resolver of a weight scheme: ``scheme`` (a :class:`~derive.model.schemes.Scheme`, or a spec of the
    catalogue with its ``options``) for ``T_value`` positions and the sign family ``signs`` (a spec, a
    :class:`SignFamily`, a user's family or ``None``), each checked here (a :class:`~derive.Model`'s, checked when it
    was built, is resolved by :func:`model_pooling`).

    >>> p = pooling("mean", 2, "prefix:2"); p.weights, p.alpha, p.kappa, p.W
    ((1/2, 1/2), 1, 1/2, 1)
    """
    family = as_family(signs)
    n = check_T(T_value) if family is None else family.check(T_value)
    if isinstance(scheme, str):  # parsed once here (a file's weights are read once), its law asked of the scheme
        scheme = parse_scheme(scheme, n, **options)
    elif not isinstance(scheme, Scheme):
        raise ParameterError("scheme", f"must be a string or a Scheme, got {scheme!r}")
    return _pooling(scheme, n, family, check_digits(digits))


def model_pooling(m, digits: int = 30) -> Pooling:
    """The pooling of a :class:`~derive.Model`'s scheme, ``T`` and sign family, which the model checked together when it
    was built: resolved without reading them again, once per model and ``digits``.

    >>> from derive.model.spec import Model
    >>> model_pooling(Model(T=2, weights="mean", signs="prefix:2")).alpha
    1
    """
    from derive.model.spec import Model

    if not isinstance(m, Model):
        raise ParameterError("model", f"must be a derive.Model, got {type(m).__name__}")
    return _model_pooling(m.need("T", "weights"), check_digits(digits))


@lru_cache(maxsize=256)
def _model_pooling(m, digits: Digits) -> Pooling:
    # kept behind model_pooling's checks: an unhashable argument is refused as a ParameterError, never a TypeError here
    return _pooling(m.weights, m.T, m.signs, digits)


def _pooling(scheme: Scheme, n: Length, family: SignFamily | None, digits: Digits) -> Pooling:
    w, note = _weights(scheme, n, family, digits)
    w = Reals(w)  # read once, by the scheme's normalization: trusted by every law below
    law = scheme.law(len(w))
    if law is not None and law.random:
        a, a_error = law.alpha(family) if family is not None else (None, None)
        return Pooling(w, family, a, sp.Float(law.kappa, 17), sum_w(w), note, law,
                       {"alpha": a_error, "kappa": law.error})
    k = kappa(w)
    # weights that nearly cancel (1e300, 1, -1e300, 1) sum to 1 only with huge entries: every law and simulation
    # downstream works in kappa's documented range, and float64 overflows far sooner
    low, high = (sp.Rational(b.numerator, b.denominator) for b in KAPPA_RANGE)
    if not low <= k <= high:
        raise ParameterError("weights", f"normalized to sum 1 they have kappa = |w|^2 = {sp.N(k, 6)}, outside "
                                        f"[{low}, {high}], the documented range of kappa (do they nearly cancel?)")
    # the length of w is n, checked for the family above: its quadratic form need not check it again
    a = family._quadratic_form(list(w), n) if family is not None else None
    return Pooling(w, family, a, k, sum_w(w), note, law)
