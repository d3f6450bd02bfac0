"""The outlier theory: classical limits, thresholds, invariants, and the exact population covariance."""
import mpmath
import numpy as np
import pytest
import sympy as sp
from hypothesis import given, strategies as st

from derive import outliers as O
from derive import spikes as S
from derive.commands.spike import spike
from derive.errors import ParameterError
from tests.strategies import ratios, rationals
from verify.montecarlo.population import population_covariance

d_, g_, k_, th = S.delta, S.gamma, S.kappa, S.theta


def test_population_outlier_meets_the_bulk_edge_at_the_threshold():
    edge = k_ * (1 + sp.sqrt(d_)) ** 2  # MP right edge: classical, independent of the derivation
    at = S.population_outlier_location().subs(th, S.population_threshold())
    assert sp.simplify(at - edge) == 0
    assert sp.simplify(S.population_overlap().subs(th, S.population_threshold())) == 0


def test_gamma_zero_is_the_population_level():
    assert sp.simplify(S.sample_outlier_location().subs(g_, 0) - S.population_outlier_location()) == 0
    assert sp.simplify(S.sample_overlap_factor().subs(g_, 0)) == 1


def test_delta_zero_is_bbp_with_pauls_overlap():
    # Baik-Ben Arous-Peche location and Paul's overlap for a spike theta on kappa I.
    bbp = (th + k_) * (th + g_ * k_) / th
    paul = (1 - g_ * k_**2 / th**2) / (1 + g_ * k_ / th)
    assert sp.simplify(S.sample_outlier_location().subs(d_, 0) - bbp) == 0
    assert sp.simplify((S.population_overlap() * S.sample_overlap_factor()).subs(d_, 0) - paul) == 0
    with mpmath.workdps(30):
        assert mpmath.almosteq(O.sample_threshold(0, mpmath.mpf(9) / 16, 2), 2 * mpmath.mpf(3) / 4, 1e-25)


@given(ratios, ratios, rationals(low=1, high=4, max_denominator=20))
def test_sample_threshold_is_never_easier_and_overlap_vanishes_there(delta, gamma, kappa):
    with mpmath.workdps(40):
        dl, gm, kp = (mpmath.mpf(x.p) / x.q for x in (delta, gamma, kappa))
        pop = kp * (dl + mpmath.sqrt(dl))
        smp = O.sample_threshold(dl, gm, kp)
        assert smp > pop
        assert abs(O.sample_overlap(smp, dl, gm, kp)) < mpmath.mpf(10) ** -30
        # just above the threshold the sample outlier sits right of the population one's image
        assert O.sample_overlap(smp * (1 + mpmath.mpf(10) ** -6), dl, gm, kp) > 0


@given(ratios, ratios, rationals(low=1, high=3, max_denominator=10), st.lists(rationals(low=0, high=6, max_denominator=20), min_size=2, max_size=2))
def test_overlaps_in_unit_interval_and_nondecreasing_in_mu2(delta, gamma, alpha, mus):
    lo, hi = sorted(mus)
    a = spike(delta, gamma, alpha, "1/2", lo, digits=20)
    b = spike(delta, gamma, alpha, "1/2", hi, digits=20)
    for level in ("population", "sample"):
        oa, ob = mpmath.mpf(a[level]["overlap"]), mpmath.mpf(b[level]["overlap"])
        assert 0 <= oa <= ob <= 1
        assert a[level]["outlier"] == (a[level]["eigenvalue"] is not None)
    assert mpmath.mpf(a["sample"]["overlap"]) <= mpmath.mpf(a["population"]["overlap"])


@given(ratios, ratios, rationals(low=0, high=5, max_denominator=20))
def test_outlier_present_iff_beyond_the_right_edge(delta, gamma, mu2):
    doc = spike(delta, gamma, "3/8", "1/8", mu2, digits=25)
    for level, edge in (("population", "population_right_edge"), ("sample", "right_edge")):
        eig = doc[level]["eigenvalue"]
        if doc[level]["outlier"]:
            assert mpmath.mpf(eig) > mpmath.mpf(doc["bulk"][edge])
        else:
            assert eig is None and doc[level]["overlap"] == "0"


@given(ratios, ratios, rationals(low=0, high=4, max_denominator=20), rationals(low=1, high=3, max_denominator=10))
def test_scaling_the_weights_scales_eigenvalues_and_keeps_overlaps(delta, gamma, mu2, c):
    base = spike(delta, gamma, "1/4", "1/8", mu2, sum_w=1, digits=25)
    scaled = spike(delta, gamma, c**2 / 4, c**2 / 8, mu2, sum_w=c, digits=25)
    with mpmath.workdps(30):
        for level in ("population", "sample"):
            assert base[level]["outlier"] == scaled[level]["outlier"]
            if base[level]["outlier"]:
                ratio = mpmath.mpf(scaled[level]["eigenvalue"]) / mpmath.mpf(base[level]["eigenvalue"])
                assert mpmath.almosteq(ratio, mpmath.mpf(c.p) ** 2 / c.q**2, 1e-22)
            assert mpmath.almosteq(mpmath.mpf(base[level]["overlap"]), mpmath.mpf(scaled[level]["overlap"]), 1e-22)


@given(ratios, ratios, rationals(low=0, high=5, max_denominator=50))
def test_30_and_60_digits_agree_to_25(delta, gamma, mu2):
    a = spike(delta, gamma, "1/3", "1/6", mu2, digits=30)
    b = spike(delta, gamma, "1/3", "1/6", mu2, digits=60)
    for level in ("population", "sample"):
        for key in ("eigenvalue", "overlap", "mu2_critical"):
            x, y = a[level][key], b[level][key]
            assert (x is None) == (y is None)
            if x is not None:
                assert mpmath.almosteq(mpmath.mpf(x), mpmath.mpf(y), rel_eps=1e-25, abs_eps=1e-40)


@pytest.mark.parametrize("name, value", [("delta", "0"), ("delta", "-1"), ("gamma", "-1/2"), ("kappa", "0"),
                                         ("alpha", "-1"), ("mu2", "nan"), ("mu2", "inf"), ("sum_w", "x")])
def test_bad_input_names_the_parameter(name, value):
    args = {"delta": "1/2", "gamma": "1/4", "alpha": "1/4", "kappa": "1/8", "mu2": "1", "sum_w": "1"}
    args[name] = value
    with pytest.raises(ParameterError) as err:
        spike(**args)
    assert err.value.parameter == name


@pytest.mark.parametrize("delta, alpha, kappa, W, mu2", [
    (0.5, 0.3, 0.125, 1.0, 1.5),   # signal and mean outliers both present
    (0.25, 0.5, 0.25, 0.6, 0.8),   # mean spike below threshold: one outlier only
    (1.5, 0.4, 0.1, 1.0, 2.0),     # delta > 1
])
def test_population_outliers_against_the_exact_covariance_of_sampled_tables(delta, alpha, kappa, W, mu2):
    # No sampling of sequences: the covariance given the table is exact, only the table is random.
    # Outlier eigenvalues fluctuate by O(d^{-1/2}) across tables (about 0.02 here at d = 1200,
    # measured spread); with 4 tables, 4 standard errors of the mean plus an O(1/d) bias margin.
    d = 1200
    V = int(round(d / delta)) // 2 * 2
    rng = np.random.default_rng(7)
    doc = spike(str(delta), "0", str(alpha), str(kappa), str(mu2), sum_w=str(W), digits=20)
    expected = sorted([float(doc["population"]["eigenvalue"])]
                      + [float(o["eigenvalue"]) for o in doc["other_outliers"] if o["level"] == "population"],
                      reverse=True)
    eigs, overlaps = [], []
    for _ in range(4):
        ev, U = np.linalg.eigh(population_covariance(rng, d, V, alpha, kappa, W, mu2))
        k = len(expected)
        eigs.append(ev[::-1][:k])
        overlaps.append((U[0, ::-1][:k] ** 2).sum())  # overlap shared among the outliers
    eigs = np.array(eigs)
    assert ev[::-1][len(expected)] < float(doc["bulk"]["population_right_edge"]) + 0.05
    tol = 4 * eigs.std(axis=0, ddof=1) / 2 + 5 / d
    assert np.all(np.abs(eigs.mean(axis=0) - expected) < tol)
    se = np.std(overlaps, ddof=1) / 2
    # The overlap is biased low by O(1/d): about 20/d over the ladder d = 500, 1000, 2000 (notes/spikes.md).
    assert abs(np.mean(overlaps) - float(doc["population"]["overlap"])) < 4 * se + 30 / d


@given(ratios, ratios, rationals(low=1, high=4, max_denominator=20))
def test_sample_bulk_edge_agrees_with_the_discriminant_of_the_bulk_law(delta, gamma, kappa):
    # Two independent routes: the critical value of psi here, the discriminant of the cubic in derive.bulk.
    from derive.bulk import support

    intervals, _ = support(delta, gamma, kappa)
    right = sp.N(intervals[-1][1], 40)
    doc = spike(delta, gamma, "1", kappa, "0", digits=30)
    assert mpmath.almosteq(mpmath.mpf(doc["bulk"]["right_edge"]), mpmath.mpf(str(right)), rel_eps=1e-27)


def test_irrational_alpha_of_the_gauss_family_is_accepted_at_full_precision():
    # gauss:rho gives R entries (2/pi) asin(rho): alpha is a real expression, not a rational;
    # it used to be refused as 'not a finite number', which broke verify mc for that family
    alpha = sp.Rational(1, 2) + sp.asin(sp.Rational(1, 10)) / sp.pi
    exact = spike("1/2", "1/4", alpha, "1/2", 3, digits=40)
    close = spike("1/2", "1/4", sp.Rational(sp.N(alpha, 80)), "1/2", 3, digits=40)
    assert exact == close and exact["sample"]["outlier"]
    with pytest.raises(ParameterError, match="alpha"):
        spike("1/2", "1/4", sp.sqrt(-1), "1/2", 3)
