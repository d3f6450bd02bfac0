"""C5: the optimal weights."""
from __future__ import annotations

import numpy as np
import sympy as sp

from derive.model.spec import parse_signs
from derive.symbols import L as L_, T as T_
from verify.comparison import compare, observe_sample
from verify.montecarlo.observables import TABLE_CONTROLS
from verify.ledger.checks.common import AGREEMENT_LEVEL, DELTA, GAMMA, SIGNS, T, scheme_floats, theory
from verify.ledger.records import decide, setting

__all__ = ["MC_MU2", "evidence_c5", "rule_c5", "check_c5"]

MC_MU2 = 1.5
"""The signal strength of the paired Monte Carlo of optimal weights against mean pooling (``prefix:3``)."""

CORRECTED = ("the w maximizing alpha/kappa is the top eigenvector of R (Rayleigh), normalized to sum 1 where its sum "
             "is not zero; for prefix:L it puts equal mass on the first L positions and strictly beats mean pooling "
             "for 1 < L < T; at L = T it is mean pooling and at L = 1 (R = I) every weight vector ties")


def _paired_gain(cfg: dict) -> dict:
    """The overlap of optimal weights minus that of mean pooling on the same draws (tables and tokens depend on
    the seed only), extrapolated and compared with the derived gain."""
    rungs = []
    for d, K in ((cfg["compare_d"], cfg["trials"]), (cfg["compare_d"] // cfg["coarse"], 2 * cfg["trials"])):
        obs = {}
        for scheme in ("optimal", "mean"):
            w, a, _ = scheme_floats(scheme)
            obs[scheme] = observe_sample(d, DELTA, GAMMA, T, SIGNS, w, a, MC_MU2, centered=True, seeds=K, seed0=600)
        rungs.append({"d": d, "seeds": K, "gain": obs["optimal"]["signal_overlap"] - obs["mean"]["signal_overlap"],
                      # the table's controls are the same for both poolings: keep one copy
                      "controls": np.hstack([obs["optimal"]["controls"], obs["mean"]["controls"][:, len(TABLE_CONTROLS):]])})
    optimal, mean = theory(DELTA, GAMMA, "optimal", MC_MU2), theory(DELTA, GAMMA, "mean", MC_MU2)
    gain = float(optimal.sample.overlap - mean.sample.overlap)
    out = compare(rungs[0], rungs[1], {"gain": (gain, 1)}, AGREEMENT_LEVEL)
    out.update({"S": "centered", "law": optimal.law, "level": "sample", "mu2": MC_MU2, "T": T, "signs": SIGNS,
                "weights": ["optimal", "mean"], "delta": str(DELTA), "gamma": str(GAMMA),
                "quantity": "overlap(optimal) - overlap(mean), paired draws"})
    return out


def evidence_c5(cfg: dict) -> dict:
    """The Rayleigh identity, random weights against the top eigenvector, the prefix closed forms over
    ``T <= 12``, and the paired Monte Carlo."""
    from derive.model import optimality as opt

    gap = opt.rayleigh_gap()
    identity = all(sp.simplify((gap.lhs - gap.rhs).subs(opt.T_, n).doit()) == 0 for n in (2, 3, 4))
    rng = np.random.default_rng(5)
    beaten, worst = 0, 0.0
    for spec, n in (("prefix:3", 8), ("suffix:2", 6), ("markov:1/2", 8), ("gauss:3/5", 6)):
        R = np.array(parse_signs(spec).R(n), dtype=float)
        top = np.linalg.eigvalsh(R)[-1]
        q = np.array([(w @ R @ w) / (w @ w) for w in rng.standard_normal((500, n))])
        beaten += int(np.sum(q > top * (1 + 1e-12)))
        worst = max(worst, float(q.max() / top))
    excess = sp.factor(opt.optimal_block_quotient("prefix") - opt.mean_block_quotient("prefix"))
    ties = {n: [L for L in range(1, n + 1) if excess.subs({T_: n, L_: L}) == 0] for n in range(2, 13)}
    return {"rayleigh_identity_T_2_3_4": identity, "random_weights_tried": 2000,
            "random_weights_beating_lambda_max": beaten, "best_random_quotient_over_lambda_max": worst,
            "prefix_optimal_minus_mean": str(excess), "prefix_L_where_optimal_ties_mean": ties,
            "mc_gain": _paired_gain(cfg)}


def rule_c5(evidence: dict) -> dict:
    """The verdict of C5 from its evidence alone.

    * refuted: a weight vector beats the top eigenvalue of ``R`` (a counterexample to the maximization), or the
      Monte Carlo shows mean pooling significantly better than the optimal weights;
    * inconclusive: the Rayleigh identity does not hold (the derivation), or the Monte Carlo gain disagrees with
      the derived one;
    * corrected: all holds, but on ``prefix:L`` the optimal weights only tie mean pooling for some ``L``
      (``L = 1``, ``L = T``), so "beats mean pooling" needs ``1 < L < T``;
    * confirmed: all holds and the optimal weights beat mean pooling for every ``L``.
    """
    mc = evidence.get("mc_gain") or {}
    q = (mc.get("quantities") or {}).get("gain")
    if evidence.get("random_weights_beating_lambda_max", 0) > 0:
        return decide("refuted", "a weight vector beats the top eigenvalue of R")
    if q is None or not evidence.get("rayleigh_identity_T_2_3_4"):
        return decide("inconclusive", "the Rayleigh identity or the Monte Carlo is missing")
    if q["ci"][1] < 0:
        return decide("refuted", "mean pooling recovers significantly more than the optimal weights")
    if not q["agree"]:
        return decide("inconclusive", "the paired Monte Carlo gain disagrees with the derived one")
    checked = sorted(map(int, evidence.get("prefix_L_where_optimal_ties_mean") or {}))
    exact = f"exact for T = {checked[0]} to {checked[-1]}, in the limit d -> oo" if checked else "exact"
    paired = setting([mc])
    paired = f"; the paired Monte Carlo ({paired}) agrees" if paired else ""
    ties = {n: L for n, L in (evidence.get("prefix_L_where_optimal_ties_mean") or {}).items() if L}
    if ties:
        some = max(ties.items(), key=lambda item: int(item[0]))
        return decide("corrected", f"optimal weights only tie mean pooling on prefix:L for L = "
                                   f"{', '.join(map(str, some[1]))} at T = {some[0]} (and likewise for every T checked; "
                                   f"{exact}){paired}", CORRECTED)
    return decide("confirmed", f"no weight beats the top eigenvector and it beats mean pooling on every prefix:L "
                               f"({exact}){paired}")


def check_c5(cfg: dict) -> dict:
    """C5: the optimal weights."""
    evidence = evidence_c5(cfg)
    return {**rule_c5(evidence), "derived": CORRECTED, "evidence": evidence}
