"""The cavity solver of the model's bulk (derive/vocabulary/limit/cavity.py): 200 points on 2 threads, against the same
points on one thread in the same run, with the accuracy reached."""
from __future__ import annotations

import os
import time

import numpy as np

from derive.files import write_file

__all__ = ["bench"]

CASES = [("T = 8, mean, delta = gamma = 1", 8, 1.6), ("T = 2, mean, delta = gamma = 1", 2, 4.0)]


def _run(xs, T, threads):
    from derive.vocabulary.limit import cavity

    start, cpu = time.perf_counter(), time.process_time()
    found = cavity.densities(xs, [1 / T] * T, 1.0, 1.0, threads=threads)
    return found, time.perf_counter() - start, time.process_time() - cpu


def bench(points: int = 200, out: str | None = None) -> dict:
    from derive.vocabulary.limit import cavity

    cavity.densities([0.5], [0.5, 0.5], 1.0, 1.0)  # compiled (or loaded from numba's cache) before timing
    rows = []
    for name, T, upper in CASES:
        xs = np.linspace(upper / points, upper, points)
        load = os.getloadavg()[0]
        found, wall, cpu = _run(xs, T, 2)
        _, wall_one, _ = _run(xs[: points // 10], T, 1)
        rho = np.array([e.density for e in found])
        err = np.array([e.error for e in found])
        inside = rho > 1e-3 * rho.max()
        rows.append({"case": name, "points": points, "wall_s": wall, "cpu_s": cpu, "load": load,
                     "threads_speedup": wall_one * 10 / wall,
                     "three_digits": float(np.mean(err[inside] <= 1e-3 * rho[inside])),
                     "median_rel_error": float(np.median(err[inside] / rho[inside])),
                     "max_error_over_max_density": float(err.max() / rho.max())})
    lines = ["| case | points | wall (2 threads) | CPU | load | speedup of 2 threads | points with error <= 1e-3 rho | "
             "median error/rho | max error / max rho |", "|---|---|---|---|---|---|---|---|---|"]
    lines += [f"| {r['case']} | {r['points']} | {r['wall_s']:.1f} s | {r['cpu_s']:.1f} s | {r['load']:.1f} | "
              f"{r['threads_speedup']:.2f} | {100 * r['three_digits']:.0f}% | {r['median_rel_error']:.1e} | "
              f"{r['max_error_over_max_density']:.1e} |" for r in rows]
    markdown = "\n".join(lines) + "\n"
    if out:
        write_file(out, markdown, "out")
    return {"rows": rows, "markdown": markdown}
