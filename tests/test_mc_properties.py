"""The derived outliers against Monte Carlo of the model, with the power of each comparison.

Every comparison is :func:`verify.comparison.compare_sample`: control-variate estimates at ``d`` and ``d/4``,
Richardson's extrapolation (finite-size bias ``C/d + O(d^-2)``), and agreement at a Bonferroni level over the
quantities the test compares. No allowance is added for the bias: it is extrapolated away. Each test states the
smallest relative error it detects (with probability 0.8) and asserts that it is small enough to catch an error
of 5% in a formula.
"""
import mpmath
import pytest
import sympy as sp
from hypothesis import assume, given, settings

from derive.model import pooling as attention_pooling
from derive.errors import ParameterError
from derive.gaussian import outliers as O
from derive.gaussian.outliers import outliers_at
from verify.comparison import compare_sample
from verify.ledger.checks.common import pool, resolves

from tests.strategies import mc_cases

EXAMPLES = 8
LEVEL = 1 - 0.05 / (3 * EXAMPLES)
D, TRIALS = 400, 32


def _pooling(scheme, T, spec):
    try:
        return attention_pooling.pooling(scheme, T, spec)
    except ParameterError:
        # R's top eigenvector can sum to zero (markov:r < 0 at even T): no sum-1 normalization
        assume(False)


@settings(max_examples=EXAMPLES)
@given(mc_cases())
def test_outliers_match_the_derived_limits_across_the_parameter_space(case):
    spec, T, delta, gamma, strength, scheme, centered = case
    p = _pooling(scheme, T, spec)
    # the derived outliers are those of the Gaussian-equivalent law, which the model follows when each pooled
    # vector spreads over several tokens (1/kappa >= 3) that are each reused several times (N T / V >= 4);
    # outside, the finite vocabulary shows
    assume(p.alpha > 0 and 1 / p.kappa >= 3 and T * delta / gamma >= 4)
    with mpmath.workdps(30):
        threshold = outliers_at(delta, gamma, p.alpha, p.kappa, 0, centered=True).sample.threshold
        target = strength * threshold / mpmath.mpf(sp.N(p.alpha, 40)) - mpmath.mpf(delta.p) / delta.q
        mu2 = max(sp.Rational(mpmath.nstr(target, 6)), sp.Rational(1, 4))
        assume(mu2 <= 50)
        o = outliers_at(delta, gamma, p.alpha, p.kappa, mu2, sum_w=p.W, centered=centered)
    if not centered:
        # the vocabulary-mean outlier too must sit outside the critical window of its threshold (or be clearly
        # absent), and two outliers closer than the spread of either mix their eigenvectors at finite d
        mean_strength = O.mean_strength(p.W, delta) / o.sample.threshold
        assume(mean_strength >= strength or mean_strength <= 1 / strength)
        mean = [x for x in o.other_outliers if x.level == "sample"]
        assume(not mean or abs(mean[0].eigenvalue / o.sample.eigenvalue - 1) > 0.25)
    out = compare_sample(D, delta, gamma, T, spec, p, mu2, centered=centered, trials=TRIALS, seed0=7, level=LEVEL)
    assert out["predicted_outlier"]
    for name, q in out["quantities"].items():
        assert q["agree"], (name, q["predicted"], q["extrapolated"], q["ci"])


@pytest.mark.parametrize("scheme, delta, gamma, mu2, centered, scale", [
    ("optimal", 1, sp.Rational(1, 2), 3, True, 1),
    # raw S with weights summing to 2: the vocabulary-mean outlier (strength W^2 delta = 2) below the signal's
    ("causal", sp.Rational(1, 2), sp.Rational(1, 4), 3, False, 2),
])
def test_a_five_percent_error_in_an_outlier_or_its_overlap_would_be_seen(scheme, delta, gamma, mu2, centered, scale):
    out = compare_sample(D, delta, gamma, 8, "prefix:3", pool(scheme), mu2, centered=centered, trials=48, seed0=11,
                         level=1 - 0.05 / 5, scale=scale)
    assert out["agree"], out["quantities"]
    # detecting 2.5% with probability 0.8 means detecting 5% with probability above 0.999
    assert resolves(out, {"eigenvalue": 0.025, "overlap": 0.025, "absent_overlap": 0}), out["min_detectable_rel_error"]
