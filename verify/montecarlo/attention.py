r"""The actual causal softmax attention on sampled tokens, for comparison with its derived limit.

For each sequence the scores are :math:`\tau\langle x_t, x_s\rangle/d` (the paper's scaling, ``scaling="1/d"``)
or :math:`\tau\langle x_t, x_s\rangle/\sqrt d` (the transformer's, ``"1/sqrt(d)"``: the ``softmax`` scheme) on the
causal window, the attention rows are softmaxes, and the pooled vector is :math:`\frac1{|\mathcal T|}\sum_{t\in\mathcal T}
\sum_s A_{ts} x_s = \sum_s \hat w_s x_s` with data-dependent :math:`\hat w_s = \frac1{|\mathcal T|}
\sum_{t} A_{ts}` (:math:`\mathcal T` the positions with a nonempty window).
"""
from __future__ import annotations

import math

import numpy as np


__all__ = ["CHUNK", "CHUNK_FLOATS", "SCALINGS", "chunk_size", "attention_weights", "sequence_attention_weights",
           "gram_attention_weights"]

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
    return _softmax_rows(tau * np.einsum("ntd,nsd->nts", X, X) * SCALINGS[scaling](d), mask)


def _softmax_rows(scores: np.ndarray, mask: str) -> np.ndarray:
    """Each sequence's weights from its ``T x T`` scores: row softmaxes over the causal window (``mask``), averaged
    over the rows with a nonempty window."""
    T = scores.shape[1]
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


def gram_attention_weights(rng: np.random.Generator, xi: np.ndarray, d: int, mu2: float, tau: float, mask: str,
                           scaling: str = "1/sqrt(d)") -> np.ndarray:
    r"""The attention weights ``(n, T)`` of :func:`attention_weights` for ``n`` sequences of distinct tokens
    :math:`x_t = \xi_t\mu + z_t` at dimension ``d``, drawn through the exact law of their Gram matrix instead of the
    ``T x d`` tokens: with :math:`u = \mu/\|\mu\|`, :math:`h = Z^\top u \sim N(0, I_T)` and :math:`Z^\top P_u^\perp Z`
    a Wishart matrix of ``d - 1`` degrees of freedom independent of it,

    .. math:: X^\top X = L L^\top + (h + \sqrt{\mu_2}\,\xi)(h + \sqrt{\mu_2}\,\xi)^\top

    (Bartlett: ``L`` lower triangular, :math:`L_{ii}^2 \sim \chi^2_{d-i}`, :math:`L_{ij} \sim N(0, 1)` below the
    diagonal). ``T^2`` numbers a sequence instead of ``T d``: the same law as the embeddings' (tests/test_softmax.py
    compares the two).

    >>> w = gram_attention_weights(np.random.default_rng(0), np.ones((3, 4)), 100, 1.0, 1.0, "strict")
    >>> w.shape, bool(np.allclose(w.sum(axis=1), 1))
    ((3, 4), True)
    """
    n, T = xi.shape
    L = np.zeros((n, T, T))
    below = np.tril_indices(T, -1)
    L[:, below[0], below[1]] = rng.standard_normal((n, len(below[0])))
    L[:, np.arange(T), np.arange(T)] = np.sqrt(rng.chisquare((d - 1) - np.arange(T), size=(n, T)))
    v = rng.standard_normal((n, T)) + math.sqrt(mu2) * xi
    G = L @ np.transpose(L, (0, 2, 1)) + v[:, :, None] * v[:, None, :]
    return _softmax_rows(tau * G * SCALINGS[scaling](d), mask)
