r"""The generalized Marchenko–Pastur law of a discrete population (Silverstein's equation), and its spike.

*Setting.* :math:`S = \frac1V \sum_{v=1}^V \tau_v z_v z_v^\top` (``d x d``), :math:`z_v \sim N(0, I_d)`
independent of the weights :math:`\tau_v`, whose empirical law tends to :math:`H`, and :math:`d/V \to \delta`.
The Stieltjes transform :math:`m(z) = \int d\mu(x)/(x - z)` of the limit law :math:`\mu` of ``S`` solves
(Silverstein 1995)

.. math:: z = -\frac1m + \int \frac{\tau\, dH(\tau)}{1 + \delta\tau m}.

*The variable t.* With :math:`t = -1/m` (in :math:`\mathbb C^+` when :math:`z` is) and
:math:`H = \sum_j p_j \delta_{\tau_j}`, :math:`c_j = \delta\tau_j`, SymPy turns the equation into

.. math:: z = x(t) := t\,\bigl(1 - S_0(t)\bigr), \qquad S_0(t) = \frac1\delta \sum_j \frac{p_j c_j}{c_j - t},

and everything else is derived from :math:`S_0` (:func:`summand`, :func:`x_of_t`):

* density :math:`\rho(x) = \operatorname{Im} m(x + i0)/\pi = \operatorname{Im} t/(\pi |t|^2)`;
* support (Silverstein and Choi 1995): a real ``x`` is outside it iff :math:`x = x(t)` for a real ``t`` off the
  atoms with :math:`x'(t) > 0`; between two consecutive atoms :math:`1 - x'(t)` is a convex function of ``t``, so
  each such interval holds at most one gap;
* atom at zero :math:`\max(0, 1 - (1 - p_0)/\delta)` (``p_0`` the mass of :math:`\tau = 0`; the rank of ``S``);
* the spike :math:`S + \text{signal}` of :mod:`derive.vocabulary.law`: the outlier solves :math:`S_0(t) = -1/\mu_2` in
  a gap, at :math:`\ell = x(t)`, with squared overlap :math:`x'(t)/(\mu_2\, t\, S_0'(t))` (:func:`spike_equations`).

*Precision.* The series over the atoms is truncated at an index ``K`` chosen so that a proven bound of the
tail (the population's tail mass times the supremum of the summand over the atoms left out) is below the
working precision; the same bound, divided by :math:`|x'(t)|`, bounds the error it causes in the root ``t``.
Populations: :class:`PoissonPopulation`, the law of :math:`\kappa n/\lambda`, :math:`n \sim \mathrm{Poisson}(\lambda)`
(token counts at ``T = 1``).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from functools import lru_cache

import mpmath
import numpy as np
import sympy as sp

from derive.errors import ParameterError
from derive.symbols import Formula, named
from derive.vocabulary.gaps import convex_gaps
from derive.symbols import delta, m, mu2, z

__all__ = ["t", "c", "summand", "S0", "x_of_t", "silverstein_equation", "spike_equations", "PoissonPopulation",
           "CountPopulation",
           "GeneralizedMP", "Gap", "Spike", "formulas"]

t = sp.Symbol("t")
"""The variable :math:`t = -1/m`."""
c = sp.Symbol("c", positive=True)
r"""An atom :math:`c = \delta\tau` of the scaled population."""
tau_ = sp.Symbol("tau", nonnegative=True)
S0 = sp.Function("S_0")(t)
"""The population transform :math:`S_0(t)`, an unknown function until a population is given."""

_GUARD = 10
_MAX_TERMS = 20000


@lru_cache(maxsize=None)
def summand() -> sp.Expr:
    r"""One atom's term of :math:`S_0`, derived from Silverstein's equation by :math:`m = -1/t`.

    The term :math:`\tau/(1 + \delta\tau m)` of :math:`h(m) = \int \tau\,dH/(1+\delta\tau m)` becomes
    :math:`-t` times the returned term at :math:`c = \delta\tau`, so :math:`h = -t S_0` and
    :math:`z = -1/m + h = t(1 - S_0)`.

    >>> summand()
    c/(delta*(c - t))
    """
    h_term = tau_ / (1 + delta * tau_ * m)
    derived = (-h_term.subs(m, -1 / t) / t).subs(tau_, c / delta)
    term = c / (delta * (c - t))
    assert sp.simplify(derived - term) == 0
    return term


@lru_cache(maxsize=None)
def x_of_t() -> sp.Expr:
    r"""The inverse of the Stieltjes transform in the variable ``t``: :math:`x(t) = t(1 - S_0(t))`.

    >>> x_of_t()
    t*(1 - S_0(t))
    """
    derived = (-1 / m).subs(m, -1 / t) + (-t * S0)  # -1/m + h(m), h = -t S_0 (see summand)
    x = t * (1 - S0)
    assert sp.expand(derived - x) == 0
    return x


@lru_cache(maxsize=None)
def silverstein_equation() -> sp.Eq:
    r"""Silverstein's equation as :math:`z = x(t)`.

    >>> silverstein_equation()
    Eq(z, t*(1 - S_0(t)))
    """
    return sp.Eq(z, x_of_t())


@lru_cache(maxsize=None)
def spike_equations() -> dict:
    r"""The outlier of a rank-one signal :math:`\sqrt{\mu_2}\,u\,b^\top` added to :math:`Z D^{1/2}/\sqrt V`.

    For :math:`X + \theta u v^\top` (``u``, ``v`` unit, ``X`` left rotation invariant) an outlier singular
    value :math:`\sigma` solves :math:`\theta^2\varphi(\sigma)\tilde\varphi(\sigma) = 1` and the squared
    overlap is :math:`-2\varphi/(\theta^2 D')`, :math:`D = \varphi\tilde\varphi` (Benaych-Georges and
    Nadakuditi 2012). Here :math:`\varphi = -\sigma m(\sigma^2)` and
    :math:`\theta^2\tilde\varphi = \mu_2 \sigma\, k(m)/\sigma^2`, :math:`k(m) = \frac1V s^\top D(I+\delta m D)^{-1} s`,
    which at a diagonal ``D`` independent of the signs is :math:`h(m) = -t S_0(t)`. In ``t``:
    :math:`\theta^2 D = \mu_2 S_0(t)` and :math:`d\ell = x'(t)\,dt`, so the outlier is at :math:`S_0(t) = -1/\mu_2`,
    :math:`\ell = x(t)`, and the overlap is :math:`x'(t)/(\mu_2\, t\, S_0'(t))`.

    >>> e = spike_equations(); e["equation"], e["location"]
    (Eq(S_0(t), -1/mu2), t*(1 + 1/mu2))
    """
    x = x_of_t()
    location = sp.expand(x.subs(S0, -1 / mu2))
    overlap = sp.diff(x, t) / (mu2 * t * sp.diff(S0, t))
    return {"equation": sp.Eq(S0, -1 / mu2), "location": sp.factor_terms(location), "overlap": overlap,
            "edge_condition": sp.Eq(sp.diff(x, t), 0)}


@lru_cache(maxsize=None)
def _compiled(order: int = 3):
    """The summand and its ``t``-derivatives up to ``order``, all at once, as one mpmath function of
    ``(c, t, delta)`` (common subexpressions shared), and each as a NumPy function."""
    terms = [sp.diff(summand(), t, k) for k in range(order + 1)]
    return (sp.lambdify((c, t, delta), terms, modules="mpmath", cse=True),
            [sp.lambdify((c, t, delta), e, modules="numpy") for e in terms])


# ----------------------------------------------------------------------------------------------
# populations


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


# ----------------------------------------------------------------------------------------------
# the law


@dataclass(frozen=True)
class Gap:
    """A gap of the support between the atoms ``k`` and ``k + 1`` (``k = 0``: between the atom at 0 and the
    first cluster): the ``t``-interval ``(ta, tb)`` and its image ``(xa, xb)``, with the mass of the law
    below it."""

    k: int
    ta: mpmath.mpf
    tb: mpmath.mpf
    xa: mpmath.mpf
    xb: mpmath.mpf


@dataclass(frozen=True)
class Spike:
    """The signal outlier: whether it exists, its location, squared overlap with ``u``, the index ``k`` of the gap
    it sits in and the mass of the law above it (``d`` times that is the expected number of bulk eigenvalues
    above it at dimension ``d``)."""

    outlier: bool
    eigenvalue: mpmath.mpf | None
    overlap: mpmath.mpf
    gap: int | None
    mass_above: mpmath.mpf | None


@dataclass(frozen=True)
class GeneralizedMP:
    r"""The limit law of :math:`\frac1V\sum_v \tau_v z_v z_v^\top` for ``d/V -> delta`` and a discrete population.

    mpmath methods work at the current precision; the ``_float`` ones are vectorized float64.

    >>> L = GeneralizedMP(sp.Integer(1), PoissonPopulation(sp.Integer(1)))
    >>> with mpmath.workdps(15):
    ...     print(mpmath.nstr(L.atom_at_zero(), 12), mpmath.nstr(L.density("1/2"), 12))
    0.367879441171 0.304194206343
    """

    delta: sp.Rational
    population: PoissonPopulation
    _gaps: dict = field(default_factory=dict, compare=False, hash=False, repr=False)

    def __post_init__(self):
        value = sp.Rational(self.delta)
        if value <= 0:
            raise ParameterError("delta", f"must be > 0, got {value}")
        object.__setattr__(self, "delta", value)

    # ---- the series -------------------------------------------------------------------------
    def _delta(self) -> mpmath.mpf:
        return mpmath.mpf(self.delta.p) / self.delta.q

    def _c(self, j: int) -> mpmath.mpf:
        return self._delta() * self.population.tau(j)

    def _sup_bound(self, tv, K: int, order: int) -> mpmath.mpf:
        r"""A bound of :math:`\sup_{c \ge c_{K+1}} |\partial_t^{n}\,\mathrm{summand}|` (``n = order``)."""
        c0 = self._c(K + 1)
        a, b = mpmath.re(tv), mpmath.im(tv)
        if a >= c0 and b == 0:
            return mpmath.inf
        ratio = [abs(c0 / (c0 - tv)), mpmath.mpf(1)]
        if a > 0 and b != 0 and abs(tv) ** 2 / a >= c0:
            ratio.append(abs(tv) / abs(b))
        dist = abs(tv - c0) if a < c0 else abs(b)
        return max(ratio) * mpmath.factorial(order) / dist**order / self._delta()

    def _atoms(self, K: int) -> tuple[list, list]:
        """The atoms :math:`c_1..c_K` and their masses at the current precision (cached)."""
        key = ("atoms", mpmath.mp.prec)
        cs, ps = self._gaps.get(key, ([], []))
        if len(cs) < K:
            d = self._delta()
            cs = [d * self.population.tau(j) for j in range(1, K + 1)]
            ps = [self.population.mass(j) for j in range(1, K + 1)]
            self._gaps[key] = (cs, ps)
        return cs[:K], ps[:K]

    def sums(self, tv, orders=(0, 1), eps=None) -> list:
        r""":math:`S_0^{(n)}(t)` for each ``n`` in ``orders``, with the series cut where the tail bound is below
        ``eps`` (default :math:`10^{-(\text{dps}+10)}` relative to the value). Returns ``[(value, bound), ...]``."""
        f = _compiled(max(orders))[0]
        tv = mpmath.mpmathify(tv)
        d = self._delta()
        last = self.population.last()
        K = last if last is not None else self._gaps.get(("K", mpmath.mp.prec), 2 * self.population.mode_range() + 10)
        while K <= _MAX_TERMS:
            cs, ps = self._atoms(K)
            terms = [f(cj, tv, d) for cj in cs]
            vals = [mpmath.fsum(p * row[n] for p, row in zip(ps, terms)) for n in orders]
            tail = self.population.tail(K)
            bounds = [tail * self._sup_bound(tv, K, n) if tail else mpmath.mpf(0) for n in orders]
            scale = eps if eps is not None else mpmath.mpf(10) ** (-(mpmath.mp.dps + _GUARD))
            if all(b <= scale * max(1, abs(v)) for b, v in zip(bounds, vals)):
                self._gaps[("K", mpmath.mp.prec)] = K
                return list(zip(vals, bounds))
            K *= 2
        raise ArithmeticError(f"the series did not reach the working precision at t = {tv}")

    def x(self, tv) -> mpmath.mpc:
        """:math:`x(t) = t(1 - S_0(t))`."""
        (s0, _), = self.sums(tv, (0,))
        return tv * (1 - s0)

    def x_prime(self, tv) -> mpmath.mpc:
        """:math:`x'(t) = 1 - S_0(t) - t S_0'(t)`."""
        (s0, _), (s1, _) = self.sums(tv, (0, 1))
        return 1 - s0 - tv * s1

    # ---- atom, support ----------------------------------------------------------------------
    def atom_at_zero(self) -> mpmath.mpf:
        r"""The mass at zero, :math:`\max(0, 1 - (1 - p_0)/\delta)`: ``S`` has rank :math:`\min(d, \#\{v: \tau_v > 0\})`."""
        return max(mpmath.mpf(0), 1 - (1 - self.population.mass(0)) / self._delta())

    def _C(self, tv):
        """:math:`C = 1 - x'(t) = S_0 + t S_0'` at real ``t``."""
        (s0, _), (s1, _) = self.sums(tv, (0, 1))
        return s0 + tv * s1

    def _dC(self, tv):
        """:math:`C' = 2S_0' + tS_0''` at real ``t``."""
        (s1, _), (s2, _) = self.sums(tv, (1, 2))
        return 2 * s1 + tv * s2

    def gap(self, k: int) -> Gap | None:
        r"""The gap between the clusters of the atoms ``k`` and ``k + 1`` (``k = 0``: the atom at zero and the
        first cluster), or ``None``. In ``t`` it is :math:`\{t \in (c_k, c_{k+1}): C(t) < 1\}` with
        :math:`C = 1 - x' = S_0 + t S_0'` convex there; its minimum is the root of :math:`C'` (increasing), then
        each crossing of ``C = 1`` is found on the side where ``C`` is monotone."""
        key = (k, mpmath.mp.prec)
        if key not in self._gaps:
            self._gaps[key] = None if self._no_gap_float(k) else self._find_gap(k)
        return self._gaps[key]

    def _no_gap_float(self, k: int) -> bool:
        """Whether the float64 scan shows ``C`` well above 1 on the whole interval ``k`` (no gap there: the scan's
        minimum is accurate to far better than the margin 1e-6)."""
        cs, _ = self._float_population()
        if k < 1 or k >= len(cs) or (self.population.last() is not None and k >= self.population.last()):
            return False
        cs, ps = self._float_population()
        f, d = _compiled(1)[1], float(self.delta)
        u = (np.arange(512) + 0.5) / 512
        tv = cs[k - 1] + (cs[k] - cs[k - 1]) * u
        values = (ps @ f[0](cs[:, None], tv[None, :], d) + tv * (ps @ f[1](cs[:, None], tv[None, :], d))).real
        return bool(np.min(values) > 1 + 1e-6) and not any(g.k == k for g in self._scan_float())

    def _find_gap(self, k: int) -> Gap | None:
        # the crossings sit about c_k sqrt(p_k/delta) from the atom c_k: hold the digits to see them
        extra = 0 if k == 0 else max(0, int(-mpmath.log10(self.population.mass(k)) / 2)) + 5
        with mpmath.workdps(mpmath.mp.dps + extra):
            g = self._gap_here(k)
        return None if g is None else Gap(g.k, +g.ta, +g.tb, +g.xa, +g.xb)

    def _gap_here(self, k: int) -> Gap | None:
        hi = self._c(k + 1)
        if k > 0 and k == self.population.last():
            # past the last atom C falls from +oo to 0: one crossing, the right edge, then no support
            far = hi
            while self._C(far) >= 1:
                far *= 2
            ta = _root(self._C, _near(self._C, self._c(k), far, 1, above=True), far, 1)
            return Gap(k, ta, mpmath.inf, mpmath.re(self.x(ta)), mpmath.inf)
        if k == 0:
            # t -> 0+ is m -> -oo, x -> 0: C(0+) = (1 - p_0)/delta decides whether the atom at 0 stands apart
            if self._C(mpmath.mpf(0)) >= 1:
                return None
            tb = _root(self._C, mpmath.mpf(0), _near(self._C, hi, mpmath.mpf(0), 1, above=True), 1)
            return Gap(0, mpmath.mpf(0), tb, mpmath.mpf(0), mpmath.re(self.x(tb)))
        lo = self._c(k)
        mid = (lo + hi) / 2
        tmin = _root(self._dC, _near(self._dC, lo, mid, 0, above=False), _near(self._dC, hi, mid, 0, above=True), 0)
        if self._C(tmin) >= 1:
            return None
        ta = _root(self._C, _near(self._C, lo, tmin, 1, above=True), tmin, 1)
        tb = _root(self._C, tmin, _near(self._C, hi, tmin, 1, above=True), 1)
        return Gap(k, ta, tb, mpmath.re(self.x(ta)), mpmath.re(self.x(tb)))

    def left_edge(self) -> mpmath.mpf:
        """The left edge of the absolutely continuous part (above the atom at zero, if any)."""
        key = ("left", mpmath.mp.prec)
        if key not in self._gaps:
            self._gaps[key] = self._left_edge()
        return self._gaps[key]

    def _left_edge(self) -> mpmath.mpf:
        g = self.gap(0)
        if g is not None:
            return g.xb
        # no atom apart: the edge is the maximum of x(t) over t < 0 (m > 0), where C (increasing there) is 1
        if self._C(mpmath.mpf(0)) == 1:
            return mpmath.mpf(0)
        lo = mpmath.mpf(-1)
        while self._C(lo) >= 1:
            lo *= 2
        tb = _root(self._C, lo, mpmath.mpf(0), 1)
        return mpmath.re(self.x(tb))

    def gaps_up_to(self, xv) -> list[Gap]:
        """Every gap (``k >= 1``) whose left end is at most ``xv``, and the first one beyond it."""
        out, k = [], 1
        while True:
            g = self.gap(k)
            if g is not None:
                out.append(g)
                if g.xa > xv:
                    return out
            k += 1
            if k > _MAX_TERMS:
                raise ArithmeticError("no gap found beyond x")

    def cluster_mass(self, k_lo: int, k_hi: int) -> mpmath.mpf:
        """The mass of the clusters of the atoms ``k_lo..k_hi`` (``k_lo >= 1``), when separated by gaps on both
        sides: :math:`\\sum p_k/\\delta` (exact separation, Bai and Silverstein 1999)."""
        return mpmath.fsum(self.population.mass(j) for j in range(k_lo, k_hi + 1)) / self._delta()

    def inside(self, xv) -> bool:
        """Whether ``xv`` lies in the support of the absolutely continuous part."""
        xv = mpmath.mpf(xv)
        if xv <= 0 or xv < self.left_edge():
            return False
        return not any(g.xa <= xv <= g.xb for g in self.gaps_up_to(xv))

    # ---- density, Stieltjes -----------------------------------------------------------------
    def solve_t(self, zv, guess=None) -> mpmath.mpc:
        """The root :math:`t \\in \\mathbb C^+` of :math:`x(t) = z` (``z`` in the closed upper half plane, inside
        the support when real), by Newton's method from ``guess`` (the float64 path's root by default)."""
        zv = mpmath.mpc(zv)
        if guess is None:
            guess = complex(self._solve_float(np.array([complex(zv)]))[0])
        tv = mpmath.mpc(guess)
        # the caller holds guard digits: a step below 10^(3 - dps) relative is converged
        eps = mpmath.mpf(10) ** (3 - mpmath.mp.dps)
        for _ in range(200):
            (s0, b0), (s1, b1) = self.sums(tv, (0, 1))
            F = tv * (1 - s0) - zv
            Fp = 1 - s0 - tv * s1
            step = F / Fp
            new = tv - step
            if mpmath.im(new) <= 0:
                new = mpmath.mpc(mpmath.re(new), mpmath.im(tv) / 2)
            tv = new
            if abs(step) <= eps * abs(tv):
                # the truncation moves the root by at most |t| b0/|x'(t)| to first order
                if abs(tv) * b0 / abs(Fp) > eps * max(abs(mpmath.im(tv)), eps * abs(tv)):
                    raise ArithmeticError(f"truncation error not controlled at z = {zv}")
                return tv
        raise ArithmeticError(f"Newton did not converge at z = {zv}")

    def stieltjes(self, zv) -> mpmath.mpc:
        r""":math:`m(z) = -1/t(z)` at ``z`` off the real axis (:math:`m(\bar z) = \overline{m(z)}`)."""
        zv = mpmath.mpc(zv)
        if mpmath.im(zv) == 0:
            raise ParameterError("z", "must be off the real axis")
        if mpmath.im(zv) < 0:
            return mpmath.conj(self.stieltjes(mpmath.conj(zv)))
        with mpmath.workdps(mpmath.mp.dps + _GUARD):
            out = -1 / self.solve_t(zv)
        return +out

    def density(self, xv) -> mpmath.mpf:
        r""":math:`\rho(x) = \operatorname{Im} t/(\pi|t|^2)` at the root of :math:`x(t) = x` in :math:`\mathbb C^+`;
        0 outside the support (gaps decided at the working precision plus guard digits)."""
        with mpmath.workdps(mpmath.mp.dps + _GUARD):
            xv = mpmath.mpf(xv)
            if not self.inside(xv):
                return mpmath.mpf(0)
            tv = self.solve_t(xv)
            out = mpmath.im(tv) / (mpmath.pi * abs(tv) ** 2)
        return +out

    # ---- the spike --------------------------------------------------------------------------
    def spike(self, mu2_) -> Spike:
        r"""The outlier of the signal of strength ``mu2`` (:func:`spike_equations`): the root of
        :math:`S_0(t) = -1/\mu_2` in an interval :math:`(c_k, c_{k+1})` is an outlier where it lies in that
        interval's gap (:math:`x' > 0`); the largest one is returned.

        The intervals are searched up to the first ``k`` past the mode with :math:`c_k \ge 8\mu_2\kappa`,
        :math:`(\lambda/\delta) P(n \ge J) \le 1/(4\mu_2)` (``J`` the last atom below :math:`c_k/2`) and
        :math:`p_k < \delta/(4\mu_2(\mu_2+1))`. Beyond it no root is an outlier: in a gap of such an interval
        :math:`-S_0(t) \le 1/(2\mu_2) + p_k c_k/(\delta(t - c_k))`, so a root has :math:`t - c_k \le 2\mu_2 p_k c_k/\delta`,
        where :math:`C = 1 - x' \ge -1/\mu_2 + \delta/(4\mu_2^2 p_k) > 1`.
        """
        mu2_ = mpmath.mpf(mu2_)
        if mu2_ <= 0:
            return Spike(False, None, mpmath.mpf(0), None, None)
        with mpmath.workdps(mpmath.mp.dps + _GUARD):
            target = -1 / mu2_

            def S(tv):
                return self.sums(tv, (0,))[0][0]

            best = None
            k, last = 1, self.population.last()
            while (k <= last) if last is not None else not self._beyond_outliers(k, mu2_):
                if last is None and self._root_left_of_gap(k, target):
                    k += 1
                    continue
                g = self.gap(k)
                tb = None if g is None else g.tb if mpmath.isfinite(g.tb) else _beyond(S, g.ta, target)
                # S_0 increases on (c_k, c_{k+1}): its root lies in the gap iff S_0(ta) <= -1/mu2 <= S_0(tb)
                if g is not None and S(g.ta) <= target <= S(tb):
                    ts = _root(S, g.ta, tb, target)
                    (s0, _), (s1, _) = self.sums(ts, (0, 1))
                    best = (k, ts * (1 - s0), (1 - s0 - ts * s1) / (mu2_ * ts * s1))
                k += 1
            if best is None:
                return Spike(False, None, mpmath.mpf(0), None, None)
            k, ell, ov = best
            above = (1 - self.population.cdf(k)) / self._delta()
        return Spike(True, +ell, +ov, k, +above)

    def spike_windows(self) -> list:
        r"""The values of :math:`\mu_2` for which the signal has an outlier in each gap ``k`` (``1 <= k <=``
        :meth:`negligible_index`): :math:`S_0` increases on the gap's interval, so the root of
        :math:`S_0 = -1/\mu_2` lies in the gap :math:`(t_a, t_b)` iff
        :math:`-1/S_0(t_a) < \mu_2 < -1/S_0(t_b)` (``inf`` when :math:`S_0(t_b) \ge 0`). Sorted by their lower
        ends; windows of different gaps may overlap (two outliers) or leave holes (the outlier inside a cluster)."""
        out = []
        with mpmath.workdps(mpmath.mp.dps + _GUARD):
            for k in range(1, self.negligible_index() + 1):
                g = self.gap(k)
                if g is None:
                    continue
                sa, sb = (self.sums(tv, (0,))[0][0] for tv in (g.ta, g.tb))
                if sa < 0:
                    out.append((-1 / sa, -1 / sb if sb < 0 else mpmath.inf))
        return sorted((+a, +b) for a, b in out)

    def _root_left_of_gap(self, k: int, target) -> bool:
        r"""A cheap sufficient test that the root of :math:`S_0 = ` ``target`` in :math:`(c_k, c_{k+1})` lies left
        of the gap: a point ``t'`` left of the minimum of ``C`` (``C' < 0``) with ``C(t') > 1`` (so left of the gap)
        where :math:`S_0(t') >` ``target`` (so right of the root, ``S_0`` increasing). Far out, the root sits within
        about :math:`p_k` of the atom and the gap about :math:`\sqrt{p_k}` from it."""
        extra = max(0, int(-mpmath.log10(self.population.mass(k)))) + 5
        with mpmath.workdps(mpmath.mp.dps + extra):
            lo, hi = self._c(k), self._c(k + 1)
            tp = lo + (hi - lo) * mpmath.sqrt(self.population.mass(k)) / 16
            return bool(self._dC(tp) < 0 and self._C(tp) > 1 and self.sums(tp, (0,))[0][0] > target)

    def _beyond_outliers(self, k: int, mu2_) -> bool:
        """Whether the conditions of :meth:`spike` hold at ``k`` (and hence at every larger ``k``)."""
        P = self.population
        if k <= P.mode_range():
            return False
        ck = self._c(k)
        J = max(j for j in range(0, k + 1) if self._c(j) <= ck / 2)
        lam = mpmath.mpf(P.lam.p) / P.lam.q
        kap = mpmath.mpf(P.kappa.p) / P.kappa.q
        return bool(ck >= 8 * mu2_ * kap and lam / self._delta() * P.tail(J - 1) <= 1 / (4 * mu2_)
                    and P.mass(k) < self._delta() / (4 * mu2_ * (mu2_ + 1)))

    def negligible_index(self) -> int:
        """The first ``k`` beyond the mode whose atom's mass is below the working precision (or the last atom)."""
        if self.population.last() is not None:
            return self.population.last()
        k = self.population.mode_range()
        while self.population.mass(k) >= mpmath.mpf(10) ** (-mpmath.mp.dps):
            k += 1
        return k

    # ---- float64 paths ----------------------------------------------------------------------
    def _float_population(self):
        """The atoms and masses in float64, cut where the tail mass is below 1e-18."""
        key = "float population"
        if key not in self._gaps:
            K = self.population.mode_range()
            with mpmath.workdps(20):
                while self.population.tail(K) > 1e-18:
                    K += 1
                cs = np.array([float(self._c(j)) for j in range(1, K + 1)])
                ps = np.array([float(self.population.mass(j)) for j in range(1, K + 1)])
            self._gaps[key] = (cs, ps)
        return self._gaps[key]

    def _solve_float(self, zs: np.ndarray) -> np.ndarray:
        """The root ``t`` in the upper half plane at each ``z`` (real ``z`` taken at ``+ i0``), by continuation from
        ``z + i 4(1+|z|)`` (where ``t`` is close to ``z``) down to ``Im z``, the imaginary part divided by 8 at each
        level, four Newton steps per level and eight at the last."""
        cs, ps = self._float_population()
        f, d = _compiled(1)[1], float(self.delta)
        zs = np.asarray(zs, dtype=complex).ravel()
        target = zs.imag.copy()
        floor = np.maximum(target, 1e-13 * (1 + np.abs(zs.real)))
        eta = 4.0 * (1 + np.abs(zs))
        tv = zs.real + 1j * eta
        while True:
            final = bool(np.all(eta <= floor))
            zz = zs.real + 1j * np.maximum(eta, target)
            for _ in range(8 if final else 4):
                s0 = ps @ f[0](cs[:, None], tv[None, :], d)
                s1 = ps @ f[1](cs[:, None], tv[None, :], d)
                new = tv - (tv * (1 - s0) - zz) / (1 - s0 - tv * s1)
                tv = np.where(new.imag > 0, new, new.real + 0.5j * tv.imag)
            if final:
                return tv
            eta = np.maximum(eta / 8, floor)

    def _scan_float(self) -> list:
        """Every gap ``k >= 1`` between two atoms of the float64 population, found in float64 at once
        (:func:`derive.vocabulary.gaps.convex_gaps`, a grid of 256 points per interval). Returns the gaps as :class:`Gap` of floats. A gap narrower
        than a 256th of its interval may be missed; the density there is zero on a set of that width."""
        key = "float scan"
        if key in self._gaps:
            return self._gaps[key]
        cs, ps = self._float_population()
        f, d = _compiled(1)[1], float(self.delta)

        def C(tv):  # tv: (n,) real points
            s0 = ps @ f[0](cs[:, None], tv[None, :], d)
            s1 = ps @ f[1](cs[:, None], tv[None, :], d)
            return (s0 + tv * s1).real

        idx, ta, tb = convex_gaps(C, cs[:-1], cs[1:], points=256)
        xa = self._x_float(ta)
        xb = self._x_float(tb)
        gaps = [Gap(int(k) + 1, a_, b_, xa_, xb_) for k, a_, b_, xa_, xb_ in zip(idx, ta, tb, xa, xb)]
        self._gaps[key] = gaps
        return gaps

    def _x_float(self, tv: np.ndarray) -> np.ndarray:
        cs, ps = self._float_population()
        f, d = _compiled(1)[1], float(self.delta)
        return (tv * (1 - ps @ f[0](cs[:, None], tv[None, :], d))).real

    def support_float(self) -> tuple[float, list]:
        """``(left edge, [Gap, ...])`` in float64: the left edge (at 20 digits) and the gaps of :meth:`_scan_float`."""
        key = "float support"
        if key not in self._gaps:
            with mpmath.workdps(20):
                left = float(self.left_edge())
            gaps = self._scan_float()
            if self.population.last() is not None:
                with mpmath.workdps(20):
                    g = self.gap(self.population.last())
                gaps = gaps + [Gap(g.k, float(g.ta), float(g.tb), float(g.xa), float(g.xb))]
            self._gaps[key] = (left, gaps)
        return self._gaps[key]

    def density_float(self, xs) -> np.ndarray:
        """The density at a float64 array: 0 outside the support (decided against :meth:`support_float`)."""
        xs = np.asarray(xs, dtype=float)
        if not np.all(np.isfinite(xs)):
            raise ParameterError("x", "not a finite number")
        flat = xs.ravel()
        left, gaps = self.support_float()
        inside = flat > left
        for g in gaps:
            inside &= ~((flat >= float(g.xa)) & (flat <= float(g.xb)))
        out = np.zeros(flat.shape)
        if inside.any():
            tv = self._solve_float(flat[inside].astype(complex))
            out[inside] = tv.imag / (np.pi * np.abs(tv) ** 2)
        return out.reshape(xs.shape)

    def intervals_float(self) -> list[tuple[float, float, float]]:
        """The support as ``(a, b, mass)`` intervals in float64: each run of clusters between two gaps carries
        the exact mass :math:`\\sum_k p_k/\\delta` of its atoms, the first one the rest of :math:`1 - \\mu\\{0\\}`.
        Past the last gap of the float64 population (cut where its tail is below 1e-18) the run ends at that
        truncated population's right edge, the crossing of ``C = 1`` beyond its last atom."""
        left, gaps = self.support_float()
        cs, ps = self._float_population()
        with mpmath.workdps(20):
            starts = [left] + [float(g.xb) for g in gaps]
            firsts = [1] + [g.k + 1 for g in gaps]
            lasts = [g.k for g in gaps] + [len(cs)]
            ends = [float(g.xa) for g in gaps]
            if len(ends) < len(starts):
                ends.append(self._right_end_float())
            out = [(a, b, float(self.cluster_mass(k0, k1))) for a, b, k0, k1 in zip(starts, ends, firsts, lasts)]
            first = float(1 - self.atom_at_zero()) - sum(mass for _, _, mass in out[1:])
        return [(out[0][0], out[0][1], first)] + [run for run in out[1:] if run[2] > 1e-18]

    def _right_end_float(self) -> float:
        cs, ps = self._float_population()
        f, d = _compiled(1)[1], float(self.delta)

        def C(tv):
            tv = np.atleast_1d(tv)
            return (ps @ f[0](cs[:, None], tv[None, :], d) + tv * (ps @ f[1](cs[:, None], tv[None, :], d))).real[0]

        lo, hi = cs[-1], 2 * cs[-1]
        while C(hi) >= 1:
            hi *= 2
        for _ in range(200):
            mid = (lo + hi) / 2
            lo, hi = (mid, hi) if C(mid) > 1 else (lo, mid)
        return float(self._x_float(np.array([hi]))[0])

    def cdf_float(self, xs, nodes: int = 400) -> np.ndarray:
        r"""The distribution function at a float64 array: the atom at zero plus, for each run of clusters, its
        tabulated distribution function (:meth:`cdf_table`) interpolated linearly."""
        xs = np.asarray(xs, dtype=float)
        out = np.where(xs >= 0, float(self.atom_at_zero()), 0.0)
        for x, F in self.cdf_table(nodes):
            out = out + np.interp(xs, x, F, left=0.0, right=F[-1])
        return out

    def cdf_table(self, nodes: int = 400) -> list:
        r"""Per run of clusters (:meth:`intervals_float`), the nodes ``x`` and its distribution function ``F`` from 0
        to the run's exact mass: the density integrated by the trapezoid rule in :math:`s`, with
        :math:`x = a + (b - a)(1 - \cos\theta)/2` and :math:`\theta = \pi s^3/(s^3 + (1-s)^3)` (the integrand is
        smooth at square-root edges, and at a left edge so close to 0 that the density behaves as :math:`x^{-1/2}`
        above it), scaled to the run's mass. Computed once per ``nodes`` (a Kolmogorov distance calls it per draw).

        >>> L = GeneralizedMP(sp.Integer(1), PoissonPopulation(sp.Integer(1)))
        >>> round(float(sum(F[-1] for _, F in L.cdf_table(64))) + float(L.atom_at_zero()), 12)
        1.0
        """
        key = ("cdf", nodes)
        if key not in self._gaps:
            runs = []
            for a, b, mass in self.intervals_float():
                # a run of small mass is a narrow near-semicircle: a few nodes resolve it to far below its mass
                s = np.linspace(0, 1, (nodes if mass > 1e-4 else 32) + 1)
                theta = np.pi * s**3 / (s**3 + (1 - s) ** 3)
                dtheta = np.pi * 3 * s**2 * (1 - s) ** 2 / (s**3 + (1 - s) ** 3) ** 2
                x = a + (b - a) * (1 - np.cos(theta)) / 2
                g = np.zeros_like(x)
                g[1:-1] = self._density_inside(x[1:-1]) * (b - a) * np.sin(theta[1:-1]) / 2 * dtheta[1:-1]
                F = np.concatenate([[0.0], np.cumsum((g[1:] + g[:-1]) / 2 * np.diff(s))])
                runs.append((x, mass * F / F[-1] if F[-1] > 0 else mass * s))
            self._gaps[key] = runs
        return self._gaps[key]

    def _density_inside(self, xs: np.ndarray) -> np.ndarray:
        tv = self._solve_float(xs.astype(complex))
        return tv.imag / (np.pi * np.abs(tv) ** 2)


def _near(f, pole, inner, value, above: bool):
    """A point between ``inner`` and ``pole`` where ``f`` (monotone, infinite at the pole) is beyond ``value``:
    above it if ``above``, else below. The distance to the pole is halved until it is."""
    step = inner - pole
    for _ in range(mpmath.mp.prec):
        step /= 8
        point = pole + step
        if (mpmath.re(f(point)) > value) == above:
            return point
    raise ArithmeticError(f"no point beyond {value} found near {pole}")


def _beyond(f, start, value):
    """A point past ``start`` where ``f`` (increasing to a limit above ``value``) exceeds ``value``."""
    point = 2 * start
    while f(point) <= value:
        point *= 2
    return point


def _root(f, a, b, value):
    """The crossing of ``f = value`` in ``[a, b]`` for an ``f`` that crosses it once there: the Anderson–Björck
    bracketing method (the functions here have poles at the ends of their intervals, where Newton's steps
    overshoot), to the working precision."""
    tol = mpmath.mpf(2) ** (-mpmath.mp.prec + 6) * max(abs(mpmath.mpf(a)), abs(mpmath.mpf(b)), 1)
    x = mpmath.findroot(lambda u: mpmath.re(f(u)) - value, (mpmath.mpf(a), mpmath.mpf(b)), solver="anderson",
                        tol=tol, verify=False, maxsteps=8 * mpmath.mp.prec)
    if not min(a, b) <= x <= max(a, b):
        raise ArithmeticError("the root left its bracket")
    return x


def formulas() -> list[Formula]:
    src = "derive/vocabulary/silverstein.py"
    hyp = (r"$S = \frac1V \sum_v \tau_v z_v z_v^\top$, $z_v \sim N(0, I_d)$ independent of $\tau_v \sim H$, "
           r"$d/V \to \delta$; $t = -1/m$")
    e = spike_equations()
    spiked = hyp + r"; at the root $t$ of $S_0(t) = -1/\mu_2$"
    return [
        Formula("generalized Marchenko-Pastur (Silverstein) equation in $t = -1/m$", silverstein_equation(), hyp,
                f"{src}:silverstein_equation", claim="C1"),
        Formula("one atom's term of $S_0(t)$", summand(), hyp + r"; atom $c = \delta\tau$", f"{src}:summand",
                named("s_c", r"s_c(t)"), claim="C1"),
        Formula("signal outlier equation (generalized MP, discrete population)", e["equation"],
                hyp + r"; signal $\sqrt{\mu_2}\, u s^\top$ added to $Z$; $D$ diagonal", f"{src}:spike_equations",
                claim="C2-C4"),
        Formula("signal outlier location (generalized MP)", e["location"], spiked, f"{src}:spike_equations",
                named("lambda_out_H", r"\lambda_{\mathrm{out}}(H)"), claim="C2-C4"),
        Formula("signal outlier squared overlap (generalized MP)", e["overlap"], spiked, f"{src}:spike_equations",
                named("overlap_H", r"|\langle \hat u, u\rangle|^2(H)"), claim="C2-C4"),
    ]
