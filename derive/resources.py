r"""The resource model: what a command will cost, estimated from its parameters before anything is
allocated, and the documented limits above which it is refused (``ParameterError`` naming the
parameter; exit status 2 on the command line).

Every limit is stated here once, and the documentation's page of limits (`docs/limits.md`) lists them. The estimates are
upper bounds of the arrays a command holds at once (bytes) or of its arithmetic (work), written from
the code that does the work:

* **Monte Carlo trial** (:func:`trial_bytes`): the table ``E`` (``8 d V``), the signs, tokens and the
  sparse mixing matrix ``A`` (at most ``48 N T``: int8 signs, int64 draws and tokens, float64 values and
  int64 indices), and for ``gauss:rho`` the ``T x T`` covariance and its Cholesky factor (``16 T^2``); then
  what the solver holds (:data:`SOLVERS`). ``dense``: a transposed copy of the table (``8 d V``), the pooled
  vectors (``8 d N``), the Gram matrix, the copy LAPACK works on and its workspace (``32 min(d, N)^2``).
  ``dense-axis`` (:math:`S_0` formed from the table for a whole ``mu2`` axis): a float64 copy of the table and
  its product with the mixing (``16 d V``), the rows of :math:`E^T` gathered for every token of every sequence
  and their weighted sums (``8 N (T + 1) d``), :math:`S_0`, the matrix of each ``mu2`` and its
  eigendecomposition (``24 d^2``). ``lanczos`` (the pooled vectors are never formed): the Krylov basis with its
  images under ``E^T`` (``8 (d + V)`` a step, for :data:`KRYLOV_STEPS` steps); ``lanczos-f32`` also a float32
  copy of the table (``4 d V``).
* **Runs of trials** (:func:`check_trials`): the number of seeds, and the work
  ``seeds * (d N T + 4 d N min(d, N))`` (pooling plus a dense solve, an upper bound of the
  matrix-free ones).
* **Exact weights** (each scheme's ``check`` in :mod:`derive.model.schemes`): the causal limit weights are exact rationals whose
  denominators grow like ``lcm(1..T)`` (``1.44 T`` bits each: ``T^2`` digits in all); the optimal
  weights of a family without a closed form need an mpmath eigendecomposition (work
  ``T^3 (digits + 10)^2``); ``alpha`` of ``gauss:rho`` sums ``T^2`` arcsines for weights that are
  not all equal.
"""
from __future__ import annotations

from fractions import Fraction

from derive.errors import ParameterError

__all__ = ["RATIO_RANGE", "MAX_RATIO_PRODUCT", "KAPPA_RANGE", "MAX_TRIAL_BYTES", "MAX_MU2", "MAX_SEEDS", "MAX_WORK", "MAX_EXACT_CAUSAL_T", "MAX_GAUSS_T", "MAX_EIGEN_WORK",
           "MAX_EIGEN_REFINEMENT_WORK", "MAX_SERIES_SECONDS", "SERIES_RATES", "series_atoms", "series_seconds",
           "check_series_work",
           "MAX_POINTS", "MAX_DENSITY_WORK", "MAX_OUTPUT_DIGITS", "MAX_TASKS", "MAX_AXIS", "SOLVERS", "KRYLOV_STEPS", "bulk_parameters",
           "check_spike_ranges", "check_documented_range", "trial_bytes", "check_trial", "check_trials", "check_exact_causal_T",
           "check_points", "check_density_work", "check_output", "check_tasks", "check_axis"]

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

MAX_TRIAL_BYTES = 2 * 2**30
"""Most memory one Monte Carlo trial may hold where the memory available cannot be read (2 GiB); elsewhere the limit
is the user's (``--max-memory``) or a share of what is available (:func:`trial_limit`)."""

SOLVERS = ("dense", "dense-axis", "lanczos", "lanczos-f32")
"""The memory models of :func:`trial_bytes` (module docstring); :func:`verify.montecarlo.trials.memory_model` names
the one of each solver."""

KRYLOV_STEPS = 512
"""Lanczos steps the matrix-free memory model provides for (the runs measured converge in 50 to 300 steps; the
basis grows by doubling, so a run of up to 512 steps holds at most this many rows)."""

MAX_MU2 = 10**6
"""Largest signal strength simulated: float64 eigenvalues of ``S`` carry absolute errors of about
``1e-16 * mu2``, so beyond ``1e6`` the bulk eigenvalues reported to 10 digits would be rounding noise
(and the spread over seeds overflows long before ``mu2 = 1e300``)."""

MAX_SEEDS = 10_000
"""Most trials of one run (``--seeds``, a sweep's ``seeds``)."""

MAX_WORK = 10**14
"""Most floating-point operations of one run of trials (hours on one core)."""

MAX_EXACT_CAUSAL_T = 2000
"""Longest sequence of exact causal weights (their exact text is about ``T^2`` digits: 4 MB here)."""

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

MAX_TASKS = 10**6
"""Most tasks of one sweep (grid points times seeds)."""

MAX_AXIS = 10_000
"""Most values of one sweep axis (a range's ``num``, a list)."""


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


def trial_bytes(d: int, V: int, N: int, T: int, family=None, extra: int = 0, solver: str = "dense") -> int:
    """An upper bound of the bytes one trial holds at once with ``solver`` (:data:`SOLVERS`; see the module
    docstring), plus ``extra`` (what a study holds beside the trial).

    >>> trial_bytes(1000, 2000, 4000, 8), trial_bytes(1000, 2000, 4000, 8, solver="lanczos")
    (97536000, 29824000)
    """
    return sum(_trial_terms(d, V, N, T, family, extra, solver).values())


def _trial_terms(d, V, N, T, family, extra, solver) -> dict:
    """The bytes of :func:`trial_bytes`, each under the dimension that drives it."""
    if solver not in SOLVERS:
        raise ParameterError("solver", f"must be one of {', '.join(SOLVERS)}, got {solver!r}")
    wide = "V" if V >= d else "d"
    table = {"dense": 16, "dense-axis": 24, "lanczos": 8, "lanczos-f32": 12}[solver] * d * V
    terms = {wide: table}
    terms["N" if N >= T else "T"] = 48 * N * T
    if solver == "dense":
        key = "N" if N >= d else "d"
        terms[key] = terms.get(key, 0) + 8 * d * N + 32 * min(d, N) ** 2
    elif solver == "dense-axis":
        terms["d"] = terms.get("d", 0) + 24 * d * d
        key = "N" if N >= d else "d"
        terms[key] = terms.get(key, 0) + 8 * N * (T + 1) * d
    else:
        terms[wide] += 8 * (d + V) * KRYLOV_STEPS
    terms["d"] = terms.get("d", 0) + extra
    if family is not None and family.sampler_bytes(T):
        terms["T"] = terms.get("T", 0) + family.sampler_bytes(T)
    return terms


def _largest(named: dict) -> str:
    return max(named, key=lambda name: named[name])


def check_trial(d: int, V: int, N: int, T: int, family=None, extra: int = 0, solver: str = "dense") -> None:
    """Refuse a trial whose memory with ``solver`` (:func:`trial_bytes`; ``family`` the sign family, whose sampler may
    hold memory of its own) exceeds the limit (:func:`trial_limit`), naming the largest of the dimensions behind it
    and the option that sets the limit, or a ``T`` beyond what the family's sampler is offered for.

    >>> check_trial(2, 2, 10**8, 10)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    derive.errors.ParameterError: N: one trial at d = 2, V = 2, N = 100000000, T = 10 needs 46.2 GiB, more than the ...
    """
    terms = _trial_terms(d, V, N, T, family, extra, solver)
    need = sum(terms.values())
    limit, source = trial_limit()
    if need > limit:
        raise ParameterError(_largest(terms), f"one trial at d = {d}, V = {V}, N = {N}, T = {T} needs "
                                              f"{_gib(need)}, more than the {_gib(limit)} limit per trial ({source})")
    if family is not None and T > family.max_T:
        raise ParameterError("T", f"{family.syntax} signs are sampled for T <= {family.max_T}, got {T}")


def check_trials(d: int, V: int, N: int, T: int, seeds: int, family=None, extra: int = 0,
                 solver: str = "dense") -> None:
    """Refuse a run of ``seeds`` trials above :data:`MAX_SEEDS` or :data:`MAX_WORK` (after :func:`check_trial`).

    >>> check_trials(10, 20, 40, 4, 10**12)
    Traceback (most recent call last):
    ...
    derive.errors.ParameterError: seeds: at most 10000 trials per run, got 1000000000000
    """
    check_trial(d, V, N, T, family, extra, solver)
    if seeds > MAX_SEEDS:
        raise ParameterError("seeds", f"at most {MAX_SEEDS} trials per run, got {seeds}")
    work = seeds * (d * N * T + 4 * d * N * min(d, N))
    if work > MAX_WORK:
        raise ParameterError("seeds", f"{seeds} trials at d = {d}, N = {N} need about {work:.1e} operations "
                                      f"(more than {MAX_WORK:.0e})")


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


def check_tasks(n: int, name: str = "sweep.seeds") -> None:
    """Refuse a sweep of more than :data:`MAX_TASKS` tasks.

    >>> check_tasks(10**7)
    Traceback (most recent call last):
    ...
    derive.errors.ParameterError: sweep.seeds: the sweep has 10000000 tasks, more than 1000000
    """
    if n > MAX_TASKS:
        raise ParameterError(name, f"the sweep has {n} tasks, more than {MAX_TASKS}")


def check_axis(n: int, name: str) -> None:
    """Refuse a sweep axis of more than :data:`MAX_AXIS` values.

    >>> check_axis(10**9, "grid.mu2")
    Traceback (most recent call last):
    ...
    derive.errors.ParameterError: grid.mu2: at most 10000 values, got 1000000000
    """
    if n > MAX_AXIS:
        raise ParameterError(name, f"at most {MAX_AXIS} values, got {n}")


MEMORY_VARIABLE = "ATTENTION_RMT_MAX_MEMORY"
"""The environment variable that carries the per-trial memory limit (bytes, or a size such as ``8GiB``) from a
command to the worker processes it spawns; :func:`set_max_memory` sets it."""

MEMORY_SHARE = Fraction(1, 2)
"""The share of the available memory that the trials running at once may hold by default (the rest is left to the
interpreter, its libraries and the machine's other users)."""

_UNITS = {"": 1, "b": 1, "k": 10**3, "kb": 10**3, "kib": 2**10, "m": 10**6, "mb": 10**6, "mib": 2**20,
          "g": 10**9, "gb": 10**9, "gib": 2**30, "t": 10**12, "tb": 10**12, "tib": 2**40}


def parse_size(text, name: str = "max-memory") -> int:
    """A memory size in bytes from ``8GiB``, ``512MiB``, ``2.5GB``, ``1e9`` or a plain number of bytes (powers of 1024
    for ``KiB``/``MiB``/``GiB``/``TiB``, of 1000 for ``kB``/``MB``/``GB``/``TB``; case is ignored), at least 1 MiB and
    at most what the machine has (:func:`total_memory`): a limit it cannot meet is refused at once, naming it.
    The number is read as text of at most 40 characters with an exponent of at most 30 before any arithmetic
    (``1e999999999`` had been expanded into a billion-digit integer).

    >>> parse_size("8GiB"), parse_size("1.5 gb"), parse_size(2**22)
    (8589934592, 1500000000, 4194304)
    >>> parse_size("1e999999999")
    Traceback (most recent call last):
    ...
    derive.errors.ParameterError: max-memory: 1e999999999: an exponent of 999999999, beyond any memory size (write e.g. 8GiB)
    """
    import re

    shown = _shown_text(text)
    match = re.fullmatch(r"\s*([0-9]+(?:\.[0-9]*)?)(?:[eE]([+-]?[0-9]+))?\s*([A-Za-z]*)\s*", str(text))
    unit = match and match.group(3).lower()
    if not match or unit not in _UNITS:
        raise ParameterError(name, f"not a memory size: {shown!r} (write e.g. 8GiB, 512MiB, 2GB)")
    mantissa, exponent = match.group(1), match.group(2) or "0"
    if len(mantissa) > 40 or len(exponent) > 6 or abs(int(exponent)) > 30:
        why = f"an exponent of {exponent[:12]}" if len(mantissa) <= 40 else "more than 40 digits"
        raise ParameterError(name, f"{shown}: {why}, beyond any memory size (write e.g. 8GiB)")
    size = int(Fraction(mantissa) * Fraction(10) ** int(exponent) * _UNITS[unit])
    if size < 2**20:
        raise ParameterError(name, f"{shown} is less than 1 MiB")
    total = total_memory()
    if size > total:
        raise ParameterError(name, f"{shown} is more than the {_gib(total)} of memory and swap this machine has")
    return size


def _shown_text(text) -> str:
    """``text`` as an error line shows it: stripped, at most 40 characters."""
    t = str(text).strip()
    return t if len(t) <= 40 else t[:37] + "..."


def total_memory() -> int:
    """The most memory this machine could give one process: its memory and swap (``MemTotal`` plus ``SwapTotal`` of
    ``/proc/meminfo``, else ``sysconf``), and no more than 2^48 bytes (the address space of today's 64-bit processors);
    2^48 where none can be read.

    >>> 2**20 < total_memory() <= 2**48
    True
    """
    import os

    found = {}
    try:
        with open("/proc/meminfo") as f:
            for line in f:
                key, _, rest = line.partition(":")
                if key in ("MemTotal", "SwapTotal"):
                    found[key] = int(rest.split()[0]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    if "MemTotal" not in found:
        try:
            found["MemTotal"] = os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
        except (ValueError, OSError, AttributeError):
            return 2**48
    return min(2**48, sum(found.values()))


def _read_int(path: str) -> int | None:
    try:
        with open(path) as f:
            text = f.read().strip()
    except OSError:
        return None
    return int(text) if text.isdigit() else None


def available_memory() -> int | None:
    """The memory this process may still use, in bytes: the least of the machine's available memory
    (``MemAvailable`` of ``/proc/meminfo``, else ``sysconf``), what the control group leaves (``memory.max`` less
    ``memory.current``, cgroup v2 or v1) and the address-space limit (``RLIMIT_AS``); ``None`` where none can be read.

    >>> m = available_memory(); m is None or m > 0
    True
    """
    import os

    found = []
    try:
        with open("/proc/meminfo") as f:
            for line in f:
                if line.startswith("MemAvailable:"):
                    found.append(int(line.split()[1]) * 1024)
    except (OSError, ValueError, IndexError):
        pass
    if not found:
        try:
            found.append(os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE"))
        except (ValueError, OSError, AttributeError):
            pass
    for limit, used in (("/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory.current"),
                        ("/sys/fs/cgroup/memory/memory.limit_in_bytes", "/sys/fs/cgroup/memory/memory.usage_in_bytes")):
        cap, current = _read_int(limit), _read_int(used)
        if cap is not None and cap < 2**60:
            found.append(max(0, cap - (current or 0)))
    try:
        import resource

        soft = resource.getrlimit(resource.RLIMIT_AS)[0]
        if soft != resource.RLIM_INFINITY:
            found.append(soft)
    except (ImportError, ValueError, OSError):
        pass
    found = [x for x in found if x > 0]
    return min(found) if found else None


def default_trial_limit(workers: int = 1) -> tuple[int, str]:
    """The default per-trial limit and how it was chosen: :data:`MEMORY_SHARE` of :func:`available_memory`, shared by
    ``workers`` trials running at once, or :data:`MAX_TRIAL_BYTES` where the memory cannot be read.

    >>> limit, source = default_trial_limit(); limit > 0 and isinstance(source, str)
    True
    """
    available = available_memory()
    if available is None:
        return MAX_TRIAL_BYTES, "the memory available is unknown; --max-memory SIZE changes it"
    share = int(available * MEMORY_SHARE) // max(1, workers)
    each = f", shared by {workers} workers" if workers > 1 else ""
    return share, f"half of the {_gib(available)} available{each}; --max-memory SIZE changes it"


def trial_limit() -> tuple[int, str]:
    """The memory one trial may hold, and where the limit comes from: the size in :data:`MEMORY_VARIABLE` (set by
    ``--max-memory``, :func:`set_max_memory` or the user), else :func:`default_trial_limit` (for the number of
    workers a command wrote there as ``default:N``)."""
    import os

    given = os.environ.get(MEMORY_VARIABLE, "").strip()
    if given.startswith("default:"):
        workers = given[len("default:"):]
        return default_trial_limit(int(workers) if workers.isdigit() else 1)
    if given:
        return parse_size(given, MEMORY_VARIABLE), f"set by --max-memory {given}"
    return default_trial_limit()


def set_max_memory(size=None, workers: int = 1) -> int:
    """Set the per-trial memory limit of this process and of the workers it spawns (through
    :data:`MEMORY_VARIABLE`): ``size`` as :func:`parse_size` reads it, or ``None`` for the default share of the
    available memory among ``workers`` trials at once (a size the user put in :data:`MEMORY_VARIABLE` stays);
    returns the limit in bytes.

    >>> import os
    >>> set_max_memory("3GiB"), os.environ[MEMORY_VARIABLE], trial_limit()
    (3221225472, '3GiB', (3221225472, 'set by --max-memory 3GiB'))
    >>> _ = os.environ.pop(MEMORY_VARIABLE)
    """
    import os

    if size is not None:
        limit = parse_size(size)
        os.environ[MEMORY_VARIABLE] = str(size).strip()
        return limit
    given = os.environ.get(MEMORY_VARIABLE, "").strip()
    if given and not given.startswith("default:"):
        return parse_size(given, MEMORY_VARIABLE)
    os.environ[MEMORY_VARIABLE] = f"default:{max(1, int(workers))}"
    return default_trial_limit(workers)[0]


def _gib(n: int) -> str:
    """``n`` bytes in GiB, one decimal.

    >>> _gib(3 * 2**30 + 2**29)
    '3.5 GiB'
    """
    return f"{n / 2**30:.1f} GiB"


__all__ += ["MEMORY_VARIABLE", "MEMORY_SHARE", "parse_size", "total_memory", "available_memory", "default_trial_limit", "trial_limit",
            "set_max_memory"]
