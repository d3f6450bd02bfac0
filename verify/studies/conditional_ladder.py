r"""Monte Carlo of the model against each draw's conditional prediction (issue 24), along a ladder of ``d``.

For each case, at each ``d`` (``V, N`` by :func:`verify.montecarlo.draw.rung`), ``verify mc`` (the command's own
function) gives per seed the signal outlier (the top-``k`` eigenpair most aligned with ``u``) and the prediction
conditional on the draw's tokens (:mod:`derive.vocabulary.conditional`); the table has the Monte Carlo mean, the
mean conditional prediction, and Monte Carlo minus conditional with its Student-t 95% interval, beside the Gaussian
equivalent (``derive spike`` without ``--T``). ``python -m verify.studies.conditional_ladder`` prints the tables of
notes/finite_vocabulary.md.
"""
from __future__ import annotations

import argparse
import json
import sys

__all__ = ["CASES", "run_case", "table", "main"]

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
    """One ``verify mc --json`` document (centered ``S_c``) at size ``d``."""
    from verify.cli import main as verify_main
    from verify.montecarlo.draw import rung

    import contextlib
    import io

    V, N = rung(d, parameters["delta"], parameters["gamma"])
    argv = ["mc", "--d", str(d), "--V", str(V), "--N", str(N), "--T", str(parameters["T"]), "--signs",
            parameters["signs"], "--weights", parameters["weights"], "--mu2", parameters["mu2"], "--seeds", str(seeds),
            "--seed0", str(seed0), "--k", str(parameters["k"]), "--centered", "--digits", "8", "--json"]
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


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--seeds", type=int, default=16)
    p.add_argument("--case", type=int, action="append", help="index into CASES (default: all)")
    args = p.parse_args(argv)
    for i in args.case if args.case is not None else range(len(CASES)):
        name, parameters, sizes = CASES[i]
        rows = [(d, run_case(parameters, d, args.seeds)) for d in sizes]
        print(table(name, rows), flush=True)
        print(flush=True)
        json.dump({"case": name, "rows": rows}, sys.stderr)
        print(file=sys.stderr, flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
