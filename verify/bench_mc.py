r"""The Monte Carlo part of ``verify bench``: the dense Gram solver against the matrix-free ones, and the
matrix-free ones against the machine's memory-bandwidth floor.

For each ``d`` of a ladder (``V = 2d``, ``N = 4d``, ``T = 8``, iid signs, mean pooling, ``mu2 = 4``,
raw ``S``, top ``k = 3``) one draw of the model is solved by each path of :data:`PATHS`: ``dense``,
``implicit`` (float64 Lanczos), ``implicit-f32`` (the same draw with the table rounded to float32),
and ``mixed`` (float32 Lanczos certified by a float64 Rayleigh-Ritz step) where
:mod:`verify.simulate` offers it. A job runs in a worker process
(``python3 -m verify.bench_mc --worker JOBS``), one job per process when peak memory must be its
own: the time is the median of a few solves after one warm-up solve (or a single solve, for the
costly dense solves at the top of the ladder), the memory is the peak of NumPy allocations
(``tracemalloc``) over the draw and the first solve, and the process's peak resident size. With
single-threaded BLAS the times are the process's CPU time, which other jobs on a shared machine
inflate far less than wall time (they still share the memory bus); with more threads, wall time.

*The floor.* One product :math:`x \mapsto \frac1N E A A^T E^T x` must read the table twice
(:math:`E^T x` and :math:`E r`) and the sparse mixing matrix twice (:math:`A^T` and :math:`A`, values
in the table's dtype plus their indices): :func:`bytes_per_product`. At the bandwidth ``B`` of a
large array copy measured in the same run, a solve must take at least its bytes over ``B``
(:func:`floor`). The worker also times the four kernels of a product alone, which says where a
solve loses time against that floor.
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

from verify import simulate

ROOT = Path(__file__).resolve().parents[1]
SIGNS, MU2, K, T = "iid", 4.0, 3, 8
SEED = 20260601
TARGET_D, TARGET_SPEEDUP = 2000, 10.0
FLOOR_FROM_D, FLOOR_FACTOR = 4000, 3.0
THREAD_VARIABLES = ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS")
PATHS = {"dense": ("dense", np.float64), "implicit": ("implicit", np.float64),
         "implicit-f32": ("implicit", np.float32)}
if "mixed" in simulate.PATHS:
    PATHS["mixed"] = ("mixed", np.float64)
ACCURATE = tuple(name for name in ("implicit", "mixed") if name in PATHS)
"""The matrix-free paths whose eigenvalues are float64-accurate (the targets are theirs)."""
KERNEL_REPEATS = 5


def bytes_per_product(d: int, V: int, A, itemsize: int) -> int:
    r"""Bytes one implicit product must read: the ``d x V`` table twice and ``A`` twice (as ``A^T`` and
    ``A``: ``nnz`` values of ``itemsize`` bytes, their row indices and the column pointers).

    >>> import scipy.sparse as sps
    >>> bytes_per_product(2, 3, sps.csc_matrix(np.eye(3)), 8)  # 2*2*3*8 + 2*(3*8 + 3*4 + 4*4)
    200
    """
    sparse = A.nnz * itemsize + A.indices.nbytes + A.indptr.nbytes
    return 2 * d * V * itemsize + 2 * sparse


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
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")])))
    if threads is not None:
        env.update({name: str(threads) for name in THREAD_VARIABLES})
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
    """Median time of each kernel of one implicit product, alone: ``E^T x``, ``A^T y``, ``A u``, ``E r``."""
    A = A.astype(E.dtype)
    At = A.T.tocsr()
    d, V = E.shape
    x, r = np.ones(d, dtype=E.dtype), np.ones(V, dtype=E.dtype)
    y = E.T @ x
    u = At @ y
    return {
        "ETx": median_seconds(lambda: E.T @ x, KERNEL_REPEATS, clock),
        "Aty": median_seconds(lambda: At @ y, KERNEL_REPEATS, clock),
        "Au": median_seconds(lambda: A @ u, KERNEL_REPEATS, clock),
        "Er": median_seconds(lambda: E @ r, KERNEL_REPEATS, clock),
    }


def _solve_bytes(name: str, trial, d: int, A) -> tuple[int, str]:
    """Bytes a solve of path ``name`` must read, and how they were counted."""
    b64, b32 = bytes_per_product(d, 2 * d, A, 8), bytes_per_product(d, 2 * d, A, 4)
    if name == "implicit":
        return trial.products * b64, "float64 products"
    if name == "implicit-f32":
        return trial.products * b32, "float32 products"
    if trial.residuals is not None:
        return (trial.products - K) * b32 + K * b64, f"float32 Lanczos products + {K} float64 Rayleigh-Ritz products"
    # fell back to float64 Lanczos: the split is not reported, so every product counts at float32 (a lower floor)
    return trial.products * b32, "fell back to float64 Lanczos; every product counted at float32 bytes"


def worker(job: dict) -> dict:
    """Run one path on one size, in this process: draw, first solve (memory traced), timed solves.

    ``job["repeats"] == 0`` times the first solve itself (no warm-up), for solves too costly to repeat;
    ``job["clock"]`` is ``"cpu"`` (process time) or ``"wall"``.
    """
    clock = time.process_time if job["clock"] == "cpu" else time.perf_counter
    path, dtype = PATHS[job["path"]]
    d = job["d"]
    model = simulate.check_model(d, 2 * d, 4 * d, T, SIGNS, [1 / T] * T, MU2)
    tracemalloc.start()
    t0 = clock()
    data = simulate.draw(model, SEED)
    sample_s = clock() - t0
    t0 = clock()
    first = simulate.solve(model, data, K, False, path, dtype=dtype)
    times = [clock() - t0]
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    if job["repeats"]:
        times = []
        for _ in range(job["repeats"]):
            t0 = clock()
            simulate.solve(model, data, K, False, path, dtype=dtype)
            times.append(clock() - t0)
    out = {
        "path": job["path"], "d": d, "sample_s": sample_s, "solve_s": statistics.median(times), "times": times,
        "warm": bool(job["repeats"]), "traced_peak_mb": peak / 2**20,
        "maxrss_mb": peak_rss_mb(),
        "top": first.top_eigenvalues.tolist(), "products": first.products,
    }
    if path != "dense":
        out["bytes"], out["bytes_counted"] = _solve_bytes(job["path"], first, d, data.A)
        # the mixed path spends nearly all its products on the float32 table
        E = data.E if job["path"] == "implicit" else data.E.astype(np.float32)
        out["table_bytes"] = E.nbytes
        out["kernels"] = kernel_seconds(E, data.A, clock)
    return out


def spawn(jobs: list[dict], threads: int | None) -> list[dict]:
    """Run ``jobs`` one after the other in one fresh worker process (BLAS limited to ``threads``)."""
    out = subprocess.run([sys.executable, "-m", "verify.bench_mc", "--worker", json.dumps(jobs)],
                         cwd=ROOT, env=child_env(threads), capture_output=True, text=True, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


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
            try:
                results += spawn([job], threads)
            except subprocess.CalledProcessError as exc:
                # a job the machine cannot run (out of memory on a shared machine) is reported, not fatal
                reason = (exc.stderr or "").strip().splitlines()[-1:] or [f"exit status {exc.returncode}"]
                failed.append({"path": job["path"], "d": job["d"], "reason": reason[0]})
                print(f"bench: {job['path']} d={job['d']} failed: {reason[0]}", file=log, flush=True)
    else:
        print(f"bench: {len(jobs)} Monte Carlo jobs in one process ...", file=log, flush=True)
        results = spawn(jobs, threads)
    rows = {(r["path"], r["d"]): r for r in results}
    fits = {}
    for name in PATHS:
        ds = [d for d in ladder if (name, d) in rows]
        if len(ds) >= 2:
            fit = finite_size_fit(ds, [rows[name, d]["solve_s"] for d in ds])
            fits[name] = {"exponent": -fit.rate, "se": fit.rate_se, "ds": ds}
    return {"ladder": list(ladder), "repeats": repeats, "isolate": isolate, "threads": threads, "clock": clock,
            "rows": rows, "fits": fits, "failed": failed}


def rel_diff(a, b) -> float:
    """Largest relative difference of ``a`` from ``b``.

    >>> rel_diff([1.0, 2.0], [1.0, 4.0])
    0.5
    """
    a, b = np.asarray(a), np.asarray(b)
    return float(np.max(np.abs(a - b) / np.abs(b)))


def floor(row: dict, bandwidth: float) -> dict:
    """The bandwidth floor of a matrix-free row: its seconds, the fraction of the bandwidth the solve
    achieves, and the time per product split into the kernels and the rest (the eigensolver's own work)."""
    floor_s = row["bytes"] / bandwidth
    per_product = row["solve_s"] / row["products"]
    kernels = sum(row["kernels"].values())
    return {"floor_s": floor_s, "fraction": floor_s / row["solve_s"], "per_product_s": per_product,
            "kernels_s": kernels, "other_s": per_product - kernels,
            "gemv_gbs": 2 * row["table_bytes"] / max(row["kernels"]["ETx"] + row["kernels"]["Er"], 1e-9) / 1e9}


def speedup(result: dict, name: str, d: int) -> float | None:
    """Dense solve time over the solve time of path ``name`` at ``d`` (``None`` if either is missing)."""
    rows = result["rows"]
    if ("dense", d) not in rows or (name, d) not in rows:
        return None
    return rows["dense", d]["solve_s"] / rows[name, d]["solve_s"]


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
    lines += ["", "Growth of the solve time in d (least-squares fit of time ≈ C d^p in log-log, p ± standard error):", ""]
    for name, fit in result["fits"].items():
        lines.append(f"- {name}: p = {fit['exponent']:.2f} ± {fit['se']:.2f} (d = {', '.join(map(str, fit['ds']))})")
    lines += [
        "",
        "### The matrix-free paths against the bandwidth floor",
        "",
        f"Floor = the bytes a solve must read over the copy bandwidth {bandwidth / 1e9:.1f} GB/s measured in this run; "
        "per product, the table twice (E^T x and E r) plus the sparse A twice (A^T y and A u: values and indices), "
        "in the dtype of that product (the mixed path: its float32 Lanczos products and its float64 Rayleigh-Ritz "
        "products). Achieved = floor / solve time, the fraction of the copy bandwidth the solve sustains. Per "
        "product: the solve time over the products; the four kernels of a product timed alone (median of "
        f"{KERNEL_REPEATS}; float32 table for `implicit-f32` and `mixed`); the rest, the eigensolver's own work "
        "(ARPACK's reorthogonalization, Python callbacks, the Rayleigh-Ritz step). gemv: the bandwidth E^T x "
        "and E r reach alone.",
        "",
        "| d | path | MB per product | products | solve (s) | floor (s) | solve / floor | achieved | per product (ms) "
        "| kernels (ms): E^T x, A^T y, A u, E r | rest (ms) | gemv (GB/s) |",
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
                f"{', '.join(f'{1e3 * k[n]:.2f}' for n in ('ETx', 'Aty', 'Au', 'Er'))} | {1e3 * f['other_s']:.2f} | "
                f"{f['gemv_gbs']:.1f} |")
    counted = sorted({row["bytes_counted"] for (name, _), row in rows.items() if name == "mixed"})
    if counted:
        lines += ["", "Bytes of the mixed path: " + "; ".join(counted) + "."]
    return lines


def main(argv=None) -> int:
    """Worker entry point: ``python3 -m verify.bench_mc --worker JOBS`` prints the results as one JSON list."""
    argv = sys.argv[1:] if argv is None else argv
    if len(argv) != 2 or argv[0] != "--worker":
        print("usage: python3 -m verify.bench_mc --worker JOBS (the benchmarks run with `verify bench`)", file=sys.stderr)
        return 2
    print(json.dumps([worker(job) for job in json.loads(argv[1])]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
