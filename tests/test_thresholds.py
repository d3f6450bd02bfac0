"""The precision contract at the thresholds: every real that ``derive spike`` reports is right to ``--digits``
even within 1e-25 (relative) of a threshold, where the overlap cancels as many digits as the distance has
and the outlier's existence hangs on the sign of a difference that small (the issue's case: at its own
30-digit mu2_critical, sample.overlap was right to 16 digits).

Reference: the same derived functions at 250 digits (a distance of 1e-40 costs 40 of them). The check
detects any error above one unit in the 30th significant digit, and a wrong outlier decision."""
import mpmath
from hypothesis import given, settings
from hypothesis.strategies import integers, sampled_from

from derive.report.documents import spike
from derive.gaussian.outliers import outliers_at

from strategies import near_thresholds, ratios, scales

DIGITS = 30


def _reals(doc: dict, prefix=""):
    for key, value in doc.items():
        if isinstance(value, dict):
            yield from _reals(value, f"{prefix}{key}.")
        elif isinstance(value, str) and key != "assumptions":
            yield f"{prefix}{key}", value


def _check(kwargs):
    got = spike(**kwargs, digits=DIGITS)
    with mpmath.workdps(250):
        ref = outliers_at(kwargs["delta"], kwargs["gamma"], kwargs["alpha"], kwargs["kappa"], kwargs["mu2"],
                          sum_w=kwargs["sum_w"], centered=kwargs["centered"])
        exact = {"population": ref.population, "sample": ref.sample}
        for name, level in exact.items():
            assert got[name]["outlier"] == level.outlier, name
            assert (got[name]["eigenvalue"] is None) == (level.eigenvalue is None), name
            pairs = [("overlap", level.overlap), ("mu2_critical", level.mu2_critical), ("eigenvalue", level.eigenvalue)]
            for field, true in pairs:
                if true is not None:
                    reported = mpmath.mpf(got[name][field])
                    assert abs(reported - true) <= mpmath.mpf(10) ** (1 - DIGITS) * abs(true), (name, field, reported, true)
        assert len(got["other_outliers"]) == len(ref.other_outliers)
        for entry, true in zip(got["other_outliers"], ref.other_outliers):
            reported = mpmath.mpf(entry["eigenvalue"])
            assert abs(reported - true.eigenvalue) <= mpmath.mpf(10) ** (1 - DIGITS) * abs(true.eigenvalue)
        for field, true in (("right_edge", ref.right_edge), ("population_right_edge", ref.population_right_edge)):
            assert abs(mpmath.mpf(got["bulk"][field]) - true) <= mpmath.mpf(10) ** (1 - DIGITS) * abs(true)


@settings(max_examples=40, deadline=None)
@given(near_thresholds())
def test_every_real_is_right_to_its_digits_within_1e_25_of_a_threshold(case):
    kwargs, _ = case
    _check(kwargs)


def test_the_issue_case_at_its_own_30_digit_critical_mu2():
    base = {"delta": "1/2", "gamma": "1/4", "alpha": "7/32", "kappa": "1/8", "sum_w": 1, "centered": False}
    critical = spike(**base, mu2="3/2", digits=DIGITS)["sample"]["mu2_critical"]
    import sympy as sp

    _check({**{k: sp.Rational(v) if isinstance(v, str) else v for k, v in base.items()}, "mu2": sp.Rational(critical)})


@settings(max_examples=8, deadline=None)
@given(delta=ratios, gamma=ratios, kappa=scales, exponent=integers(25, 40), side=sampled_from([-1, 1]),
       edge_index=integers(0, 1))
def test_the_bulk_density_is_right_to_its_digits_within_1e_25_of_an_edge(delta, gamma, kappa, exponent, side,
                                                                         edge_index):
    # the density vanishes like a square root at a soft edge: 1e-25 away it is about 1e-12 of its bulk size,
    # and all of its 30 digits must still be right (reference: the same law at 200 digits)
    import sympy as sp

    from derive.gaussian import bulk

    law = bulk.law(delta, gamma, kappa)
    edges = [e for interval in law.support for e in interval if e != 0]  # 0 is an atom's end, not a soft edge
    edge = edges[edge_index % len(edges)]
    x = sp.Rational(sp.N(edge, 80)) * (1 + side * sp.Rational(1, 10) ** exponent)
    got = bulk.density(law.delta, law.gamma, law.kappa, [x], DIGITS)[0]
    true = bulk.density(law.delta, law.gamma, law.kappa, [x], 200)[0]
    with mpmath.workdps(250):
        assert abs(mpmath.mpf(got) - mpmath.mpf(true)) <= mpmath.mpf(10) ** (1 - DIGITS) * abs(mpmath.mpf(true))
