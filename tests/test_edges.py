"""Numerical edge cases: hard edges, extreme ratios, T = 1 and T = 1000, mu2 = 0, thresholds.

The outlier invariants checked at every point (the contract of ``derive spike``):
``outlier`` false iff ``eigenvalue`` is null and ``overlap`` is 0; ``outlier`` true implies an
eigenvalue above the bulk's right edge and, for ``mu2 > 0``, ``0 < overlap <= 1`` (at ``mu2 = 0``
there is no signal direction and the overlap with it is 0 even when the noise term ``Z s/V``
makes an outlier).
"""
from __future__ import annotations

import json

import mpmath
import pytest
import sympy as sp

from derive.gaussian import bulk
from derive.model.attention import causal_weights, mean_weights
from derive.model.pooling import scheme_weights
from derive.cli import main as derive_main
from derive.errors import ParameterError
from derive.model.spec import parse_signs
from derive.report.documents import spike
from verify.strategies import SCHEMES

R = sp.Rational
mp = mpmath.mpf
DIGITS = 40
EXTREMES = [R(1), R(1, 10**6), R(10**6)]


def check_level(doc: dict, level: str, mu2) -> None:
    lev = doc[level]
    edge = mp(doc["bulk"]["right_edge" if level == "sample" else "population_right_edge"])
    if not lev["outlier"]:
        assert lev["eigenvalue"] is None and mp(lev["overlap"]) == 0
        return
    assert mp(lev["eigenvalue"]) > edge
    overlap = mp(lev["overlap"])
    assert (0 < overlap <= 1) if mu2 > 0 else overlap == 0


@pytest.mark.parametrize("delta", EXTREMES)
@pytest.mark.parametrize("gamma", EXTREMES + [R(0)])
@pytest.mark.parametrize("mu2", [R(0), R(3, 2), R(10**7)])
def test_outlier_invariants_at_extreme_ratios(delta, gamma, mu2):
    with mpmath.workdps(DIGITS):
        doc = spike(delta, gamma, R(1, 8), R(1, 4), mu2, digits=DIGITS)
        for level in ("population", "sample"):
            check_level(doc, level, mu2)
        # the sample level cannot see an outlier the population level does not have
        assert doc["population"]["outlier"] or not doc["sample"]["outlier"]


@pytest.mark.parametrize("delta", EXTREMES + [R(1, 2)])
@pytest.mark.parametrize("gamma", [R(1), R(1, 10**6), R(10**6), R(1, 4), R(0)])
@pytest.mark.parametrize("level", ["population", "sample"])
def test_the_outlier_is_born_continuously_at_its_threshold(delta, gamma, level):
    # alpha < kappa keeps mu2_critical > 0 at both levels, so the threshold is crossed by mu2
    alpha, kappa = R(1, 8), R(1, 4)
    crit = R(spike(delta, gamma, alpha, kappa, 1, digits=DIGITS)[level]["mu2_critical"])
    assert crit > 0
    eps = R(1, 10**12)
    edge_key = "right_edge" if level == "sample" else "population_right_edge"
    below = spike(delta, gamma, alpha, kappa, crit * (1 - eps), digits=DIGITS)
    above = spike(delta, gamma, alpha, kappa, crit * (1 + eps), digits=DIGITS)
    farther = spike(delta, gamma, alpha, kappa, crit * (1 + 2 * eps), digits=DIGITS)
    assert not below[level]["outlier"] and above[level]["outlier"]
    with mpmath.workdps(DIGITS):
        check_level(above, level, 1)
        edge = mp(above["bulk"][edge_key])
        # the overlap vanishes linearly and the eigenvalue meets the edge quadratically in mu2 - mu2_c
        # (d eig/d theta = 0 there): a step of 1e-12 moves them by O(1e-12) and O(1e-24)
        o1, o2 = mp(above[level]["overlap"]), mp(farther[level]["overlap"])
        assert 0 < o1 < 1e-9 and abs(o2 / o1 - 2) < 1e-6
        assert 0 < mp(above[level]["eigenvalue"]) / edge - 1 < 1e-18


def test_mu2_critical_is_zero_when_the_noise_term_alone_makes_the_outlier():
    # alpha * delta above theta_c: an outlier even at mu2 = 0, with no overlap with the (absent) signal
    doc = spike(1, R(1, 4), 4, R(1, 4), 0, digits=DIGITS)
    assert doc["population"]["mu2_critical"] == "0" and doc["population"]["outlier"]
    check_level(doc, "population", 0)


@pytest.mark.parametrize("scheme", SCHEMES)
def test_T_1_has_the_single_weight_1(scheme):
    w, _ = scheme_weights(scheme, 1, parse_signs("iid"))
    assert w == [1]


def test_T_1_with_the_strict_mask_is_refused():
    with pytest.raises(ParameterError, match="T"):
        causal_weights(1, 0, "strict")


@pytest.mark.parametrize("mask", ["inclusive", "strict"])
def test_T_1000_causal_weights_are_exact_positive_decreasing_and_sum_to_one(mask):
    w = causal_weights(1000, 0, mask)
    assert sum(w) == 1 and all(x.is_Rational for x in w)
    assert all(a > b for a, b in zip(w, w[1:] if mask == "inclusive" else w[1:-1]))
    assert w[-1] > 0 if mask == "inclusive" else w[-1] == 0


def test_T_1000_on_the_command_line():
    import contextlib
    import io
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert derive_main(["weights", "--weights", "mean", "--T", "1000", "--json", "--digits", "5"]) == 0
    doc = json.loads(out.getvalue())
    assert doc["exact"] == ["1/1000"] * 1000 and doc["kappa"] == "0.001"
    assert mean_weights(1000) == [R(1, 1000)] * 1000


@pytest.mark.slow
def test_T_1000_alpha_with_a_sign_family():
    # R of T = 1000 was built by a million sympy substitutions (minutes); now a few seconds
    import contextlib
    import io
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert derive_main(["weights", "--weights", "mean", "--T", "1000", "--signs", "prefix:10", "--json"]) == 0
    # mean pooling on prefix:L: alpha = (L^2 + T - L)/T^2
    assert abs(R(json.loads(out.getvalue())["alpha"]) - R(100 + 990, 1000**2)) < R(1, 10**32)


# ----------------------------------------------------------------------------------------------
# the density near its edges

def _density(params, xs, digits=30):
    return bulk.density(*params, xs, digits=digits)


SOFT = [(R(1, 2), R(1, 4), R(1, 8)), (R(3), R(1, 3), R(1)), (R(1, 10**6), R(2), R(1)), (R(10**6), R(1, 2), R(1))]


@pytest.mark.parametrize("params", SOFT)
def test_density_vanishes_like_a_square_root_at_every_soft_edge(params):
    L = bulk.law(*params)
    for a, b in L.support:
        for edge, inward in ((a, 1), (b, -1)):
            if edge == 0:
                continue
            e = R(str(sp.N(edge, 60)))  # 60 digits: 1e-50 relative from the algebraic edge
            # the grid spacing is 1e-8 of the distance to the nearest other feature (the other edge, 0)
            h = R(str(sp.N(min(b - a, e), 30))) / 10**8
            inside = [e + inward * j * h for j in range(1, 41)]
            outside = [e - inward * j * h for j in range(1, 6)]
            rho = _density(params, inside)
            assert all(v == 0 for v in _density(params, outside))
            with mpmath.workdps(30):
                assert all(v > 0 for v in rho)
                # rho ~ c sqrt(dist) (1 + O(dist/feature)): over 40 steps the scaled values agree to
                # about 4e-7 times a constant of order 1-100; a branch jump would break this by O(1)
                c = [v / mpmath.sqrt(mp(j * h)) for j, v in enumerate(rho, 1)]
                assert max(c) / min(c) - 1 < 1e-4
                # the jump bound of a square root on this grid: |rho_{j+1} - rho_j| <= c_max sqrt(h)
                assert all(abs(u - v) <= max(c) * mpmath.sqrt(mp(h)) for u, v in zip(rho, rho[1:]))
            # a hair (1e-12 relative) inside and outside
            hair = e * R(1, 10**12)
            assert _density(params, [e + inward * hair])[0] > 0 and _density(params, [e - inward * hair])[0] == 0


@pytest.mark.parametrize("params, exponent", [((R(1), R(1, 2), R(1)), R(-1, 2)), ((R(1, 3), R(1), R(1)), R(-1, 2)),
                                              ((R(1), R(1), R(1)), R(-2, 3))])
def test_density_diverges_integrably_at_the_hard_edge(params, exponent):
    # delta = 1 or gamma = 1 puts an MP factor's hard edge at 0: rho ~ x^(-1/2) (one factor) or
    # x^(-2/3) (both: the Fuss-Catalan law), measured here as a log-log slope far inside the edge
    L = bulk.law(*params)
    assert L.hard_edge and L.atom_at_zero == 0
    with pytest.raises(ParameterError, match="x"):
        _density(params, [0])
    xs = [R(1, 10**k) for k in (30, 31)]
    with mpmath.workdps(30):
        r1, r2 = _density(params, xs)
        slope = mpmath.log(r2 / r1) / mpmath.log(mp(xs[1]) / mp(xs[0]))
        assert abs(slope - mp(exponent.p) / exponent.q) < 1e-8
        # no float underflow in the first guess at a point far below double precision
        assert mpmath.isfinite(_density(params, ["1e-400"], 15)[0])


@pytest.mark.parametrize("params", [(R(10**12), R(1, 10**6), R(1)), (R(1, 10**12), R(1, 10**12), R(1)),
                                    (R(1, 10**6), R(10**12), R(1))])
def test_bulk_law_at_the_documented_limits_has_mass_one_and_mean_kappa(params):
    # C1's law has mean kappa (S-transforms multiply, so means do: 1 * 1) and total mass 1;
    # the quadrature is tanh-sinh at 20 digits, split where the density changes fast
    L = bulk.law(*params)
    with mpmath.workdps(20):
        mass = mean = mp(0)
        for a, b in L.support:
            a, b = mp(sp.N(a, 25)), mp(sp.N(b, 25))
            pts = [a + (b - a) * mp(t) for t in ("0", "1e-6", "1e-3", "0.1", "0.5", "0.9", "0.999", "0.999999", "1")]
            f = lambda x: _density(params, [x], 15)[0]  # noqa: E731
            mass += mpmath.quad(f, pts)
            mean += mpmath.quad(lambda x: x * f(x), pts)
        assert abs(mass + L.atom_at_zero - 1) < 1e-12
        assert abs(mean / params[2] - 1) < 1e-12


@pytest.mark.parametrize("kappa", [R(1, 10**30), R(10**30)])
def test_kappa_at_its_limits_is_an_exact_scale(kappa):
    base = (R(1, 2), R(1, 4))
    xs = [R(k, 20) for k in range(1, 12)]
    ref = _density((*base, 1), xs)
    got = _density((*base, kappa), [x * kappa for x in xs])
    with mpmath.workdps(30):
        assert all(abs(g * mp(kappa) - r) <= mp(10) ** -28 * r for g, r in zip(got, ref))
    scaled = [sp.N(e * kappa, 40) for iv in bulk.law(*base, 1).support for e in iv]
    direct = [sp.N(e, 40) for iv in bulk.law(*base, kappa).support for e in iv]
    assert all(abs(u - v) <= abs(v) * sp.Float(10, 40) ** -35 for u, v in zip(scaled, direct))


@pytest.mark.parametrize("params", [(R(10**6), R(10**6), 1), (R(10**13), R(1), 1), (R(1), R(1), R(10**31)), (R(1, 10**13), R(1), 1)])
def test_bulk_parameters_beyond_the_limits_are_refused(params):
    with pytest.raises(ParameterError, match="delta|gamma|kappa"):
        bulk.law(*params)
