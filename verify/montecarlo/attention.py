r"""The actual causal softmax attention on sampled tokens, for comparison with its derived limit.

For each sequence the scores are :math:`\tau\langle x_t, x_s\rangle/d` (the paper's scaling, ``scaling="1/d"``)
or :math:`\tau\langle x_t, x_s\rangle/\sqrt d` (the transformer's, ``"1/sqrt(d)"``: the ``softmax`` scheme) on the
causal window, the attention rows are softmaxes, and the pooled vector is :math:`\frac1{|\mathcal T|}\sum_{t\in\mathcal T}
\sum_s A_{ts} x_s = \sum_s \hat w_s x_s` with data-dependent :math:`\hat w_s = \frac1{|\mathcal T|}
\sum_{t} A_{ts}` (:math:`\mathcal T` the positions with a nonempty window).
"""
from __future__ import annotations

import numpy as np

from derive.model.spec import parse_signs
from verify.montecarlo.draw import balanced_signs, sample_sequences, sample_table

__all__ = ["CHUNK", "CHUNK_FLOATS", "SCALINGS", "chunk_size", "attention_weights", "sequence_attention_weights",
           "weight_deviation"]

CHUNK = 512
"""Most sequences whose ``T x d`` token arrays are held at once by :func:`sequence_attention_weights`."""

CHUNK_FLOATS = 1 << 22
"""Most floats of those token arrays at once (32 MB): fewer sequences at a time at large ``T d``."""

SCALINGS = {"1/d": lambda d: 1.0 / d, "1/sqrt(d)": lambda d: 1.0 / np.sqrt(d)}
"""The scalings of the scores: the paper's ``1/d`` and the transformer's ``1/sqrt(d)``."""


def chunk_size(T: int, d: int) -> int:
    """Sequences per chunk: :data:`CHUNK`, fewer where ``T d`` floats each would pass :data:`CHUNK_FLOATS`."""
    return max(1, min(CHUNK, CHUNK_FLOATS // (T * d)))


def attention_weights(X: np.ndarray, tau: float, mask: str, scaling: str = "1/d") -> np.ndarray:
    """Effective weights ``(n, T)`` of each sequence; ``X`` has shape ``(n, T, d)``; scores ``tau <x_t, x_s>``
    times ``scaling`` (:data:`SCALINGS`)."""
    n, T, d = X.shape
    scores = tau * np.einsum("ntd,nsd->nts", X, X) * SCALINGS[scaling](d)
    t, s = np.indices((T, T))
    allowed = s <= t if mask == "inclusive" else s < t
    scores = np.where(allowed, scores, -np.inf)
    rows = np.arange(T) if mask == "inclusive" else np.arange(1, T)
    scores = scores[:, rows, :]
    scores -= scores.max(axis=2, keepdims=True)
    A = np.exp(scores)
    A /= A.sum(axis=2, keepdims=True)
    return A.mean(axis=1)


def sequence_attention_weights(E: np.ndarray, tokens: np.ndarray, tau: float, mask: str, chunk: int | None = None,
                               scaling: str = "1/d") -> np.ndarray:
    """The data-dependent weights ``(N, T)`` of :func:`attention_weights` for sequences of table
    columns: sequence ``n`` is ``x_t = E[:, tokens[n, t]]``. Sequences are processed ``chunk`` at a
    time (default :func:`chunk_size`), so the ``N x T x d`` token array is never formed.

    >>> E = np.eye(3)
    >>> sequence_attention_weights(E, np.array([[0, 1]]), 0.0, "inclusive").round(3).tolist()
    [[0.75, 0.25]]
    """
    N, T = tokens.shape
    chunk = chunk_size(T, E.shape[0]) if chunk is None else chunk
    out = np.empty((N, T))
    for start in range(0, N, chunk):
        X = np.transpose(E[:, tokens[start:start + chunk]], (1, 2, 0))
        out[start:start + chunk] = attention_weights(X, tau, mask, scaling)
    return out


def weight_deviation(d: int, T: int, tau: float, mask: str, limit, n: int = 400, seed: int = 0,
                     signs: str = "iid", mu2: float = 1.0, scaling: str = "1/d") -> dict:
    """Mean over sequences of the data-dependent weights, its max deviation from ``limit``, and the
    mean per-sequence max deviation (the fluctuation each pooled vector actually sees)."""
    V = max(2 * d, 64)
    rng = np.random.default_rng(seed)
    E = sample_table(rng, d, V, mu2)
    _, tokens = sample_sequences(rng, parse_signs(signs), balanced_signs(V), n, T)
    X = np.transpose(E[:, tokens], (1, 2, 0))
    W = attention_weights(X, tau, mask, scaling)
    limit = np.asarray(limit, dtype=float)
    return {"d": d, "mean_weights": W.mean(axis=0), "bias": float(np.abs(W.mean(axis=0) - limit).max()),
            "per_sequence": float(np.abs(W - limit).max(axis=1).mean())}
