r"""The model specification: every parameter of PAPER.md's model, read and checked once, exact and immutable.

A :class:`Model` is built where a user's input enters (the command line, a Python call, a sweep file, the ledger's
configuration) and passed down; the functions that take one trust it and parse nothing again. A sign family given
as ``file:PATH`` is read, and its realizability certified, once, when the model is built; so are weights given as
``file:PATH``.

Which parameters a question needs depends on the question: ``derive.weights`` needs ``T`` and ``weights`` (and
``signs`` for ``alpha``), the bulk law ``delta, gamma`` and the weights (or ``kappa``), the outliers ``mu2`` too, a
Monte Carlo run ``d, V, N``. A model may leave out what it is not asked; :meth:`Model.need` names what is missing.

>>> m = Model(delta="1/2", gamma="1/4", T=8, weights="causal", mask="strict", signs="prefix:3", mu2="3/2")
>>> m.delta, m.mu2, m.weights.mask, m.signs.spec, m.centered
(Fraction(1, 2), Fraction(3, 2), 'strict', 'prefix:3', False)
>>> Model(d=1000, V=2000, N=4000).gamma
Fraction(1, 4)
"""
from __future__ import annotations

import sys
from dataclasses import dataclass
from fractions import Fraction

from derive.errors import ParameterError
from derive.model.signs import SignFamily, check_T, family
from derive.numbers import Displayed, check_count, check_range, parse_fraction

__all__ = ["Scheme", "Model", "SCHEME_NAMES", "MASKS", "exact_or_close", "parse_signs", "load_weights_file"]

SCHEME_NAMES = ("mean", "causal", "optimal", "file")
"""The weight schemes: mean pooling, causal attention's ``d -> oo`` limit, the top eigenvector of ``R``, a user file."""

MASKS = ("inclusive", "strict")
"""The masks of causal attention: keys ``s <= t`` or ``s < t``."""


def exact_or_close(value, name: str, digits: int = 30) -> Fraction:
    """A rational input as an exact :class:`fractions.Fraction`; a real SymPy expression (an ``alpha`` of the
    ``gauss`` family holds arcsines) as a rational within ``10^{-(digits + 20)}`` relative of it. SymPy is
    touched only when the input is SymPy's: a query from the command line does not import it.

    >>> exact_or_close("0.25", "kappa")
    Fraction(1, 4)
    """
    sp = sys.modules.get("sympy")
    if sp is not None and isinstance(value, sp.Basic) and not value.is_Rational:
        approx = sp.N(value, digits + 20)
        if not (approx.is_real and approx.is_finite and approx.is_Number):
            raise ParameterError(name, f"not a finite real number: {value}")
        value = sp.Rational(approx)
    return parse_fraction(value, name)


@dataclass(frozen=True)
class Scheme:
    """A weight scheme, checked: its ``name`` (:data:`SCHEME_NAMES`), the temperature ``tau`` and ``mask`` of the
    causal scheme (``None`` for the others), and the exact ``values`` a file gave (read once)."""

    name: str
    tau: Fraction | None = None
    mask: str | None = None
    values: tuple | None = None
    path: str | None = None

    @property
    def spec(self) -> str:
        """The scheme as the command line writes it (``mean``, ``causal``, ``file:PATH``)."""
        return f"file:{self.path}" if self.name == "file" else self.name

    @classmethod
    def of(cls, weights, tau=None, mask=None, T: int | None = None, parameter: str = "weights") -> "Scheme":
        """A scheme from its spec (``mean``, ``causal``, ``optimal``, ``file:PATH``) and the causal options, or from
        explicit weights (a sequence of rationals, kept as a ``file`` scheme without a path); ``parameter`` is the
        name an error gives the spec (``derive weights`` calls it ``scheme``).

        >>> Scheme.of("causal", tau="1/2").tau, Scheme.of([1, "1/2"]).values
        (Fraction(1, 2), (Fraction(1, 1), Fraction(1, 2)))
        """
        if isinstance(weights, Scheme):
            if tau is not None or mask is not None:
                raise ParameterError("tau" if tau is not None else "mask", "belongs in the Scheme already given")
            return weights
        if isinstance(weights, str):
            name, _, path = weights.strip().partition(":")
            if name not in SCHEME_NAMES or (name == "file") != bool(path):
                raise ParameterError(parameter, f"unknown scheme {weights!r} (mean, causal, optimal, file:PATH)")
            values = load_weights_file(path, T) if name == "file" else None
        else:
            name, path = "file", None
            values = _exact_weights(weights)
        if name != "causal":
            for option, value in (("tau", tau), ("mask", mask)):
                if value is not None:
                    raise ParameterError(option, f"only the causal scheme takes --{option}, not {name!r}")
            return cls(name, values=values, path=path)
        tau = Fraction(0) if tau is None else check_range(parse_fraction(tau, "tau"), "tau", low=0)
        if mask is None:
            mask = "inclusive"
        if mask not in MASKS:
            raise ParameterError("mask", f"must be one of {', '.join(MASKS)}, got {mask!r}")
        return cls("causal", tau, mask)


def parse_signs(spec) -> SignFamily:
    """A sign family from its spec: the closed forms of :func:`derive.model.signs.family`, or ``file:PATH``, a user's
    ``R`` read once and certified realizable (:func:`derive.model.realizable.load_correlation_file`).

    >>> parse_signs("markov:1/2").param
    Fraction(1, 2)
    """
    if isinstance(spec, str) and spec.strip().startswith("file:"):
        from derive.model.realizable import load_correlation_file

        spec = spec.strip()
        matrix, mixture = load_correlation_file(spec[len("file:"):])
        return SignFamily(spec, "file", None, matrix, mixture)
    return family(spec)


def _exact_weights(weights) -> tuple:
    if isinstance(weights, (bytes, dict)) or not hasattr(weights, "__iter__"):
        raise ParameterError("weights", f"a scheme name or a sequence of reals, got {weights!r}")
    values = tuple(parse_fraction(w, "weights") for w in weights)
    if not values or not any(values):
        raise ParameterError("weights", "are all zero" if values else "are empty")
    return values


def load_weights_file(path, T) -> tuple:
    """User weights from a ``.npy`` or ``.csv`` file (one vector of length ``T``), read exactly.

    >>> import tempfile, os
    >>> f = os.path.join(tempfile.mkdtemp(), "w.csv"); _ = open(f, "w").write("1,2,0.5\\n")
    >>> load_weights_file(f, 3)
    (Fraction(1, 1), Fraction(2, 1), Fraction(1, 2))
    """
    from derive.model.realizable import read_rational_array

    if T is None:
        raise ParameterError("T", "is needed to read weights from a file")
    n = check_T(T)
    arr = read_rational_array(path, "weights", 1, n)
    if arr.ndim != 1:
        if sorted(arr.shape)[:-1] != [1] * (arr.ndim - 1):
            raise ParameterError("weights", f"{path}: expected one vector, got shape {arr.shape}")
        arr = arr.reshape(-1)
    if len(arr) != n:
        raise ParameterError("weights", f"{path}: {len(arr)} weights for T = {n}")
    if all(x == 0 for x in arr):
        raise ParameterError("weights", f"{path}: all weights are zero")
    return tuple(Fraction(int(w.p), int(w.q)) for w in arr)


def _ratio(value, name: str, low_open: bool = True) -> Fraction:
    from derive.resources import check_documented_range

    return check_documented_range(check_range(parse_fraction(value, name), name, low=0, low_open=low_open), name)


class Model(Displayed):
    r"""The model of PAPER.md, its parameters exact (:class:`fractions.Fraction`) and checked once.

    Keywords (all optional; give what the question needs):

    * ``delta = d/V > 0`` and ``gamma = d/N >= 0`` (``0``: the population level), or the sizes ``d, V, N`` of a
      Monte Carlo run (``V`` even), from which ``delta, gamma`` follow;
    * ``T``, ``signs`` (``iid``, ``prefix:L``, ``suffix:L``, ``markov:r``, ``gauss:rho``, ``file:PATH``, or a
      :class:`~derive.model.signs.SignFamily`), ``weights`` (``mean``, ``causal``, ``optimal``, ``file:PATH``, a
      :class:`Scheme`, or ``T`` reals) with ``tau`` and ``mask`` for ``causal``;
    * ``mu2 >= 0`` and ``centered`` (the covariance :math:`S_c` instead of the raw ``S``);
    * or, without ``T`` and ``weights``, the pooling scalars themselves: ``alpha = w^T R w``, ``kappa = ||w||^2``
      and ``sum_w = W`` (the Gaussian-equivalent law only).

    A bad value raises :class:`~derive.errors.ParameterError` (a ``ValueError``) naming it. Models are immutable,
    hashable and compare by value; :meth:`replace` makes a changed copy.
    """

    __slots__ = ("delta", "gamma", "d", "V", "N", "T", "signs", "weights", "mu2", "centered", "alpha", "kappa",
                 "sum_w")
    _DISPLAYED = __slots__

    def __init__(self, *, delta=None, gamma=None, d=None, V=None, N=None, T=None, signs=None, weights=None, tau=None,
                 mask=None, mu2=None, centered=False, alpha=None, kappa=None, sum_w=None):
        set_ = object.__setattr__
        sizes = [None if x is None else check_count(x, name, low=1) for x, name in ((d, "d"), (V, "V"), (N, "N"))]
        if sizes[1] is not None and sizes[1] % 2:
            raise ParameterError("V", f"must be even (balanced classes), got {sizes[1]}")
        for name, size in zip(("d", "V", "N"), sizes):
            set_(self, name, size)
        d, V, N = sizes
        if delta is None and d is not None and V is not None:
            delta = Fraction(d, V)
        if gamma is None and d is not None and N is not None:
            gamma = Fraction(d, N)
        set_(self, "delta", None if delta is None else _ratio(delta, "delta"))
        set_(self, "gamma", None if gamma is None else _ratio(gamma, "gamma", low_open=False))
        if None not in (d, V) and self.delta != Fraction(d, V):
            raise ParameterError("delta", f"is d/V = {Fraction(d, V)} for the sizes given, not {self.delta}")
        if None not in (d, N) and self.gamma != Fraction(d, N):
            raise ParameterError("gamma", f"is d/N = {Fraction(d, N)} for the sizes given, not {self.gamma}")
        set_(self, "T", None if T is None else check_T(T))
        family = signs if isinstance(signs, SignFamily) or signs is None else parse_signs(signs)
        if family is not None and self.T is not None:
            family.check(self.T)
        set_(self, "signs", family)
        if weights is None and (tau is not None or mask is not None):
            raise ParameterError("tau" if tau is not None else "mask", "belongs to the causal weights: give weights")
        scheme = None if weights is None else Scheme.of(weights, tau, mask, self.T)
        if scheme is not None and scheme.values is not None:
            if self.T is None:
                set_(self, "T", check_T(len(scheme.values)))
            elif len(scheme.values) != self.T:
                raise ParameterError("weights", f"needs T = {self.T} entries, got {len(scheme.values)}")
        set_(self, "weights", scheme)
        scalars = {"alpha": alpha, "kappa": kappa, "sum_w": sum_w}
        if scheme is not None:
            for name, value in scalars.items():
                if value is not None:
                    raise ParameterError(name, "follows from the weights: give one or the other")
        set_(self, "kappa", None if kappa is None else _kappa(kappa))
        set_(self, "alpha", None if alpha is None else check_range(exact_or_close(alpha, "alpha"), "alpha", low=0))
        set_(self, "sum_w", None if sum_w is None else exact_or_close(sum_w, "sum_w"))
        set_(self, "mu2", None if mu2 is None else check_range(parse_fraction(mu2, "mu2"), "mu2", low=0))
        if not isinstance(centered, bool):
            raise ParameterError("centered", f"must be True or False, got {centered!r}")
        set_(self, "centered", centered)

    def __setattr__(self, name, value):
        raise AttributeError(f"a Model is immutable: use replace({name}=...)")

    def _key(self) -> tuple:
        return tuple(getattr(self, name) for name in self.__slots__)

    def __eq__(self, other):
        return isinstance(other, Model) and self._key() == other._key()

    def __hash__(self):
        return hash(self._key())

    def __repr__(self):
        shown = []
        for name in self.__slots__:
            value = getattr(self, name)
            if value is None or (name == "centered" and value is False):
                continue
            shown.append(f"{name}={value.spec if isinstance(value, (SignFamily, Scheme)) else str(value)!r}")
        return f"Model({', '.join(shown)})"

    def replace(self, **changes) -> "Model":
        """A copy with ``changes`` (checked as a new model is); ``tau`` and ``mask`` replace the causal options.

        >>> Model(delta=1, gamma=1, mu2=2).replace(mu2=3).mu2
        Fraction(3, 1)
        """
        given = {name: getattr(self, name) for name in self.__slots__}
        if {"d", "V", "N"} & set(changes):
            given.update(delta=None, gamma=None)
        if "weights" in changes or "tau" in changes or "mask" in changes:
            scheme = given.pop("weights")
            given["weights"] = changes.pop("weights", scheme)
            if isinstance(given["weights"], Scheme) and ("tau" in changes or "mask" in changes):
                old = given["weights"]
                given["weights"] = old.name
                given["tau"] = changes.pop("tau", old.tau)
                given["mask"] = changes.pop("mask", old.mask)
        given.update(changes)
        return Model(**given)

    def need(self, *names: str) -> "Model":
        """This model, after checking that it has each parameter of ``names`` (else a :class:`ParameterError`
        naming the first missing one).

        >>> Model(delta=1).need("delta", "gamma")
        Traceback (most recent call last):
        ...
        derive.errors.ParameterError: gamma: is required here
        """
        for name in names:
            if getattr(self, name) is None:
                raise ParameterError(name, "is required here")
        return self


def _kappa(value) -> Fraction:
    from derive.resources import check_documented_range

    return check_documented_range(check_range(exact_or_close(value, "kappa"), "kappa", low=0, low_open=True), "kappa")
