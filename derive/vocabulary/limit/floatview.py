r"""The float64 view of a generalized Marchenko–Pastur law (:class:`~derive.vocabulary.limit.silverstein.GeneralizedMP`):
density, support, runs of clusters and distribution function on NumPy arrays, for histograms and Kolmogorov distances.

The gaps, the left edge and the masses of the runs of clusters are the mpmath law's (exact separation); the density
comes from the float64 root of Silverstein's equation (:func:`~derive.vocabulary.limit.silverstein.solve_float`, error
about ``1e-9``); the distribution function from it by quadrature, scaled to each run's exact mass.

>>> from derive.vocabulary.limit.populations import PoissonPopulation
>>> V = float_view(GeneralizedMP(sp.Integer(1), PoissonPopulation(sp.Integer(1))))
>>> [round(float(x), 6) for x in V.density(np.array([0.5, 100.0]))], round(float(V.cdf(np.array([100.0]))[0]), 9)
([0.304194, 0.0], 1.0)
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

import mpmath
import numpy as np
import sympy as sp

from derive.errors import ParameterError
from derive.vocabulary.limit.silverstein import (Gap, GeneralizedMP, _compiled, float_population, scan_float,
                                                 solve_float, x_float)

__all__ = ["FloatView", "float_view"]


@dataclass(frozen=True)
class FloatView:
    """The float64 view of ``law`` (what it derives is kept by the module's caches, keyed on the law)."""

    law: GeneralizedMP

    def support(self) -> tuple[float, tuple]:
        """``(left edge, (Gap, ...))`` in float64: the left edge (at 20 digits) and the gaps of
        :func:`~derive.vocabulary.limit.silverstein.scan_float`."""
        return _support(self.law)

    def density(self, xs) -> np.ndarray:
        """The density at a float64 array: 0 outside the support (decided against :meth:`support_float`)."""
        xs = np.asarray(xs, dtype=float)
        if not np.all(np.isfinite(xs)):
            raise ParameterError("x", "not a finite number")
        flat = xs.ravel()
        left, gaps = self.support()
        inside = flat > left
        for g in gaps:
            inside &= ~((flat >= float(g.xa)) & (flat <= float(g.xb)))
        out = np.zeros(flat.shape)
        if inside.any():
            tv = solve_float(self.law, flat[inside].astype(complex))
            out[inside] = tv.imag / (np.pi * np.abs(tv) ** 2)
        return out.reshape(xs.shape)

    def intervals(self) -> list[tuple[float, float, float]]:
        """The support as ``(a, b, mass)`` intervals in float64: each run of clusters between two gaps carries
        the exact mass :math:`\\sum_k p_k/\\delta` of its atoms, the first one the rest of :math:`1 - \\mu\\{0\\}`.
        Past the last gap of the float64 population (cut where its tail is below 1e-18) the run ends at that
        truncated population's right edge, the crossing of ``C = 1`` beyond its last atom."""
        left, gaps = self.support()
        cs, ps = float_population(self.law)
        with mpmath.workdps(20):
            starts = [left] + [float(g.xb) for g in gaps]
            firsts = [1] + [g.k + 1 for g in gaps]
            lasts = [g.k for g in gaps] + [len(cs)]
            ends = [float(g.xa) for g in gaps]
            if len(ends) < len(starts):
                ends.append(self._right_end())
            out = [(a, b, float(self.law.cluster_mass(k0, k1))) for a, b, k0, k1 in zip(starts, ends, firsts, lasts)]
            first = float(1 - self.law.atom_at_zero()) - sum(mass for _, _, mass in out[1:])
        return [(out[0][0], out[0][1], first)] + [run for run in out[1:] if run[2] > 1e-18]

    def _right_end(self) -> float:
        cs, ps = float_population(self.law)
        f, d = _compiled(1)[1], float(self.law.delta)

        def C(tv):
            tv = np.atleast_1d(tv)
            return (ps @ f[0](cs[:, None], tv[None, :], d) + tv * (ps @ f[1](cs[:, None], tv[None, :], d))).real[0]

        lo, hi = cs[-1], 2 * cs[-1]
        while C(hi) >= 1:
            hi *= 2
        for _ in range(200):
            mid = (lo + hi) / 2
            lo, hi = (mid, hi) if C(mid) > 1 else (lo, mid)
        return float(x_float(self.law, np.array([hi]))[0])

    def cdf(self, xs, nodes: int = 400) -> np.ndarray:
        r"""The distribution function at a float64 array: the atom at zero plus, for each run of clusters, its
        tabulated distribution function (:meth:`cdf_table`) interpolated linearly."""
        xs = np.asarray(xs, dtype=float)
        out = np.where(xs >= 0, float(self.law.atom_at_zero()), 0.0)
        for x, F in self.cdf_table(nodes):
            out = out + np.interp(xs, x, F, left=0.0, right=F[-1])
        return out

    def cdf_table(self, nodes: int = 400) -> list:
        r"""Per run of clusters (:meth:`intervals`), the nodes ``x`` and its distribution function ``F`` from 0
        to the run's exact mass: the density integrated by the trapezoid rule in :math:`s`, with
        :math:`x = a + (b - a)(1 - \cos\theta)/2` and :math:`\theta = \pi s^3/(s^3 + (1-s)^3)` (the integrand is
        smooth at square-root edges, and at a left edge so close to 0 that the density behaves as :math:`x^{-1/2}`
        above it), scaled to the run's mass. Computed once per ``nodes`` (a Kolmogorov distance calls it per draw).

        >>> from derive.vocabulary.limit.populations import PoissonPopulation
        >>> L = GeneralizedMP(sp.Integer(1), PoissonPopulation(sp.Integer(1)))
        >>> round(float(sum(F[-1] for _, F in float_view(L).cdf_table(64))) + float(L.atom_at_zero()), 12)
        1.0
        """
        return _cdf_table(self, nodes)

    def _density_inside(self, xs: np.ndarray) -> np.ndarray:
        tv = solve_float(self.law, xs.astype(complex))
        return tv.imag / (np.pi * np.abs(tv) ** 2)


@lru_cache(maxsize=256)
def float_view(law: GeneralizedMP) -> FloatView:
    """The float64 view of ``law``."""
    return FloatView(law)


@lru_cache(maxsize=256)
def _support(law: GeneralizedMP) -> tuple[float, tuple]:
    with mpmath.workdps(20):
        left = float(law.left_edge())
    gaps = scan_float(law)
    if law.population.last() is not None:
        with mpmath.workdps(20):
            g = law.gap(law.population.last())
        gaps = gaps + (Gap(g.k, float(g.ta), float(g.tb), float(g.xa), float(g.xb)),)
    return left, gaps


@lru_cache(maxsize=256)
def _cdf_table(view: FloatView, nodes: int) -> list:
    runs = []
    for a, b, mass in view.intervals():
        # a run of small mass is a narrow near-semicircle: a few nodes resolve it to far below its mass
        s = np.linspace(0, 1, (nodes if mass > 1e-4 else 32) + 1)
        theta = np.pi * s**3 / (s**3 + (1 - s) ** 3)
        dtheta = np.pi * 3 * s**2 * (1 - s) ** 2 / (s**3 + (1 - s) ** 3) ** 2
        x = a + (b - a) * (1 - np.cos(theta)) / 2
        g = np.zeros_like(x)
        g[1:-1] = view._density_inside(x[1:-1]) * (b - a) * np.sin(theta[1:-1]) / 2 * dtheta[1:-1]
        F = np.concatenate([[0.0], np.cumsum((g[1:] + g[:-1]) / 2 * np.diff(s))])
        runs.append((x, mass * F / F[-1] if F[-1] > 0 else mass * s))
    return runs
