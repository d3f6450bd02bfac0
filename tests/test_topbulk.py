"""The top of the model's bulk at T = 1 (derive/vocabulary/limit/topbulk.py): the eigenvalue of a token seen k times
against its large-count expansion from the Poisson moments, the law of the largest count against sampled counts, the
probability that the signal stays on top against the model's own token counts, and (slow)
the top eigenvalue and the signal's place on top against Monte Carlo of the model on a ladder of d."""
import mpmath
import numpy as np
import pytest
import sympy as sp

from derive.vocabulary.limit.populations import PoissonPopulation
from derive.vocabulary.limit.silverstein import GeneralizedMP
from derive.vocabulary.limit.signal import signal_outlier
from derive.vocabulary.limit.topbulk import (first_count_above, max_count_cdf, signal_on_top_probability,
                                             token_eigenvalue, top_of_bulk)


def _law(delta, gamma):
    return GeneralizedMP(delta, PoissonPopulation(sp.Rational(delta) / sp.Rational(gamma)))


@pytest.mark.parametrize("delta,gamma", [("1", "1"), ("1/4", "1"), ("1/2", "1/4"), ("4", "1")])
def test_token_eigenvalue_has_the_large_count_expansion(delta, gamma):
    # psi(c) = c + (1/delta) sum_j p_j c_j c/(c - c_j) = c + sum_n E[c_j^{n+1}]/(delta c^n): with E tau = 1,
    # E tau^2 = 1 + 1/lam, E tau^3 = 1 + 3/lam + 1/lam^2 (Poisson moments, written here by hand) the first three
    # terms leave O(c^-3): the remainder must fall about 8-fold from k = 40 to 80. A wrong sum (the spike's own
    # atom kept, a term of the population dropped, c_k off by one count) leaves O(1) or O(1/c)
    d, g = sp.Rational(delta), sp.Rational(gamma)
    lam = d / g
    L = _law(delta, gamma)

    def remainder(k):
        c = g * k
        three = c + 1 + d * (1 + 1 / lam) / c + d**2 * (1 + 3 / lam + 1 / lam**2) / c**2
        with mpmath.workdps(30):
            return abs(float(token_eigenvalue(L, k)) - float(three))

    assert remainder(80) < remainder(40) / 6


def test_largest_count_law_against_sampled_counts():
    # P(M = m) of V = 1000 Poisson(1) counts from the formula against 4000 sampled maxima: each probability within
    # 4.5 binomial standard errors (at most 0.036), so an error of the formula by 0.04 in any m is seen
    with mpmath.workdps(15):
        r = top_of_bulk(_law("1", "1"), 1000)
    rng = np.random.default_rng(5)
    M = rng.poisson(1.0, size=(4000, 1000)).max(axis=1)
    for m, p in r["counts"].items():
        if p > 1e-3:
            f = np.mean(M == m)
            assert abs(f - p) <= 4.5 * np.sqrt(p * (1 - p) / 4000), (m, f, p)
    assert abs(M.mean() - r["mean_count"]) < 4.5 * M.std() / np.sqrt(4000)


def test_signal_on_top_probability_against_the_models_token_counts():
    # delta = 1/2, gamma = 1, mu2 = 3, d = 2000: the signal is on top iff no token is seen k* = 5 times or more.
    # The model draws N = 2000 tokens uniformly from V = 4000 (multinomial counts; the formula Poissonizes them):
    # 20000 sampled draws, within 4 binomial standard errors (0.014). A formula 5% off (0.025) is seen; the
    # Poissonization's own error was measured at 0.2 standard errors
    L = _law("1/2", "1")
    with mpmath.workdps(20):
        ell = signal_outlier(L, 3).eigenvalue
        p = float(signal_on_top_probability(L, ell, 2000))
    rng, V, N, n = np.random.default_rng(1), 4000, 2000, 20000
    hits = 0
    for _ in range(n // 1000):
        ids = rng.integers(V, size=(1000, N)) + np.arange(1000)[:, None] * V
        counts = np.bincount(ids.ravel(), minlength=1000 * V).reshape(1000, V)
        hits += int((counts.max(axis=1) < 5).sum())
    assert abs(hits / n - p) <= 4 * np.sqrt(p * (1 - p) / n), (hits / n, p)


@pytest.mark.slow
def test_top_eigenvalue_follows_the_most_used_token_on_a_ladder():
    # T = 1, delta = gamma = 1: the mean top eigenvalue of S_c against E psi(c_M) within its 99% interval, and
    # given the draw's own M within 0.6 on average (measured 0.50, 0.33, 0.32, 0.19 at d = 250, 500, 1000, 2000;
    # the next count's eigenvalue is about 1 away); the Gaussian equivalent's right edge 6.75 lies below
    from verify.studies.top_of_bulk import bulk_top_ladder

    rows = bulk_top_ladder(1, 1, [500, 2000], [12, 8], seed0=3)
    for r in rows:
        assert r["mean_abs_top_minus_psi"] < 0.6
        lo, hi = r["ci95"]
        half = (hi - lo) / 2 * 2.58 / 1.96  # the Student-t 95% interval widened to about 99%
        assert abs(r["mc_top"] - r["predicted_top"]) <= half
    assert rows[-1]["predicted_top"] > 6.75 + 0.5


@pytest.mark.slow
def test_signal_leaves_the_top_as_d_grows():
    # delta = 1/2, gamma = 1, mu2 = 3: the outlier (6.268) sits below the eigenvalue of a token seen 5 times; the
    # fraction of draws with no such token against exp(-V P(n >= 5)) (0.918 at d = 250, 0.502 at d = 2000) within
    # 2.58 binomial standard errors
    from verify.studies.top_of_bulk import recovery_ladder

    rec = recovery_ladder("1/2", 1, "3", [250, 2000], [40, 24], seed0=9)
    assert rec["k_star"] == 5
    for r in rec["rows"]:
        p = r["signal_on_top_predicted"]
        assert abs(r["signal_on_top_mc"] - p) <= 2.58 * np.sqrt(p * (1 - p) / r["seeds"]) + 1 / r["seeds"]
    with mpmath.workdps(15):
        assert float(signal_on_top_probability(_law("1/2", "1"), rec["outlier"], 10**6)) < 1e-20


def test_the_largest_count_and_signal_on_top_laws_are_the_poisson_distribution_function():
    # both are P(n <= m)^V of independent Poisson counts: here from scipy's Poisson distribution function, another
    # implementation, to 1e-12 relative (the sampled tests above resolve 0.04 and 5%, and a 1% error had passed them)
    from scipy.stats import poisson

    L = _law("1/2", "1")
    with mpmath.workdps(20):
        ell = signal_outlier(L, 3).eigenvalue
        k = first_count_above(L, ell)
        on_top = float(signal_on_top_probability(L, ell, 2000))
        largest = [float(max_count_cdf(L, m, 1000)) for m in (2, 3, 4, 6)]
    lam = 0.5  # delta/gamma
    assert on_top == pytest.approx(poisson.cdf(k - 1, lam) ** 4000, rel=1e-12)
    assert largest == pytest.approx([poisson.cdf(m, lam) ** 1000 for m in (2, 3, 4, 6)], rel=1e-12)
