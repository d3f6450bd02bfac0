"""Stochastic Lanczos quadrature of a sampled token matrix and the law of S given it (verify/montecarlo/quadrature.py),
against the dense eigenvalues of the same D; and, slow, the cavity against the law given large sampled D."""
import numpy as np
import pytest

from verify.montecarlo.draw import mixing_matrix
from verify.montecarlo.quadrature import conditional_stieltjes, lanczos_quadrature, token_draw
from verify.stats import student_t_quantile


def _dense(V, w, seed):
    draw = token_draw(V, V, w, seed)
    A = mixing_matrix(*draw, V)
    return draw, np.linalg.eigvalsh((A @ A.T).toarray())


def test_quadrature_against_the_dense_spectrum_of_the_same_token_matrix():
    # V = 2000, T = 3 unequal weights: each probe's Gauss rule is b^T (D - zeta)^{-1} b / V with a Rademacher b, an
    # unbiased estimate of (1/V) tr (D - zeta)^{-1}; the mean of 32 probes is within 4 standard errors of the probes'
    # spread (t_31, 99.98%) of the exact trace from the eigenvalues. 120 steps: the change from 60 steps (the
    # quadrature's truncation error) is below 1e-6 at Im zeta >= 0.1 and at negative zeta.
    w = [0.5, 0.3, 0.2]
    draw, ev = _dense(2000, w, 3)
    quad = lanczos_quadrature(draw, 1.0, 32, 120, 4)
    short = quad.truncated(60)
    for zeta in (0.3 + 0.1j, 0.05 + 0.3j, 1.0 + 0.5j, -0.2 + 0j):
        exact = np.mean(1 / (ev - zeta))
        probes = np.sum(quad.weights / (quad.nodes - zeta), axis=1)
        for part in (np.real, np.imag):
            se = part(probes).std(ddof=1) / np.sqrt(len(probes))
            assert abs(part(probes).mean() - part(exact)) <= student_t_quantile(0.9999, 31) * se + 1e-12
        assert abs(quad.resolvent(zeta)[0] - short.resolvent(zeta)[0]) < 1e-6
        # the quadrature's resolvent is the probes' mean checked above (a 1% error of it had passed), and g' is within
        # its probes' error of the exact (1/V) tr (D - zeta)^{-2}
        assert abs(quad.resolvent(zeta)[0] - probes.mean()) <= 1e-12 * abs(probes.mean())
        squares = np.sum(quad.weights / (quad.nodes - zeta) ** 2, axis=1)
        for part in (np.real, np.imag):
            se = part(squares).std(ddof=1) / np.sqrt(len(squares))
            assert abs(part(quad.resolvent(zeta)[1]) - part(np.mean(1 / (ev - zeta) ** 2))) <= \
                student_t_quantile(0.9999, 31) * se + 1e-12


def test_conditional_law_from_the_quadrature_is_the_dense_one():
    # the law of S given D from the exact eigenvalues and from the quadrature of the same D (64 probes, whose spread
    # is 0.3% of g at these points) agree to 2%, on the axis (eta -> 0) and off it
    w = [0.75, 0.25]
    draw, ev = _dense(1500, w, 5)
    quad = lanczos_quadrature(draw, 1.0, 64, 120, 6)
    exact = lambda zeta: (np.mean(1 / (ev - zeta)), np.mean(1 / (ev - zeta) ** 2))  # noqa: E731
    for z in (0.5 + 0.05j, 0.3 + 0j, 1.2 + 0j):
        a, b = conditional_stieltjes(z, exact, 1.0), conditional_stieltjes(z, quad.resolvent, 1.0)
        assert abs(a - b) < 0.02 * abs(a) and a.imag > 0


def test_the_law_given_D_is_the_generalized_marchenko_pastur_law_of_its_eigenvalues():
    # the deterministic equivalent of the large-instance reference (its S_0 = (1 + zeta g)/delta from D's resolvent)
    # against derive's own generalized Marchenko-Pastur law of the same population (its series over the atoms, its
    # Newton in mpmath): a diagonal D of counts n_v (V/N) with the resolvent exact. The two agree to 1e-9 relative, so a
    # 1% error in the reference's S_0 is seen (the same reference made 10% wrong had passed the whole suite, its tests
    # comparing it with itself)
    import mpmath
    import sympy as sp

    from derive.vocabulary.limit.populations import CountPopulation
    from derive.vocabulary.limit.silverstein import GeneralizedMP

    counts = [0] * 15 + [1] * 35 + [2] * 25 + [3] * 15 + [5] * 10
    scale, delta = sp.Rational(1, 2), sp.Rational(1, 2)
    ev = np.array(counts, dtype=float) * float(scale)
    exact = lambda zeta: (np.mean(1 / (ev - zeta)), np.mean(1 / (ev - zeta) ** 2))  # noqa: E731
    law = GeneralizedMP(delta, CountPopulation.of(counts, scale))
    for z in (0.4 + 0.2j, 1.5 + 0.05j, 3.0 + 1.0j):
        with mpmath.workdps(30):
            reference = complex(law.stieltjes(mpmath.mpc(z.real, z.imag)))
        assert abs(conditional_stieltjes(z, exact, float(delta)) - reference) < 1e-9 * abs(reference), z


@pytest.mark.slow
def test_cavity_against_the_law_given_large_sampled_token_matrices():
    # T = 2 mean, delta = gamma = 1, V = N = 2^18, 6 draws of 8 probes, 240 Lanczos steps: at z = x + i eta (x = 0.5,
    # 1 kappa; eta = 0.1 kappa and 0) the cavity's m(z) within its error plus the draws' 99% Student-t interval plus
    # the quadrature's truncation change (notes/finite_vocabulary.md: the full tables)
    from verify.studies.large_instance import comparison_rows, reference

    ref = reference(2, "mean", None, 1 << 18, 6, 8, 240, [0.25 + 0.05j, 0.25 + 0j, 0.5 + 0.05j, 0.5 + 0j])
    for r in comparison_rows(2, "mean", None, ref):
        parts = (0, 1) if r["eta"] > 0 else (1,)
        for i in parts:
            assert abs(r["difference"][i]) <= r["cavity_error"][i] + r["ci99"][i] + r["lanczos"], r
