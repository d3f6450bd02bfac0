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

from derive import Model
from derive.model.families import as_family
from derive.numbers import parse_rational
from verify.montecarlo.attention import CHUNK, attention_weights, sequence_attention_weights
from verify.montecarlo.draw import draw, ratios, sample_sequences, sample_table
from verify.montecarlo.trials import solve
from verify.studies.finite_size import fit, ladder, rungs, scheme_prediction, summary

__all__ = ["paired_trial", "attention_gap", "weight_deviation"]


SCALINGS = ("1/d", "1/sqrt(d)")
"""The scalings of the scores: the paper's (its limit: the causal scheme's fixed weights) and the transformer's (its
limit: the softmax scheme's random weights)."""


def paired_trial(model, weights, seed, tau: float, mask: str, path: str = "dense", scaling: str = "1/d",
                 law=None) -> dict:
    """One draw of ``model`` solved twice, by the solver ``path`` (``'dense'``, ``'implicit'`` or ``'mixed'``):
    with the limit weights and with the real attention weights (scores times ``scaling``). At ``1/d`` the limit weights
    are ``weights``, shared; at ``1/sqrt(d)`` each sequence draws its own from their limit law (``law``:
    ``(T, tau, mask)`` of :func:`derive.model.softmax.limit_weights`, from the draw's own stream), independent of the
    table, and ``weights`` are their mean."""
    data = draw(model, seed, weights=weights)
    W = sequence_attention_weights(data.E, data.tokens, tau, mask, scaling=scaling)
    w = data.weights
    if law is not None:
        from derive.model.softmax import limit_weights

        data = dataclasses.replace(data, weights=limit_weights(np.random.default_rng(seed), model.N, *law))
    limit = solve(data, 1, True, path)
    attention = solve(dataclasses.replace(data, weights=W), 1, True, path)
    spread = (float(abs(np.mean(np.sum(W * W, axis=1)) - np.mean(np.sum(data.weights ** 2, axis=1))))
              if law is not None else float(np.abs(W - w).max(axis=1).mean()))
    return {
        "limit": (limit.top_eigenvalues[0], limit.overlaps[0]),
        "attention": (attention.top_eigenvalues[0], attention.overlaps[0]),
        "weight_bias": float(np.abs(W.mean(axis=0) - w).max()),
        "weight_spread": spread,
    }


def attention_gap(ds, delta, gamma, T: int, signs: str, tau, mask: str, mu2, seeds: int, seed0: int = 0,
                  path: str = "auto", report=None, scaling: str = "1/d") -> dict:
    r"""The attention-vs-limit study of the module docstring over the ladder ``ds`` at fixed
    :math:`\delta`, :math:`\gamma` (:func:`verify.montecarlo.draw.rung`); trial ``j`` of rung ``d`` uses
    ``rung_seeds(seed0, d, seeds)[j]``, and the centered covariance is used throughout. ``report(done, total)``,
    if given, hears of each paired trial (:func:`verify.studies.finite_size.rungs`).

    ``scaling``: the scores' (:data:`SCALINGS`). At ``1/sqrt(d)`` the limit is the softmax scheme's: each sequence's
    weights drawn from their limit law on the same draw, the prediction the Gaussian-equivalent law with per-sequence
    weights (:func:`derive.spike` of the ``softmax`` scheme), ``weight_bias`` the mean weights' largest gap to the
    harmonic ones and ``weight_spread`` the gap of the mean :math:`\|w\|^2` between real and limit weights.
    """
    from derive.errors import ParameterError

    if scaling not in SCALINGS:
        raise ParameterError("scaling", f"must be one of {', '.join(SCALINGS)}, got {scaling!r}")
    delta, gamma = ratios(delta, gamma)
    # the attention weights hold a chunk of sequences' tokens, CHUNK x T x d floats, three times
    family = as_family(signs)
    ds = ladder(ds, delta, gamma, T, seeds, family, extra_per_d=3 * 8 * CHUNK * T)
    scheme = "causal" if scaling == "1/d" else "softmax"
    model = Model(delta=delta, gamma=gamma, T=T, signs=family, weights=scheme, mu2=mu2, centered=True, tau=str(tau),
                  mask=mask)
    w, predicted, _ = scheme_prediction(model)
    tau = float(parse_rational(tau, "tau"))
    law = None if scaling == "1/d" else (T, tau, mask)

    def trial(model, seed, chosen):
        return paired_trial(model, w, seed, tau, mask, chosen, scaling, law)

    rows = []
    for d, V, N, _, trials in rungs(ds, model, seeds, seed0, path, trial, report):
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
                           "mask": mask, "mu2": str(mu2), "seeds": int(seeds), "seed0": int(seed0), "scaling": scaling,
                           "limit": "the causal scheme's limit weights" if law is None else
                           "each sequence's weights drawn from the softmax scheme's limit law"},
            "limit_weights": w, "predicted": {"eigenvalue": predicted[0], "overlap": predicted[1]},
            "rows": rows, "fits": fits}


def weight_deviation(d: int, T: int, tau: float, mask: str, limit, n: int = 400, seed: int = 0,
                     signs: str = "iid", mu2: float = 1.0, scaling: str = "1/d") -> dict:
    """Mean over sequences of the data-dependent weights, its max deviation from ``limit``, and the
    mean per-sequence max deviation (the fluctuation each pooled vector actually sees)."""
    V = max(2 * d, 64)
    rng = np.random.default_rng(seed)
    E = sample_table(rng, d, V, mu2)
    _, tokens = sample_sequences(rng, Model(T=T, signs=signs).signs, V, n, T)
    X = np.transpose(E[:, tokens], (1, 2, 0))
    W = attention_weights(X, tau, mask, scaling)
    limit = np.asarray(limit, dtype=float)
    return {"d": d, "mean_weights": W.mean(axis=0), "bias": float(np.abs(W.mean(axis=0) - limit).max()),
            "per_sequence": float(np.abs(W - limit).max(axis=1).mean())}
