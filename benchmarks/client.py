r"""The sweep's own overhead at the paper's scale: the client that validates the grid, hands cells to the workers and
writes their records, for the 1440 cells and 57 600 tasks of ``examples/sweeps/paper.toml`` (part of
``python -m benchmarks cost``).

The workers' solves are replaced by :func:`stub_group`, which returns records of the real shape (the top 3
eigenvalues, their overlaps, the bulk edge, the code version and timing) at once, so that what is timed is the rest:
validating the grid (:class:`verify.sweeps.spec.Sweep`, the theory of its 4 800 points), building the jobs
(:meth:`verify.sweeps.spec.Sweep.job`, cell by cell), shipping them and their outcomes, and writing and syncing the records
(:class:`verify.sweeps.results.ResultsWriter`). Each run is a process of its own, by the code of :data:`BEFORE`
(before this part was measured) and by this checkout, on two executors: in the client's own process (``--workers 1``:
the client's cost alone) and on a Dask ``LocalCluster`` of 2 single-threaded workers (``--scheduler local-dask``);
then the finished sweep is run again, which finds every record present and does nothing (what a resumed sweep reads
before its first new cell).

*Reading it.* Against a cell's solve, the client's work per cell is what bounds the cluster it can feed: with its
CPU seconds per cell ``c`` and a cell's solve ``s`` seconds, one client keeps ``s/c`` worker threads busy. The start-up
(validation, then the jobs of the first cells) and the resume's scan come once per run.
"""
from __future__ import annotations

import json
import os
import re
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

__all__ = ["ROOT", "BEFORE", "EXECUTORS", "MODES", "stub_group", "child", "run", "cell_seconds", "markdown", "main"]

ROOT = Path(__file__).resolve().parents[1]
BEFORE = "bcedf05"
"""The commit this part was first measured at: a job built per task, one ``fsync`` per record."""
EXECUTORS = {"in-process": (None, 1), "Dask LocalCluster, 2 workers": ("local-dask", 2)}
"""``(scheduler, workers)`` of each executor, as :func:`verify.sweeps.executors.executor` takes them."""
MODES = {"full": "paper", "quick": "paper", "tiny": "tiny"}
"""The sweep of each mode: the paper's grid, or its grid at two ``gamma`` and two seeds (to check the harness)."""


def stub_group(jobs: tuple) -> list[dict]:
    """What :func:`verify.sweeps.run.run_group` returns for a cell, without solving it: records of the same shape."""
    from verify.sweeps.results import code_version

    worker = f"{socket.gethostname()}:{os.getpid()}"
    out = []
    for job in jobs:
        # a record a run could write (the results file checks it): decreasing eigenvalues, overlaps summing below 1, the
        # bulk edge the eigenvalue below the predicted outliers
        tops = [1.0 - i / 1000 for i in range(job.k)]
        result = {"path": "mu2-axis", "top_eigenvalues": tops, "overlaps": [1 / (i + 2) ** 2 for i in range(job.k)],
                  "bulk_edge": tops[job.outliers or 0], "outliers_predicted": job.outliers}
        out.append({"result": result, "code_version": code_version(),
                    "timing": {"seconds": 0.0, "cpu_seconds": 0.0, "group_tasks": len(jobs), "worker": worker}})
    return out


def _sweep_data(sweep: str) -> dict:
    import tomllib

    data = tomllib.loads((ROOT / "examples" / "sweeps" / "paper.toml").read_text())
    if sweep == "tiny":
        data["grid"]["gamma"] = {"from": "1/2", "to": 1, "num": 2}
        data["sweep"]["seeds"] = 2
    return data


def child(sweep: str, executor: tuple, results: str) -> dict:
    """One run in this process (the code first on ``PYTHONPATH``): the sweep to the end with :func:`stub_group` for the
    solves, then again on its finished results file. Seconds of wall and of this process's CPU (the client's; a Dask
    ``LocalCluster`` also runs its scheduler here), start-up to the first result, cells and tasks."""
    import io

    from verify.sweeps import executors, run
    from verify.sweeps.spec import Sweep

    run.run_group = stub_group
    data = _sweep_data(sweep)
    w0, c0 = time.perf_counter(), time.process_time()
    spec = Sweep(data)
    validate = {"wall_s": time.perf_counter() - w0, "cpu_s": time.process_time() - c0}
    out = {"validate": validate}
    for name in ("run", "resume"):
        w0, c0 = time.perf_counter(), time.process_time()
        with executors.executor(*executor) as ex:
            doc = run.run_sweep(spec, results, ex, log=io.StringIO())
        out[name] = {"wall_s": time.perf_counter() - w0, "cpu_s": time.process_time() - c0, "computed": doc["computed"],
                     "cells": doc["cells"], "tasks": doc["tasks"], "first_result_s": doc["first_result_seconds"]}
    return out


def _run_child(code: Path, sweep: str, executor: tuple, results: Path, tmp: Path) -> dict:
    from benchmarks.processes import code_env

    env = code_env(code, 1, tmp / f"cache-{code.name}")
    done = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "client.py"), "--child", sweep, json.dumps(executor),
                           str(results)], env=env, cwd=tmp, capture_output=True, text=True)
    if done.returncode:
        raise RuntimeError(f"benchmarks/client.py --child: exit {done.returncode}: {done.stderr.strip()[-400:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def run(mode: str, log=sys.stderr) -> dict:
    from benchmarks.processes import baseline_tree

    sweep = MODES[mode]
    out = {"sweep": sweep, "before_commit": BEFORE, "load_start": os.getloadavg()[0], "runs": {}}
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        base = baseline_tree(tmp, BEFORE) if mode != "tiny" else None
        codes = {"before": base, "now": ROOT} if base is not None else {"now": ROOT}
        for ex_name, executor in EXECUTORS.items():
            for code_name, code in codes.items():
                print(f"bench: the sweep's client at the paper's scale, {code_name}, {ex_name} ...", file=log, flush=True)
                results = tmp / f"{code_name}-{len(out['runs'])}.jsonl"
                out["runs"][f"{code_name}, {ex_name}"] = {"code": code_name, "executor": ex_name,
                                                          **_run_child(code, sweep, executor, results, tmp)}
                results.unlink()
    out["load_end"] = os.getloadavg()[0]
    return out


def cell_seconds(notes: str) -> dict:
    """The cell times of the grid's projection in the ``cell`` section of notes/benchmarks.md (``machine -> s``), if
    it has one."""
    section = re.search(r"<!-- cost:cell:begin -->(.*?)<!-- cost:cell:end -->", notes, re.S)
    rows = re.findall(r"^\| ([^|]+?) \| (\d+) \| [\d.]+ \| ([\d.]+) \| [\d.]+ \| [\d.]+ \|", section.group(1), re.M) if section else []
    return {name: float(cell) for name, _, cell in rows}


def markdown(result: dict, notes: str = "") -> list[str]:
    r = result
    runs = list(r["runs"].values())
    cells, tasks = runs[0]["run"]["cells"], runs[0]["run"]["tasks"]
    lines = ["## The sweep's client at the paper's scale", "",
             f"`examples/sweeps/paper.toml`{'' if r['sweep'] == 'paper' else ' (two gamma, two seeds)'}: {cells} cells, "
             f"{tasks} tasks, run to the end with the solves replaced by a stub that returns records of the real shape "
             "at once, so that what is timed is the sweep's own work: validating the grid (the theory of each point), "
             "building the jobs, shipping cells and outcomes, writing and syncing the records; then run again on its "
             "finished results file (a resume with nothing left to do). Each run a process of its own; a run's times include "
             "starting its executor (a `LocalCluster`: about a second); CPU is the "
             "client process's (with a `LocalCluster` it also hosts the scheduler); `before` is the code of "
             f"{r['before_commit']}, `now` this checkout. 1-minute load average {r['load_start']:.2f} at the start and "
             f"{r['load_end']:.2f} at the end (`benchmarks/client.py`).", "",
             "| code | executor | validate (s) | first result (s) | run, wall (s) | run, client CPU (s) | client CPU per cell (ms) "
             "| resume, wall (s) |", "|---|---|---|---|---|---|---|---|"]
    for x in runs:
        per_cell = 1e3 * x["run"]["cpu_s"] / x["run"]["cells"]
        lines.append(f"| {x['code']} | {x['executor']} | {x['validate']['wall_s']:.2f} | {x['run']['first_result_s']:.2f} | "
                     f"{x['run']['wall_s']:.2f} | {x['run']['cpu_s']:.2f} | {per_cell:.1f} | {x['resume']['wall_s']:.2f} |")
    by = {(x["code"], x["executor"]): x for x in runs}
    dask = by.get(("now", "Dask LocalCluster, 2 workers"))
    if ("before", "in-process") in by:
        b, n = by[("before", "in-process")]["run"], by[("now", "in-process")]["run"]
        lines += ["", f"Before over now, in the client's own process: {b['wall_s'] / n['wall_s']:.1f}x the run's wall time, "
                      f"{b['first_result_s'] / n['first_result_s']:.1f}x the start-up to the first result."]
    if dask is not None:
        per_cell = dask["run"]["cpu_s"] / dask["run"]["cells"]
        known = cell_seconds(notes)
        lines += ["", f"**Against the solves.** On Dask the client spends {1e3 * per_cell:.1f} ms of CPU a cell, so one client "
                      f"keeps s / {1e3 * per_cell:.1f} ms worker threads busy when a cell's solve takes s seconds"
                  + ("; at the cell times of the grid's projection above: "
                     + "; ".join(f"{name}, {s:.1f} s a cell: {s / per_cell:,.0f} threads" for name, s in known.items())
                     if known else "") + ". Its start-up (validation and the first results) is "
                  f"{dask['validate']['wall_s'] + dask['run']['first_result_s']:.1f} s and a resume's scan of the finished "
                  f"file {dask['resume']['wall_s']:.1f} s, once per run."]
    return lines


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["--child"] and len(argv) == 4:
        print(json.dumps(child(argv[1], json.loads(argv[2]), argv[3])))
        return 0
    print("usage: benchmarks/client.py --child SWEEP EXECUTOR_JSON RESULTS (run by `python -m benchmarks cost`)",
          file=sys.stderr)
    return 2


if __name__ == "__main__":
    # run by path so that the code under test is the one on PYTHONPATH: its own folder (benchmarks/) must not shadow
    # top-level modules
    if sys.path and Path(sys.path[0]).resolve() == Path(__file__).resolve().parent:
        del sys.path[0]
    sys.exit(main())
