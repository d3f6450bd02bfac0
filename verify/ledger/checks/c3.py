"""C3: the population threshold, claimed against derived, at a point where they disagree."""
from __future__ import annotations

import mpmath
import sympy as sp

from derive.gaussian import outliers as O
from derive.gaussian import spikes
from derive.symbols import alpha, delta, kappa
from verify.comparison import TW_ORDER
from verify.ledger.checks.common import DELTA, POINT_TARGET, SIGNS, T, pool, population_comparison, resolves
from verify.ledger.records import decide, setting
from verify.ledger.statements import c3_corrected, claimed_mu2_critical

__all__ = ["CLAIMED_MU2_CRITICAL", "POINTS", "SHARP", "corrected", "evidence_c3", "rule_c3", "check_c3"]

CLAIMED_MU2_CRITICAL = claimed_mu2_critical()
"""The claim as stated: an outlier iff :math:`\\rho = \\alpha\\mu_2/\\kappa > \\delta + \\sqrt\\delta`
(:mod:`verify.ledger.statements`, which ``verify formula`` reads too)."""

POINTS = (0.2, 1.5)
"""Optimal weights on ``prefix:3`` (``alpha/kappa = 3``), ``delta = 1/2``: at ``mu2 = 0.2`` the claim says no
outlier (``rho = 0.6 < 1.207``) and the derivation says one; at ``1.5`` both say one."""

corrected = c3_corrected
"""The corrected statement (:func:`verify.ledger.statements.c3_corrected`)."""


SHARP = ("This transition is sharp in the model itself: at the population level (N = oo) every token is drawn "
         "infinitely often in proportion to its probability and the bulk is the Gaussian table's own, kappa MP_delta, "
         "bounded, so the outlier leaves it at the same mu2 at every d (up to Tracy-Widom "
         "fluctuations of order d^(-2/3)); the sample-level transition of the model's own S is not: it moves with d "
         "(C2)")
"""Whether C3's transition is sharp in the model's own law (issue 42): the population level has a bounded bulk."""


def evidence_c3(cfg: dict) -> dict:
    """The derived threshold against the claimed one, symbolically and by the exact covariance of sampled tables
    (the population level), each point compared with both the claim's and the derivation's predictions."""
    derived_mu2 = sp.simplify(spikes.critical_mu2().subs(spikes.theta, spikes.population_threshold()))
    gap = sp.simplify(CLAIMED_MU2_CRITICAL - derived_mu2)
    p = pool("optimal")
    points = []
    for i, m in enumerate(POINTS):
        with mpmath.workdps(30):
            edge = O.population_right_edge(DELTA, p.kappa)
        # the claim's prediction on the same draws where it says no outlier: the top eigenvalue at the edge and
        # its overlap vanishing; where it says one, it does not locate it, so only the presence is compared
        no_outlier = {"top_eigenvalue": (edge, TW_ORDER), "top_overlap": (0, 1)}
        run = population_comparison(cfg, DELTA, p, m, seed0=300 + i,
                                    alternatives={"claim_no_outlier": no_outlier})
        claimed = CLAIMED_MU2_CRITICAL.subs({alpha: p.alpha, kappa: p.kappa, delta: DELTA})
        run.update({"T": T, "weights": "optimal", "signs": SIGNS})
        run["claimed_outlier"] = bool(sp.Rational(str(m)) > claimed)
        run["claim_no_outlier_fits"] = run["alternatives"]["claim_no_outlier"]["agree"]
        points.append(run)
    return {"symbolic": {"derived_mu2_critical": str(derived_mu2), "claimed_mu2_critical": str(CLAIMED_MU2_CRITICAL),
                         "claimed_minus_derived": str(gap), "identical": gap == 0},
            "points": points}


def rule_c3(evidence: dict) -> dict:
    """The verdict of C3 from its evidence alone.

    At each point the Monte Carlo either shows an outlier (the derived outlier fits, or the claim's "no outlier"
    does not) or shows none. The claim fits a point when it predicts what is seen; the derivation fits when its
    comparison agrees.

    * inconclusive: no point where the claim and the derivation disagree about the outlier, a point whose
      comparison cannot resolve ``POINT_TARGET``, or the Monte Carlo fits neither "outlier" nor "no outlier" at some
      point;
    * confirmed: the claim fits every point;
    * corrected: the claim misses a point and the derivation fits every point;
    * refuted: the claim misses a point and the derivation misses one too.
    """
    points = evidence.get("points") or []
    if not any(p["claimed_outlier"] != p["predicted_outlier"] for p in points):
        return decide("inconclusive", "no point separates the claimed threshold from the derived one")
    # the population level: gamma plays no part
    where = setting([{"T": p.get("T"), "weights": p.get("weights"), "d": p.get("d"), "delta": p.get("delta")}
                     for p in points])
    where = f" ({where})" if where else ""
    weak = [str(p["mu2"]) for p in points if not resolves(p, POINT_TARGET)]
    if weak:
        return decide("inconclusive", f"too little power at mu2 = {', '.join(weak)}{where}")
    seen = []
    for p in points:
        outlier, none = p["predicted_outlier"] and p["agree"], p["claim_no_outlier_fits"]
        if outlier == none:
            return decide("inconclusive", f"at mu2 = {p['mu2']}{where} the Monte Carlo fits neither an outlier nor none")
        seen.append(outlier)
    claim_fits = all(p["claimed_outlier"] == s for p, s in zip(points, seen))
    derived_fits = all(p["agree"] for p in points)
    if claim_fits:
        return decide("confirmed", f"the outlier appears exactly where the claimed threshold says{where}")
    missed = ", ".join(str(p["mu2"]) for p, s in zip(points, seen) if p["claimed_outlier"] != s)
    if derived_fits:
        return decide("corrected", f"at mu2 = {missed}{where} the claim says no outlier and Monte Carlo shows the "
                                   "derived one", corrected())
    return decide("refuted", f"at mu2 = {missed}{where} the claim misses the Monte Carlo, and so does the derivation")


def check_c3(cfg: dict) -> dict:
    """C3: the population threshold."""
    evidence = evidence_c3(cfg)
    return {**rule_c3(evidence), "derived": corrected() + ". " + SHARP, "evidence": evidence}
