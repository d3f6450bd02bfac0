"""The polynomial method: MP against its classical closed form, the S-transform product against
the non-crossing-partition moment formula, the atom against the rank of the product."""
import numpy as np
import pytest
import sympy as sp
from hypothesis import given, settings

from derive.gaussian import freeprob as fp
from derive.gaussian.freeprob import c, delta, gamma, kappa, m, z
from derive.sheet.latex import record
from tests.strategies import ratios

Q = sp.Rational


def test_mp_polynomial_is_satisfied_by_the_classical_stieltjes_transform():
    # classical closed form (Marchenko-Pastur 1967), branch m ~ -1/z
    classical = (1 - c - z + sp.sqrt((z - 1 - c) ** 2 - 4 * c)) / (2 * c * z)
    assert sp.simplify(fp.marchenko_pastur().subs(m, classical)) == 0
    assert sp.limit(classical * z, z, sp.oo) == -1


@pytest.mark.parametrize("ratio", [Q(1, 3), Q(1), Q(5, 2)])
def test_mp_density_is_the_classical_density(ratio):
    # rho(x) = sqrt((b - x)(x - a)) / (2 pi c x), a, b = (1 -+ sqrt c)^2; float roots: tol 1e-12
    a, b = (1 - np.sqrt(float(ratio))) ** 2, (1 + np.sqrt(float(ratio))) ** 2
    P = sp.Poly(fp.marchenko_pastur(ratio), m)
    coeffs = [sp.lambdify(z, k) for k in P.all_coeffs()]
    for x in np.linspace(a, b, 23)[1:-1]:
        im = max(np.roots([f(x) for f in coeffs]).imag)
        expected = np.sqrt((b - x) * (x - a)) / (2 * np.pi * float(ratio) * x)
        assert abs(im / np.pi - expected) < 1e-12


def test_mp_transforms_are_the_free_poisson_ones():
    (S,) = sp.solve(fp.s_transform(fp.marchenko_pastur()), fp.s)
    (R,) = sp.solve(fp.r_transform(fp.marchenko_pastur()), fp.r)
    assert sp.simplify(S - 1 / (1 + c * fp.w)) == 0 and sp.simplify(R - 1 / (1 - c * fp.w)) == 0


def test_mp_moments_are_narayana_polynomials():
    mom = fp.moments(fp.marchenko_pastur(), 7)
    for k in range(1, 8):
        narayana = sum(sp.binomial(k, j) * sp.binomial(k, j - 1) / k * c ** (j - 1) for j in range(1, k + 1))
        assert sp.expand(mom[k] - narayana) == 0


def test_mp_free_cumulants_from_moments_are_powers_of_c():
    # free Poisson: kappa_n = c^(n-1), the series of R(w) = 1/(1 - c w)
    kap = fp.free_cumulants(fp.moments(fp.marchenko_pastur(), 6))
    assert [sp.expand(k - c ** (n - 1)) for n, k in enumerate(kap) if n] == [0] * 6


def test_kreweras_complement_counts():
    for n in range(1, 7):
        for pi in fp.noncrossing_partitions(n):
            assert len(pi) + len(fp.kreweras_complement(pi, n)) == n + 1
        assert len({tuple(fp.kreweras_complement(pi, n)) for pi in fp.noncrossing_partitions(n)}) == sp.catalan(n)


def test_product_moments_equal_noncrossing_partition_moments_symbolically():
    P = fp.free_multiplicative_convolution(fp.marchenko_pastur(delta), fp.marchenko_pastur(gamma))
    from_polynomial = fp.moments(P, 6)
    combinatorial = fp.free_multiplicative_moments(fp.moments(fp.marchenko_pastur(delta), 6),
                                                   fp.moments(fp.marchenko_pastur(gamma), 6))
    assert [sp.expand(a - b) for a, b in zip(from_polynomial, combinatorial)] == [0] * 7


@pytest.mark.parametrize("d,g", [(Q(1, 2), Q(1, 4)), (Q(3), Q(2, 7)), (Q(1), Q(1)), (Q(7, 5), Q(9, 4))])
def test_product_moments_equal_noncrossing_partition_moments_exactly(d, g):
    P = fp.free_multiplicative_convolution(fp.marchenko_pastur(d), fp.marchenko_pastur(g))
    mp1, mp2 = fp.moments(fp.marchenko_pastur(d), 8), fp.moments(fp.marchenko_pastur(g), 8)
    assert list(fp.moments(P, 8)) == fp.free_multiplicative_moments(mp1, mp2)


def test_mp1_boxtimes_mp1_moments_are_fuss_catalan():
    P = fp.free_multiplicative_convolution(fp.marchenko_pastur(1), fp.marchenko_pastur(1))
    assert list(fp.moments(P, 8)) == [sp.binomial(3 * n, n) / (2 * n + 1) for n in range(9)]


def test_product_with_a_point_mass_is_a_dilation():
    point_mass = fp.stieltjes_from_s_transform(kappa * fp.s - 1)  # S = 1/kappa: delta_kappa
    assert sp.expand(point_mass - (m * z - kappa * m + 1)) == 0
    assert fp.free_multiplicative_convolution(fp.marchenko_pastur(), point_mass) == fp.scale(fp.marchenko_pastur(), kappa)


def test_convolution_is_commutative_and_bulk_is_a_cubic():
    a, b = fp.marchenko_pastur(delta), fp.marchenko_pastur(gamma)
    assert fp.free_multiplicative_convolution(a, b) == fp.free_multiplicative_convolution(b, a)
    assert sp.degree(fp.bulk_polynomial(), m) == 3
    assert fp.bulk_polynomial() == fp.scale(fp.free_multiplicative_convolution(a, b), kappa)


def test_mp_edges_from_the_discriminant():
    roots = sp.solve(fp.edge_polynomial(fp.marchenko_pastur()), z)
    assert {sp.expand(r) for r in roots} == {sp.expand((1 - sp.sqrt(c)) ** 2), sp.expand((1 + sp.sqrt(c)) ** 2)}


def _zero_mass_equation(P):
    # m ~ -a/z as z -> 0: the lowest power of z in P(-a/z, z) must vanish
    a = sp.Symbol("a")
    expr = sp.Poly(sp.numer(sp.together(P.subs(m, -a / z))), z)
    low = min(k for (k,) in expr.monoms())
    return sp.Poly(expr.as_expr().coeff(z, low), a)


@settings(max_examples=25)
@given(ratios, ratios)
def test_atom_at_zero_is_the_rank_deficit(d, g):
    # rank(Sigma W) <= min(d, V, N): the null fraction is 1 - min(1, 1/delta, 1/gamma)
    atom = fp.atom_at_zero(fp.bulk_polynomial()).subs({delta: d, gamma: g})
    assert atom == 1 - min(1, 1 / d, 1 / g)
    assert _zero_mass_equation(fp.bulk_polynomial().subs({delta: d, gamma: g, kappa: 1})).eval(atom) == 0


def test_atom_matches_the_rank_of_a_sampled_product():
    rng = np.random.default_rng(3)
    for dim, V, N in [(40, 20, 80), (40, 80, 16), (40, 60, 90)]:
        Z, G = rng.standard_normal((dim, V)), rng.standard_normal((dim, N))
        rank = np.linalg.matrix_rank(Z @ Z.T @ G @ G.T)
        atom = fp.atom_at_zero(fp.bulk_polynomial()).subs({delta: Q(dim, V), gamma: Q(dim, N)})
        assert atom == Q(dim - rank, dim)


def test_formulas_are_the_derived_objects():
    names = [f.name for f in fp.formulas()]
    assert len(names) == len(set(names)) == 6
    assert all(record(f)["latex"] for f in fp.formulas())
    assert fp.bulk_polynomial() in [f.expr for f in fp.formulas()]
