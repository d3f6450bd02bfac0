r"""Throughput of the sweep executors and the projected cost of the paper-scale sweep
(``python -m benchmarks sweeps [--quick | --tiny] [--out PATH]``).

1. **Throughput**: one small sweep (:data:`THROUGHPUT`, ``d`` set by the mode) run three times, in
   this process, on 2 local worker processes and on a Dask ``LocalCluster`` of 2 single-threaded
   worker processes, each into a fresh results file; reported: start-up (executor start and first
   result), wall time, tasks per second overall and after the first result, and whether the three
   results files hold byte-identical records.
2. **Per-task cost against d**: cells of the paper-scale sweep (``examples/sweeps/paper.toml``, its
   model, solver path and outputs) at a ladder of smaller ``d``, at three of its ``gamma`` (the
   smallest, a middle one, the largest: ``N = d/gamma`` drives the cost), each over the sweep's whole
   mu2 axis, run one at a time in one single-threaded worker process: a task's time is its share of
   its cell's (``timing.seconds``). In the same worker, the same tasks the way sweeps ran them before
   the mu2 axis (one draw and one Lanczos solve each, :func:`_task_before`) at two of the mu2 values.
   Per ``gamma``, :func:`verify.stats.finite_size_fit` fits ``cost = C d^p`` (its rate is ``-p``) on
   the top :data:`FIT_RUNGS` rungs, for both.
3. **Projection**: the cost of every paper task at its ``d`` from those fits (and, as a second
   reading, continued from the top rung at the last interval's slope), interpolated in
   ``log gamma`` between the measured ``gamma`` (linearly in log cost), summed over the grid, divided
   by 1, 8 and 64 workers (ideal scaling: the cells are independent and far more numerous than the
   workers; the measured 2-worker efficiency is reported next to it); now and before, and their ratio.

The markdown goes between the markers of ``notes/sweeps.md`` (``--out`` elsewhere; ``--tiny`` writes
only where ``--out`` says).
"""
from __future__ import annotations

import io
import math
import os
import statistics
import tempfile
import time
from pathlib import Path

import numpy as np
import sympy as sp

from derive.errors import ParameterError
from derive.files import write_file
from derive.model.schemes import OPTIONS
from derive.numbers import format_real

__all__ = ["ROOT", "PAPER", "NOTES", "BEGIN", "END", "WORKER_COUNTS", "FIT_RUNGS", "THROUGHPUT", "MODES",
           "throughput", "ladder", "projection", "steep_projection", "markdown", "bench"]

ROOT = Path(__file__).resolve().parents[1]
PAPER = ROOT / "examples" / "sweeps" / "paper.toml"
NOTES = ROOT / "notes" / "sweeps.md"
BEGIN, END = "<!-- sweep-bench:begin -->", "<!-- sweep-bench:end -->"
WORKER_COUNTS = (1, 8, 64)
FIT_RUNGS = 3
"""The growth exponent is fitted on the top rungs of the ladder only: at small ``d`` a task's fixed
costs (validation, sampling set-up, solver start) flatten the curve, and the projection is about
the large-``d`` regime."""

THROUGHPUT = {
    "sweep": {"root_seed": 1, "seeds": 4, "outputs": ["top_eigenvalues", "overlaps", "bulk_edge"], "k": 3},
    "model": {"delta": "1/2", "T": 8, "signs": "prefix:3", "centered": True},
    "grid": {"weights": ["mean", "optimal"], "mu2": ["1/2", 1, 2, 4], "gamma": ["1/4", "1/2", 1, 2]},
}
"""The small throughput grid: 2 schemes x 4 mu2 x 4 gamma x 4 seeds = 128 tasks (``d`` from the mode)."""

MODES = {
    # d of the throughput grid, seeds there, the ladder of d, tasks per (d, gamma, mu2)
    "full": (200, 4, [250, 500, 1000, 2000, 4000], 3),
    "quick": (100, 2, [125, 250, 500], 2),
    "tiny": (24, 1, [16, 32], 1),
}


def _timed_run(sweep, executor, folder: Path, name: str) -> tuple[dict, dict]:
    from verify.sweeps.results import read_results, result_lines
    from verify.sweeps.run import run_sweep

    path = folder / f"{name.replace(' ', '-')}.jsonl"
    start = time.perf_counter()
    with executor as ex:
        entered = time.perf_counter() - start
        doc = run_sweep(sweep, path, ex, log=io.StringIO())
    wall = time.perf_counter() - start
    steady = doc["seconds"] - doc["first_result_seconds"]
    row = {"executor": name, "workers": ex.workers, "tasks": doc["computed"], "startup_s": entered + doc["first_result_seconds"],
           "wall_s": wall, "tasks_per_s": doc["computed"] / wall,
           "steady_tasks_per_s": (doc["computed"] - 1) / steady if steady > 0 else None}
    return row, result_lines(read_results(path).records)


def throughput(mode: str, folder: Path) -> dict:
    """The three runs of the throughput grid (part 1)."""
    from verify.sweeps import executors
    from verify.sweeps.spec import Sweep

    d, seeds, _, _ = MODES[mode]
    data = {**THROUGHPUT, "sweep": {**THROUGHPUT["sweep"], "seeds": seeds}, "model": {**THROUGHPUT["model"], "d": d}}
    sweep = Sweep(data)
    runs = [("in-process", executors.InProcess()), ("local processes", executors.LocalProcesses(2)),
            ("Dask LocalCluster", executors.Dask("local-dask", 2))]
    rows, lines = [], []
    for name, ex in runs:
        row, records = _timed_run(sweep, ex, folder, name)
        rows.append(row)
        lines.append(records)
    return {"d": d, "sweep": sweep.spec, "rows": rows, "identical": all(x == lines[0] for x in lines[1:])}


def _pick(values: list, fractions) -> list:
    return sorted({values[round(f * (len(values) - 1))] for f in fractions}, key=lambda v: sp.Rational(v))


def _task_before(item: tuple) -> float:
    """CPU seconds of one paper task (``item = (key, job)``) run the way sweeps ran it before the mu2 axis: its
    own draw and its own float64 Lanczos solve (:func:`verify.montecarlo.trials.run_trial`, path ``implicit``)."""
    from derive import Model
    from verify.montecarlo.trials import run_trial

    d, V, N, T, signs, weights, mu2, centered, k, seed = item[1]
    t0 = time.process_time()
    model = Model(d=d, V=V, N=N, T=T, signs=signs, mu2=repr(mu2), centered=centered)
    run_trial(model, weights=list(weights), k=k, path="implicit", seed=seed)
    return time.process_time() - t0


def _fits(cost: dict, gammas, ds, top) -> dict:
    from verify.stats import finite_size_fit

    fits = {}
    for g in gammas:
        med = [statistics.median(cost[g, d]) for d in ds]
        fit = finite_size_fit(top, med[-len(top):])
        fits[g] = {"median_s": med, "exponent": -fit.rate, "exponent_se": fit.rate_se, "prefactor": fit.prefactor,
                   "last_slope": math.log(med[-1] / med[-2]) / math.log(ds[-1] / ds[-2])}
    return fits


def ladder(mode: str, folder: Path) -> dict:
    """Per-task cost of paper tasks over a ladder of ``d`` and its fitted growth (part 2), now (each cell
    solved once on the whole mu2 axis by :func:`verify.sweeps.run.run_sweep`: a task's cost is its share of
    its cell's) and before (:func:`_task_before`, at two of the mu2 values), in one worker process."""
    from verify.sweeps import executors
    from verify.sweeps.spec import Sweep, dimensions, load_sweep_data, normalize, point_pooling
    from verify.sweeps.results import read_results
    from verify.sweeps.run import run_sweep

    _, _, ds, repeats = MODES[mode]
    paper = normalize(load_sweep_data(PAPER))
    grid = dict(paper["grid"])
    gammas, picks = _pick(grid["gamma"], (0, 0.5, 1)), _pick(grid["mu2"], (0.25, 0.75))
    # the first scheme of the grid is mean pooling, which takes none of the paper's causal options
    model = {n: v for n, v in paper["model"].items() if n not in {o.name for o in OPTIONS}}
    weights = [float(x) for x in point_pooling({**model, "weights": grid["weights"][0]}).weights]
    now, before = {}, {}
    with executors.LocalProcesses(1) as ex:
        # the first run is a warm-up: a fresh worker's first tasks pay for imports and first calls
        for run, d in enumerate([ds[0], *ds]):
            data = {"sweep": {**paper["sweep"], "seeds": repeats}, "model": {**model, "d": d},
                    "grid": {"weights": grid["weights"][:1], "gamma": gammas, "mu2": grid["mu2"]}}
            path = folder / f"ladder-{run}-{d}.jsonl"
            run_sweep(Sweep(data), path, ex, log=io.StringIO())
            jobs = []
            for g in gammas:
                dims = dimensions({**model, "d": d, "gamma": g})
                jobs += [((g, d), (d, dims["V"], dims["N"], model["T"], model["signs"], weights,
                                   float(sp.Rational(m)), model["centered"], paper["sweep"]["k"], seed))
                         for m in picks for seed in range(repeats)]
            for (key, _), seconds in ex.map_unordered(_task_before, jobs):
                if run:
                    before.setdefault(key, []).append(seconds)
            for rec in read_results(path).records.values():
                if run:
                    now.setdefault((rec["point"]["gamma"], d), []).append(rec["timing"]["seconds"])
    top = ds[-FIT_RUNGS:]
    return {"d": ds, "fitted_d": top, "gammas": gammas, "mu2": len(grid["mu2"]), "mu2_before": picks,
            "weights": grid["weights"][:1], "repeats": repeats, "path": paper["sweep"]["path"],
            "fits": _fits(now, gammas, ds, top), "fits_before": _fits(before, gammas, ds, top)}


def projection(cost: dict, at_paper_d=None) -> dict:
    """Projected wall time of the paper sweep (part 3) from per-task costs at its ``d``, one per measured
    ``gamma``: ``at_paper_d(fit, d)``, by default the fit :math:`C d^p`."""
    from verify.sweeps.spec import dimensions, load_sweep_data, normalize

    at_paper_d = at_paper_d or (lambda f, d: f["prefactor"] * d ** f["exponent"])
    paper = normalize(load_sweep_data(PAPER))
    grid = dict(paper["grid"])
    d = paper["model"]["d"]
    logg = np.log([float(sp.Rational(g)) for g in cost["gammas"]])
    at_d = np.log([at_paper_d(f, d) for f in cost["fits"].values()])
    per_gamma = np.exp(np.interp(np.log([float(sp.Rational(g)) for g in grid["gamma"]]), logg, at_d))
    per_column = len(grid["mu2"]) * len(grid["weights"]) * paper["sweep"]["seeds"]
    total = float(per_column * per_gamma.sum())
    tasks = per_column * len(grid["gamma"])
    V = dimensions({**paper["model"], "gamma": grid["gamma"][0]})["V"]
    return {"d": d, "V": V, "tasks": tasks, "mean_task_s": total / tasks, "min_task_s": float(per_gamma.min()),
            "max_task_s": float(per_gamma.max()), "total_s": total,
            "wall_s": {w: total / w for w in WORKER_COUNTS}, "table_gb": 8 * d * V / 1e9}


def steep_projection(cost: dict) -> dict:
    """The projection with each ``gamma``'s cost continued from the top rung at the slope of the last
    interval of the ladder (steeper than the fit when the cost is convex in log-log)."""
    top = cost["d"][-1]
    return projection(cost, lambda f, d: f["median_s"][-1] * (d / top) ** f["last_slope"])


def _h(seconds: float) -> str:
    return f"{seconds / 3600:.1f} h" if seconds >= 3600 else f"{seconds / 60:.1f} min" if seconds >= 60 else f"{seconds:.1f} s"


def markdown(result: dict) -> str:
    """The generated section of ``notes/sweeps.md``."""
    tp, lad, proj, info = result["throughput"], result["ladder"], result["projection"], result["machine"]
    rows = {r["executor"]: r for r in tp["rows"]}
    serial = rows["in-process"]["steady_tasks_per_s"]
    lines = [
        BEGIN,
        f"Generated by `python -m benchmarks sweeps{'' if result['mode'] == 'full' else ' --' + result['mode']}` on "
        f"{info['date']}; {info['cores']} cores ({info['cpu']}, last-level cache {info['cache']}), Python {info['python']}, NumPy {info['numpy']}; "
        f"1-minute load average {info['load_start']:.2f} at the start and {result['load_end']:.2f} at the end "
        "(other jobs share this machine).",
        "",
        f"**Throughput** on the small grid (d = {tp['d']}, V = 2d, N = d/gamma, T = 8, prefix:3, centered; "
        f"weights mean, optimal x mu2 1/2, 1, 2, 4 x gamma 1/4, 1/2, 1, 2 x {tp['sweep']['sweep']['seeds']} seeds):",
        "",
        "| executor | workers | tasks | start-up (s) | wall (s) | tasks/s | tasks/s after the first result |",
        "|---|---|---|---|---|---|---|",
    ]
    for r in tp["rows"]:
        steady = f"{r['steady_tasks_per_s']:.1f}" if r["steady_tasks_per_s"] else "-"
        lines.append(f"| {r['executor']} | {r['workers']} | {r['tasks']} | {r['startup_s']:.2f} | {r['wall_s']:.2f} | "
                     f"{r['tasks_per_s']:.1f} | {steady} |")
    eff = {name: rows[name]["steady_tasks_per_s"] / (2 * serial) if serial and rows[name]["steady_tasks_per_s"] else None
           for name in ("local processes", "Dask LocalCluster")}
    lines += [
        "",
        f"Records of the three runs byte-identical (result fields): {'yes' if tp['identical'] else 'NO'}. "
        "2-worker efficiency (steady rate / twice the in-process rate): "
        + ", ".join(f"{n} {e:.0%}" if e else f"{n} -" for n, e in eff.items()) + ".",
        "",
        f"**Per-task cost** of paper-scale tasks (`examples/sweeps/paper.toml`: weights {', '.join(lad['weights'])} "
        f"(the scheme changes no size), {lad['repeats']} seed(s) per cell; median CPU seconds per task in one "
        "single-threaded worker process). *Now*: each cell solved once on its whole axis of "
        f"{lad['mu2']} mu2 values (`solve_axis`), a task's cost its share of its cell's. *Before*: each task its own "
        f"draw and float64 Lanczos solve (path `{lad['path']}`, as sweeps ran before the mu2 axis), at mu2 "
        f"{', '.join(lad['mu2_before'])}. Both in the same worker, in this run:",
        "",
        "| gamma | tasks | " + " | ".join(f"d = {d}" for d in lad["d"]) +
        f" | exponent p (cost ∝ d^p, fitted on d = {', '.join(map(str, lad['fitted_d']))}) "
        f"| slope from d = {lad['d'][-2]} to {lad['d'][-1]} |",
        "|---|---|" + "---|" * len(lad["d"]) + "---|---|",
    ]
    for label, fits in (("before", lad["fits_before"]), ("now", lad["fits"])):
        for g, f in fits.items():
            se = "" if not np.isfinite(f["exponent_se"]) else f" ± {f['exponent_se']:.2f}"
            lines.append(f"| {g} | {label} | " + " | ".join(f"{t:.4f}" for t in f["median_s"]) +
                         f" | {f['exponent']:.2f}{se} | {f['last_slope']:.2f} |")
    steep, before, steep_before = result["steep_projection"], result["projection_before"], result["steep_projection_before"]
    lines += [
        "",
        f"**Projection** for the paper-scale sweep: {proj['tasks']} tasks at d = {proj['d']}, V = {proj['V']} "
        f"(a float64 table of {proj['table_gb']:.1f} GB per cell). From the fits, a task costs now "
        f"{_h(proj['min_task_s'])} to {_h(proj['max_task_s'])} (mean {_h(proj['mean_task_s'])}), "
        f"{_h(proj['total_s'])} of one core in all, against {_h(before['total_s'])} before: "
        f"**{before['total_s'] / proj['total_s']:.0f}x fewer core-hours**. Continued instead from d = {lad['d'][-1]} "
        f"at the last interval's slope: {_h(steep['total_s'])} now, {_h(steep_before['total_s'])} before "
        f"({steep_before['total_s'] / steep['total_s']:.0f}x):",
        "",
        "| workers | now (fit) | now (last slope) | before (fit) | before (last slope) |",
        "|---|---|---|---|---|",
    ]
    lines += [f"| {w} | {_h(s)} | {_h(steep['wall_s'][w])} | {_h(before['wall_s'][w])} | {_h(steep_before['wall_s'][w])} |"
              for w, s in proj["wall_s"].items()]
    lines += [
        "",
        f"The projection extrapolates each fit from d <= {lad['d'][-1]} to d = {proj['d']}; a table larger than "
        "the last-level cache runs at memory bandwidth, which the ladder's top sizes already feel but the fit "
        "cannot promise beyond them. Ideal scaling assumes one task per core with memory for its table "
        f"({proj['table_gb']:.1f} GB plus the solver's vectors) on every worker; a cell's tasks share one draw, "
        "so a worker runs one cell at a time.",
        END,
    ]
    return "\n".join(lines)


def bench(mode: str, out=None) -> dict:
    """Run the three parts, write the markdown section (into ``out``, or notes/sweeps.md in full and
    quick mode), and return the numbers with the markdown."""
    from benchmarks.core import machine

    if mode not in MODES:
        raise ParameterError("mode", f"must be one of {', '.join(MODES)}, got {mode!r}")
    if not PAPER.exists():
        raise ParameterError("bench", f"needs the paper-scale sweep file {PAPER} (a checkout of the project)")
    info = machine()
    with tempfile.TemporaryDirectory() as tmp:
        tp = throughput(mode, Path(tmp))
        lad = ladder(mode, Path(tmp))
    before = {**lad, "fits": lad["fits_before"]}
    result = {"mode": mode, "machine": info, "throughput": tp, "ladder": lad, "projection": projection(lad),
              "steep_projection": steep_projection(lad), "projection_before": projection(before),
              "steep_projection_before": steep_projection(before), "load_end": os.getloadavg()[0]}
    text = markdown(result)
    target = Path(out) if out is not None else (None if mode == "tiny" else NOTES)
    if target is not None:
        old = target.read_text() if target.exists() else ""
        if BEGIN in old and END in old:
            new = old[:old.index(BEGIN)] + text + old[old.index(END) + len(END):]
        else:
            new = old + ("\n" if old else "") + text + "\n"
        write_file(target, new, "out")
    return _strings({"mode": mode, "throughput": tp["rows"], "identical": tp["identical"], "ladder": lad,
                     "projection": result["projection"], "steep_projection": result["steep_projection"],
                     "projection_before": result["projection_before"], "written": str(target) if target else None,
                     "markdown": text})


def _strings(obj):
    """``obj`` with every float as a 6-digit decimal string (the command line's convention for reals)."""
    if isinstance(obj, float):
        return format_real(obj, 6) if np.isfinite(obj) else None
    if isinstance(obj, dict):
        return {str(k): _strings(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [_strings(v) for v in obj]
    return obj
