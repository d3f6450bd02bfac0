"""C5: the optimal weights."""
from __future__ import annotations

import numpy as np
import sympy as sp

from derive.model import parse_signs
from verify.ledger.checks.common import DELTA, GAMMA, compare, fmt

__all__ = ["check_c5"]


def check_c5(cfg: dict) -> dict:
    """C5: the Rayleigh-quotient identity, random weights against the top eigenvector, prefix closed forms, MC."""
    from derive import optimality as opt

    gap = opt.rayleigh_gap()
    identity = all(sp.simplify((gap.lhs - gap.rhs).subs(opt.T_, n).doit()) == 0 for n in (2, 3, 4))
    rng = np.random.default_rng(5)
    beaten, worst = 0, None
    for spec, n in (("prefix:3", 8), ("suffix:2", 6), ("markov:1/2", 8), ("gauss:3/5", 6)):
        R = np.array(parse_signs(spec).R(n), dtype=float)
        top = np.linalg.eigvalsh(R)[-1]
        q = [(w @ R @ w) / (w @ w) for w in rng.standard_normal((500, n))]
        beaten += sum(x > top * (1 + 1e-12) for x in q)
        worst = max(worst or -np.inf, max(q) / top)
    mean_q, opt_q = opt.mean_block_quotient("prefix"), opt.optimal_block_quotient("prefix")
    excess = sp.factor(opt_q - mean_q)
    # Monte Carlo: the overlap of optimal weights against mean pooling, from the C4 configurations
    runs = [compare(cfg, DELTA, GAMMA, sch, 1.0, seed0=600 + i) for i, sch in enumerate(("mean", "optimal"))]
    mc_better = float(runs[1]["mc_top_overlap"]["mean"]) > float(runs[0]["mc_top_overlap"]["mean"])
    evidence = {"rayleigh_identity_T_2_3_4": identity, "random_weights_tried": 2000,
                "random_weights_beating_lambda_max": int(beaten), "best_random_quotient_over_lambda_max": fmt(worst, 6),
                "prefix_mean_alpha_over_kappa": str(mean_q), "prefix_optimal_alpha_over_kappa": str(opt_q),
                "optimal_minus_mean": str(excess), "mc_overlap_mean_vs_optimal": runs}
    derived = (f"alpha/kappa <= lambda_max(R) with equality iff w is a top eigenvector (Rayleigh); prefix:L: "
               f"optimal {opt_q} vs mean {mean_q}, difference {excess} >= 0, zero only for L = 1 or L = T")
    ok = identity and beaten == 0 and mc_better
    return {"verdict": "confirmed" if ok else "inconclusive", "derived": derived, "evidence": evidence}
