"""C4: the sample outlier and overlap."""
from __future__ import annotations

import sympy as sp

from verify.ledger.checks.common import DELTA, GAMMA, compare

__all__ = ["check_c4"]


def check_c4(cfg: dict) -> dict:
    """C4: the sample outlier and overlap of S_c for three configurations and every weight scheme."""
    runs = []
    for i, (delta, gamma, mu2) in enumerate([(DELTA, GAMMA, 1.5), (DELTA, GAMMA, 3.0), (1, sp.Rational(1, 2), 3.0)]):
        for j, scheme in enumerate(("mean", "causal", "optimal")):
            runs.append(compare(cfg, delta, gamma, scheme, mu2, seed0=100 + 10 * i + j))
    derived = ("sample outlier psi(ell(theta)) = ell(1 - gamma + gamma*ell/theta) with ell(theta) the population "
               "outlier, theta = alpha*(mu2 + delta); overlap zeta(theta)*[ell psi'/psi]*mu2/(mu2+delta); it exists iff "
               "theta exceeds the positive root of -x^3 + kappa^2(delta+gamma+delta*gamma)x + 2 kappa^3 delta gamma, "
               "x = theta - delta*kappa (Gaussian-equivalent sample level; see notes/spikes.md)")
    verdict = "confirmed" if all(r["agree"] for r in runs) else "inconclusive"
    return {"verdict": verdict, "derived": derived, "evidence": {"runs": runs}}
