"""C1: the bulk law."""
from __future__ import annotations

import numpy as np
import sympy as sp

from derive import bulk, tokenreuse
from verify.ledger.checks.common import DELTA, GAMMA, SIGNS, T, ks_distance, pool, fmt, scheme_floats, theory, trials
from verify.montecarlo.draw import rung
from verify.stats import mean_ci

__all__ = ["check_c1", "check_c1_symbolic"]


def check_c1(cfg: dict) -> dict:
    """C1: exact moments of the true bulk vs the claimed law; ESD vs the claimed density; T = 1 token counts."""
    sym = check_c1_symbolic()
    d = cfg["d"]
    V, N = rung(d, DELTA, GAMMA)
    hist, panels = {}, []
    for scheme in ("mean", "causal", "optimal"):
        w, a, k = scheme_floats(scheme)
        kappa = pool(scheme).kappa
        _, _, spectra = trials(cfg["seeds"], 11, d, V, N, T, SIGNS, w, 1.5, centered=True)
        dist = [ks_distance(ev, DELTA, GAMMA, kappa, 1) for ev in spectra]
        th = theory(DELTA, GAMMA, scheme, "1.5")
        x = np.linspace(0, 1.15 * float(spectra[0][0]), 600)
        panels.append({"scheme": scheme, "d": d, "eigenvalues": spectra[0], "x": x,
                       "density": bulk.density_float(DELTA, GAMMA, kappa, x),
                       "outlier": float(th.sample.eigenvalue) if th.sample.outlier else None})
        # KS of an ESD against its limit is O(1/d) (rigidity); measured d*KS = 2.3-3.4 for d = 300..1200.
        hist[scheme] = {"kappa": fmt(k), "ks_times_d": [round(x * d, 2) for x in dist], "bound_times_d": 6,
                        "pass": bool(max(dist) < 6 / d)}
    # T = 1: the bulk is MP_delta boxtimes (token-count law); its 4th moment given the counts is exact.
    t1 = []
    for child in np.random.SeedSequence(13).spawn(cfg["seeds"]):
        _, _, spectra = trials(1, int(child.generate_state(1)[0]), d, V, N, 1, "iid", [1.0], 0.0)
        t1.append(float(np.mean(spectra[0] ** 4)))
    m4_claim = float(tokenreuse.bulk_moments("claimed")[3].subs({tokenreuse.delta: DELTA, tokenreuse.gamma: GAMMA}))
    m4_exact = float(tokenreuse.bulk_moments("T=1")[3].subs({tokenreuse.delta: DELTA, tokenreuse.gamma: GAMMA}))
    ci = mean_ci(t1)
    evidence = {"symbolic": sym, "esd_vs_claimed_density": hist,
                "T1_fourth_moment": {"mc_mean": fmt(ci[0]), "ci95": [fmt(ci[1]), fmt(ci[2])],
                                     "claimed": fmt(m4_claim), "exact_T1": fmt(m4_exact), "d": d}}
    exact_differs = sym["fourth_moment_excess"] != "0" and sym["first_three_agree"]
    corrected = ("the bulk of S is MP_delta boxtimes nu_D (in V-space), nu_D the spectral law of the sparse "
                 "token matrix D = (V/N) A A^T, not kappa*(MP_delta boxtimes MP_gamma): the two agree in the first "
                 "three moments and differ from the fourth on (at T = 1 by delta*gamma^2, with kappa = 1), so the "
                 "shape depends on the weights beyond kappa. kappa*(MP_delta boxtimes MP_gamma) is its "
                 "Gaussian-equivalent approximation, within O(1/d) in Kolmogorov distance of the ESD for spread "
                 "weights (mean pooling, T = 8); for concentrated weights (causal, optimal) d*KS is reported and "
                 "may grow with d")
    # Spread weights (mean pooling) must follow the claimed law within the O(1/d) bound; concentrated
    # weights may not, since the true law depends on the weights beyond kappa (reported, not required).
    if exact_differs and hist["mean"]["pass"]:
        return {"verdict": "corrected", "derived": corrected, "evidence": evidence, "corrected": corrected,
                "artifacts": {"spectra": panels}}
    return {"verdict": "inconclusive", "derived": corrected, "evidence": evidence, "artifacts": {"spectra": panels}}


def check_c1_symbolic() -> dict:
    """The exact T = 1 bulk moments against the claimed law's (used by the C1 check)."""
    claimed, exact = tokenreuse.bulk_moments("claimed"), tokenreuse.bulk_moments("T=1")
    return {"claimed_moments": [str(m) for m in claimed], "exact_T1_moments": [str(m) for m in exact],
            "first_three_agree": all(sp.simplify(a - b) == 0 for a, b in zip(claimed[:3], exact[:3])),
            "fourth_moment_excess": str(tokenreuse.fourth_moment_excess())}
