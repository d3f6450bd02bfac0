"""The moments of the model's own bulk law for any weights (derive/vocabulary/limit/walks.py): one nonzero weight against the
exact T = 1 law, symbolic weights against numbers, the moments of D against traces of sampled token matrices, and
the quadrature bounds of the Stieltjes transform against laws known in closed form. (The cavity against these
moments: tests/test_cavity.py; the moments of S against sampled spectra: the slow test below.)"""
import mpmath
import numpy as np
import pytest
import scipy.sparse as sps
import sympy as sp
from sympy.functions.combinatorial.numbers import stirling

from derive.errors import ParameterError
from derive.symbols import delta, gamma
from derive.vocabulary.limit import tokenreuse, walks
from derive.vocabulary.limit.populations import PoissonPopulation
from derive.vocabulary.limit.silverstein import GeneralizedMP
from verify.montecarlo.draw import mixing_matrix
from verify.montecarlo.quadrature import token_draw
from verify.stats import mean_ci
from tests.trial_cases import model as trial_model

Q = sp.Rational


def test_one_nonzero_weight_gives_the_token_count_law():
    # T' = 1: D is diagonal with entries w^2 n/lambda, n ~ Poisson(lambda): E n^k = sum_j S(k, j) lambda^j (Touchard,
    # Stirling numbers of the second kind); S's moments are those of tokenreuse's free-cumulant route
    w = sp.Symbol("w", positive=True)
    D = walks.token_matrix_moments([w], 6)
    lam = delta / gamma
    poisson = [sum(stirling(k, j) * lam ** (j - k) for j in range(k + 1)) for k in range(7)]
    assert [sp.expand(a - w ** (2 * k) * b) for k, (a, b) in enumerate(zip(D, poisson))] == [0] * 7
    S = walks.bulk_moments([0, 1, 0], 4)
    assert [sp.expand(a - b) for a, b in zip(S[1:], tokenreuse.bulk_moments("T=1", 4))] == [0] * 4


def test_symbolic_weights_agree_with_numbers_and_with_one_weight():
    w1, w2 = sp.symbols("w_1 w_2", positive=True)
    symbolic = walks.token_matrix_moments([w1, w2], 5)
    numbers = walks.token_matrix_moments([Q(3, 4), Q(1, 4)], 5)
    at = walks.token_matrix_moments([Q(3, 4), Q(1, 4)], 5, at=("1/2", 3))
    one = walks.token_matrix_moments([w1], 5)
    for k in range(6):
        assert sp.simplify(symbolic[k].subs({w1: Q(3, 4), w2: Q(1, 4)}) - numbers[k]) == 0
        assert numbers[k].subs({delta: Q(1, 2), gamma: 3}) == at[k]
        assert sp.simplify(symbolic[k].subs(w2, 0) - one[k]) == 0


def _trace_moments(V, N, w, seed, n):
    """:math:`\\frac1V\\operatorname{tr}D^k`, ``k = 1..n`` (``n <= 6``), of one sampled ``D`` (sparse products)."""
    A = mixing_matrix(*token_draw(V, N, w, seed), V)
    D = (A @ A.T).tocsr() * (V / N)
    powers = [sps.identity(V, format="csr"), D]
    while len(powers) <= (n + 1) // 2:
        powers.append(powers[-1] @ D)
    return np.array([powers[k // 2].multiply(powers[k - k // 2].T).sum() / V for k in range(1, n + 1)])


def test_moments_of_D_against_traces_of_sampled_token_matrices():
    # T = 2, weights (3/4, 1/4), delta = gamma = 1, V = N = 50000, 8 draws: (1/V) tr D^k is an average over tokens of
    # local walk counts; the draws' mean must lie within its 99.9% Student-t interval (t_7 = 5.41 standard errors,
    # which include the token graph's O(V^-1/2) fluctuation) of the limit. The finite-V bias (cycles and repeated
    # tokens) is O(1/V): for m_1 it is 2 w_1 w_2 / V = 7.5e-6, 0.03 of the interval. The half-widths are below 1% of
    # m_2 and m_3 (0.7% measured) and 5% of m_6 (4.4%): an error of 1% in m_2 or m_3, 5% in m_6, would be seen.
    w, V, n = [0.75, 0.25], 50000, 6
    exact = [float(m) for m in walks.token_matrix_moments([Q(3, 4), Q(1, 4)], n, at=(1, 1))[1:]]
    sampled = np.array([_trace_moments(V, V, w, seed, n) for seed in range(8)])
    widths = []
    for k in range(1, n):
        mean, lo, hi = mean_ci(sampled[:, k], 0.999)
        assert lo <= exact[k] <= hi, (k + 1, exact[k], mean, lo, hi)
        widths.append((hi - lo) / 2 / exact[k])
    assert max(widths[:2]) < 0.01 and widths[-1] < 0.05


def test_gauss_and_radau_bracket_closed_form_laws():
    # Marchenko-Pastur of ratio 1 (Catalan moments): m(-a) = (sqrt(a^2 + 4a) - a)/(2a) lies between the Gauss and the
    # Gauss-Radau rules, and the bracket narrows with more moments; the T = 1 law (exact, silverstein.py) at complex
    # points within the Gauss rule's Hermite remainder bound, from walks' moments
    catalan = [1, 1, 2, 5, 14, 42, 132, 429, 1430, 4862, 16796]
    for a in (Q(1, 4), 1, 3):
        exact = float((-a + sp.sqrt(a * a + 4 * a)) / (2 * a))
        widths = []
        for n in (6, 8, 10):
            lo, hi = walks.stieltjes_bounds(catalan[:n + 1], a)
            assert lo <= exact <= hi
            widths.append(hi - lo)
        assert widths[2] < widths[1] < widths[0]
    law = GeneralizedMP(Q(1), PoissonPopulation(Q(1)))
    moments = walks.bulk_moments([1], 8, at=(1, 1))
    with mpmath.workdps(20):
        for zv in (-2 + 2j, -1 + 1j, 1 + 3j, -4 + 0.5j):
            value, bound = walks.stieltjes_gauss(moments, zv)
            assert abs(value - complex(law.stieltjes(zv))) <= bound < 0.1 * abs(value)


def test_bad_input():
    with pytest.raises(ParameterError, match="weights"):
        walks.token_matrix_moments([0, 0], 4)
    with pytest.raises(ParameterError, match="n"):
        walks.token_matrix_moments([1], walks.MAX_ORDER + 1)
    with pytest.raises(ParameterError, match="at"):
        walks.token_matrix_moments([1], 3, at=(0, 1))
    with pytest.raises(ParameterError, match="a"):
        walks.stieltjes_bounds([1, 1, 2], -1)
    with pytest.raises(ParameterError, match="z"):
        walks.stieltjes_gauss([1, 1, 2], 2.0)
    with pytest.raises(ParameterError, match="moments"):
        walks.stieltjes_bounds([1, 1, 1, 1, 1], 1)   # a point mass: no 2-point rule


@pytest.mark.slow
@pytest.mark.parametrize("T,scheme,mask", [(2, "mean", None), (4, "causal", None), (8, "causal", "strict")])
def test_moments_of_S_against_sampled_spectra(T, scheme, mask):
    # raw S without signal (mu2 = 0), delta = gamma = 1, dense eigenvalues of the model's own pipeline, 8 seeds at
    # d = 500 and 1000: (1/d) sum lambda^k has a finite-size bias C/d (the real Gaussian table's 1/d pairings, e.g.
    # delta m_2(D)/d in m_2; repeated tokens and Binomial counts, e.g. (1 - kappa)/V in m_1: 0.3% of m_1 and 0.5% of
    # m_2 at d = 1000, T = 4 causal, beyond the seeds' interval), which Richardson's extrapolation 2 m(1000) - m(500)
    # removes. walks' exact moments, k = 1..6, must lie within its 99% Student-t interval (Welch): half-widths 0.5%
    # (m_1) to 20% (m_6).
    from derive.model.pooling import pooling
    from verify.montecarlo.draw import rung
    from verify.montecarlo.trials import run_trials
    from verify.stats import Estimate, richardson

    p = pooling(scheme, T, None, mask=mask)
    exact = [float(m) for m in walks.bulk_moments(p.weights, 6, at=(1, 1))[1:]]
    estimates = []
    for d in (1000, 500):
        V, N = rung(d, 1, 1)
        r = run_trials(trial_model(d, V, N, T, "iid"), weights=p.floats(), seeds=8, spectrum=True, path="dense",
                       progress=False)
        moments = np.array([[np.mean(ev**k) for k in range(1, 7)] for ev in r.spectra])
        estimates.append([Estimate(float(c.mean()), float(c.std(ddof=1) / np.sqrt(len(c))), len(c) - 1)
                          for c in moments.T])
    for k in range(6):
        e = richardson(estimates[0][k], estimates[1][k], 2)
        assert abs(e.value - exact[k]) <= e.half_width(0.99), (k + 1, exact[k], e)
        assert e.half_width(0.99) < 0.25 * exact[k]
