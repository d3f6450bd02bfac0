r"""The memory of a Monte Carlo trial and the limits of a run of trials, estimated from the parameters before anything
is drawn, and refused above them (``ParameterError`` naming the parameter; exit status 2 on the command line); the
documentation's page of limits (`docs/limits.md`) lists them beside those of :mod:`derive.resources`. The estimates
are upper bounds of the arrays a trial holds at once (bytes) or of a run's arithmetic (work), written from the code
that does the work:

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

The limit of one trial's memory (:func:`trial_limit`) is the user's (``--max-memory``) or a share of what the process
may use, carried to the worker processes a command spawns by :data:`MEMORY_VARIABLE`.
"""
from __future__ import annotations

from fractions import Fraction

from derive.errors import ParameterError

__all__ = ["MAX_TRIAL_BYTES", "SOLVERS", "KRYLOV_STEPS", "MAX_MU2", "MAX_SEEDS", "MAX_WORK", "trial_bytes",
           "check_trial", "check_trials", "MEMORY_VARIABLE", "MEMORY_SHARE", "parse_size", "total_memory",
           "available_memory", "default_trial_limit", "trial_limit", "set_max_memory"]

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
