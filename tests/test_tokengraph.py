"""The rank of the token matrix and the atom at zero of the model's spectrum (derive/vocabulary/limit/tokengraph.py):
the closed forms at T' = 1 and 2, and Monte Carlo ranks for several T, weights and sign families."""
import mpmath
import numpy as np
import pytest
import sympy as sp

from derive.model.pooling import pooling
from derive.vocabulary.limit.populations import PoissonPopulation
from derive.vocabulary.limit.silverstein import GeneralizedMP
from derive.vocabulary.limit.tokengraph import atom_at_zero, rank_fraction
from tests.trial_cases import model as trial_model
from verify.montecarlo.draw import draw, rung
from verify.stats import mean_ci

Q = sp.Rational


@pytest.mark.parametrize("d,g", [(1, 1), (Q(1, 4), 1), (2, Q(1, 3))])
def test_one_nonzero_weight_is_the_tokens_seen_at_least_once(d, g):
    lam = Q(d) / Q(g)
    with mpmath.workdps(30):
        expected = (1 - mpmath.exp(-mpmath.mpf(lam.p) / lam.q)) / (mpmath.mpf(lam.p) / lam.q)
        assert abs(rank_fraction(d, g, [1]) - expected) < mpmath.mpf(10) ** -28
        assert abs(rank_fraction(d, g, [0, 1, 0]) - expected) < mpmath.mpf(10) ** -28
        # the same atom as the T = 1 law's (derive/vocabulary/limit/silverstein.py), derived from the population instead
        assert abs(atom_at_zero(d, g, [1]) - GeneralizedMP(Q(d), PoissonPopulation(lam)).atom_at_zero()) < 1e-28


@pytest.mark.parametrize("lam", [Q(1, 4), Q(1), Q(3)])  # not c = 1, where the series converges like k^(-3/2)
def test_two_nonzero_weights_count_the_tree_components(lam):
    # T' = 2: A is the incidence matrix of a random multigraph on V vertices with N edges, mean degree c = 2N/V.
    # A tree component of k vertices has rank k - 1, the rest full rank (odd cycles; unicyclic components are
    # O(1) in number), so rank/V = 1 - (tree components)/V = 1 - sum_k k^(k-2) c^(k-1) e^(-ck)/k! (Cayley's
    # formula), summed here term by term: an independent count.
    c = 2 * lam
    with mpmath.workdps(30):
        cm = mpmath.mpf(c.p) / c.q
        trees = mpmath.nsum(lambda k: mpmath.exp((k - 2) * mpmath.log(k) + (k - 1) * mpmath.log(cm) - cm * k
                                                 - mpmath.loggamma(k + 1)), [1, mpmath.inf])
        rank_over_V = rank_fraction(lam, 1, [1, 1]) * mpmath.mpf(lam.p) / lam.q
        assert abs(rank_over_V - (1 - trees)) < mpmath.mpf(10) ** -25


@pytest.mark.parametrize("T,scheme,signs,dl,gm", [
    (2, "mean", "iid", 1, 1),
    (3, "mean", "iid", 1, 1),
    (3, "causal-inclusive", "markov:1/2", Q(1, 2), Q(1, 2)),  # unequal weights 11/18, 5/18, 1/9
    (8, "causal", "prefix:3", 1, 2),      # strict mask: w_8 = 0, T' = 7
    (2, "mean", "prefix:2", Q(1, 2), 1),  # both tokens of a sequence in one class
])
def test_rank_of_sampled_token_matrices(T, scheme, signs, dl, gm):
    # rank A/V over 4 draws at d = 600 against lambda (1 - Phi*): the fluctuation is O(V^-1/2) (the tree
    # components are counts) and the finite-size bias O(1/V) (cycles); allowed: the 99.9% interval plus 2/V.
    # The intervals are about +-0.005 wide: a formula off by 1% of the rank would fail.
    p = pooling(scheme.split("-")[0], T, signs, mask="strict" if scheme == "causal" else None)
    w = p.floats()
    d = 600
    V, N = rung(d, dl, gm)
    model = trial_model(d, V, N, T, signs)
    fractions = []
    for seed in range(4):
        A = draw(model, seed, weights=w).A.toarray()
        ev = np.linalg.eigvalsh(A @ A.T if V <= N else A.T @ A)
        fractions.append(np.sum(ev > 1e-9 * ev.max()) / V)
    with mpmath.workdps(15):
        predicted = float(rank_fraction(dl, gm, p.weights) * N / V)
    mean, lo, hi = mean_ci(fractions, 0.999)
    assert lo - 2 / V <= predicted <= hi + 2 / V


def test_zero_eigenvalues_of_s_at_t2():
    # the atom of S itself: T = 2, mean weights, delta = gamma = 1, derived 0.16190 (the issue measured 16%)
    with mpmath.workdps(15):
        atom = float(atom_at_zero(1, 1, [Q(1, 2), Q(1, 2)]))
    assert abs(atom - 0.161902559473) < 1e-11
    d = 600
    V, N = rung(d, 1, 1)
    model = trial_model(d, V, N, 2, "iid")
    fractions = []
    for seed in range(4):
        data = draw(model, seed, weights=[0.5, 0.5])
        C = (data.A.T @ data.E.T)
        ev = np.linalg.eigvalsh(C.T @ C / N)
        fractions.append(np.sum(ev <= 1e-9 * ev.max()) / d)
    mean, lo, hi = mean_ci(fractions, 0.999)
    assert lo - 2 / d <= atom <= hi + 2 / d
