r"""The benchmark harness behind ``python -m benchmarks all``: every timed figure of the project next to its baseline,
both measured in the same run, and the implicit Monte Carlo path next to the machine's bandwidth floor.

Figures (each the median of several runs after a warm-up, unless said otherwise):

* the bulk density at 1000 points (:func:`derive.gaussian.bulk.density`, 15 and 30 digits) against mpmath's
  ``polyroots`` per point on the same cubic, the branch picked by the sign of the imaginary part
  (:func:`polyroots_density`); the float64 path (:meth:`derive.gaussian.bulk.BulkLaw.density_float`) against
  ``numpy.roots`` per point (:func:`numpy_roots_density`), with its error against the 30-digit result;
* ``derive spike`` (:func:`derive.report.documents.spike`, 30 and 50 digits) warm, against its first call in a
  fresh process (which derives the formulas with SymPy);
* the Monte Carlo eigensolvers and the bandwidth floor (:mod:`benchmarks.mc`), the bandwidth
  being that of a large array copy (:func:`copy_bandwidth`);
* the mu2 axis from one draw against one solve per mu2, and table passes per converged eigenpair
  against ARPACK and LOBPCG (:mod:`benchmarks.axis`);
* whole processes: one ``verify mc`` trial against the naive script, ``derive spike`` from a fresh
  process, ``verify claims --quick`` and the test suite, each next to the code this work started
  from (:mod:`benchmarks.processes`).

The machine is shared: the load average is recorded at the start and the end, only ratios
measured in the same run are compared with the targets, and times are the process's CPU time
(:data:`CLOCK`), which other jobs inflate far less than wall time.
"""
from __future__ import annotations

import datetime
import json
import os
import platform
import statistics
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import mpmath
import numpy as np

from benchmarks import axis as bench_axis
from benchmarks import mc as bench_mc
from benchmarks import processes as bench_processes

__all__ = ["ROOT", "NOTES", "BULK", "SPIKE", "CLOCK", "BULK_DIGITS", "SPIKE_DIGITS", "BULK_POINTS",
           "BULK_TARGET", "FLOAT_TARGET", "FLOAT_ERROR", "Mode", "MODES", "last_level_cache", "machine",
           "revision", "median_seconds", "copy_bandwidth", "bulk_grid", "polyroots_density",
           "numpy_roots_density", "bench_bulk", "bench_spike", "run", "summary",
           "summary_table", "gaps", "markdown"]

ROOT = Path(__file__).resolve().parents[1]
NOTES = ROOT / "notes" / "benchmarks.md"
BULK = ("1/2", "1/4", "1/8")
"""``delta, gamma, kappa`` of the bulk benchmark: mean pooling over ``T = 8`` (``kappa = 1/8``), the tour of the commands, ``docs/commands.md``."""
SPIKE = {"delta": "1/2", "gamma": "1/4", "alpha": "7/32", "kappa": "1/8", "mu2": "3/2"}
"""Parameters of the ``derive spike`` benchmark: mean pooling on ``prefix:3``, ``T = 8`` (the tour of the commands)."""
CLOCK = time.process_time
"""The clock of every in-process timing: CPU time of this process, which excludes the time other jobs
hold the core (the timed code is single-threaded: mpmath, SymPy, small LAPACK calls, ``numpy.copyto``)."""
BULK_DIGITS = (15, 30)
SPIKE_DIGITS = (30, 50)
BULK_POINTS = 1000
"""Size of the bulk grid the targets are stated for."""
BULK_TARGET, FLOAT_TARGET, FLOAT_ERROR = 5.0, 10.0, 1e-13
PROCESS_TARGET, COLD_TARGET, LEDGER_TARGET, SUITE_TARGET, AXIS_TARGET = 8.0, 0.3, 60.0, 120.0, 20.0
"""Issue 17: ``verify mc`` as a process >= 8x the naive script; ``derive spike`` cold < 0.3 s; the quick
ledger within 60 s and the suite within 2 minutes (wall, default threads); the mu2 axis >= 20x."""


@dataclass(frozen=True)
class Mode:
    """Sizes of one kind of run."""

    points: int  # of the bulk grid
    repeats: int  # timed runs after the warm-up (bulk, spike, copy)
    cold_runs: int  # fresh processes for the cold spike
    ladder: tuple[int, ...]  # Monte Carlo sizes d
    mc_repeats: int
    dense_max: int  # dense solves only up to this d
    dense_single_from: int  # a single dense solve, no warm-up, from this d on
    copy_mib: int  # size of the copied array
    isolate: bool  # one process per Monte Carlo job


MODES = {
    "full": Mode(BULK_POINTS, 5, 3, (500, 1000, 2000, 4000, 8000), 3, 8000, 8000, 1024, True),
    "quick": Mode(BULK_POINTS, 3, 1, (500, 1000, 2000), 2, 2000, 10**9, 1024, True),
    "tiny": Mode(24, 1, 1, (16, 32, 48), 1, 32, 32, 8, False),
}


# ----------------------------------------------------------------------------------------------
# the machine and the run


def last_level_cache() -> str:
    """Size of the CPU's last-level cache, from sysfs (``unknown`` elsewhere)."""
    caches = []
    for index in Path("/sys/devices/system/cpu/cpu0/cache").glob("index*"):
        try:
            caches.append((int((index / "level").read_text()), (index / "size").read_text().strip()))
        except (OSError, ValueError):
            continue
    if not caches:
        return "unknown"
    level, size = max(caches)
    if size.endswith("K") and size[:-1].isdigit() and int(size[:-1]) >= 1024:
        size = f"{int(size[:-1]) / 1024:.0f} MiB"
    return f"L{level} {size}"


def machine() -> dict:
    """Cores, CPU model and cache, BLAS (``numpy.show_config``, and threadpoolctl if installed), versions,
    load, date."""
    import scipy
    import sympy

    cpu = platform.processor() or platform.machine()
    try:
        with open("/proc/cpuinfo") as f:
            cpu = next((line.split(":", 1)[1].strip() for line in f if line.startswith("model name")), cpu)
    except OSError:
        pass
    try:
        blas = np.show_config(mode="dicts")["Build Dependencies"]["blas"]
        blas = f"{blas.get('name')} {blas.get('version')} ({blas.get('openblas configuration', '').strip()})"
    except (TypeError, KeyError):
        blas = "unknown (numpy.show_config gave no dictionary)"
    try:
        import threadpoolctl

        pools = "; ".join(f"{p['internal_api']} {p['version']}, {p['num_threads']} threads"
                          for p in threadpoolctl.threadpool_info())
    except ImportError:
        pools = "threadpoolctl not installed"
    return {
        "cores": os.cpu_count(), "cpu": cpu, "cache": last_level_cache(), "blas": blas, "threadpools": pools, "numpy": np.__version__,
        "scipy": scipy.__version__, "sympy": sympy.__version__, "mpmath": mpmath.__version__,
        "python": platform.python_version(), "load_start": os.getloadavg()[0],
        "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
    }


def _git(*args) -> str:
    try:
        out = subprocess.run(["git", *args], cwd=ROOT, capture_output=True, text=True, check=True)
    except (OSError, subprocess.CalledProcessError):
        return ""
    return out.stdout.strip()


def revision() -> dict:
    """The commit measured, the last commit of ``verify/montecarlo/`` (whose solvers are timed), and the
    files of ``derive/`` and ``verify/`` whose uncommitted changes the run measured too."""
    dirty = _git("diff", "--name-only", "HEAD", "--", "derive", "verify").splitlines()
    return {"head": _git("rev-parse", "--short", "HEAD") or "unknown",
            "montecarlo": _git("log", "-1", "--format=%h (%cs)", "--", "verify/montecarlo") or "unknown",
            "montecarlo_uncommitted": any(f.startswith("verify/montecarlo/") for f in dirty), "uncommitted": dirty}


def median_seconds(f, repeats: int, warmup=None, number: int = 1) -> float:
    """:func:`benchmarks.mc.median_seconds` by :data:`CLOCK`."""
    return bench_mc.median_seconds(f, repeats, CLOCK, warmup, number)


def copy_bandwidth(mib: int, repeats: int) -> dict:
    """Memory bandwidth of ``numpy.copyto`` between two ``mib``-MiB float64 arrays: bytes read plus
    written over the median time (the first copy, which faults the pages in, is the warm-up); and,
    for comparison with read-only kernels such as gemv, of a sum of the array (bytes read over time)."""
    src = np.ones(mib * 2**20 // 8)
    dst = np.empty_like(src)
    seconds = median_seconds(lambda: np.copyto(dst, src), repeats)
    read = median_seconds(src.sum, repeats)
    return {"mib": mib, "seconds": seconds, "bytes_per_s": 2 * src.nbytes / seconds, "read_bytes_per_s": src.nbytes / read}


# ----------------------------------------------------------------------------------------------
# bulk density


def bulk_grid(law, n: int) -> np.ndarray:
    """``n`` equispaced points from 10% of the support's width below its left edge to 10% above its right edge."""
    a = float(min(e for iv in law.support for e in iv))
    b = float(max(e for iv in law.support for e in iv))
    return np.linspace(a - 0.1 * (b - a), b + 0.1 * (b - a), n)


def polyroots_density(law, xs, digits: int) -> list:
    r"""Baseline: at each ``x`` the roots of the cubic :math:`P(m, x)` by ``mpmath.polyroots`` at ``digits``
    (working precision doubled, as close roots near an edge need), :math:`\rho = \operatorname{Im} m/\pi`
    for the root with positive imaginary part, 0 if there is none."""
    out = []
    with mpmath.workdps(digits):
        for x in xs:
            xm = mpmath.mpf(float(x))
            coefficients = [pc.at(xm) for pc in reversed(law.coefficients)]
            roots = mpmath.polyroots(coefficients, maxsteps=100, extraprec=mpmath.mp.prec, error=False)
            im = max(mpmath.im(r) for r in roots)
            out.append(im / mpmath.pi if im > 0 else mpmath.mpf(0))
    return out


def numpy_roots_density(law, xs: np.ndarray) -> np.ndarray:
    """Baseline: the float64 twin of :func:`polyroots_density`, ``numpy.roots`` per point (coefficients
    evaluated for all points at once)."""
    coefficients = np.array([pc.floats(xs) for pc in law.coefficients])[::-1]
    out = np.zeros(len(xs))
    for i in range(len(xs)):
        im = np.roots(coefficients[:, i]).imag.max()
        out[i] = im / np.pi if im > 0 else 0.0
    return out


def _errors(values, reference) -> dict:
    """Max abs error against ``reference`` (mpmath reals, exactly 0 outside the support), and the
    points outside the support where ``values`` is not exactly 0."""
    v = np.array([float(x) for x in values])
    ref = np.array([float(x) for x in reference])
    outside = np.array([x == 0 for x in reference])
    return {"max_abs_error": float(np.max(np.abs(v - ref))),
            "max_abs_error_inside": float(np.max(np.abs(v - ref)[~outside], initial=0.0)),
            "outside": int(outside.sum()), "nonzero_outside": int(np.count_nonzero(v[outside]))}


def bench_bulk(mode: Mode) -> dict:
    """Times and errors of the bulk density's four evaluations at ``mode.points`` points."""
    from derive.gaussian import bulk
    from derive.gaussian.bulk import density_float as bulk_density_float

    law = bulk.law(*bulk.parameters(*BULK))
    xs = bulk_grid(law, mode.points)
    few = xs[:10]
    reference = bulk.density(*BULK, list(xs), 30)
    out = {"parameters": BULK, "points": len(xs), "support": [[float(a), float(b)] for a, b in law.support],
           "grid": [float(xs[0]), float(xs[-1])], "max_density": float(max(reference)), "derived": {}, "polyroots": {}}
    for digits in BULK_DIGITS:
        derived = median_seconds(lambda: bulk.density(*BULK, list(xs), digits), mode.repeats,
                                 lambda: bulk.density(*BULK, list(few), digits))
        base = median_seconds(lambda: polyroots_density(law, xs, digits), mode.repeats,
                              lambda: polyroots_density(law, few, digits))
        out["derived"][digits] = {"seconds": derived, **_errors(bulk.density(*BULK, list(xs), digits), reference)}
        out["polyroots"][digits] = {"seconds": base, **_errors(polyroots_density(law, xs, digits), reference)}
    out["float"] = {"seconds": median_seconds(lambda: bulk_density_float(*BULK, xs), mode.repeats, number=10),
                    **_errors(bulk_density_float(*BULK, xs), reference)}
    out["numpy_roots"] = {"seconds": median_seconds(lambda: numpy_roots_density(law, xs), mode.repeats),
                          **_errors(numpy_roots_density(law, xs), reference)}
    return out


# ----------------------------------------------------------------------------------------------
# derive spike

_COLD = """
import json, time
t0 = time.process_time()
from derive.report.documents import spike
t1 = time.process_time()
spike(**{args!r}, digits=30)
t2 = time.process_time()
print(json.dumps({{"import_s": t1 - t0, "first_call_s": t2 - t1}}))
"""


def bench_spike(mode: Mode) -> dict:
    """``derive spike`` warm at each of :data:`SPIKE_DIGITS`, and cold in fresh processes."""
    from derive.report.documents import spike

    warm = {digits: median_seconds(lambda: spike(**SPIKE, digits=digits), mode.repeats, number=20)
            for digits in SPIKE_DIGITS}
    cold = []
    for _ in range(mode.cold_runs):
        run = subprocess.run([sys.executable, "-c", _COLD.format(args=SPIKE)], cwd=ROOT, env=bench_mc.child_env(),
                             capture_output=True, text=True, check=True)
        cold.append(json.loads(run.stdout))
    return {"parameters": SPIKE, "warm": warm, "cold_runs": len(cold),
            "import_s": statistics.median(c["import_s"] for c in cold),
            "first_call_s": statistics.median(c["first_call_s"] for c in cold)}


# ----------------------------------------------------------------------------------------------
# the run


def run(mode_name: str, threads: int | None = 1, log=sys.stderr) -> dict:
    """Every benchmark of ``mode_name`` (``full``, ``quick`` or ``tiny``); Monte Carlo BLAS limited to ``threads``."""
    mode = MODES[mode_name]
    result = {"mode": mode_name, "machine": machine(), "revision": revision()}
    print("bench: memory bandwidth ...", file=log, flush=True)
    copies = [copy_bandwidth(mode.copy_mib, mode.repeats)]
    print("bench: bulk density ...", file=log, flush=True)
    result["bulk"] = bench_bulk(mode)
    print("bench: derive spike ...", file=log, flush=True)
    result["spike"] = bench_spike(mode)
    result["mc"] = bench_mc.run(mode.ladder, mode.mc_repeats, mode.dense_max, mode.dense_single_from,
                                mode.isolate, threads, log)
    print("bench: memory bandwidth again ...", file=log, flush=True)
    copies.append(copy_bandwidth(mode.copy_mib, mode.repeats))
    # the faster of the two copies gives the lower, more demanding floor
    result["bandwidth"] = {"copies": copies, "bytes_per_s": max(c["bytes_per_s"] for c in copies),
                           "read_bytes_per_s": max(c["read_bytes_per_s"] for c in copies)}
    result["axis"] = bench_axis.run(mode_name, threads, log)
    result["processes"] = bench_processes.run(mode_name, log)
    result["load_end"] = os.getloadavg()[0]
    result["summary"] = summary(result)
    return result


def _target(text: str, met: bool | None) -> dict:
    return {"target": text, "met": met}


def summary(result: dict) -> list[dict]:
    """One row per figure: its time, its baseline's, their ratio (baseline over figure: how many times
    faster), and the target it has, if any, with whether it is met."""
    rows = []
    bulk, spike, mc = result["bulk"], result["spike"], result["mc"]
    n = bulk["points"]
    for digits in BULK_DIGITS:
        mine, base = bulk["derived"][digits]["seconds"], bulk["polyroots"][digits]["seconds"]
        ratio = base / mine
        target = (_target("", None) if digits != 30 else _target(f">= {BULK_TARGET:.0f}x", ratio >= BULK_TARGET)
                  if n == BULK_POINTS else _target(f">= {BULK_TARGET:.0f}x at {BULK_POINTS} points (not in this run)", None))
        rows.append({"figure": f"bulk density, {n} points, {digits} digits", "seconds": mine,
                     "baseline": f"mpmath polyroots per point, {digits} digits", "baseline_seconds": base,
                     "ratio": ratio, **target})
    f, base = bulk["float"], bulk["numpy_roots"]["seconds"]
    ratio = base / f["seconds"]
    met = ratio >= FLOAT_TARGET and f["max_abs_error"] < FLOAT_ERROR and f["nonzero_outside"] == 0
    text = (f">= {FLOAT_TARGET:.0f}x, max abs error < {FLOAT_ERROR:.0e} (measured {f['max_abs_error']:.1e}), "
            f"0 outside the support ({f['nonzero_outside']} of {f['outside']} nonzero)")
    rows.append({"figure": f"bulk density float64, {n} points", "seconds": f["seconds"],
                 "baseline": "numpy.roots per point", "baseline_seconds": base, "ratio": ratio,
                 **(_target(text, met) if n == BULK_POINTS else _target(text + f" at {BULK_POINTS} points (not in this run)", None))})
    for digits in SPIKE_DIGITS:
        rows.append({"figure": f"derive spike, warm query, {digits} digits", "seconds": spike["warm"][digits],
                     "baseline": "first call in a fresh process, 30 digits (functions from the derivation cache)",
                     "baseline_seconds": spike["first_call_s"], "ratio": spike["first_call_s"] / spike["warm"][digits],
                     **_target("", None)})
    rows_mc = mc["rows"]
    d = bench_mc.TARGET_D
    pairs = mc.get("paired") if mc.get("paired") and mc["paired"]["d"] == d else None
    paired_failed = any(f["path"] == "paired" and f["d"] == d for f in mc["failed"])
    for name in bench_mc.ACCURATE:
        s = None if pairs is None else pairs["median_ratio"][name]
        rows.append({"figure": f"{name} top-3 solve, d = {d} (solve after solve)",
                     "seconds": None if s is None else statistics.median(pairs["times"][name]),
                     "baseline": "dense top-3 solve", "baseline_seconds": None if s is None else statistics.median(pairs["times"]["dense"]),
                     "ratio": s, **_target(f">= {bench_mc.TARGET_SPEEDUP:.0f}x, median of {bench_mc.PAIRED_ROUNDS} rounds"
                                           + ("" if s is not None else " (the job failed)" if paired_failed
                                              else " (d not in this run)"),
                                           None if s is None else s >= bench_mc.TARGET_SPEEDUP)})
    bandwidth = result["bandwidth"]["bytes_per_s"]
    target = f"solve <= {bench_mc.FLOOR_FACTOR:.0f}x floor (ratio >= {1 / bench_mc.FLOOR_FACTOR:.2f})"
    big = [d for d in mc["ladder"] if d >= bench_mc.FLOOR_FROM_D]
    if not big:
        rows.append({"figure": f"matrix-free solves at d >= {bench_mc.FLOOR_FROM_D}", "seconds": None,
                     "baseline": "bandwidth floor", "baseline_seconds": None, "ratio": None,
                     **_target(target + " (d not in this run)", None)})
    for d in big:
        for name in bench_mc.ACCURATE:
            if (name, d) not in rows_mc:
                rows.append({"figure": f"{name} top-3 solve, d = {d}", "seconds": None, "baseline": "bandwidth floor",
                             "baseline_seconds": None, "ratio": None, **_target(target + " (the job failed)", None)})
                continue
            fl = bench_mc.floor(rows_mc[name, d], bandwidth)
            rows.append({"figure": f"{name} top-3 solve, d = {d}", "seconds": rows_mc[name, d]["solve_s"],
                         "baseline": "bandwidth floor (bytes read / copy bandwidth)", "baseline_seconds": fl["floor_s"],
                         "ratio": fl["fraction"], **_target(target, fl["fraction"] >= 1 / bench_mc.FLOOR_FACTOR)})
    d = max((d for d in mc["ladder"] if ("implicit", d) in rows_mc and ("implicit-f32", d) in rows_mc), default=None)
    im, f32 = rows_mc.get(("implicit", d)), rows_mc.get(("implicit-f32", d))
    if d is not None:
        rows.append({"figure": f"implicit-f32 top-3 solve, d = {d}", "seconds": f32["solve_s"],
                     "baseline": "implicit (float64 table)", "baseline_seconds": im["solve_s"],
                     "ratio": im["solve_s"] / f32["solve_s"],
                     **_target(f"(no target; top-3 change {bench_mc.rel_diff(f32['top'], im['top']):.0e} relative)", None)})
    for a in result["axis"]["axis"]:
        cell = statistics.median(r["new_cell_s"] for r in a["rounds"])
        old = statistics.median(r["old_cell_s"] for r in a["rounds"])
        rows.append({"figure": f"mu2 axis: one cell of {a['mu2']} mu2 values, d = {a['d']} (one draw, one block run)",
                     "seconds": cell, "baseline": "one draw and Lanczos solve per mu2 (as sweeps ran before)",
                     "baseline_seconds": old, "ratio": a["ratio"],
                     **_target(f"median of {len(a['rounds'])} interleaved rounds (the {AXIS_TARGET:.0f}x target is the "
                               "paper-scale projection's, notes/sweeps.md)", None)})
    p = result["processes"]
    mc_rows = p["mc"]
    if "naive script" in mc_rows:
        r = mc_rows["verify mc (now)"]
        rows.append({"figure": f"verify mc, one trial at d = {bench_processes.MC['d']}, whole process (CPU)",
                     "seconds": r["cpu_s"], "baseline": "the naive script, whole process (CPU)",
                     "baseline_seconds": mc_rows["naive script"]["cpu_s"], "ratio": r["cpu_ratio"],
                     **_target(f">= {PROCESS_TARGET:.0f}x, median of {r['runs']} rounds, one BLAS thread each "
                               f"(wall: {r['wall_ratio']:.1f}x)", r["cpu_ratio"] >= PROCESS_TARGET)})
    now = p["spike"]["derive spike (now)"]
    before = p["spike"].get("derive spike (before)")
    rows.append({"figure": "derive spike, fresh process, warm derivation cache (CPU)", "seconds": now["cpu_s"],
                 "baseline": "the same before this work" if before else "–",
                 "baseline_seconds": before["cpu_s"] if before else None, "ratio": now["cpu_ratio"] if before else None,
                 **_target(f"< {COLD_TARGET} s (wall {now['wall_s']:.2f} s)", now["cpu_s"] < COLD_TARGET)})
    for key, label, limit in (("ledger", "verify claims --quick, end to end (wall)", LEDGER_TARGET),
                              ("suite", "default test suite (wall)", SUITE_TARGET)):
        if key not in p:
            continue
        r, b = p[key][f"{key} (now)"], p[key].get(f"{key} (before)")
        rows.append({"figure": label, "seconds": r["wall_s"], "baseline": "the same before this work" if b else "–",
                     "baseline_seconds": b["wall_s"] if b else None, "ratio": r["wall_ratio"] if b else None,
                     **_target(f"<= {limit:.0f} s, default BLAS threads (CPU {r['cpu_s']:.0f} s)", r["wall_s"] <= limit)})
    return rows


def _s(x) -> str:
    if x is None:
        return "–"
    x = float(x)
    return f"{x:.3g}" if x >= 1e-3 else f"{x:.2e}"


def summary_table(rows: list[dict]) -> str:
    """The summary rows as a markdown table (the ratio is the baseline's time over the figure's)."""
    lines = ["| figure | time (s) | baseline | baseline (s) | ratio | target | met |", "|---|---|---|---|---|---|---|"]
    for r in rows:
        met = {None: "–", True: "yes", False: "**no**"}[r["met"]]
        ratio = "–" if r["ratio"] is None else f"{float(r['ratio']):.3g}x"
        lines.append(f"| {r['figure']} | {_s(r['seconds'])} | {r['baseline']} | {_s(r['baseline_seconds'])} | {ratio} "
                     f"| {r['target'] or '–'} | {met} |")
    return "\n".join(lines)


def _bulk_lines(bulk: dict) -> list[str]:
    lines = [
        "## Bulk density",
        "",
        f"delta, gamma, kappa = {', '.join(bulk['parameters'])}; support {bulk['support']}; {bulk['points']} equispaced "
        f"float points on [{bulk['grid'][0]:.4g}, {bulk['grid'][1]:.4g}] (10% of the width beyond each edge). Errors "
        "against `derive.gaussian.bulk.density` at 30 digits, which is exactly 0 outside the support. Baselines pick the root "
        "with positive imaginary part: outside the support, where the cubic also has a conjugate pair (here at "
        "x < 0) that rule picks a wrong branch, which is why the derived code tracks the Stieltjes branch instead.",
        "",
        "| method | time (s) | per point (µs) | max abs error | max abs error in the support | nonzero outside the support |",
        "|---|---|---|---|---|---|",
    ]
    n = bulk["points"]
    entries = [(f"derive.gaussian.bulk.density, {dg} digits", bulk["derived"][dg]) for dg in BULK_DIGITS]
    entries += [(f"mpmath polyroots per point, {dg} digits", bulk["polyroots"][dg]) for dg in BULK_DIGITS]
    entries += [("BulkLaw.density_float (float64, vectorized)", bulk["float"]), ("numpy.roots per point", bulk["numpy_roots"])]
    for name, e in entries:
        lines.append(f"| {name} | {_s(e['seconds'])} | {1e6 * e['seconds'] / n:.1f} | {e['max_abs_error']:.1e} | "
                     f"{e['max_abs_error_inside']:.1e} | {e['nonzero_outside']} of {e['outside']} |")
    return lines


def _spike_lines(spike: dict) -> list[str]:
    p = spike["parameters"]
    return [
        "## derive spike",
        "",
        f"{', '.join(f'{k} = {v}' for k, v in p.items())}, raw S. Warm: median time per query of 20 queries. Cold: "
        f"a fresh Python process (median of {spike['cold_runs']}): importing derive.gaussian.spikes, then the first query at 30 "
        "digits, which reads the derived functions from the derivation cache (derive/cache.py; on an empty cache "
        "SymPy derives them: the whole-process rows below).",
        "",
        "| digits | warm query (ms) | cold first query (s) | import (s) | cold / warm |",
        "|---|---|---|---|---|",
    ] + [f"| {dg} | {1e3 * spike['warm'][dg]:.2f} | {spike['first_call_s']:.2f} | {spike['import_s']:.2f} | "
         f"{spike['first_call_s'] / spike['warm'][dg]:.0f}x |" for dg in SPIKE_DIGITS]


def gaps(result: dict) -> list[str]:
    """The float64-accurate matrix-free solve farthest from its floor (at the sizes of the floor target,
    else the largest), and where its time goes, from the measurements."""
    mc, bandwidth, read = result["mc"], result["bandwidth"]["bytes_per_s"], result["bandwidth"]["read_bytes_per_s"]
    big = [d for d in mc["ladder"] if d >= bench_mc.FLOOR_FROM_D] or mc["ladder"][-1:]
    worst = max(((name, d) for name in bench_mc.ACCURATE for d in big if (name, d) in mc["rows"]),
                key=lambda key: 1 / bench_mc.floor(mc["rows"][key], bandwidth)["fraction"], default=None)
    lines = ["## The largest gap to the floor", ""]
    if worst is None:
        return lines + ["No matrix-free job ran at these sizes."]
    row = mc["rows"][worst]
    f = bench_mc.floor(row, bandwidth)
    k = row["kernels"]
    lines += [
        f"`{worst[0]}` at d = {worst[1]}: the solve takes {1 / f['fraction']:.1f}x its floor. Per product it spends "
        f"{1e3 * f['per_product_s']:.2f} ms: the pass over the table {1e3 * k['sweep']:.2f} ms "
        f"({f['sweep_gbs']:.1f} GB/s, against {bandwidth / 1e9:.1f} GB/s for the copy, read and write counted, and "
        f"{read / 1e9:.1f} GB/s for a read-only sum: {1e3 * row['table_bytes'] / read:.2f} ms at the speed of the sum), "
        f"the sparse mixing {1e3 * k['mixing']:.2f} ms (its gathers and scatters do not stream), and the rest "
        f"{1e3 * f['other_s']:.2f} ms (the solver's own work, the first and Rayleigh-Ritz passes, rounding the table).",
    ]
    d = bench_mc.TARGET_D
    bounds = [(name, mc["rows"]["dense", d]["solve_s"] / bench_mc.floor(mc["rows"][name, d], bandwidth)["floor_s"])
              for name in bench_mc.ACCURATE if ("dense", d) in mc["rows"] and (name, d) in mc["rows"]]
    if bounds:
        lines += ["", f"Against dense at d = {d}: a solve at its floor, with the products it needs now, would be "
                      + ", ".join(f"{b:.1f}x (`{name}`, {mc['rows'][name, d]['products']} products)" for name, b in bounds)
                      + " faster than dense."]
    return lines


def markdown(result: dict) -> str:
    """The page ``notes/benchmarks.md``."""
    m, rev, mode = result["machine"], result["revision"], result["mode"]
    bw = result["bandwidth"]
    lines = [
        "# Benchmarks",
        "",
        f"Generated by `python -m benchmarks all{'' if mode == 'full' else ' --' + mode}` on {m['date']} at commit {rev['head']}; "
        f"verify/montecarlo/ at {rev['montecarlo']}{' (with uncommitted changes)' if rev['montecarlo_uncommitted'] else ''}."
        + (f" The working tree also had uncommitted changes (other work in progress) in {', '.join(rev['uncommitted'])}."
           if rev["uncommitted"] else ""),
        "",
        f"Machine: {m['cores']} cores, {m['cpu']}, last-level cache {m['cache']}; BLAS: {m['blas']}; thread pools: {m['threadpools']}; Python "
        f"{m['python']}, NumPy {m['numpy']}, SciPy {m['scipy']}, SymPy {m['sympy']}, mpmath {m['mpmath']}. "
        f"1-minute load average {m['load_start']:.2f} at the start and {result['load_end']:.2f} at the end: the machine "
        "is shared with other jobs, so absolute times vary; every ratio below compares two timings of the same run. "
        "Times are CPU time of the timing process (single-threaded code), which excludes the time other jobs hold "
        "the core, though not their use of the memory bus; `verify claims` is also given in wall time.",
        "",
        "## Targets and ratios",
        "",
        "Ratio: the baseline's time over the figure's (how many times faster the figure is); for the floor rows, "
        "floor over solve time (the fraction of the copy bandwidth achieved).",
        "",
        summary_table(result["summary"]),
        "",
        "## Memory bandwidth",
        "",
        "numpy.copyto between two float64 arrays of "
        f"{bw['copies'][0]['mib']} MiB, bytes read + written over the median of the timed copies, measured before "
        "and after the Monte Carlo jobs: " + ", ".join(f"{c['bytes_per_s'] / 1e9:.1f} GB/s" for c in bw["copies"])
        + f"; the floor uses the faster, {bw['bytes_per_s'] / 1e9:.1f} GB/s (one core: the copy is single-threaded). "
        "A read-only stream (a sum of one of the arrays, bytes read over time) reaches "
        + ", ".join(f"{c['read_bytes_per_s'] / 1e9:.1f} GB/s" for c in bw["copies"]) + ". "
        f"The arrays are larger than the last-level cache ({m['cache']}); a table smaller than that cache can stay "
        "in it between products, and then the floor is not a bound (an achieved fraction above 100% is possible).",
        "",
    ]
    lines += _bulk_lines(result["bulk"]) + [""] + _spike_lines(result["spike"]) + [""]
    lines += bench_mc.markdown(result["mc"], bw["bytes_per_s"]) + [""] + gaps(result) + [""]
    lines += bench_axis.markdown(result["axis"]) + [""] + bench_processes.markdown(result["processes"])
    if "ledger" not in result["processes"]:
        lines.append(f"The ledger and the test suite are skipped in --{mode} (they take minutes; the full run measures them).")
    return "\n".join(lines) + "\n"
