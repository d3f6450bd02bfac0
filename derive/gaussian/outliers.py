r"""The outliers as numbers: mpmath functions made once from the symbolic objects of :mod:`derive.gaussian.spikes`.

Every function evaluates at the current mpmath precision (``with mpmath.workdps(P): ...``) and
returns ``mpf`` values; none of them formats or rounds. :func:`outliers` gathers everything the
model says about the outliers of ``S`` (or ``S_c``) for given scalars into one frozen
:class:`Outliers`. The law is the Gaussian-equivalent one at sample level (see
:mod:`derive.gaussian.spikes`); the population level is exact in the limit ``d/V -> delta``.

>>> import mpmath
>>> with mpmath.workdps(20):
...     o = outliers_at(mpmath.mpf(1) / 2, mpmath.mpf(1) / 4, mpmath.mpf(7) / 32, mpmath.mpf(1) / 8, mpmath.mpf(3) / 2)
...     print(mpmath.nstr(o.sample.eigenvalue, 12), mpmath.nstr(o.sample.overlap, 12))
0.631944444444 0.61858974359
"""
from __future__ import annotations

from dataclasses import dataclass, field
from fractions import Fraction
from functools import cached_property, lru_cache

import sys

import mpmath

from derive.cache import mpmath_functions
from derive.errors import ParameterError
from derive.numbers import Displayed, parse_fraction
from derive.resources import check_spike_ranges

__all__ = ["signal_strength", "signal_cosine2", "mean_strength", "population_outlier", "population_overlap",
           "population_threshold", "population_right_edge", "sample_outlier", "sample_overlap",
           "sample_threshold", "sample_right_edge", "critical_mu2", "Level", "OtherOutlier", "Outliers", "outliers_at",
           "MEAN_CAUSE"]

MEAN_CAUSE = "mean of the vocabulary noise Z 1/V (raw S; removed by centering)"


_NAMES = ("signal_strength", "signal_cosine2", "mean_strength", "ell", "zeta", "theta_c", "edge", "psi", "factor",
          "threshold_coeffs", "mu2_c")


def _expressions() -> dict:
    """Each derived expression with its arguments (SymPy; needed only when the cache lacks them)."""
    from derive.model import expectations as ex
    from derive.gaussian import spikes
    from derive.symbols import W, alpha, delta, gamma, kappa, mu2, theta

    terms = ex.population_covariance_terms()
    level = (theta, delta, gamma, kappa)
    return {
        "signal_strength": ((alpha, mu2, delta), terms["signal_strength"]),
        "signal_cosine2": ((mu2, delta), terms["signal_cosine2"]),
        "mean_strength": ((W, delta), terms["mean_strength"]),
        "ell": ((theta, delta, kappa), spikes.population_outlier_location()),
        "zeta": ((theta, delta, kappa), spikes.population_overlap()),
        "theta_c": ((delta, kappa), spikes.population_threshold()),
        "edge": ((delta, kappa), spikes.population_right_edge()),
        "psi": (level, spikes.sample_outlier_location()),
        "factor": (level, spikes.sample_overlap_factor()),
        "threshold_coeffs": [((delta, gamma, kappa), c) for c in spikes.sample_threshold_polynomial().all_coeffs()],
        "mu2_c": ((theta, alpha, delta), spikes.critical_mu2()),
    }


@lru_cache(maxsize=None)
def _compiled():
    """Each derived expression as an mpmath function: derived once, then kept between runs (:mod:`derive.cache`)."""
    return mpmath_functions("outliers", _NAMES, _expressions)


def _real(value, name: str, *, positive: bool = False, signed: bool = False) -> mpmath.mpf:
    """``value`` (an mpmath, Python or SymPy number, or exact text such as ``"1/2"``) as a finite mpmath real at
    the current precision: ``>= 0`` (``> 0`` if ``positive``; any sign if ``signed``)."""
    if isinstance(value, bool):
        raise ParameterError(name, f"not a real number: {value!r}")
    if isinstance(value, str):
        value = parse_fraction(value, name)
    sp = sys.modules.get("sympy")  # a SymPy number can come only from a process that imported SymPy
    try:
        if sp is not None and isinstance(value, sp.Basic):
            if not (value.is_number and value.is_extended_real):
                raise TypeError
            x = mpmath.mpf(value.p) / value.q if value.is_Rational else mpmath.mpf(sp.N(value, mpmath.mp.dps + 5))
        elif isinstance(value, Fraction):
            x = mpmath.mpf(value.numerator) / value.denominator
        elif isinstance(value, bytes):
            raise TypeError
        else:
            x = mpmath.mpf(value)
    except (TypeError, ValueError):
        raise ParameterError(name, f"not a real number: {value!r}") from None
    if not mpmath.isfinite(x):
        raise ParameterError(name, f"not a finite number: {value!r}")
    if not signed and (x < 0 or (positive and x == 0)):
        raise ParameterError(name, f"must be {'>' if positive else '>='} 0, got {value}")
    return x


def signal_strength(alpha, mu2, delta) -> mpmath.mpf:
    r"""The strength of the signal term of the population covariance, :math:`\theta_s = \alpha(\mu_2 + \delta)`.

    >>> signal_strength(1, 2, 0.5)
    mpf('2.5')
    """
    return _compiled()["signal_strength"](_real(alpha, "alpha"), _real(mu2, "mu2"), _real(delta, "delta", positive=True))


def signal_cosine2(mu2, delta) -> mpmath.mpf:
    r"""The squared cosine of the signal direction :math:`\mu + Zs/V` with ``u``: :math:`\mu_2/(\mu_2+\delta)`.

    >>> signal_cosine2(1, 1)
    mpf('0.5')
    """
    return _compiled()["signal_cosine2"](_real(mu2, "mu2"), _real(delta, "delta", positive=True))


def mean_strength(sum_w, delta) -> mpmath.mpf:
    r"""The strength of the vocabulary-mean term of the raw ``S``, :math:`W^2\delta`.

    >>> mean_strength(1, 0.5)
    mpf('0.5')
    """
    return _compiled()["mean_strength"](_real(sum_w, "sum_w", signed=True), _real(delta, "delta", positive=True))


def population_outlier(theta, delta, kappa) -> mpmath.mpf:
    r"""The population outlier :math:`\ell(\theta)` of a rank-one term of strength :math:`\theta` (at or above the
    threshold :math:`\theta_c`; below it no outlier leaves the bulk, and ``theta`` is refused).

    >>> population_outlier(2, 0, 1)   # classical: theta + kappa
    mpf('3.0')
    """
    t, d, k = _real(theta, "theta"), _real(delta, "delta"), _real(kappa, "kappa", positive=True)
    f = _compiled()
    _above(t, f["theta_c"](d, k), "the population threshold theta_c")
    return f["ell"](t, d, k)


def population_overlap(theta, delta, kappa, *, continued: bool = False) -> mpmath.mpf:
    r"""The squared cosine :math:`\zeta(\theta)` of the population outlier eigenvector with its spike direction: 0
    below the threshold :math:`\theta_c` (no outlier). ``continued``: the formula continued below the threshold (a
    rational function, negative there, with a pole at :math:`\theta = \delta\kappa`, which is refused), as the
    ledger fits it; ``population_overlap(1, 1, 1)`` had divided by zero and ``population_overlap(1/2, 1, 1)`` had
    answered -3.

    >>> population_overlap(2, 0, 1), population_overlap("1/2", 1, 1), population_overlap("1/2", 1, 1, continued=True)
    (mpf('1.0'), mpf('0.0'), mpf('-3.0'))
    """
    t, d, k = _real(theta, "theta"), _real(delta, "delta"), _real(kappa, "kappa", positive=True)
    f = _compiled()
    if not continued and t < f["theta_c"](d, k):
        return mpmath.mpf(0)
    return _finite(lambda: f["zeta"](t, d, k), "theta", "delta*kappa, the pole of the continued formula")


def _above(theta, threshold, name: str) -> None:
    if theta < threshold:
        raise ParameterError("theta", f"{mpmath.nstr(theta, 8)} is below {name} = {mpmath.nstr(threshold, 8)}: no "
                                      "outlier leaves the bulk")


def _finite(value, name: str, pole: str) -> mpmath.mpf:
    """``value()``, or a refusal naming ``name`` where it divides by zero (at ``pole``)."""
    try:
        return value()
    except ZeroDivisionError:
        raise ParameterError(name, f"at {pole}") from None


def population_threshold(delta, kappa) -> mpmath.mpf:
    r"""The population threshold :math:`\theta_c = \kappa(\delta + \sqrt\delta)`.

    >>> population_threshold(0.25, 1)
    mpf('0.75')
    """
    return _compiled()["theta_c"](_real(delta, "delta"), _real(kappa, "kappa", positive=True))


def population_right_edge(delta, kappa) -> mpmath.mpf:
    r"""The right edge of the population bulk :math:`\kappa\,\mathrm{MP}_\delta`, :math:`\ell(\theta_c)`.

    >>> population_right_edge(0.25, 1)
    mpf('2.25')
    """
    return _compiled()["edge"](_real(delta, "delta"), _real(kappa, "kappa", positive=True))


def sample_outlier(theta, delta, gamma, kappa) -> mpmath.mpf:
    r"""The sample outlier :math:`\psi(\ell(\theta))` (at or above the sample threshold :math:`\theta_c^{(N)}`; below
    it no outlier leaves the bulk, and ``theta`` is refused).

    >>> sample_outlier(2, 0, 0.25, 1)   # classical BBP: (theta + 1)(theta + gamma)/theta
    mpf('3.375')
    """
    args = (_real(theta, "theta"), _real(delta, "delta"), _real(gamma, "gamma"), _real(kappa, "kappa", positive=True))
    _above(args[0], sample_threshold(*args[1:]), "the sample threshold theta_c^N")
    return _finite(lambda: _compiled()["psi"](*args), "theta", "a pole of psi")


def sample_overlap(theta, delta, gamma, kappa, *, continued: bool = False) -> mpmath.mpf:
    r"""The squared cosine of the sample outlier eigenvector with the spike direction,
    :math:`\zeta(\theta)\,\ell\psi'(\ell)/\psi(\ell)`: 0 below the sample threshold (no outlier); ``continued``: the
    formula continued below it (its poles refused), as the ledger fits it.

    >>> sample_overlap(2, 0, 0.25, 1)   # Paul: (1 - gamma/theta^2)/(1 + gamma/theta)
    mpf('0.83333333333333337')
    """
    args = (_real(theta, "theta"), _real(delta, "delta"), _real(gamma, "gamma"), _real(kappa, "kappa", positive=True))
    if not continued and args[0] < sample_threshold(*args[1:]):
        return mpmath.mpf(0)
    f = _compiled()
    return _finite(lambda: f["zeta"](args[0], args[1], args[3]) * f["factor"](*args), "theta",
                   "a pole of the continued formula")


def sample_threshold(delta, gamma, kappa) -> mpmath.mpf:
    r"""The sample threshold :math:`\theta_c^{(N)}`: the positive root of the threshold polynomial.

    In :math:`x = \theta - \delta\kappa` the polynomial is :math:`-x^3 + \kappa^2(\delta+\gamma+\delta\gamma)x + 2\kappa^3\delta\gamma`,
    which has exactly one positive root (one sign change).

    >>> mpmath.mp.dps = 15; sample_threshold(0, mpmath.mpf(1)/4, 1)   # classical BBP: sqrt(gamma)
    mpf('0.5')
    """
    args = (_real(delta, "delta"), _real(gamma, "gamma"), _real(kappa, "kappa", positive=True))
    return _sample_threshold(*args, mpmath.mp.prec)


@lru_cache(maxsize=4096)
def _sample_threshold(delta, gamma, kappa, prec):
    # a curve along mu2 asks for the same threshold at every point: it is found once per precision
    coeffs = [c(delta, gamma, kappa) for c in _compiled()["threshold_coeffs"]]
    # Newton from above the Cauchy bound: beyond its positive root the polynomial in x is negative,
    # decreasing and concave (the root is at least sqrt(b) > sqrt(b/3), where the slope vanishes), so the
    # iterates decrease monotonically to the root, quadratically since the root is simple. (Durand-Kerner,
    # mpmath.polyroots, stalls on the double root at theta = 0 of delta = gamma = kappa = 1.)
    theta = 1 + max(abs(c / coeffs[0]) for c in coeffs[1:])
    while True:
        value, slope = mpmath.polyval(coeffs, theta, derivative=True)
        following = theta - value / slope if slope else theta
        if not following < theta:
            return theta
        theta = following


def sample_right_edge(delta, gamma, kappa) -> mpmath.mpf:
    r"""The right edge of the sample bulk: :math:`\psi` at the sample threshold.

    >>> sample_right_edge(0, 0.25, 1)   # (1 + sqrt(gamma))^2
    mpf('2.25')
    """
    return sample_outlier(sample_threshold(delta, gamma, kappa), delta, gamma, kappa)


def critical_mu2(theta, alpha, delta) -> mpmath.mpf | None:
    r"""The smallest :math:`\mu_2 \ge 0` at which the signal term reaches strength :math:`\theta`:
    :math:`\max(0, \theta/\alpha - \delta)`; ``None`` when :math:`\alpha = 0` (no signal survives the pooling).

    >>> critical_mu2(3, 1, 0.5), critical_mu2(3, 0, 0.5)
    (mpf('2.5'), None)
    """
    a = _real(alpha, "alpha")
    if a == 0:
        return None
    return max(mpmath.mpf(0), _compiled()["mu2_c"](_real(theta, "theta"), a, _real(delta, "delta", positive=True)))


@dataclass(frozen=True)
class Level(Displayed):
    """The signal outlier at one level (population or sample): whether it exists, its eigenvalue
    (``None`` if not), the limit of :math:`|\\hat u^T u|^2` (0 without outlier), the smallest
    :math:`\\mu_2` at which it exists (``None`` if :math:`\\alpha = 0`) and the threshold strength of the
    Gaussian-equivalent law. The model's own sample level (an unbounded bulk with gaps) has no threshold
    strength; it gives the ``windows`` of :math:`\\mu_2` in which the outlier stands in a gap and the
    ``mass_above`` it of the bulk's law. Where that law is estimated from quenched populations (more than one
    nonzero weight), ``errors`` pairs ``eigenvalue``, ``overlap`` and ``mu2_critical`` with their errors (three
    standard errors of the mean over independent populations), and ``mu2_critical_reason`` says why ``mu2_critical``
    is ``None`` where it is not defined."""

    _DISPLAYED = ("outlier", "eigenvalue", "overlap", "mu2_critical", "threshold", "windows", "mass_above", "errors",
                  "mu2_critical_reason")

    outlier: bool
    eigenvalue: mpmath.mpf | None
    overlap: mpmath.mpf
    mu2_critical: mpmath.mpf | None
    threshold: mpmath.mpf | None
    windows: tuple | None = None
    mass_above: mpmath.mpf | None = None
    errors: tuple | None = None
    mu2_critical_reason: str | None = None


@dataclass(frozen=True)
class OtherOutlier(Displayed):
    """An outlier that is not the signal's: its cause, level, eigenvalue and overlap with ``u``."""

    _DISPLAYED = ("cause", "level", "eigenvalue", "overlap")

    cause: str
    level: str
    eigenvalue: mpmath.mpf
    overlap: mpmath.mpf


@dataclass(frozen=True)
class Outliers(Displayed):
    """Everything the derivation says about the outliers of ``S`` (or ``S_c``) at given scalars (a notebook shows
    it as a table)."""

    _DISPLAYED = ("law", "population", "sample", "right_edge", "population_right_edge", "other_outliers", "finite_size")

    population: Level
    sample: Level
    right_edge: mpmath.mpf
    population_right_edge: mpmath.mpf
    other_outliers: tuple[OtherOutlier, ...]
    law: str = "gaussian-equivalent"
    at_d: object = field(default=None, repr=False, compare=False)
    """With the model's dimension ``d``: how to compute :attr:`finite_size` (a function of no argument), else ``None``."""

    @cached_property
    def finite_size(self):
        """At the model's dimension ``d``: :class:`derive.vocabulary.draw.finite_size.FiniteSize`, computed when first
        asked for (it samples token matrices: seconds); ``None`` in the limit."""
        return None if self.at_d is None else self.at_d()

    def level(self, name: str) -> Level:
        """``population`` or ``sample``."""
        if name not in ("population", "sample"):
            raise ParameterError("level", f"must be 'population' or 'sample', got {name!r}")
        return self.population if name == "population" else self.sample


def _term(strength, cos2, delta, gamma, kappa, sample: bool):
    """``(outlier, eigenvalue, overlap, threshold)`` of one rank-one term at one level."""
    f = _compiled()
    threshold = f["theta_c"](delta, kappa) if not sample else sample_threshold(delta, gamma, kappa)
    if strength <= threshold:
        return False, None, mpmath.mpf(0), threshold
    zeta = f["zeta"](strength, delta, kappa)
    if sample:
        return True, f["psi"](strength, delta, gamma, kappa), zeta * f["factor"](strength, delta, gamma, kappa) * cos2, threshold
    return True, f["ell"](strength, delta, kappa), zeta * cos2, threshold


def outliers_at(delta, gamma, alpha, kappa, mu2, *, sum_w=1, centered: bool = False) -> Outliers:
    r"""The outliers of ``S`` (or ``S_c`` if ``centered``) at the current precision.

    The signal term has strength :math:`\alpha(\mu_2+\delta)` along a direction of squared cosine
    :math:`\mu_2/(\mu_2+\delta)` with ``u``; the raw ``S`` adds the vocabulary-mean term of strength
    :math:`W^2\delta`, orthogonal to ``u`` (``W = sum_w``).

    >>> o = outliers_at(0.5, 0.25, 0.5, 0.25, 3)
    >>> o.population.outlier, mpmath.nstr(o.population.mu2_critical, 6), [x.level for x in o.other_outliers]
    (True, '0.103553', ['sample', 'population'])
    """
    if not isinstance(centered, bool):
        raise ParameterError("centered", f"must be True or False, got {centered!r}")
    d_, g_ = _real(delta, "delta", positive=True), _real(gamma, "gamma")
    a_, k_, m_ = _real(alpha, "alpha"), _real(kappa, "kappa", positive=True), _real(mu2, "mu2")
    check_spike_ranges(d_, g_, k_)  # the command line's ranges, for every caller
    f = _compiled()
    strength = f["signal_strength"](a_, m_, d_)
    cos2 = f["signal_cosine2"](m_, d_)
    levels, other = {}, {"sample": [], "population": []}
    for name, sample in (("population", False), ("sample", True)):
        exists, eig, overlap, threshold = _term(strength, cos2, d_, g_, k_, sample)
        levels[name] = Level(exists, eig, overlap, critical_mu2(threshold, a_, d_), threshold)
        if not centered:
            seen, eig, _, _ = _term(mean_strength(sum_w, d_), mpmath.mpf(0), d_, g_, k_, sample)
            if seen:
                other[name].append(OtherOutlier(MEAN_CAUSE, name, eig, mpmath.mpf(0)))
    edge = f["psi"](levels["sample"].threshold, d_, g_, k_)
    return Outliers(levels["population"], levels["sample"], edge, f["edge"](d_, k_),
                    tuple(other["sample"] + other["population"]))
