r"""The model's signal outlier along a ladder of ``d``, against its limit (:mod:`derive.vocabulary.outlier`; the exact
law at ``T = 1``) and its Gaussian equivalent: Monte Carlo of the model (:func:`verify.montecarlo.trials.run_trials`),
centered and raw.

The trials are kept in a JSON-lines file (one line per chunk of seeds), so that a long ladder can be run in pieces
and reported at any time: ``python -m verify.studies.limit_ladder run CASE FILE`` adds the missing chunks,
``python -m verify.studies.limit_ladder report FILE`` prints the tables of notes/finite_vocabulary.md.

Which eigenvalue is the signal's: the one, among the top three, whose eigenvector has the largest overlap with ``u``
(the raw ``S`` has the vocabulary mean's outlier too; the other eigenvectors' overlaps are of order ``1/d``).
"""
from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np

from verify.stats import mean_ci

__all__ = ["CASES", "run", "summary", "main"]

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


def _chunk(case: str, d: int, index: int, centered: bool) -> dict:
    from fractions import Fraction

    from derive.model.attention import pooling
    from verify.montecarlo.draw import rung
    from verify.montecarlo.trials import run_trials

    c = CASES[case]
    V, N = rung(d, Fraction(c["delta"]), Fraction(c["gamma"]))
    w = pooling(c["weights"], c["T"], c["signs"]).floats()
    r = run_trials(d, V, N, c["T"], c["signs"], w, float(Fraction(c["mu2"])), centered=centered, k=3, seeds=CHUNK,
                   seed0=10_000 * d + index, progress=False)
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


def main(argv=None) -> None:
    argv = sys.argv[1:] if argv is None else argv
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
