r"""The model specification: every parameter of the paper's model (docs/notation.md), read and checked once, exact and
immutable.

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
from derive.model.schemes import OPTIONS, Scheme, parse_scheme
from derive.model.families import as_family, parse_signs
from derive.model.signs import SignFamily, check_T
from derive.numbers import Displayed, check_count, check_range, parse_fraction

__all__ = ["Model", "exact_or_close", "parse_signs"]

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


def _ratio(value, name: str, low_open: bool = True) -> Fraction:
    from derive.resources import check_documented_range

    return check_documented_range(check_range(parse_fraction(value, name), name, low=0, low_open=low_open), name)


class Model(Displayed):
    r"""The paper's model (docs/notation.md), its parameters exact (:class:`fractions.Fraction`) and checked once.

    Keywords (all optional; give what the question needs):

    * ``delta = d/V > 0`` and ``gamma = d/N >= 0`` (``0``: the population level), or the sizes ``d, V, N`` of a
      Monte Carlo run (``V`` even), from which ``delta, gamma`` follow;
    * ``T``, ``signs`` (a spec in a form of the catalogue :mod:`derive.model.families`, such as ``iid`` or
      ``markov:1/2``; a :class:`~derive.model.signs.SignFamily`; or your own object with ``name``, ``R(T)`` and
      ``sample(rng, N, T)``), ``weights`` (a spec in a form of the catalogue :mod:`derive.model.schemes`, such as
      ``causal`` or ``1/2,1/3,1/6``; a :class:`~derive.model.schemes.Scheme`; or ``T`` rationals) with the scheme's
      options as keywords (:data:`~derive.model.schemes.OPTIONS`: ``mask="strict"``);
    * ``mu2 >= 0`` and ``centered`` (the covariance :math:`S_c` instead of the raw ``S``);
    * or, without ``T`` and ``weights``, the pooling scalars themselves: ``alpha = w^T R w``, ``kappa = ||w||^2``
      and ``sum_w = W`` (the Gaussian-equivalent law only).

    A bad value raises :class:`~derive.errors.ParameterError` (a ``ValueError``) naming it. Models are immutable,
    hashable and compare by value; :meth:`replace` makes a changed copy.
    """

    __slots__ = ("delta", "gamma", "d", "V", "N", "T", "signs", "weights", "mu2", "centered", "alpha", "kappa",
                 "sum_w")
    _DISPLAYED = __slots__

    def __init__(self, *, delta=None, gamma=None, d=None, V=None, N=None, T=None, signs=None, weights=None, mu2=None,
                 centered=False, alpha=None, kappa=None, sum_w=None, **options):
        unknown = sorted(set(options) - {o.name for o in OPTIONS})
        if unknown:
            raise ParameterError(unknown[0], "is not a parameter of the model or an option of a weight scheme")
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
        family = as_family(signs)
        if family is not None and self.T is not None:
            family.check(self.T)
        set_(self, "signs", family)
        given = [o.name for o in OPTIONS if options.get(o.name) is not None]
        if weights is None and given:
            raise ParameterError(given[0], "belongs to the weight scheme: give weights")
        scheme = None if weights is None else parse_scheme(weights, self.T, **options)
        exact = getattr(scheme, "exact", None)
        if exact is not None:
            if self.T is None:
                set_(self, "T", check_T(len(exact)))
                if family is not None:
                    family.check(self.T)
            elif len(exact) != self.T:
                raise ParameterError("weights", f"needs T = {self.T} entries, got {len(exact)}")
        set_(self, "weights", scheme)
        scalars = {"alpha": alpha, "kappa": kappa, "sum_w": sum_w}
        if scheme is not None:
            for name, value in scalars.items():
                if value is not None:
                    raise ParameterError(name, "follows from the weights: give one or the other")
        for name, value in _scalars(alpha, kappa, sum_w).items():
            set_(self, name, value)
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
        """The model as the keywords that make it: families and schemes by name, the scheme's options spelled out.

        >>> Model(T=3, weights=["1/2", "1/4", "1/4"], signs="markov:1/2")
        Model(T='3', signs='markov:1/2', weights='1/2,1/4,1/4')
        """
        shown = []
        for name in self.__slots__:
            value = getattr(self, name)
            if value is None or (name == "centered" and value is False):
                continue
            if isinstance(value, Scheme):
                shown += [f"weights={value.spec!r}"] + [f"{k}={str(v)!r}" for k, v in value.values.items()]
                continue
            shown.append(f"{name}={value.name if isinstance(value, SignFamily) else str(value)!r}")
        return f"Model({', '.join(shown)})"

    def replace(self, **changes) -> "Model":
        """A copy with ``changes`` (checked as a new model is); a scheme's options (``tau``, ``mask``) replace its own.

        >>> Model(delta=1, gamma=1, mu2=2).replace(mu2=3).mu2
        Fraction(3, 1)
        """
        given = {name: getattr(self, name) for name in self.__slots__}
        if {"d", "V", "N"} & set(changes):
            given.update(delta=None, gamma=None)
        options = {o.name for o in OPTIONS} & set(changes)
        if isinstance(self.weights, Scheme) and self.weights.options and options and "weights" not in changes:
            given.update(weights=self.weights.name, **self.weights.values)
        given.update(changes)
        return Model(**given)

    def gaussian_equivalent(self, alpha, kappa, sum_w=1) -> "Model":
        """The model of this one's Gaussian equivalent in the limit: its ``delta``, ``gamma``, ``mu2`` and ``centered``
        as they were checked when it was built (not read again), its pooling given by the scalars ``alpha``, ``kappa``
        and ``sum_w`` (checked here, as a new model checks them) in place of ``T``, ``signs`` and ``weights``; without
        the sizes. ``verify mc --law gaussian-equivalent`` reads the scalars of its pooling's cache entry into it.

        >>> Model(d=40, V=80, N=160, T=4, signs="prefix:2", weights="mean", mu2=3).gaussian_equivalent("1/2", "1/4")
        Model(delta='1/2', gamma='1/4', mu2='3', alpha='1/2', kappa='1/4', sum_w='1')
        """
        kept = {"delta": self.delta, "gamma": self.gamma, "mu2": self.mu2, "centered": self.centered}
        values = dict.fromkeys(self.__slots__) | kept | _scalars(alpha, kappa, sum_w)
        model = object.__new__(Model)
        for name in self.__slots__:
            object.__setattr__(model, name, values[name])
        return model

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


def _scalars(alpha, kappa, sum_w) -> dict:
    """The pooling scalars given in place of the weights, each checked (``None``: not given)."""
    return {"kappa": None if kappa is None else _kappa(kappa),
            "alpha": None if alpha is None else check_range(exact_or_close(alpha, "alpha"), "alpha", low=0),
            "sum_w": None if sum_w is None else exact_or_close(sum_w, "sum_w")}


def _kappa(value) -> Fraction:
    from derive.resources import check_documented_range

    return check_documented_range(check_range(exact_or_close(value, "kappa"), "kappa", low=0, low_open=True), "kappa")
