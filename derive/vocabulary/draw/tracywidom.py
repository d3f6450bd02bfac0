r"""The Tracy–Widom law of real symmetric matrices (:math:`\beta = 1`): the fluctuations of the largest eigenvalue at
a soft (square-root) edge of a spectrum.

*The law.* :math:`F_1(s) = \det(I - K_1)` on :math:`L^2(s, \infty)`, :math:`K_1(x, y) = \frac12\operatorname{Ai}\bigl(
\frac{x+y}2\bigr)` (Ferrari and Spohn 2005; Bornemann 2010). The Fredholm determinant is evaluated by Bornemann's
method: Gauss–Legendre quadrature on :math:`[s, \max(s, 0) + L]` (the Airy function is below :math:`10^{-19}` past the
cut),
:math:`\det(\delta_{ij} - \sqrt{w_i}K_1(x_i, x_j)\sqrt{w_j})`, exponentially convergent in the number of nodes.

*Its use* (:mod:`derive.vocabulary.draw.finite_size`): where a density vanishes as :math:`\rho(x) \approx \frac K\pi\sqrt{E - x}`
at its right edge ``E`` (the law of the ``d`` eigenvalues of a real sample-covariance matrix), the largest eigenvalue
is :math:`E + (Kd)^{-2/3}\,\mathrm{TW}_1` (the GOE's semicircle has :math:`K = 1`; for sample covariances with a
general population: El Karoui 2007, Lee and Schnelli 2016).
"""
from __future__ import annotations

from functools import lru_cache

import numpy as np

__all__ = ["NODES", "MOMENT_NODES", "CUT", "tracy_widom_cdf", "tracy_widom_moments"]

NODES = 40
"""Gauss–Legendre nodes of the Fredholm determinant. The moments are then within ``2e-11`` of Bornemann's (2010, by
Painlevé II), as at 96 nodes: the convergence is exponential, and 96 took 40 times as long (5 s of a cold ``derive
spike`` whose voice samples token matrices)."""

MOMENT_NODES = 48
"""Gauss–Legendre nodes of each half of the moments' integrals (:func:`_moments`; 160 gave the same to ``1e-12``)."""

CUT = 16.0
r"""The end :math:`\max(s, 0) + L` of the interval that stands for :math:`[s, \infty)`."""


def tracy_widom_cdf(s, nodes: int = NODES) -> np.ndarray:
    r""":math:`F_1(s)` at each ``s`` (an array), by the Fredholm determinant of the module docstring.

    >>> [round(float(x), 6) for x in tracy_widom_cdf([-3.0, 0.0, 2.0])]
    [0.0696, 0.831908, 0.989598]
    """
    from scipy.special import airy

    s = np.atleast_1d(np.asarray(s, dtype=float))
    u, w = np.polynomial.legendre.leggauss(nodes)
    out = np.empty(s.shape)
    for i, a in enumerate(s.ravel()):
        length = max(a, 0.0) + CUT - a
        x = a + length * (u + 1) / 2
        root = np.sqrt(w * length / 2)
        K = 0.5 * airy((x[:, None] + x[None, :]) / 2)[0] * root[:, None] * root[None, :]
        out.ravel()[i] = np.linalg.det(np.eye(nodes) - K)
    return out


@lru_cache(maxsize=None)
def tracy_widom_moments() -> tuple[float, float]:
    r"""The mean and standard deviation of :math:`\mathrm{TW}_1` (:func:`_moments`), kept between runs
    (:func:`derive.cache.memo`).

    >>> [round(x, 6) for x in tracy_widom_moments()]
    [-1.206534, 1.267983]
    """
    from derive.cache import memo

    return tuple(float(x) for x in memo("tracy-widom-1", {"nodes": NODES, "cut": CUT, "moment_nodes": MOMENT_NODES},
                                        lambda: [repr(x) for x in _moments()]))


def _moments() -> tuple[float, float]:
    r"""The mean and standard deviation of :math:`\mathrm{TW}_1`: :math:`E X = \int_0^\infty(1 - F_1) -
    \int_{-\infty}^0 F_1` and :math:`E X^2 = \int_0^\infty 2s(1 - F_1) + \int_{-\infty}^0 2|s|F_1`, by Gauss–Legendre
    (:data:`MOMENT_NODES` nodes) on :math:`[-14, 0]` and :math:`[0, 14]` (:math:`F_1(-14) < 10^{-40}`, :math:`1 - F_1(14) < 10^{-15}`).
    """
    u, w = np.polynomial.legendre.leggauss(MOMENT_NODES)
    s, w = 7 * (u + 1), 7 * w
    above, below = 1 - tracy_widom_cdf(s), tracy_widom_cdf(-s)
    mean = float(w @ above - w @ below)
    second = float(w @ (2 * s * above) + w @ (2 * s * below))
    return mean, float(np.sqrt(second - mean**2))
