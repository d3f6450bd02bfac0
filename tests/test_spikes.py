"""The outlier theory: classical limits, thresholds, invariants, and the exact population covariance."""
import types

import mpmath
import pytest
import sympy as sp
from hypothesis import given, strategies as st

from derive.gaussian import outliers as O
from derive.gaussian import spikes as S
from derive.report.documents import spike
from derive.errors import ParameterError
from tests.strategies import ratios, rationals
from verify.comparison import compare_population
from verify.ledger.checks.common import resolves

d_, g_, k_, th = S.delta, S.gamma, S.kappa, S.theta


def test_population_outlier_meets_the_bulk_edge_at_the_threshold():
    edge = k_ * (1 + sp.sqrt(d_)) ** 2  # MP right edge: classical, independent of the derivation
    at = S.population_outlier_location().subs(th, S.population_threshold())
    assert sp.simplify(at - edge) == 0
    assert sp.simplify(S.population_overlap().subs(th, S.population_threshold())) == 0


def _mp_stieltjes(delta, kappa, z, power=1):
    r""":math:`\int dH(x)/(x - z)^p` for :math:`H = \kappa\,\mathrm{MP}_\delta`, by quadrature of the Marchenko-Pastur
    density (and its atom at 0 when delta > 1): independent of the polynomial method of derive."""
    a, b = kappa * (1 - mpmath.sqrt(delta)) ** 2, kappa * (1 + mpmath.sqrt(delta)) ** 2
    rho = lambda x: mpmath.sqrt((b - x) * (x - a)) / (2 * mpmath.pi * delta * kappa * x)  # noqa: E731
    value = mpmath.quad(lambda x: rho(x) / (x - z) ** power, [a, b])
    return value + (max(0, 1 - 1 / delta) / (-z) ** power if delta > 1 else 0)


@pytest.mark.parametrize("delta, gamma, kappa, theta", [(0.5, 0.25, 0.125, 0.4), (2, 0.5, 1, 6), (0.3, 1.5, 2, 5)])
def test_the_numeric_outliers_follow_from_the_population_stieltjes_transform(delta, gamma, kappa, theta):
    # The derivation's route, taken numerically: ell solves 1 + theta m_H(ell) = 0, psi = ell(1 - gamma - gamma ell
    # m_H(ell)), zeta = 1/(theta^2 m_H'(ell)), and the sample eigenvector keeps ell psi'(ell)/psi of it (psi' by
    # numerical differentiation in ell). Compared with derive.gaussian.outliers' compiled functions, which went through SymPy.
    with mpmath.workdps(30):
        dl, gm, kp, th_ = (mpmath.mpf(x) for x in (delta, gamma, kappa, theta))
        edge = kp * (1 + mpmath.sqrt(dl)) ** 2
        # 1 + theta m_H rises from below 0 at the edge (theta above threshold) to 1 at infinity: bracket it
        ell = mpmath.findroot(lambda z: 1 + th_ * _mp_stieltjes(dl, kp, z), (edge * (1 + mpmath.mpf(10) ** -8),
                                                                               edge + 10 * (th_ + kp)), solver="anderson")
        psi = lambda z: z * (1 - gm - gm * z * _mp_stieltjes(dl, kp, z))  # noqa: E731
        zeta = 1 / (th_**2 * _mp_stieltjes(dl, kp, ell, 2))
        factor = ell * mpmath.diff(psi, ell) / psi(ell)
        for got, expected in ((O.population_outlier(th_, dl, kp), ell), (O.sample_outlier(th_, dl, gm, kp), psi(ell)),
                              (O.population_overlap(th_, dl, kp), zeta),
                              (O.sample_overlap(th_, dl, gm, kp), zeta * factor)):
            assert mpmath.almosteq(got, expected, rel_eps=1e-12), (got, expected)
        # and the whole chain through outliers_at, for the signal term of strength theta = alpha (mu2 + delta)
        alpha = th_ / (dl + 1)  # mu2 = 1
        o = O.outliers_at(dl, gm, alpha, kp, 1, centered=True)
        assert mpmath.almosteq(o.sample.overlap, zeta * factor / (1 + dl), rel_eps=1e-12)
        assert mpmath.almosteq(o.sample.eigenvalue, psi(ell), rel_eps=1e-12)


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
    ("1/2", "3/5", "1/8", "1", "3/2"),     # signal and mean outliers both present, signal on top
    ("1/2", "3/10", "1/8", "3/2", "3/2"),  # W = 3/2: the mean outlier on top, strength W^2 delta (not W delta)
    ("1/4", "1/2", "1/4", "3/5", "4/5"),   # mean spike below threshold: one outlier only
    ("3/2", "4/5", "1/10", "1", "2"),      # delta > 1
    # (two outliers closer than their spread mix their eigenvectors at finite d: the cases keep them apart)
])
def test_population_outliers_against_the_exact_covariance_of_sampled_tables(delta, alpha, kappa, W, mu2):
    # No sampling of sequences: the covariance given the table is exact, only the table is random. Control-variate
    # means at d = 400 and 100, Richardson's extrapolation (bias C/d), a Bonferroni level over the 4 cases and their
    # at most 3 quantities; no allowance.
    pooling = types.SimpleNamespace(alpha=sp.Rational(alpha), kappa=sp.Rational(kappa), W=sp.Rational(W))
    out = compare_population(400, sp.Rational(delta), pooling, mu2, tables=24, seed0=7, level=1 - 0.05 / 12,
                             centered=False)
    assert out["predicted_outlier"] and out["agree"], out["quantities"]
    # where no mean outlier is derived, the mean direction's overlap with the top eigenvectors must vanish: resolved
    # to the ledger's 0.02 (a mean outlier just above its threshold already has overlap O(1))
    assert resolves(out, {"eigenvalue": 0.02, "overlap": 0.05, "absent_overlap": 0.02})


@given(ratios, ratios, rationals(low=1, high=4, max_denominator=20))
def test_sample_bulk_edge_agrees_with_the_discriminant_of_the_bulk_law(delta, gamma, kappa):
    # Two independent routes: the critical value of psi here, the discriminant of the cubic in derive.gaussian.bulk.
    from derive.gaussian.bulk import support

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
