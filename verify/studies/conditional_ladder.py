r"""Monte Carlo of the model against each draw's conditional prediction (issue 24), along a ladder of ``d``.

For each case, at each ``d`` (``V, N`` by :func:`verify.montecarlo.draw.rung`), ``verify mc`` (the command's own
function) gives per seed the signal outlier (the top-``k`` eigenpair most aligned with ``u``) and the prediction
conditional on the draw's tokens (:mod:`derive.vocabulary.draw.outliers`); the table has the Monte Carlo mean, the
mean conditional prediction, and Monte Carlo minus conditional with its Student-t 95% interval, beside the Gaussian
equivalent (``derive spike`` without ``--T``). ``python -m verify.studies.conditional_ladder`` prints the tables of
notes/finite_vocabulary.md.
"""
from __future__ import annotations

import argparse
import json
import sys
from fractions import Fraction

from verify.stats import mean_se

__all__ = ["CASES", "run_case", "table", "prediction_ladder", "extrapolate", "ladder_table", "main"]

CASES = (
    ("T = 1, delta = gamma = 1/2, mu2 = 7/2", dict(T=1, weights="mean", signs="iid", delta="1/2", gamma="1/2",
                                                    mu2="7/2", k=8), (1000, 2000, 4000)),
    ("T = 2 mean, iid, delta = gamma = 1/2 (N T / V = 2), mu2 = 3", dict(T=2, weights="mean", signs="iid",
                                                                          delta="1/2", gamma="1/2", mu2="3", k=4),
     (500, 1000, 2000)),
    ("T = 8 mean, prefix:3, delta = 1/2, gamma = 2 (N T / V = 2), mu2 = 3/2",
     dict(T=8, weights="mean", signs="prefix:3", delta="1/2", gamma="2", mu2="3/2", k=4), (500, 1000, 2000)),
)
"""``(name, parameters, sizes)``: the ``T = 1`` case of the issue and ``T = 2``, ``8`` at ``N T / V = 2``, centered."""


def run_case(parameters: dict, d: int, seeds: int, seed0: int = 0) -> dict:
    """One ``verify mc --json`` document at size ``d`` (``S_c`` unless ``parameters`` says ``centered=False``; its
    ``mask`` and ``k``, default 4, if given), its theory the Gaussian equivalent: the studies read the draws'
    conditional predictions, and the model's limit, if they need it, from :func:`derive.spike`."""
    from verify.cli import main as verify_main
    from verify.montecarlo.draw import rung

    import contextlib
    import io

    V, N = rung(d, Fraction(parameters["delta"]), Fraction(parameters["gamma"]))
    argv = ["mc", "--d", str(d), "--V", str(V), "--N", str(N), "--T", str(parameters["T"]), "--signs",
            parameters["signs"], "--weights", parameters["weights"], "--mu2", parameters["mu2"], "--seeds", str(seeds),
            "--seed0", str(seed0), "--k", str(parameters.get("k", 4)), "--law", "gaussian-equivalent", "--digits", "8",
            "--json"]
    argv += ["--mask", parameters["mask"]] if "mask" in parameters else []
    argv += ["--centered"] if parameters.get("centered", True) else []
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        status = verify_main(argv)
    if status:
        raise RuntimeError(f"verify mc exited with {status}")
    return json.loads(out.getvalue())


def _mean(values) -> float:
    xs = [float(x) for x in values if x is not None]
    return sum(xs) / len(xs) if xs else float("nan")


def table(name: str, rows: list) -> str:
    """Markdown: per ``d`` the Monte Carlo mean, the mean conditional prediction and Monte Carlo minus conditional with
    its 95% interval, for the eigenvalue and the overlap; the Gaussian equivalent in the heading."""
    ge = rows[0][1]["theory"]["sample"]
    said = (f"eigenvalue {float(ge['eigenvalue']):.4f}, overlap {float(ge['overlap']):.4f}" if ge["outlier"]
            else "no outlier")
    lines = [f"**{name}** (Gaussian equivalent: {said})", "",
             "| d | seeds | MC eigenvalue | conditional | MC - conditional [95%] | MC overlap | conditional | "
             "MC - conditional [95%] |", "|---|---|---|---|---|---|---|---|"]
    for d, doc in rows:
        c = doc["conditional"]
        diff = c["mc_minus_conditional"]
        cells = [str(d), str(len(c["per_seed"]))]
        for key in ("eigenvalue", "overlap"):
            mc = _mean(c["mc_signal"][key])
            pred = _mean(seed[key] for seed in c["per_seed"])
            m = diff[key]
            lo, hi = (float(x) if x is not None else float("nan") for x in m["ci95"])
            cells += [f"{mc:.4f}", f"{pred:.4f}", f"{float(m['mean']):+.4f} [{lo:+.4f}, {hi:+.4f}]"]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def prediction_ladder(parameters: dict, sizes) -> list:
    """The mean over draws of the conditional overlap at each ``(d, seeds)`` of ``sizes`` (seed0 = d), with its
    standard error: ``[(d, seeds, mean, se), ...]``."""
    out = []
    for d, seeds in sizes:
        values = [float(s["overlap"]) for s in run_case(parameters, d, seeds, seed0=d)["conditional"]["per_seed"]]
        out.append((d, seeds, *mean_se(values)))
    return out


def extrapolate(ladder) -> tuple[float, float]:
    """The weighted least-squares fit ``mean = L + b/d`` over the ladder: ``(L, its standard error)``."""
    import numpy as np

    d, y, se = (np.array([row[i] for row in ladder], dtype=float) for i in (0, 2, 3))
    X, W = np.c_[np.ones_like(d), 1 / d], np.diag(1 / se**2)
    cov = np.linalg.inv(X.T @ W @ X)
    return float((cov @ X.T @ W @ y)[0]), float(cov[0, 0] ** 0.5)


def ladder_table(name: str, parameters: dict, ladder) -> str:
    """Markdown: the ladder of mean conditional overlaps, its ``1/d`` extrapolation, the model's limit (``derive spike
    --T``) and the Gaussian equivalent, each with its distance to the extrapolation in standard errors."""
    import mpmath

    import derive

    m = derive.Model(delta=parameters["delta"], gamma=parameters["gamma"], T=parameters["T"],
                     weights=parameters["weights"], signs=parameters["signs"], mu2=parameters["mu2"], centered=True)
    with mpmath.workdps(15):
        own, ge = derive.spike(m).sample, derive.spike(m, law="gaussian-equivalent").sample
    L, se = extrapolate(ladder)
    limit = f"{float(own.overlap):.4f}" + (f" ± {float(dict(own.errors)['overlap']):.4f}" if own.errors else "")
    lines = [f"**{name}**", "", "| d | seeds | mean conditional overlap ± se |", "|---|---|---|"]
    lines += [f"| {d} | {n} | {mean:.4f} ± {s:.4f} |" for d, n, mean, s in ladder]
    lines += ["", f"Extrapolated (L + b/d): {L:.4f} ± {se:.4f}; the model's limit {limit} "
                  f"({(L - float(own.overlap)) / se:+.1f} se); the Gaussian equivalent {float(ge.overlap):.4f} "
                  f"({(L - float(ge.overlap)) / se:+.1f} se)."]
    return "\n".join(lines)


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--seeds", type=int, default=16)
    p.add_argument("--case", type=int, action="append", help="index into CASES (default: all)")
    p.add_argument("--ladder", default=None, help="d:seeds,... : the mean conditional overlap along these sizes "
                                                  "against the model's limit and the Gaussian equivalent")
    args = p.parse_args(argv)
    for i in args.case if args.case is not None else range(len(CASES)):
        name, parameters, sizes = CASES[i]
        if args.ladder:
            sizes = [tuple(int(x) for x in item.split(":")) for item in args.ladder.split(",")]
            print(ladder_table(name, parameters, prediction_ladder(parameters, sizes)), flush=True)
            print(flush=True)
            continue
        rows = [(d, run_case(parameters, d, args.seeds)) for d in sizes]
        print(table(name, rows), flush=True)
        print(flush=True)
        json.dump({"case": name, "rows": rows}, sys.stderr)
        print(file=sys.stderr, flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
