"""C3: the population threshold."""
from __future__ import annotations

import mpmath
import numpy as np
import sympy as sp

from derive import spikes
from derive.outliers import outliers_at
from verify.ledger.checks.common import fmt
from verify.montecarlo.population import population_covariance

__all__ = ["check_c3"]


def check_c3(cfg: dict) -> dict:
    """C3: the population threshold, symbolic comparison and exact covariances of sampled tables."""
    a, k, dl, m2 = (sp.Symbol(n, positive=True) for n in ("alpha", "kappa", "delta", "mu2"))
    th_c = spikes.population_threshold().subs({spikes.kappa: k, spikes.delta: dl})
    derived_mu2 = sp.simplify(th_c / a - dl)
    claimed_mu2 = sp.simplify(k * (dl + sp.sqrt(dl)) / a)
    gap = sp.simplify(claimed_mu2 - derived_mu2)
    # A point between the two thresholds: optimal weights on prefix:3 (alpha/kappa = 3).
    alpha, kappa, delta, mu2 = 1.0, 1 / 3, 0.5, 0.2
    with mpmath.workdps(30):
        o = outliers_at(sp.Rational(1, 2), 0, 1, sp.Rational(1, 3), sp.Rational(1, 5))
    d = cfg["d"]
    V = int(d / delta) // 2 * 2
    rng = np.random.default_rng(20260502)
    top, second, overlap = [], [], []
    for _ in range(cfg["tables"]):
        ev, U = np.linalg.eigh(population_covariance(rng, d, V, alpha, kappa, 1.0, mu2))
        ev, U = ev[::-1], U[:, ::-1]
        # the mean spike (W^2 delta = 1/2) is also above threshold: the signal is the eigenvector nearer u
        j = int(np.argmax(U[0, :2] ** 2))
        top.append(ev[j])
        second.append(ev[2])
        overlap.append(U[0, j] ** 2)
    edge = float(o.population_right_edge)
    predicted = float(o.population.eigenvalue)
    se = np.std(top, ddof=1) / np.sqrt(len(top))
    bulk_top = float(np.mean(second))
    outlier_seen = min(top) > edge + 0.5 * (predicted - edge) and bulk_top < edge + 0.5 * (predicted - edge)
    claimed_says_outlier = alpha * mu2 / kappa > delta + np.sqrt(delta)
    agrees = abs(np.mean(top) - predicted) < 4 * se + 5 / d
    evidence = {
        "symbolic": {"derived_mu2_critical": str(sp.Max(0, derived_mu2)), "claimed_mu2_critical": str(claimed_mu2),
                     "claimed_minus_derived": str(gap)},
        "table_covariance_mc": {"d": d, "V": V, "tables": cfg["tables"], "alpha": alpha, "kappa": fmt(kappa),
                                "delta": delta, "mu2": mu2, "rho": fmt(alpha * mu2 / kappa),
                                "delta_plus_sqrt_delta": fmt(delta + np.sqrt(delta)),
                                "claimed_outlier": bool(claimed_says_outlier),
                                "predicted_outlier": o.population.outlier,
                                "predicted_eigenvalue": fmt(predicted, 10),
                                "observed_eigenvalue_mean": fmt(np.mean(top)), "observed_se": fmt(se, 3),
                                "bulk_edge": fmt(edge, 10),
                                "observed_next_eigenvalue": fmt(bulk_top),
                                "predicted_overlap": fmt(o.population.overlap, 10),
                                "observed_overlap_mean": fmt(np.mean(overlap))},
    }
    corrected = ("an outlier exists iff alpha*(mu2 + delta)/kappa > delta + sqrt(delta), i.e. "
                 "rho > sqrt(delta) + delta*(1 - alpha/kappa): the class-mean noise Z s/V of the finite "
                 "vocabulary adds alpha*delta to the spike; above it the eigenvector is not aligned with u: "
                 "|<u_hat,u>|^2 -> zeta(theta)*mu2/(mu2+delta) < 1")
    if gap == dl and outlier_seen and not claimed_says_outlier and agrees:
        verdict = "corrected"
    elif gap == 0 and outlier_seen == claimed_says_outlier:
        verdict = "confirmed"
    else:
        verdict = "inconclusive"
    return {"verdict": verdict, "derived": corrected, "evidence": evidence, "corrected": corrected}
