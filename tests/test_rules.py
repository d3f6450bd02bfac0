"""Every verdict rule of the ledger (C2 to C9), driven through each of its four outcomes by stubbed evidence.

A rule is a pure function of its evidence; each test builds the smallest evidence that should reach one branch
and checks the verdict (and, for "corrected", that a corrected statement comes with it).
"""
import copy

import pytest

from verify.ledger.checks.c2 import rule_c2
from verify.ledger.checks.c3 import rule_c3
from verify.ledger.checks.c4 import rule_c4
from verify.ledger.checks.c5 import rule_c5
from verify.ledger.checks.c6 import rule_c6
from verify.ledger.checks.c7 import rule_c7
from verify.ledger.checks.c8 import rule_c8
from verify.ledger.checks.c9 import rule_c9
from verify.ledger.records import VERDICTS


def _check(outcome, verdict):
    assert outcome["verdict"] == verdict, outcome
    assert outcome["reason"]
    assert ("corrected" in outcome) == (verdict == "corrected")
    if verdict == "corrected":
        assert outcome["corrected"]


# ----------------------------------------------------------------------------------------------------------- C2

def _c2(**change):
    def level(*points):
        return {"points": [dict(zip(("mu2", "predicted_outlier", "agree", "population_outlier_predicted"), p),
                                min_detectable_rel_error={"signal_eigenvalue": 0.01}) for p in points],
                "fit": {"agree": True, "mu2_fitted": 1.0, "derived_mu2_critical": 1.0, "min_detectable_rel_error": 0.05}}
    ev = {"ordering": {"proved_for_all_delta_gamma_kappa": True, "successive_on_a_grid": [25, 25]},
          "population": level((0.3, False, True, False), (1.2, True, True, True)),
          "sample": level((0.45, False, True, True), (1.5, True, True, True))}
    for path, value in change.items():
        target = ev
        *keys, last = path.split("__")
        for k in keys:
            target = target[int(k)] if k.isdigit() else target[k]
        target[last] = value
    return ev


def test_c2_confirmed_when_proved():
    _check(rule_c2(_c2()), "confirmed")


def test_c2_confirmed_on_a_grid_says_so():
    out = rule_c2(_c2(ordering__proved_for_all_delta_gamma_kappa=False))
    _check(out, "confirmed")
    assert "on a grid" in out["reason"]


def test_c2_corrected_when_successive_on_part_of_the_grid():
    _check(rule_c2(_c2(ordering__proved_for_all_delta_gamma_kappa=False, ordering__successive_on_a_grid=[20, 25])),
           "corrected")


def test_c2_refuted_when_an_outlier_shows_between_the_thresholds():
    _check(rule_c2(_c2(sample__points__0__agree=False)), "refuted")


def test_c2_refuted_when_never_successive():
    _check(rule_c2(_c2(ordering__proved_for_all_delta_gamma_kappa=False, ordering__successive_on_a_grid=[0, 25])),
           "refuted")


@pytest.mark.parametrize("change", [{"sample__points__1__agree": False}, {"population__points__0__agree": False},
                                    {"population__fit__agree": False},
                                    {"sample__points__0__predicted_outlier": True},
                                    {"sample__fit__min_detectable_rel_error": 0.5},
                                    {"population__points__1__min_detectable_rel_error": {"signal_overlap": 0.5}}])
def test_c2_inconclusive(change):
    _check(rule_c2(_c2(**change)), "inconclusive")


# ----------------------------------------------------------------------------------------------------------- C3

def _c3_point(mu2, claimed, predicted, agree, claim_none_fits, mde=0.01):
    return {"mu2": mu2, "claimed_outlier": claimed, "predicted_outlier": predicted, "agree": agree,
            "claim_no_outlier_fits": claim_none_fits, "min_detectable_rel_error": {"signal_overlap": mde}}


def test_c3_confirmed_when_the_outlier_is_absent_where_the_claim_says():
    _check(rule_c3({"points": [_c3_point(0.2, False, True, False, True), _c3_point(1.5, True, True, True, False)]}),
           "confirmed")


def test_c3_corrected_when_the_derived_outlier_shows_where_the_claim_says_none():
    _check(rule_c3({"points": [_c3_point(0.2, False, True, True, False), _c3_point(1.5, True, True, True, False)]}),
           "corrected")


def test_c3_refuted_when_claim_and_derivation_both_miss():
    _check(rule_c3({"points": [_c3_point(0.2, False, True, True, False), _c3_point(1.5, True, True, False, True)]}),
           "refuted")


@pytest.mark.parametrize("points", [[], [_c3_point(1.5, True, True, True, False)],
                                    [_c3_point(0.2, False, True, True, True)],
                                    [_c3_point(0.2, False, True, True, False, mde=0.5)]])
def test_c3_inconclusive(points):
    _check(rule_c3({"points": points}), "inconclusive")


# ----------------------------------------------------------------------------------------------------------- C4

def _c4_run(S="centered", agree=True, on_top=1.0, eig=0.005, ov=0.01):
    return {"scheme": "mean", "S": S, "mu2": "1.5", "agree": agree, "signal_on_top": on_top,
            "min_detectable_rel_error": {"signal_eigenvalue": eig, "signal_overlap": ov}}


def _c4(runs=None, hidden_agree=True, hidden_predicted=False, population=True, hidden_mde=0.01):
    return {"runs": runs if runs is not None else [_c4_run(), _c4_run(S="raw")],
            "hidden": {"mu2": "0.45", "agree": hidden_agree, "predicted_outlier": hidden_predicted,
                       "population_outlier_predicted": population, "min_detectable_rel_error": {"top_eigenvalue": 0.02},
                       "min_detectable_abs_error": {"top_overlap": hidden_mde}},
            "target": {"eigenvalue": 0.01, "overlap": 0.03, "absent_overlap": 0.02},
            "hidden_target": {"eigenvalue": 0.05, "overlap": 0.15, "absent_overlap": 0.05}}


def test_c4_confirmed():
    _check(rule_c4(_c4()), "confirmed")


def test_c4_corrected_when_the_mean_outlier_is_on_top_of_the_raw_S():
    _check(rule_c4(_c4(runs=[_c4_run(), _c4_run(S="raw", on_top=0.0)])), "corrected")


def test_c4_refuted_when_the_outlier_is_not_hidden_between_the_thresholds():
    _check(rule_c4(_c4(hidden_agree=False)), "refuted")


@pytest.mark.parametrize("evidence", [_c4(runs=[]), _c4(runs=[_c4_run(agree=False)]), _c4(runs=[_c4_run(eig=0.02)]),
                                      _c4(runs=[_c4_run(ov=0.05)]), _c4(hidden_predicted=True),
                                      _c4(population=False), _c4(hidden_mde=0.2)])
def test_c4_inconclusive(evidence):
    _check(rule_c4(evidence), "inconclusive")


# ----------------------------------------------------------------------------------------------------------- C5

def _c5(beaten=0, identity=True, gain_ci=(0.01, 0.05), agree=True, ties=None):
    return {"random_weights_beating_lambda_max": beaten, "rayleigh_identity_T_2_3_4": identity,
            "prefix_L_where_optimal_ties_mean": ties if ties is not None else {8: []},
            "mc_gain": {"quantities": {"gain": {"ci": list(gain_ci), "agree": agree}}}}


def test_c5_confirmed():
    _check(rule_c5(_c5()), "confirmed")


def test_c5_corrected_when_optimal_only_ties_mean_for_some_L():
    _check(rule_c5(_c5(ties={8: [1, 8]})), "corrected")


@pytest.mark.parametrize("evidence", [_c5(beaten=3), _c5(gain_ci=(-0.05, -0.01), agree=False)])
def test_c5_refuted(evidence):
    _check(rule_c5(evidence), "refuted")


@pytest.mark.parametrize("evidence", [_c5(identity=False), _c5(agree=False), {"random_weights_beating_lambda_max": 0}])
def test_c5_inconclusive(evidence):
    _check(rule_c5(evidence), "inconclusive")


# ----------------------------------------------------------------------------------------------------------- C6

def _c6(strict=True, inclusive=False, monotone=True, rate_low=0.4):
    real = {m: {"rate": 0.5, "rate_ci95": [rate_low, 0.6]} for m in ("strict", "inclusive")}
    return {"claimed_form_equals_limit_T_2_to_32_tau_0_and_2": {"strict": strict, "inclusive": inclusive},
            "monotone_decreasing": monotone, "real_attention_tau_1_T8": real}


def test_c6_confirmed_when_both_masks_give_the_claimed_form():
    _check(rule_c6(_c6(inclusive=True)), "confirmed")


def test_c6_corrected_when_one_mask_gives_it():
    out = rule_c6(_c6())
    _check(out, "corrected")
    assert "strict" in out["reason"]


@pytest.mark.parametrize("evidence", [_c6(strict=False), _c6(monotone=False)])
def test_c6_refuted(evidence):
    _check(rule_c6(evidence), "refuted")


def test_c6_inconclusive_without_convergence():
    _check(rule_c6(_c6(rate_low=-0.1)), "inconclusive")


# ----------------------------------------------------------------------------------------------------------- C7

def test_c7_confirmed_when_causal_wins_for_every_early_block():
    wins = {"strict": {n: [2, n] for n in range(2, 9)}}
    _check(rule_c7({"T_max": 8, "prefix_winning_L_range": wins}), "confirmed")


def test_c7_corrected_when_causal_wins_for_some_blocks():
    wins = {"strict": {n: [2, max(2, n - 3)] if n >= 4 else None for n in range(2, 9)}}
    _check(rule_c7({"T_max": 8, "prefix_winning_L_range": wins, "suffix_rows_where_causal_wins": 0,
                    "markov_r_where_causal_wins": {"strict": ["-1/2"]}}), "corrected")


def test_c7_refuted_when_causal_never_wins():
    _check(rule_c7({"T_max": 8, "prefix_winning_L_range": {"strict": {n: None for n in range(2, 9)}}}), "refuted")


def test_c7_inconclusive_without_rows():
    _check(rule_c7({"prefix_winning_L_range": {}}), "inconclusive")


# ----------------------------------------------------------------------------------------------------------- C8

def _c8_family(order, status=None):
    names = ("mean", "causal", "optimal")
    pairs = {}
    for k, lo in enumerate(names):
        for hi in names[k + 1:]:
            # "higher" when hi is above lo in the alpha/kappa order, else "reversed"
            s = "higher" if order.index(hi) > order.index(lo) else "reversed"
            pairs[f"{hi}-{lo}"] = [{"status": (status or {}).get(f"{hi}-{lo}", s), "saturated": False}]
    return {"alpha_over_kappa_order": list(order), "pairs": pairs}


def test_c8_confirmed_when_every_family_has_the_claimed_order():
    _check(rule_c8({"families": {"prefix:3": _c8_family(("mean", "causal", "optimal"))}}), "confirmed")


def test_c8_corrected_when_alpha_kappa_orders_differently_and_accuracy_follows():
    fam = {"prefix:3": _c8_family(("mean", "causal", "optimal")), "suffix:2": _c8_family(("causal", "mean", "optimal"))}
    _check(rule_c8({"families": fam}), "corrected")


def test_c8_refuted_when_accuracy_reverses_alpha_kappa():
    fam = {"prefix:3": _c8_family(("mean", "causal", "optimal"), status={"causal-mean": "reversed"})}
    _check(rule_c8({"families": fam}), "refuted")


@pytest.mark.parametrize("evidence", [{"families": {}},
                                      {"families": {"prefix:3": _c8_family(("mean", "causal", "optimal"),
                                                                           status={"optimal-causal": "tied"})}}])
def test_c8_inconclusive(evidence):
    _check(rule_c8(evidence), "inconclusive")


# ----------------------------------------------------------------------------------------------------------- C9

def _c9(rates=None, agreeing=4, fits=("population", "sample")):
    rates = rates or {"mean (centered)": (0.6, 1.0), "causal (centered)": (0.6, 1.0)}
    return {"outliers": {"runs": 4, "agreeing": agreeing, "resolving_target": 4, "raw_runs": 2},
            "thresholds": {"points": 8, "agreeing": 8, "fits_agreeing": list(fits)},
            "histograms": {k: {"rate_ci": list(v)} for k, v in rates.items()}}


def test_c9_confirmed():
    _check(rule_c9(_c9()), "confirmed")


def test_c9_corrected_when_concentrated_weights_depart():
    _check(rule_c9(_c9({"mean (centered)": (0.6, 1.0), "causal (centered)": (-0.1, 0.3)})), "corrected")


def test_c9_refuted_when_every_histogram_departs():
    _check(rule_c9(_c9({"mean (centered)": (-0.2, 0.2), "causal (centered)": (-0.1, 0.3)})), "refuted")


@pytest.mark.parametrize("evidence", [_c9(agreeing=3), _c9(fits=("sample",)),
                                      _c9({"mean (centered)": (0.3, 1.0)}), {"outliers": {}},
                                      _c9({"mean (centered)": (-0.2, 0.2), "causal (centered)": (0.6, 1.0)})])
def test_c9_inconclusive(evidence):
    _check(rule_c9(evidence), "inconclusive")


# ------------------------------------------------------------------------------------------------------ purity

@pytest.mark.parametrize("rule, evidence", [(rule_c2, _c2()), (rule_c4, _c4()), (rule_c5, _c5()), (rule_c6, _c6()),
                                            (rule_c9, _c9())])
def test_rules_do_not_modify_their_evidence_and_give_a_known_verdict(rule, evidence):
    before = copy.deepcopy(evidence)
    out = rule(evidence)
    assert evidence == before and out["verdict"] in VERDICTS
    assert rule(evidence) == out
