"""The draw of the sign vectors ``xi in {+1,-1}^T`` of a trial, with the sizes checked: each family of the catalogue
(:mod:`derive.model.families`) and a user's own carry their sampler (``family.sample``)."""
from __future__ import annotations

import numpy as np

from derive.errors import ParameterError
from derive.model.signs import SignFamily
from derive.numbers import check_count

__all__ = ["MAX_SIGNS", "sample_signs"]

MAX_SIGNS = 10**9
"""Most signs one call of :func:`sample_signs` draws (one byte each)."""


def sample_signs(family: SignFamily, rng: np.random.Generator, n: int, T: int) -> np.ndarray:
    """``n`` sign vectors of length ``T`` (an ``(n, T)`` int8 array) with the law of ``family``.

    >>> from derive.model.families import parse_signs
    >>> xi = sample_signs(parse_signs("prefix:2"), np.random.default_rng(0), 4, 3)
    >>> xi.shape, bool((xi[:, 0] == xi[:, 1]).all())
    ((4, 3), True)
    """
    if not isinstance(family, SignFamily):
        raise ParameterError("signs", f"must be a SignFamily (see derive.model.signs.as_family), got {type(family).__name__}")
    if not isinstance(rng, np.random.Generator):
        raise ParameterError("rng", f"must be a numpy.random.Generator, got {type(rng).__name__}")
    n = check_count(n, "n")
    T = family.check(T)
    if n * T > MAX_SIGNS:
        raise ParameterError("n", f"n * T = {n * T} signs exceed {MAX_SIGNS}")
    return family.sample(rng, n, T)
