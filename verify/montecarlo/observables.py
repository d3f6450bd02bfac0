r"""What one trial shows of the outliers, and the control variates of its draw.

*Which outlier is which.* The raw ``S`` has two outliers of different causes (``derive.gaussian.outliers``): the
signal's, along :math:`\mu + Zs/V`, and the vocabulary mean's, along :math:`m = Z1/V`, nearly orthogonal
to ``u``. Either may be the top eigenvalue. Among the top ``k`` eigenvectors, the signal outlier is the
one with the largest squared overlap with ``u``, the mean outlier the one with the largest squared
overlap with :math:`m/\|m\|` (the table's own mean direction).

*Control variates.* Statistics of the draw whose expectation is known exactly at finite ``d, V, N``
(:data:`CONTROLS`). Regressing a trial's observation on them removes the part of its spread that they
explain without moving its expectation (:func:`verify.stats.control_variate_mean`); the spread of an
outlier comes mostly from the table's class means and from :math:`u^T S u`, which they capture.
"""
from __future__ import annotations

from functools import lru_cache

import numpy as np
import sympy as sp

from derive.model import expectations as ex
from verify.montecarlo.draw import Draw, balanced_signs

__all__ = ["TABLE_CONTROLS", "CONTROLS", "table_controls", "controls", "outlier_row"]

TABLE_CONTROLS = ("mu_dot_g", "g_norm2", "m_norm2")
"""The controls that concern the table only (the population level has no others)."""

CONTROLS = TABLE_CONTROLS + ("pooled_sign2", "pooled_sign", "S_uu", "cbar_norm2")
r"""Names of the control variates, each with expectation exactly 0:

* ``mu_dot_g`` :math:`2\langle\mu, g\rangle`, ``g = Zs/V`` independent of :math:`\mu`;
* ``g_norm2`` :math:`\|g\|^2 - d/V` and ``m_norm2`` :math:`\|m\|^2 - d/V`, ``m = Z1/V``
  (:math:`g, m \sim N(0, I/V)`, the norms of :func:`derive.model.expectations.population_covariance_terms`);
* ``pooled_sign2`` :math:`\frac1N\sum_n (w^T\xi_n)^2 - \alpha` and ``pooled_sign`` :math:`\frac1N\sum_n w^T\xi_n`
  (:math:`E[\xi\xi^T] = R`, :math:`E\xi = 0`);
* ``S_uu`` :math:`u^T S u - E[u^T S u]` and ``cbar_norm2`` :math:`\|\bar c\|^2 - E\|\bar c\|^2` (the sample mean of
  the pooled vectors; :math:`\bar c \bar c^T = S - S_c`), the expectations from
  :func:`derive.model.expectations.sample_covariance_mean`.
"""


@lru_cache(maxsize=None)
def _mean_of_S():
    """``(a, b)`` of :math:`E[S] = a uu^T + b I` for the raw and the centered ``S``, as float functions."""
    args = (ex.mu2, ex.alpha, ex.kappa, ex.W, ex.V, ex.N)
    return {c: sp.lambdify(args, [e["u"], e["identity"]], modules="math")
            for c, e in ((False, ex.sample_covariance_mean(False)), (True, ex.sample_covariance_mean(True)))}


def table_controls(E: np.ndarray, mu2: float) -> np.ndarray:
    """The controls :data:`TABLE_CONTROLS` of a table ``E = mu s^T + Z`` (``mu = sqrt(mu2) e_1``)."""
    d, V = E.shape
    root = np.sqrt(mu2)
    g = E @ balanced_signs(V) / V
    g[0] -= root  # E s / V = mu + Z s / V
    m = E.mean(axis=1)
    return np.array([2 * root * g[0], g @ g - d / V, m @ m - d / V])


def controls(model, data: Draw, centered: bool, alpha: float) -> np.ndarray:
    """The control variates :data:`CONTROLS` of one draw of ``model`` (a :class:`derive.Model`; ``alpha`` the draw's
    weights' :math:`w^T R w`)."""
    w, N, mu2 = data.weights, model.N, float(model.mu2)
    args = (mu2, alpha, float(w @ w), float(w.sum()), model.V, N)
    (a_raw, b_raw), (a_c, b_c) = _mean_of_S()[False](*args), _mean_of_S()[True](*args)
    a, b = (a_c, b_c) if centered else (a_raw, b_raw)
    pooled_sign = data.xi @ w
    c_u = data.A.T @ data.E[0]  # u^T c_n for every sequence, u = e_1
    s_uu = c_u @ c_u / N - (c_u.mean() ** 2 if centered else 0.0)
    cbar = data.E @ (data.A @ np.ones(N)) / N
    # S - S_c = cbar cbar^T, so E||cbar||^2 is the difference of the two traces
    cbar2 = (a_raw - a_c) + model.d * (b_raw - b_c)
    return np.concatenate([table_controls(data.E, mu2),
                           [np.mean(pooled_sign**2) - alpha, np.mean(pooled_sign), s_uu - (a + b), cbar @ cbar - cbar2]])


def outlier_row(values: np.ndarray, vectors: np.ndarray, mean: np.ndarray) -> tuple:
    """From the top eigenpairs (``values`` descending, unit ``vectors`` as columns, ``u = e_1``) and the table's
    mean direction ``mean``: ``(signal eigenvalue, signal overlap, top eigenvalue, top overlap, mean-outlier
    eigenvalue, whether the signal outlier is the top one, mean overlap)``; the mean overlap is the largest squared
    overlap of the unit mean direction with a top eigenvector: O(1) with a mean outlier, O(1/d) without."""
    overlaps = vectors[0] ** 2
    along_mean = (mean @ vectors) ** 2 / float(mean @ mean)
    i, j = int(np.argmax(overlaps)), int(np.argmax(along_mean))
    return values[i], overlaps[i], values[0], overlaps[0], values[j], i == 0, along_mean[j]
