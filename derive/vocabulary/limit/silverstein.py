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
* the signal outlier of the model's ``S``: :mod:`derive.vocabulary.limit.signal` (at one nonzero weight
  :func:`~derive.vocabulary.limit.signal.signal_outlier` on this law).

*Precision.* The series over the atoms is truncated at an index ``K`` chosen so that a proven bound of the
tail (the population's tail mass times the supremum of the summand over the atoms left out) is below the
working precision; the same bound, divided by :math:`|x'(t)|`, bounds the error it causes in the root ``t``.
Populations: :mod:`derive.vocabulary.limit.populations`. The float64 evaluation (the first guesses of the mpmath solver,
the fast scan for gaps) is here too (:func:`solve_float`, :func:`scan_float`); the float64 view of a law (density,
distribution function on arrays) is :mod:`derive.vocabulary.limit.floatview`; the ends of a gap are crossings of
:math:`C = 1` next to an atom's pole (:mod:`derive.vocabulary.limit.crossings`).

*Caches.* A law is an immutable value; what is derived from it once (its atoms at a precision, its gaps, its left
edge, its float64 population and gap scan) is kept by module functions keyed on the law
(:func:`functools.lru_cache`), and the truncation index last needed at a precision in :data:`_TRUNCATION`.
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

import mpmath
import numpy as np
import sympy as sp

from derive.errors import ParameterError
from derive.symbols import Formula, named
from derive.symbols import delta, m, z
from derive.vocabulary.limit.crossings import beyond, crossing, near
from derive.vocabulary.limit.gaps import convex_gaps

__all__ = ["t", "c", "summand", "S0", "x_of_t", "silverstein_equation", "Gap", "GeneralizedMP", "float_population",
           "solve_float", "scan_float", "x_float", "formulas"]

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
def _compiled(order: int = 3):
    """The summand and its ``t``-derivatives up to ``order``, all at once, as one mpmath function of
    ``(c, t, delta)`` (common subexpressions shared), and each as a NumPy function."""
    terms = [sp.diff(summand(), t, k) for k in range(order + 1)]
    return (sp.lambdify((c, t, delta), terms, modules="mpmath", cse=True),
            [sp.lambdify((c, t, delta), e, modules="numpy") for e in terms])


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
class GeneralizedMP:
    r"""The limit law of :math:`\frac1V\sum_v \tau_v z_v z_v^\top` for ``d/V -> delta`` and a discrete population.

    mpmath methods work at the current precision; the ``_float`` ones are vectorized float64.

    >>> from derive.vocabulary.limit.populations import PoissonPopulation
    >>> L = GeneralizedMP(sp.Integer(1), PoissonPopulation(sp.Integer(1)))
    >>> with mpmath.workdps(15):
    ...     print(mpmath.nstr(L.atom_at_zero(), 12), mpmath.nstr(L.density("1/2"), 12))
    0.367879441171 0.304194206343
    """

    delta: sp.Rational
    population: object

    def __post_init__(self):
        value = sp.Rational(self.delta)
        if value <= 0:
            raise ParameterError("delta", f"must be > 0, got {value}")
        object.__setattr__(self, "delta", value)

    # ---- the series -------------------------------------------------------------------------
    def _delta(self) -> mpmath.mpf:
        return mpmath.mpf(self.delta.p) / self.delta.q

    def _sup_bound(self, tv, K: int, order: int) -> mpmath.mpf:
        r"""A bound of :math:`\sup_{c \ge c_{K+1}} |\partial_t^{n}\,\mathrm{summand}|` (``n = order``)."""
        c0 = self.atom(K + 1)
        a, b = mpmath.re(tv), mpmath.im(tv)
        if a >= c0 and b == 0:
            return mpmath.inf
        ratio = [abs(c0 / (c0 - tv)), mpmath.mpf(1)]
        if a > 0 and b != 0 and abs(tv) ** 2 / a >= c0:
            ratio.append(abs(tv) / abs(b))
        dist = abs(tv - c0) if a < c0 else abs(b)
        return max(ratio) * mpmath.factorial(order) / dist**order / self._delta()

    def atom(self, j: int) -> mpmath.mpf:
        r"""The atom :math:`c_j = \delta\tau_j` of the scaled population."""
        return self._delta() * self.population.tau(j)

    def sums(self, tv, orders=(0, 1), eps=None) -> list:
        r""":math:`S_0^{(n)}(t)` for each ``n`` in ``orders``, with the series cut where the tail bound is below
        ``eps`` (default :math:`10^{-(\text{dps}+10)}` relative to the value). Returns ``[(value, bound), ...]``."""
        f = _compiled(max(orders))[0]
        tv = mpmath.mpmathify(tv)
        d = self._delta()
        last = self.population.last()
        K = last if last is not None else _TRUNCATION.get((self, mpmath.mp.prec), 2 * self.population.mode_range() + 10)
        while K <= _MAX_TERMS:
            cs, ps = _atoms(self, K, mpmath.mp.prec)
            terms = [f(cj, tv, d) for cj in cs]
            vals = [mpmath.fsum(p * row[n] for p, row in zip(ps, terms)) for n in orders]
            tail = self.population.tail(K)
            bounds = [tail * self._sup_bound(tv, K, n) if tail else mpmath.mpf(0) for n in orders]
            scale = eps if eps is not None else mpmath.mpf(10) ** (-(mpmath.mp.dps + _GUARD))
            if all(b <= scale * max(1, abs(v)) for b, v in zip(bounds, vals)):
                _TRUNCATION[(self, mpmath.mp.prec)] = K
                return list(zip(vals, bounds))
            K *= 2
        raise ArithmeticError(f"the series did not reach the working precision at t = {tv}")

    def x(self, tv) -> mpmath.mpc:
        """:math:`x(t) = t(1 - S_0(t))`."""
        (s0, _), = self.sums(tv, (0,))
        return tv * (1 - s0)

    # ---- atom, support ----------------------------------------------------------------------
    def atom_at_zero(self) -> mpmath.mpf:
        r"""The mass at zero, :math:`\max(0, 1 - (1 - p_0)/\delta)`: ``S`` has rank :math:`\min(d, \#\{v: \tau_v > 0\})`."""
        return max(mpmath.mpf(0), 1 - (1 - self.population.mass(0)) / self._delta())

    def C(self, tv):
        """:math:`C = 1 - x'(t) = S_0 + t S_0'` at real ``t``."""
        (s0, _), (s1, _) = self.sums(tv, (0, 1))
        return s0 + tv * s1

    def dC(self, tv):
        """:math:`C' = 2S_0' + tS_0''` at real ``t``."""
        (s1, _), (s2, _) = self.sums(tv, (1, 2))
        return 2 * s1 + tv * s2

    def gap(self, k: int) -> Gap | None:
        r"""The gap between the clusters of the atoms ``k`` and ``k + 1`` (``k = 0``: the atom at zero and the
        first cluster), or ``None``. In ``t`` it is :math:`\{t \in (c_k, c_{k+1}): C(t) < 1\}` with
        :math:`C = 1 - x' = S_0 + t S_0'` convex there; its minimum is the root of :math:`C'` (increasing), then
        each crossing of ``C = 1`` is found on the side where ``C`` is monotone."""
        return _gap(self, k, mpmath.mp.prec)

    def _no_gap_float(self, k: int) -> bool:
        """Whether the float64 scan shows ``C`` well above 1 on the whole interval ``k`` (no gap there: the scan's
        minimum is accurate to far better than the margin 1e-6)."""
        cs, ps = float_population(self)
        if k < 1 or k >= len(cs) or (self.population.last() is not None and k >= self.population.last()):
            return False
        f, d = _compiled(1)[1], float(self.delta)
        u = (np.arange(512) + 0.5) / 512
        tv = cs[k - 1] + (cs[k] - cs[k - 1]) * u
        values = (ps @ f[0](cs[:, None], tv[None, :], d) + tv * (ps @ f[1](cs[:, None], tv[None, :], d))).real
        return bool(np.min(values) > 1 + 1e-6) and not any(g.k == k for g in scan_float(self))

    def _find_gap(self, k: int) -> Gap | None:
        # the crossings sit about c_k sqrt(p_k/delta) from the atom c_k: hold the digits to see them, and keep them (a
        # gap's end rounded to the working precision fell on the atom once p_k < 10^(-2 dps), a pole of S_0: at
        # mu2 = 1e5, T = 1 the signal outlier's search divided by zero)
        extra = 0 if k == 0 else max(0, int(-mpmath.log10(self.population.mass(k)) / 2)) + 5
        with mpmath.workdps(mpmath.mp.dps + extra):
            return self._gap_here(k)

    def _gap_here(self, k: int) -> Gap | None:
        hi = self.atom(k + 1)
        if k > 0 and k == self.population.last():
            # past the last atom C falls from +oo to 0: one crossing, the right edge, then no support
            far = hi
            while self.C(far) >= 1:
                far *= 2
            ta = crossing(self.C, near(self.C, self.atom(k), far, 1, above=True), far, 1, pole=self.atom(k))
            return Gap(k, ta, mpmath.inf, mpmath.re(self.x(ta)), mpmath.inf)
        if k == 0:
            # t -> 0+ is m -> -oo, x -> 0: C(0+) = (1 - p_0)/delta decides whether the atom at 0 stands apart
            if self.C(mpmath.mpf(0)) >= 1:
                return None
            tb = crossing(self.C, mpmath.mpf(0), near(self.C, hi, mpmath.mpf(0), 1, above=True), 1, pole=hi)
            return Gap(0, mpmath.mpf(0), tb, mpmath.mpf(0), mpmath.re(self.x(tb)))
        lo = self.atom(k)
        mid = (lo + hi) / 2
        a, b = near(self.dC, lo, mid, 0, above=False), near(self.dC, hi, mid, 0, above=True)
        # the minimum of C sits by the atom whose pole C' had to be approached more closely to change sign
        tmin = crossing(self.dC, a, b, 0, pole=lo if a - lo < hi - b else hi)
        if self.C(tmin) >= 1:
            return None
        ta = crossing(self.C, near(self.C, lo, tmin, 1, above=True), tmin, 1, pole=lo)
        tb = crossing(self.C, tmin, near(self.C, hi, tmin, 1, above=True), 1, pole=hi)
        return Gap(k, ta, tb, mpmath.re(self.x(ta)), mpmath.re(self.x(tb)))

    def left_edge(self) -> mpmath.mpf:
        """The left edge of the absolutely continuous part (above the atom at zero, if any)."""
        return _left_edge(self, mpmath.mp.prec)

    def edge_from_the_left(self) -> mpmath.mpf:
        """:meth:`left_edge` computed afresh at the current precision."""
        g = self.gap(0)
        if g is not None:
            return g.xb
        # no atom apart: the edge is the maximum of x(t) over t < 0 (m > 0), where C (increasing there) is 1
        if self.C(mpmath.mpf(0)) == 1:
            return mpmath.mpf(0)
        lo = mpmath.mpf(-1)
        while self.C(lo) >= 1:
            lo *= 2
        tb = crossing(self.C, lo, mpmath.mpf(0), 1)
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
            guess = complex(solve_float(self, np.array([complex(zv)]))[0])
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

    def negligible_index(self) -> int:
        """The first ``k`` beyond the mode whose atom's mass is below the working precision (or the last atom)."""
        if self.population.last() is not None:
            return self.population.last()
        k = self.population.mode_range()
        while self.population.mass(k) >= mpmath.mpf(10) ** (-mpmath.mp.dps):
            k += 1
        return k


_TRUNCATION: dict = {}
"""The number of atoms a series last needed, by law and binary precision: where the next evaluation starts."""


@lru_cache(maxsize=4096)
def _atoms(law: GeneralizedMP, K: int, prec: int) -> tuple[list, list]:
    """The atoms :math:`c_1..c_K` of ``law`` and their masses at binary precision ``prec``."""
    with mpmath.workprec(prec):
        return [law.atom(j) for j in range(1, K + 1)], [law.population.mass(j) for j in range(1, K + 1)]


@lru_cache(maxsize=16384)
def _gap(law: GeneralizedMP, k: int, prec: int):
    with mpmath.workprec(prec):
        return None if law._no_gap_float(k) else law._find_gap(k)


@lru_cache(maxsize=1024)
def _left_edge(law: GeneralizedMP, prec: int):
    with mpmath.workprec(prec):
        return law.edge_from_the_left()


@lru_cache(maxsize=256)
def float_population(law: GeneralizedMP) -> tuple[np.ndarray, np.ndarray]:
    """The atoms and masses of ``law`` in float64, cut where the tail mass is below 1e-18."""
    K = law.population.mode_range()
    with mpmath.workdps(20):
        while law.population.tail(K) > 1e-18:
            K += 1
        cs = np.array([float(law.atom(j)) for j in range(1, K + 1)])
        ps = np.array([float(law.population.mass(j)) for j in range(1, K + 1)])
    return cs, ps


def solve_float(law: GeneralizedMP, zs: np.ndarray) -> np.ndarray:
    """The root ``t`` of Silverstein's equation for ``law`` in the upper half plane at each ``z`` (real ``z`` taken at ``+ i0``), by continuation from
    ``z + i 4(1+|z|)`` (where ``t`` is close to ``z``) down to ``Im z``, the imaginary part divided by 8 at each
    level, four Newton steps per level and eight at the last."""
    cs, ps = float_population(law)
    f, d = _compiled(1)[1], float(law.delta)
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


@lru_cache(maxsize=256)
def scan_float(law: GeneralizedMP) -> tuple:
    """Every gap ``k >= 1`` of ``law`` between two atoms of its float64 population, found in float64 at once
    (:func:`derive.vocabulary.limit.gaps.convex_gaps`, a grid of 256 points per interval). Returns the gaps as :class:`Gap` of floats. A gap narrower
    than a 256th of its interval may be missed; the density there is zero on a set of that width."""
    cs, ps = float_population(law)
    f, d = _compiled(1)[1], float(law.delta)

    def C(tv):  # tv: (n,) real points
        s0 = ps @ f[0](cs[:, None], tv[None, :], d)
        s1 = ps @ f[1](cs[:, None], tv[None, :], d)
        return (s0 + tv * s1).real

    idx, ta, tb = convex_gaps(C, cs[:-1], cs[1:], points=256)
    xa = x_float(law, ta)
    xb = x_float(law, tb)
    return tuple(Gap(int(k) + 1, a_, b_, xa_, xb_) for k, a_, b_, xa_, xb_ in zip(idx, ta, tb, xa, xb))


def x_float(law: GeneralizedMP, tv: np.ndarray) -> np.ndarray:
    """:math:`x(t)` of ``law`` at real float64 ``t``."""
    cs, ps = float_population(law)
    f, d = _compiled(1)[1], float(law.delta)
    return (tv * (1 - ps @ f[0](cs[:, None], tv[None, :], d))).real


def formulas() -> list[Formula]:
    src = "derive/vocabulary/limit/silverstein.py"
    hyp = (r"$S = \frac1V \sum_v \tau_v z_v z_v^\top$, $z_v \sim N(0, I_d)$ independent of $\tau_v \sim H$, "
           r"$d/V \to \delta$; $t = -1/m$")
    return [
        Formula("generalized Marchenko-Pastur (Silverstein) equation in $t = -1/m$", silverstein_equation(), hyp,
                f"{src}:silverstein_equation", claim="C1"),
        Formula("one atom's term of $S_0(t)$", summand(), hyp + r"; atom $c = \delta\tau$", f"{src}:summand",
                named("s_c", r"s_c(t)"), claim="C1"),
    ]
