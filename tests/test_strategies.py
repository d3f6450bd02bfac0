"""The installed strategies: keyword-only and validated, valid draws, and the hard regions reached."""
import mpmath
import pytest
import sympy as sp
from hypothesis import HealthCheck, Phase, find, given, settings

from derive.errors import ParameterError
from derive.gaussian.outliers import critical_mu2, sample_threshold
from derive.model.realizable import realizing_mixture
from verify import strategies as S

# generation only: finding one example in the region is the point, shrinking it would only cost time
QUICK = settings(max_examples=200, database=None, deadline=None, suppress_health_check=list(HealthCheck),
                 phases=[Phase.generate])


def test_every_public_strategy_is_keyword_only():
    with pytest.raises(TypeError):
        S.rationals(0, 1)
    with pytest.raises(TypeError):
        S.sign_specs(4)
    with pytest.raises(TypeError):
        S.weights(3)


@pytest.mark.parametrize("call, parameter", [
    (lambda: S.rationals(low=1, high=0), "high"),
    (lambda: S.rationals(low="abc", high=1), "low"),
    (lambda: S.ratios(low=-1), "low"),
    (lambda: S.scales(low=0), "low"),
    (lambda: S.lengths(max_T=0), "max_T"),
    (lambda: S.sign_specs(kinds=("iid", "bogus")), "kinds"),
    (lambda: S.correlation_matrices(T=13), "T"),
    (lambda: S.weights(T=0), "T"),
    (lambda: S.causal_cases(max_T=1), "max_T"),
    (lambda: S.spike_scalars(centered="yes"), "centered"),
    (lambda: S.spike_scalars(level="bulk"), "level"),
    (lambda: S.model_configs(schemes=("mean", "file:w.csv")), "schemes"),
    (lambda: S.model_configs(max_T=65), "max_T"),
    (lambda: S.quantity_points("nope"), "quantity"),
])
def test_bad_arguments_name_their_parameter(call, parameter):
    with pytest.raises(ParameterError) as info:
        call()
    assert info.value.parameter == parameter


@settings(max_examples=30, deadline=None)
@given(S.correlation_matrices(max_T=5))
def test_every_correlation_matrix_drawn_is_certified_realizable(case):
    R, T = case
    if all(x.is_Rational for x in R):
        patterns, masses = realizing_mixture(R)
        assert sum(masses) == 1 and R.shape == (T, T)
    else:  # gauss:rho, (2/pi) arcsin of a correlation: realized by the signs of a Gaussian vector
        assert all(x.is_Rational or x.has(sp.asin) for x in R)


def test_the_hard_regions_are_reached():
    find(S.ratios(), lambda g: g > 1, settings=QUICK)
    find(S.sign_specs(), lambda c: c[1] == 64, settings=QUICK)
    find(S.correlation_matrices(T=4), lambda c: c[0][0, 1] not in (0, 1) and c[0][0, 3] != c[0][1, 2], settings=QUICK)

    def near_sample_threshold(p):
        with mpmath.workdps(40):
            c = critical_mu2(sample_threshold(p["delta"], p["gamma"], p["kappa"]), p["alpha"], p["delta"])
            return c > 0 and 0 < abs(p["mu2"] - c) < mpmath.mpf(10) ** -6 * c
    find(S.spike_scalars(), near_sample_threshold, settings=QUICK)
    for centered in (True, False):
        find(S.model_configs(max_T=4, schemes=("mean",)), lambda c: c["centered"] is centered and c["gamma"] > 1,
             settings=QUICK)
    config = find(S.model_configs(max_T=4, schemes=("causal",)), lambda c: c["mask"] == "strict", settings=QUICK)
    assert config["T"] >= 2 and config["pooling"].alpha >= 0


@settings(max_examples=20, deadline=None)
@given(S.quantity_points("sample.overlap", where="gamma>1"))
def test_quantity_points_lie_where_the_outlier_exists(p):
    from derive.gaussian.outliers import outliers_at
    from derive.symbols import alpha, delta, gamma, kappa, mu2
    assert p[gamma] > 1 and all(isinstance(v, sp.Rational) for v in p.values())
    with mpmath.workdps(30):
        assert outliers_at(p[delta], p[gamma], p[alpha], p[kappa], p[mu2]).sample.outlier
