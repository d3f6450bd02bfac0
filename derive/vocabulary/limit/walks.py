r"""The moments of the model's own bulk law for any weights: the closed walks on the token–sequence tree, counted
exactly by expanding the cavity equations of ``D`` in powers of :math:`1/\zeta`.

*The walks.* :math:`\frac1V\operatorname{tr}D^k` tends to :math:`E(D^k)_{oo}` on the limit of the token graph seen from a
token ``o``: the two-type Galton–Watson tree of :mod:`derive.vocabulary.limit.cavity` (a token in
:math:`K_t \sim \mathrm{Poisson}(\lambda)` sequences at position ``t``, :math:`\lambda = N/V`, a sequence holding a
token at each position, weights :math:`w_t`; cycles are :math:`O(1/V)` rare). With :math:`u = 1/\zeta`,
:math:`X = -uF` and :math:`Y_t = -B_t`, the cavity equations become the first-return decompositions of the closed walks
of a token's and of a sequence's subtree,

.. math:: F = \frac{1}{1 - u\,C}, \quad C = s\sum_t w_t^2 \sum_{j \le K_t} B_{t,j}, \qquad
          B_t = \frac{1}{1 - u\,G_t}, \quad G_t = s\sum_{u \ne t} w_u^2 F_u,

(:math:`s = V/N`, all copies independent), and :math:`g_D(\zeta) = EX = -\sum_k m_k \zeta^{-k-1}` with
:math:`m_k = E[u^k]F`. The coefficients :math:`f_k = [u^k]F` are random: :math:`f_k` is a polynomial in the
coefficients :math:`c_j` of ``C``, :math:`c_j` a compound-Poisson sum of the coefficients :math:`b_{t,j}` of
:math:`B_t` (:math:`b_{t,0} = 1`), :math:`b_{t,j}` a polynomial in the coefficients of :math:`G_t`, a sum of
independent copies of ``F``. So the joint moments of :math:`(f_1, \dots, f_n)` with :math:`\sum_k k\,a_k \le n` close on
themselves (*moment closure*), through the joint cumulants:

* the joint cumulants of a sum of independent vectors add, so
  :math:`\kappa_{G_t}(a) = \sum_{u\ne t} (s w_u^2)^{|a|}\,\kappa_F(a)`;
* the joint cumulants of a compound-Poisson sum :math:`\sum_{j\le K} b_j` are :math:`\lambda E[b^a]`, so
  :math:`\kappa_C(a) = \sum_t (s w_t^2)^{|a|}\,\lambda\,E[b_t^a]`;

moments and cumulants are exchanged by the logarithm and the exponential of the exponential generating series.
A moment of weight ``n`` needs moments of ``F`` of weight at most ``n - 2`` only: the iteration from :math:`F = 1`
is exact after :math:`\lfloor n/2\rfloor + 1` rounds (one more round is run and must change nothing).

*The bulk of S.* :math:`S = \frac1V ZDZ^\top` in law, so its ``V``-space law is the free Poisson law of rate
:math:`\delta` (every free cumulant :math:`\delta`) :math:`\boxtimes\,\nu_D`, and the ``d``-space moments are those over
:math:`\delta` (:mod:`derive.vocabulary.limit.tokenreuse`); raw and centered ``S`` share this limit.

*Checks* (tests/test_walks.py): one nonzero weight gives the Poisson moments of :mod:`derive.vocabulary.limit.tokenreuse`;
the moments of ``D`` against :math:`\frac1V\operatorname{tr}D^k` of sampled token matrices and those of ``S`` against
sampled spectra; the cavity's transforms far from the support against :func:`stieltjes_gauss` and :func:`stieltjes_bounds`.
"""
from __future__ import annotations

from functools import lru_cache
from itertools import product
from fractions import Fraction
from math import comb

import sympy as sp
from sympy.polys.domains import QQ
from sympy.polys.rings import ring

from derive.errors import ParameterError
from derive.gaussian import freeprob as fp
from derive.numbers import check_count, parse_rational, real_number
from derive.symbols import delta, gamma
from derive.vocabulary.limit import tokenreuse

__all__ = ["token_matrix_moments", "bulk_moments", "fourth_moment_excess", "stieltjes_gauss", "stieltjes_bounds"]

MAX_ORDER = 12
"""The highest moment derived (the closure's tables grow like the partitions of ``n``)."""


def token_matrix_moments(weights, n: int = 6, at=None) -> tuple:
    r"""Moments :math:`m_0, \dots, m_n` of :math:`\nu_D`, the limit spectral law of :math:`D = \frac VN AA^\top`, for
    pooling ``weights`` (numbers or SymPy symbols, as given: not normalized), in :math:`\delta, \gamma`
    (:math:`\lambda = N/V = \delta/\gamma`), or as exact numbers at ``at = (delta, gamma)`` (faster).

    .. math:: m_k = \lim \tfrac1V \operatorname{tr} D^k = E\,[u^k]\,F, \qquad
              F = \frac{1}{1 - u\,s\sum_t w_t^2\sum_{j\le K_t} B_{t,j}},\quad
              B_t = \frac{1}{1 - u\,s\sum_{u\ne t} w_u^2 F_u}.

    >>> token_matrix_moments([sp.Rational(1, 2)] * 2, 3)   # T = 2, mean weights
    (1, 1/2, 1/4 + gamma/(4*delta), 1/8 + 3*gamma/(8*delta) + gamma**2/(8*delta**2))
    >>> token_matrix_moments([sp.Rational(1, 2)] * 2, 4, at=(1, 1))
    (1, 1/2, 1/2, 5/8, 57/64)
    """
    w2 = _squared_weights(weights)
    n = check_count(n, "n", low=1, high=MAX_ORDER)
    return _moments_of_D(w2, n, None if at is None else _ratio(at))


def bulk_moments(weights, n: int = 6, at=None) -> tuple:
    r"""Moments :math:`m_0 = 1, m_1, \dots, m_n` of the model's own bulk law of ``S`` (``d``-space, raw or centered)
    for pooling ``weights`` (as given), in :math:`\delta, \gamma` or at ``at = (delta, gamma)``:
    :math:`\delta\, m_k = m_k\bigl(\mathrm{MP}^{\mathrm{free}}_\delta \boxtimes \nu_D\bigr)`
    (:func:`derive.vocabulary.limit.tokenreuse.d_space_moments`).

    >>> bulk_moments([1, 0], 3)   # one nonzero weight: the T = 1 law
    (1, 1, delta + gamma + 1, delta**2 + 3*delta*gamma + 3*delta + gamma**2 + 3*gamma + 1)
    """
    w2 = _squared_weights(weights)
    n = check_count(n, "n", low=1, high=min(MAX_ORDER, fp.MAX_PARTITION_ORDER))
    law = _moments_of_D(w2, n, None if at is None else _ratio(at))
    out = (sp.Integer(1),) + tokenreuse.d_space_moments(list(law), n)
    return out if at is None else tuple(sp.nsimplify(m.subs(delta, sp.Rational(at[0]))) for m in out)


def fourth_moment_excess(weights) -> sp.Expr:
    r"""The fourth moment of the model's own bulk law of ``S`` less that of the claimed (Gaussian-equivalent) law
    :math:`\kappa(\mathrm{MP}_\delta\boxtimes\mathrm{MP}_\gamma)`, :math:`\kappa = \sum_t w_t^2`, factored; the first
    three moments agree. For symbolic weights it factors as :math:`\delta\gamma^2(\sum_t w_t^4)^2`: spreading the
    weights shrinks the excess like the effective reuse :math:`\lambda\kappa^2/\sum_t w_t^4` grows.

    >>> w = sp.symbols("w_1:3", positive=True); fourth_moment_excess(w)
    delta*gamma**2*(w_1**4 + w_2**4)**2
    """
    model = bulk_moments(weights, 4)
    kappa = sum(_squared_weights(weights))
    return sp.factor(sp.expand(model[4] - kappa**4 * tokenreuse.bulk_moments("claimed", 4)[3]))


def stieltjes_gauss(moments, z) -> tuple:
    r"""The Stieltjes transform :math:`m(z) = \int d\mu(x)/(x - z)` of a law on :math:`[0, \infty)` with the moments
    ``moments`` (:math:`m_0, \dots, m_{2n}`, exact rationals; one more is ignored) at a complex ``z`` off
    :math:`[0, \infty)`: ``(value, bound)``, the Gauss rule of ``n`` nodes and a bound of its error. Hermite
    interpolation of :math:`1/(x - z)` at the nodes (the zeros of :math:`\pi_n`) leaves the exact remainder
    :math:`\pi_n(x)^2/(\pi_n(z)^2(x - z))`, so

    .. math:: |m(z) - G_n(z)| = \frac{1}{|\pi_n(z)|^2}\Bigl|\int\frac{\pi_n^2\,d\mu}{x - z}\Bigr|
              \le \frac{h_n}{|\pi_n(z)|^2\,\operatorname{dist}(z, [0, \infty))},
              \qquad h_n = \int \pi_n^2\,d\mu = m_0\beta_1\cdots\beta_n .

    >>> v, b = stieltjes_gauss([1, 1, 2, 5, 14, 42, 132], -1 + 1j)   # Marchenko-Pastur of ratio 1
    >>> z = -1 + 1j; exact = (-z - (z * z - 4 * z) ** 0.5) / (2 * z)
    >>> f"{b:.1e}", abs(v - exact) <= b
    ('2.0e-03', True)
    """
    z = complex(z)
    distance = abs(z) if z.real <= 0 else abs(z.imag)
    if distance == 0:
        raise ParameterError("z", f"must lie off [0, inf), got {z}")
    m = _exact_moments(moments)
    n = (len(m) - 1) // 2
    alpha, beta, _, pi = _recurrence(m, 2 * n)
    value = _jacobi_fraction(m[0], z, alpha[:n], beta[:n - 1])
    h = m[0]
    for b in beta[:n]:
        h *= b
    return complex(value), float(h) / (abs(sum(float(c) * z**k for k, c in enumerate(pi))) ** 2 * distance)


def stieltjes_bounds(moments, a) -> tuple:
    r"""Lower and upper bounds of :math:`m(-a) = \int d\mu(x)/(x + a)`, ``a > 0``, for every law on
    :math:`[0, \infty)` with the moments ``moments`` (:math:`m_0, \dots, m_n`, exact rationals): the Gauss rule of
    :math:`\lceil n/2\rceil` nodes and the Gauss–Radau rule with a node fixed at 0 and :math:`\lfloor n/2\rfloor + 1`
    nodes, built from the moments in exact arithmetic (the recurrence of the monic orthogonal polynomials
    :math:`\pi_{k+1} = (x - \alpha_k)\pi_k - \beta_k\pi_{k-1}`) and evaluated as Jacobi continued fractions.
    Their errors are :math:`f^{(2r)}(\xi)/(2r)!\int\pi_r^2\,d\mu` and
    :math:`f^{(2r+1)}(\xi)/(2r+1)!\int x\,\tilde\pi_r^2\,d\mu` for :math:`f(x) = 1/(x + a)`, whose even
    derivatives are positive and odd ones negative on :math:`[0, \infty)` (the Markov–Stieltjes inequalities), so the
    first is below and the second above :math:`m(-a)`.

    >>> lo, hi = stieltjes_bounds([1, 1, 2, 5, 14, 42, 132], 1)   # Marchenko-Pastur of ratio 1, exact 0.6180...
    >>> lo < (5 ** 0.5 - 1) / 2 < hi, f"{hi - lo:.1e}"
    (True, '3.7e-03')
    """
    a = real_number(a, "a")
    if not (a.is_Rational and a > 0):
        raise ParameterError("a", f"must be an exact rational > 0, got {a}")
    m = _exact_moments(moments)
    a = Fraction(int(a.p), int(a.q))
    n = len(m) - 1
    alpha, beta, at_zero, _ = _recurrence(m, n)
    gauss = _jacobi_fraction(m[0], -a, alpha[:(n + 1) // 2], beta[:(n + 1) // 2 - 1])
    r = n // 2
    radau = alpha[:r] + [-beta[r - 1] * at_zero[r - 1] / at_zero[r]]
    return float(gauss), float(_jacobi_fraction(m[0], -a, radau, beta[:r]))


def _exact_moments(moments) -> list:
    m = [real_number(v, "moments") for v in moments]
    if len(m) < 3 or not all(v.is_Rational for v in m) or m[0] <= 0:
        raise ParameterError("moments", "must be at least three exact rationals m_0 > 0, m_1, m_2")
    return [Fraction(int(v.p), int(v.q)) for v in m]


def _recurrence(m, n):
    r""":math:`\alpha_k` (``2k + 1 <= n``), :math:`\beta_k` (``2k <= n``, from :math:`\beta_1`),
    :math:`\pi_k(0)` and the coefficients of the last :math:`\pi_k` of the moment functional ``m`` (exact)."""
    L = lambda p: sum(c * m[i] for i, c in enumerate(p))  # noqa: E731
    square = lambda p: [sum(p[i] * p[k - i] for i in range(max(0, k - len(p) + 1), min(k, len(p) - 1) + 1))
                        for k in range(2 * len(p) - 1)]  # noqa: E731
    previous, current = [Fraction(0)], [Fraction(1)]
    alpha, beta, at_zero, norms = [], [], [Fraction(1)], [m[0]]
    for k in range(n // 2 + 1):
        if 2 * k + 1 <= n:
            alpha.append(L([Fraction(0)] + square(current)) / norms[-1])
        if 2 * k + 2 > n:
            break
        shifted = [Fraction(0)] + current
        following = [shifted[i] - alpha[k] * (current[i] if i < len(current) else 0)
                     - (beta[-1] * previous[i] if beta and i < len(previous) else 0) for i in range(len(shifted))]
        previous, current = current, following
        norms.append(L(square(current)))
        if norms[-1] <= 0:
            raise ParameterError("moments", "are not the moments of a law with at least "
                                 f"{k + 2} points of support (Hankel determinant <= 0)")
        beta.append(norms[-1] / norms[-2])
        at_zero.append(current[0])
    return alpha, beta, at_zero, current


def _jacobi_fraction(m0, z, alpha, beta):
    r""":math:`\frac{m_0}{\alpha_0 - z - \frac{\beta_1}{\alpha_1 - z - \cdots}}`: the quadrature of :math:`1/(x - z)`
    on the nodes of the Jacobi matrix of ``alpha, beta``."""
    d = alpha[-1] - z
    for k in range(len(alpha) - 2, -1, -1):
        d = alpha[k] - z - beta[k] / d
    return m0 / d


def _ratio(at):
    try:
        d, g = (sp.Rational(parse_rational(v, name)) for v, name in zip(at, ("delta", "gamma")))
    except (TypeError, ValueError):
        raise ParameterError("at", f"must be a pair (delta, gamma) of positive rationals, got {at!r}") from None
    if not (d > 0 and g > 0):
        raise ParameterError("at", f"delta and gamma must be > 0, got {at!r}")
    return g / d


# ---------------------------------------------------------------------------------------------------------------
# the closure


def _squared_weights(weights) -> tuple:
    if isinstance(weights, (str, bytes)) or not hasattr(weights, "__iter__"):
        raise ParameterError("weights", f"must be a sequence of reals or symbols, got {weights!r}")
    out = []
    for w in weights:
        if isinstance(w, sp.Basic) and w.free_symbols:
            out.append(sp.expand(w**2))
        else:
            w = real_number(w, "weights")
            if w != 0:
                out.append(w**2)
    if not out:
        raise ParameterError("weights", "are all zero")
    return tuple(out)


@lru_cache(maxsize=None)
def _moments_of_D(w2: tuple, n: int, s_value=None) -> tuple:
    """``m_0..m_n`` in ``delta, gamma`` (``s_value`` None) or at :math:`s = V/N` = ``s_value`` (rational numbers)."""
    if s_value is not None and all(v.is_Rational for v in w2):
        fraction = lambda q: Fraction(int(q.p), int(q.q))  # noqa: E731
        s = fraction(s_value)
        F = _Closure(Fraction(0), Fraction(1), s, [fraction(v) for v in w2], n, lambda x: x / s).fixed_point()
        return (sp.Integer(1),) + tuple(sp.Rational(F[k].numerator, F[k].denominator) for k in range(1, n + 1))
    # squares that are not rational numbers ride along as symbols
    s_ = sp.Dummy("s")
    standins = {v: sp.Dummy() for v in w2 if not (v.is_Rational or v.free_symbols)}
    exprs = [standins.get(v, v) for v in w2]
    symbols = sorted(set().union(*(v.free_symbols for v in exprs)), key=str)
    R, s, *_ = ring([s_, *symbols], QQ)
    F = _Closure(R.zero, R.one, s, [R(v) for v in exprs], n, lambda x: x.exquo(s)).fixed_point()
    back = {s_: gamma / delta if s_value is None else s_value, **{d: v for v, d in standins.items()}}
    return (sp.Integer(1),) + tuple(sp.expand(F[k].as_expr().subs(back)) for k in range(1, n + 1))


def _exponents(omega, n) -> list:
    """The exponent tuples of weight at most ``n`` (weights ``omega``), ordered by weight, the zero tuple first."""
    weight = lambda e: sum(a * w for a, w in zip(e, omega))  # noqa: E731
    ranges = [range(n // w + 1) for w in omega]
    return sorted((e for e in product(*ranges) if weight(e) <= n), key=lambda e: (weight(e), e))


def _below(alpha):
    r"""The ``beta`` with ``0 < beta <= alpha`` that contain the first nonzero index of ``alpha``, each with
    :math:`\prod_j \binom{\alpha_j - [j = i]}{\beta_j - [j = i]}`: the terms of the moment-cumulant recursion
    :math:`\mu(\alpha) = \sum_\beta \binom{\alpha - e_i}{\beta - e_i}\kappa(\beta)\,\mu(\alpha - \beta)`."""
    i = next(j for j, a in enumerate(alpha) if a)
    out = []
    for beta in product(*(range(a + 1) for a in alpha)):
        if beta[i] == 0:
            continue
        c = 1
        for j, (a, b) in enumerate(zip(alpha, beta)):
            c *= comb(a - (j == i), b - (j == i))
        out.append((beta, tuple(a - b for a, b in zip(alpha, beta)), c))
    return out


class _Closure:
    r"""The moment tables of the closure over a ring of scalars (rationals, or polynomials in ``s`` and symbolic
    weights); ``over_s`` divides by ``s`` (:math:`\lambda = 1/s`). Tables map exponent tuples to moments;
    ``f_1..f_n`` (and ``g_1..g_n`` of :math:`G_t`) have weight ``k``, ``c_0..c_{n-1}`` weight ``k + 1``."""

    def __init__(self, zero, one, s, w2, n, over_s):
        self.zero, self.one, self.n, self.over_s = zero, one, n, over_s
        self.exps = _exponents(tuple(range(1, n + 1)), n)
        self.below = {e: _below(e) for e in self.exps if any(e)}
        base = {self.exps[0]: one}
        # F = 1 + uCF and B_t = 1 + uG_tB_t: f_k and b_{t,k} as polynomials in c and in g (constant g_0)
        f = _geometric([{_unit(j, n): one} for j in range(n)], n, zero, one)
        self.f_products = {e: _power_product(f[1:], e, base, zero) for e in self.exps}
        # positions of equal weight have one law: one entry each, with its multiplicity
        self.positions = []
        for t, wt in enumerate(w2):
            same = [p for p in self.positions if p["w2"] == wt]
            if same:
                same[0]["count"] += 1
                continue
            others = [v for u, v in enumerate(w2) if u != t]
            g0 = s * sum(others, zero)
            b = _geometric([{self.exps[0]: g0}] + [{_unit(j - 1, n): one} for j in range(1, n)], n, zero, one)
            self.positions.append({
                "w2": wt, "count": 1,
                "own": [(s * wt) ** j for j in range(n + 1)],
                "others": [sum(((s * v) ** j for v in others), zero) for j in range(n + 1)],
                "b": {e: _power_product([base] + b[1:n], e, base, zero) for e in self.exps}})

    def cumulants(self, mu):
        kappa = {}
        for e in self.exps[1:]:
            kappa[e] = mu[e] - sum((c * kappa[b] * mu[r] for b, r, c in self.below[e] if b != e), self.zero)
        return kappa

    def moments(self, kappa):
        mu = {self.exps[0]: self.one}
        for e in self.exps[1:]:
            mu[e] = sum((c * kappa[b] * mu[r] for b, r, c in self.below[e]), self.zero)
        return mu

    def _expect(self, poly, table):
        return sum((c * table[m] for m, c in poly.items()), self.zero)

    def step(self, F):
        kF = self.cumulants(F)
        kC = {e: self.zero for e in self.exps[1:]}
        for p in self.positions:
            # G_t = s sum_{u != t} w_u^2 F_u: the cumulants of independent copies add
            G = self.moments({e: v * p["others"][sum(e)] for e, v in kF.items()})
            for e in self.exps[1:]:
                # C: a compound Poisson sum over the K_t ~ Poisson(1/s) sequences at position t (b_{t,0} = 1)
                kC[e] += self.over_s(p["count"] * p["own"][sum(e)] * self._expect(p["b"][e], G))
        C = self.moments(kC)
        return {e: self._expect(self.f_products[e], C) if any(e) else self.one for e in self.exps}

    def fixed_point(self):
        F = {e: (self.one if not any(e) else self.zero) for e in self.exps}
        for _ in range(self.n // 2 + 1):
            F = self.step(F)
        if self.step(F) != F:
            raise ArithmeticError("the moment closure did not close (a bug: weight n needs weight n - 2 only)")
        return {k: F[_unit(k - 1, self.n)] for k in range(1, self.n + 1)}


def _unit(j, n):
    return tuple(1 if i == j else 0 for i in range(n))


def _poly_mul(a, b, zero):
    out = {}
    for ea, ca in a.items():
        for eb, cb in b.items():
            e = tuple(x + y for x, y in zip(ea, eb))
            out[e] = out.get(e, zero) + ca * cb
    return out


def _power_product(polys, e, base, zero):
    """:math:`\\prod_k \\text{polys}_k^{e_k}` (``base`` the polynomial 1)."""
    total = base
    for k, a in enumerate(e):
        for _ in range(a):
            total = _poly_mul(total, polys[k], zero)
    return {m: c for m, c in total.items() if c}


def _geometric(G, n, zero, one):
    r"""The coefficients :math:`p_0 = 1, p_1, \dots, p_n` of :math:`1/(1 - uG(u))`, :math:`G = \sum_j G_j u^j`, as
    polynomials (``{exponent: coefficient}``) in the variables of ``G``: :math:`p_k = \sum_{j<k} G_j\,p_{k-1-j}`."""
    p = [{tuple(0 for _ in range(n)): one}]
    for k in range(1, n + 1):
        acc = {}
        for j in range(k):
            for e, c in _poly_mul(G[j], p[k - 1 - j], zero).items():
                acc[e] = acc.get(e, zero) + c
        p.append({e: c for e, c in acc.items() if c})
    return p
