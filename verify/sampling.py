r"""Direct dense Monte Carlo of the model, for the claims ledger.

One trial: a table :math:`e_v = s_v\mu + z_v` (balanced signs, :math:`\mu = \sqrt{\mu_2}\,e_1`,
:math:`z_v \sim N(0, I_d)`), ``N`` sign vectors from the family, a token per position drawn
uniformly from the class of its sign, pooled :math:`c_n = \sum_t w_t e_{v_{n,t}}`, and the spectrum
of :math:`S = \frac1N\sum_n c_n c_n^T` (or of the centered :math:`S_c`) from the smaller Gram matrix.
Trial ``j`` of a run with ``seed0`` uses ``SeedSequence(seed0).spawn(K)[j]``.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from derive.model import parse_signs


@dataclass
class Sample:
    table: np.ndarray      # d x V
    signs: np.ndarray      # V class signs
    xi: np.ndarray         # N x T sequence signs
    tokens: np.ndarray     # N x T token indices
    pooled: np.ndarray | None  # d x N pooled vectors (None if no weights were given)


def sample(rng: np.random.Generator, d: int, V: int, N: int, T: int, signs: str, weights, mu2: float,
           table: np.ndarray | None = None) -> Sample:
    """Draw a table (unless given) and ``N`` sequences, and pool them with ``weights`` (if not ``None``)."""
    s = np.repeat([1.0, -1.0], V // 2)
    if table is None:
        table = rng.standard_normal((d, V))
        table[0] += np.sqrt(mu2) * s
    xi = parse_signs(signs).sample(rng, N, T)
    within = rng.integers(0, V // 2, size=(N, T))
    tokens = np.where(xi > 0, within, V // 2 + within)
    pooled = None if weights is None else pool(table, tokens, weights)
    return Sample(table, s, xi, tokens, pooled)


def pool(table: np.ndarray, tokens: np.ndarray, weights) -> np.ndarray:
    """Pooled vectors ``c_n = sum_t w_t e_{v_{n,t}}`` (``d x N``) for given tokens."""
    out = np.zeros((table.shape[0], tokens.shape[0]))
    for t, wt in enumerate(np.asarray(weights, dtype=float)):
        out += wt * table[:, tokens[:, t]]
    return out


def spectrum(pooled: np.ndarray, centered: bool = False, k: int = 4):
    """All eigenvalues of ``S`` (descending, length ``d``) and the top-``k`` eigenvectors."""
    C = pooled - pooled.mean(axis=1, keepdims=True) if centered else pooled
    d, N = C.shape
    if d <= N:
        ev, U = np.linalg.eigh(C @ C.T / N)
        return ev[::-1], U[:, ::-1][:, :k]
    ev, Vn = np.linalg.eigh(C.T @ C / N)
    ev, Vn = ev[::-1], Vn[:, ::-1]
    U = C @ Vn[:, :k] / np.sqrt(N * np.maximum(ev[:k], 1e-300))
    return np.concatenate([ev[:d], np.zeros(max(0, d - N))]), U


def trials(K: int, seed0: int, d: int, V: int, N: int, T: int, signs: str, weights, mu2: float,
           centered: bool = False, k: int = 4):
    """``K`` independent trials: top-``k`` eigenvalues (K x k), squared overlaps with u (K x k), spectra."""
    tops, overlaps, spectra = [], [], []
    for child in np.random.SeedSequence(seed0).spawn(K):
        smp = sample(np.random.default_rng(child), d, V, N, T, signs, weights, mu2)
        ev, U = spectrum(smp.pooled, centered, k)
        tops.append(ev[:k])
        overlaps.append(U[0] ** 2)
        spectra.append(ev)
    return np.array(tops), np.array(overlaps), spectra
