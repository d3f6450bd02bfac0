"""C8: downstream classification."""
from __future__ import annotations

import numpy as np

from verify.ledger.checks.common import DELTA, GAMMA, T, fmt, rung, scheme_floats
from verify.stats import mean_ci

__all__ = ["check_c8"]


def check_c8(cfg: dict) -> dict:
    """C8: ridge classification accuracy ranks the schemes as alpha/kappa does (paired seeds)."""
    from verify.studies.classification import accuracy_curves

    schemes = {name: scheme_floats(name) for name in ("mean", "causal", "optimal")}
    order = sorted(schemes, key=lambda n: schemes[n][1] / schemes[n][2])
    d = cfg["d"] // 3
    V, N = rung(d, DELTA, GAMMA)
    grid = [0.25, 0.5, 1.0, 2.0]
    seeds = 2 * cfg["seeds"]
    acc = accuracy_curves({n: schemes[n][0] for n in schemes}, grid, d, V, N, T, 3, seeds, 300)
    # Per pair and mu2 the paired difference is "higher", "reversed" or "tied" by its 95% interval;
    # a tie counts as consistent only where the better scheme is saturated (accuracy >= 0.99).
    rows, reversed_, unexplained_ties, separated = [], 0, 0, set()
    for j, mu2 in enumerate(grid):
        row = {"mu2": mu2}
        for n in schemes:
            ci = mean_ci(acc[n][:, j])
            row[n] = {"mean": fmt(ci[0], 4), "ci95": [fmt(ci[1], 4), fmt(ci[2], 4)]}
        for lo, hi in zip(order, order[1:]):
            diff = mean_ci(acc[hi][:, j] - acc[lo][:, j])
            status = "higher" if diff[1] > 0 else "reversed" if diff[2] < 0 else "tied"
            row[f"{hi}-{lo}"] = {"mean": fmt(diff[0], 4), "ci95": [fmt(diff[1], 4), fmt(diff[2], 4)], "status": status}
            reversed_ += status == "reversed"
            unexplained_ties += status == "tied" and acc[hi][:, j].mean() < 0.99
            if status == "higher":
                separated.add((lo, hi))
        rows.append(row)
    ranked = reversed_ == 0 and unexplained_ties == 0 and len(separated) == len(order) - 1
    derived = ("label = shared sign of the prefix (prefix:3, T = 8); N train, N/2 test sequences from the same table; "
               "ridge (C C^T/N + kappa I)^{-1} C y/N with lambda = kappa fixed in advance; no theoretical accuracy "
               "is derived here. Ranking by alpha/kappa: " + " < ".join(
                   f"{n} ({fmt(schemes[n][1] / schemes[n][2], 4)})" for n in order))
    curves = (grid, {n: tuple(np.array([mean_ci(acc[n][:, j])[i] for j in range(len(grid))]) for i in range(3))
                     for n in schemes})
    evidence = {"d": d, "V": V, "N": N, "seeds": seeds, "accuracy": rows,
                "alpha_over_kappa_order": order}
    verdict = "confirmed" if ranked else "refuted" if reversed_ else "inconclusive"
    return {"verdict": verdict, "derived": derived, "evidence": evidence, "artifacts": {"accuracy": curves}}
