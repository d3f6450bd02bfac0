r"""The model's signal outlier along a ladder of ``d``, against its limit (:mod:`derive.vocabulary.limit.outlier`; the exact
law at ``T = 1``) and its Gaussian equivalent: Monte Carlo of the model (:func:`verify.montecarlo.trials.run_trials`),
centered and raw.

The trials are kept in a JSON-lines file (one line per chunk of seeds), so that a long ladder can be run in pieces
and reported at any time: ``python -m verify.studies.limit_ladder run CASE FILE`` adds the missing chunks,
``python -m verify.studies.limit_ladder report FILE`` prints the tables of notes/finite_vocabulary.md;
``python -m verify.studies.limit_ladder figure CASE PNG`` draws the overlap against ``mu2`` for the case: the model's
limit with its errors, the Gaussian equivalent, and Monte Carlo means with 95% intervals (:data:`FIGURE`).

Which eigenvalue is the signal's: the one, among the top three, whose eigenvector has the largest overlap with ``u``
(the raw ``S`` has the vocabulary mean's outlier too; the other eigenvectors' overlaps are of order ``1/d``).
"""
from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np

from verify.stats import mean_ci

__all__ = ["CASES", "FIGURE", "run", "summary", "figure", "main"]

CASES = {
    "T8": {"T": 8, "weights": "mean", "signs": "prefix:3", "delta": "1/2", "gamma": "2", "mu2": "3/2",
           "sizes": [(300, 200), (600, 200), (1200, 160), (2400, 60)]},
    "T2": {"T": 2, "weights": "mean", "signs": "iid", "delta": "1/2", "gamma": "1/2", "mu2": "2",
           "sizes": [(250, 200), (500, 200), (1000, 160), (2000, 60)]},
    "T1": {"T": 1, "weights": "mean", "signs": "iid", "delta": "1/2", "gamma": "1/2", "mu2": "7/2",
           "sizes": [(1000, 100), (2000, 80), (4000, 40)]},
}
"""The ladders: ``T = 8`` mean pooling, ``prefix:3`` (the issue's case, ``NT/V = 2``); ``T = 2`` mean pooling, iid
(``NT/V = 2``); ``T = 1`` (the issue's case, whose outlier sits 0.07 above a cluster of the bulk). ``sizes``: ``(d,
seeds)``."""

CHUNK = 20

FIGURE = {"limit_grid": (0.5, 0.75, 1.0, 1.25, 1.5, 2.0, 2.5, 3.0), "mc_points": (0.75, 1.0, 1.5, 2.0, 3.0), "d": 1000,
          "seeds": 16}
"""The figure's ``mu2`` values for the limit (seconds each) and for Monte Carlo (one draw per seed, solved along the
whole axis), its dimension and seeds."""


def _chunk(case: str, d: int, index: int, centered: bool) -> dict:
    from fractions import Fraction

    from derive import Model
    from verify.montecarlo.draw import rung
    from verify.montecarlo.trials import run_trials

    c = CASES[case]
    V, N = rung(d, Fraction(c["delta"]), Fraction(c["gamma"]))
    model = Model(d=d, V=V, N=N, T=c["T"], signs=c["signs"], weights=c["weights"], mu2=c["mu2"], centered=centered)
    r = run_trials(model, k=3, seeds=CHUNK, seed0=10_000 * d + index, progress=False)
    return {"case": case, "d": d, "chunk": index, "S": "centered" if centered else "raw", "V": V, "N": N,
            "top_eigenvalues": r.top_eigenvalues.tolist(), "overlaps": r.overlaps.tolist()}


def run(case: str, path, S=("centered", "raw")) -> None:
    """Add to the file ``path`` the chunks of ``case`` it lacks (smallest ``d`` first)."""
    path = Path(path)
    done = set()
    if path.exists():
        for line in path.read_text().splitlines():
            r = json.loads(line)
            done.add((r["case"], r["d"], r["chunk"], r["S"]))
    for d, seeds in CASES[case]["sizes"]:
        for index in range(-(-seeds // CHUNK)):
            for kind in S:
                if (case, d, index, kind) in done:
                    continue
                record = _chunk(case, d, index, kind == "centered")
                with path.open("a") as f:
                    f.write(json.dumps(record) + "\n")
                print(f"{case} d={d} chunk {index} {kind}", file=sys.stderr, flush=True)


def summary(path) -> list[dict]:
    """Per case, ``S`` and ``d``: the signal's eigenvalue and overlap (means with 95% intervals) over the seeds."""
    groups: dict = {}
    for line in Path(path).read_text().splitlines():
        r = json.loads(line)
        key = (r["case"], r["S"], r["d"])
        ev, ov = np.array(r["top_eigenvalues"]), np.array(r["overlaps"])
        pick = ov.argmax(axis=1)
        rows = np.arange(len(pick))
        g = groups.setdefault(key, {"eigenvalue": [], "overlap": [], "on_top": []})
        g["eigenvalue"] += ev[rows, pick].tolist()
        g["overlap"] += ov[rows, pick].tolist()
        g["on_top"] += (pick == 0).tolist()
    out = []
    for (case, S, d), g in sorted(groups.items()):
        out.append({"case": case, "S": S, "d": d, "seeds": len(g["overlap"]),
                    "eigenvalue": mean_ci(g["eigenvalue"]), "overlap": mean_ci(g["overlap"]),
                    "signal_on_top": float(np.mean(g["on_top"]))})
    return out


def figure(case: str, png) -> dict:
    """Draw the centered overlap against ``mu2`` for ``case`` into ``png``; returns the plotted numbers."""
    from fractions import Fraction

    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import mpmath

    import derive
    from verify.montecarlo.trials import run_axis
    from verify.montecarlo.draw import rung

    c = CASES[case]
    m = derive.Model(delta=c["delta"], gamma=c["gamma"], T=c["T"], weights=c["weights"], signs=c["signs"], mu2=1,
                     centered=True)
    limit, gaussian = [], []
    with mpmath.workdps(15):
        for v in FIGURE["limit_grid"]:
            own = derive.spike(m.replace(mu2=repr(v))).sample
            ge = derive.spike(m.replace(mu2=repr(v)), law="gaussian-equivalent").sample
            limit.append((v, float(own.overlap), float(dict(own.errors or ())["overlap"] or 0)))
            gaussian.append((v, float(ge.overlap)))
    d = FIGURE["d"]
    V, N = rung(d, Fraction(c["delta"]), Fraction(c["gamma"]))
    runs = run_axis(m.replace(d=d, V=V, N=N, centered=True), list(FIGURE["mc_points"]), k=3, seeds=FIGURE["seeds"],
                    seed0=0)
    # the signal's eigenvector: the one of the top k most aligned with u
    mc = [(v, *mean_ci(runs.overlaps[:, i, :].max(axis=1))) for i, v in enumerate(FIGURE["mc_points"])]
    fig, ax = plt.subplots(figsize=(6, 3.6))
    ax.plot([g[0] for g in gaussian], [g[1] for g in gaussian], "tab:red", ls="--", label="Gaussian equivalent")
    ax.errorbar([x[0] for x in limit], [x[1] for x in limit], yerr=[x[2] for x in limit], fmt="k-", capsize=2,
                label="the model's limit (quenched cavity populations)")
    ax.errorbar([x[0] for x in mc], [x[1] for x in mc], yerr=[[x[1] - x[2] for x in mc], [x[3] - x[1] for x in mc]],
                fmt="o", color="tab:blue", capsize=3, label=f"Monte Carlo, d = {d}, V = {V}, N = {N}, {FIGURE['seeds']} seeds")
    ax.set_xlabel("mu2")
    ax.set_ylabel("|u_hat^T u|^2 (centered S_c)")
    ax.set_title(f"T = {c['T']} {c['weights']}, {c['signs']}, delta = {c['delta']}, gamma = {c['gamma']} "
                 f"(N T / V = {Fraction(c['delta']) / Fraction(c['gamma']) * c['T']})", fontsize=9)
    ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(png, dpi=110)
    return {"limit": limit, "gaussian": gaussian, "monte_carlo": mc}


def main(argv=None) -> None:
    argv = sys.argv[1:] if argv is None else argv
    if argv and argv[0] == "figure":
        print(json.dumps(figure(argv[1], argv[2])))
        return
    if argv and argv[0] == "run":
        run(argv[1], argv[2], tuple(argv[3:]) or ("centered", "raw"))
        return
    print("| case | S | d | seeds | eigenvalue (95%) | overlap (95%) | signal on top |")
    print("|---|---|---|---|---|---|---|")
    for r in summary(argv[1] if argv and argv[0] == "report" else argv[0]):
        e, o = r["eigenvalue"], r["overlap"]
        print(f"| {r['case']} | {r['S']} | {r['d']} | {r['seeds']} | {e[0]:.4f} [{e[1]:.4f}, {e[2]:.4f}] | "
              f"{o[0]:.4f} [{o[1]:.4f}, {o[2]:.4f}] | {r['signal_on_top']:.2f} |")


if __name__ == "__main__":
    main()
