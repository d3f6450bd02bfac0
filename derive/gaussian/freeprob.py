r"""The polynomial method (Rao–Edelman) for algebraic laws, and the bulk law of claim C1.

A probability law :math:`\mu` on :math:`[0, \infty)` is represented by the irreducible
polynomial :math:`P(m, z)` that its Stieltjes transform satisfies,

.. math:: m_\mu(z) = \int \frac{d\mu(x)}{x - z}, \qquad P(m_\mu(z), z) = 0,

(:math:`\operatorname{Im} m > 0` on :math:`\operatorname{Im} z > 0`, :math:`m \sim -1/z` at
infinity). Every other transform is a birational change of variables on the curve
:math:`P = 0`, so each operation below is a substitution followed by clearing denominators
and discarding the factors that the substitution itself introduced:

* moment generating function :math:`\psi(u) = \int \frac{ux}{1-ux}\,d\mu = -m(1/u)/u - 1`;
* S-transform :math:`S(w) = \chi(w)\,\frac{1+w}{w}` with :math:`\chi = \psi^{-1}`;
* R-transform :math:`R(w) = G^{-1}(w) - 1/w` with the Cauchy transform :math:`G = -m`;
* dilation :math:`m_{k\mu}(z) = m_\mu(z/k)/k`;
* free multiplicative convolution :math:`S_{\mu_1 \boxtimes \mu_2} = S_{\mu_1} S_{\mu_2}`,
  the product eliminated with a resultant.

The one defining input is the Marchenko–Pastur self-consistent equation; the bulk law
:math:`\kappa\,(\mathrm{MP}_\delta \boxtimes \mathrm{MP}_\gamma)` of claim C1, its edges, atom
and moments are derived from it. The moments are checked independently by the
non-crossing-partition formula of free probability (Nica–Speicher, Lecture 14).
"""
from __future__ import annotations

from functools import lru_cache, wraps
from itertools import combinations, product

import sympy as sp

from derive.errors import ParameterError
from derive.symbols import Formula, named
from derive.numbers import check_count
from derive.symbols import delta, gamma, kappa, m, z

__all__ = ["MAX_PARTITION_ORDER", "finite_expression",
           "marchenko_pastur_equation", "marchenko_pastur", "scale", "scaled_mp_polynomial",
           "moment_generating_function", "s_transform", "r_transform", "stieltjes_from_s_transform", "moments",
           "free_multiplicative_convolution", "bulk_polynomial", "discriminant", "edge_polynomial",
           "atom_at_zero", "noncrossing_partitions", "kreweras_complement", "free_cumulants",
           "free_multiplicative_moments", "formulas"]

w, s, r, u, psi = sp.symbols("w s r u psi")
c = sp.Symbol("c", positive=True)


MAX_PARTITION_ORDER = 14
"""Largest ``n`` for :func:`noncrossing_partitions`: Catalan(14) = 2674440 partitions are listed."""


def _curve_function(f):
    """Cache ``f`` on SymPy arguments, after checking that each one is a SymPy expression (an
    integer ``order`` argument is checked as a count)."""
    cached = lru_cache(maxsize=None)(f)
    names = f.__code__.co_varnames[: f.__code__.co_argcount]

    @wraps(f)
    def checked(*args):
        clean = []
        for name, value in zip(names, args):
            if name == "order":
                clean.append(check_count(value, "order"))
            else:
                clean.append(finite_expression(value, name))
        return cached(*clean)

    return checked


def finite_expression(value, name: str) -> sp.Expr:
    """``value`` as a finite SymPy expression (a Python integer or fraction is sympified)."""
    if not isinstance(value, (bool, str, bytes)):
        try:
            value = sp.sympify(value, strict=True)
        except (sp.SympifyError, TypeError):
            pass
    if isinstance(value, sp.Expr) and not isinstance(value, (sp.MatrixBase, sp.MatrixExpr)) \
            and value.is_commutative and not value.has(sp.nan, sp.zoo, sp.oo, -sp.oo):
        return value
    raise ParameterError(name, f"must be a finite SymPy expression, got {value!r}")


def _normalize(F: sp.Expr, dep: sp.Symbol, indep: sp.Symbol) -> sp.Expr:
    # A curve is defined up to a factor; fix it (primitive, positive leading coefficient in
    # lex order dep > indep) so that derived polynomials can be compared by equality.
    poly = sp.Poly(F, dep, indep)
    poly = poly.primitive()[1] if poly.domain.is_PolynomialRing or poly.domain.is_ZZ else poly.monic()
    lc = poly.LC()
    lead = sp.Poly(lc, *sorted(lc.free_symbols, key=str)).LC() if lc.free_symbols else lc
    return sp.expand(-poly.as_expr() if lead < 0 else poly.as_expr())


def _components(expr: sp.Expr, dep: sp.Symbol) -> list[sp.Expr]:
    # Clearing denominators multiplies the curve by powers of the substituted denominators;
    # those factors are free of the dependent variable or equal to it (no law has m = 0 or
    # S = 0), so they are dropped.
    numer = sp.numer(sp.together(sp.expand(expr)))
    out = []
    for factor, _ in sp.factor_list(numer)[1]:
        if dep in factor.free_symbols and sp.simplify(factor / dep).free_symbols & {dep}:
            out.append(factor)
    return out


def _curve(expr: sp.Expr, dep: sp.Symbol, indep: sp.Symbol) -> sp.Expr:
    parts = _components(expr, dep)
    if len(parts) != 1:
        raise ParameterError("P", f"not the curve of a law: expected one irreducible component in {dep}, got {parts}")
    return _normalize(parts[0], dep, indep)


def _through(expr: sp.Expr, dep: sp.Symbol, indep: sp.Symbol, value) -> sp.Expr:
    # The transform of a law is the component passing through its known value at indep = 0.
    parts = [F for F in _components(expr, dep) if sp.simplify(F.subs({dep: value, indep: 0})) == 0]
    if len(parts) != 1:
        raise ParameterError("P", f"not the curve of a law: expected one component through {dep}={value} at {indep}=0, got {parts}")
    return _normalize(parts[0], dep, indep)


@_curve_function
def marchenko_pastur_equation(ratio: sp.Expr = c) -> sp.Eq:
    r"""The defining self-consistent equation of :math:`\mathrm{MP}_c`, the law of
    :math:`XX^T/n` for :math:`X` of size :math:`p \times n` with i.i.d. unit-variance entries,
    :math:`p/n \to c` (Marchenko–Pastur; Silverstein's form):

    .. math:: m = \frac{1}{1 - c - z - c\,z\,m}.

    >>> marchenko_pastur_equation()
    Eq(m, 1/(-c*m*z - c - z + 1))
    """
    return sp.Eq(m, 1 / (1 - ratio - z - ratio * z * m))


@_curve_function
def marchenko_pastur(ratio: sp.Expr = c) -> sp.Expr:
    r"""The Stieltjes polynomial :math:`P(m, z)` of :math:`\mathrm{MP}_c`, from its defining equation.

    .. math:: c\,z\,m^2 + (z + c - 1)\,m + 1 = 0

    >>> marchenko_pastur()
    c*m**2*z + c*m + m*z - m + 1
    """
    eq = marchenko_pastur_equation(ratio)
    return _curve(eq.lhs - eq.rhs, m, z)


@_curve_function
def scale(P: sp.Expr, factor: sp.Expr) -> sp.Expr:
    r"""The Stieltjes polynomial of the dilated law :math:`k\mu` (law of :math:`kX`):
    :math:`m_{k\mu}(z) = m_\mu(z/k)/k`, so :math:`P_k(m, z) = P(k m, z/k)`.

    >>> scale(marchenko_pastur(), kappa)
    c*kappa*m**2*z + c*kappa*m - kappa*m + m*z + 1
    """
    return _curve(P.subs({m: factor * m, z: z / factor}, simultaneous=True), m, z)


def scaled_mp_polynomial(m_: sp.Symbol, z_: sp.Symbol, ratio: sp.Expr, factor: sp.Expr) -> sp.Expr:
    r"""The Stieltjes polynomial of :math:`k\,\mathrm{MP}_c` written in the variables ``m_, z_``.

    .. math:: c k z m^2 + (z + c k - k) m + 1 = 0

    >>> scaled_mp_polynomial(m, z, sp.Rational(1, 2), 2)
    m**2*z + m*z - m + 1
    """
    return scale(marchenko_pastur(ratio), factor).subs({m: m_, z: z_}, simultaneous=True)


@_curve_function
def moment_generating_function(P: sp.Expr) -> sp.Expr:
    r"""The polynomial :math:`Q(\psi, u) = 0` of :math:`\psi(u) = \int \frac{ux}{1-ux}\,d\mu(x)`.

    Since :math:`\frac{1}{x - 1/u} = -\frac{u}{1-ux}`, :math:`m(1/u) = -u(1 + \psi(u))`.

    >>> moment_generating_function(marchenko_pastur())
    c*psi**2*u + c*psi*u + psi*u - psi + u
    """
    return _curve(P.subs({m: -u * (1 + psi), z: 1 / u}, simultaneous=True), psi, u)


@_curve_function
def s_transform(P: sp.Expr) -> sp.Expr:
    r"""The polynomial :math:`T(s, w) = 0` of the S-transform
    :math:`S(w) = \chi(w)\frac{1+w}{w}`, :math:`\chi = \psi^{-1}` (Voiculescu).

    >>> s_transform(marchenko_pastur())
    c*s*w + s - 1
    """
    Q = moment_generating_function(P)
    return _curve(Q.subs({psi: w, u: s * w / (1 + w)}, simultaneous=True), s, w)


@_curve_function
def r_transform(P: sp.Expr) -> sp.Expr:
    r"""The polynomial of the R-transform :math:`R(w) = G^{-1}(w) - 1/w`, :math:`G = -m`.

    >>> r_transform(marchenko_pastur())
    c*r*w - r + 1
    """
    return _curve(P.subs({m: -w, z: r + 1 / w}, simultaneous=True), r, w)


@_curve_function
def stieltjes_from_s_transform(T: sp.Expr) -> sp.Expr:
    r"""Back from :math:`T(s, w)` to :math:`P(m, z)`: the inverse change of variables
    :math:`w = \psi(1/z) = -mz - 1`, :math:`s = \chi(w)(1+w)/w = m/(mz + 1)`.

    >>> stieltjes_from_s_transform(s_transform(marchenko_pastur())) == marchenko_pastur()
    True
    """
    return _curve(T.subs({s: m / (m * z + 1), w: -m * z - 1}, simultaneous=True), m, z)


@_curve_function
def moments(P: sp.Expr, order: int) -> tuple:
    r"""The moments :math:`\mu_0, \dots, \mu_n` from the expansion at infinity
    :math:`m(z) = -\sum_{k \ge 0} \mu_k z^{-k-1}`, solved order by order.

    With :math:`t = 1/z`, :math:`m = -tM(t)`, :math:`F(M, t) = 0` has the simple root
    :math:`M(0) = 1`, so each coefficient is fixed by one linear equation.

    >>> moments(marchenko_pastur(), 3)
    (1, 1, c + 1, c**2 + 3*c + 1)
    """
    t, M = sp.symbols("t M")
    F = sp.Poly(sp.numer(sp.together(P.subs({m: -t * M, z: 1 / t}, simultaneous=True))), M, t)
    slope = sp.simplify(F.diff(M).as_expr().subs({M: 1, t: 0}))
    if sp.simplify(F.as_expr().subs({M: 1, t: 0})) != 0 or slope == 0:
        raise ParameterError("P", "not the curve of a law: no simple branch m ~ -1/z at infinity")
    # F as a polynomial in M with coefficients in t, evaluated by Horner on series cut at t^order
    by_power = [sp.Poly(F.as_expr().coeff(M, i), t, domain=F.domain.get_field()) for i in range(F.degree(M) + 1)]
    cut = sp.Poly(t ** (order + 1), t, domain=by_power[0].domain)
    series = sp.Poly(1, t, domain=cut.domain)
    coeffs = [sp.Integer(1)]
    for k in range(1, order + 1):
        residual = sp.Poly(0, t, domain=cut.domain)
        for a in reversed(by_power):
            residual = (residual * series + a).rem(cut)
        a_k = -residual.coeff_monomial(t**k) / slope
        coeffs.append(sp.factor(a_k) if a_k.free_symbols else a_k)
        series += sp.Poly(a_k * t**k, t, domain=cut.domain)
    return tuple(sp.expand(a) for a in coeffs)


@_curve_function
def free_multiplicative_convolution(P1: sp.Expr, P2: sp.Expr) -> sp.Expr:
    r"""The Stieltjes polynomial of :math:`\mu_1 \boxtimes \mu_2` from :math:`S = S_1 S_2`.

    With :math:`T_i(s_i, w) = 0`, :math:`s = s_1 s_2` is eliminated by
    :math:`\operatorname{Res}_{s_1}\bigl(T_1(s_1, w),\, s_1^{n_2} T_2(s/s_1, w)\bigr)`; the
    component kept is the one through :math:`S(0) = S_1(0)S_2(0) = 1/(\mu_1(\mu_1)\mu_1(\mu_2))`.

    >>> free_multiplicative_convolution(marchenko_pastur(delta), marchenko_pastur(gamma))
    delta*gamma*m**3*z**2 + 2*delta*gamma*m**2*z + delta*gamma*m - delta*m**2*z - delta*m - gamma*m**2*z - gamma*m - m*z + m - 1
    """
    s1 = sp.Dummy("s1")
    T1 = s_transform(P1).subs(s, s1)
    T2 = s_transform(P2)
    n2 = sp.degree(T2, s)
    T2_scaled = sp.expand(s1**n2 * T2.subs(s, s / s1))
    eliminated = sp.resultant(T1, T2_scaled, s1)
    s_at_0 = 1 / (moments(P1, 1)[1] * moments(P2, 1)[1])
    return stieltjes_from_s_transform(_through(eliminated, s, w, s_at_0))


@lru_cache(maxsize=None)
def bulk_polynomial() -> sp.Expr:
    r"""The Stieltjes polynomial of the C1 bulk :math:`\kappa(\mathrm{MP}_\delta \boxtimes \mathrm{MP}_\gamma)`,
    cubic in :math:`m`:

    .. math:: \delta\gamma\kappa\, z^2 m^3 - \kappa z(\delta + \gamma - 2\delta\gamma)\,m^2
              + \bigl(\kappa(1-\delta)(1-\gamma) - z\bigr)\,m - 1 = 0

    >>> sp.Poly(bulk_polynomial(), m).degree(), bulk_polynomial().subs({delta: 1, gamma: 1, kappa: 1})
    (3, m**3*z**2 - m*z - 1)
    """
    return scale(free_multiplicative_convolution(marchenko_pastur(delta), marchenko_pastur(gamma)), kappa)


@_curve_function
def discriminant(P: sp.Expr) -> sp.Expr:
    r"""The discriminant :math:`\operatorname{disc}_m P(z) = a^{2n-2}\prod_{i<j}(m_i - m_j)^2`
    of :math:`P` in :math:`m`; two branches meet exactly where it vanishes.

    >>> sp.factor(discriminant(marchenko_pastur()))
    c**2 - 2*c*z - 2*c + z**2 - 2*z + 1
    """
    return sp.factor(sp.discriminant(sp.Poly(P, m)).as_expr())


@_curve_function
def edge_polynomial(P: sp.Expr) -> sp.Expr:
    r"""The square-free part in :math:`z` of :math:`\operatorname{disc}_m P`: support edges,
    the atom location and every other branch point are among its real roots.

    For :math:`\mathrm{MP}_c`, :math:`(z - 1 - c)^2 - 4c`, with roots :math:`(1 \pm \sqrt c)^2`:

    >>> sorted(sp.solve(edge_polynomial(marchenko_pastur()), z), key=str)
    [-2*sqrt(c) + c + 1, 2*sqrt(c) + c + 1]
    """
    factors = [f for f, _ in sp.factor_list(discriminant(P))[1] if z in f.free_symbols]
    return _normalize(sp.Mul(*factors), z, m)


@_curve_function
def atom_at_zero(P: sp.Expr) -> sp.Expr:
    r"""The mass :math:`\mu(\{0\})` of a law on :math:`[0, \infty)` with rational :math:`\chi`.

    :math:`\psi` maps :math:`(-\infty, 0)` increasingly onto :math:`(\mu(\{0\}) - 1, 0)`, so
    :math:`\chi = \psi^{-1}` is finite there and tends to :math:`-\infty` at the left end:
    :math:`\mu(\{0\}) - 1` is the largest pole of :math:`\chi` in :math:`[-1, 0)`.

    >>> atom = atom_at_zero(free_multiplicative_convolution(marchenko_pastur(delta), marchenko_pastur(gamma)))
    >>> atom == sp.Max(0, 1 - 1/delta, 1 - 1/gamma), atom.subs({delta: 2, gamma: 3})
    (True, 2/3)
    """
    T = sp.Poly(s_transform(P), s)
    if T.degree() != 1:
        raise ArithmeticError("the atom rule needs a rational S-transform")
    chi = sp.cancel(-T.nth(0) / T.nth(1) * w / (1 + w))
    poles = list(sp.roots(sp.denom(chi), w))
    if -1 not in poles:
        raise ArithmeticError(f"chi has no pole at -1: {chi}")
    if any(p.is_real is None or (p.is_real and p.is_negative is None) for p in poles):
        raise ArithmeticError(f"cannot tell which poles {poles} of chi lie in [-1, 0)")
    # poles below -1 give 1 + p < 0 and lose to the pole at -1
    return sp.Max(*[1 + p for p in poles if p.is_negative])


def noncrossing_partitions(n: int) -> list[tuple[tuple[int, ...], ...]]:
    r"""All non-crossing partitions of :math:`\{1, \dots, n\}` (there are Catalan(n)).

    The block of 1 is :math:`\{1 = i_1 < \dots < i_k\}`; the gaps between its elements are
    partitioned independently, which is exactly the non-crossing condition.

    >>> [len(noncrossing_partitions(n)) for n in range(1, 7)]
    [1, 2, 5, 14, 42, 132]
    """
    n = check_count(n, "n", high=MAX_PARTITION_ORDER)
    return _nc(tuple(range(1, n + 1)))


@lru_cache(maxsize=None)
def _nc(points: tuple[int, ...]) -> list:
    if not points:
        return [()]
    out = []
    for size in range(len(points)):
        for others in combinations(points[1:], size):
            cuts = [0] + [points.index(b) for b in others] + [len(points)]
            gaps = [points[a + 1:b] for a, b in zip(cuts, cuts[1:])]
            for pieces in product(*(_nc(g) for g in gaps)):
                out.append(tuple(sorted(((points[0],) + others,) + sum(pieces, ()))))
    return out


def kreweras_complement(partition, n: int) -> list[tuple[int, ...]]:
    r"""The Kreweras complement :math:`K(\pi)`: the cycles of :math:`\pi^{-1}\gamma_n`, with
    :math:`\pi` read as a permutation (each block an increasing cycle) and
    :math:`\gamma_n = (1\,2\,\cdots\,n)`; :math:`|\pi| + |K(\pi)| = n + 1`.

    >>> kreweras_complement(((1, 2, 3),), 3), kreweras_complement(((1,), (2,), (3,)), 3)
    ([(1,), (2,), (3,)], [(1, 2, 3)])
    """
    n = check_count(n, "n", high=MAX_PARTITION_ORDER)
    try:
        elements = sorted(b for block in partition for b in block)
    except TypeError:
        raise ParameterError("partition", f"must be a sequence of blocks of integers, got {partition!r}") from None
    if elements != list(range(1, n + 1)):
        raise ParameterError("partition", f"is not a partition of {{1, ..., {n}}}: {partition!r}")
    nxt = {}
    for block in partition:
        for i, b in enumerate(block):
            nxt[b] = block[(i + 1) % len(block)]
    inv = {v: k for k, v in nxt.items()}
    perm = {i: inv[i % n + 1] for i in range(1, n + 1)}
    seen, cycles = set(), []
    for start in range(1, n + 1):
        if start in seen:
            continue
        cycle, i = [], start
        while i not in seen:
            seen.add(i)
            cycle.append(i)
            i = perm[i]
        cycles.append(tuple(sorted(cycle)))
    return cycles


def _moment_sequence(mom, name: str) -> list:
    """Moments ``mu_0 = 1, mu_1, ...`` as SymPy expressions (numbers or symbolic in the parameters)."""
    if isinstance(mom, (str, bytes)) or not hasattr(mom, "__len__"):
        raise ParameterError(name, f"must be a sequence of moments, got {mom!r}")
    out = [finite_expression(x, name) for x in mom]
    if not out or out[0] != 1:
        raise ParameterError(name, f"must be finite moments starting with mu_0 = 1, got {mom!r}")
    if len(out) > MAX_PARTITION_ORDER + 1:
        raise ParameterError(name, f"at most {MAX_PARTITION_ORDER + 1} moments (the sums run over non-crossing partitions)")
    return out


def free_cumulants(mom) -> list:
    r"""Free cumulants from moments by the moment–cumulant formula
    :math:`\mu_n = \sum_{\pi \in NC(n)} \prod_{B \in \pi} \kappa_{|B|}`, inverted order by order.

    >>> free_cumulants([1, 1, 2, 5, 14])  # MP_1: Catalan moments, all free cumulants 1
    [1, 1, 1, 1, 1]
    """
    mom = _moment_sequence(mom, "mom")
    kap = [sp.Integer(1)]
    for n in range(1, len(mom)):
        lower = sum(sp.Mul(*[kap[len(B)] for B in pi]) for pi in noncrossing_partitions(n) if len(pi) > 1)
        kap.append(sp.expand(mom[n] - lower))
    return kap


def free_multiplicative_moments(mom1, mom2) -> list:
    r"""Moments of :math:`\mu_1 \boxtimes \mu_2` by non-crossing partitions (Nica–Speicher, Thm 14.4):

    .. math:: \mu_n(\mu_1 \boxtimes \mu_2) = \sum_{\pi \in NC(n)} \kappa_\pi(\mu_1)\, \mu_{K(\pi)}(\mu_2).

    >>> free_multiplicative_moments([1, 1, 2, 5], [1, 1, 2, 5])  # MP_1 boxtimes MP_1: Fuss-Catalan
    [1, 1, 3, 12]
    """
    mom2 = _moment_sequence(mom2, "mom2")
    kap = free_cumulants(mom1)
    out = [sp.Integer(1)]
    for n in range(1, min(len(mom1), len(mom2))):
        total = 0
        for pi in noncrossing_partitions(n):
            total += sp.Mul(*[kap[len(B)] for B in pi]) * sp.Mul(*[mom2[len(B)] for B in kreweras_complement(pi, n)])
        out.append(sp.expand(total))
    return out


def formulas() -> list[Formula]:
    src = "derive/gaussian/freeprob.py"
    bulk = bulk_polynomial()
    product = free_multiplicative_convolution(marchenko_pastur(delta), marchenko_pastur(gamma))
    mp_law = "$\\mathrm{MP}_c$: the law of $XX^\\top/n$, $X$ of size $p \\times n$ with iid unit-variance entries, $p/n \\to c$"
    R_, S_, P_, D_ = (named(n, n, sp.Function) for n in ("R", "S", "P", "D"))
    return [
        Formula("Marchenko-Pastur equation of the Stieltjes transform", marchenko_pastur_equation(),
                mp_law + "; $m(z) = \\int d\\mu(x)/(x - z)$", f"{src}:marchenko_pastur_equation", claim="C1"),
        Formula("R-transform of the Marchenko-Pastur law", sp.solve(r_transform(marchenko_pastur()), r)[0],
                "$R(w) = G^{-1}(w) - 1/w$ with $G = -m$", f"{src}:r_transform", R_(w), claim="C1"),
        Formula("S-transform of the Marchenko-Pastur law", sp.solve(s_transform(marchenko_pastur()), s)[0],
                "$S(w) = \\chi(w)(1 + w)/w$ with $\\chi = \\psi^{-1}$", f"{src}:s_transform", S_(w), claim="C1"),
        Formula("Stieltjes polynomial of the bulk law", bulk,
                "$P(m(z), z) = 0$ for the Stieltjes transform $m$ of "
                "$\\kappa(\\mathrm{MP}_\\delta \\boxtimes \\mathrm{MP}_\\gamma)$ (S-transforms multiply; claim C1)",
                f"{src}:bulk_polynomial", P_(m, z), claim="C1"),
        Formula("edge polynomial of the bulk law", edge_polynomial(bulk),
                "the square-free part of the discriminant of $P$ in $m$; the support edges are among its real roots",
                f"{src}:edge_polynomial", D_(z), claim="C1"),
        Formula("atom of the bulk law at zero", atom_at_zero(product),
                "$1 +$ the largest pole of $\\chi$ in $[-1, 0)$", f"{src}:atom_at_zero",
                named("mu_0", r"\mu(\{0\})"), claim="C1", quantities=(("bulk.atom_at_zero", None),)),
    ]
