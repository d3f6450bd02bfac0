r"""The model's own spectrum against Monte Carlo: Kolmogorov distances with the atom at zero, the law of one
draw's realized token counts, and the ladders in ``d``.

Three laws are compared with the eigenvalues of one draw of ``S_c``:

* the finite-vocabulary limit law (:mod:`derive.vocabulary.limit.law`); its Kolmogorov distance to a draw is
  :math:`O(d^{-1/2})`, the fluctuation of the token counts (the number of tokens never seen, for one, has
  standard deviation of order :math:`\sqrt V`);
* the law of the draw's own token counts (:class:`derive.vocabulary.limit.populations.CountPopulation`): given the counts only
  the Gaussian table is random, and the distance is :math:`O(1/d)` (rigidity), so ``d * KS`` stays flat;
* the Gaussian-equivalent law :math:`\kappa(\mathrm{MP}_\delta\boxtimes\mathrm{MP}_\gamma)` of C1, whose distance
  does not shrink where the two laws differ.
"""
from __future__ import annotations

import numpy as np
import sympy as sp

from derive.vocabulary.limit.populations import CountPopulation
from derive.vocabulary.limit.silverstein import GeneralizedMP
from verify.montecarlo.draw import Draw

__all__ = ["ZERO_TOLERANCE", "ks_distance", "realized_law"]

ZERO_TOLERANCE = 1e-9
"""Eigenvalues below this fraction of the largest are the structural zeros of ``S`` (rank deficiency), which
LAPACK returns as rounding-level numbers of either sign."""


def ks_distance(eigenvalues, cdf, outliers: int = 0) -> float:
    r"""The Kolmogorov distance :math:`\sup_x |F_n(x) - F(x)|` between the ESD of ``eigenvalues`` and a law with
    distribution function ``cdf`` (vectorized) and at most an atom at zero.

    The supremum is taken at every distinct eigenvalue, on both sides: :math:`|F_n(x) - F(x)|` and
    :math:`|F_n(x^-) - F(x^-)|`, with :math:`F(0^-) = 0`; rounding-level eigenvalues count as zeros. The
    ``outliers`` largest eigenvalues (outliers of a bulk law) are left out of the supremum but stay in the ESD, so
    the distance is still at least ``outliers / n``.

    >>> ks_distance([0.0, 0.0, 1.0, 3.0], lambda x: np.where(x >= 0, 0.5, 0.0) + 0.5 * np.clip(x / 4, 0, 1))
    0.125
    >>> uniform = lambda x: np.clip(x / 4, 0, 1)
    >>> ks_distance([10.0, 0.5, 1.5, 2.5], uniform), ks_distance([10.0, 0.5, 1.5, 2.5], uniform, outliers=1)
    (0.25, 0.125)
    """
    ev = np.asarray(eigenvalues, dtype=float)
    scale = np.max(np.abs(ev)) if ev.size else 0.0
    ev = np.sort(np.where(np.abs(ev) <= ZERO_TOLERANCE * scale, 0.0, ev))
    values, counts = np.unique(ev[:len(ev) - outliers], return_counts=True)
    upper = np.cumsum(counts) / len(ev)
    lower = upper - counts / len(ev)
    F = np.asarray(cdf(values), dtype=float)
    F_left = np.where(values == 0, 0.0, F)
    return float(max(np.max(np.abs(F - upper)), np.max(np.abs(F_left - lower))))


def realized_law(model, data: Draw) -> GeneralizedMP:
    r"""The limit law of ``S`` given the draw's token counts, for one nonzero weight (``D`` diagonal): the
    generalized Marchenko–Pastur law at :math:`\delta = d/V` with population
    :math:`\tau_v = w^2 n_v V/N` (``n_v`` the count of token ``v`` at the weighted position)."""
    w = np.asarray(data.weights, dtype=float)
    nonzero = np.flatnonzero(w)
    if len(nonzero) != 1:
        raise ValueError("the realized law is diagonal only with one nonzero weight")
    position = int(nonzero[0])
    counts = np.bincount(data.tokens[:, position], minlength=model.V)
    weight = sp.nsimplify(float(w[position]) ** 2, rational=True)
    return GeneralizedMP(sp.Rational(model.d, model.V), CountPopulation.of(counts, weight * sp.Rational(model.V, model.N)))
