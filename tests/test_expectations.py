"""The derived moments against exact enumeration of the sampling law (independent)."""
import itertools

import pytest
import sympy as sp

from derive.model import expectations as ex
from derive.model.spec import parse_signs

V4_SIGNS = (1, 1, -1, -1)


def _sign_law(kind, T, r):
    """Exact law of xi for small T, written from the family's generative description."""
    law = {}
    for xi in itertools.product((1, -1), repeat=T):
        if kind == "markov":
            p = sp.Rational(1, 2)
            for a, b in zip(xi, xi[1:]):
                p *= (1 + r * a * b) / 2
        elif kind == "prefix":
            L = r
            p = sp.Rational(1, 2) ** (T - L + 1) if len(set(xi[:L])) == 1 else 0
        else:
            raise ValueError(kind)
        law[xi] = p
    return law


def _enumerated_moments(law, w):
    """E[a a^T] and E[a] over all sign vectors and all token assignments, V = 4."""
    Vn, T = len(V4_SIGNS), len(w)
    second = sp.zeros(Vn, Vn)
    first = sp.zeros(Vn, 1)
    for xi, p in law.items():
        if p == 0:
            continue
        classes = [[v for v in range(Vn) if V4_SIGNS[v] == x] for x in xi]
        for tokens in itertools.product(*classes):
            q = p * sp.Rational(1, 2) ** T  # each class has V/2 = 2 tokens
            a = sp.zeros(Vn, 1)
            for wt, v in zip(w, tokens):
                a[v] += wt
            second += q * a * a.T
            first += q * a
    return second.applyfunc(sp.expand), first.applyfunc(sp.expand)


def _formula_moments(w, R):
    Vn = len(V4_SIGNS)
    wv = sp.Matrix(w)
    scalars = {ex.alpha: (wv.T * R * wv)[0], ex.kappa: (wv.T * wv)[0], ex.W: sum(w), ex.V: Vn}
    entry = ex.second_moment_entry()
    M = sp.Matrix(Vn, Vn, lambda i, j: entry.subs(
        {ex.same: int(i == j), ex.sigma: V4_SIGNS[i], ex.sigma2: V4_SIGNS[j]}).subs(scalars))
    mean = sp.Matrix([ex.mean_entry().subs(scalars)] * Vn)
    return M.applyfunc(sp.expand), mean.applyfunc(sp.expand)


@pytest.mark.parametrize("kind, T, param", [
    ("markov", 1, sp.Rational(1, 3)), ("markov", 2, sp.Symbol("r")), ("markov", 3, sp.Symbol("r")),
    ("prefix", 2, 2), ("prefix", 3, 2), ("prefix", 3, 3),
])
def test_second_moment_matches_exact_enumeration(kind, T, param):
    w = sp.symbols(f"w1:{T + 1}")
    law = _sign_law(kind, T, param)
    if kind == "markov":
        R = sp.Matrix(T, T, lambda i, j: param ** abs(i - j))
    else:
        R = parse_signs(f"prefix:{param}").R(T)
    assert sp.expand(sum(law.values())) == 1
    second, first = _enumerated_moments(law, w)
    M, mean = _formula_moments(w, R)
    assert (second - M).applyfunc(sp.simplify) == sp.zeros(4, 4)
    assert (first - mean).applyfunc(sp.simplify) == sp.zeros(4, 1)


def test_spectrum_of_second_moment_from_its_entries():
    # Independent of the projection used in the module: build M for V = 6 and apply it.
    Vn, signs = 6, sp.Matrix([1, 1, 1, -1, -1, -1])
    entry = ex.second_moment_entry().subs(ex.V, Vn)
    M = sp.Matrix(Vn, Vn, lambda i, j: entry.subs({ex.same: int(i == j), ex.sigma: signs[i], ex.sigma2: signs[j]}))
    ones = sp.ones(Vn, 1)
    perp = sp.Matrix([1, -1, 0, 0, 0, 0])
    spec = {k: v.subs(ex.V, Vn) for k, v in ex.second_moment_spectrum().items()}
    assert (M * signs - spec["s"] * signs).applyfunc(sp.simplify) == sp.zeros(Vn, 1)
    assert (M * ones - spec["one"] * ones).applyfunc(sp.simplify) == sp.zeros(Vn, 1)
    assert (M * perp - spec["perp"] * perp).applyfunc(sp.simplify) == sp.zeros(Vn, 1)


def test_covariance_decomposition_is_an_identity_for_a_symbolic_table():
    # E M E^T = alpha (mu+g)(mu+g)^T + W^2 m m^T + (kappa/V) Z P_perp Z^T, exactly, d = 2, V = 4.
    Vn, dn = 4, 2
    s = sp.Matrix(V4_SIGNS)
    ones = sp.ones(Vn, 1)
    Z = sp.Matrix(dn, Vn, lambda i, j: sp.Symbol(f"z{i}{j}"))
    mu = sp.Matrix(sp.symbols("mu0 mu1"))
    E = mu * s.T + Z
    a, k, Wn = ex.alpha, ex.kappa, ex.W
    entry = ex.second_moment_entry().subs(ex.V, Vn)
    M = sp.Matrix(Vn, Vn, lambda i, j: entry.subs({ex.same: int(i == j), ex.sigma: s[i], ex.sigma2: s[j]}))
    g, m = Z * s / Vn, Z * ones / Vn
    P_perp = sp.eye(Vn) - s * s.T / Vn - ones * ones.T / Vn
    rhs = a * (mu + g) * (mu + g).T + Wn**2 * m * m.T + k / Vn * Z * P_perp * Z.T
    assert (E * M * E.T - rhs).applyfunc(sp.expand) == sp.zeros(dn, dn)
    mean = E * sp.Matrix([ex.mean_entry().subs(ex.V, Vn)] * Vn)
    assert (mean - Wn * m).applyfunc(sp.expand) == sp.zeros(dn, 1)


@pytest.mark.parametrize("centered", [False, True])
def test_the_control_variates_have_mean_zero(centered):
    # The controls of verify.comparison subtract exact expectations (sample_covariance_mean among them); over many
    # cheap trials their means must be 0 within a Student-t interval, Bonferroni over the 7 controls and 2 matrices.
    # A relative error of 5% in E[u^T S u] (1.44 raw, 1.37 centered here) would shift its control by 0.07, 4.4 of
    # its standard errors (0.016), beyond the interval's half-width of 2.9 of them: detected with probability 0.9.
    import numpy as np

    from tests.trial_cases import model as trial_model
    from verify.montecarlo.draw import draw
    from verify.montecarlo.observables import CONTROLS, controls
    from verify.stats import mean_ci

    w = [0.5, 0.3, 0.2]
    model = trial_model(12, 24, 48, 3, "prefix:2", "1.5")
    alpha = float(np.array(w) @ np.array(parse_signs("prefix:2").R(3), dtype=float) @ np.array(w))
    G = np.array([controls(model, draw(model, seed, weights=w), centered, alpha)
                  for seed in np.random.SeedSequence(3).spawn(600)])
    for name, column in zip(CONTROLS, G.T):
        mean, lo, hi = mean_ci(column, 1 - 0.05 / 14)
        assert lo <= 0 <= hi, (name, mean, lo, hi)


@pytest.mark.parametrize("kind, T, param, w", [("markov", 3, sp.Rational(1, 3), (sp.Rational(1, 2), sp.Rational(1, 3),
                                                                                    sp.Rational(1, 6))),
                                              ("prefix", 3, 2, (sp.Rational(3, 5), sp.Rational(1, 5), sp.Rational(1, 5)))])
def test_the_table_covariance_of_the_population_reference_is_the_enumerated_one(kind, T, param, w):
    # verify.montecarlo.population assembles E M E^T from M's three coefficients in float64, the reference of the
    # population-level outlier tests: against E (enumerated E[a a^T]) E^T for a table E, to 1e-12 (a 1% error of its
    # identity term had passed them, their tolerance being the finite-d fluctuation)
    import numpy as np

    from verify.montecarlo.draw import balanced_signs
    from verify.montecarlo.population import table_covariance

    assert tuple(balanced_signs(4)) == V4_SIGNS
    law = _sign_law(kind, T, param)
    second, _ = _enumerated_moments(law, w)
    R = sp.Matrix(T, T, lambda i, j: param ** abs(i - j)) if kind == "markov" else parse_signs(f"prefix:{param}").R(T)
    wv = sp.Matrix(w)
    alpha, kappa, W = (wv.T * R * wv)[0], (wv.T * wv)[0], sum(w)
    E = np.random.default_rng(3).standard_normal((3, 4))
    expected = E @ np.array(second, dtype=float) @ E.T
    got = table_covariance(E, float(alpha), float(kappa), float(W))
    assert np.allclose(got, expected, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("centered", [False, True])
def test_the_conditional_control_variates_have_mean_zero_given_the_tokens(centered):
    # verify.montecarlo.observables.conditional_controls subtracts expectations given the tokens (Isserlis' theorem for
    # the Wishart moments; E phi independent of E P): one draw's tokens kept, 2000 tables redrawn, every control's mean
    # 0 within a Student-t interval (Bonferroni over 8 controls and 2 matrices, half-width 3.0 standard errors). Power:
    # the expectations subtracted by the row controls, recomputed here with the dense D, are each at least 50 standard
    # errors of their control's mean (58 to 154), so an error of 7.6% in one (3.8 standard errors) is found with
    # probability 0.8; the coefficient n^2 + n of uS3u written n^2 fails the raw case.
    import dataclasses

    import numpy as np

    from tests.trial_cases import model as trial_model
    from verify.montecarlo.draw import balanced_signs, draw, sample_table
    from verify.montecarlo.observables import conditional_controls
    from verify.stats import mean_ci

    w, mu2, K, d, V, N = [0.5, 0.3, 0.2], 1.5, 2000, 12, 24, 48
    model = trial_model(d, V, N, 3, "prefix:2", "1.5")
    data = draw(model, 5, weights=w)
    tables = [sample_table(np.random.default_rng(seed), d, V, mu2) for seed in np.random.SeedSequence(8).spawn(K)]
    G = np.array([conditional_controls(dataclasses.replace(data, E=E), centered, mu2) for E in tables])
    assert G.shape[1] == (3 if centered else 8)
    for i, column in enumerate(G.T):
        mean, lo, hi = mean_ci(column, 1 - 0.05 / 16)
        assert lo <= 0 <= hi, (i, mean, lo, hi)
    A = data.A.toarray()
    D = (V / N) * A @ (np.eye(N) - np.ones((N, N)) / N) @ A.T
    s, n = balanced_signs(V), d - 1
    f = np.array([D @ E[0] / V for E in tables])
    subtracted = [np.full(K, (np.trace(D) + mu2 * s @ D @ s) / V), n * np.sum(f * f, axis=1),
                  ((n * n + n) * np.einsum("ki,ij,kj->k", f, D, f) + n * np.trace(D) * np.sum(f * f, axis=1)) / V]
    for column, term in zip(G.T[:3], subtracted):
        assert abs(term.mean()) > 50 * column.std(ddof=1) / np.sqrt(K), (term.mean(), column.std(ddof=1))
