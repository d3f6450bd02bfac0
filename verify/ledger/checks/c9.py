"""C9: the simulations taken together: histograms on a ladder of ``d``, outliers and thresholds from C4 and C2."""
from __future__ import annotations

import functools
import math

import numpy as np
from scipy import stats

from verify.ledger.checks.c2 import fit_outcome
from verify.ledger.checks.common import (AGREEMENT_LEVEL, DELTA, FULL, GAMMA, POINT_TARGET, SIGNS, TARGET, T,
                                         bulk_cdf, margin, outcome, pool, scheme_floats, theory, trials)
from verify.ledger.records import decide, setting
from verify.montecarlo.draw import rung
from verify.studies.vocabulary import ks_distance

__all__ = ["HISTOGRAMS", "RATE_SPLIT", "histogram_ladder", "evidence_c9", "rule_c9", "check_c9"]

HISTOGRAMS = (("mean", True), ("causal", True), ("optimal", True), ("mean", False))
"""The spectra whose histograms are compared with the claimed bulk law: ``(scheme, centered)`` at ``mu2 = 1.5``."""

RATE_SPLIT = 0.5
r"""Where the fitted decay rate of the Kolmogorov distance splits "follows the law" from "departs from it".
If the ESD converges to the law, eigenvalue rigidity puts every bulk eigenvalue within :math:`d^{-1+\epsilon}` of
its quantile, so the distance is :math:`O(d^{-1}\log d)` and its rate between ``d/4`` and ``d`` is near 1; if the
limit differs from the law by a fixed distance :math:`D > 0`, the distance tends to :math:`D` and its rate to 0.
The midpoint separates the two hypotheses; a rate whose interval contains it is unresolved."""


def histogram_ladder(cfg: dict) -> dict:
    """The Kolmogorov distance of each spectrum of :data:`HISTOGRAMS` (outliers removed) to the claimed law
    :math:`\\kappa(\\mathrm{MP}_\\delta \\boxtimes \\mathrm{MP}_\\gamma)` at ``d/coarse`` and ``d``, and its decay rate
    :math:`\\log(KS(d/r)/KS(d))/\\log r` with a delta-method interval over seeds at the ledger's level."""
    d, r, K = cfg["compare_d"], cfg["coarse"], cfg["hist_seeds"]
    out = {}
    for i, (scheme, centered) in enumerate(HISTOGRAMS):
        w, _, _ = scheme_floats(scheme)
        o = theory(DELTA, GAMMA, scheme, 1.5, centered)
        outliers = int(o.sample.outlier) + sum(x.level == "sample" for x in o.other_outliers)
        x, F = bulk_cdf(DELTA, GAMMA, pool(scheme).kappa)
        law = functools.partial(np.interp, xp=x, fp=F, left=0.0, right=1.0)
        ks = {}
        for dd in (d // r, d):
            V, N = rung(dd, DELTA, GAMMA)
            _, _, spectra = trials(K, 900 + i, dd, V, N, T, SIGNS, w, 1.5, centered=centered)
            ks[dd] = np.array([ks_distance(ev, law, outliers) for ev in spectra])
        lo, hi = ks[d // r], ks[d]
        rate = math.log(lo.mean() / hi.mean()) / math.log(r)
        se = math.sqrt(lo.var(ddof=1) / (K * lo.mean() ** 2) + hi.var(ddof=1) / (K * hi.mean() ** 2)) / math.log(r)
        half = float(stats.t.ppf(0.5 + AGREEMENT_LEVEL / 2, K - 1)) * se
        out[f"{scheme} ({'centered' if centered else 'raw'})"] = {
            "T": T, "weights": scheme, "signs": SIGNS, "delta": str(DELTA), "gamma": str(GAMMA),
            "S": "centered" if centered else "raw", "d": [d // r, d], "outliers_removed": outliers,
            "ks_times_d": [float(lo.mean() * (d // r)), float(hi.mean() * d)], "rate": rate,
            "rate_ci": [rate - half, rate + half]}
    return out


def _count(outcomes: list) -> dict:
    return {k: outcomes.count(k) for k in ("within", "beyond", "unresolved")}


def _recorded(entries: list) -> dict:
    """The ``T``, weights, ``d`` and ratios C4's runs or C2's points rest on, each value once in their order (what
    :func:`verify.ledger.records.setting` names)."""
    def once(key):
        return list(dict.fromkeys(v for e in entries for v in (e.get(key) if isinstance(e.get(key), list)
                                                                else [e.get(key)]) if v is not None))

    return {"T": once("T"), "weights": once("scheme"), "d": once("d"), "delta": once("delta"), "gamma": once("gamma")}


def evidence_c9(cfg: dict, needs: dict, histograms: dict | None = None) -> dict:
    """The histogram ladder (:func:`histogram_ladder`, computed here unless given), and the outcomes
    (:func:`verify.ledger.checks.common.outcome`) of the outlier and threshold comparisons of C4 and C2 (read from
    their records): against the formulas, and against the draws' conditional predictions."""
    if histograms is None:
        histograms = histogram_ladder(cfg)
    records = {k: r.record for k, r in needs.items()}
    c4, c2 = records["C4"]["evidence"], records["C2"]["evidence"]
    runs = c4.get("runs", [])
    r4, r2 = c4.get("resolution_to_full", 1.0), c2.get("resolution_to_full", 1.0)
    target = c4.get("target", TARGET)
    points = [p for lv in ("population", "sample") for p in c2.get(lv, {}).get("points", [])]
    fits = [fit_outcome(c2[lv]["fit"], r2) for lv in ("population", "sample") if "fit" in c2.get(lv, {})]
    return {"histograms": histograms, "rate_split": RATE_SPLIT,
            "histogram_resolution_to_full": min(1.0, (cfg["hist_seeds"] / FULL["hist_seeds"]) ** 0.5),
            "outliers": {"runs": len(runs), "raw_runs": sum(r["S"] == "raw" for r in runs), **_recorded(runs),
                         "formula": _count([outcome(r, target, r4) for r in runs]),
                         "conditional": _count([outcome(r["conditional"], target, r4) for r in runs
                                                if "conditional" in r])},
            "thresholds": {"points": len(points), "fits": _count(fits), **_recorded(points),
                           "formula": _count([outcome(p, POINT_TARGET, r2) for p in points]),
                           "conditional": _count([outcome(p["conditional"], POINT_TARGET, r2) for p in points
                                                  if "conditional" in p and p["predicted_outlier"]])}}


def _histogram(h: dict, resolution: float = 1.0) -> str:
    lo, hi = h["rate_ci"]
    m = margin((hi - lo) / 2, resolution)
    return "follows" if lo > RATE_SPLIT + m else "departs" if hi < RATE_SPLIT - m else "unresolved"


def rule_c9(evidence: dict) -> dict:
    """The verdict of C9 from its evidence alone: the outcomes of C4's and C2's comparisons, and each histogram's decay
    rate against :data:`RATE_SPLIT` (with the margin of a run coarser than the full one,
    :func:`verify.ledger.checks.common.margin`).

    * inconclusive: no outlier runs, threshold points or histograms; a comparison or a fit that cannot tell; a
      departure from the draws' conditional predictions or of a threshold (see C2, C4); a histogram whose decay rate is
      unresolved; the histogram of mean pooling departing while another follows;
    * refuted: the histograms depart from the claimed law for every spectrum, spread weights included;
    * corrected: the outliers depart from the formulas beyond the target where the conditional predictions hold
      (the formula is not the model's law there), or the histograms follow the claimed law for mean pooling but
      depart from it for some concentrated weights (the correction of C1);
    * confirmed: outliers, thresholds and every histogram within their targets.
    """
    out, th, hist = evidence.get("outliers") or {}, evidence.get("thresholds") or {}, evidence.get("histograms") or {}
    if not out.get("runs") or not th.get("points") or not hist:
        return decide("inconclusive", "outlier runs, threshold points or histograms are missing")

    def where(entries) -> str:
        named = setting(entries)
        return f" ({named})" if named else ""

    counts = [out["formula"], out["conditional"], th["formula"], th["conditional"], th["fits"]]
    if any(c["unresolved"] for c in counts) or out["conditional"]["beyond"] or th["conditional"]["beyond"] \
            or th["formula"]["beyond"] or th["fits"]["beyond"]:
        return decide("inconclusive", f"an outlier or threshold comparison{where([out, th])} cannot tell, or departs "
                                      "from the draws' conditional predictions or from a threshold (see C2, C4)")
    status = {k: _histogram(h, evidence.get("histogram_resolution_to_full", 1.0)) for k, h in hist.items()}
    if any(s == "unresolved" for s in status.values()):
        unresolved = [k for k, s in status.items() if s == "unresolved"]
        return decide("inconclusive", "the decay of the histogram distance is unresolved for "
                      + ", ".join(unresolved) + where([hist[k] for k in unresolved]))
    departs = [k for k, s in status.items() if s == "departs"]
    if len(departs) == len(status):
        return decide("refuted", f"every histogram{where(list(hist.values()))} departs from the claimed bulk law")
    if departs and any(k.startswith("mean") for k in departs):
        return decide("inconclusive", f"the histogram of mean pooling{where([hist[k] for k in departs])} departs "
                                      "from the claimed law")
    if departs or out["formula"]["beyond"]:
        parts = ([f"the histograms of {', '.join(departs)}{where([hist[k] for k in departs])} depart from the "
                  "claimed law"] if departs else []) + \
                ([f"{out['formula']['beyond']} outlier runs{where([out])} depart from the formulas beyond their "
                  "target (C4)"] if out["formula"]["beyond"] else [])
        return decide("corrected", "; ".join(parts),
                      "outlier locations, overlaps and detectability agree with the derived formulas (raw and centered "
                      "S) where tokens are reused often, and with each draw's conditional prediction everywhere; "
                      + "; ".join(parts) + ", as the corrections of C1 and C4 allow")
    return decide("confirmed", f"{out['runs']} outlier runs ({out['raw_runs']} on the raw S) and {th['points']} "
                               f"threshold points{where([out, th])} are within their targets, against the formulas and "
                               "against the draws' conditional predictions, and every histogram's distance to the "
                               "claimed law decays at the rate of eigenvalue rigidity "
                               f"({setting(list(hist.values()))})")


def check_c9(cfg: dict, needs: dict, histograms: dict | None = None) -> dict:
    """C9: the simulation checks taken together (``histograms``: :func:`histogram_ladder`, its ``prepare`` step)."""
    evidence = evidence_c9(cfg, needs, histograms)
    derived = ("eigenvalue histograms follow the derived density (distance decaying with d as eigenvalue rigidity "
               "requires); outlier locations, overlaps and detectability (outlier present or not) agree with the "
               "derived formulas on the raw and the centered S")
    return {**rule_c9(evidence), "derived": derived, "evidence": evidence}
