r"""The top of the model's bulk at ``T = 1`` against Monte Carlo (derive/vocabulary/limit/topbulk.py): the largest eigenvalue of the
centered ``S_c`` against the eigenvalue :math:`\psi(c_M)` of the draw's most used token, on a ladder of ``d``; and
whether the top eigenvector still carries the signal.

``python -m verify.studies.top_of_bulk`` prints both ladders as markdown (minutes; notes/finite_vocabulary.md).
"""
from __future__ import annotations

import mpmath
import numpy as np
import sympy as sp

from derive.vocabulary.limit.populations import PoissonPopulation
from derive.vocabulary.limit.silverstein import GeneralizedMP
from derive.vocabulary.limit.signal import signal_outlier
from derive.vocabulary.limit.topbulk import first_count_above, signal_on_top_probability, token_eigenvalue, top_of_bulk
from derive import Model
from verify.montecarlo.draw import draw, rung
from verify.montecarlo.trials import solve
from verify.stats import mean_ci

__all__ = ["bulk_top_ladder", "recovery_ladder", "main"]


def _law(delta, gamma) -> GeneralizedMP:
    return GeneralizedMP(sp.Rational(delta), PoissonPopulation(sp.Rational(delta) / sp.Rational(gamma)))


def _trial(d, delta, gamma, mu2, seed, k):
    """One centered trial at ``T = 1``: the largest token count, the top ``k`` eigenvalues and overlaps."""
    V, N = rung(d, delta, gamma)
    data = draw(Model(d=d, V=V, N=N, T=1, signs="iid", mu2=mu2), seed, weights=[1.0])
    trial = solve(data, k, True, "dense" if d <= 2000 else "implicit")
    return int(np.bincount(data.tokens[:, 0]).max()), trial.top_eigenvalues, trial.overlaps


def bulk_top_ladder(delta, gamma, sizes, seeds, seed0: int = 0) -> list[dict]:
    r"""Per ``d``: the mean top eigenvalue of ``S_c`` (no signal) with its 95% interval, the predicted
    :math:`E\,\psi(c_M)` (:func:`derive.vocabulary.limit.topbulk.top_of_bulk`), the mean largest count against its
    predicted mean, and the mean and largest :math:`|\lambda_1 - \psi(c_M)|` given the draw's own ``M``."""
    law = _law(delta, gamma)
    rows = []
    for d, K in zip(sizes, seeds):
        with mpmath.workdps(15):
            theory = top_of_bulk(law, d)
        runs = [_trial(d, delta, gamma, 0.0, np.random.SeedSequence([seed0, d, j]), 1) for j in range(K)]
        counts = np.array([m for m, _, _ in runs])
        top = np.array([ev[0] for _, ev, _ in runs])
        with mpmath.workdps(15):
            psi = np.array([float(token_eigenvalue(law, int(m))) for m in counts])
        mean, lo, hi = mean_ci(top)
        rows.append({"d": d, "seeds": K, "S": "centered", "mc_top": mean, "ci95": [lo, hi],
                     "predicted_top": theory["mean_eigenvalue"], "mc_max_count": float(counts.mean()),
                     "predicted_max_count": theory["mean_count"],
                     "mean_abs_top_minus_psi": float(np.mean(np.abs(top - psi))),
                     "max_abs_top_minus_psi": float(np.max(np.abs(top - psi))),
                     "min_detectable_rel_error": {"top_eigenvalue": (hi - lo) / 2 / mean}})
    return rows


def recovery_ladder(delta, gamma, mu2, sizes, seeds, seed0: int = 0) -> dict:
    r"""Per ``d``: the fraction of draws whose top eigenvalue is the signal's (no token seen :math:`k^*` or more
    times, :func:`derive.vocabulary.limit.topbulk.signal_on_top_probability`), the mean overlap of the top eigenvector, and the mean
    overlap of the eigenvector of the eigenvalue nearest the derived outlier :math:`\ell` (among the top 4)."""
    law = _law(delta, gamma)
    with mpmath.workdps(15):
        spike = signal_outlier(law, sp.Rational(str(mu2)))
        ell, zeta = float(spike.eigenvalue), float(spike.overlap)
        kstar = first_count_above(law, spike.eigenvalue)
    rows = []
    for d, K in zip(sizes, seeds):
        runs = [_trial(d, delta, gamma, float(mu2), np.random.SeedSequence([seed0, d, j]), 4) for j in range(K)]
        token_on_top = np.array([m >= kstar for m, _, _ in runs])
        top_ov = np.array([ov[0] for _, _, ov in runs])
        near = np.array([ov[int(np.argmin(np.abs(ev - ell)))] for _, ev, ov in runs])
        with mpmath.workdps(15):
            p = float(signal_on_top_probability(law, ell, d))
        f = 1 - token_on_top.mean()
        half = 1.96 * np.sqrt(max(f * (1 - f), 1 / K) / K)
        rows.append({"d": d, "seeds": K, "S": "centered", "signal_on_top_mc": f, "signal_on_top_ci95_halfwidth": half,
                     "signal_on_top_predicted": p, "top_overlap": mean_ci(top_ov),
                     "top_overlap_predicted": zeta * p, "nearest_overlap": mean_ci(near),
                     "min_detectable_rel_error": {"signal_on_top": half}})
    return {"delta": str(delta), "gamma": str(gamma), "mu2": str(mu2), "outlier": ell, "overlap": zeta,
            "k_star": kstar, "rows": rows}


def main() -> None:
    """Both ladders of notes/finite_vocabulary.md, as markdown."""
    print("| d | seeds | top eigenvalue (MC, 95%) | predicted E psi(c_M) | max count (MC) | predicted | "
          "mean abs(top - psi(c_M)) | max |")
    print("|---|---|---|---|---|---|---|---|")
    for r in bulk_top_ladder(1, 1, [250, 500, 1000, 2000, 4000], [16, 16, 12, 8, 4]):
        print(f"| {r['d']} | {r['seeds']} | {r['mc_top']:.3f} [{r['ci95'][0]:.3f}, {r['ci95'][1]:.3f}] | "
              f"{r['predicted_top']:.3f} | {r['mc_max_count']:.2f} | {r['predicted_max_count']:.2f} | "
              f"{r['mean_abs_top_minus_psi']:.3f} | {r['max_abs_top_minus_psi']:.3f} |", flush=True)
    rec = recovery_ladder("1/2", 1, "3", [250, 500, 1000, 2000], [32, 32, 24, 16])
    print(f"\nsignal mu2 = {rec['mu2']}: outlier {rec['outlier']:.4f}, overlap {rec['overlap']:.4f}, "
          f"k* = {rec['k_star']}\n")
    print("| d | seeds | signal on top (MC) | predicted | top overlap (MC, 95%) | predicted zeta P | "
          "overlap at the eigenvalue nearest ell (MC, 95%) |")
    print("|---|---|---|---|---|---|---|")
    for r in rec["rows"]:
        t, n = r["top_overlap"], r["nearest_overlap"]
        print(f"| {r['d']} | {r['seeds']} | {r['signal_on_top_mc']:.3f} +- {r['signal_on_top_ci95_halfwidth']:.3f} | "
              f"{r['signal_on_top_predicted']:.3f} | {t[0]:.3f} [{t[1]:.3f}, {t[2]:.3f}] | "
              f"{r['top_overlap_predicted']:.3f} | {n[0]:.3f} [{n[1]:.3f}, {n[2]:.3f}] |", flush=True)


if __name__ == "__main__":
    main()
