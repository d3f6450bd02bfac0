r"""Monte Carlo of the model's outliers against their derived limits, each comparison with its power.

*Observation.* At a size ``d`` (``V, N`` by :func:`verify.montecarlo.draw.rung`), ``K`` trials give per trial
the signal outlier (the top eigenvector most aligned with ``u``), the vocabulary-mean outlier of the raw ``S``
(the one most aligned with the table's mean direction), the top eigenvalue and the control variates of
:mod:`verify.montecarlo.observables`. The expectation of each observable is estimated with those controls
(:func:`verify.stats.control_variate_mean`), which removes most of the table-to-table spread.

*Finite-size bias.* An outlier's location and overlap have expectation :math:`x_\infty + C/d + O(d^{-2})`
(the outlier is a smooth function of quadratic forms whose fluctuations are :math:`O(d^{-1/2})`, so their mean
shifts at second order). Two rungs, ``d`` and ``d/r``, give Richardson's extrapolation
:math:`(r\,m(d) - m(d/r))/(r-1)` (:func:`verify.stats.richardson`), whose bias is :math:`O(d^{-2})`; it is compared
with the derived limit. Where there is no outlier, the top eigenvalue approaches the bulk edge at the
Tracy-Widom rate :math:`d^{-2/3}` and the top overlap vanishes like :math:`1/d`; the extrapolation uses those
orders.

*Power.* A comparison agrees when :math:`|\hat x_\infty - p| \le t_{level}\, se`. It detects an error of the
formula of :math:`(t_{level} + t_{power})\, se` with probability ``power`` (:func:`verify.stats.min_detectable`);
divided by :math:`|p|` this is the ``min_detectable_rel_error`` reported for each quantity (absolute, as
``min_detectable_abs_error``, where the prediction is 0).
"""
from __future__ import annotations

import mpmath
import numpy as np
import sympy as sp

from derive.errors import ParameterError
from verify.montecarlo.conditional import CONDITIONAL_LAW, conditional_row
from derive import Model, spike
from verify.montecarlo.draw import draw, rung, sample_table
from verify.montecarlo.observables import (conditional_controls, controls, outlier_row, population_operator,
                                          row_controls, table_controls)
from verify.montecarlo.population import table_covariance
from verify.montecarlo.trials import choose_path, solve
from verify.stats import Estimate, control_variate_mean, min_detectable, richardson
from verify.studies.finite_size import rung_seeds

__all__ = ["POWER", "POPULATION_LAW", "CONDITIONAL_LAW", "TW_ORDER", "PROBES", "observe_sample",
           "observe_population", "extrapolate", "compare", "compare_conditional", "predictions", "compare_sample",
           "compare_population"]

POWER = 0.8
"""The probability with which a comparison detects an error of its ``min_detectable`` size."""

POPULATION_LAW = "exact-population"
"""The law of the population-level predictions: the covariance given the table, exact for the paper's
model (docs/notation.md, finite vocabulary included) as ``d/V -> delta``; only the sample level is
Gaussian-equivalent."""

TW_ORDER = 2 / 3
"""The order in ``1/d`` at which the top eigenvalue of a bulk without outlier approaches its edge."""

PROBES = 2
"""The Rademacher probes of each draw's conditional prediction where it takes the Lanczos quadrature
(:func:`verify.montecarlo.conditional.conditional_row`): at ``d = 400`` two probes add a spread of 0.01% to the
signal eigenvalue and 0.05% to its overlap (eight: half that), against 0.3% and 1.2% of a draw's Monte Carlo minus
its prediction, for half the time of eight."""


def observe_sample(d: int, delta, gamma, T: int, signs, weights, alpha: float, mu2: float, *, centered: bool,
                   seeds: int, seed0: int, k: int = 4, conditional: bool = False) -> dict:
    """``seeds`` trials of the model at size ``d`` (the solver ``'auto'`` picks: dense for small ``d``, else the
    certified float32 Lanczos, whose eigenvalues agree with dense to 1e-12 and overlaps to 1e-8, for a third of
    its time at ``d = 400``): per trial the signal outlier's eigenvalue and
    overlap, the top eigenvalue and its overlap, the mean outlier's eigenvalue (raw ``S``), whether the signal
    outlier is the top one, and the control variates (``"controls"``, ``seeds x p``); with ``conditional``, also each
    draw's conditional prediction of the signal's eigenvalue and overlap and of the mean outlier's eigenvalue
    (:func:`conditional_row`, ``"conditional_<observable>"``)."""
    V, N = rung(d, delta, gamma)
    model = Model(d=d, V=V, N=N, T=T, signs=signs, mu2=mu2)
    path = choose_path("auto", False, d, V, N)
    rows, G, C = [], [], []
    for seed in rung_seeds(seed0, d, seeds):
        data = draw(model, seed, weights=weights)
        trial = solve(data, k, centered, path)
        rows.append(outlier_row(trial.top_eigenvalues, trial.eigenvectors, data.E.mean(axis=1)))
        G.append(np.concatenate([controls(model, data, centered, alpha),
                                 conditional_controls(data, centered, mu2)]))
        if conditional:
            C.append(conditional_row(data.tokens, data.weights, V, d, mu2, centered, probes=PROBES))
    cols = np.array(rows, dtype=float).T
    out = {"d": d, "V": V, "N": N, "seeds": seeds, "signal_eigenvalue": cols[0], "signal_overlap": cols[1],
           "top_eigenvalue": cols[2], "top_overlap": cols[3], "mean_eigenvalue": cols[4],
           "signal_on_top": cols[5].astype(bool), "mean_overlap": cols[6], "controls": np.array(G)}
    if conditional:
        for name, col in zip(("signal_eigenvalue", "signal_overlap", "mean_eigenvalue"), np.array(C, dtype=float).T):
            out["conditional_" + name] = col
    return out


def observe_population(d: int, delta, alpha: float, kappa: float, W: float, mu2: float, *, tables: int,
                       seed0: int) -> dict:
    r"""The population level (``N = oo``): the exact :math:`E[c c^T \mid E]` of ``tables`` sampled tables
    (:func:`verify.montecarlo.population.population_covariance`; ``W = 0`` is the centered one), with the same
    observables as :func:`observe_sample` and the controls that concern the table."""
    V, _ = rung(d, delta, 1)
    rows, G = [], []
    operator = population_operator(V, alpha, kappa, W)
    for seed in rung_seeds(seed0, d, tables):
        E = sample_table(np.random.default_rng(seed), d, V, mu2)
        ev, U = np.linalg.eigh(table_covariance(E, alpha, kappa, W))
        rows.append(outlier_row(ev[::-1][:4], U[:, ::-1][:, :4], E.mean(axis=1)))
        G.append(np.concatenate([table_controls(E, mu2), row_controls(E, mu2, operator)]))
    cols = np.array(rows, dtype=float).T
    return {"d": d, "V": V, "N": None, "seeds": tables, "signal_eigenvalue": cols[0], "signal_overlap": cols[1],
            "top_eigenvalue": cols[2], "top_overlap": cols[3], "mean_eigenvalue": cols[4],
            "signal_on_top": cols[5].astype(bool), "mean_overlap": cols[6], "controls": np.array(G)}


def extrapolate(fine: dict, coarse: dict, name: str, order: float = 1.0) -> tuple[Estimate, Estimate]:
    """The control-variate estimate of observable ``name`` at the fine rung, and its Richardson extrapolation
    from the two rungs with bias of ``order`` in ``1/d``."""
    at_fine = control_variate_mean(fine[name], fine["controls"])
    at_coarse = control_variate_mean(coarse[name], coarse["controls"])
    ratio = (fine["d"] / coarse["d"]) ** order
    return at_fine, richardson(at_fine, at_coarse, ratio)


def compare(fine: dict, coarse: dict, predictions: dict, level: float, power: float = POWER) -> dict:
    """Each observable of ``predictions`` (``{name: (predicted, order)}``) extrapolated from the two rungs and
    compared with its predicted limit at ``level``; the power of each comparison.

    Returns ``{"d": [fine, coarse], "seeds": [...], "quantities": {name: {...}}, "min_detectable_rel_error":
    {...}, "agree": bool}`` (JSON-ready floats).
    """
    if fine["d"] <= coarse["d"]:
        raise ParameterError("d", f"the fine rung ({fine['d']}) must be larger than the coarse one ({coarse['d']})")
    out = {"d": [fine["d"], coarse["d"]], "seeds": [fine["seeds"], coarse["seeds"]], "agreement_level": level,
           "power": power,
           "quantities": {}, "min_detectable_rel_error": {}, "min_detectable_abs_error": {}}
    for name, (predicted, order) in predictions.items():
        at_d, limit = extrapolate(fine, coarse, name, order)
        half = limit.half_width(level)
        p = float(predicted)
        detectable = min_detectable(limit, level, power)
        out["quantities"][name] = {
            "predicted": p, "extrapolated": limit.value, "se": limit.se, "df": limit.df,
            "ci": [limit.value - half, limit.value + half],
            "at_d": at_d.value, "at_d_se": at_d.se, "bias_order": order,
            "first_order_bias_at_d": at_d.value - limit.value, "agree": bool(abs(limit.value - p) <= half)}
        if p != 0:
            out["min_detectable_rel_error"][name] = detectable / abs(p)
        else:
            out["min_detectable_abs_error"][name] = detectable
    if not out["min_detectable_abs_error"]:
        del out["min_detectable_abs_error"]
    out["agree"] = all(q["agree"] for q in out["quantities"].values())
    return out


def compare_conditional(fine: dict, coarse: dict, centered: bool, level: float, power: float = POWER) -> dict:
    r"""Monte Carlo minus each draw's conditional prediction (:func:`observe_sample` with ``conditional``), for the
    signal outlier's eigenvalue and overlap and, on the raw ``S``, the mean outlier's eigenvalue.

    Given the tokens the prediction is exact up to :math:`O(1/d)`: the difference of a draw is its Gaussian table's
    fluctuation, :math:`O(d^{-1/2})` with mean :math:`b/d + O(d^{-2})`. Its mean at each rung is estimated with the
    control variates (their mean is 0 whatever the tokens) over the draws that have the outlier (an eigenvalue), or all
    draws (an overlap, predicted 0 where the draw has none; ``outlier_fraction`` says how many have it, and where
    fewer than half do the power is absolute, ``min_detectable_abs_error``), and extrapolated from the two rungs by Richardson, which
    removes :math:`b/d`; the comparison agrees when its interval at ``level`` holds 0. Its power, relative to the mean
    conditional prediction at the fine rung, is ``min_detectable_rel_error``.

    Returns ``{"law": "conditional", "S", "d", "seeds", "quantities": {name: {...}}, "min_detectable_rel_error",
    "agree"}`` (JSON-ready)."""
    names = ["signal_eigenvalue", "signal_overlap"] + ([] if centered else ["mean_eigenvalue"])
    ratio = fine["d"] / coarse["d"]
    out = {"law": CONDITIONAL_LAW, "S": "centered" if centered else "raw", "d": [fine["d"], coarse["d"]],
           "seeds": [fine["seeds"], coarse["seeds"]], "agreement_level": level, "power": power, "quantities": {},
           "min_detectable_rel_error": {}}
    for name in names:
        estimates, fraction = [], []
        for rung_ in (fine, coarse):
            diff = rung_[name] - rung_["conditional_" + name]
            rows = np.isfinite(diff)
            fraction.append(float(np.mean(rows)))
            if rows.sum() < rung_["controls"].shape[1] + 3:
                break
            estimates.append(control_variate_mean(diff[rows], rung_["controls"][rows]))
        if len(estimates) < 2:
            out["quantities"][name] = {"predicted_fraction": fraction, "agree": None}
            continue
        at_d, limit = estimates[0], richardson(estimates[0], estimates[1], ratio)
        half = limit.half_width(level)
        predicted = float(np.nanmean(fine["conditional_" + name]))
        owner = "conditional_mean_eigenvalue" if name == "mean_eigenvalue" else "conditional_signal_eigenvalue"
        with_outlier = float(np.mean(np.isfinite(fine[owner])))
        out["quantities"][name] = {
            "conditional": predicted, "mc_minus_conditional": limit.value, "se": limit.se, "df": limit.df,
            "ci": [limit.value - half, limit.value + half], "at_d": at_d.value, "at_d_se": at_d.se,
            "predicted_fraction": fraction, "outlier_fraction": with_outlier, "agree": bool(abs(limit.value) <= half)}
        if with_outlier >= 0.5 and predicted != 0:
            out["min_detectable_rel_error"][name] = min_detectable(limit, level, power) / abs(predicted)
        else:  # mostly no outlier: the overlap is compared with 0
            out.setdefault("min_detectable_abs_error", {})[name] = min_detectable(limit, level, power)
    out["agree"] = all(q["agree"] for q in out["quantities"].values() if q["agree"] is not None)
    return out


def predictions(outliers, level: str, centered: bool) -> dict:
    """What :class:`derive.gaussian.outliers.Outliers` predicts for the observables at ``level`` (``"sample"`` or
    ``"population"``): ``{observable: (limit, order of the finite-size bias)}``. With the signal outlier, its
    eigenvalue and overlap; without it, the top eigenvalue at the bulk edge (Tracy-Widom order) and a vanishing
    top overlap; on the raw ``S``, the vocabulary-mean outlier's eigenvalue where it exists, and where it does not,
    a vanishing overlap of the mean direction with the top eigenvectors (so that a mean outlier seen where none is
    derived is a disagreement, not a quantity left out)."""
    lv = outliers.level(level)
    if lv.outlier:
        out = {"signal_eigenvalue": (lv.eigenvalue, 1), "signal_overlap": (lv.overlap, 1)}
    else:
        edge = outliers.right_edge if level == "sample" else outliers.population_right_edge
        out = {"top_eigenvalue": (edge, TW_ORDER), "top_overlap": (0, 1)}
    if not centered:
        mean = [x for x in outliers.other_outliers if x.level == level]
        if mean:
            out["mean_eigenvalue"] = (mean[0].eigenvalue, 1)
        else:
            out["mean_overlap"] = (0, 1)
    return out


def _theory(delta, gamma, pooling, mu2, scale, centered: bool):
    """The Gaussian-equivalent outliers (:func:`derive.spike`) of weights ``scale`` times those of ``pooling``."""
    c2 = sp.Rational(scale) ** 2
    m = Model(delta=delta, gamma=gamma, alpha=pooling.alpha * c2, kappa=pooling.kappa * c2,
              sum_w=pooling.W * sp.Rational(scale), mu2=mu2, centered=centered)
    with mpmath.workdps(30):
        return spike(m, law="gaussian-equivalent")


def _located(where: dict, result: dict, fine: dict) -> dict:
    return {**where, **result, "signal_on_top": float(np.mean(fine["signal_on_top"]))}


def compare_sample(d: int, delta, gamma, T: int, signs, pooling, mu2, *, centered: bool, trials: int, seed0: int,
                   level: float, coarse: int = 4, scale=1, conditional: bool = False, coarse_trials: int = 2) -> dict:
    """The sample level of one configuration against its derived outliers: ``trials`` trials at ``d`` and
    ``coarse_trials`` times as many at ``d/coarse`` (:func:`observe_sample`), compared by :func:`compare`. Two times
    suits an outlier (the extrapolation weighs the coarse rung's mean 1/3 against 4/3 for the fine one, and a coarse
    trial costs a fifth to an eighth); where none is predicted the top eigenvalue's extrapolation (Tracy-Widom order)
    weighs the coarse rung 0.66 against 1.66, and its spread at ``d/4`` is four times the fine rung's: about five
    times as many coarse trials then give the smallest interval for the time. ``pooling`` is a
    :class:`derive.model.pooling.Pooling`; its weights are multiplied by ``scale`` (``alpha, kappa`` by its square,
    ``W`` by it). The result names its matrix (``"S"``), the law its predictions are from (``"law"``) and its power.
    With ``conditional``, the same draws are also compared with their conditional predictions
    (:func:`compare_conditional`, under ``"conditional"``)."""
    mu2 = sp.Rational(str(mu2))
    o = _theory(delta, gamma, pooling, mu2, scale, centered)
    w = np.array(pooling.floats()) * float(scale)
    a = float(pooling.alpha) * float(scale) ** 2
    common = dict(T=T, signs=signs, weights=w, alpha=a, mu2=float(mu2), centered=centered, conditional=conditional)
    fine = observe_sample(d, delta, gamma, seeds=trials, seed0=seed0, **common)
    rough = observe_sample(d // coarse, delta, gamma, seeds=coarse_trials * trials, seed0=seed0, **common)
    where = {"S": "centered" if centered else "raw", "law": o.law, "level": "sample", "delta": str(delta),
             "gamma": str(gamma), "mu2": str(mu2), "alpha_over_kappa": float(pooling.alpha / pooling.kappa), "sum_w": float(pooling.W * scale),
             "predicted_outlier": o.sample.outlier, "sample_right_edge": float(o.right_edge)}
    result = _located(where, compare(fine, rough, predictions(o, "sample", centered), level), fine)
    if conditional:
        result["conditional"] = compare_conditional(fine, rough, centered, level)
    return result


def compare_population(d: int, delta, pooling, mu2, *, tables: int, seed0: int, level: float, coarse: int = 4,
                       centered: bool = True, alternatives: dict | None = None) -> dict:
    """The population level (exact covariance of sampled tables, :func:`observe_population`) of one configuration
    against its derived outliers; ``pooling`` needs only ``alpha, kappa, W``. ``alternatives`` (``{name:
    predictions}``) are compared on the same draws, under ``"alternatives"``. The predictions' law is
    :data:`POPULATION_LAW`."""
    mu2 = sp.Rational(str(mu2))
    o = _theory(delta, 0, pooling, mu2, 1, centered)
    W = 0.0 if centered else float(pooling.W)
    args = (delta, float(pooling.alpha), float(pooling.kappa), W, float(mu2))
    fine = observe_population(d, *args, tables=tables, seed0=seed0)
    rough = observe_population(d // coarse, *args, tables=2 * tables, seed0=seed0)
    S = "centered" if centered else "raw"
    result = compare(fine, rough, predictions(o, "population", centered), level)
    if alternatives:
        result["alternatives"] = {name: dict(compare(fine, rough, pred, level), S=S, law=POPULATION_LAW,
                                        level="population")
                                  for name, pred in alternatives.items()}
    where = {"S": S, "law": POPULATION_LAW, "level": "population", "delta": str(delta), "alpha": float(pooling.alpha),
             "kappa": float(pooling.kappa), "mu2": str(mu2), "predicted_outlier": o.population.outlier,
             "population_right_edge": float(o.population_right_edge)}
    return _located(where, result, fine)
