r"""The C1 bulk law :math:`\kappa(\mathrm{MP}_\delta \boxtimes \mathrm{MP}_\gamma)` evaluated from its
derived cubic :math:`P(m, z) = \sum_k p_k(z) m^k` (:func:`derive.gaussian.freeprob.bulk_polynomial`).

*Support.* Branches of :math:`P = 0` meet only at real roots of :math:`D = \operatorname{disc}_m P`.
Between two consecutive roots the cubic has three real roots (:math:`D > 0`) or one real root
and one conjugate pair (:math:`D < 0`), and the Stieltjes branch is one and the same root
throughout. A :math:`D < 0` interval is part of the support exactly when the Stieltjes branch,
continued from :math:`m \sim -1/z` at :math:`z = x + i\infty` down to :math:`x + i0`, ends on the
pair rather than on the real root; each interval is validated that way at its midpoint.

*Density.* Inside the support, with real root :math:`r` and pair :math:`\omega, \bar\omega`,
:math:`D = -4p_3^4 (\operatorname{Im}\omega)^2 |r-\omega|^4` and
:math:`\partial_m P(r) = p_3 |r - \omega|^2`, so

.. math:: \rho(x) = \frac{\operatorname{Im}\omega}{\pi} = \frac{\sqrt{-D(x)}}{2\pi\,|p_3(x)\,\partial_m P(r(x), x)|}.

:math:`D(x)` is evaluated exactly at the rational ``x`` and :math:`r` (a simple root) by Newton's
method, so no cancellation occurs near the edges and no branch is ever chosen by size.
"""
from __future__ import annotations

import bisect
from dataclasses import dataclass
from fractions import Fraction
from functools import lru_cache

import mpmath
import numpy as np
import sympy as sp

from derive.gaussian import freeprob as fp
from derive.errors import ParameterError
from derive.resources import KAPPA_RANGE, MAX_RATIO_PRODUCT, RATIO_RANGE, bulk_parameters
from derive.numbers import Displayed, check_digits, parse_rational

__all__ = ["BulkLaw", "law", "parameters", "support", "density", "density_float", "stieltjes", "real_root",
           "RATIO_RANGE", "MAX_RATIO_PRODUCT", "KAPPA_RANGE"]

m, z = fp.m, fp.z
_GUARD = 10

@dataclass(frozen=True)
class _Poly:
    """A polynomial in ``z`` with rational coefficients, stored as integers over one denominator."""

    numerators: tuple[int, ...]
    denominator: int

    @classmethod
    def of(cls, expr) -> "_Poly":
        coeffs = [sp.Rational(a) for a in reversed(sp.Poly(expr, z).all_coeffs())]
        den = int(sp.ilcm(1, *[a.q for a in coeffs]))
        return cls(tuple(int(a * den) for a in coeffs), den)

    def exact(self, p: int, q: int) -> tuple[int, int]:
        """Value at ``p/q`` as a fraction ``(numerator, denominator)``, ``q > 0``."""
        n = len(self.numerators) - 1
        num, pk, qk = 0, 1, q**n
        for c in self.numerators:
            num += c * pk * qk
            pk *= p
            qk //= q
        return num, self.denominator * q**n

    def mp(self, p: int, q: int):
        num, den = self.exact(p, q)
        return mpmath.mpf(num) / den

    def at(self, x):
        """Value at an mpmath number (real or complex) in the current precision."""
        return mpmath.polyval([mpmath.mpf(c) for c in reversed(self.numerators)], x) / self.denominator

    def floats(self, x: np.ndarray) -> np.ndarray:
        return np.polyval([c / self.denominator for c in reversed(self.numerators)], x)


@dataclass(frozen=True)
class BulkLaw(Displayed):
    r"""The bulk law :math:`\kappa(\mathrm{MP}_\delta \boxtimes \mathrm{MP}_\gamma)` at exact parameters
    (the Gaussian-equivalent law of the model; see :mod:`derive.vocabulary.limit.tokenreuse` for the finite
    vocabulary's): its cubic, discriminant, validated support and atom, and its density and Stieltjes transform.

    The mpmath methods evaluate at the current precision (``with mpmath.workdps(P)``); the
    ``_float`` method is the vectorized float64 path.

    >>> L = law(1, 1, 1)
    >>> with mpmath.workdps(20):
    ...     print(mpmath.nstr(L.density("1/2"), 15), L.support, L.atom_at_zero)
    0.318309886183791 ((0, 27/4),) 0
    """

    _DISPLAYED = ("law", "delta", "gamma", "kappa", "support", "atom_at_zero", "polynomial")

    delta: sp.Rational
    gamma: sp.Rational
    kappa: sp.Rational
    polynomial: sp.Expr
    coefficients: tuple[_Poly, ...]
    derivative: tuple[_Poly, ...]
    discriminant: _Poly
    support: tuple[tuple[sp.Expr, sp.Expr], ...]
    atom_at_zero: sp.Rational

    @property
    def hard_edge(self) -> bool:
        """Whether the density diverges at 0 (an interval of the support starts there)."""
        return any(a == 0 for a, _ in self.support)

    @property
    def law(self) -> str:
        """Which law this is: the Gaussian equivalent of the model's pooled vectors."""
        return "gaussian-equivalent"

    def edges(self) -> list[tuple[mpmath.mpf, mpmath.mpf]]:
        """The support intervals as mpmath reals at the current precision.

        >>> with mpmath.workdps(15):
        ...     [mpmath.nstr(e, 10) for e in law(2, 2, 1).edges()[0]]
        ['0.0', '11.09016994']
        """
        return [(_mp_algebraic(a), _mp_algebraic(b)) for a, b in self.support]

    def density(self, x) -> mpmath.mpf:
        r"""The density :math:`\rho(x)` of the absolutely continuous part at one point (module docstring)."""
        return self.densities([x])[0]

    def densities(self, xs) -> list:
        """:meth:`density` at each point of ``xs`` (one float first guess for all of them)."""
        with mpmath.workdps(mpmath.mp.dps + _GUARD):
            values = _densities(self, xs)
        return [+v for v in values]

    def stieltjes(self, zv) -> mpmath.mpc:
        r"""The Stieltjes transform :math:`m(z) = \int d\mu(x)/(x - z)` at complex ``z`` off the real axis."""
        return _stieltjes(self, zv)

    def density_float(self, x) -> np.ndarray:
        r"""The density at a float64 array ``x``: error below :math:`10^{-13}\max(1, \rho)`, exactly 0
        outside the support, ``inf`` at a hard edge.

        >>> law(1, 1, 1).density_float(np.array([0.5, 7.0, -1.0, 0.0]))  # 1/pi at 1/2
        array([0.31830989, 0.        , 0.        ,        inf])
        """
        return _density_float(self, x)


def _mp_algebraic(e) -> mpmath.mpf:
    """An exact real algebraic number as an mpmath real at the current precision."""
    return mpmath.mpf(str(sp.N(e, mpmath.mp.dps + 5)))


def _exact(x) -> tuple[int, int]:
    # Every accepted number type is read as the exact rational it denotes.
    if isinstance(x, mpmath.mpf):
        if not mpmath.isfinite(x):
            raise ParameterError("x", f"not a finite number: {x!r}")
        man, exp = x.man_exp  # the mantissa is unsigned
        man = -int(man) if x < 0 else int(man)
        return (man << exp, 1) if exp >= 0 else (man, 1 << -exp)
    if isinstance(x, float):
        if not np.isfinite(x):
            raise ParameterError("x", f"not a finite number: {x!r}")
        f = Fraction(x)
    else:
        f = Fraction(str(parse_rational(x, "x")))
    return f.numerator, f.denominator


def parameters(delta, gamma, kappa) -> tuple[sp.Rational, sp.Rational, sp.Rational]:
    """Read ``delta, gamma, kappa`` exactly; each must be positive and inside the documented
    limits :data:`RATIO_RANGE`, :data:`MAX_RATIO_PRODUCT`, :data:`KAPPA_RANGE`.

    >>> parameters("1/2", "0.25", 3)
    (1/2, 1/4, 3)
    """
    return tuple(sp.Rational(q.numerator, q.denominator) for q in bulk_parameters(delta, gamma, kappa))


def real_root(coefficients: np.ndarray) -> np.ndarray:
    r"""The real root of each cubic :math:`\sum_k c_k m^k` that has one real root and a conjugate pair.

    ``coefficients`` has shape ``(4, n)`` (:math:`c_0, \dots, c_3`). The roots are the
    eigenvalues of the companion matrices; the real one is the root farthest from the other
    two (near an edge the pair nearly coincides, so the smallest imaginary part would be
    ambiguous), then two Newton steps on the real line.

    >>> real_root(np.array([[-2.0], [2.0], [-1.0], [1.0]]))  # (m - 1)(m^2 + 2)
    array([1.])
    """
    try:
        c = np.asarray(coefficients, dtype=float)
    except (TypeError, ValueError, OverflowError):
        c = np.full((0,), np.nan)
    if c.ndim != 2 or c.shape[0] != 4 or not np.all(np.isfinite(c)) or np.any(c[3] == 0):
        raise ParameterError("coefficients", "must be a (4, n) array of finite reals with a nonzero leading row")
    n = c.shape[1]
    companion = np.zeros((n, 3, 3))
    companion[:, 0, :] = -(c[2::-1] / c[3]).T
    companion[:, 1, 0] = companion[:, 2, 1] = 1.0
    roots = np.linalg.eigvals(companion)
    gaps = np.abs(roots[:, :, None] - roots[:, None, :]) + np.where(np.eye(3, dtype=bool), np.inf, 0)
    pick = np.argmax(gaps.min(axis=2), axis=1)
    x = roots[np.arange(n), pick].real
    for _ in range(2):
        f = ((c[3] * x + c[2]) * x + c[1]) * x + c[0]
        df = (3 * c[3] * x + 2 * c[2]) * x + c[1]
        x = x - f / df
    return x


def _track(law_coefficients, x0: float, y_end: float, scale: float) -> complex:
    # Follow the root m ~ -1/z from x0 + i*Y down the vertical line to x0 + i*y_end in float;
    # a step is accepted only when the followed root is unambiguously the nearest one.
    def roots_at(y):
        zc = complex(x0, y)
        return np.roots([np.polyval(list(reversed(list(cf))), zc) for cf in reversed(law_coefficients)])

    y = 10.0 * scale
    cur = min(roots_at(y), key=lambda t: abs(t + 1 / complex(x0, y)))
    ratio = 0.7
    while y > y_end:
        y_next = max(y * ratio, y_end)
        cand = sorted(roots_at(y_next), key=lambda t: abs(t - cur))
        if len(cand) > 1 and abs(cand[0] - cur) > 0.25 * abs(cand[1] - cur):
            ratio = ratio ** 0.5
            if ratio > 1 - 1e-9:
                raise ArithmeticError(f"cannot follow the Stieltjes branch at x = {x0}")
            continue
        cur, y = cand[0], y_next
        ratio = max(ratio**2, 0.5)
    return cur


def law(delta, gamma, kappa) -> BulkLaw:
    r"""The bulk law at exact positive ``delta, gamma, kappa``, support validated, atom derived.

    >>> L = law(sp.Rational(1, 10), sp.Rational(1, 10), 1)
    >>> L.support, L.atom_at_zero
    (((27/80, 54/25),), 0)
    """
    return _law(*parameters(delta, gamma, kappa))


@lru_cache(maxsize=None)
def _law(d, g, k) -> BulkLaw:
    values = {fp.delta: d, fp.gamma: g, fp.kappa: k}
    poly = sp.Poly(fp.bulk_polynomial().subs(values), m, z)
    poly = poly.clear_denoms(convert=True)[1].primitive()[1]
    P = poly.as_expr()
    coefficients = tuple(_Poly.of(a) for a in sp.Poly(P, m).all_coeffs()[::-1])
    derivative = tuple(_Poly.of(a) for a in sp.Poly(sp.diff(P, m), m).all_coeffs()[::-1])
    D = sp.Poly(sp.discriminant(sp.Poly(P, m)).as_expr(), z)
    if D.is_zero:
        raise ArithmeticError(f"the cubic {P} has a repeated factor")
    disc = _Poly.of(D.as_expr())
    edges = sorted(set(D.sqf_part().real_roots()))
    floats = [float(e) for e in edges]
    scale = 1.0 + max(abs(e) for e in floats) if floats else 1.0
    float_cubic = [[c / pc.denominator for c in pc.numerators] for pc in coefficients]
    bounds = [None] + edges + [None]
    support = []
    for lo, hi in zip(bounds, bounds[1:]):
        if lo is None and hi is None:
            mid = sp.Integer(0)
        elif lo is None:
            mid = sp.floor(hi) - 1
        elif hi is None:
            mid = sp.ceiling(lo) + 1
        else:
            mid = sp.Rational(str(sp.N((lo + hi) / 2, 30)))
            if not lo < mid < hi:
                raise ArithmeticError(f"no rational found between the edges {lo} and {hi}")
        if disc.exact(int(mid.p), int(mid.q))[0] >= 0:
            continue
        width = float(hi - lo) if lo is not None and hi is not None else 1.0
        tracked = _track(float_cubic, float(mid), 1e-7 * width, scale)
        roots = np.roots([np.polyval(cf[::-1], float(mid)) for cf in reversed(float_cubic)])
        if min(roots, key=lambda t: abs(t - tracked)).imag > 0:
            if lo is None or hi is None:
                raise ArithmeticError("the Stieltjes branch is non-real on an unbounded interval")
            support.append((lo, hi))
    atom = fp.atom_at_zero(fp.bulk_polynomial()).subs(values)
    return BulkLaw(d, g, k, P, coefficients, derivative, disc, tuple(support), sp.Rational(atom))


def support(delta, gamma, kappa) -> tuple[tuple[tuple[sp.Expr, sp.Expr], ...], sp.Rational]:
    r"""The support intervals (exact algebraic endpoints) and the atom :math:`\mu(\{0\})`.

    >>> support(2, sp.Rational(1, 2), 1)[1], support(1, 1, 1)[0]
    (1/2, ((0, 27/4),))
    """
    L = law(delta, gamma, kappa)
    return L.support, L.atom_at_zero


def _inside(L: BulkLaw, p: int, q: int, edges_mp: list) -> bool:
    x = mpmath.mpf(p) / q
    i = bisect.bisect_right([a for a, _ in edges_mp], x) - 1
    if i < 0:
        return False
    a, b = edges_mp[i]
    (ea, eb) = L.support[i]
    tol = mpmath.mpf(10) ** (-mpmath.mp.dps + 3) * (1 + abs(x))
    # Only a point closer to an edge than the working precision needs the exact comparison.
    above = x > a if abs(x - a) > tol else sp.Rational(p, q) > ea
    below = x < b if abs(x - b) > tol else sp.Rational(p, q) < eb
    return bool(above and below)


def density(delta, gamma, kappa, xs, digits: int = 30) -> list:
    r"""The density :math:`\rho(x) = \operatorname{Im} m(x + i0)/\pi` of the a.c. part, at each ``x``.

    .. math:: \rho(x) = \frac{\sqrt{-\operatorname{disc}_m P(x)}}{2\pi\,|p_3(x)\,\partial_m P(r(x), x)|}
              \ \text{on the support, } 0 \text{ elsewhere.}

    >>> [mpmath.nstr(v, 12) for v in density(1, 1, 1, ["1/2", 7, -1], digits=15)]  # 1/pi at 1/2
    ['0.318309886184', '0.0', '0.0']
    """
    digits = check_digits(digits)
    L = law(delta, gamma, kappa)
    with mpmath.workdps(digits + _GUARD):
        return L.densities(xs)


def _densities(L: BulkLaw, xs) -> list:
    """The density at each point of ``xs`` at the current precision."""
    if isinstance(xs, (str, bytes)) or not hasattr(xs, "__iter__"):
        raise ParameterError("x", f"must be a sequence of points, got {xs!r}")
    points = [_exact(x) for x in xs]
    if L.hard_edge and any(p == 0 for p, _ in points):
        raise ParameterError("x", "the density diverges at the hard edge x = 0")
    digits = mpmath.mp.dps
    edges_mp = [(sp.N(a, digits + 10), sp.N(b, digits + 10)) for a, b in L.support]
    edges_mp = [(mpmath.mpf(str(a)), mpmath.mpf(str(b))) for a, b in edges_mp]
    out = [mpmath.mpf(0)] * len(points)
    todo = []
    for i, (p, q) in enumerate(points):
        num, _ = L.discriminant.exact(p, q)
        if num < 0 and _inside(L, p, q, edges_mp):
            todo.append(i)
    if not todo:
        return out
    guess = _float_guesses(L, [points[i] for i in todo])
    eps = mpmath.mpf(10) ** (-digits)
    for i, r0 in zip(todo, guess):
        p, q = points[i]
        coef = [pc.mp(p, q) for pc in L.coefficients]
        dcoef = [pc.mp(p, q) for pc in L.derivative]
        # a point whose float image under- or overflows gets its first guess in mpmath
        r0 = mpmath.mpf(r0) if np.isfinite(r0) else _isolated_root(coef)
        root = _newton(coef, dcoef, r0, eps, f"x = {p}/{q}")
        df = (dcoef[2] * root + dcoef[1]) * root + dcoef[0]
        out[i] = mpmath.sqrt(-L.discriminant.mp(p, q)) / (2 * mpmath.pi * abs(coef[3] * df))
    return out


def _float_guesses(L: BulkLaw, points) -> np.ndarray:
    """:func:`real_root` at each point in float64; NaN where the float cubic degenerates."""
    with np.errstate(all="ignore"):
        xf = np.array([p / q for p, q in points], dtype=float)
        c = np.array([pc.floats(xf) for pc in L.coefficients])
        ok = np.all(np.isfinite(c), axis=0) & (c[3] != 0)
        out = np.full(len(points), np.nan)
        if ok.any():
            out[ok] = real_root(c[:, ok])
    return out


def _isolated_root(coef):
    """The root of the cubic ``coef`` farthest from the other two (the real one), in mpmath."""
    # m = s u with s^3 = |c_0/c_3| balances the coefficients, which at an extreme point span
    # hundreds of orders of magnitude (polyroots would not converge on them)
    scale = mpmath.cbrt(abs(coef[0] / coef[3])) if coef[0] != 0 else mpmath.mpf(1)
    balanced = [c * scale**k for k, c in enumerate(coef)]
    top = max(abs(c) for c in balanced)
    try:
        roots = mpmath.polyroots([c / top for c in balanced[::-1]], maxsteps=200, extraprec=2 * mpmath.mp.prec)
    except mpmath.libmp.NoConvergence:
        raise ArithmeticError("no first guess for the density's cubic at this point") from None
    far = max(range(3), key=lambda i: min(abs(roots[i] - roots[j]) for j in range(3) if j != i))
    return scale * mpmath.re(roots[far])


def _newton(coef, dcoef, root, eps, where: str):
    """Newton's method on the cubic ``coef`` (derivative ``dcoef``) from ``root`` to relative step ``eps``."""
    for _ in range(100):
        f = ((coef[3] * root + coef[2]) * root + coef[1]) * root + coef[0]
        df = (dcoef[2] * root + dcoef[1]) * root + dcoef[0]
        step = f / df
        root -= step
        if abs(step) <= eps * (1 + abs(root)):
            return root
    raise ArithmeticError(f"Newton did not converge at {where}")


def stieltjes(delta, gamma, kappa, zv, digits: int = 30):
    r"""The Stieltjes transform :math:`m(z) = \int d\mu(x)/(x - z)` at complex ``z`` off the real axis.

    The branch is the root of :math:`P(m, z) = 0` continued from :math:`m \sim -1/z` at
    :math:`\operatorname{Re} z + i\infty` (so :math:`\operatorname{Im} m\,\operatorname{Im} z > 0`),
    then polished by Newton's method; :math:`m(\bar z) = \overline{m(z)}`.

    >>> mpmath.nstr(stieltjes(1, 1, 1, mpmath.mpc(0, 1000), digits=10), 8)  # -1/z - 1/z^2
    '(9.99988e-7 + 0.000999997j)'
    """
    digits = check_digits(digits)
    L = law(delta, gamma, kappa)
    with mpmath.workdps(digits):
        return L.stieltjes(zv)


def _stieltjes(L: BulkLaw, zv):
    try:
        zc = mpmath.mpc(zv)
    except (TypeError, ValueError):
        raise ParameterError("z", f"not a complex number: {zv!r}") from None
    if not (mpmath.isfinite(zc.real) and mpmath.isfinite(zc.imag)):
        raise ParameterError("z", f"not finite: {zv!r}")
    if zc.imag == 0:
        raise ParameterError("z", "must be off the real axis")
    if zc.imag < 0:
        return mpmath.conj(_stieltjes(L, mpmath.conj(zc)))
    float_cubic = [[c / pc.denominator for c in pc.numerators] for pc in L.coefficients]
    scale = 1.0 + abs(complex(zc)) + max([abs(float(e)) for iv in L.support for e in iv] + [0.0])
    guess = _track(float_cubic, float(zc.real), float(zc.imag), scale)
    digits = mpmath.mp.dps
    with mpmath.workdps(digits + _GUARD):
        zc = mpmath.mpc(zv)
        coef = [pc.at(zc) for pc in L.coefficients]
        dcoef = [pc.at(zc) for pc in L.derivative]
        root = _newton(coef, dcoef, mpmath.mpc(guess), mpmath.mpf(10) ** (-(digits + _GUARD)), f"z = {zv}")
        if abs(root - guess) > 1e-6 * (1 + abs(root)):
            raise ArithmeticError(f"Newton left the tracked branch at z = {zv}")
    return +root


# ----------------------------------------------------------------------------------------------
# the float64 path
#
# The same formula, rho = sqrt(-D(x))/(2 pi |p_3(x) dP(r, x)|), with the discriminant evaluated in
# factored form D(x) = lc prod_j (x - e_j), each real root e_j held as an unevaluated sum of two
# floats. x - e_j is then exact to rounding even one ulp from an edge, so D keeps full relative
# accuracy where the naive polynomial would cancel, and support membership is decided exactly for
# every float x.


def _split(e) -> tuple[float, float]:
    hi = float(sp.N(e, 40))
    return hi, float(sp.N(e - sp.Rational(hi), 20))


@lru_cache(maxsize=None)
def _float_law(L: BulkLaw):
    D = sp.Poly(sum(c * z**k for k, c in enumerate(L.discriminant.numerators)), z)
    real, pairs = [], []
    for e in D.all_roots():
        if e.is_real:
            real.append(_split(e))
        elif sp.im(e) > 0:
            v = complex(sp.N(e, 20))
            pairs.append((v.real, v.imag))
    lc = float(sp.Rational(D.LC(), L.discriminant.denominator))
    edges = [(_split(a), _split(b)) for a, b in L.support]
    return lc, tuple(real), tuple(pairs), tuple(edges)


def _above(x, edge):
    hi, lo = edge
    return (x - hi) - lo


def _density_float(L: BulkLaw, x) -> np.ndarray:
    lc, real, pairs, edges = _float_law(L)
    x = np.asarray(x, dtype=float)
    if not np.all(np.isfinite(x)):
        raise ParameterError("x", "not a finite number")
    flat = x.ravel()
    inside = np.zeros(flat.shape, dtype=bool)
    for a, b in edges:
        inside |= (_above(flat, a) > 0) & (_above(flat, b) < 0)
    out = np.zeros(flat.shape)
    xi = flat[inside]
    D = np.full(xi.shape, lc)
    for e in real:
        D *= _above(xi, e)
    for re, im in pairs:
        D *= (xi - re) ** 2 + im**2
    coef = np.array([pc.floats(xi) for pc in L.coefficients])
    root = real_root(coef)
    dP = sum(pc.floats(xi) * root**k for k, pc in enumerate(L.derivative))
    out[inside] = np.sqrt(np.maximum(-D, 0.0)) / (2 * np.pi * np.abs(coef[3] * dP))
    if L.hard_edge:
        out[flat == 0] = np.inf
    return out.reshape(x.shape)


def density_float(delta, gamma, kappa, x) -> np.ndarray:
    r"""The density at a float64 array ``x`` (:meth:`BulkLaw.density_float`).

    >>> density_float(1, 1, 1, np.array([0.5]))  # 1/pi at 1/2
    array([0.31830989])
    """
    return law(delta, gamma, kappa).density_float(x)
