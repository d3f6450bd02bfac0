r"""The bulk of ``S`` conditional on one draw's token matrix: the generalized Marchenko–Pastur law of
:math:`\frac1V ZDZ^\top` with the spectrum of the draw's ``D`` as population (Silverstein's equation,
:mod:`derive.vocabulary.limit.silverstein`; the population: :mod:`derive.vocabulary.draw.spectrum`).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from derive.vocabulary.draw.spectrum import SpectralMeasures, x_at, x_gap
from derive.vocabulary.limit.gaps import crossing

__all__ = ["ConditionalBulk", "conditional_bulk"]

@dataclass(frozen=True)
class ConditionalBulk:
    r"""The conditional bulk of one draw: the generalized Marchenko–Pastur law of :math:`\frac1V ZDZ^\top` with ``D``'s
    spectrum as population (Silverstein's equation :math:`z = x(t)`, :mod:`derive.vocabulary.limit.silverstein`), from
    exact :class:`SpectralMeasures`: ``atom_at_zero`` :math:`\max(0, 1 - (1 - p_0)/\delta)`, the support's ``left`` and
    ``right`` edges and its ``gaps``, the density and the distribution function."""

    measures: SpectralMeasures
    atom_at_zero: float
    left: float
    right: float
    gaps: tuple

    def stieltjes_t(self, zs) -> np.ndarray:
        r"""The root :math:`t \in \mathbb C^+` of :math:`x(t) = z` at each ``z`` (real ``z`` at :math:`+i0`): Newton's
        method continued from :math:`z + 4i(1 + |z|)`, where :math:`t \approx z`, the imaginary part divided by 8 a
        level (four steps a level, eight at the last), in blocks of 256 points."""
        zs = np.asarray(zs, dtype=complex).ravel()
        return np.concatenate([self._solve(zs[i:i + 256]) for i in range(0, len(zs), 256)]) if len(zs) else zs

    def _solve(self, zs: np.ndarray) -> np.ndarray:
        m = self.measures
        floor = np.maximum(zs.imag, 1e-13 * (1 + np.abs(zs.real)))
        eta = 4.0 * (1 + np.abs(zs))
        tv = zs.real + 1j * eta
        while True:
            final = bool(np.all(eta <= floor))
            zz = zs.real + 1j * np.maximum(eta, zs.imag)
            for _ in range(8 if final else 4):
                s0, ds0 = m.S0(tv, 1)
                new = tv - (tv * (1 - s0) - zz) / (1 - s0 - tv * ds0)
                tv = np.where(new.imag > 0, new, new.real + 0.5j * tv.imag)
            if final:
                return tv
            eta = np.maximum(eta / 8, floor)

    def density(self, xs) -> np.ndarray:
        r""":math:`\rho(x) = \operatorname{Im}t/(\pi|t|^2)` inside the support, 0 outside."""
        xs = np.asarray(xs, dtype=float)
        inside = (xs > self.left) & (xs < self.right)
        for a, b in self.gaps:
            inside &= ~((xs >= a) & (xs <= b))
        out = np.zeros(xs.shape)
        if inside.any():
            tv = self.stieltjes_t(xs[inside])
            out[inside] = tv.imag / (np.pi * np.abs(tv) ** 2)
        return out

    @property
    def runs(self) -> list[tuple[float, float, float]]:
        r"""The support as ``(a, b, mass)`` runs of clusters between gaps, each with the exact mass
        :math:`\sum p_k/\delta` of its atoms (exact separation, Bai and Silverstein 1999; the first run the rest of
        :math:`1 - \mu\{0\}`)."""
        m = self.measures
        ends = [self.left] + [x for g in self.gaps for x in g] + [self.right]
        edges_t = [t for t in self._gaps_t]
        masses = []
        for lo_t, hi_t in zip([0.0] + [tb for _, tb in edges_t], [ta for ta, _ in edges_t] + [np.inf]):
            masses.append(float(np.sum(m.p[(m.c > lo_t) & (m.c < hi_t)])) / m.delta)
        masses[0] = 1 - self.atom_at_zero - sum(masses[1:])
        return [(a, b, w) for (a, b), w in zip(zip(ends[::2], ends[1::2]), masses)]

    @property
    def _gaps_t(self) -> list:
        return [g for g in self.measures.gaps()[:-1]]

    def cdf(self, xs, nodes: int = 500) -> np.ndarray:
        r"""The distribution function: the atom at zero plus each run's density integrated by the trapezoid rule in
        :math:`s`, :math:`x = a + (b - a)(1 - \cos\theta)/2`, :math:`\theta = \pi s^3/(s^3 + (1-s)^3)` (the integrand is
        smooth at square-root edges, and at a left edge so close to 0 that the density behaves as :math:`x^{-1/2}`
        above it: :meth:`derive.vocabulary.limit.silverstein.GeneralizedMP.cdf_table`'s rule), scaled to the run's exact
        mass."""
        xs = np.asarray(xs, dtype=float)
        out = np.where(xs >= 0, self.atom_at_zero, 0.0)
        s = np.linspace(0, 1, nodes + 1)
        theta = np.pi * s**3 / (s**3 + (1 - s) ** 3)
        dtheta = np.pi * 3 * s**2 * (1 - s) ** 2 / (s**3 + (1 - s) ** 3) ** 2
        for a, b, mass in self.runs:
            x = a + (b - a) * (1 - np.cos(theta)) / 2
            g = np.zeros_like(x)
            g[1:-1] = self.density(x[1:-1]) * (b - a) * np.sin(theta[1:-1]) / 2 * dtheta[1:-1]
            F = np.concatenate([[0.0], np.cumsum((g[1:] + g[:-1]) / 2 * np.diff(s))])
            out = out + np.interp(xs, x, mass * F / F[-1] if F[-1] > 0 else mass * s, left=0.0, right=mass)
        return out


def conditional_bulk(measures: SpectralMeasures) -> ConditionalBulk:
    r"""The :class:`ConditionalBulk` of exact :class:`SpectralMeasures`. The left edge: if
    :math:`C(0^+) = (1 - p_0)/\delta < 1` the atom at zero stands apart and the support starts at :math:`x(t_b)`,
    :math:`t_b` the crossing of :math:`C = 1` below the first atom; otherwise at the maximum of :math:`x(t)` over
    :math:`t < 0`, where :math:`C` (increasing there) is 1.

    At :math:`D = I` the law is Marchenko–Pastur's with ratio :math:`\delta`: edges :math:`(1 \mp \sqrt\delta)^2`.

    >>> L = conditional_bulk(SpectralMeasures(np.array([0.25]), np.array([1.0]), np.array([1.0]), np.array([0.0]), 0.25, 1))
    >>> round(L.left, 10), round(L.right, 10), float(L.cdf(4.0))
    (0.25, 2.25, 1.0)
    """
    m = measures
    mass = float(np.sum(m.p))
    atom = max(0.0, 1 - mass / m.delta)
    if mass / m.delta < 1:
        tb = float(crossing(m.C, [0.0], [float(m.c[0])], False)[0])
    else:
        lo = -1.0
        while m.C(lo) >= 1:
            lo *= 2
        tb = float(crossing(m.C, [lo], [0.0], False)[0])
    gaps = m.gaps()
    return ConditionalBulk(m, atom, x_at(m, tb), x_at(m, gaps[-1][0]), tuple(x_gap(m, ta, tb_) for ta, tb_ in gaps[:-1]))
