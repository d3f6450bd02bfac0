r"""The law of one draw of the model's tokens: the sizes ``V, N`` at the dimension ``d`` (:func:`sizes`), the class
signs ``s`` (:func:`class_signs`), the sequences' tokens uniform in the class of their signs (:func:`sample_tokens`;
the signs by the family's own sampler, :mod:`derive.model.families`) and the token matrix they make
(:func:`sample_token_matrix`). ``verify``'s Monte Carlo draws its tokens by the same function
(:func:`verify.montecarlo.draw.sample_sequences`).
"""
from __future__ import annotations

import math
from fractions import Fraction

import numpy as np

from derive.errors import ParameterError
from derive.vocabulary.draw.tokenmatrix import TokenMatrix

__all__ = ["sizes", "class_signs", "sample_tokens", "sample_token_matrix"]


def sizes(d: int, delta, gamma) -> tuple[int, int]:
    """``(V, N)`` at dimension ``d``: ``V`` the even integer nearest ``d/delta``, ``N`` the integer nearest ``d/gamma``,
    halves rounded up (exact arithmetic; the rule of ``verify``'s studies).

    >>> sizes(1000, Fraction(1, 2), 4), sizes(5, 2, 2)
    ((2000, 250), (2, 3))
    """
    delta, gamma = Fraction(delta), Fraction(gamma)
    V = 2 * math.floor(d / (2 * delta) + Fraction(1, 2))
    N = math.floor(d / gamma + Fraction(1, 2))
    if V < 2:
        raise ParameterError("delta", f"d/delta = {d}/{delta} gives no vocabulary (V < 2)")
    if N < 1:
        raise ParameterError("gamma", f"d/gamma = {d}/{gamma} gives no sequences (N < 1)")
    return V, N


def class_signs(V: int) -> np.ndarray:
    """The class signs: ``+1`` on the first ``V/2`` tokens, ``-1`` on the rest (tokens are exchangeable).

    >>> class_signs(4)
    array([ 1.,  1., -1., -1.])
    """
    return np.repeat([1.0, -1.0], V // 2)


def sample_tokens(rng: np.random.Generator, xi: np.ndarray, V: int) -> np.ndarray:
    r"""The tokens of sequences with the signs ``xi`` (``N x T``): at each position a token uniform in the class
    :math:`\{v : s_v = \xi_{n,t}\}` of :func:`class_signs`, independently given ``xi`` (``N x T`` int64).

    >>> sample_tokens(np.random.default_rng(0), np.array([[1, -1], [-1, -1]]), 6)
    array([[2, 4],
           [4, 3]])
    """
    within = rng.integers(0, V // 2, size=xi.shape)
    return np.where(xi > 0, within, V // 2 + within)


def sample_token_matrix(rng: np.random.Generator, family, weights, V: int, N: int) -> TokenMatrix:
    r"""One draw's token matrix: ``N`` sign vectors by ``family``'s own sampler (:mod:`derive.model.families`), then at each position a token
    uniform in the class :math:`\{v : s_v = \xi_{n,t}\}` of :func:`class_signs`, entries the ``weights``.

    >>> from derive.model.families import parse_signs
    >>> A = sample_token_matrix(np.random.default_rng(0), parse_signs("prefix:2"), [0.5, 0.5], 6, 4)
    >>> A.shape, bool(np.allclose(A.transpose_times(class_signs(6)).ravel() ** 2, 1.0))  # one class per sequence
    ((6, 4), True)
    """
    weights = np.asarray(weights, dtype=float)
    xi = family.sample(rng, N, len(weights))
    return TokenMatrix.from_tokens(sample_tokens(rng, xi, V), weights, V)
