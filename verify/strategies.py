r"""Hypothesis strategies for valid inputs of the model, for the project's tests and for yours.

Every strategy is a function with keyword-only, validated arguments that returns a Hypothesis strategy.
They cover the regions where formulas break: ratios above 1 (``gamma > 1``), sequence lengths up to 64,
``mu2`` within ``1e-9`` of a threshold, raw and centered ``S``. Install Hypothesis with
``pip install 'attention-rmt[hypothesis]'``.

A property test of your own (the example of ``docs/formulas.md``)::

    from hypothesis import given
    from derive import outliers_at
    from verify.strategies import spike_scalars

    @given(spike_scalars())
    def test_the_sample_outlier_keeps_less_of_u_than_the_population_one(p):
        o = outliers_at(**p)
        assert o.sample.overlap <= o.population.overlap
"""
from __future__ import annotations

from fractions import Fraction

import sympy as sp

try:
    from hypothesis import reject, strategies as st
except ImportError as exc:  # pragma: no cover - depends on the environment
    raise ImportError("verify.strategies needs Hypothesis: pip install 'attention-rmt[hypothesis]'") from exc

from derive.errors import ParameterError
from derive.model import families as _families, schemes as _schemes
from derive.numbers import check_count, parse_rational

__all__ = ["FAMILY_KINDS", "SCHEMES", "rationals", "ratios", "scales", "lengths", "sign_specs", "families",
           "correlation_matrices", "weights", "causal_cases", "spike_scalars", "model_configs", "quantity_points"]

FAMILY_KINDS = tuple(cls.kind for cls in _families.CATALOGUE if cls.examples(1))
"""The sign families of the catalogue that need no user's data (a user matrix comes from
:func:`correlation_matrices`)."""

SCHEMES = tuple(s.name for s in _schemes.CATALOGUE if s.drawn)
"""The weight schemes of the catalogue that need no user's data."""

MAX_T = 64
"""The longest sequence the strategies draw by default (exact ``R`` and weights stay fast up to here)."""


def _bound(value, name: str) -> sp.Rational:
    return parse_rational(value, name)


def _choices(values, allowed, name: str) -> tuple:
    values = tuple(values)
    if not values or any(v not in allowed for v in values):
        raise ParameterError(name, f"must be a nonempty selection of {', '.join(map(str, allowed))}, got {values!r}")
    return values


def rationals(*, low, high, max_denominator: int = 1000, open_low: bool = False, open_high: bool = False):
    """Exact rationals (SymPy) in ``[low, high]``, open at an end on request.

    >>> from hypothesis import find
    >>> find(rationals(low="1/3", high=1, open_low=True), lambda q: True)
    2/3
    """
    lo, hi = _bound(low, "low"), _bound(high, "high")
    den = check_count(max_denominator, "max_denominator", low=1, high=10**12)
    if lo > hi or (lo == hi and (open_low or open_high)):
        raise ParameterError("high", f"the interval from {lo} to {hi} is empty")
    return st.fractions(min_value=_fraction(lo), max_value=_fraction(hi), max_denominator=den).filter(
        lambda q: not ((open_low and q == _fraction(lo)) or (open_high and q == _fraction(hi)))
    ).map(lambda q: sp.Rational(q.numerator, q.denominator))


def _fraction(q: sp.Rational) -> Fraction:
    return Fraction(int(q.p), int(q.q))


def ratios(*, low=0, high=4, max_denominator: int = 200):
    """Dimension ratios ``delta = d/V`` or ``gamma = d/N`` in ``(low, high]`` (default ``(0, 4]``: ``gamma > 1``
    included, where ``S`` is singular)."""
    lo = _bound(low, "low")
    if lo < 0:
        raise ParameterError("low", f"a ratio is positive, got low = {low}")
    den = check_count(max_denominator, "max_denominator", low=1, high=10**12)
    # the smallest rational above low with this denominator bound, so that nothing drawn is thrown away
    return rationals(low=max(lo, sp.Rational(1, den)), high=high, max_denominator=den, open_low=lo > 0)


def scales(*, low="1/10", high=4, max_denominator: int = 100):
    """Noise scales ``kappa = ||w||^2`` in ``[low, high]``."""
    if _bound(low, "low") <= 0:
        raise ParameterError("low", f"kappa is positive, got low = {low}")
    return rationals(low=low, high=high, max_denominator=max_denominator)


def lengths(*, min_T: int = 1, max_T: int = MAX_T):
    """Sequence lengths ``T`` in ``[min_T, max_T]``."""
    lo = check_count(min_T, "min_T", low=1)
    return st.integers(lo, check_count(max_T, "max_T", low=lo, high=1000))


@st.composite
def _specs(draw, T, max_T, kinds):
    T = draw(lengths(max_T=max_T)) if T is None else T
    family = {cls.kind: cls for cls in _families.CATALOGUE}[draw(st.sampled_from(kinds))]
    arg = draw(st.sampled_from(family.examples(T)))
    return (f"{family.kind}:{arg}" if arg else family.kind), T


def sign_specs(*, T: int | None = None, max_T: int = MAX_T, kinds=FAMILY_KINDS):
    """``(spec, T)``: a family spec valid for length ``T`` (drawn up to ``max_T`` if not given).

    >>> from hypothesis import find
    >>> find(sign_specs(T=4), lambda s: s[0].startswith("markov"))
    ('markov:0/10', 4)
    """
    T = None if T is None else check_count(T, "T", low=1, high=1000)
    return _specs(T, check_count(max_T, "max_T", low=1, high=1000), _choices(kinds, FAMILY_KINDS, "kinds"))


def families(*, T: int | None = None, max_T: int = MAX_T, kinds=FAMILY_KINDS):
    """``(family, T)``: a parsed :class:`derive.model.signs.SignFamily` with its length."""
    from derive.model.spec import parse_signs
    return sign_specs(T=T, max_T=max_T, kinds=kinds).map(lambda st_: (parse_signs(st_[0]), st_[1]))


@st.composite
def _mixtures(draw, T):
    from itertools import product
    patterns = [(1, *rest) for rest in product((1, -1), repeat=T - 1)]
    chosen = draw(st.lists(st.sampled_from(patterns), min_size=1, max_size=min(6, len(patterns)), unique=True))
    masses = draw(st.lists(st.integers(1, 9), min_size=len(chosen), max_size=len(chosen)))
    total = sum(masses)
    R = sp.zeros(T, T)
    for x, p in zip(chosen, masses):
        v = sp.Matrix(x)
        R += sp.Rational(p, total) * v * v.T
    return R


def correlation_matrices(*, T: int | None = None, max_T: int = 8, user: bool = True):
    """``(R, T)``: an exact realizable correlation matrix, from a family or (``user=True``) a user's matrix made
    as a mixture :math:`\\sum_x p_x x x^\\top` of sign patterns, which is realizable by construction.

    >>> from hypothesis import find
    >>> R, T = find(correlation_matrices(T=3), lambda c: c[0][0, 1] < 0); R.shape, all(R[i, i] == 1 for i in range(3))
    ((3, 3), True)
    """
    T = None if T is None else check_count(T, "T", low=1, high=12)
    top = check_count(max_T, "max_T", low=1, high=12)
    sizes = st.just(T) if T is not None else st.integers(1, top)
    from_family = sizes.flatmap(lambda n: families(T=n)).map(lambda f: (f[0].R(f[1]), f[1]))
    if not user:
        return from_family
    return st.one_of(from_family, sizes.flatmap(lambda n: _mixtures(n).map(lambda R: (R, n))))


@st.composite
def _weights(draw, T, low, high):
    w = draw(st.lists(rationals(low=low, high=high, max_denominator=50), min_size=T, max_size=T))
    if all(x == 0 for x in w):
        w[draw(st.integers(0, T - 1))] = sp.Integer(1)
    return w


def weights(*, T: int, low=-2, high=2):
    """Nonzero exact weight vectors of length ``T`` with entries in ``[low, high]``."""
    return _weights(check_count(T, "T", low=1, high=1000), _bound(low, "low"), _bound(high, "high"))


@st.composite
def _causal(draw, max_T):
    mask = draw(st.sampled_from(_schemes.MASKS))
    T = draw(st.integers(2 if mask == "strict" else 1, max_T))
    return T, draw(rationals(low=0, high=10, max_denominator=20)), mask


def causal_cases(*, max_T: int = 200):
    """``(T, tau, mask)`` for the causal limit: ``T <= max_T``, ``tau`` in ``[0, 10]``, ``T >= 2`` if strict."""
    return _causal(check_count(max_T, "max_T", low=2, high=1000))


def _near(draw, threshold):
    """A rational ``mu2 >= 0`` around ``threshold`` (a real): within ``1e-9`` relative of it on either side half of
    the time (the hard region), up to four times it otherwise."""
    import mpmath
    with mpmath.workdps(40):
        if draw(st.booleans()):
            k = draw(st.integers(3, 9))
            side = draw(st.sampled_from([1, -1]))
            value = threshold * (1 + side * mpmath.mpf(10) ** -k)
        else:
            value = threshold * draw(st.sampled_from([0, "1/4", "1/2", "3/2", 2, 4]).map(sp.Rational))
        return max(sp.Integer(0), sp.Rational(mpmath.nstr(value, 30)))


def _derive_thresholds() -> None:
    """Evaluate a threshold once when a strategy is made, so that SymPy's one-time derivation of the outlier
    functions is not charged to the first example drawn (Hypothesis would call the input generation slow)."""
    from derive.gaussian.outliers import sample_threshold
    sample_threshold(1, 1, 1)


@st.composite
def _spike(draw, centered, near_threshold, level):
    import mpmath
    from derive.gaussian.outliers import critical_mu2, population_threshold, sample_threshold
    delta, gamma = draw(ratios()), draw(ratios())
    kappa = draw(scales())
    alpha = kappa * draw(rationals(low=0, high=MAX_T, max_denominator=20, open_low=True))
    with mpmath.workdps(40):
        theta_c = population_threshold(delta, kappa) if level == "population" else sample_threshold(delta, gamma, kappa)
        mu2c = critical_mu2(theta_c, alpha, delta)
    mu2 = _near(draw, mu2c) if near_threshold and mu2c > 0 else draw(rationals(low=0, high=16, max_denominator=100))
    c = draw(st.booleans()) if centered is None else centered
    return {"delta": delta, "gamma": gamma, "alpha": alpha, "kappa": kappa, "mu2": mu2,
            "sum_w": draw(rationals(low=-2, high=2, max_denominator=20)), "centered": c}


def spike_scalars(*, centered: bool | None = None, near_threshold: bool = True, level: str = "sample"):
    """Keyword arguments of :func:`derive.gaussian.outliers.outliers_at`: ``delta, gamma`` in ``(0, 4]``, ``kappa`` in
    ``[1/10, 4]``, ``alpha/kappa`` in ``(0, 64]``, ``mu2`` near the ``level`` threshold half of the time,
    raw or centered ``S`` (``centered=None`` draws both).

    >>> from hypothesis import Phase, find, settings
    >>> sorted(find(spike_scalars(), lambda p: True, settings=settings(phases=[Phase.generate])))  # no shrinking: 10 s
    ['alpha', 'centered', 'delta', 'gamma', 'kappa', 'mu2', 'sum_w']
    """
    if centered is not None and not isinstance(centered, bool):
        raise ParameterError("centered", f"must be True, False or None, got {centered!r}")
    if level not in ("population", "sample"):
        raise ParameterError("level", f"must be 'population' or 'sample', got {level!r}")
    _derive_thresholds()
    return _spike(centered, bool(near_threshold), level)


@st.composite
def _configs(draw, max_T, schemes, centered, near_threshold):
    import mpmath
    from derive import Model, weights as resolved
    from derive.gaussian.outliers import critical_mu2, sample_threshold
    spec, T = draw(sign_specs(max_T=max_T))
    scheme = draw(st.sampled_from(schemes))
    options = {o.name: draw(st.sampled_from(o.examples)) for o in _schemes.OPTIONS
               if any(o in s.options for s in _schemes.CATALOGUE if s.name == scheme)}
    try:
        pool = resolved(Model(T=T, weights=scheme, signs=spec, **options))
    except ParameterError:
        # e.g. a top eigenvector of R whose entries sum to zero: no weights normalized to sum 1 exist
        reject()
    delta, gamma = draw(ratios()), draw(ratios())
    with mpmath.workdps(40):
        mu2c = critical_mu2(sample_threshold(delta, gamma, pool.kappa), pool.alpha, delta)
    if mu2c is None:
        mu2 = draw(rationals(low=0, high=16, max_denominator=100))
    else:
        mu2 = _near(draw, mu2c) if near_threshold and mu2c > 0 else draw(rationals(low=0, high=16, max_denominator=100))
    return {"delta": delta, "gamma": gamma, "T": T, "signs": spec, "weights": scheme,
            **{o.name: options.get(o.name) for o in _schemes.OPTIONS}, "mu2": mu2, "centered": draw(st.booleans()) if centered is None else centered, "pooling": pool}


def model_configs(*, max_T: int = MAX_T, schemes=SCHEMES, centered: bool | None = None, near_threshold: bool = True):
    """A model configuration as a dict: ``delta, gamma`` (``(0, 4]``), ``T`` (up to ``max_T``), ``signs``,
    ``weights`` (a scheme), every scheme option by name (drawn from its examples where the scheme takes it, else
    ``None``), ``mu2`` (near the sample threshold half the time), ``centered`` and the resolved :class:`derive.model.pooling.Pooling` (exact ``alpha``, ``kappa``, ``W``)."""
    if centered is not None and not isinstance(centered, bool):
        raise ParameterError("centered", f"must be True, False or None, got {centered!r}")
    _derive_thresholds()
    return _configs(check_count(max_T, "max_T", low=1, high=MAX_T), _choices(schemes, SCHEMES, "schemes"),
                    centered, bool(near_threshold))


def quantity_points(name: str, *, where=None):
    """Points ``{symbol: Rational}`` where the derived quantity ``name`` exists (:mod:`derive.sheet.quantities`),
    within the constraints ``where`` (as ``verify formula --where``).

    >>> from hypothesis import find
    >>> find(quantity_points("population.overlap", where="delta=1/4"), lambda p: True)
    {delta: 1/4, kappa: 1, alpha: 1, mu2: 1}
    """
    from derive.sheet.quantities import quantity
    from verify.formula import domain_points, parse_where
    q = quantity(name)
    fixed, bounds, options = parse_where(where, q)
    return domain_points(q, fixed=fixed, bounds=bounds, options=options)

