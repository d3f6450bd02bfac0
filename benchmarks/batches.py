r"""A sweep run in batches of ``--max-tasks``, as a user with a cluster's time limit runs it: whole cells now
against split cells before (part of ``python -m benchmarks all``).

The sweep is a slice of the paper's grid (``examples/sweeps/paper.toml``: its settings and its 40 values of
``mu2``), at a smaller ``d``, with mean pooling and :data:`GAMMAS` x :data:`SEEDS` cells, so that every value of
``mu2`` holds one task of each of the 8 cells. It runs to the end in batches of :data:`BATCH` tasks, each batch a
process ``verify sweep FILE --workers 1 --max-tasks 40``, by the code of :data:`BEFORE` (a batch took the first 40
missing tasks in task order: 5 values of ``mu2`` in each of the 8 cells, and solved each cell on its whole axis
for its 5 tasks) and by this checkout (a batch is the first whole cell). Both are timed in the same run (CPU time of
each batch's process) after a warm-up batch of each into a scratch file (numba's kernels compiled, files cached).
Each record says how many tasks its cell's solve wrote (``timing.group_tasks``) and its share of that solve's
seconds, so the records count the solves and sum their seconds. The two runs' records are compared number by number
(:func:`largest_difference`): the code of :data:`BEFORE` summed the block passes over the table in another order
(the pass serving both columns of the ``mu2`` axis's block came later), so they agree to rounding, not bit for bit;
the records of one code are identical however its batches fall (``tests/test_sweep.py``).
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import tomllib
from pathlib import Path

from derive.model.schemes import OPTIONS

__all__ = ["BEFORE", "BATCH", "GAMMAS", "SEEDS", "MODES", "sweep_data", "solves", "largest_difference", "run_batches", "run",
           "markdown"]

ROOT = Path(__file__).resolve().parents[1]
BEFORE = "68eeab0"
"""The commit issue 27 started from: ``--max-tasks`` cut the task list wherever it fell."""
BATCH = 40
GAMMAS = ["1/2", "1"]
SEEDS = 4
MODES = {"full": (2000, GAMMAS, SEEDS), "quick": (2000, GAMMAS, SEEDS), "tiny": (40, GAMMAS[:1], 1)}
"""``d``, the values of ``gamma`` and the seeds of the sweep (tiny: one cell, one batch, to check the harness)."""


def sweep_data(d: int, gammas=GAMMAS, seeds: int = SEEDS) -> dict:
    """The paper's sweep file with ``d``, mean pooling, ``gammas`` and ``seeds``."""
    data = tomllib.loads((ROOT / "examples" / "sweeps" / "paper.toml").read_text())
    data["model"]["d"] = d
    data["model"]["weights"] = "mean"
    for option in OPTIONS:  # the paper's causal options: the mean scheme takes none
        data["model"].pop(option.name, None)
    del data["grid"]["weights"]
    data["grid"]["gamma"] = list(gammas)
    data["sweep"]["seeds"] = seeds
    return data


def solves(records: dict) -> dict:
    """The cell solves a results file's records come from (each solve wrote ``group_tasks`` records) and the
    CPU seconds they took (the records' shares summed; wall seconds in the records of code that kept no CPU time)."""
    recs = list(records.values())
    return {"solves": round(sum(1 / r["timing"]["group_tasks"] for r in recs)),
            "solve_s": sum(r["timing"].get("cpu_seconds", r["timing"]["seconds"]) for r in recs)}


def largest_difference(a: dict, b: dict) -> float:
    """The largest relative difference between the numbers of the result fields of two runs' records (``key ->
    record``, the same keys): 0 when they are identical.

    >>> largest_difference({1: {"result": {"x": [1.0, 2.0]}}}, {1: {"result": {"x": [1.0, 2.0 * (1 + 2**-52)]}}})
    2.220446049250313e-16
    """
    import numpy as np

    def numbers(obj):
        if isinstance(obj, dict):
            return [x for k in sorted(obj) for x in numbers(obj[k])]
        if isinstance(obj, (list, tuple)):
            return [x for v in obj for x in numbers(v)]
        return [float(obj)] if isinstance(obj, (int, float)) and not isinstance(obj, bool) else []

    x = np.array([v for key in sorted(a) for v in numbers(a[key]["result"])])
    y = np.array([v for key in sorted(a) for v in numbers(b[key]["result"])])
    return float(np.max(np.abs(x - y) / np.maximum(np.abs(x), np.finfo(float).tiny), initial=0.0))


def run_batches(sweep_file: Path, results: Path, env: dict, cwd: Path, limit: int | None = None) -> dict:
    """The sweep run to the end (or for ``limit`` batches) in batches of :data:`BATCH` by the code ``env`` puts
    first on the path: the batches' CPU and wall seconds (each a process of its own)."""
    from benchmarks.processes import timed

    argv = [sys.executable, "-m", "verify.cli", "sweep", str(sweep_file), "--results", str(results), "--workers", "1",
            "--max-tasks", str(BATCH), "--json"]
    batches = []
    while limit is None or len(batches) < limit:
        batches.append(timed(argv, env, cwd))
        if json.loads(batches[-1]["stdout"])["remaining"] == 0:
            break
    return {"batches": len(batches), "cpu_s": sum(b["cpu_s"] for b in batches), "wall_s": sum(b["wall_s"] for b in batches)}


def run(mode: str, log=sys.stderr) -> dict:
    from benchmarks.processes import baseline_tree, code_env
    from verify.sweeps.results import read_results
    from verify.sweeps.spec import Sweep

    d, gammas, seeds = MODES[mode]
    print(f"bench: a sweep in batches of {BATCH} tasks, whole cells against split cells (d = {d}) ...", file=log,
          flush=True)
    out = {"d": d, "batch": BATCH, "before_commit": BEFORE, "load_start": os.getloadavg()[0]}
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        sweep_file = tmp / "batches.json"
        data = sweep_data(d, gammas, seeds)
        sweep_file.write_text(json.dumps(data))
        sweep = Sweep(data)
        out.update(tasks=len(sweep.tasks()), cells=sum(1 for _ in sweep.cells()), mu2=len(sweep.mu2_axis()),
                   gammas=list(gammas), seeds=seeds)
        base = baseline_tree(tmp, BEFORE) if mode != "tiny" else None
        codes = {"now": ROOT, **({"before": base} if base is not None else {})}
        kept = {}
        for name, code in codes.items():
            env = code_env(code, 1, tmp / f"cache-{name}")
            if mode != "tiny":
                run_batches(sweep_file, tmp / f"warm-{name}.jsonl", env, tmp, limit=1)
            results = tmp / f"{name}.jsonl"
            out[name] = run_batches(sweep_file, results, env, tmp)
            records = read_results(results).records
            out[name].update(solves(records))
            kept[name] = records
        out["difference"] = largest_difference(kept["now"], kept["before"]) if "before" in kept else None
    out["load_end"] = os.getloadavg()[0]
    return out


def markdown(result: dict) -> list[str]:
    r = result
    lines = ["## A sweep in batches: whole cells against split cells", "",
             f"A slice of the paper's grid (`examples/sweeps/paper.toml`'s settings and its {r['mu2']} values of mu2) at "
             f"d = {r['d']} (V = 2d, N = d/gamma), mean pooling, gamma {', '.join(r['gammas'])}, {r['seeds']} seeds: {r['cells']} cells, "
             f"{r['tasks']} tasks, each value of mu2 one task of every cell. Run to the end in batches of `--max-tasks "
             f"{r['batch']}`, each batch a process on one worker (`--workers 1`, one BLAS thread); `before` is the code "
             f"of {r['before_commit']} (a batch cut the task list after {r['batch']} tasks: {r['batch'] // r['cells']} values of "
             "mu2 in each cell, each cell solved on its whole axis for them), `now` this checkout (a batch is the first "
             "whole cell). Solves and their seconds are counted from the records (`timing`: CPU seconds now, wall seconds "
             f"before, whose records kept no CPU time); CPU and wall are the batches' processes, imports and theory included. 1-minute load average {r['load_start']:.2f} at the "
             f"start and {r['load_end']:.2f} at the end (`benchmarks/batches.py`).", "",
             "| code | batches | cell solves | solves per cell | solve CPU (s), from the records | batches' CPU (s) | batches' wall (s) |",
             "|---|---|---|---|---|---|---|"]
    for name in ("before", "now"):
        if name in r:
            x = r[name]
            lines.append(f"| {name} | {x['batches']} | {x['solves']} | {x['solves'] / r['cells']:.1f} | {x['solve_s']:.2f} | "
                         f"{x['cpu_s']:.2f} | {x['wall_s']:.2f} |")
    if "before" in r:
        b, n = r["before"], r["now"]
        agree = ("identical" if r["difference"] == 0 else f"largest relative difference {r['difference']:.1e} (rounding: "
                 "the code before summed the block passes in another order)")
        lines += ["", f"Before over now: {b['solves'] / n['solves']:.1f}x the cell solves, {b['cpu_s'] / n['cpu_s']:.1f}x the "
                      "batches' CPU time (each batch's imports and theory included, the same for both). Records of the "
                      f"two runs (result fields): {agree}."]
    return lines
