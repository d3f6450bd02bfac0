"""Tests of the Monte Carlo of the model (verify.montecarlo) and of the interval and fit helpers (verify.stats).

Statistical checks compare a mean of ``n`` i.i.d. bounded terms with its exact expectation: by the
CLT the error is Gaussian with the standard error ``SE`` (exact when the variance is known, the
sample estimate otherwise), and a threshold of ``5 SE`` is crossed with probability ``5.7e-7``
per check. The seeds are fixed, so a failure is a reproducible defect, not bad luck.
"""
import math

import numpy as np
import pytest
from scipy import stats

from derive.errors import ParameterError
from derive.model.families import CATALOGUE
from derive.model.spec import parse_signs
from verify import montecarlo as sim
from verify.montecarlo import lanczos
from verify.stats import finite_size_fit, mean_ci, student_t_quantile
from tests.trial_cases import trial

SMALL = dict(d=30, V=40, N=80, T=4, signs="markov:1/2", weights=[0.4, 0.3, 0.2, 0.1], mu2=2.0)
# The agreement case of the brief: a signal outlier (rho = alpha mu2/kappa well above threshold)
# and, for the raw S, the mean outlier, then bulk-edge eigenvalues.
AGREE = dict(d=300, V=600, N=1200, T=4, signs="prefix:2", weights=[0.4, 0.3, 0.2, 0.1], mu2=4.0)
Z5 = 5.0
STRONGEST = [f"{cls.kind}:{arg}" if arg else cls.kind for cls in CATALOGUE for arg in cls.examples(5)[-2:]]
"""Every family of the catalogue at its two last examples for ``T = 5``, the most correlated."""


def _exact_R(spec, T):
    return np.array(parse_signs(spec).R(T).evalf(30), dtype=float)


def _within(mean, expected, se, what):
    assert abs(mean - expected) <= Z5 * se + 1e-12, f"{what}: {mean} vs {expected} (SE {se})"


# ---------------------------------------------------------------------------------------------
# determinism


@pytest.mark.parametrize("path", ["dense", "implicit"])
def test_same_seed_same_numbers_and_another_seed_other_numbers(path):
    a = sim.run_trial(**trial(SMALL), k=3, path=path, seed=11)
    b = sim.run_trial(**trial(SMALL), k=3, path=path, seed=11)
    c = sim.run_trial(**trial(SMALL), k=3, path=path, seed=12)
    for x, y in ((a.top_eigenvalues, b.top_eigenvalues), (a.overlaps, b.overlaps), (a.eigenvectors, b.eigenvectors)):
        np.testing.assert_array_equal(x, y)
    assert not np.array_equal(a.top_eigenvalues, c.top_eigenvalues)


def test_a_seed_sequence_gives_the_same_draw_every_time():
    case = trial(SMALL)
    model = case["model"]
    ss = np.random.SeedSequence(7)
    first, second = sim.draw(model, ss, weights=case["weights"]), sim.draw(model, ss, weights=case["weights"])
    for name in ("E", "xi", "tokens", "v0"):
        np.testing.assert_array_equal(getattr(first, name), getattr(second, name))
    assert (first.A != second.A).nnz == 0


def test_the_table_depends_on_the_seed_and_its_own_sizes_only():
    a, b = (sim.draw(case["model"], 3, weights=case["weights"])
            for case in (trial(SMALL), trial({**SMALL, "N": 500, "T": 2, "weights": [1, 1], "signs": "iid"})))
    np.testing.assert_array_equal(a.E, b.E)


def test_trial_j_does_not_depend_on_the_number_of_trials():
    five = sim.run_trials(**trial(SMALL), k=2, seeds=5, seed0=9, path="implicit")
    three = sim.run_trials(**trial(SMALL), k=2, seeds=3, seed0=9, path="implicit")
    np.testing.assert_array_equal(five.top_eigenvalues[:3], three.top_eigenvalues)
    np.testing.assert_array_equal(five.overlaps[:3], three.overlaps)
    assert five.top_eigenvalues.shape == (5, 2) and five.overlaps.shape == (5, 2) and len(five.seeds) == 5
    again = sim.run_trial(**trial(SMALL), k=2, seed=five.seeds[4], path="implicit")
    np.testing.assert_array_equal(again.top_eigenvalues, five.top_eigenvalues[4])
    assert len({tuple(r) for r in five.top_eigenvalues}) == 5


# ---------------------------------------------------------------------------------------------
# the sampling law


def test_table_is_balanced_and_the_signal_is_sqrt_mu2_s_on_the_first_coordinate():
    d, V = 12, 20
    s = sim.balanced_signs(V)
    assert (s == 1).sum() == (s == -1).sum() == V // 2
    plain = sim.sample_table(np.random.default_rng(4), d, V, 0.0)
    strong = sim.sample_table(np.random.default_rng(4), d, V, 9.0)
    np.testing.assert_array_equal(plain[1:], strong[1:])
    np.testing.assert_allclose(strong[0] - plain[0], 3.0 * s, rtol=0, atol=1e-12)
    assert strong.flags.c_contiguous and strong.dtype == np.float64


def test_tokens_lie_in_their_class_and_are_uniform_within_it():
    V, N, T = 10, 20000, 3
    s = sim.balanced_signs(V)
    xi, tokens = sim.sample_sequences(np.random.default_rng(5), parse_signs("markov:1/3"), V, N, T)
    assert xi.shape == tokens.shape == (N, T)
    np.testing.assert_array_equal(s[tokens], xi)
    # Within a class the V/2 tokens are equally likely: Pearson's chi-square of their counts; under
    # the right law its p-value is uniform, so p < 1e-6 signals a defect.
    for sign in (1, -1):
        counts = np.bincount(tokens[xi == sign], minlength=V)[s == sign]
        assert stats.chisquare(counts).pvalue > 1e-6


@pytest.mark.parametrize("spec", STRONGEST)
def test_positional_correlation_and_alpha_of_the_sampled_signs(spec):
    N, T = 20000, 5
    w = np.array([0.5, -0.2, 0.3, 0.1, 0.6])
    xi, _ = sim.sample_sequences(np.random.default_rng(6), parse_signs(spec), 8, N, T)
    x = xi.astype(float)
    R = _exact_R(spec, T)
    # xi_t xi_s = +-1 with mean R_ts: its variance is exactly 1 - R_ts^2 (zero where R_ts = +-1)
    np.testing.assert_array_less(np.abs(x.T @ x / N - R), Z5 * np.sqrt((1 - R**2) / N) + 1e-12)
    np.testing.assert_array_less(np.abs(x.mean(axis=0)), Z5 / math.sqrt(N))
    q = (x @ w) ** 2
    _within(q.mean(), w @ R @ w, q.std(ddof=1) / math.sqrt(N), f"alpha of {spec}")


def test_mixing_matrix_pools_exactly_like_the_definition():
    case = trial({**SMALL, "V": 6})
    model = case["model"]  # few tokens: repeats within a sequence are common
    data = sim.draw(model, 2, weights=case["weights"])
    direct = sum(w * data.E[:, data.tokens[:, t]] for t, w in enumerate(data.weights))
    np.testing.assert_allclose(sim.pooled(data.E, data.A), direct, rtol=0, atol=1e-12)
    assert data.A.shape == (model.V, model.N) and np.all(np.diff(data.A.indptr) <= model.T)
    assert np.diff(data.A.indptr).min() < model.T  # the duplicates were summed
    np.testing.assert_allclose(np.asarray(data.A.sum(axis=0)).ravel(), data.weights.sum(), atol=1e-14)


def test_second_moment_of_the_mixing_vectors():
    r"""E[a a^T] = (1/V)[kappa I + (W^2 - kappa) 11^T/V + (alpha - kappa) s s^T/V], and so
    E[c c^T | table] = E M E^T, through quadratic forms of the empirical (1/N) A A^T."""
    V, N, T = 40, 40000, 4
    spec, w = "markov:1/2", np.array([0.5, -0.2, 0.3, 0.4])
    R = _exact_R(spec, T)
    kappa, W, alpha = w @ w, w.sum(), w @ R @ w
    s = sim.balanced_signs(V)
    one = np.ones(V)
    M = (kappa * np.eye(V) + (W**2 - kappa) * np.outer(one, one) / V + (alpha - kappa) * np.outer(s, s) / V) / V
    rng = np.random.default_rng(8)
    xi, tokens = sim.sample_sequences(rng, parse_signs(spec), V, N, T)
    A = sim.mixing_matrix(tokens, w, V)

    # s^T a_n = sum_t w_t xi_t and 1^T a_n = W hold sample by sample
    np.testing.assert_allclose(A.T @ s, xi @ w, atol=1e-12)
    np.testing.assert_allclose(A.T @ one, W, atol=1e-12)
    assert s @ M @ s == pytest.approx(alpha) and one @ M @ one == pytest.approx(W**2)

    def check(values, expected, what):
        _within(values.mean(), expected, values.std(ddof=1) / math.sqrt(N), what)

    check((A.T @ s) ** 2, alpha, "(s^T a)^2 -> alpha")
    check(np.asarray(A.multiply(A).sum(axis=0)).ravel(), np.trace(M), "||a||^2 -> tr M")
    assert np.trace(M) == pytest.approx(kappa + (W**2 - kappa) / V + (alpha - kappa) / V)
    plus = (s > 0).astype(float)
    # 1_+^T a_n = (W + w^T xi_n)/2, whose mean square is (W^2 + alpha)/4
    assert plus @ M @ plus == pytest.approx((W**2 + alpha) / 4)
    check((A.T @ plus) ** 2, plus @ M @ plus, "(1_+^T a)^2")
    g = rng.standard_normal(V)
    check((A.T @ g) ** 2, g @ M @ g, "(g^T a)^2")
    E = sim.sample_table(rng, 10, V, 3.0)
    x = rng.standard_normal(10)
    check((x @ sim.pooled(E, A)) ** 2, x @ E @ M @ E.T @ x, "(x^T c)^2 given the table")


# ---------------------------------------------------------------------------------------------
# the two eigensolvers


def _dense_S(model, data, centered):
    C = sim.pooled(data.E, data.A)
    if centered:
        C = C - C.mean(axis=1, keepdims=True)
    return C @ C.T / model.N


@pytest.mark.parametrize("centered", [False, True])
def test_dense_and_implicit_agree_on_the_same_draw(centered):
    case = trial(AGREE)
    model = case["model"]
    data = sim.draw(model, 31, weights=case["weights"])
    dense = sim.solve(data, 3, centered, "dense", spectrum=True)
    implicit = sim.solve(data, 3, centered, "implicit")
    np.testing.assert_allclose(implicit.top_eigenvalues, dense.top_eigenvalues, rtol=1e-10, atol=0)
    # Davis-Kahan: the implicit eigenvector is within sin(theta) <= TOL*lambda/gap of the true one,
    # and a squared coordinate moves by at most 2*sqrt(2)*sin(theta); the dense one errs by ~1e-13.
    lam = dense.spectrum
    gaps = np.minimum(np.r_[np.inf, -np.diff(lam[:3])], lam[:3] - lam[1:4])
    bound = 3 * lanczos.TOL * lam[:3] / gaps + 1e-11
    np.testing.assert_array_less(np.abs(implicit.overlaps - dense.overlaps), bound)
    # the Lanczos residuals meet the tolerance against S itself
    S = _dense_S(model, data, centered)
    residual = np.linalg.norm(S @ implicit.eigenvectors - implicit.eigenvectors * implicit.top_eigenvalues, axis=0)
    np.testing.assert_array_less(residual, lanczos.TOL * implicit.top_eigenvalues * 1.01 + 1e-13)
    np.testing.assert_allclose(np.linalg.norm(implicit.eigenvectors, axis=0), 1, atol=1e-12)
    assert dense.overlaps[0] > 0.5  # the case has a signal outlier, so the overlaps are not all noise


@pytest.mark.parametrize("centered", [False, True])
def test_dense_through_the_N_by_N_gram_when_d_exceeds_N(centered):
    case = trial({**AGREE, "d": 200, "V": 400, "N": 120})
    model = case["model"]
    data = sim.draw(model, 32, weights=case["weights"])
    dense = sim.solve(data, 3, centered, "dense", spectrum=True)
    implicit = sim.solve(data, 3, centered, "implicit")
    np.testing.assert_allclose(implicit.top_eigenvalues, dense.top_eigenvalues, rtol=1e-10, atol=0)
    S = _dense_S(model, data, centered)
    U = dense.eigenvectors
    np.testing.assert_allclose(S @ U, U * dense.top_eigenvalues, atol=1e-11)
    np.testing.assert_allclose(U.T @ U, np.eye(3), atol=1e-12)
    full = dense.spectrum
    assert full.shape == (200,) and np.all(np.diff(full) <= 0)
    # S has rank N (N - 1 centered); the other eigenvalues are zero up to rounding
    rank = model.N - 1 if centered else model.N
    assert full[rank - 1] > 1e-3 and np.all(np.abs(full[rank:]) < 1e-12)
    assert full.sum() == pytest.approx(np.trace(S), rel=1e-12)


def test_auto_path_and_spectrum():
    assert sim.run_trial(**trial(SMALL), seed=1).path == "dense"
    big_square = {**SMALL, "d": 200, "V": 400, "N": 800}
    assert sim.run_trial(**trial(big_square), seed=1).path == "mixed"
    full = sim.run_trial(**trial(big_square), seed=1, spectrum=True)
    assert full.path == "dense" and full.spectrum.shape == (200,)
    runs = sim.run_trials(**trial(SMALL), seeds=2, spectrum=True)
    assert runs.spectra.shape == (2, SMALL["d"]) and runs.path == "dense"
    assert sim.run_trials(**trial(SMALL), seeds=2).spectra is None


@pytest.mark.parametrize("centered", [False, True])
def test_mixed_precision_agrees_with_dense_and_certifies_its_residuals(centered):
    case = trial(AGREE)
    model = case["model"]
    data = sim.draw(model, 33, weights=case["weights"])
    dense = sim.solve(data, 3, centered, "dense", spectrum=True)
    mixed = sim.solve(data, 3, centered, "mixed")
    # Kato-Temple with the measured residuals r: relative error <= r^2 * lambda/gap (the dense
    # eigenvalues err by ~1e-15); that bound is itself below 1e-10 here
    lam = dense.spectrum
    gaps = np.minimum(np.r_[np.inf, -np.diff(lam[:3])], lam[:3] - lam[1:4])
    bound = mixed.residuals ** 2 * lam[:3] / gaps + 1e-14
    error = np.abs(mixed.top_eigenvalues - dense.top_eigenvalues) / dense.top_eigenvalues
    np.testing.assert_array_less(error, bound)
    assert bound.max() < 1e-10
    assert mixed.path == "mixed" and np.all(mixed.residuals <= lanczos.MIXED_ACCEPT)
    S = _dense_S(model, data, centered)
    true = np.linalg.norm(S @ mixed.eigenvectors - mixed.eigenvectors * mixed.top_eigenvalues, axis=0)
    np.testing.assert_allclose(mixed.residuals, true / mixed.top_eigenvalues, rtol=1e-6, atol=1e-14)


@pytest.mark.parametrize("path", ["implicit", "mixed"])
def test_many_eigenpairs_on_the_matrix_free_paths(path):
    # k = 130 > the solver's first 65 basis rows, once a crash (writes past the end of the basis)
    case = dict(d=200, V=300, N=300, T=2, signs="iid", weights=[1.0, 1.0], mu2=1.0, k=130, seed=3)
    matrix_free, dense = sim.run_trial(**trial(case), path=path), sim.run_trial(**trial(case), path="dense")
    np.testing.assert_allclose(matrix_free.top_eigenvalues, dense.top_eigenvalues, rtol=1e-9)


def test_mixed_precision_falls_back_to_float64_when_its_residual_is_too_large(monkeypatch):
    case = trial(AGREE)
    model = case["model"]
    data = sim.draw(model, 34, weights=case["weights"])
    monkeypatch.setattr(lanczos, "MIXED_ACCEPT", 0.0)
    mixed = sim.solve(data, 3, False, "mixed")
    dense = sim.solve(data, 3, False, "dense")
    assert mixed.residuals is None
    np.testing.assert_allclose(mixed.top_eigenvalues, dense.top_eigenvalues, rtol=1e-10, atol=0)


def test_float32_table_moves_the_top_eigenvalues_by_rounding_only():
    # Rounding E to float32 changes S by about sqrt(V) * 2^-24 * ||S|| ~ 1.5e-6 relative (Weyl),
    # and the float32 tolerance 1e-5 adds at most TOL_FLOAT32^2 * lambda/gap ~ 1e-8: 1e-5 is ample.
    single = sim.run_trial(**trial(AGREE), path="implicit", dtype=np.float32, seed=5)
    double = sim.run_trial(**trial(AGREE), path="implicit", seed=5)
    np.testing.assert_allclose(single.top_eigenvalues, double.top_eigenvalues, rtol=1e-5)
    assert single.eigenvectors.dtype == np.float64


def test_progress_goes_to_stderr_only_when_asked(capsys):
    sim.run_trials(**trial(SMALL), seeds=2, progress=True)
    out = capsys.readouterr()
    assert out.out == "" and "2/2 trials" in out.err
    sim.run_trials(**trial(SMALL), seeds=2, progress=False)
    assert capsys.readouterr().err == ""


# ---------------------------------------------------------------------------------------------
# bad input


@pytest.mark.parametrize("change, parameter", [
    ({"d": 0}, "d"), ({"d": 2.5}, "d"), ({"d": True}, "d"), ({"V": 41}, "V"), ({"N": -3}, "N"),
    ({"T": 0}, "T"), ({"mu2": -1}, "mu2"), ({"mu2": float("nan")}, "mu2"), ({"mu2": float("inf")}, "mu2"),
    ({"weights": [1, 2, 3]}, "weights"), ({"weights": [0, 0, 0, 0]}, "weights"),
    ({"weights": [1, float("nan"), 0, 0]}, "weights"), ({"weights": "mean"}, "weights"), ({"weights": 3}, "weights"),
    ({"signs": "bogus"}, "signs"), ({"signs": "prefix:9"}, "signs"), ({"k": 0}, "k"), ({"k": 30}, "k"),
    ({"path": "fast"}, "path"), ({"seed": -1}, "seed"), ({"seed": 1.5}, "seed"),
    ({"spectrum": True, "path": "implicit"}, "spectrum"), ({"dtype": np.float16}, "dtype"),
    ({"dtype": np.float32, "path": "dense"}, "dtype"), ({"dtype": np.float32, "path": "mixed"}, "dtype"),
    ({"spectrum": True, "path": "mixed"}, "spectrum"),
])
def test_bad_trial_input_names_the_parameter(change, parameter):
    with pytest.raises(ParameterError) as err:
        sim.run_trial(**trial({**SMALL, "k": 3, **change}))
    assert err.value.parameter == parameter


@pytest.mark.parametrize("change, parameter", [
    ({"seeds": 0}, "seeds"), ({"seeds": 2.0}, "seeds"), ({"seed0": -1}, "seed0"), ({"V": 7}, "V"), ({"k": 80}, "k"),
])
def test_bad_run_input_names_the_parameter(change, parameter):
    with pytest.raises(ParameterError) as err:
        sim.run_trials(**trial({**SMALL, **change}))
    assert err.value.parameter == parameter


# ---------------------------------------------------------------------------------------------
# verify.stats


def test_mean_ci_is_student_t_and_infinite_for_one_seed():
    x = np.random.default_rng(1).standard_normal(12)
    mean, lo, hi = mean_ci(x)
    half = stats.t.ppf(0.975, 11) * x.std(ddof=1) / math.sqrt(12)
    # scipy's quantile (another method) is good to about 1e-13 relative, ours to 1e-15
    assert (lo, hi) == pytest.approx((mean - half, mean + half), rel=1e-12)
    assert mean_ci([0.3]) == (0.3, -math.inf, math.inf)
    for bad, parameter in (([], "values"), ([1.0, float("nan")], "values")):
        with pytest.raises(ParameterError) as err:
            mean_ci(bad)
        assert err.value.parameter == parameter
    with pytest.raises(ParameterError):
        mean_ci([1.0, 2.0], level=1.5)


@pytest.mark.parametrize("nu", [1, 2, 2.5, 5, 11, 40, 73.8, 1000, 10**6])
def test_student_t_quantile_is_scipys(nu):
    # the quantiles the ledger uses: 95% intervals, the Bonferroni level 1 - 0.05/28 (two-sided), the power 0.8 of
    # min_detectable; non-integer nu are the Welch-Satterthwaite degrees of freedom of a Richardson extrapolation
    for p in (0.55, 0.8, 0.975, 1 - 0.05 / 56, 1 - 1e-7):
        assert student_t_quantile(p, nu) == pytest.approx(stats.t.ppf(p, nu), rel=1e-11)
    assert student_t_quantile(0.5, nu) == 0.0
    for bad in ((0.4, nu), (1.0, nu), (0.9, 0), (0.9, -1.5), (0.9, float("nan")), (0.9, True)):
        with pytest.raises(ParameterError):
            student_t_quantile(*bad)


def test_finite_size_fit_recovers_a_rate_within_its_standard_error():
    # log-normal noise of known sigma on C d^-1/2 over a geometric ladder: the least-squares slope
    # is Gaussian around 1/2 with exactly the standard error the fit estimates (up to the estimate of sigma)
    ds = 100 * 2.0 ** np.arange(8)
    noise = np.exp(0.05 * np.random.default_rng(2).standard_normal(8))
    fit = finite_size_fit(ds, 2.0 * ds**-0.5 * noise)
    assert abs(fit.rate - 0.5) <= Z5 * fit.rate_se
    assert fit.rate_ci95[0] < fit.rate < fit.rate_ci95[1] and fit.prefactor > 0
    two = finite_size_fit([10, 20], [1.0, 0.25])
    assert two.rate == pytest.approx(2.0) and two.rate_se == math.inf
    for ds_, errs, parameter in (([10, 20], [1.0], "errors"), ([10, 10], [1.0, 2.0], "d"),
                                 ([-1, 2], [1.0, 1.0], "d"), ([1, 2], [0.0, 1.0], "errors")):
        with pytest.raises(ParameterError) as err:
            finite_size_fit(ds_, errs)
        assert err.value.parameter == parameter
