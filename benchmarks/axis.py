r"""The mu2 axis from one draw against one solve per mu2, and table passes per converged eigenpair against
restarted and block Krylov methods (part of ``python -m benchmarks all``).

*The axis.* One cell of the paper-scale sweep (``examples/sweeps/paper.toml``: ``V = 2d``, ``N = 2d``
here, ``T = 8``, ``prefix:3``, mean pooling, centered, top ``k = 3``) over its 40 values of ``mu2``
(``1/10`` to ``4``), in one worker process with one BLAS thread, CPU time: as sweeps ran it before
(each ``mu2`` its own draw and its own float64 Lanczos solve: :func:`verify.montecarlo.trials.run_trial`,
path ``implicit``; :data:`SAMPLED` of the 40 are timed and the cell's cost is 40 times their mean), and as
they run it now (one draw, one block Lanczos run on the whole axis:
:func:`verify.montecarlo.trials.solve_axis`). The two are interleaved round by round, so that both see
the same state of the shared machine, and the ratio is per round.

*Passes per converged eigenpair.* On one draw at one ``mu2``: the one-pass Lanczos of
:mod:`verify.montecarlo.lanczos` (one pass over the table a step), ARPACK's implicitly restarted
Lanczos (``scipy.sparse.linalg.eigsh``, a product with :math:`S` costs two passes, :math:`E^T x` and
:math:`E r`) and LOBPCG (``scipy.sparse.linalg.lobpcg``, a block of ``k + 2`` vectors; a product with
the block costs two passes), all to relative residual ``1e-8``, and the block Lanczos of the axis,
whose passes serve ``3 x 40`` pairs at once. Passes are counted by the operators themselves.
"""
from __future__ import annotations

import json
import statistics
import subprocess
import sys
import time

import numpy as np

__all__ = ["MODES", "SAMPLED", "TOL", "cell", "axis_rounds", "passes_per_pair", "worker", "run", "markdown", "main"]

MODES = {"full": ((1000, 2000), 3), "quick": ((1000, 2000), 2), "tiny": ((48,), 1)}
"""``d`` of the cells and the number of interleaved rounds."""
SAMPLED = 4
"""Values of ``mu2`` (evenly spread over the 40) solved one by one, as sweeps did, in each round."""
TOL = 1e-8


def cell(d: int):
    """The cell: ``(d, V, N, T, signs, weights, centered, k, mu2 axis)``."""
    return d, 2 * d, 2 * d, 8, "prefix:3", [1 / 8] * 8, True, 3, np.linspace(0.1, 4.0, 40)


def axis_rounds(d: int, rounds: int) -> dict:
    """Interleaved rounds of the old per-``mu2`` cell and the new one-run cell (module docstring)."""
    from derive import Model
    from verify.montecarlo.draw import draw
    from verify.montecarlo.trials import run_trial, solve_axis

    d, V, N, T, signs, w, centered, k, mu2s = cell(d)
    picks = [int(i) for i in np.linspace(0, len(mu2s) - 1, SAMPLED)]
    model = Model(d=d, V=V, N=N, T=T, signs=signs, mu2=0, centered=centered)

    def old():
        return [run_trial(model.replace(mu2=repr(float(mu2s[i]))), weights=w, k=k, path="implicit", seed=i)
                for i in picks]

    def new():
        return solve_axis(draw(model, 0, weights=w), mu2s, k, centered, "mu2-axis")

    old(), new()  # warm-up: kernels loaded, pages touched
    rows = []
    for _ in range(rounds):
        t0 = time.process_time()
        trials = old()
        t1 = time.process_time()
        axis = new()
        t2 = time.process_time()
        per_task_old, per_cell_new = (t1 - t0) / len(picks), t2 - t1
        rows.append({"old_task_s": per_task_old, "old_cell_s": per_task_old * len(mu2s), "new_cell_s": per_cell_new,
                     "ratio": per_task_old * len(mu2s) / per_cell_new})
    return {"d": d, "V": V, "N": N, "mu2": len(mu2s), "k": k, "rounds": rows,
            "ratio": statistics.median(r["ratio"] for r in rows),
            "old_steps": statistics.median(t.products for t in trials), "axis_passes": axis.passes,
            "axis_size": axis.size}


class _Counted:
    """:math:`S = E (M/N) E^T` as a SciPy ``LinearOperator`` that counts the passes its products make."""

    def __init__(self, E, mixing):
        import scipy.sparse.linalg as spla

        self.E, self.mixing, self.passes = E, mixing, 0
        d = E.shape[0]
        self.op = spla.LinearOperator((d, d), matvec=self._apply, matmat=self._apply, dtype=np.float64)

    def _apply(self, X):
        self.passes += 2  # E^T X and E R, one read of the table each, whatever the number of columns
        return self.E @ self.mixing.apply(self.E.T @ X)


def passes_per_pair(d: int) -> dict:
    """Passes over the table and seconds per converged eigenpair of each method (module docstring)."""
    import scipy.sparse.linalg as spla

    from derive import Model
    from verify.montecarlo.draw import draw
    from verify.montecarlo.lanczos import Mixing, implicit_top
    from verify.montecarlo.mu2_axis import Pencil, axis_top

    d, V, N, T, signs, w, centered, k, mu2s = cell(d)
    mu2 = float(mu2s[len(mu2s) // 2])
    model = Model(d=d, V=V, N=N, T=T, signs=signs, mu2=repr(mu2))
    data = draw(model, 1, weights=w)
    mixing = Mixing.of_tokens(data.tokens, data.weights, V, centered)
    out = {}

    def timed(name, pairs, f):
        t0 = time.process_time()
        passes, values = f()
        seconds = time.process_time() - t0
        out[name] = {"passes": passes, "pairs": pairs, "passes_per_pair": passes / pairs, "seconds": seconds,
                     "seconds_per_pair": seconds / pairs, "top": [float(x) for x in values[:k]]}

    implicit_top(data.E[:64].copy(), mixing, 2, data.v0[:64])  # kernels loaded before the clock starts
    timed("one-pass Lanczos (this project)", k, lambda: (lambda r: (sum(r[3].values()), r[0]))(
        implicit_top(data.E, mixing, k, data.v0)))
    reference_scale = out["one-pass Lanczos (this project)"]["top"][k - 1]
    counted = _Counted(data.E, mixing)

    def arpack():
        values = spla.eigsh(counted.op, k=k, which="LA", tol=TOL, ncv=20, v0=data.v0, return_eigenvectors=False)
        return counted.passes, np.sort(values)[::-1]

    timed("ARPACK eigsh (implicitly restarted Lanczos, ncv = 20)", k, arpack)
    blocked = _Counted(data.E, mixing)

    def lobpcg():
        X = np.random.default_rng(1).standard_normal((d, k + 2))
        # lobpcg's tol bounds the residual norm: relative 1e-8 of the top eigenvalue's scale
        values = spla.lobpcg(blocked.op, X, largest=True, tol=TOL * reference_scale, maxiter=500)[0]
        return blocked.passes, np.sort(values)[::-1]

    timed(f"LOBPCG (block of {k + 2})", k, lobpcg)
    zero = draw(model.replace(mu2=0), 1, weights=w)
    pencil_mixing = Mixing.of_tokens(zero.tokens, zero.weights, V, centered)

    def axis():
        result = axis_top(Pencil.of(zero.E, pencil_mixing, zero.s), mu2s, k)
        return result.passes, result.values[len(mu2s) // 2]

    timed(f"block Lanczos on the mu2 axis ({len(mu2s)} values at once)", k * len(mu2s), axis)
    reference = out["one-pass Lanczos (this project)"]["top"]
    for row in out.values():
        row["rel_diff"] = float(np.max(np.abs(np.array(row["top"]) - reference) / np.abs(reference)))
    return {"d": d, "mu2": mu2, "k": k, "methods": out}


def worker(job: dict) -> dict:
    return axis_rounds(job["d"], job["rounds"]) if job["kind"] == "axis" else passes_per_pair(job["d"])


def run(mode: str, threads: int | None = 1, log=sys.stderr) -> dict:
    """Every ``d`` of ``mode``: the axis rounds and the passes per pair, each in a fresh worker process."""
    from benchmarks.mc import child_env

    ds, rounds = MODES[mode]
    out = {"axis": [], "passes": []}
    for d in ds:
        print(f"bench: mu2 axis and passes per eigenpair, d={d} ...", file=log, flush=True)
        jobs = [{"kind": kind, "d": d, "rounds": rounds} for kind in ("axis", "passes")]
        done = subprocess.run([sys.executable, "-m", "benchmarks.axis", "--worker", json.dumps(jobs)],
                              env=child_env(threads), capture_output=True, text=True, check=True)
        for job, result in zip(jobs, json.loads(done.stdout.strip().splitlines()[-1])):
            out[job["kind"]].append(result)
    return out


def markdown(result: dict) -> list[str]:
    lines = ["## The mu2 axis from one draw", "",
             "One cell of the paper-scale sweep (V = 2d, N = 2d, T = 8, prefix:3, mean pooling, centered, top 3) over "
             "its 40 values of mu2 (1/10 to 4), in one worker process with one BLAS thread, CPU time. Before: each "
             f"mu2 its own draw and float64 Lanczos solve ({SAMPLED} of the 40 timed per round, the cell's cost is 40 "
             "times their mean); now: one draw and one block Lanczos run on the whole axis (`solve_axis`). Interleaved "
             "rounds, ratio per round (`benchmarks/axis.py`).", "",
             "| d | per task before (s) | cell before (s) | cell now (s) | ratio per round: median | min | max | "
             "Lanczos steps per task before | block steps (passes) per cell now |",
             "|---|---|---|---|---|---|---|---|---|"]
    for a in result["axis"]:
        r = a["rounds"]
        lines.append(f"| {a['d']} | {statistics.median(x['old_task_s'] for x in r):.3f} | "
                     f"{statistics.median(x['old_cell_s'] for x in r):.2f} | {statistics.median(x['new_cell_s'] for x in r):.3f} | "
                     f"{a['ratio']:.1f}x | {min(x['ratio'] for x in r):.1f}x | {max(x['ratio'] for x in r):.1f}x | "
                     f"{a['old_steps']} | {a['axis_passes']} |")
    for p in result["passes"]:
        lines += ["", f"### Table passes per converged eigenpair (d = {p['d']}, mu2 = {p['mu2']:.2f}, top {p['k']}, "
                      f"relative residual {TOL:g})", "",
                  "| method | passes | pairs | passes per pair | CPU s per pair | top-3 rel. diff. |",
                  "|---|---|---|---|---|---|"]
        for name, m in p["methods"].items():
            lines.append(f"| {name} | {m['passes']} | {m['pairs']} | {m['passes_per_pair']:.2f} | {m['seconds_per_pair']:.4f} "
                         f"| {m['rel_diff']:.0e} |")
    return lines


def main(argv=None) -> int:
    """Worker entry point: ``python -m benchmarks.axis --worker JOBS`` prints the results as one JSON list."""
    argv = sys.argv[1:] if argv is None else argv
    if len(argv) != 2 or argv[0] != "--worker":
        print("usage: python -m benchmarks.axis --worker JOBS (run by `python -m benchmarks all`)", file=sys.stderr)
        return 2
    print(json.dumps([worker(job) for job in json.loads(argv[1])]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
