r"""One cell of the paper's grid at ``d = 10^4`` against its floor, alone and two at once, and the whole grid
projected from them (part of ``python -m benchmarks all``).

*The cell.* ``examples/sweeps/paper.toml``: ``d = 10^4``, ``V = 2d``, ``N = d/gamma``, ``T = 8``, ``prefix:3``, mean
pooling, centered, top 3, its 40 values of ``mu2``, run by the sweep's own code (:func:`verify.sweeps.run.run_group`
on the cell's jobs) in a worker process with one BLAS thread. The worker runs :data:`CELLS` cells one after the other
(seeds 0, 1, ...), as a sweep's worker does; the first pays for faulting the table's pages in, the later ones reuse
them (:func:`verify.sweeps.run.table_buffer`). Its phases are timed by wrapping the two functions that hold them:
the table's generation (:func:`verify.montecarlo.draw.sample_table`) and the block passes over it
(:func:`verify.montecarlo.kernels.block_sweep`, whose calls are the passes); the rest is the sequences, the Ritz
values of the 40 ``mu2`` and the reorthogonalization. Times are the worker's CPU time.

*The floor.* The table must be generated, ``dV`` normal variates at the generator's speed ``t_rng`` (numpy's
``standard_normal`` into a block that stays in cache, so that no page fault or memory traffic counts), and read once
per pass the block Lanczos makes, ``dV`` entries of the table's type each, at the read bandwidth ``B`` of one core
(the fastest of a sum and a dot product of an array of :data:`STREAM_MIB` MiB): ``floor = dV t_rng + passes dV bytes /
B``. Two cells at once run in two workers started together, against the floor with ``t_rng`` and ``B`` measured two
at once too (each core's share of the memory bus).

*The projection.* The grid is ``3 x 40 x 12 = 1440`` cells (``mu2`` is the axis inside a cell), each measured ``gamma``
standing for the ``gamma`` values nearest it. A machine of ``c`` cores runs ``c`` cells at once, each core reading at
``B_c = min(B_1, B_machine/c)``. A cell there is the measured two-at-once cell plus the time its passes' bytes take
longer to read at ``B_c`` than at the share ``B`` measured: ``passes dV bytes (1/B_c - 1/B)``. That is an upper bound
as long as the pass's arithmetic does not grow: the extra reading is added whole, none of it overlapped (a pass on
this machine overlaps its arithmetic with its reading only in part, notes/benchmarks.md). Its floor is the floor
above at ``B_c``.
"""
from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import time
import tomllib
from pathlib import Path

import numpy as np

from derive.model.schemes import OPTIONS

__all__ = ["ROOT", "CELLS", "STREAM_MIB", "MODES", "GRID_CELLS", "cell_jobs", "rng_seconds", "read_bandwidth",
           "worker", "floor", "projection", "run", "markdown", "main"]

ROOT = Path(__file__).resolve().parents[1]
CELLS = 2
STREAM_MIB = 1024
GRID_CELLS = 3 * 40 * 12
"""Cells of ``examples/sweeps/paper.toml``: 3 weight schemes x 40 gamma x 12 seeds."""
MODES = {"full": {"d": 10_000, "gammas": ["1/20", "1", "2"], "stream_mib": STREAM_MIB},
         "quick": {"d": 10_000, "gammas": ["1/2"], "stream_mib": STREAM_MIB},
         "tiny": {"d": 64, "gammas": ["1/2"], "stream_mib": 8}}


def cell_jobs(d: int, gamma: str, seed: int, dtype: str | None = None) -> tuple:
    """The jobs of one cell of the paper's sweep at ``d`` and ``gamma`` (mean pooling, seed index ``seed``)."""
    from verify.sweeps.spec import Sweep

    data = tomllib.loads((ROOT / "examples" / "sweeps" / "paper.toml").read_text())
    data["model"].update(d=d, gamma=gamma, weights="mean")
    for option in OPTIONS:  # the paper's causal options: the mean scheme takes none
        data["model"].pop(option.name, None)
    del data["grid"]["weights"], data["grid"]["gamma"]
    data["sweep"]["seeds"] = seed + 1
    sweep = Sweep(data)
    return tuple(sweep.job(task) for task in next(cell for cell in sweep.cells() if cell[0].key[-1] == seed))


def rng_seconds(repeats: int = 5) -> float:
    """Seconds per standard normal variate of numpy's default generator, into a block of 2^16 that stays in cache."""
    from benchmarks.mc import median_seconds

    rng, block = np.random.default_rng(0), np.empty(1 << 16)
    return median_seconds(lambda: rng.standard_normal(out=block), repeats, time.process_time, number=50) / block.size


def read_bandwidth(mib: int, repeats: int = 5) -> float:
    """Bytes per second one core reads from memory: the faster of ``numpy.sum`` and a BLAS dot product over an array
    of ``mib`` MiB (larger than the last-level cache)."""
    from benchmarks.mc import median_seconds

    a = np.ones(mib * 2**20 // 8)
    b = a[: len(a) // 2]
    best = min(median_seconds(a.sum, repeats, time.process_time), 2 * median_seconds(lambda: b @ b, repeats, time.process_time))
    return a.nbytes / best


def worker(d: int, gamma: str, cells: int, mib: int) -> dict:
    """Run ``cells`` cells one after the other, timing their phases (module docstring); also the generator's speed
    and the read bandwidth, measured in this process before the cells."""
    import importlib

    from verify.montecarlo import lanczos
    from verify.sweeps.run import run_group
    from verify.threads import limit_blas_threads

    draw_module = importlib.import_module("verify.montecarlo.draw")  # the package exports a function of that name
    out = {"d": d, "gamma": gamma, "t_rng": rng_seconds(), "read_bytes_per_s": read_bandwidth(mib), "cells": []}
    kernels = lanczos.compiled_kernels()
    sample, sweep_pass = draw_module.sample_table, kernels.block_sweep
    spent = {}

    def timed(name, f):
        def wrapper(*args, **kwargs):
            t0 = time.process_time()
            try:
                return f(*args, **kwargs)
            finally:
                spent[name] = spent.get(name, 0.0) + time.process_time() - t0
                spent[name + "_calls"] = spent.get(name + "_calls", 0) + 1
        return wrapper

    draw_module.sample_table, kernels.block_sweep = timed("generate", sample), timed("passes", sweep_pass)
    try:
        with limit_blas_threads(1):
            run_group(cell_jobs(min(d, 64), gamma, 0))  # the kernels loaded, as in a sweep's worker
            for seed in range(cells):
                jobs = cell_jobs(d, gamma, seed)
                spent.clear()
                t0, w0 = time.process_time(), time.perf_counter()
                outcome = run_group(jobs)
                total, wall = time.process_time() - t0, time.perf_counter() - w0
                E = jobs[0]
                out["cells"].append({"cpu_s": total, "wall_s": wall, "generate_s": spent.get("generate", 0.0),
                                     "passes_s": spent.get("passes", 0.0), "passes": spent.get("passes_calls", 0),
                                     "table_bytes": E.d * E.V * 8, "path": outcome[0]["result"]["path"],
                                     "V": E.V, "N": E.N})
    finally:
        draw_module.sample_table, kernels.block_sweep = sample, sweep_pass
    return out


def floor(cell: dict, t_rng: float, bandwidth: float) -> dict:
    """The cell's floor (module docstring) and its parts."""
    generate = cell["table_bytes"] / 8 * t_rng
    passes = cell["passes"] * cell["table_bytes"] / bandwidth
    return {"generate_s": generate, "passes_s": passes, "floor_s": generate + passes, "ratio": cell["cpu_s"] / (generate + passes)}


def _spawn(args: list[str]) -> subprocess.Popen:
    from benchmarks.mc import child_env

    return subprocess.Popen([sys.executable, "-m", "benchmarks.cell", *args], cwd=ROOT, env=child_env(1),
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def _collect(procs) -> list[dict]:
    out = []
    for p in procs:
        stdout, stderr = p.communicate()
        if p.returncode:
            raise RuntimeError(f"benchmarks.cell worker: exit {p.returncode}: {stderr.strip()[-400:]}")
        out.append(json.loads(stdout))
    return out


def projection(result: dict, cores: int, machine_bandwidth: float | None, machines: int = 1) -> dict:
    """The paper's grid on ``machines`` machines of ``cores`` cores (module docstring): each cell as the steady-state
    cells measured two at once, its passes' extra reading time at the bandwidth a core gets when all ``cores`` of its
    machine stream (``min(B_1, machine_bandwidth/cores)``, ``B_1`` the one-core bandwidth measured alone) added whole;
    at the share measured two at once if ``machine_bandwidth`` is ``None``. Also the cell's floor there."""
    times, floors, per_core = [], [], []
    for g in result["gammas"]:
        pair = result["pairs"][g]
        cells = [(w, c) for w in pair for c in w["cells"][1:]] or [(w, c) for w in pair for c in w["cells"]]
        share = statistics.median(w["read_bytes_per_s"] for w in pair)
        core = share if machine_bandwidth is None else min(result["alone"][g]["read_bytes_per_s"], machine_bandwidth / cores)
        per_core.append(core)
        times.append(statistics.median(c["cpu_s"] + c["passes"] * c["table_bytes"] * max(0.0, 1 / core - 1 / w["read_bytes_per_s"])
                                       for w, c in cells))
        floors.append(statistics.median(floor(c, w["t_rng"], core)["floor_s"] for w, c in cells))
    per_cell = statistics.mean(times)
    return {"cores": cores * machines, "bandwidth_per_core": statistics.mean(per_core), "cell_s": per_cell,
            "floor_s": statistics.mean(floors), "ratio": max(t / f for t, f in zip(times, floors)),
            "hours": GRID_CELLS * per_cell / (cores * machines) / 3600, "core_hours": GRID_CELLS * per_cell / 3600}


def run(mode: str, log=sys.stderr) -> dict:
    settings = MODES[mode]
    d, mib = settings["d"], settings["stream_mib"]
    out = {"d": d, "gammas": settings["gammas"], "cells_per_worker": CELLS, "load_start": os.getloadavg()[0],
           "alone": {}, "pairs": {}}
    for g in settings["gammas"]:
        print(f"bench: a paper cell at d = {d}, gamma = {g}, alone and two at once ...", file=log, flush=True)
        args = ["--worker", str(d), g, str(CELLS), str(mib)]
        out["alone"][g] = _collect([_spawn(args)])[0]
        out["pairs"][g] = _collect([_spawn(args), _spawn(args)])
    out["load_end"] = os.getloadavg()[0]
    return out


def _steady(worker_result: dict) -> dict:
    """The worker's last cell (its table's pages already faulted in)."""
    return worker_result["cells"][-1]


def markdown(result: dict) -> list[str]:
    r = result
    lines = ["## A cell of the paper's grid against its floor", "",
             f"One cell of `examples/sweeps/paper.toml` at d = {r['d']} (V = 2d, N = d/gamma, T = 8, prefix:3, mean "
             "pooling, centered, top 3, its 40 values of mu2), run by the sweep's own `run_group` in a worker process "
             f"with one BLAS thread; each worker runs {r['cells_per_worker']} cells in a row, as a sweep's worker does "
             "(the first faults the table's pages in, the next reuses them). CPU time of the worker; generation and "
             "passes timed by wrapping `sample_table` and `block_sweep`. Floor: the table's dV normal variates at the "
             "generator's speed in cache, plus the passes the block Lanczos made over it at the read bandwidth of one "
             "core (both measured in the same worker; two at once, each worker measures its own share). 1-minute load "
             f"average {r['load_start']:.2f} at the start and {r['load_end']:.2f} at the end (`benchmarks/cell.py`).", "",
             "| gamma | run | cell | CPU (s) | wall (s) | generation (s) | passes | passes (s) | GB/s in passes | rest (s) "
             "| floor (s): generation + passes | cell / floor |",
             "|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for g in r["gammas"]:
        runs = [("alone", r["alone"][g])] + [(f"two at once, worker {i + 1}", w) for i, w in enumerate(r["pairs"][g])]
        for name, w in runs:
            for i, c in enumerate(w["cells"]):
                f = floor(c, w["t_rng"], w["read_bytes_per_s"])
                rest = c["cpu_s"] - c["generate_s"] - c["passes_s"]
                gbs = c["passes"] * c["table_bytes"] / c["passes_s"] / 1e9 if c["passes_s"] else float("nan")
                lines.append(f"| {g} | {name} | {i + 1} | {c['cpu_s']:.2f} | {c['wall_s']:.2f} | {c['generate_s']:.2f} | "
                             f"{c['passes']} | {c['passes_s']:.2f} | {gbs:.1f} | {rest:.2f} | {f['generate_s']:.2f} + "
                             f"{f['passes_s']:.2f} = {f['floor_s']:.2f} | {f['ratio']:.2f} |")
    lines += ["", "Measured in the workers: " + "; ".join(
        f"gamma {g}: generator {1e9 * r['alone'][g]['t_rng']:.1f} ns a variate and read bandwidth "
        f"{r['alone'][g]['read_bytes_per_s'] / 1e9:.1f} GB/s alone, "
        + ", ".join(f"{1e9 * w['t_rng']:.1f} ns and {w['read_bytes_per_s'] / 1e9:.1f} GB/s" for w in r["pairs"][g])
        + " two at once" for g in r["gammas"]) + "."]
    lines += ["", "**The grid's projection** (1440 cells of 40 tasks: 3 weight schemes x 40 gamma x 12 seeds; each "
                  "cell as the steady-state cells measured two at once here, plus the extra time its passes take to read "
                  "the table at the bandwidth a core gets when every core streams, added whole (an upper bound); its "
                  "floor at that bandwidth; cell / floor is the largest over the gamma measured):", "",
              "| machine | cores | bandwidth per core (GB/s) | cell (s) | grid, wall (h) | core-hours | floor (s) | cell / floor |",
              "|---|---|---|---|---|---|---|---|"]
    for name, cores, machine, machines in (("this machine", 2, None, 1), ("one 16-core machine, 100 GB/s", 16, 100e9, 1),
                                           ("one 16-core machine, 50 GB/s", 16, 50e9, 1),
                                           ("Dask: 8 machines of 16 cores, 100 GB/s each", 16, 100e9, 8)):
        p = projection(r, cores, machine, machines)
        lines.append(f"| {name} | {p['cores']} | {p['bandwidth_per_core'] / 1e9:.1f} | {p['cell_s']:.1f} | {p['hours']:.2f} | "
                     f"{p['core_hours']:.1f} | {p['floor_s']:.1f} | {p['ratio']:.2f} |")
    return lines


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["--worker"]:
        d, gamma, cells, mib = argv[1:5]
        print(json.dumps(worker(int(d), gamma, int(cells), int(mib))))
        return 0
    print("usage: python -m benchmarks.cell --worker D GAMMA CELLS MIB", file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main())
