r"""The resource model: what a command will cost, estimated from its parameters before anything is
allocated, and the documented limits above which it is refused (``ParameterError`` naming the
parameter; exit status 2 on the command line).

Every limit of what ``derive`` computes is stated here once (those of the Monte Carlo, a trial's memory and a run's
seeds and work, are stated by ``verify.montecarlo.memory``), and the documentation's page of limits
(`docs/limits.md`) lists them. The estimates are upper bounds of the arrays a command holds at once (bytes) or of its
arithmetic (work), written from the code that does the work:

* **Exact weights** (each scheme's ``check`` in :mod:`derive.model.schemes`): the causal limit weights are exact rationals whose
  denominators grow like ``lcm(1..T)`` (``1.44 T`` bits each: ``T^2`` digits in all); the optimal
  weights of a family without a closed form need an mpmath eigendecomposition (work
  ``T^3 (digits + 10)^2``); ``alpha`` of ``gauss:rho`` sums ``T^2`` arcsines for weights that are
  not all equal.
"""
from __future__ import annotations

import contextlib
import contextvars
from fractions import Fraction

from derive.errors import ParameterError

__all__ = ["DRAWS", "SEED", "MAX_DRAWS", "RATIO_RANGE", "MAX_RATIO_PRODUCT", "KAPPA_RANGE", "MAX_EXACT_CAUSAL_T", "MAX_GAUSS_T", "MAX_EIGEN_WORK",
           "MAX_EIGEN_REFINEMENT_WORK", "MAX_SERIES_SECONDS", "SERIES_RATES", "series_atoms", "series_seconds",
           "check_series_work", "MAX_POINTS", "MAX_DENSITY_WORK", "MAX_OUTPUT_DIGITS", 
           "bulk_parameters", "check_spike_ranges", "check_documented_range", "check_exact_causal_T", "check_points",
           "check_density_work", "check_output", "LIMIT_SECONDS_PER_WEIGHT", "LIMIT_SECONDS_FIXED", "LIMIT_REUSE_SCALES", "LIMIT_SIGNAL_SCALE",
           "MAX_LIMIT_SECONDS", "limit_wait", "limit_seconds", "limit_cpu_budget", "check_limit_work"]

RATIO_RANGE = (Fraction(1, 10**12), Fraction(10**12))
"""The range of ``delta`` and ``gamma`` accepted, together with :data:`MAX_RATIO_PRODUCT`: the support
is located by following the Stieltjes branch in floating point, which stays reliable (mass and
mean of the law checked to 1e-12 by quadrature in tests/test_edges.py) inside these bounds."""

MAX_RATIO_PRODUCT = Fraction(10**6)
"""Largest ``delta * gamma`` accepted: beyond it the nonzero part of the law (mass
``min(1, 1/delta) min(1, 1/gamma)``, location about ``delta gamma kappa``) is so far from the atom
that the float branch tracking of :func:`derive.gaussian.bulk.law` stalls (minutes at ``delta = gamma = 10^6``)."""

KAPPA_RANGE = (Fraction(1, 10**30), Fraction(10**30))
"""The range of ``kappa`` accepted (a pure scale, but the branch tracking and the density's first
guess are in float64)."""

MAX_EXACT_CAUSAL_T = 2000
"""Longest sequence of exact causal weights (their exact text is about ``T^2`` digits: 4 MB here)."""

DRAWS = 32
"""Token matrices ``derive spike --d`` samples by default (:mod:`derive.vocabulary.draw.finite_size`): the mean
threshold to about a tenth of its spread over draws."""

SEED = 0
"""The default seed of those token matrices: draw ``j`` uses ``SeedSequence(seed).spawn(draws)[j]``."""

MAX_DRAWS = 10_000
"""Most token matrices one call samples."""

MAX_GAUSS_T = 200
"""Longest sequence for ``gauss:rho`` (``alpha`` sums arcsines over the lags; its sampler holds ``T x T``)."""

MAX_EIGEN_WORK = 32**3 * 40**2
"""Most work ``T^3 (digits + 10)^2`` of an mpmath eigendecomposition of ``R`` (optimal weights of
``markov``, ``gauss`` and file families): ``T = 32`` at 30 digits, a few seconds."""

MAX_EIGEN_REFINEMENT_WORK = 4 * MAX_EIGEN_WORK
"""Most work ``T^3 dps^2`` of the decompositions a nearly degenerate ``R`` needs at the higher precision ``dps`` that
tells its top eigenvalues apart (:func:`derive.model.attention.optimal_weights`): twice the digits of the first."""

MAX_SERIES_SECONDS = 90
"""Most seconds of one core the model's exact law (one nonzero weight: a Poisson population) may take for one answer,
as :func:`series_seconds` estimates them. Beyond it (a reuse ``N/V`` of a few hundred, a couple of hundred digits, a
signal strength or a point far out among the clusters) the work had run for minutes, or exhausted the memory, before
answering."""

MAX_POINTS = 5_000
"""Most evaluation points of one command (``derive bulk --x``): about 3 ms each at 30 digits."""

MAX_DENSITY_WORK = 5_000 * 50**1.5
"""Most work ``points (digits + 20)^{3/2}`` of one density evaluation (5000 points at 30 digits)."""

MAX_OUTPUT_DIGITS = 10**7
"""Most digits of reals one command prints (``T`` weights or ``--x`` points times ``--digits``): 10 MB."""


def bulk_parameters(delta, gamma, kappa) -> tuple[Fraction, Fraction, Fraction]:
    """``delta, gamma, kappa`` read exactly (as fractions, without SymPy, so that bad input is refused before
    anything heavy loads); each must be positive and inside :data:`RATIO_RANGE`, :data:`MAX_RATIO_PRODUCT`
    and :data:`KAPPA_RANGE`.

    >>> bulk_parameters("1/2", "0.25", 3)
    (Fraction(1, 2), Fraction(1, 4), Fraction(3, 1))
    """
    from derive.numbers import check_range, parse_fraction

    d, g, k = (check_range(parse_fraction(v, name), name, low=0, low_open=True)
               for v, name in ((delta, "delta"), (gamma, "gamma"), (kappa, "kappa")))
    for value, name, (low, high) in ((d, "delta", RATIO_RANGE), (g, "gamma", RATIO_RANGE), (k, "kappa", KAPPA_RANGE)):
        if not low <= value <= high:
            raise ParameterError(name, f"{value} is outside [{low}, {high}], the range where the bulk law is computed reliably")
    if d * g > MAX_RATIO_PRODUCT:
        raise ParameterError("gamma", f"delta * gamma = {d * g} exceeds {MAX_RATIO_PRODUCT}, "
                                      "beyond which the bulk law is not computed reliably")
    return d, g, k


def _shown(value) -> str:
    """``value`` as text, exact unless it has thousands of digits (Python refuses to print an integer of more
    than 4300, and an API caller may pass ``10**100000``)."""
    if isinstance(value, Fraction) and max(value.numerator.bit_length(), value.denominator.bit_length()) < 4000:
        return str(value)
    import mpmath

    return mpmath.nstr(mpmath.mpf(value.numerator) / value.denominator if isinstance(value, Fraction) else value, 6)


def check_spike_ranges(delta, gamma, kappa) -> None:
    """``delta``, ``kappa`` and ``gamma`` (unless 0, the population level alone) inside :data:`RATIO_RANGE` and
    :data:`KAPPA_RANGE`, the ranges of the bulk law, which the outliers' edge uses: beyond them mpmath's evaluation
    of the outlier functions does not converge (``delta = 1e200``).

    >>> check_spike_ranges(Fraction(10**100000), Fraction(1), Fraction(1))
    Traceback (most recent call last):
    ...
    derive.errors.ParameterError: delta: 1.0e+100000 is outside [1/1000000000000, 1000000000000], the documented range of delta
    """
    for value, name in ((delta, "delta"), (gamma, "gamma"), (kappa, "kappa")):
        check_documented_range(value, name)


_RANGES = {"delta": RATIO_RANGE, "gamma": RATIO_RANGE, "kappa": KAPPA_RANGE}


def check_documented_range(value, name: str):
    """``value`` of ``delta``, ``gamma`` (0 allowed: the population level alone) or ``kappa`` inside its documented
    range (:data:`RATIO_RANGE`, :data:`KAPPA_RANGE`); returned as it is. Fractions are compared exactly; mpmath
    reals with the bounds rounded to the current precision, as an input equal to a bound is.

    >>> check_documented_range(Fraction(1, 2), "gamma")
    Fraction(1, 2)
    """
    low, high = bounds = _RANGES[name]
    if not isinstance(value, Fraction):
        import mpmath

        bounds = tuple(mpmath.mpf(b.numerator) / b.denominator for b in bounds)
    if (value or name != "gamma") and not bounds[0] <= value <= bounds[1]:
        raise ParameterError(name, f"{_shown(value)} is outside [{low}, {high}], the documented range of {name}")
    return value


def check_exact_causal_T(T: int) -> None:
    """Refuse exact causal weights beyond :data:`MAX_EXACT_CAUSAL_T` positions.

    >>> check_exact_causal_T(10**4)
    Traceback (most recent call last):
    ...
    derive.errors.ParameterError: T: causal weights are exact rationals (about T^2 digits in all) for T <= 2000, got 10000
    """
    if T > MAX_EXACT_CAUSAL_T:
        raise ParameterError("T", f"causal weights are exact rationals (about T^2 digits in all) for T <= "
                                  f"{MAX_EXACT_CAUSAL_T}, got {T}")


def series_atoms(lam, dps: int) -> float:
    r"""An upper bound of the atoms Silverstein's series sums for the population :math:`n \sim \mathrm{Poisson}(\lambda)`
    at ``dps`` working digits: Bernstein's bound :math:`P(n \ge \lambda + s) \le e^{-s^2/(2(\lambda + s/3))}` below
    :math:`10^{-(\text{dps} + 10)}` (the series' guard), :math:`\lambda + L/3 + \sqrt{L^2/9 + 2\lambda L}` with
    :math:`L = (\text{dps} + 10)\ln 10`.

    >>> round(series_atoms(2, 55))
    107
    """
    import math

    L = (dps + 10) * math.log(10)
    lam = float(lam)
    return lam + L / 3 + math.sqrt(L * L / 9 + 2 * lam * L)


SERIES_RATES = (1.3e5, 1.0e6)
"""Units of :func:`series_seconds` one core does in a second, measured (CPU time, ``derive spike`` and ``derive bulk``
at ``T = 1``): near the mode (the gaps of the atoms whose mass is above ``10^-20``, each with a float64 scan over all
atoms: reuse 100 at 30 digits, 9.3e6 units in 71 s), and beyond it (the gaps a signal's search or many digits walk
to, each at its own extra digits: 1.2e8 units in 112 s at 200 digits, 3.3e7 in 16 s for ``mu2 = 10``)."""


def series_seconds(lam, dps: int, reach: float = 0.0) -> float:
    r"""An estimate of the seconds of one core an answer of the model's exact law takes: Poisson population of mean
    ``lam`` (``N/V``), ``dps`` working digits, walking the gaps of the atoms ``1 .. max(`` :func:`series_atoms` ``,
    reach)`` (the support's tail, or the atom where the answer lies: the signal's search, a point of the density). A
    gap ``k`` holds the digits to see its ends, ``dps + log10(1/p_k)/2``; about 100 evaluations find it, each of
    :func:`series_atoms` terms at those digits, dearer by :math:`(\text{digits}/100)^{3/2}` beyond 100 digits;
    :data:`SERIES_RATES` turns these units into seconds. The sum stops once it is beyond :data:`MAX_SERIES_SECONDS`.

    >>> round(series_seconds(100, 50)), round(series_seconds(2, 55, 8 * 20 / 0.25))
    (51, 90)
    """
    import math

    lam = float(lam)
    near, far = SERIES_RATES
    last, seconds, k = max(series_atoms(lam, dps), reach), 0.0, 1
    while k <= last and seconds <= MAX_SERIES_SECONDS:
        extra = max(0.0, (lam - k * math.log(lam) + math.lgamma(k + 1)) / math.log(10))
        digits = dps + extra / 2
        units = 100 * series_atoms(lam, digits) * max(1.0, digits / 100) ** 1.5
        seconds += units / (near if extra < 20 else far)
        k += 1
    return seconds


def check_series_work(lam, dps: int, reach: float = 0.0, reach_name: str = "x") -> None:
    r"""Refuse an answer of the model's exact law that :func:`series_seconds` puts beyond :data:`MAX_SERIES_SECONDS`,
    naming what drives it: ``reach_name`` (the answer lies beyond the support's tail), ``digits``, or ``gamma`` (the
    reuse :math:`\delta/\gamma`).

    >>> check_series_work(1000, 45)
    Traceback (most recent call last):
    ...
    derive.errors.ParameterError: gamma: the model's exact law at reuse N/V = 1000 and 45 working digits would take more than 90 s (its series summed over the clusters of more than 1547 atoms); the Gaussian equivalent (--law gaussian-equivalent) is close at large reuse
    """
    lam = float(lam)
    seconds = series_seconds(lam, dps, reach)
    if seconds <= MAX_SERIES_SECONDS:
        return
    atoms = series_atoms(lam, dps)
    name = reach_name if reach > atoms else "digits" if series_seconds(lam, 45, reach) <= MAX_SERIES_SECONDS else "gamma"
    why = (f"out to the cluster of the atom {reach:.3g}" if reach > atoms else
           f"its series summed over the clusters of more than {atoms:.0f} atoms")
    hint = "; the Gaussian equivalent (--law gaussian-equivalent) is close at large reuse" if name == "gamma" else ""
    raise ParameterError(name, f"the model's exact law at reuse N/V = {lam:.4g} and {dps} working digits would take "
                               f"more than {MAX_SERIES_SECONDS} s ({why}){hint}")


LIMIT_SECONDS_PER_WEIGHT = 1.1
"""Seconds of one core the model's own limit at several nonzero weights (quenched cavity populations, one sign field
per position) takes per nonzero weight beyond :data:`LIMIT_SECONDS_FIXED` at a small reuse and a weak signal, cold
(linear: the populations sweep every position); measured (divided by the reuse's and the signal's factors): 10 CPU-s at
``T = 4`` (mean, ``prefix:2``), 22 at ``T = 8`` (causal, ``prefix:3``), 18 and 11 at ``T = 16`` (mean, ``prefix:2``
and ``iid``), 47 at ``T = 64`` (mean, ``iid``)."""

LIMIT_SECONDS_FIXED = 10.0
"""Seconds of one core the model's own limit takes at a few nonzero weights whatever their number (the scan and the
threshold's edge searches)."""

LIMIT_REUSE_SCALES = (4.0, 64.0)
r"""The reuse ``r = N/V = delta/gamma`` multiplies the limit's cost by :math:`(1 + r/4)(1 + r/64)`: each root token
has about ``r`` child sequences per position, and the populations converge more slowly as it grows (measured at
``T = 4``, mean, ``prefix:2``, ``mu2 = 2``: 17, 36, 55, 124 CPU-s at ``r = 2, 8, 16, 32``; 113 at ``r = 40``; at
``T = 16``, 31 and 169 at ``r = 2`` and 16)."""

LIMIT_SIGNAL_SCALE = 25.0
r"""The signal's strength :math:`s = \mu_2\alpha/\kappa` (the population spike over the bulk's scale) multiplies the
limit's cost by :math:`1 + s/25`: the outlier's point lies further out, where the root tokens are tilted to larger
counts (measured at ``T = 4``, mean, ``prefix:2``, ``r = 2``, :math:`\alpha/\kappa = 3/2`: 17, 23, 74, 108 CPU-s at
``mu2 = 2, 10, 30, 100``)."""

MAX_LIMIT_SECONDS = 600
"""Most seconds of one core the model's own limit may be estimated to take before it starts (ten minutes: ``T`` up
to about 530 nonzero weights at a small reuse and signal). Beyond it ``T = 2000`` and ``T = 10^5`` had run for hours,
deaf to everything but a signal. A command whose own work is smaller waits less (:func:`limit_wait`)."""

_wait = contextvars.ContextVar("limit_wait", default=(MAX_LIMIT_SECONDS, "", "gamma"))


@contextlib.contextmanager
def limit_wait(seconds: float, why: str, reuse: str = "gamma"):
    """Within the block, the model's own limit is refused when estimated beyond ``seconds`` (``why``: the command that
    waits no longer, as the refusal says it; ``reuse``: the command's parameter that sets the reuse) instead of
    :data:`MAX_LIMIT_SECONDS`: ``verify mc`` waits for its theory no longer than about a minute."""
    token = _wait.set((min(seconds, MAX_LIMIT_SECONDS), why, reuse))
    try:
        yield
    finally:
        _wait.reset(token)


def limit_seconds(nonzero: int, reuse: float, strength: float) -> float:
    r"""CPU-seconds the model's own limit is estimated to take, cold, at ``nonzero`` nonzero weights, reuse
    ``r = N/V = delta/gamma`` and signal strength :math:`s = \mu_2\alpha/\kappa`:
    :math:`(10 + 1.1\,n)\,(1 + r/4)(1 + r/64)\,(1 + s/25)` (:data:`LIMIT_SECONDS_FIXED`,
    :data:`LIMIT_SECONDS_PER_WEIGHT`, :data:`LIMIT_REUSE_SCALES`, :data:`LIMIT_SIGNAL_SCALE`). At the eleven points measured
    (``notes/reliability.md``) it lies between half and two and a half times the CPU time taken (half at ``T = 4``,
    ``prefix:2``, ``r = 1/8``: 38 CPU-s taken, 18 estimated); the budget of :func:`limit_cpu_budget` covers the misses.

    >>> round(limit_seconds(4, 2, 3)), round(limit_seconds(4, 40, 3)), round(limit_seconds(200, 5/3, 2.3))
    (25, 288, 365)
    """
    low, high = LIMIT_REUSE_SCALES
    return ((LIMIT_SECONDS_FIXED + nonzero * LIMIT_SECONDS_PER_WEIGHT) * (1 + reuse / low) * (1 + reuse / high)
            * (1 + strength / LIMIT_SIGNAL_SCALE))


def limit_cpu_budget(estimate: float) -> float:
    """CPU-seconds the model's own limit may spend, estimated at ``estimate`` (:func:`limit_seconds`), before it is
    refused: four times the estimate and never less than two minutes, but never more than twice what the command
    waits for (:func:`limit_wait`), so that a command that waits a minute is stopped within two.

    >>> limit_cpu_budget(17), limit_cpu_budget(100)
    (120.0, 400.0)
    >>> with limit_wait(60, "verify mc"):
    ...     limit_cpu_budget(40)
    120.0
    """
    return float(min(max(4 * estimate, 120.0), max(2 * _wait.get()[0], 120.0)))


LIMIT_ERROR = 1e-3
"""The default target error of the model's limit (:func:`derive.vocabulary.limit.outlier.limit_spike`: three standard
errors of the replicas' mean) of the eigenvalue and the overlap; that of ``mu2_critical`` is ten times it. Here, not in
the solver's module, so that a command that reads the limit from the derivation cache does not load the solver."""


def check_limit_work(nonzero: int, reuse: float, strength: float) -> float:
    """The estimate :func:`limit_seconds` of the model's own limit, refused when beyond what the command waits for
    (:data:`MAX_LIMIT_SECONDS`, or less within :func:`limit_wait`), with the estimate, what drives it and the law that
    answers at once.

    >>> check_limit_work(2000, 1/8, 4)
    Traceback (most recent call last):
    ...
    derive.errors.ParameterError: T: the model's own limit at 2000 nonzero weights, reuse N/V = 0.125, mu2 alpha/kappa = 4: about 2649 CPU-s, more than 600; --law gaussian-equivalent answers at once
    >>> with limit_wait(60, "CPU-s verify mc waits for its theory", reuse="N"):
    ...     check_limit_work(4, 40, 3)
    Traceback (most recent call last):
    ...
    derive.errors.ParameterError: N: the model's own limit at 4 nonzero weights, reuse N/V = 40, mu2 alpha/kappa = 3: about 288 CPU-s, more than the 60 CPU-s verify mc waits for its theory; --law gaussian-equivalent answers at once, or derive spike computes and keeps it
    """
    seconds = limit_seconds(nonzero, reuse, strength)
    wait, why, reuse_name = _wait.get()
    if seconds > wait:
        low, high = LIMIT_REUSE_SCALES
        factors = {"T": 1 + nonzero * LIMIT_SECONDS_PER_WEIGHT / LIMIT_SECONDS_FIXED,
                   reuse_name: (1 + reuse / low) * (1 + reuse / high), "mu2": 1 + strength / LIMIT_SIGNAL_SCALE}
        name = max(factors, key=factors.get)
        more = f"more than the {wait:.0f} {why}" if why else f"more than {wait:.0f}"
        cached = ", or derive spike computes and keeps it" if why and seconds <= MAX_LIMIT_SECONDS else ""
        raise ParameterError(name, f"the model's own limit at {nonzero} nonzero weights, reuse N/V = {reuse:.3g}, mu2 "
                                   f"alpha/kappa = {strength:.3g}: about {seconds:.0f} CPU-s, {more}; "
                                   f"--law gaussian-equivalent answers at once{cached}")
    return seconds


def check_points(n: int, name: str) -> None:
    """Refuse more than :data:`MAX_POINTS` evaluation points.

    >>> check_points(10**6, "x")
    Traceback (most recent call last):
    ...
    derive.errors.ParameterError: x: at most 5000 points, got 1000000
    """
    if n > MAX_POINTS:
        raise ParameterError(name, f"at most {MAX_POINTS} points, got {n}")


def check_density_work(points: int, digits: int) -> None:
    """Refuse a density evaluation above :data:`MAX_DENSITY_WORK` (the cost per point grows with the
    working precision).

    >>> check_density_work(1000, 1000)
    Traceback (most recent call last):
    ...
    derive.errors.ParameterError: digits: 1000 points at 1000 digits: at most 1767766 units of work (points (digits + 20)^1.5), got 32576187
    """
    work = points * (digits + 20) ** 1.5
    if work > MAX_DENSITY_WORK:
        raise ParameterError("digits", f"{points} points at {digits} digits: at most {int(MAX_DENSITY_WORK)} units of "
                                       f"work (points (digits + 20)^1.5), got {int(work)}")


def check_output(reals: int, digits: int) -> None:
    """Refuse a document of ``reals`` reals at ``digits`` digits beyond :data:`MAX_OUTPUT_DIGITS`.

    >>> check_output(10**5, 1000)
    Traceback (most recent call last):
    ...
    derive.errors.ParameterError: digits: 100000 reals at 1000 digits make 100000000 digits, more than 10000000
    """
    if reals * digits > MAX_OUTPUT_DIGITS:
        raise ParameterError("digits", f"{reals} reals at {digits} digits make {reals * digits} digits, "
                                       f"more than {MAX_OUTPUT_DIGITS}")


