r"""The population covariance :math:`E[c c^T \mid E]` of one sampled table, exactly.

Only the table is random here: the covariance given the table is built from the derived
entry formula of :math:`M = E[a a^T]` (:func:`derive.model.expectations.second_moment_entry`),
:math:`E M E^T = \frac{\kappa}{V} E E^T + \frac{W^2-\kappa}{V^2}(E1)(E1)^T + \frac{\alpha-\kappa}{V^2}(Es)(Es)^T`,
so its outliers test the population level (``N = oo``) without sampling sequences.
"""
from __future__ import annotations

import numpy as np

from derive.model import expectations as ex
from verify.montecarlo.draw import balanced_signs, sample_table

__all__ = ["coefficients", "table_covariance", "population_covariance"]


def coefficients(alpha, kappa, W, V):
    """The coefficients of ``I``, ``11^T`` and ``ss^T`` in ``M`` at given scalars, as floats."""
    values = {ex.alpha: alpha, ex.kappa: kappa, ex.W: W, ex.V: V}
    return tuple(float(c.subs(values)) for c in ex.second_moment_coefficients())


def table_covariance(E: np.ndarray, alpha: float, kappa: float, W: float) -> np.ndarray:
    """``E M E^T`` for the table ``E`` (``d x V``, classes as in :func:`verify.montecarlo.draw.balanced_signs`)."""
    V = E.shape[1]
    s = balanced_signs(V)
    c_I, c_11, c_ss = coefficients(alpha, kappa, W, V)
    Es, E1 = E @ s, E.sum(axis=1)
    return c_I * E @ E.T + c_11 * np.outer(E1, E1) + c_ss * np.outer(Es, Es)


def population_covariance(rng: np.random.Generator, d: int, V: int, alpha: float, kappa: float,
                          W: float, mu2: float) -> np.ndarray:
    """``E M E^T`` for a table of :func:`verify.montecarlo.draw.sample_table` (``mu = sqrt(mu2) e_1``)."""
    return table_covariance(sample_table(rng, d, V, mu2), alpha, kappa, W)
