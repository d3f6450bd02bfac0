r"""Real causal softmax attention against its ``d -> oo`` limit weights, on the same sampled data.

The paper treats attention pooling at first order: the data-dependent weights
:math:`\hat w_{n,s}` of sequence ``n`` (:func:`verify.attention_sim.sequence_attention_weights`) are
replaced by their limit :math:`w` (:func:`derive.model.attention.causal_weights`), and the spike theory
(:func:`derive.gaussian.outliers.outliers`) is applied with :math:`\alpha(w), \kappa(w)`. Here one trial draws the
table and the tokens once and builds two covariances from them: :math:`S_c` pooled with the limit
weights (the model the theory describes) and :math:`\hat S_c` pooled with the real attention
weights of each sequence. The paired difference of their signal outliers isolates the
first-order approximation from the finite-size error that both share; both are also compared
with the theory.

Reported per ``d``, over seeds (Student-t 95% intervals, :func:`verify.stats.mean_ci`): the
weights' gap (``weight_bias``: the largest coordinate of the mean data weights minus the limit;
``weight_spread``: the mean over sequences of each sequence's largest deviation), the top
eigenvalue and overlap of both covariances, their paired gap (its mean with interval, whether that
interval excludes zero, and its root mean square, the gap a single trial sees), and the errors of
both against the theory. The rate at which the weight gaps and the RMS outlier gaps shrink is
fitted over the ladder (:func:`verify.stats.finite_size_fit`); a mean gap whose interval contains
zero is not resolved at these sizes and gets no rate.
"""
from __future__ import annotations

import dataclasses

import numpy as np

from derive.numbers import parse_rational
from verify.montecarlo.attention import CHUNK, sequence_attention_weights
from verify.montecarlo.draw import draw, ratios
from verify.montecarlo.trials import solve
from verify.studies.finite_size import fit, ladder, rungs, scheme_prediction, summary

__all__ = ["paired_trial", "attention_gap"]


def paired_trial(model, weights, seed, tau: float, mask: str, path: str = "dense") -> dict:
    """One draw of ``model`` solved twice, by the solver ``path`` (``'dense'``, ``'implicit'`` or ``'mixed'``):
    with the (limit) ``weights`` and with the real attention weights."""
    data = draw(model, seed, weights=weights)
    W = sequence_attention_weights(data.E, data.tokens, tau, mask)
    limit = solve(data, 1, True, path)
    attention = solve(dataclasses.replace(data, weights=W), 1, True, path)
    w = data.weights
    return {
        "limit": (limit.top_eigenvalues[0], limit.overlaps[0]),
        "attention": (attention.top_eigenvalues[0], attention.overlaps[0]),
        "weight_bias": float(np.abs(W.mean(axis=0) - w).max()),
        "weight_spread": float(np.abs(W - w).max(axis=1).mean()),
    }


def attention_gap(ds, delta, gamma, T: int, signs: str, tau, mask: str, mu2, seeds: int, seed0: int = 0,
                  path: str = "auto", report=None) -> dict:
    r"""The attention-vs-limit study of the module docstring over the ladder ``ds`` at fixed
    :math:`\delta`, :math:`\gamma` (:func:`verify.montecarlo.draw.rung`); trial ``j`` of rung ``d`` uses
    ``rung_seeds(seed0, d, seeds)[j]``, and the centered covariance is used throughout. ``report(done, total)``,
    if given, hears of each paired trial (:func:`verify.studies.finite_size.rungs`).
    """
    delta, gamma = ratios(delta, gamma)
    # the attention weights hold a chunk of sequences' tokens, CHUNK x T x d floats, three times
    ds = ladder(ds, delta, gamma, T, seeds, signs, extra_per_d=3 * 8 * CHUNK * T)
    w, predicted, _ = scheme_prediction("causal", T, signs, delta, gamma, mu2, True, tau=str(tau), mask=mask)
    tau = float(parse_rational(tau, "tau"))

    def trial(model, seed, chosen):
        return paired_trial(model, w, seed, tau, mask, chosen)

    rows = []
    for d, V, N, _, trials in rungs(ds, delta, gamma, T, signs, mu2, seeds, seed0, path, trial, report):
        row = {"d": d, "V": V, "N": N}
        for key in ("weight_bias", "weight_spread"):
            row[key] = summary([t[key] for t in trials])
        for i, name in enumerate(("eigenvalue", "overlap")):
            lim = np.array([t["limit"][i] for t in trials])
            att = np.array([t["attention"][i] for t in trials])
            gap = att - lim
            row[name] = {"limit": summary(lim), "attention": summary(att), "gap": summary(gap),
                         "gap_rms": float(np.sqrt(np.mean(gap ** 2))),
                         "limit_error": summary(lim - predicted[i]), "attention_error": summary(att - predicted[i])}
            lo, hi = row[name]["gap"]["ci95"]
            row[name]["gap_resolved"] = bool(lo > 0 or hi < 0)
        rows.append(row)
    fits = {"weight_bias": fit(rows, lambda r: r["weight_bias"]["mean"]),
            "weight_spread": fit(rows, lambda r: r["weight_spread"]["mean"]),
            "eigenvalue_gap_rms": fit(rows, lambda r: r["eigenvalue"]["gap_rms"]),
            "overlap_gap_rms": fit(rows, lambda r: r["overlap"]["gap_rms"])}
    return {"parameters": {"delta": str(delta), "gamma": str(gamma), "T": T, "signs": signs, "tau": str(tau),
                           "mask": mask, "mu2": str(mu2), "seeds": int(seeds), "seed0": int(seed0)},
            "limit_weights": w, "predicted": {"eigenvalue": predicted[0], "overlap": predicted[1]},
            "rows": rows, "fits": fits}
