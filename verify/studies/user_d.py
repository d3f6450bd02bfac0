r"""What a user measures at their ``d`` (:mod:`derive.vocabulary.draw.user_d`) held to independent references.

* :func:`ladder`: at one nonzero weight, the method of ``derive spike --d`` (exact draws of the token counts, the rare
  counts above the signal averaged over: :mod:`derive.vocabulary.draw.rare_counts`) against the plain draws of the same
  counts (every count drawn; the reference), on a ladder of ``d`` up to :math:`10^7`, with CPU times;
* :func:`against_sampled`: the plain count draws against the sampled token matrices of
  :mod:`derive.vocabulary.draw.finite_size` (a diagonal ``D``) at small ``d``;
* :func:`against_monte_carlo`: ``derive spike --d`` against Monte Carlo of the model (:func:`verify.montecarlo.trials.run_trials`):
  the top eigenpair's eigenvalue and overlap, the share of trials whose top eigenvector is the one most aligned with
  ``u`` among the top ``k`` (the signal on top), and the overlap of that most aligned eigenvector (the signal's own).

``python -m verify.studies.user_d ladder|sampled|mc`` prints the tables of notes/finite_vocabulary.md.
"""
from __future__ import annotations

import argparse
import resource

import numpy as np

from verify.stats import mean_se

__all__ = ["cpu", "ladder", "against_sampled", "against_monte_carlo", "main"]

ISSUE = dict(delta=1, gamma=1, T=1, weights="mean", signs="iid", mu2=6, centered=False)
"""The issue's point: ``T = 1``, mean, iid, :math:`\\delta = \\gamma = 1`, raw ``S``, :math:`\\mu_2 = 6`."""

CROSSOVER = dict(delta="1/2", gamma=1, T=1, weights="mean", signs="iid", mu2=3, centered=True)
"""A point whose probability on top crosses 1/2 at ``d`` of a few thousand (notes/finite_vocabulary.md, "The top of the
bulk at fixed T"), where Monte Carlo can resolve it."""


def cpu() -> float:
    """CPU seconds of this process so far."""
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


def _model(point: dict, d: int):
    import derive

    return derive.Model(d=d, **{k: str(v) if k in ("delta", "gamma", "mu2") else v for k, v in point.items()})


def _row(r) -> dict:
    return {"d": r.d, "method": r.method, "draws": r.draws,
            **{name: (getattr(r, name).mean, getattr(r, name).error, getattr(r, name).se)
               for name in ("outlier_probability", "eigenvalue", "overlap", "signal_overlap", "top_of_bulk",
                            "mu2_critical")}}


def ladder(point: dict = ISSUE, ds=(10**3, 10**4, 10**5, 10**6, 10**7), draws: int = 512, plain_draws: int = 2048,
           seed: int = 0) -> list[dict]:
    """Per ``d``: the method (``draws``) and the plain draws (``plain_draws``, another seed), each with its CPU time."""
    from derive.vocabulary.draw.rare_counts import count_values
    from derive.vocabulary.draw.sampling import model_sizes
    from derive.vocabulary.draw.user_d import at_dimension, summarize

    rows = []
    for d in ds:
        m = _model(point, d)
        t = cpu()
        method = _row(at_dimension(m, draws, seed))
        method["cpu"] = cpu() - t
        V, N = model_sizes(m)
        t = cpu()
        values, _ = count_values(1.0, V, N, d, point["centered"], float(point["mu2"]), plain_draws, seed + 1,
                                 integrate=False)
        plain = _row(summarize(values, d, V, N, "plain count draws", seed + 1, float(point["mu2"])))
        plain["cpu"] = cpu() - t
        rows.append({"d": d, "method": method, "plain": plain})
    return rows


def against_sampled(point: dict, d: int, draws: int, seed: int = 0) -> dict:
    """The plain count draws and the sampled token matrices (a diagonal ``D``) at ``d``: the per-draw values of each
    (mean and standard error) and their differences in units of the combined standard error."""
    from derive.vocabulary.draw.finite_size import sample_draws
    from derive.vocabulary.draw.rare_counts import count_values
    from derive.vocabulary.draw.sampling import model_sizes
    from derive.vocabulary.draw.values import FIELDS, draw_values

    m = _model(point, d)
    V, N = model_sizes(m)
    mu2 = float(point["mu2"])
    counts, _ = count_values(1.0, V, N, d, point["centered"], mu2, draws, seed, integrate=False)
    matrices = [draw_values(o, mu2, d) for o in sample_draws(m, draws, seed + 1).outliers]
    out = {}
    for j, name in enumerate(FIELDS):
        a, b = (mean_se([v.values[j] for v in vals]) for vals in (counts, matrices))
        out[name] = {"counts": a, "matrices": b, "z": (a[0] - b[0]) / max(np.hypot(a[1], b[1]), 1e-300)}
    return out


def against_monte_carlo(point: dict, d: int, seeds: int, draws: int = 512, k: int = 6, seed0: int = 1,
                        seed: int = 0) -> dict:
    """``derive spike --d`` (:func:`derive.finite_size`) against ``seeds`` Monte Carlo trials at ``d``: per quantity the
    derived mean and error, Monte Carlo's mean and standard error, and the CPU time of each."""
    import derive
    from derive.vocabulary.draw.sampling import model_sizes
    from verify.montecarlo.trials import run_trials

    m = _model(point, d)
    t = cpu()
    r = derive.finite_size(m, draws, seed)
    derived_cpu = cpu() - t
    V, N = model_sizes(m)
    t = cpu()
    mc = run_trials(m.replace(V=V, N=N), k=k, seeds=seeds, seed0=seed0)
    mc_cpu = cpu() - t
    best = np.argmax(mc.overlaps, axis=1)
    measured = {"outlier_probability": mean_se(best == 0), "eigenvalue": mean_se(mc.top_eigenvalues[:, 0]),
                "overlap": mean_se(mc.overlaps[:, 0]),
                "signal_overlap": mean_se(mc.overlaps[np.arange(seeds), best])}
    return {"d": d, "V": V, "N": N, "seeds": seeds, "derived_cpu": derived_cpu, "mc_cpu": mc_cpu,
            "rows": {name: {"derived": (getattr(r, name).mean, getattr(r, name).error), "mc": measured[name]}
                     for name in measured}}


def _fmt(x, e) -> str:
    return f"{x:.4g} ± {e:.2g}"


def main(argv=None) -> None:
    p = argparse.ArgumentParser(prog="python -m verify.studies.user_d", description=__doc__.splitlines()[0])
    p.add_argument("table", choices=("ladder", "sampled", "mc"))
    p.add_argument("--d", type=int, nargs="*", default=None)
    p.add_argument("--draws", type=int, default=512)
    p.add_argument("--seeds", type=int, default=200)
    args = p.parse_args(argv)
    if args.table == "ladder":
        print("| d | method: P on top | top overlap | top eigenvalue | signal overlap | CPU s | plain draws: P on top | "
              "top overlap | top eigenvalue | signal overlap | CPU s |")
        print("|---|---|---|---|---|---|---|---|---|---|---|")
        for row in ladder(ds=tuple(args.d or (10**3, 10**4, 10**5, 10**6, 10**7)), draws=args.draws):
            cells = []
            for side, err in (("method", 1), ("plain", 2)):
                r = row[side]
                cells += [_fmt(r[q][0], r[q][err] if side == "method" else 3 * r[q][2])
                          for q in ("outlier_probability", "overlap", "eigenvalue", "signal_overlap")]
                cells.append(f"{r['cpu']:.0f}")
            print(f"| {row['d']} | " + " | ".join(cells) + " |")
    elif args.table == "sampled":
        for d in args.d or (200, 1000):
            for point in (ISSUE, CROSSOVER):
                out = against_sampled(point, d, args.draws)
                print(d, point["mu2"], {k: (round(v["counts"][0], 4), round(v["matrices"][0], 4), round(v["z"], 2))
                                        for k, v in out.items()})
    else:
        for d in args.d or (1000, 2000):
            out = against_monte_carlo(CROSSOVER, d, args.seeds, args.draws)
            print(f"d = {d} (V = {out['V']}, N = {out['N']}), {out['seeds']} trials: derived {out['derived_cpu']:.0f} "
                  f"CPU s, Monte Carlo {out['mc_cpu']:.0f} CPU s")
            for name, row in out["rows"].items():
                print(f"| {name} | {_fmt(*row['derived'])} | {_fmt(row['mc'][0], 3 * row['mc'][1])} |")


if __name__ == "__main__":
    main()
