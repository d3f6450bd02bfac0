"""C1's verdict rule driven through each of its four outcomes by stubbed evidence, and the C1 check itself at a tiny
size (T = 1 only: the exact law, no cavity solver).

Each stub is the smallest evidence that should reach one branch; the test checks the verdict and that a corrected
statement comes with "corrected" only.
"""
import copy

import pytest

from verify.ledger.checks.c1 import check_c1, rule_c1

_EVIDENCE = {
    "symbolic": {"first_three_agree": True, "fourth_moment_excess": "delta*gamma**2"},
    "histograms": {"T=1 mean": {"gaussian_pass": False, "model_pass": True, "model_cdf_error": 0.0,
                                "min_detectable_rel_error": {"ks": 0.02}},
                   "T=2 mean": {"gaussian_pass": False, "model_pass": True, "model_cdf_error": 0.003,
                                "min_detectable_rel_error": {"ks": 0.02}}},
    "ladder_T1": {"rows": [{"d": 500}, {"d": 1000}, {"d": 2000}], "model_flat": True, "gaussian_growth": 4.0,
                  "growth_split": 2.0},
}


def _ev():
    return copy.deepcopy(_EVIDENCE)


def _hist(ev, **fields):
    for h in ev["histograms"].values():
        h.update(fields)
    return ev


def _check(outcome, verdict):
    assert outcome["verdict"] == verdict, outcome
    assert outcome["reason"]
    assert ("corrected" in outcome) == (verdict == "corrected")
    if verdict == "corrected":
        assert "Silverstein" in outcome["corrected"]


def test_c1_corrected_when_the_claimed_law_is_off_and_the_model_law_holds():
    _check(rule_c1(_ev()), "corrected")


def test_c1s_reason_names_the_T_weights_and_d_each_part_rests_on():
    # beside C9's "every histogram's distance decays" (T = 8, d = 100 and 400) the failing histograms read as a
    # contradiction until their T and d were named
    ev = _ev()
    for (key, h), T in zip(ev["histograms"].items(), (1, 2)):
        h.update(T=T, weights="mean", d=600, delta="1", gamma="1")
    ev["ladder_T1"].update(T=1, weights="mean", delta="1", gamma="1")
    reason = rule_c1(ev)["reason"]
    assert "histograms fail (T = 1 and 2 with mean weights at d = 600, delta = 1, gamma = 1)" in reason
    assert "ladder (T = 1 with mean weights at d = 500, 1000 and 2000, delta = 1, gamma = 1)" in reason


def test_c1_confirmed_when_moments_histograms_and_ladder_agree():
    ev = _hist(_ev(), gaussian_pass=True)
    ev["symbolic"]["fourth_moment_excess"] = "0"
    ev["ladder_T1"]["gaussian_growth"] = 1.1
    _check(rule_c1(ev), "confirmed")


@pytest.mark.parametrize("spoil", ["moment", "histogram", "ladder"])
def test_c1_off_by_any_one_sign(spoil):
    """Each sign alone makes the claimed law off (here with the model's law holding: corrected)."""
    ev = _hist(_ev(), gaussian_pass=True)
    ev["symbolic"]["fourth_moment_excess"] = "0"
    ev["ladder_T1"]["gaussian_growth"] = 1.1
    if spoil == "moment":
        ev["symbolic"]["fourth_moment_excess"] = "delta*gamma**2"
    elif spoil == "histogram":
        ev["histograms"]["T=2 mean"]["gaussian_pass"] = False
    else:
        ev["ladder_T1"]["gaussian_growth"] = 3.0
    _check(rule_c1(ev), "corrected")


def test_c1_refuted_when_the_model_law_fails_a_histogram():
    ev = _ev()
    ev["histograms"]["T=2 mean"]["model_pass"] = False
    _check(rule_c1(ev), "refuted")


def test_c1_refuted_when_the_model_ladder_is_not_flat():
    ev = _ev()
    ev["ladder_T1"]["model_flat"] = False
    _check(rule_c1(ev), "refuted")


@pytest.mark.parametrize("spoil", ["missing", "short ladder", "no histogram", "vague law"])
def test_c1_inconclusive(spoil):
    ev = _ev()
    if spoil == "missing":
        del ev["ladder_T1"]
    elif spoil == "short ladder":
        ev["ladder_T1"]["rows"] = ev["ladder_T1"]["rows"][:2]
    elif spoil == "no histogram":
        ev["histograms"] = {}
    else:
        ev["histograms"]["T=2 mean"]["model_cdf_error"] = 0.05
    _check(rule_c1(ev), "inconclusive")


def test_c1_check_at_a_tiny_size():
    """The whole check on T = 1 at d = 80: the Gaussian equivalent misses the atom e^{-1} (d * KS about 0.37 d = 30,
    above the bound sqrt(d) = 9), the model's law passes, and every Monte Carlo evidence names S and its power."""
    out = check_c1({"d": 80, "seeds": 4, "c1_cases": ((1, "mean", None),)})
    # the ledger prints the reason: the record carries it, as every check's does
    assert out["verdict"] == "corrected" and out["reason"].startswith("the claimed law is off"), out["reason"]
    h = out["evidence"]["histograms"]["T=1 mean"]
    assert h["model_pass"] and not h["gaussian_pass"] and abs(h["laws_ks"] - 0.36788) < 1e-4
    for part in (h, out["evidence"]["ladder_T1"]):
        assert part["S"] == "centered" and part["min_detectable_rel_error"]
    assert out["evidence"]["ladder_T1"]["gaussian_growth"] > 2
