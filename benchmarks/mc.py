r"""The Monte Carlo part of ``python -m benchmarks all``: the dense Gram solver against the matrix-free ones, and the
matrix-free ones against the machine's memory-bandwidth floor.

For each ``d`` of a ladder (``V = 2d``, ``N = 4d``, ``T = 8``, iid signs, mean pooling, ``mu2 = 4``,
raw ``S``, top ``k = 3``) one draw of the model is solved by each path of :data:`PATHS`: ``dense``,
``implicit`` (float64 Lanczos), ``implicit-f32`` (the same draw with the table rounded to float32),
and ``mixed`` (float32 Lanczos certified by a float64 Rayleigh-Ritz step) where
:mod:`verify.montecarlo` offers it. A job runs in a worker process
(``python3 -m benchmarks.mc --worker JOBS``), one job per process when peak memory must be its
own: the time is the median of a few solves after one warm-up solve (or a single solve, for the
costly dense solves at the top of the ladder), the memory is the peak of NumPy allocations
(``tracemalloc``) over the draw and the first solve, and the process's peak resident size. With
single-threaded BLAS the times are the process's CPU time, which other jobs on a shared machine
inflate far less than wall time (they still share the memory bus); with more threads, wall time.

*The floor.* A solve must read the table once per pass the solver reports (``Trial.passes``, by
dtype: one per Lanczos step of :mod:`verify.montecarlo.lanczos`, plus the first and the Rayleigh-Ritz passes),
and the sparse mixing matrix twice per product with :math:`S` (:math:`A^T` and :math:`A`: float64
values, their indices and the column pointers): :func:`bytes_read`. At the bandwidth ``B`` of a
large array copy measured in the same run, a solve must take at least its bytes over ``B``
(:func:`floor`). The worker also times the two kernels of a Lanczos step alone (the pass over the
table, :func:`verify.montecarlo.kernels.lanczos_sweep`, and the sparse mixing), which says where a solve
loses time against that floor.
"""
from __future__ import annotations

import json
import os
import resource
import statistics
import subprocess
import sys
import time
import tracemalloc
from pathlib import Path

import numpy as np

from verify import montecarlo
from verify.montecarlo import kernels, lanczos
from verify.threads import thread_environment

__all__ = ["ROOT", "SIGNS", "MU2", "K", "T", "SEED", "TARGET_D", "TARGET_SPEEDUP", "FLOOR_FROM_D",
           "FLOOR_FACTOR", "PATHS", "ACCURATE", "KERNEL_REPEATS", "PAIRED_ROUNDS", "bytes_read",
           "median_seconds", "child_env", "peak_rss_mb", "kernel_seconds", "worker", "paired", "spawn", "run",
           "rel_diff", "floor", "markdown", "main"]

ROOT = Path(__file__).resolve().parents[1]
SIGNS, MU2, K, T = "iid", 4.0, 3, 8
SEED = 20260601
TARGET_D, TARGET_SPEEDUP = 2000, 10.0
FLOOR_FROM_D, FLOOR_FACTOR = 4000, 3.0
PATHS = {"dense": ("dense", np.float64), "implicit": ("implicit", np.float64),
         "implicit-f32": ("implicit", np.float32)}
if "mixed" in montecarlo.PATHS:
    PATHS["mixed"] = ("mixed", np.float64)
ACCURATE = tuple(name for name in ("implicit", "mixed") if name in PATHS)
"""The matrix-free paths whose eigenvalues are float64-accurate (the targets are theirs)."""
KERNEL_REPEATS = 5
PAIRED_ROUNDS = 9
"""Rounds of :func:`paired`: each times dense and then every float64-accurate matrix-free path once."""


def bytes_read(passes: dict, products: int, d: int, V: int, A) -> int:
    """Bytes a matrix-free solve must read: the ``d x V`` table once per pass, in the dtype of that
    pass (``passes``: ``{dtype name: count}``), and ``A`` twice per product (as ``A^T`` and ``A``: ``nnz``
    float64 values, their indices and the column pointers).

    >>> import scipy.sparse as sps
    >>> bytes_read({"float32": 2, "float64": 1}, 1, 2, 3, sps.csc_matrix(np.eye(3)))  # (2*4 + 8)*6 + 2*(24 + 12 + 16)
    200
    """
    sparse = A.nnz * 8 + A.indices.nbytes + A.indptr.nbytes
    table = sum(count * d * V * np.dtype(name).itemsize for name, count in passes.items())
    return table + 2 * products * sparse


def median_seconds(f, repeats: int, clock, warmup=None, number: int = 1) -> float:
    """Median over ``repeats`` runs of the time of one call of ``f`` by ``clock`` (``number`` calls per
    run), after a warm-up call of ``warmup`` (``f`` itself by default): the one timing loop of the harness.

    >>> median_seconds(lambda: None, 3, time.perf_counter) < 1
    True
    """
    (warmup or f)()
    times = []
    for _ in range(repeats):
        t0 = clock()
        for _ in range(number):
            f()
        times.append((clock() - t0) / number)
    return statistics.median(times)


def child_env(threads: int | None = None) -> dict:
    """The environment of a child process: this checkout first on ``PYTHONPATH``, BLAS limited to ``threads``."""
    env = thread_environment(threads)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))
    return env


def peak_rss_mb() -> float:
    """Peak resident size of this process since it started (``VmHWM``; Linux keeps ``ru_maxrss`` across
    ``exec``, so there it would include the parent's size at the fork)."""
    try:
        with open("/proc/self/status") as f:
            return next(int(line.split()[1]) for line in f if line.startswith("VmHWM:")) / 1024
    except (OSError, StopIteration):
        return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def kernel_seconds(E: np.ndarray, A, clock=time.perf_counter) -> dict:
    """Median time of each kernel of one Lanczos step, alone: the pass over the table ``E`` (in its
    dtype) and the sparse mixing ``M y/N``."""
    d, V = E.shape
    mixing = lanczos.Mixing.of(A, False)
    r, x = np.ones(V, dtype=E.dtype), np.ones(d)
    w, y, out = np.empty(d), np.ones(V), np.empty(V)
    partial, wblock = np.empty(V, dtype=E.dtype), np.empty(8, dtype=E.dtype)
    return {
        "sweep": median_seconds(lambda: kernels.lanczos_sweep(E, r, x, x, 0.5, 0.5, w, y, partial, wblock),
                                KERNEL_REPEATS, clock),
        "mixing": median_seconds(lambda: kernels.mix(mixing.rows, mixing.values, mixing.N, mixing.abar, y, out),
                                 KERNEL_REPEATS, clock),
    }


def _solve_bytes(trial, d: int, A) -> tuple[int, str]:
    """Bytes the solve ``trial`` had to read, and how they were counted."""
    passes = ", ".join(f"{count} {name}" for name, count in sorted(trial.passes.items()))
    return bytes_read(trial.passes, trial.products, d, 2 * d, A), f"table passes: {passes}"


def _clock(job: dict):
    """The clock a job asks for: ``"cpu"`` (process time) or ``"wall"``."""
    return time.process_time if job["clock"] == "cpu" else time.perf_counter


def _model(d: int):
    """The benchmark's model at size ``d`` (module docstring): a :class:`derive.Model` with mean weights."""
    from derive import Model

    return Model(d=d, V=2 * d, N=4 * d, T=T, signs=SIGNS, mu2=repr(MU2))


def worker(job: dict) -> dict:
    """Run one path on one size, in this process: draw, first solve (memory traced), timed solves.

    ``job["repeats"] == 0`` times the first solve itself (no warm-up), for solves too costly to repeat;
    ``job["clock"]`` is ``"cpu"`` (process time) or ``"wall"``.
    """
    clock = _clock(job)
    path, dtype = PATHS[job["path"]]
    d = job["d"]
    model = _model(d)
    tracemalloc.start()
    t0 = clock()
    data = montecarlo.draw(model, SEED, weights=[1 / T] * T)
    sample_s = clock() - t0
    t0 = clock()
    first = montecarlo.solve(data, K, False, path, dtype=dtype)
    times = [clock() - t0]
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    if job["repeats"]:
        times = []
        for _ in range(job["repeats"]):
            t0 = clock()
            montecarlo.solve(data, K, False, path, dtype=dtype)
            times.append(clock() - t0)
    out = {
        "path": job["path"], "d": d, "sample_s": sample_s, "solve_s": statistics.median(times), "times": times,
        "warm": bool(job["repeats"]), "traced_peak_mb": peak / 2**20,
        "maxrss_mb": peak_rss_mb(),
        "top": first.top_eigenvalues.tolist(), "products": first.products,
    }
    if path != "dense":
        out["passes"] = first.passes
        out["bytes"], out["bytes_counted"] = _solve_bytes(first, d, data.A)
        # the mixed path spends nearly all its passes on the float32 table
        E = data.E if job["path"] == "implicit" else data.E.astype(np.float32)
        out["table_bytes"] = E.nbytes
        out["kernels"] = kernel_seconds(E, data.A, clock)
    return out


def paired(job: dict) -> dict:
    """Dense against the float64-accurate matrix-free paths (:data:`ACCURATE`) on one draw in one
    process, solve after solve: each of ``job["rounds"]`` rounds times a dense solve and then one
    solve of each path, and gives the ratio of dense's time to each path's. The speed of a shared
    machine drifts over seconds, so ratios of neighbouring solves vary far less than ratios of
    medians taken in separate processes minutes apart; the target is stated on their median."""
    clock = _clock(job)
    d = job["d"]
    model = _model(d)
    data = montecarlo.draw(model, SEED, weights=[1 / T] * T)
    names = ("dense",) + ACCURATE

    def solve(name):
        montecarlo.solve(data, K, False, PATHS[name][0], dtype=PATHS[name][1])

    for name in names:
        solve(name)
    times = {name: [] for name in names}
    for _ in range(job["rounds"]):
        for name in names:
            t0 = clock()
            solve(name)
            times[name].append(clock() - t0)
    ratios = {name: [a / b for a, b in zip(times["dense"], times[name])] for name in ACCURATE}
    return {"paired": True, "d": d, "times": times, "ratios": ratios,
            "median_ratio": {name: statistics.median(r) for name, r in ratios.items()}}


def spawn(jobs: list[dict], threads: int | None) -> list[dict]:
    """Run ``jobs`` one after the other in one fresh worker process (BLAS limited to ``threads``)."""
    out = subprocess.run([sys.executable, "-m", "benchmarks.mc", "--worker", json.dumps(jobs)],
                         cwd=ROOT, env=child_env(threads), capture_output=True, text=True, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def _spawn_one(job: dict, threads: int | None, failed: list, log) -> dict | None:
    """The result of ``job`` in its own worker process, or ``None`` if the process failed: a job the
    machine cannot run (out of memory on a shared machine) is reported in ``failed`` and on ``log``,
    not fatal."""
    try:
        return spawn([job], threads)[0]
    except subprocess.CalledProcessError as exc:
        reason = ((exc.stderr or "").strip().splitlines()[-1:] or [f"exit status {exc.returncode}"])[0]
        path = "paired" if job.get("paired") else job["path"]
        failed.append({"path": path, "d": job["d"], "reason": reason})
        print(f"bench: {path} d={job['d']} failed: {reason}", file=log, flush=True)
        return None


def run(ladder, repeats: int, dense_max: int, dense_single_from: int, isolate: bool, threads: int | None,
        log=sys.stderr) -> dict:
    """Every path at every ``d`` of ``ladder`` (dense only up to ``dense_max``, and a single solve from
    ``dense_single_from`` on); one process per job if ``isolate``, else one process for all."""
    from verify.stats import finite_size_fit

    clock = "cpu" if threads == 1 else "wall"
    jobs = []
    for d in ladder:
        for name in PATHS:
            if name == "dense" and d > dense_max:
                continue
            single = name == "dense" and d >= dense_single_from
            jobs.append({"path": name, "d": d, "repeats": 0 if single else repeats, "clock": clock})
    results, failed = [], []
    if isolate:
        for job in jobs:
            print(f"bench: {job['path']} d={job['d']} ...", file=log, flush=True)
            result = _spawn_one(job, threads, failed, log)
            results += [] if result is None else [result]
    else:
        print(f"bench: {len(jobs)} Monte Carlo jobs in one process ...", file=log, flush=True)
        results = spawn(jobs, threads)
    dense_ds = [d for d in ladder if d <= dense_max]
    pairs = None
    if dense_ds:
        # at the target's size when the run has it, else at the largest dense size (to exercise the code)
        d = TARGET_D if TARGET_D in dense_ds else max(dense_ds)
        print(f"bench: dense and matrix-free solve after solve, d={d} ...", file=log, flush=True)
        pairs = _spawn_one({"paired": True, "d": d, "rounds": PAIRED_ROUNDS, "clock": clock}, threads, failed, log)
    rows = {(r["path"], r["d"]): r for r in results}
    fits = {}
    for name in PATHS:
        ds = [d for d in ladder if (name, d) in rows]
        if len(ds) >= 2:
            fit = finite_size_fit(ds, [rows[name, d]["solve_s"] for d in ds])
            fits[name] = {"exponent": -fit.rate, "se": fit.rate_se, "ds": ds}
    return {"ladder": list(ladder), "repeats": repeats, "isolate": isolate, "threads": threads, "clock": clock,
            "rows": rows, "fits": fits, "failed": failed, "paired": pairs}


def rel_diff(a, b) -> float:
    """Largest relative difference of ``a`` from ``b``.

    >>> rel_diff([1.0, 2.0], [1.0, 4.0])
    0.5
    """
    a, b = np.asarray(a), np.asarray(b)
    return float(np.max(np.abs(a - b) / np.abs(b)))


def floor(row: dict, bandwidth: float) -> dict:
    """The bandwidth floor of a matrix-free row: its seconds, the fraction of the bandwidth the solve
    achieves, and the time per product split into the kernels of a Lanczos step and the rest (the
    eigensolver's own work, the first and Rayleigh-Ritz passes, the rounding of the table)."""
    floor_s = row["bytes"] / bandwidth
    per_product = row["solve_s"] / row["products"]
    kernels = sum(row["kernels"].values())
    return {"floor_s": floor_s, "fraction": floor_s / row["solve_s"], "per_product_s": per_product,
            "kernels_s": kernels, "other_s": per_product - kernels,
            "sweep_gbs": row["table_bytes"] / max(row["kernels"]["sweep"], 1e-9) / 1e9}


def markdown(result: dict, bandwidth: float) -> list[str]:
    """The Monte Carlo section of ``notes/benchmarks.md``: ladder, growth exponents, floor."""
    rows, ladder = result["rows"], result["ladder"]
    single = [d for d in ladder if ("dense", d) in rows and not rows["dense", d]["warm"]]
    failed = {(f["path"], f["d"]): f["reason"] for f in result["failed"]}
    skipped = [d for d in ladder if ("dense", d) not in rows and ("dense", d) not in failed]
    lines = [
        "## Monte Carlo: dense vs matrix-free top-3 eigenpairs of S",
        "",
        f"Model: V = 2d, N = 4d, T = {T}, signs `{SIGNS}`, mean pooling, mu2 = {MU2}, raw S, k = {K}, one draw "
        f"(seed {SEED}) per d. Paths: {', '.join(f'`{p}`' for p in PATHS)} (`implicit-f32`: Lanczos on the "
        "table rounded to float32, products in float32, eigenvalues good to about 1e-7 only). Solve time: median of "
        f"{result['repeats']} solves after one warm-up"
        + (f" (dense at d = {', '.join(map(str, single))}: a single solve, no warm-up, too costly to repeat)" if single else "")
        + "; sampling (table, sequences, sparse A) is timed once and is the same for every path. "
        "Memory: peak of NumPy allocations (tracemalloc) over the draw and the first solve, and the "
        "process's peak resident size (VmHWM: interpreter and libraries included)"
        + ("; each job in its own process." if result["isolate"] else "; all jobs share one process here, so the resident peak is cumulative.")
        + f" BLAS threads: {'library default' if result['threads'] is None else result['threads']}"
        + ("; times are process CPU time." if result["clock"] == "cpu" else "; times are wall time.")
        + (f" Dense skipped at d = {', '.join(map(str, skipped))} (too costly)." if skipped else ""),
        "",
        "| d | path | sample (s) | solve (s) | products | vs dense (solve) | vs dense (trial) | peak / rss (MB) "
        "| top-3 rel. diff. vs dense (vs implicit without dense) |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for d in ladder:
        dense = rows.get(("dense", d))
        for name in PATHS:
            row = rows.get((name, d))
            if row is None:
                why = f"failed ({failed[name, d]})" if (name, d) in failed else "skipped"
                lines.append(f"| {d} | {name} | – | {why} | – | – | – | – | – |")
                continue
            ref = dense if dense is not None else rows.get(("implicit", d), row)
            vs = "–" if dense is None or name == "dense" else f"{dense['solve_s'] / row['solve_s']:.1f}x"
            trial = ("–" if dense is None or name == "dense"
                     else f"{(dense['sample_s'] + dense['solve_s']) / (row['sample_s'] + row['solve_s']):.1f}x")
            diff = "–" if row is ref else f"{rel_diff(row['top'], ref['top']):.1e}"
            lines.append(f"| {d} | {name} | {row['sample_s']:.3f} | {row['solve_s']:.3f} | {row['products'] or '–'} | {vs} "
                         f"| {trial} | {row['traced_peak_mb']:.0f} / {row['maxrss_mb']:.0f} | {diff} |")
    pairs = result.get("paired")
    if pairs is not None:
        t = pairs["times"]
        lines += [
            "", f"### Dense and matrix-free, solve after solve (d = {pairs['d']})", "",
            f"One process, one draw; each of {len(t['dense'])} rounds solves densely and then by each float64-accurate "
            "matrix-free path, and the ratio of a round is dense's time over the path's. Neighbouring solves see the "
            "same state of the shared machine, so these ratios are steadier than the ratio of the medians above, "
            "which come from separate processes run minutes apart.", "",
            "| path | dense (s), median | path (s), median | ratio per round: median | min | max |",
            "|---|---|---|---|---|---|",
        ]
        for name, r in pairs["ratios"].items():
            lines.append(f"| {name} | {statistics.median(t['dense']):.3f} | {statistics.median(t[name]):.4f} | "
                         f"{statistics.median(r):.1f}x | {min(r):.1f}x | {max(r):.1f}x |")
    lines += ["", "Growth of the solve time in d (least-squares fit of time ≈ C d^p in log-log, p ± standard error):", ""]
    for name, fit in result["fits"].items():
        lines.append(f"- {name}: p = {fit['exponent']:.2f} ± {fit['se']:.2f} (d = {', '.join(map(str, fit['ds']))})")
    lines += [
        "",
        "### The matrix-free paths against the bandwidth floor",
        "",
        f"Floor = the bytes a solve must read over the copy bandwidth {bandwidth / 1e9:.1f} GB/s measured in this run: "
        "the table once per pass the solver made, in that pass's dtype (one pass per Lanczos step, the first pass, "
        "and for `mixed` two float64 Rayleigh-Ritz passes), plus the sparse A twice per product (A^T y and A u: "
        "values and indices). Achieved = floor / solve time, the fraction of the copy bandwidth the solve "
        "sustains. Per product: the solve time over the products; the two kernels of a Lanczos step timed alone "
        f"(median of {KERNEL_REPEATS}; float32 table for `implicit-f32` and `mixed`): the pass over the table "
        "(`lanczos_sweep`: E r and E^T w in one read) and the sparse mixing M y/N; the rest, the solver's own "
        "work (reorthogonalization, the tridiagonal eigensolves, the first and Rayleigh-Ritz passes, rounding "
        "the table). Sweep: the bandwidth the pass over the table reaches alone.",
        "",
        "| d | path | MB per product | products | solve (s) | floor (s) | solve / floor | achieved | per product (ms) "
        "| kernels (ms): sweep, mixing | rest (ms) | sweep (GB/s) |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for d in ladder:
        for name in PATHS:
            if name == "dense" or (name, d) not in rows:
                continue
            row = rows[name, d]
            f = floor(row, bandwidth)
            k = row["kernels"]
            lines.append(
                f"| {d} | {name} | {row['bytes'] / row['products'] / 1e6:.1f} | {row['products']} | {row['solve_s']:.3f} "
                f"| {f['floor_s']:.3f} | {1 / f['fraction']:.2f} | {100 * f['fraction']:.0f}% | {1e3 * f['per_product_s']:.2f} | "
                f"{', '.join(f'{1e3 * k[n]:.2f}' for n in ('sweep', 'mixing'))} | {1e3 * f['other_s']:.2f} | "
                f"{f['sweep_gbs']:.1f} |")
    counted = [f"{name} at d = {d}: {row['bytes_counted']}" for (name, d), row in sorted(rows.items()) if name != "dense"]
    if counted:
        lines += ["", "Passes over the table: " + "; ".join(counted) + "."]
    return lines


def main(argv=None) -> int:
    """Worker entry point: ``python3 -m benchmarks.mc --worker JOBS`` prints the results as one JSON list."""
    argv = sys.argv[1:] if argv is None else argv
    if len(argv) != 2 or argv[0] != "--worker":
        print("usage: python3 -m benchmarks.mc --worker JOBS (the benchmarks run with `python -m benchmarks all`)", file=sys.stderr)
        return 2
    print(json.dumps([paired(job) if job.get("paired") else worker(job) for job in json.loads(argv[1])]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
