"""Samplers of the sign vectors ``xi in {+1,-1}^T`` of every family, each with exactly its ``R``.

The families and their exact ``R`` live in :mod:`derive.model.signs`; drawing from them is Monte Carlo,
so it lives here.
"""
from __future__ import annotations

import numpy as np

from derive.errors import ParameterError
from derive.model.signs import SignFamily
from derive.numbers import check_count

__all__ = ["MAX_SIGNS", "sample_signs"]

MAX_SIGNS = 10**9
"""Most signs one call of :func:`sample_signs` draws (one byte each)."""


def _fair(rng, shape):
    return (2 * rng.integers(0, 2, size=shape, dtype=np.int8) - 1).astype(np.int8)


def sample_signs(family: SignFamily, rng: np.random.Generator, n: int, T: int) -> np.ndarray:
    """``n`` sign vectors of length ``T`` (an ``(n, T)`` int8 array) with the law of ``family``.

    >>> from derive.model.spec import parse_signs
    >>> xi = sample_signs(parse_signs("prefix:2"), np.random.default_rng(0), 4, 3)
    >>> xi.shape, bool((xi[:, 0] == xi[:, 1]).all())
    ((4, 3), True)
    """
    if not isinstance(family, SignFamily):
        raise ParameterError("signs", f"must be a SignFamily (see derive.model.spec.parse_signs), got {type(family).__name__}")
    if not isinstance(rng, np.random.Generator):
        raise ParameterError("rng", f"must be a numpy.random.Generator, got {type(rng).__name__}")
    n = check_count(n, "n")
    T = family.check(T)
    if n * T > MAX_SIGNS:
        raise ParameterError("n", f"n * T = {n * T} signs exceed {MAX_SIGNS}")
    if family.kind == "iid":
        return _fair(rng, (n, T))
    if family.kind in ("prefix", "suffix"):
        xi = _fair(rng, (n, T))
        L = int(family.param)
        block = slice(0, L) if family.kind == "prefix" else slice(T - L, T)
        xi[:, block] = xi[:, block.start : block.start + 1]
        return xi
    if family.kind == "markov":
        keep = rng.random((n, T - 1)) < (1 + float(family.param)) / 2
        steps = np.where(keep, 1, -1).astype(np.int8)
        first = _fair(rng, (n, 1))
        return (first * np.cumprod(np.concatenate([np.ones((n, 1), np.int8), steps], axis=1), axis=1)).astype(np.int8)
    if family.kind == "gauss":
        rho = float(family.param)
        idx = np.arange(T)
        sigma = rho ** np.abs(idx[:, None] - idx[None, :])
        chol = np.linalg.cholesky(sigma)
        g = rng.standard_normal((n, T)) @ chol.T
        return np.where(g >= 0, 1, -1).astype(np.int8)
    patterns, probs = family.mixture
    pick = rng.choice(len(probs), size=n, p=probs)
    flip = _fair(rng, (n, 1))
    return (patterns[pick] * flip).astype(np.int8)
