r"""The populations of Silverstein's equation (:mod:`derive.vocabulary.limit.silverstein`): discrete laws of the scaled
token counts, the diagonal of ``D`` when one weight is nonzero.

* :class:`PoissonPopulation`: the limit, :math:`\kappa n/\lambda` with :math:`n \sim \mathrm{Poisson}(\lambda)`;
* :class:`CountPopulation`: one draw's realized counts (its law at resolution ``1/d``).

Each gives its atoms ``tau(j)``, masses ``mass(j)``, a bound of its tail ``tail(K)``, its distribution function, an
index past its mode and its last atom (``None`` for an infinite one).
"""
from __future__ import annotations

from dataclasses import dataclass

import mpmath
import numpy as np
import sympy as sp

from derive.errors import ParameterError

__all__ = ["PoissonPopulation", "CountPopulation"]


@dataclass(frozen=True)
class PoissonPopulation:
    r"""The law of :math:`\kappa n/\lambda`, :math:`n \sim \mathrm{Poisson}(\lambda)`: atoms
    :math:`\tau_j = \kappa j/\lambda` with masses :math:`p_j = e^{-\lambda}\lambda^j/j!`.

    >>> P = PoissonPopulation(sp.Rational(1, 2), 1)
    >>> with mpmath.workdps(15):
    ...     print(P.tau(2), mpmath.nstr(P.mass(2), 10), mpmath.nstr(P.tail(3), 6))  # tail: a bound of P(n > 3) = 0.00175162
    4.0 0.07581633246 0.00175501
    """

    lam: sp.Rational
    kappa: sp.Rational = sp.Integer(1)

    def __post_init__(self):
        for name in ("lam", "kappa"):
            value = sp.Rational(getattr(self, name))
            if value <= 0:
                raise ParameterError(name, f"must be > 0, got {value}")
            object.__setattr__(self, name, value)

    def tau(self, j: int) -> mpmath.mpf:
        return mpmath.mpf(self.kappa.p) / self.kappa.q * j * self.lam.q / self.lam.p

    def mass(self, j: int) -> mpmath.mpf:
        lam = mpmath.mpf(self.lam.p) / self.lam.q
        return mpmath.exp(-lam + j * mpmath.log(lam) - mpmath.loggamma(j + 1))

    def tail(self, K: int) -> mpmath.mpf:
        r"""An upper bound of :math:`P(n > K)`: :math:`p_{K+1}/(1 - \lambda/(K+2))` once :math:`K + 2 > \lambda`
        (the ratio :math:`p_{j+1}/p_j = \lambda/(j+1)` is at most :math:`\lambda/(K+2)` beyond ``K``), else 1."""
        lam = mpmath.mpf(self.lam.p) / self.lam.q
        if K < 0 or K + 2 <= lam:
            return mpmath.mpf(1)
        return self.mass(K + 1) / (1 - lam / (K + 2))

    def cdf(self, K: int) -> mpmath.mpf:
        r""":math:`P(n \le K)` (0 for ``K < 0``)."""
        if K < 0:
            return mpmath.mpf(0)
        return mpmath.fsum(self.mass(j) for j in range(K + 1))

    def mean(self) -> sp.Rational:
        """:math:`E\\tau = \\kappa`."""
        return self.kappa

    def mode_range(self) -> int:
        """An index beyond which the masses decrease."""
        return int(self.lam) + 1

    def last(self) -> None:
        """The index of the last atom: ``None``, the atoms go on for ever."""
        return None


@dataclass(frozen=True)
class CountPopulation:
    r"""A finite population: the atoms :math:`\tau_j = s\,n_j` at the distinct positive counts
    :math:`n_1 < \dots < n_M` with masses :math:`q_j = V_j/V` (``V_j`` tokens seen ``n_j`` times), and the
    mass :math:`q_0` of the tokens never seen. The law of ``S`` for one realized set of token counts
    (``s = V/N``), against which one draw's spectrum is compared at resolution ``1/d``.

    >>> P = CountPopulation.of([0, 0, 1, 3], 2)   # counts of 4 tokens, s = 2
    >>> [P.tau(j) for j in (1, 2)], [P.mass(j) for j in (0, 1, 2)], P.last()
    ([mpf('2.0'), mpf('6.0')], [mpf('0.5'), mpf('0.25'), mpf('0.25')], 2)
    """

    counts: tuple
    multiplicities: tuple
    total: int
    scale: sp.Rational

    @classmethod
    def of(cls, counts, scale) -> "CountPopulation":
        values, mult = np.unique(np.asarray(counts, dtype=np.int64), return_counts=True)
        if len(values) == 0 or values[0] < 0:
            raise ParameterError("counts", "must be a non-empty sequence of non-negative integers")
        zero = int(mult[0]) if values[0] == 0 else 0
        keep = values > 0
        return cls((0,) + tuple(int(v) for v in values[keep]), (zero,) + tuple(int(k) for k in mult[keep]),
                   int(mult.sum()), sp.Rational(scale))

    def tau(self, j: int) -> mpmath.mpf:
        M = self.last()
        s = mpmath.mpf(self.scale.p) / self.scale.q
        # past the last atom: points beyond it (no mass), for the bounds of the empty tail
        return s * (self.counts[j] if j <= M else self.counts[M] * j / M)

    def mass(self, j: int) -> mpmath.mpf:
        return mpmath.mpf(self.multiplicities[j]) / self.total if j <= self.last() else mpmath.mpf(0)

    def tail(self, K: int) -> mpmath.mpf:
        return mpmath.fsum(self.mass(j) for j in range(max(K + 1, 0), self.last() + 1))

    def cdf(self, K: int) -> mpmath.mpf:
        return 1 - self.tail(K)

    def mode_range(self) -> int:
        return self.last()

    def last(self) -> int:
        """The index of the last atom."""
        return len(self.counts) - 1
