"""One record per claim of the paper: its checks, run now, and the verdict they give.

Each ``check_*`` returns ``{"verdict", "derived", "evidence"[, "corrected"]}``. Verdicts come
only from comparisons made here; :func:`verify.ledger.run_claim` turns any failure of a check
into ``inconclusive``.
"""
from __future__ import annotations

import mpmath
import numpy as np
import sympy as sp

from functools import lru_cache

from derive import bulk, spikes, tokenreuse
from derive.attention import pooling
from derive.model import parse_signs
from derive.numbers import format_real
from derive.outliers import outliers_at, sample_threshold
from verify.ledger.records import Claim
from verify.montecarlo.draw import rung
from verify.montecarlo.population import population_covariance
from verify.montecarlo.trials import run_trials
from verify.stats import mean_ci

__all__ = ["QUICK", "FULL", "AGREEMENT_LEVEL", "DELTA", "GAMMA", "T", "SIGNS", "check_c3", "trials",
           "ks_distance", "check_c1", "check_c1_symbolic", "check_c4", "check_c2", "check_c8", "check_c5",
           "check_c6", "check_c7", "check_c9", "CLAIMS", "draw_figures"]

QUICK = {"d": 600, "seeds": 6, "tables": 3}
FULL = {"d": 2000, "seeds": 12, "tables": 6}

# Every agreement test of the ledger (14 Monte Carlo runs, an eigenvalue and an overlap each) is made
# at the Bonferroni level 1 - 0.05/28, so the ledger as a whole has a false-alarm rate of at most 5%.
AGREEMENT_LEVEL = 1 - 0.05 / 28

# The configuration of issue 3: delta = 1/2, gamma = 1/4, T = 8, signal on prefix:3.
DELTA, GAMMA, T, SIGNS = sp.Rational(1, 2), sp.Rational(1, 4), 8, "prefix:3"


def _r(x, digits: int = 8) -> str:
    return format_real(x, digits)


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
        "table_covariance_mc": {"d": d, "V": V, "tables": cfg["tables"], "alpha": alpha, "kappa": _r(kappa),
                                "delta": delta, "mu2": mu2, "rho": _r(alpha * mu2 / kappa),
                                "delta_plus_sqrt_delta": _r(delta + np.sqrt(delta)),
                                "claimed_outlier": bool(claimed_says_outlier),
                                "predicted_outlier": o.population.outlier,
                                "predicted_eigenvalue": _r(predicted, 10),
                                "observed_eigenvalue_mean": _r(np.mean(top)), "observed_se": _r(se, 3),
                                "bulk_edge": _r(edge, 10),
                                "observed_next_eigenvalue": _r(bulk_top),
                                "predicted_overlap": _r(o.population.overlap, 10),
                                "observed_overlap_mean": _r(np.mean(overlap))},
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


def trials(K: int, seed0: int, d, V, N, T_, signs, weights, mu2, centered=False, k=4):
    """``K`` dense trials: top-``k`` eigenvalues (K x k), squared overlaps with ``u`` (K x k), spectra (K x d)."""
    r = run_trials(d, V, N, T_, signs, weights, mu2, centered=centered, k=k, seeds=K, seed0=seed0,
                   spectrum=True, path="dense", progress=False)
    return r.top_eigenvalues, r.overlaps, r.spectra


@lru_cache(maxsize=None)
def _pool(scheme: str):
    """The pooling of a scheme on the ledger's configuration (causal: strict mask, tau = 0)."""
    return pooling(scheme, T, SIGNS, mask="strict" if scheme == "causal" else None)


def _scheme(scheme: str):
    """Weights of a scheme (sum 1) and their ``alpha``, ``kappa``, as floats (for the Monte Carlo)."""
    p = _pool(scheme)
    return np.array(p.floats()), float(p.alpha), float(p.kappa)


def _theory(delta, gamma, scheme: str, mu2, centered: bool = True):
    """The derived :class:`derive.outliers.Outliers` of a scheme at exact ``delta, gamma`` and ``mu2``."""
    p = _pool(scheme)
    with mpmath.workdps(30):
        return outliers_at(sp.Rational(delta), sp.Rational(gamma), p.alpha, p.kappa, sp.Rational(str(mu2)),
                        sum_w=p.W, centered=centered)


def ks_distance(eigenvalues, delta, gamma, kappa, n_outliers: int) -> float:
    """Kolmogorov distance between the ESD (outliers removed) and the derived bulk law's CDF."""
    law = bulk.law(delta, gamma, kappa)
    with mpmath.workdps(15):
        edges = law.edges()
    lo, hi = float(edges[0][0]), float(edges[-1][1])
    atom = float(law.atom_at_zero)
    x = np.linspace(lo, hi, 40001)
    f = law.density_float(x)
    F = np.concatenate([[0.0], np.cumsum((f[1:] + f[:-1]) / 2 * np.diff(x))])
    F = atom + (1 - atom) * F / F[-1]
    e = np.sort(np.asarray(eigenvalues)[n_outliers:])
    n = len(eigenvalues)
    emp_hi = np.arange(1, len(e) + 1) / n
    model = np.interp(e, x, F, left=0.0, right=1.0)
    return float(max(np.max(np.abs(model - emp_hi)), np.max(np.abs(model - (emp_hi - 1 / n)))))


def check_c1(cfg: dict) -> dict:
    """C1: exact moments of the true bulk vs the claimed law; ESD vs the claimed density; T = 1 token counts."""
    sym = check_c1_symbolic()
    d = cfg["d"]
    V, N = rung(d, DELTA, GAMMA)
    hist, panels = {}, []
    for scheme in ("mean", "causal", "optimal"):
        w, a, k = _scheme(scheme)
        kappa = _pool(scheme).kappa
        _, _, spectra = trials(cfg["seeds"], 11, d, V, N, T, SIGNS, w, 1.5, centered=True)
        dist = [ks_distance(ev, DELTA, GAMMA, kappa, 1) for ev in spectra]
        th = _theory(DELTA, GAMMA, scheme, "1.5")
        x = np.linspace(0, 1.15 * float(spectra[0][0]), 600)
        panels.append({"scheme": scheme, "d": d, "eigenvalues": spectra[0], "x": x,
                       "density": bulk.density_float(DELTA, GAMMA, kappa, x),
                       "outlier": float(th.sample.eigenvalue) if th.sample.outlier else None})
        # KS of an ESD against its limit is O(1/d) (rigidity); measured d*KS = 2.3-3.4 for d = 300..1200.
        hist[scheme] = {"kappa": _r(k), "ks_times_d": [round(x * d, 2) for x in dist], "bound_times_d": 6,
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
                "T1_fourth_moment": {"mc_mean": _r(ci[0]), "ci95": [_r(ci[1]), _r(ci[2])],
                                     "claimed": _r(m4_claim), "exact_T1": _r(m4_exact), "d": d}}
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


def _compare(cfg, delta, gamma, scheme, mu2, centered=True, seed0=0):
    """Monte Carlo of one configuration against ``derive spike``: eigenvalue and overlap of the signal outlier.

    Tolerance: the Student-t half-width over seeds at :data:`AGREEMENT_LEVEL` plus the finite-size bias, which is O(1/d)
    for outlier locations and overlaps; its constant was measured on the ladder d = 500, 1000, 2000
    (notes/spikes.md: about 6/d for the eigenvalue, 20/d for the overlap), allowed here as 8/d and 25/d.
    """
    d = cfg["d"]
    V, N = rung(d, delta, gamma)
    w, a, k = _scheme(scheme)
    th = _theory(delta, gamma, scheme, mu2, centered)
    tops, overlaps, _ = trials(cfg["seeds"], seed0, d, V, N, T, SIGNS, w, mu2, centered=centered)
    out = {"scheme": scheme, "delta": str(delta), "gamma": str(gamma), "mu2": str(mu2), "centered": centered,
           "alpha_over_kappa": _r(a / k, 6), "d": d, "seeds": cfg["seeds"],
           "predicted_outlier": th.sample.outlier, "sample_right_edge": _r(th.right_edge, 10)}
    ev, ov = mean_ci(tops[:, 0]), mean_ci(overlaps[:, 0])
    out["mc_top_eigenvalue"] = {"mean": _r(ev[0]), "ci95": [_r(ev[1]), _r(ev[2])]}
    out["mc_top_overlap"] = {"mean": _r(ov[0]), "ci95": [_r(ov[1]), _r(ov[2])]}
    ev, ov = mean_ci(tops[:, 0], AGREEMENT_LEVEL), mean_ci(overlaps[:, 0], AGREEMENT_LEVEL)
    if th.sample.outlier:
        pe, po = float(th.sample.eigenvalue), float(th.sample.overlap)
        out["predicted_eigenvalue"], out["predicted_overlap"] = _r(pe), _r(po)
        out["agree"] = bool(abs(ev[0] - pe) <= (ev[2] - ev[0]) + 8 / d and abs(ov[0] - po) <= (ov[2] - ov[0]) + 25 / d)
    else:
        # No outlier: the top eigenvalue sticks to the edge within Tracy-Widom fluctuations, O(d^{-2/3}).
        edge = float(th.right_edge)
        out["agree"] = bool(abs(ev[0] - edge) <= (ev[2] - ev[0]) + 4 * edge * d ** (-2 / 3))
    return out


def check_c4(cfg: dict) -> dict:
    """C4: the sample outlier and overlap of S_c for three configurations and every weight scheme."""
    runs = []
    for i, (delta, gamma, mu2) in enumerate([(DELTA, GAMMA, 1.5), (DELTA, GAMMA, 3.0), (1, sp.Rational(1, 2), 3.0)]):
        for j, scheme in enumerate(("mean", "causal", "optimal")):
            runs.append(_compare(cfg, delta, gamma, scheme, mu2, seed0=100 + 10 * i + j))
    derived = ("sample outlier psi(ell(theta)) = ell(1 - gamma + gamma*ell/theta) with ell(theta) the population "
               "outlier, theta = alpha*(mu2 + delta); overlap zeta(theta)*[ell psi'/psi]*mu2/(mu2+delta); it exists iff "
               "theta exceeds the positive root of -x^3 + kappa^2(delta+gamma+delta*gamma)x + 2 kappa^3 delta gamma, "
               "x = theta - delta*kappa (Gaussian-equivalent sample level; see notes/spikes.md)")
    verdict = "confirmed" if all(r["agree"] for r in runs) else "inconclusive"
    return {"verdict": verdict, "derived": derived, "evidence": {"runs": runs}}


def check_c2(cfg: dict) -> dict:
    """C2: two successive transitions; a point between them shows a population outlier and no sample one."""
    grid = [sp.Rational(p, q) for p, q in ((1, 4), (1, 2), (1, 1), (2, 1), (4, 1))]
    successive = 0
    with mpmath.workdps(30):
        for dl in grid:
            for gm in grid:
                pop = mpmath.mpf(dl.p) / dl.q + mpmath.sqrt(mpmath.mpf(dl.p) / dl.q)
                successive += sample_threshold(dl, gm, 1) > pop
    delta, gamma = DELTA, sp.Integer(1)
    runs = [_compare(cfg, delta, gamma, "mean", mu2, seed0=200 + i) for i, mu2 in enumerate((0.05, 0.45, 4.0))]
    # the population outlier at the middle point, from exact covariances of sampled tables
    w, a, k = _scheme("mean")
    d = cfg["d"]
    V, _ = rung(d, delta, gamma)
    th = _theory(delta, gamma, "mean", "0.45")
    rng = np.random.default_rng(2024)
    pop_top = [np.linalg.eigvalsh(population_covariance(rng, d, V, a, k, 0.0, 0.45))[-1] for _ in range(cfg["tables"])]
    pop_edge = float(th.population_right_edge)
    pop_seen = bool(min(pop_top) > pop_edge + 0.5 * (float(th.population.eigenvalue) - pop_edge))
    evidence = {"grid_points_successive": f"{successive}/{len(grid) ** 2}",
                "between_thresholds": {"mu2": 0.45, "population_outlier_predicted": th.population.outlier,
                                       "population_eigenvalue_predicted": _r(th.population.eigenvalue, 10),
                                       "population_top_mc": [_r(x) for x in pop_top],
                                       "population_edge": _r(pop_edge, 10),
                                       "sample_outlier_predicted": th.sample.outlier},
                "runs": runs}
    derived = ("population threshold alpha*(mu2+delta) > kappa*(delta+sqrt(delta)); sample threshold the positive "
               "root of the cubic in claim C4's record; the sample threshold is strictly larger for every "
               "delta, gamma > 0, so the transitions are successive")
    ok = successive == len(grid) ** 2 and pop_seen and all(r["agree"] for r in runs)
    return {"verdict": "confirmed" if ok else "inconclusive", "derived": derived, "evidence": evidence}


def check_c8(cfg: dict) -> dict:
    """C8: ridge classification accuracy ranks the schemes as alpha/kappa does (paired seeds)."""
    from verify.studies.classification import accuracy_curves

    schemes = {name: _scheme(name) for name in ("mean", "causal", "optimal")}
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
            row[n] = {"mean": _r(ci[0], 4), "ci95": [_r(ci[1], 4), _r(ci[2], 4)]}
        for lo, hi in zip(order, order[1:]):
            diff = mean_ci(acc[hi][:, j] - acc[lo][:, j])
            status = "higher" if diff[1] > 0 else "reversed" if diff[2] < 0 else "tied"
            row[f"{hi}-{lo}"] = {"mean": _r(diff[0], 4), "ci95": [_r(diff[1], 4), _r(diff[2], 4)], "status": status}
            reversed_ += status == "reversed"
            unexplained_ties += status == "tied" and acc[hi][:, j].mean() < 0.99
            if status == "higher":
                separated.add((lo, hi))
        rows.append(row)
    ranked = reversed_ == 0 and unexplained_ties == 0 and len(separated) == len(order) - 1
    derived = ("label = shared sign of the prefix (prefix:3, T = 8); N train, N/2 test sequences from the same table; "
               "ridge (C C^T/N + kappa I)^{-1} C y/N with lambda = kappa fixed in advance; no theoretical accuracy "
               "is derived here. Ranking by alpha/kappa: " + " < ".join(
                   f"{n} ({_r(schemes[n][1] / schemes[n][2], 4)})" for n in order))
    curves = (grid, {n: tuple(np.array([mean_ci(acc[n][:, j])[i] for j in range(len(grid))]) for i in range(3))
                     for n in schemes})
    evidence = {"d": d, "V": V, "N": N, "seeds": seeds, "accuracy": rows,
                "alpha_over_kappa_order": order}
    verdict = "confirmed" if ranked else "refuted" if reversed_ else "inconclusive"
    return {"verdict": verdict, "derived": derived, "evidence": evidence, "artifacts": {"accuracy": curves}}


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
    runs = [_compare(cfg, DELTA, GAMMA, sch, 1.0, seed0=600 + i) for i, sch in enumerate(("mean", "optimal"))]
    mc_better = float(runs[1]["mc_top_overlap"]["mean"]) > float(runs[0]["mc_top_overlap"]["mean"])
    evidence = {"rayleigh_identity_T_2_3_4": identity, "random_weights_tried": 2000,
                "random_weights_beating_lambda_max": int(beaten), "best_random_quotient_over_lambda_max": _r(worst, 6),
                "prefix_mean_alpha_over_kappa": str(mean_q), "prefix_optimal_alpha_over_kappa": str(opt_q),
                "optimal_minus_mean": str(excess), "mc_overlap_mean_vs_optimal": runs}
    derived = (f"alpha/kappa <= lambda_max(R) with equality iff w is a top eigenvector (Rayleigh); prefix:L: "
               f"optimal {opt_q} vs mean {mean_q}, difference {excess} >= 0, zero only for L = 1 or L = T")
    ok = identity and beaten == 0 and mc_better
    return {"verdict": "confirmed" if ok else "inconclusive", "derived": derived, "evidence": evidence}


def check_c6(cfg: dict) -> dict:
    """C6: the derived limit weights of both masks against the claimed harmonic form, and real attention."""
    from derive.attention import causal_weights
    from verify.montecarlo.attention import weight_deviation

    def harmonic(n):
        return [sp.harmonic(n - 1) - sp.harmonic(t - 1) for t in range(1, n + 1)]

    def normalized(v):
        return [x / sum(v) for x in v]

    strict_equal = all(causal_weights(n, tv, "strict") == normalized(harmonic(n))
                       for n in range(2, 33) for tv in (0, 2))
    inclusive = causal_weights(8, 0, "inclusive")
    inclusive_equal = inclusive == normalized(harmonic(8))
    inclusive_form = inclusive == normalized([sp.harmonic(8) - sp.harmonic(t - 1) for t in range(1, 9)])
    monotone = all(all(a >= b for a, b in zip(w, w[1:])) for n in (8, 32)
                   for w in (causal_weights(n, 0, "inclusive"), causal_weights(n, 0, "strict"),
                             [float(x) for x in causal_weights(n, 3, "inclusive")]))
    sim = {}
    for mask in ("inclusive", "strict"):
        limit = [float(x) for x in causal_weights(8, 1, mask)]
        sim[mask] = [{"d": r["d"], "per_sequence_max_dev": _r(r["per_sequence"], 4), "mean_weights_max_dev": _r(r["bias"], 3)}
                     for r in (weight_deviation(dd, 8, 1.0, mask, limit, n=200, seed=7) for dd in (64, 256, 1024))]
    shrinking = all(float(v[0]["per_sequence_max_dev"]) > float(v[-1]["per_sequence_max_dev"]) * 2.5 for v in sim.values())
    corrected = ("as d -> oo the weights converge to w_s = (H_{T-1} - H_{s-1})/(T-1) for the STRICT mask (keys s < t, "
                 "outputs averaged over t = 2..T), for every tau; for the INCLUSIVE mask (s <= t) the limit is "
                 "w_s = [e^tau/(e^tau+s-1) + psi(e^tau+T) - psi(e^tau+s)]/T, i.e. (H_T - H_{s-1})/T at tau = 0; both "
                 "are decreasing in s; real attention deviates from the limit by O(d^{-1/2}) per sequence")
    evidence = {"strict_equals_claim_T_2_to_32_tau_0_and_2": strict_equal, "inclusive_equals_claim_T8": inclusive_equal,
                "inclusive_equals_H_T_minus_H_s-1_T8": inclusive_form, "monotone_decreasing": monotone,
                "real_attention_tau_1_T8": sim}
    if strict_equal and not inclusive_equal and inclusive_form and monotone and shrinking:
        return {"verdict": "corrected", "derived": corrected, "evidence": evidence, "corrected": corrected}
    return {"verdict": "inconclusive", "derived": corrected, "evidence": evidence}


def check_c7(cfg: dict) -> dict:
    """C7: exact alpha/kappa of causal attention against mean pooling, every T <= 64, prefix/suffix/markov."""
    from derive import optimality as opt

    rows = {k: opt.compare_causal_vs_mean(k, 64) for k in ("prefix", "suffix", "markov")}
    wins = opt.winning_block_lengths(rows["prefix"])
    suffix = opt.summarize(rows["suffix"])
    markov = opt.summarize(rows["markov"])
    pick = {mask: {n: wins[mask][n] for n in (4, 8, 16, 32, 64)} for mask in wins}
    suffix_causal_wins = sum(len(v["causal"]) for v in suffix.values())
    markov_r = lambda mask, who: sorted({f for f, _ in markov[mask][who]}, key=lambda x: float(sp.Rational(x.split(":")[1])))  # noqa: E731
    corrected = ("causal attention beats mean pooling in alpha/kappa for prefix:L exactly when L lies in a range "
                 "[2, L_max(T)] with L_max(T) < T, for every T >= 4 (T <= 3: see evidence) (e.g. strict mask: " + ", ".join(
                     f"T={n}: L<={v[1]}" for n, v in pick["strict"].items() if v) + "); it loses for L = T and "
                 "ties at L = 1 (R = I); for suffix:L (signal late) it never wins; for markov:r it wins iff r < 0")
    evidence = {"prefix_winning_L_range": pick, "suffix_rows_where_causal_wins": suffix_causal_wins,
                "markov_r_causal_wins": {m: markov_r(m, "causal") for m in markov},
                "markov_r_mean_wins": {m: markov_r(m, "mean") for m in markov}}
    no_win = {m: [n for n in sorted(wins[m]) if wins[m][n] is None] for m in wins}
    evidence["T_where_causal_never_wins_on_prefix"] = no_win
    holds_early = all(set(v) <= {1, 2, 3} for v in no_win.values()) and all(
        wins[m][n][0] == 2 and wins[m][n][1] < n for m in wins for n in range(4, 65))
    negative_r = {f"markov:{r}" for r in opt.MARKOV_GRID if r < 0}
    markov_iff = all(set(markov_r(m, "causal")) == negative_r for m in markov)
    verdict = "corrected" if holds_early and suffix_causal_wins == 0 and markov_iff else "inconclusive"
    return {"verdict": verdict, "derived": corrected, "evidence": evidence, "corrected": corrected}


def check_c9(cfg: dict, needs: dict) -> dict:
    """C9: the simulation checks of C1, C2, C4 taken together."""
    records = {k: r.record for k, r in needs.items()}
    hist = records["C1"]["evidence"].get("esd_vs_claimed_density", {})
    runs = records["C2"]["evidence"].get("runs", []) + records["C4"]["evidence"].get("runs", [])
    ok_hist = bool(hist) and all(h["pass"] for h in hist.values())
    ok_runs = bool(runs) and all(r["agree"] for r in runs)
    evidence = {"histograms_pass": ok_hist, "outlier_and_overlap_runs": len(runs),
                "runs_agreeing": sum(r["agree"] for r in runs)}
    derived = ("eigenvalue histograms follow the derived density within the O(1/d) Kolmogorov bound; outlier "
               "locations, overlaps and detectability (outlier present or not) agree with the derived formulas")
    if ok_runs and ok_hist:
        return {"verdict": "confirmed", "derived": derived, "evidence": evidence}
    if ok_runs and hist.get("mean", {}).get("pass"):
        corrected = ("outlier locations, overlaps and detectability agree with the derived formulas; histograms "
                     "follow the claimed density within O(1/d) for mean pooling, but for concentrated weights "
                     "(causal, optimal) the distance exceeds that bound, as the correction of C1 allows")
        evidence["histograms_failing"] = [k for k, h in hist.items() if not h["pass"]]
        return {"verdict": "corrected", "derived": corrected, "evidence": evidence, "corrected": corrected}
    return {"verdict": "inconclusive", "derived": derived, "evidence": evidence}


CLAIMS = [
    Claim("C1", "the limiting spectral distribution of S is kappa*(MP_delta boxtimes MP_gamma); its shape "
                "depends on delta, gamma only, its scale on kappa", check_c1),
    Claim("C2", "two successive BBP-type transitions, governed by delta, gamma, alpha, kappa: one at population "
                "level (N = oo) and one at sample level (finite gamma)", check_c2),
    Claim("C3", "an outlier exists iff rho = alpha*mu2/kappa > delta + sqrt(delta); above it the outlier's "
                "eigenvector aligns with u", check_c3),
    Claim("C4", "even above C3, finite N can hide the outlier; explicit formulas give the outlier eigenvalue of S "
                "and the overlap |u_hat^T u|^2", check_c4),
    Claim("C5", "the w maximizing alpha/kappa is the normalized top eigenvector of R; for prefix:L it puts all mass "
                "on the first L positions and beats mean pooling", check_c5),
    Claim("C6", "parameter-free causal self-attention converges as d -> oo to harmonic weights w_t ~ H_{T-1} - H_{t-1}, "
                "monotonically decreasing in t", check_c6),
    Claim("C7", "causal attention gives a higher alpha/kappa than mean pooling when the signal sits in early "
                "positions", check_c7),
    Claim("C8", "ridge-regression classification on the pooled vectors ranks optimal weights > causal attention "
                "> mean pooling, the same order as their alpha/kappa", check_c8),
    Claim("C9", "empirical eigenvalue histograms match the bulk density and the predicted outlier locations; "
                "alignment curves and detectability thresholds match the formulas", check_c9, needs=("C1", "C2", "C4")),
]


def draw_figures(cfg: dict, results: dict) -> list[str]:
    """Figures (a)-(e) of the ledger into ``cfg["figures"]``; (a) and (e) reuse the artifacts of the C1 and
    C8 checks in ``results`` (``{id: Result}``)."""
    from verify import figures

    folder, paths = cfg["figures"], []
    artifacts = {k: v for r in results.values() for k, v in r.artifacts.items()}
    schemes = {name: _scheme(name) for name in ("mean", "causal", "optimal")}
    if "spectra" in artifacts:
        paths.append(figures.spectra_figure(folder, artifacts["spectra"]))
    paths.append(figures.weights_figure(folder, {n: v[0] for n, v in schemes.items()},
                                        f"weights on T = {T} ({SIGNS}; causal: strict mask)"))
    if "accuracy" in artifacts:
        grid, acc = artifacts["accuracy"]
        paths.append(figures.accuracy_figure(folder, grid, acc, f"ridge classification, {SIGNS}, T = {T}"))
    d = cfg["d"]
    V, N = rung(d, DELTA, GAMMA)
    curves, points = {}, {}
    mu_fine = np.linspace(0.02, 3.5, 120)
    mu_mc = [0.25, 0.5, 1.0, 2.0, 3.0]
    for name, (w, a, k) in schemes.items():
        curves[name] = (mu_fine, [float(_theory(DELTA, GAMMA, name, repr(float(m))).sample.overlap) for m in mu_fine])
        stats_ = [mean_ci(trials(cfg["seeds"], 400 + i, d, V, N, T, SIGNS, w, m, centered=True)[1][:, 0])
                  for i, m in enumerate(mu_mc)]
        points[name] = (mu_mc, *(np.array([s_[i] for s_ in stats_]) for i in range(3)))
    paths.append(figures.overlap_figure(folder, curves, points,
                                        f"centered $S_c$, $\\delta$={DELTA}, $\\gamma$={GAMMA}, d={d}, {cfg['seeds']} seeds"))
    w, a, k = schemes["mean"]
    gammas = [0.1, 0.25, 0.5, 1.0, 1.5, 2.0]
    mus = [0.1, 0.3, 0.5, 0.75, 1.0, 1.5, 2.0, 3.0]
    dd = max(200, d // 2)
    grid = np.zeros((len(mus), len(gammas)))
    for j, g in enumerate(gammas):
        Vg, Ng = rung(dd, DELTA, g)
        for i, m in enumerate(mus):
            grid[i, j] = trials(1, 500 + 10 * i + j, dd, Vg, Ng, T, SIGNS, w, m, centered=True)[1][0, 0]
    crit = lambda g, level: float(_theory(DELTA, repr(float(g)), "mean", 1).level(level).mu2_critical)  # noqa: E731
    paths.append(figures.phase_figure(folder, mus, gammas, grid, lambda g: crit(g, "population"),
                                      lambda g: crit(g, "sample"),
                                      f"mean pooling, {SIGNS}, T={T}, $\\delta$={DELTA}, d={dd}, one seed per cell"))
    return paths
