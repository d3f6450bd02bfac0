"""The finite vocabulary's bulk moments (derive/vocabulary/limit/tokenreuse.py), each against an independent route: series of the
Poisson law, Narayana numbers, the polynomial method. (Monte Carlo of the model at T = 1 is the C1 ledger check's.)"""
import math

import mpmath
import pytest
import sympy as sp

from derive.gaussian import freeprob
from derive.vocabulary.limit import tokenreuse


def _narayana_moments(c, n):
    """Moments of the Marchenko-Pastur law of ratio ``c``: :math:`m_k = \\sum_j N(k, j) c^{j-1}`, Narayana numbers."""
    return [sp.Integer(1)] + [sum(sp.Rational(math.comb(k, j) * math.comb(k, j - 1), k) * c ** (j - 1)
                                  for j in range(1, k + 1)) for k in range(1, n + 1)]


@pytest.mark.parametrize("lam", [sp.Rational(1, 3), sp.Rational(7, 2)])
def test_token_count_moments_are_the_poisson_series(lam):
    got = tokenreuse.token_count_moments(lam, 5)
    with mpmath.workdps(30):
        lm = mpmath.mpf(lam.p) / lam.q
        for k in range(6):
            # the terms fall faster than 4^-n past n = 200 for these rates: the tail is below 1e-100
            series = mpmath.fsum(n**k * mpmath.exp(-lm) * lm**n / mpmath.factorial(n) for n in range(200))
            assert mpmath.almosteq(mpmath.mpf(sp.N(got[k], 40)), series / lm**k, rel_eps=1e-25)


@pytest.mark.parametrize("c", [sp.Rational(1, 2), sp.Integer(1), sp.Rational(5, 3)])
def test_wishart_moments_are_narayana(c):
    assert [sp.simplify(a - b) for a, b in zip(tokenreuse.wishart_moments(c, 6), _narayana_moments(c, 6))] == [0] * 7


def test_free_cumulants_give_the_known_moment_sequences():
    # a point mass (only k1), the semicircle (only k2: Catalan numbers at even orders), free Poisson (Narayana)
    assert tokenreuse.moments_from_free_cumulants([3, 0, 0, 0], 4) == [1, 3, 9, 27, 81]
    assert tokenreuse.moments_from_free_cumulants([0, 1, 0, 0, 0, 0], 6) == [1, 0, 1, 0, 2, 0, 5]
    lam = sp.Rational(2, 3)
    got = tokenreuse.moments_from_free_cumulants([lam] * 5, 5)
    # free Poisson of rate lam is lam * MP of ratio 1/lam
    assert [sp.simplify(a - lam**k * b) for k, (a, b) in enumerate(zip(got, _narayana_moments(1 / lam, 5)))] == [0] * 6


def test_the_claimed_law_moments_agree_with_the_polynomial_method():
    from derive.gaussian.freeprob import kappa

    poly = freeprob.moments(freeprob.bulk_polynomial(), 4)
    for k, m in enumerate(tokenreuse.bulk_moments("claimed"), 1):
        assert sp.simplify(m - poly[k].subs(kappa, 1)) == 0
