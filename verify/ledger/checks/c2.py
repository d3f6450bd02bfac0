"""C2: two successive transitions, each seen on both sides of its threshold, with fitted thresholds."""
from __future__ import annotations

import mpmath
import numpy as np
import sympy as sp

from derive.model import expectations as ex
from derive.gaussian import outliers as O
from derive.gaussian import spikes
from derive.gaussian.outliers import outliers_at
from verify.ledger.checks.common import (AGREEMENT_LEVEL, DELTA, POINT_TARGET, THRESHOLD_TARGET, margin, outcome,
                                         outlier_comparison, pool, population_comparison, resolution_to_full,
                                         unbounded_support_note)
from verify.ledger.records import decide, setting
from verify.stats import Estimate, min_detectable

__all__ = ["POPULATION", "SAMPLE", "DRIFT", "DRIFT_MORE", "LEVELS", "derived", "points", "threshold_drift",
           "drift_at_more_weights", "drift_statement",
           "evidence_c2", "fitted_threshold", "fit_outcome", "rule_c2", "check_c2"]

POPULATION = {"scheme": "mean", "signs": "iid", "below": [0.3], "above": [1.2, 2.0, 3.0], "more": [1, 1.5, 1, 1]}
"""Population level (exact covariance of sampled tables, centered): mean pooling of i.i.d. signs at ``T = 8``
(``alpha = kappa = 1/8``), ``delta = 1/2``; its threshold is ``mu2 = 0.707``: one point below (strength 0.66 of
the threshold), three above; ``more``: each point's tables as a multiple of ``cfg["population_tables"]``."""

SAMPLE = {"scheme": "mean", "gamma": 2, "below": [0.45], "above": [1.75, 2.0, 3.0], "more": [3.75, 4, 3.5, 2.5]}
"""Sample level: mean pooling on ``prefix:3``, ``delta = 1/2``, ``gamma = 2``; population threshold
``mu2 = 0.19``, sample threshold ``mu2 = 0.99``: the point below lies between the two (strength 0.64 of the
sample threshold, 1.38 of the population one), three points above (the nearest at 1.50 times the threshold's
strength; at 1.34, mu2 = 1.5, a draw's overlap spread 18% at d = 400, and its finite-size deficit 4%); ``more``: each
point's trials as a multiple of ``cfg["trials"]``, so that each point and the fitted threshold resolve their targets with
a quick run's margin (the point below with five times as many at the coarse rung:
:func:`verify.comparison.compare_sample`)."""

DRIFT = {"T": 1, "weights": "mean", "signs": "iid", "delta": 1, "gamma": 1, "mu2": 6,
         "derived_d": [10**3, 10**4, 10**5, 10**6, 10**7, 10**9], "sampled_d": [10**4, 10**6], "draws": 64}
"""The threshold at dimension ``d`` of the model's own ``S`` (issue 42's point, one nonzero weight, where it is derived
exactly: :func:`derive.vocabulary.limit.topbulk.threshold_at_dimension`), at ``derived_d``, and against each draw's
own threshold (``derive.finite_size``, ``draws`` draws) at ``sampled_d``."""


def threshold_drift() -> dict:
    r"""The sample-level threshold of the model's own ``S`` as a function of ``d`` at :data:`DRIFT`: the limit's
    :math:`\mu_{2,c}`, the derived mean and median threshold at each ``d``, and each sampled ``d``'s mean over draws
    against the derived one, within the draws' interval at :data:`AGREEMENT_LEVEL` plus :math:`3/\sqrt d` (a draw's own
    token eigenvalues against the limit's, whose count shares are :math:`O(V^{-1/2})` from Poisson's)."""
    from scipy import stats

    from derive import Model, finite_size
    from derive.vocabulary.limit.law import vocabulary_law
    from derive.vocabulary.limit.signal import signal_windows
    from derive.vocabulary.limit.topbulk import threshold_at_dimension

    law = vocabulary_law(str(DRIFT["delta"]), str(DRIFT["gamma"]), [sp.Integer(1)]).diagonal()
    with mpmath.workdps(15):
        # the limit's threshold once, for every d (each call would search the signal's windows again)
        windows = signal_windows(law)
        limit = windows[0][0] if windows else mpmath.inf
        rows = {d: threshold_at_dimension(law, d, limit) for d in sorted(set(DRIFT["derived_d"] + DRIFT["sampled_d"]))}
    sampled = []
    for d in DRIFT["sampled_d"]:
        r = finite_size(Model(d=d, delta=DRIFT["delta"], gamma=DRIFT["gamma"], T=DRIFT["T"], weights=DRIFT["weights"],
                              signs=DRIFT["signs"], mu2=DRIFT["mu2"]), draws=DRIFT["draws"]).mu2_critical
        half = float(stats.t.ppf(1 - (1 - AGREEMENT_LEVEL) / 2, DRIFT["draws"] - 1)) * r.se + 3 / d ** 0.5
        sampled.append({"d": d, "draws": DRIFT["draws"], "mean": r.mean, "se": r.se, "derived": rows[d]["mean"],
                        "ci": [r.mean - half, r.mean + half], "agree": bool(abs(r.mean - rows[d]["mean"]) <= half)})
    return {**{k: DRIFT[k] for k in ("T", "weights", "signs", "delta", "gamma")},
            "limit_mu2_critical": rows[DRIFT["derived_d"][0]]["limit"],
            "derived": [{"d": d, "mean": rows[d]["mean"], "median": rows[d]["median"], "sd": rows[d]["sd"]}
                        for d in DRIFT["derived_d"]],
            "sampled": sampled, "more": drift_at_more_weights()}


DRIFT_MORE = {"T": 5, "weights": "causal", "signs": "prefix:3", "delta": "1/2", "gamma": "1/2", "mu2": 1,
              "d": [10**4, 10**6]}
"""The threshold at dimension ``d`` at more than one nonzero weight (issue 42's ``T = 5`` point), from the token spikes
of the limit (:mod:`derive.vocabulary.limit.tokentail`), beside the limit's."""


def drift_at_more_weights() -> dict:
    """The threshold at each ``d`` of :data:`DRIFT_MORE` from the token spikes of the limit, each with the error that
    covers it, the limit's with its own, and whether the first and the last ``d`` are apart (their intervals
    disjoint)."""
    import derive
    from derive.vocabulary.draw.user_d import SPIKES

    m = derive.Model(**{k: DRIFT_MORE[k] for k in ("T", "weights", "signs", "delta", "gamma", "mu2")})
    limit = derive.spike(m).sample
    errors = dict(limit.errors)
    rows = []
    for d in DRIFT_MORE["d"]:
        r = derive.finite_size(m.replace(d=d, delta=m.delta, gamma=m.gamma), method=SPIKES).mu2_critical
        rows.append({"d": d, "mean": r.mean, "error": r.error})
    first, last = rows[0], rows[-1]
    defined = limit.mu2_critical is not None
    return {**{k: DRIFT_MORE[k] for k in ("T", "weights", "signs", "delta", "gamma")},
            "limit_mu2_critical": float(limit.mu2_critical) if defined else None,
            "limit_error": float(errors["mu2_critical"]) if defined else None,
            "limit_reason": limit.mu2_critical_reason,
            "at_d": rows, "apart": bool(last["mean"] - last["error"] > first["mean"] + first["error"])}


def drift_statement(drift: dict) -> str:
    """The law of the threshold's drift in words, with the derived values of ``drift`` (:func:`threshold_drift`)."""
    values = ", ".join(f"{r['mean']:.3g}" for r in drift["derived"])
    ds = ", ".join(f"{r['d']:.0e}".replace("e+0", "e") for r in drift["derived"])
    return ("in the model's own S at fixed T the sample-level transition of the top eigenvector moves with d: a draw "
            "whose most used token is seen M times has its threshold at max(mu2_c, c_M/(psi(c_M) - c_M)), c_M = gamma*M, psi(c_M) "
            "the token's eigenvalue, about gamma*M - delta - gamma, and the largest of V = d/delta Poisson counts grows like "
            "log d/log log d, so the threshold grows without bound and the limit's mu2_c is its value at no finite d "
            f"(derived at T = {drift['T']} with {drift['weights']} weights, delta = {drift['delta']}, gamma = "
            f"{drift['gamma']}: mean {values} at d = {ds}, against the limit's {drift['limit_mu2_critical']:.4g}; "
            "the signal's outlier keeps the limit's location and overlap and is recovered as the eigenvalue nearest it)"
            + _more_statement(drift.get("more")))


def _more_statement(more: dict | None) -> str:
    if not more or not more["apart"]:
        return ""
    at = ", ".join(f"{r['mean']:.2g} +- {r['error']:.1g} at d = {r['d']:.0e}".replace("e+0", "e") for r in more["at_d"])
    limit = (f"against the limit's {more['limit_mu2_critical']:.2g} +- {more['limit_error']:.1g}"
             if more.get("limit_mu2_critical") is not None else f"the limit's threshold {more['limit_reason']}")
    return (f"; at more nonzero weights it moves likewise, from the token spikes of the limit (T = {more['T']} with "
            f"{more['weights']} weights, {more['signs']} signs, delta = {more['delta']}, gamma = {more['gamma']}: {at}; "
            f"{limit})")


def derived() -> str:
    """The derived statement, written from the SymPy objects of :mod:`derive.gaussian.spikes` and :mod:`derive.model.expectations`."""
    strength = ex.population_covariance_terms()["signal_strength"]
    proof = spikes.successive_thresholds()
    x = sp.Symbol("x")
    poly = sp.collect(sum(c * x**k for k, c in enumerate(reversed(proof["coefficients_in_x"]))), x)
    return (f"population threshold theta = {strength} = {spikes.population_threshold()}; sample threshold the positive "
            f"root of {poly} in x = theta - delta*kappa. For every delta, gamma, kappa > 0 the sample threshold is "
            f"strictly the larger (proved: the polynomial is {proof['P_at_population_threshold']} > 0 at the population "
            "threshold and has one positive root), so the transitions are successive; they coincide as gamma -> 0")


def _overlap_curve(level: str, alpha, kappa, gamma):
    """The derived overlap of the signal outlier as a function of ``mu2`` (mpmath, 30 digits), unclipped: the
    formula continued below its threshold, so that its zero can be found."""
    def curve(mu2):
        theta = O.signal_strength(alpha, mu2, DELTA)
        zeta = O.population_overlap(theta, DELTA, kappa, continued=True)
        factor = 1 if level == "population" else O.sample_overlap(theta, DELTA, gamma, kappa, continued=True) / zeta
        return zeta * factor * O.signal_cosine2(mu2, DELTA)
    return curve


def fitted_threshold(points: list[dict], level: str, alpha, kappa, gamma, derived, at: float = AGREEMENT_LEVEL) -> dict:
    r"""The threshold fitted to the extrapolated overlaps of the ``points`` above it: the derived overlap curve
    :math:`o(\mu_2)` shifted, :math:`o(\mu_2 + \Delta)`, with :math:`\Delta` by weighted least squares (one
    Gauss-Newton step from 0: :math:`\hat\Delta = \sum w_i o'_i r_i / \sum w_i o_i'^2`, :math:`se = (\sum w_i o_i'^2)^{-1/2}`,
    :math:`w_i = 1/se_i^2`); the fitted threshold is the zero of the shifted curve, ``zero - Delta``, compared with the
    ``derived`` threshold at level ``at``. The curve's own zero is found by root finding, not read off the threshold,
    so a threshold formula that does not sit where its overlap vanishes is caught too."""
    curve = _overlap_curve(level, alpha, kappa, gamma)
    with mpmath.workdps(30):
        zero = float(mpmath.findroot(curve, mpmath.mpf(derived) if derived > 0 else mpmath.mpf("0.01")))
        slope = [float(mpmath.diff(curve, mpmath.mpf(p["mu2"]))) for p in points]
    qs = [p["quantities"]["signal_overlap"] for p in points]
    w = np.array([1 / q["se"] ** 2 for q in qs])
    r = np.array([q["extrapolated"] - q["predicted"] for q in qs])
    o = np.array(slope)
    info = float(np.sum(w * o * o))
    shift = Estimate(float(np.sum(w * o * r)) / info, info ** -0.5, min(q["df"] for q in qs))
    fitted = zero - shift.value
    half = shift.half_width(at)
    return {"mu2_fitted": fitted, "ci": [fitted - half, fitted + half], "derived_mu2_critical": float(derived),
            "zero_of_derived_overlap": zero, "agree": bool(abs(fitted - derived) <= half),
            "min_detectable_rel_error": min_detectable(shift, at) / abs(float(derived))}


def points(cfg: dict, level: str) -> list:
    """The Monte Carlo points of one level (``"population"`` or ``"sample"``): a ``prepare`` part of C2 (each point
    draws from its own seeds)."""
    if level == "population":
        iid = pool(POPULATION["scheme"], POPULATION["signs"])
        return [population_comparison(cfg, DELTA, iid, mu2, seed0=200 + i, more=more)
                for i, (mu2, more) in enumerate(zip(POPULATION["below"] + POPULATION["above"], POPULATION["more"]))]
    m = pool(SAMPLE["scheme"])
    sample = [outlier_comparison(cfg, DELTA, SAMPLE["gamma"], SAMPLE["scheme"], mu2, centered=True, seed0=220 + i,
                                 more=more, coarse_trials=5 if mu2 in SAMPLE["below"] else 2)
              for i, (mu2, more) in enumerate(zip(SAMPLE["below"] + SAMPLE["above"], SAMPLE["more"]))]
    for point in sample:
        point["population_outlier_predicted"] = outliers_at(
            DELTA, SAMPLE["gamma"], m.alpha, m.kappa, point["mu2"], centered=True).population.outlier
    return sample


LEVELS = ("population", "sample")
"""The parts of C2's ``prepare`` step (:func:`points`)."""


def evidence_c2(cfg: dict, parts=None) -> dict:
    """The proof of the ordering, and the Monte Carlo on both sides of each threshold (``parts``: the points of each
    of :data:`LEVELS`, computed here when not given)."""
    if parts is None:
        parts = [points(cfg, level) for level in LEVELS]
    population, sample = parts
    proof = spikes.successive_thresholds()
    grid = [sp.Rational(p, q) for p, q in ((1, 10), (1, 2), (1, 1), (2, 1), (10, 1))]
    with mpmath.workdps(30):
        successive = sum(outliers_at(dl, gm, 1, 1, 0).sample.threshold > outliers_at(dl, gm, 1, 1, 0).population.threshold
                         for dl in grid for gm in grid)
    iid = pool(POPULATION["scheme"], POPULATION["signs"])
    a, k = iid.alpha, iid.kappa
    m = pool(SAMPLE["scheme"])
    with mpmath.workdps(30):
        pop = outliers_at(DELTA, 0, a, k, 1, centered=True).population
        smp = outliers_at(DELTA, SAMPLE["gamma"], m.alpha, m.kappa, 1, centered=True)
    return {
        "resolution_to_full": resolution_to_full(cfg),
        "drift": threshold_drift(),
        "ordering": {"coefficients_in_x": [str(c) for c in proof["coefficients_in_x"]],
                     "P_at_population_threshold": str(proof["P_at_population_threshold"]),
                     "proved_for_all_delta_gamma_kappa": proof["proved"],
                     "successive_on_a_grid": [int(successive), len(grid) ** 2]},
        "population": {"points": population,
                       "fit": fitted_threshold([p for p in population if p["predicted_outlier"]], "population", a, k,
                                               0, pop.mu2_critical)},
        "sample": {"derived_population_mu2_critical": float(smp.population.mu2_critical), "points": sample,
                   "fit": fitted_threshold([p for p in sample if p["predicted_outlier"]], "sample", m.alpha, m.kappa,
                                           SAMPLE["gamma"], smp.sample.mu2_critical)},
    }


def fit_outcome(fit: dict, resolution: float = 1.0) -> str:
    """A fitted threshold against the derived one, as :func:`verify.ledger.checks.common.outcome` does a comparison:
    within, beyond or unresolved against ``THRESHOLD_TARGET`` relative to the derived threshold."""
    lo, hi = (x - fit["derived_mu2_critical"] for x in fit["ci"])
    tolerance = THRESHOLD_TARGET * abs(fit["derived_mu2_critical"])
    m = margin((hi - lo) / 2, resolution)
    if -tolerance + m <= lo and hi <= tolerance - m:
        return "within"
    return "beyond" if lo > tolerance + m or hi < -tolerance - m else "unresolved"


def rule_c2(evidence: dict) -> dict:
    """The verdict of C2 from its evidence alone. Each Monte Carlo point is an equivalence test against
    ``POINT_TARGET`` (:func:`verify.ledger.checks.common.outcome`: the margin makes a coarser run's decided outcome the
    full run's), against the derived formula and, at the sample level, against the draws' conditional predictions
    (the model's own outlier given the tokens; points with a predicted outlier); the fitted thresholds against
    ``THRESHOLD_TARGET`` (:func:`fit_outcome`).

    * inconclusive: a level without points on both sides of its threshold; a point, a conditional comparison or a
      fitted threshold that cannot tell; a point (other than between the thresholds) beyond the target, or a
      conditional comparison beyond it, or a fitted threshold beyond it (the derivation is then wrong or incomplete
      there); or no point between the thresholds;
    * refuted: the sample threshold is above the population one at no point of the grid, or a point between the
      thresholds shows a sample outlier (one transition, not two);
    * corrected: both transitions are seen where derived, but they are successive only on part of the grid;
    * confirmed: both transitions seen on both sides where derived, fitted thresholds within the target, and the
      ordering proved for every delta, gamma, kappa > 0 (or, unproved, holding on every point of the grid: the reason
      then says "on a grid").
    """
    order = evidence.get("ordering", {})
    res = evidence.get("resolution_to_full", 1.0)
    levels = {name: evidence.get(name) or {} for name in ("population", "sample")}
    for name, lv in levels.items():
        pts = lv.get("points") or []
        if not any(p["predicted_outlier"] for p in pts) or all(p["predicted_outlier"] for p in pts):
            return decide("inconclusive", f"the {name} level has no points on both sides of its threshold")
    where = setting([{"T": p.get("T"), "weights": p.get("scheme"), "d": p.get("d"), "delta": p.get("delta"),
                      "gamma": p.get("gamma")} for lv in levels.values() for p in lv["points"]])
    where = f" ({where})" if where else ""
    between = [p for p in levels["sample"]["points"]
               if not p["predicted_outlier"] and p.get("population_outlier_predicted")]
    said = {(name, str(p["mu2"])): outcome(p, POINT_TARGET, res) for name, lv in levels.items() for p in lv["points"]}
    given = {(name, str(p["mu2"])): outcome(p["conditional"], POINT_TARGET, res) for name, lv in levels.items()
             for p in lv["points"] if "conditional" in p and p["predicted_outlier"]}
    fits = {name: fit_outcome(lv["fit"], res) for name, lv in levels.items()}
    bad = [f"{name} mu2 = {mu2}" for (name, mu2), v in given.items() if v == "beyond"]
    if bad:
        return decide("inconclusive", "Monte Carlo departs from the draws' conditional predictions at "
                      + ", ".join(bad) + where + ": the derivation of the model's own outlier is wrong or incomplete "
                      "there")
    weak = [f"{name} mu2 = {mu2}" for outcomes in (said, given) for (name, mu2), v in outcomes.items()
            if v == "unresolved"]
    weak += [f"the {name} threshold" for name, v in fits.items() if v == "unresolved"]
    if weak:
        return decide("inconclusive", "too little power to resolve the target errors (or a finer run's verdict) at "
                      + ", ".join(dict.fromkeys(weak)) + where)
    for name, lv in levels.items():
        off = [str(p["mu2"]) for p in lv["points"] if said[(name, str(p["mu2"]))] == "beyond"
               and not any(p is q for q in between)]
        if off:
            return decide("inconclusive", f"at the {name} level the derived outlier departs from Monte Carlo beyond "
                                          f"the target at mu2 = {', '.join(off)}{where}")
        if fits[name] == "beyond":
            return decide("inconclusive", f"the fitted {name} threshold {lv['fit']['mu2_fitted']:.4g} departs from "
                                          f"the derived {lv['fit']['derived_mu2_critical']:.4g} beyond the target"
                                          f"{where}")
    on_grid, grid_size = order.get("successive_on_a_grid", [0, 0])
    if (grid_size and on_grid == 0) or any(said[("sample", str(p["mu2"]))] == "beyond" for p in between):
        return decide("refuted", f"a sample outlier is seen between the thresholds{where}, or the sample threshold "
                                 "is above the population one nowhere on the grid: the transitions are not successive")
    if not between:
        return decide("inconclusive", f"no point between the thresholds{where}")
    seen = (f"both transitions are seen{where} on both sides of their derived thresholds and the fitted thresholds "
            "are within the target; the sample threshold is ")
    drift = evidence.get("drift")
    if drift:
        off = [f"d = {r['d']:.0e}".replace("e+0", "e") for r in drift["sampled"] if not r["agree"]]
        if off:
            return decide("inconclusive", "the derived threshold at dimension d departs from the draws' own at "
                                          + ", ".join(off) + f" ({setting([drift])})")
    if order.get("proved_for_all_delta_gamma_kappa"):
        verdict, reason = "confirmed", seen + "proved the larger for every delta, gamma, kappa > 0"
    elif grid_size and on_grid == grid_size:
        verdict, reason = "confirmed", seen + f"the larger on a grid ({on_grid}/{grid_size} points of delta, gamma), not proved"
    else:
        return decide("corrected", seen + f"the larger only on {on_grid}/{grid_size} points of a grid",
                      "the transitions are successive only where the sample threshold polynomial is positive at the "
                      "population threshold" + (f"; {drift_statement(drift)}" if drift else ""))
    moved = drift and min(r["ci"][0] for r in drift["sampled"]) > drift["limit_mu2_critical"]
    if not moved:
        return decide(verdict, reason)
    at = ", ".join(f"{r['mean']:.3g} at d = {r['d']:.0e}".replace("e+0", "e") for r in drift["sampled"])
    return decide("corrected", f"{reason} (the paper's law); in the model's own S the threshold of the top eigenvector "
                               f"moves with d, {at} against the limit's {drift['limit_mu2_critical']:.4g} "
                               f"({setting([drift])}), as derived from the largest token count",
                  "two successive transitions in the paper's (Gaussian-equivalent) law, the sample one the larger for "
                  f"every delta, gamma, kappa > 0; {drift_statement(drift)}")


def check_c2(cfg: dict, parts=None) -> dict:
    """C2: two successive transitions (``parts``: its ``prepare`` steps' values, :func:`points`)."""
    evidence = evidence_c2(cfg, parts)
    # the thresholds are those of the Gaussian-equivalent law, the one with a bounded bulk
    return {**rule_c2(evidence), "derived": derived() + ". " + unbounded_support_note(), "evidence": evidence}
