from fractions import Fraction

import math

import mpmath
import numpy as np
import pytest
import sympy as sp
from hypothesis import given, settings

from derive.model.attention import (T, alpha, causal_weight, causal_weights, kappa, mean_weights,
                                    optimal_weights, s, tau)
from derive.model.pooling import pooling, scheme_weights
from derive.errors import ParameterError
from derive.model.schemes import load_weights_file
from derive.model.spec import parse_signs
from tests.strategies import causal_cases, sign_specs


def brute_force_weights(n, tau_value, mask):
    """Softmax of the limit scores tau*I over each causal window, averaged over nonempty rows."""
    with mpmath.workdps(40):
        tau_value = mpmath.mpf(sp.N(tau_value, 45))
        rows = []
        for t in range(n):
            keys = range(t + 1) if mask == "inclusive" else range(t)
            if not keys:
                continue
            e = [mpmath.exp(tau_value if k == t else 0) for k in keys]
            Z = mpmath.fsum(e)
            rows.append([e[k] / Z if k in keys else mpmath.mpf(0) for k in range(n)])
        return [str(mpmath.fsum(r[k] for r in rows) / len(rows)) for k in range(n)]


@pytest.mark.parametrize("mask", ["inclusive", "strict"])
@pytest.mark.parametrize("n", [2, 3, 5, 7])
@pytest.mark.parametrize("tau_value", [0, sp.Rational(1, 2), 3])
def test_derived_limit_matches_brute_force_softmax(mask, n, tau_value):
    derived = causal_weights(n, tau_value, mask)
    expected = brute_force_weights(n, tau_value, mask)
    assert max(abs(sp.N(w, 40) - sp.Float(e, 40)) for w, e in zip(derived, expected)) < 1e-30


def test_small_cases_by_hand():
    # inclusive T=2: rows (1, 0) and (1/2, 1/2); strict T=3: rows (1, 0, 0) and (1/2, 1/2, 0)
    assert causal_weights(2, 0, "inclusive") == [sp.Rational(3, 4), sp.Rational(1, 4)]
    assert causal_weights(3, 0, "strict") == [sp.Rational(3, 4), sp.Rational(1, 4), 0]
    # inclusive T=2 at tau: row 2 is (1, e^tau)/(1 + e^tau)
    E = sp.exp(2)
    assert abs(causal_weights(2, 2, "inclusive", 40)[1] - sp.N(E / (1 + E) / 2, 50)) < 1e-40


def test_harmonic_closed_forms_at_tau_zero():
    for n in range(2, 12):
        H = lambda k: sum(sp.Rational(1, j) for j in range(1, k + 1))  # noqa: E731
        assert causal_weights(n, 0, "inclusive") == [(H(n) - H(k - 1)) / n for k in range(1, n + 1)]
        assert causal_weights(n, 0, "strict") == [(H(n - 1) - H(k - 1)) / (n - 1) for k in range(1, n + 1)]


def test_strict_mask_does_not_depend_on_tau():
    assert causal_weight("strict").has(tau) is False
    assert causal_weights(6, 7, "strict") == causal_weights(6, 0, "strict")


@settings(max_examples=40)
@given(causal_cases())
def test_causal_weights_nonincreasing_and_sum_to_one(case):
    n, tau_value, mask = case
    f = sp.lambdify((s, T, tau), causal_weight(mask), "mpmath")
    with mpmath.workdps(30):
        w = [f(k, n, mpmath.mpf(tau_value.p) / tau_value.q) for k in range(1, n + 1)]
        assert abs(mpmath.fsum(w) - 1) < mpmath.mpf(10) ** -25
        assert all(a >= b - mpmath.mpf(10) ** -25 for a, b in zip(w, w[1:]))
        assert min(w) >= -mpmath.mpf(10) ** -25


def test_strict_needs_two_positions_and_bad_parameters_are_named():
    for args, name in [((1, 0, "strict"), "T"), ((3, -1, "inclusive"), "tau"), ((3, "nan", "strict"), "tau"),
                       ((3, 0, "foo"), "mask"), ((0, 0, "inclusive"), "T")]:
        with pytest.raises(ParameterError) as err:
            causal_weights(*args)
        assert err.value.parameter == name


def test_optimal_block_families_are_exact_indicators():
    w, note = optimal_weights(parse_signs("prefix:3"), 5)
    assert w == [sp.Rational(1, 3)] * 3 + [0, 0] and note is None
    w, note = optimal_weights(parse_signs("prefix:1"), 4)
    assert w == mean_weights(4) and "every w" in note


@pytest.mark.parametrize("spec", ["markov:1/2", "markov:-3/5", "gauss:7/10"])
def test_optimal_numeric_is_the_top_eigenvector(spec):
    R = parse_signs(spec).R(6)
    w, note = optimal_weights(parse_signs(spec), 6, digits=30)
    lam = np.linalg.eigvalsh(np.array(R, dtype=float)).max()
    v = sp.Matrix(w)
    # R v = lambda v to the working precision; lambda agrees with LAPACK to double rounding
    assert (R * v - sp.N(alpha(w, R) / kappa(w), 40) * v).norm() < 1e-28
    assert abs(float(alpha(w, R) / kappa(w)) - lam) < 1e-12 and sum(w) > 0 and note is None
    if spec == "markov:1/2":
        assert all(x > 0 for x in w)  # Perron-Frobenius: a positive matrix has a positive top eigenvector


def test_degenerate_top_eigenvalue_is_reported(tmp_path):
    # R = 1_B1_B^T on {1,2} and on {3,4}: eigenvalue 2 twice, no unique optimum
    path = tmp_path / "R.csv"
    path.write_text("1,1,0,0\n1,1,0,0\n0,0,1,1\n0,0,1,1\n")
    w, note = optimal_weights(parse_signs(f"file:{path}"), 4)
    assert "degenerate (multiplicity 2)" in note


def test_weights_files(tmp_path):
    np.save(tmp_path / "w.npy", np.array([0.5, 0.25, 0.25]))
    assert load_weights_file(str(tmp_path / "w.npy"), 3) == (Fraction(1, 2), Fraction(1, 4), Fraction(1, 4))
    (tmp_path / "z.csv").write_text("0,0,0\n")
    (tmp_path / "c.csv").write_text("1,-1,0\n")
    for path, reason in [(tmp_path / "z.csv", "all weights are zero"), (tmp_path / "w.npy", "3 weights for T = 4")]:
        with pytest.raises(ParameterError, match=reason) as err:
            load_weights_file(str(path), 4 if "w.npy" in str(path) else 3)
        assert err.value.parameter == "weights"
    with pytest.raises(ParameterError, match="sum to zero") as err:
        scheme_weights(f"file:{tmp_path / 'c.csv'}", 3)
    assert err.value.parameter == "weights"


def test_finite_d_attention_approaches_the_limit_like_inverse_sqrt_d():
    from verify.studies.attention_gap import weight_deviation

    # The score fluctuations <z_t, z_s>/d and ||z||^2/d - 1 have standard deviation ~ d^(-1/2) and the
    # weights are smooth in the scores, so the mean per-sequence max deviation D(d) ~ C d^(-1/2) with
    # O(d^(-1/2)) relative corrections. D is a mean over 400 sequences of a variable with coefficient
    # of variation ~ 0.6: relative standard error ~ 3%, so 4 standard errors plus the d = 64
    # correction (~ tau/8) stay within 30% of C; the fitted slope of log D on log d within 0.1 of -1/2.
    ds = [64, 256, 1024, 2048]
    for mask in ("inclusive", "strict"):
        limit = [float(x) for x in causal_weights(6, 1, mask)]
        D = np.array([weight_deviation(d, 6, 1.0, mask, limit, n=400, seed=11)["per_sequence"] for d in ds])
        scaled = D * np.sqrt(ds)
        assert scaled.max() / scaled.min() < 1.3
        slope = np.polyfit(np.log(ds), np.log(D), 1)[0]
        assert abs(slope + 0.5) < 0.1


@pytest.mark.parametrize("spec", ["markov:1e-20", "gauss:1e-30", "markov:1e-900"])
def test_the_optimum_of_a_nearly_degenerate_R_is_found_at_any_digits(spec):
    # R = I + r J + O(r^2), J the path's adjacency: its top eigenvector is J's, sin(pi k/5) normalized to sum 1, up to
    # O(r). At digits + 10 alone (16 working digits for --digits 6) the gap of about r was below the rounding:
    # w = [1, -2e-20, 1e-40, 0], "degenerate"; now the precision rises until the gap stands out
    path = [math.sin(math.pi * k / 5) for k in range(1, 5)]
    expected = [x / sum(path) for x in path]
    for digits in (6, 15, 30):
        w, note = optimal_weights(parse_signs(spec), 4, digits=digits)
        got = [float(x / sum(w)) for x in w]
        assert note is None and got == pytest.approx(expected, rel=1e-14), (digits, got)


@settings(max_examples=15, deadline=None)
@given(sign_specs(max_T=7, kinds=("markov", "gauss")))
def test_optimal_weights_for_every_family_anticorrelated_included(spec_T):
    # markov:-r and gauss:-rho at even T have an antisymmetric top eigenvector (sum exactly zero): no scale makes it
    # sum 1, so it comes at unit norm with a note; every other family's comes to sum 1. Either way alpha/kappa is
    # lambda_max(R) from LAPACK (an independent eigensolver), the optimum claim C5 states.
    spec, T = spec_T
    p = pooling("optimal", T, spec)
    R = np.array(parse_signs(spec).R(T), dtype=float)
    assert abs(float(p.alpha / p.kappa) - np.linalg.eigvalsh(R).max()) < 1e-12 * max(1, T)
    if p.note and "unit norm" in p.note:
        assert abs(p.kappa - 1) < 1e-25 and abs(p.W) < 1e-20
    else:
        assert abs(p.W - 1) < 1e-20


def test_optimal_weights_of_an_anticorrelated_family_come_at_unit_norm():
    # markov:-1/10 at T = 4: R is persymmetric and its top eigenvector antisymmetric (the refused case)
    p = pooling("optimal", 4, "markov:-1/10")
    assert "unit norm" in p.note and abs(p.kappa - 1) < 1e-25 and abs(p.W) < 1e-25
    # the model's own law takes them as scaled, not divided again by their (zero) sum: its kappa was 2.6e79
    import derive

    law = derive.bulk(derive.Model(delta="1/2", gamma="1/2", T=4, weights="optimal", signs="markov:-1/10"))
    assert abs(law.kappa - 1) < 1e-25
