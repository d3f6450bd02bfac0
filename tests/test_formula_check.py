"""verify formula: proofs, counterexamples, agreement, the command line and the pytest helper.

Each verdict is driven by an input whose truth is known independently of the code: a rearranged form
(equal), the summary's C3 threshold (wrong by ``delta``), a 5% and a 1e-20 relative error (counterexamples
the tolerance argument says must be found), and the Penson-Zyczkowski closed form of the density of
``MP_1 boxtimes MP_1`` (agrees: the code has no closed form to prove it against).
"""
import json

import mpmath
import pytest
import sympy as sp

from derive.errors import ParameterError
from derive.sheet.quantities import QUANTITIES, quantity
from derive.symbols import alpha, delta, gamma, kappa
from verify.cli import main
from verify.formula import assert_formula, check_formula

FEW = {"examples": 20}


def test_a_rearranged_form_is_proved_equal():
    # (alpha mu2 + alpha delta) expanded, factors reordered: a different text of the same rational function
    ell = "(alpha*mu2 + alpha*delta)*(alpha*mu2 + alpha*delta + kappa - delta*kappa)/(alpha*mu2 + alpha*delta - delta*kappa)"
    check = check_formula("population.eigenvalue", ell, **FEW)
    assert check.verdict == "equal" and "rational identity" in check.proof and check.point is None


def test_the_summarys_c3_threshold_is_refuted_at_a_simple_point():
    # the summary: an outlier iff alpha mu2/kappa > delta + sqrt(delta); the derivation keeps the class-mean
    # noise, so the true critical mu2 is that minus delta: at delta = kappa = alpha = 1 it is 2 - 1 = 1
    check = check_formula("population.mu2_critical", "kappa*(delta + sqrt(delta))/alpha", **FEW)
    assert check.verdict == "counterexample"
    assert check.point == {delta: 1, kappa: 1, alpha: 1}
    assert (check.expected, check.got) == (1, 2)


def test_five_percent_off_the_sample_overlap_is_a_counterexample_with_the_exact_ratio():
    right = sp.factor(quantity("sample.overlap").definition)
    check = check_formula("sample.overlap", f"0.95*({right})", **FEW)
    assert check.verdict == "counterexample"
    assert all(sp.Rational(v) == v for v in check.point.values())  # a rational point
    with mpmath.workdps(40):
        assert abs(check.got / check.expected - mpmath.mpf(19) / 20) < mpmath.mpf(10) ** -28


def test_the_tolerance_detects_a_relative_error_of_1e_20():
    # tolerance(30) = 1e-25: an error 10^5 times larger must be found at the first point
    right = sp.factor(quantity("sample.eigenvalue").definition)
    assert check_formula("sample.eigenvalue", f"(1 + 10**-20)*({right})", **FEW).verdict == "counterexample"


@pytest.mark.parametrize("digits", [1, 3, 5])
def test_fewer_digits_never_make_a_wrong_formula_agree(digits):
    # the tolerance had been 10^(5 - digits): 10^4 relative at one digit, and these agreed. At delta = gamma = kappa =
    # alpha = 1, mu2 = 3 the sample overlap is 1/3 (the formula mu2/(mu2 + 1) gives 3/4), and the population edge is
    # 4 kappa at delta = 1 (6 kappa is 50% off); fewer digits shorten what is printed, the comparison keeps 30
    where = "delta=1, gamma=1, kappa=1, alpha=1, mu2=3"
    overlap = check_formula("sample.overlap", "mu2/(mu2 + 1)", where=where, digits=digits, **FEW)
    assert overlap.verdict == "counterexample"
    with mpmath.workdps(40):
        assert abs(overlap.expected - mpmath.mpf(1) / 3) < 1e-25 and overlap.got == mpmath.mpf(3) / 4
    edge = check_formula("bulk.population_right_edge", "6*kappa", where="delta=1", digits=digits, **FEW)
    assert edge.verdict == "counterexample"
    right = sp.factor(quantity("sample.eigenvalue").definition)
    assert check_formula("sample.eigenvalue", f"(1 + 10**-20)*({right})", digits=digits, **FEW).verdict == "counterexample"
    assert check_formula("sample.overlap", "mu2/(mu2 + 1)", where=where, digits=digits, **FEW).as_dict()["tolerance"] \
        == "1.0e-25"


def test_an_implicit_quantity_is_proved_on_its_curve_and_the_wrong_root_is_refuted():
    # delta = gamma = kappa = 1: the threshold polynomial is -theta^2 (theta - 3); its roots 0 (twice) and 3
    where = "delta=1, gamma=1, kappa=1"
    check = check_formula("sample.theta_critical", "3", where=where, **FEW)
    assert check.verdict == "equal" and check.proof.startswith("P(expr) = 0 identically")
    wrong = check_formula("sample.theta_critical", "0", where=where, **FEW)
    assert wrong.verdict == "counterexample" and wrong.proof is None and wrong.expected == 3
    # kappa (MP_1 boxtimes MP_1) ends at 27 kappa/4 (the Fuss-Catalan edge)
    assert check_formula("bulk.right_edge", "27*kappa/4", where="delta=1, gamma=1", **FEW).verdict == "equal"


def test_an_independent_closed_form_agrees_where_no_proof_is_possible():
    # Penson and Zyczkowski (2011): the density of MP_1 boxtimes MP_1 on (0, 27/4]
    pz = ("2**(1/3)*sqrt(3)/(12*pi) * (2**(1/3)*(27 + 3*sqrt(81 - 12*x))**(2/3) - 6*x**(1/3))"
          " / (x**(2/3)*(27 + 3*sqrt(81 - 12*x))**(1/3))")
    check = check_formula("bulk.density", pz, where="delta=1, gamma=1, kappa=1", examples=15)
    assert check.verdict == "agrees" and check.proof is None and check.examples >= 15
    assert check_formula("bulk.density", f"1.01*({pz})", where="delta=1, gamma=1, kappa=1",
                         examples=15).verdict == "counterexample"


def test_causal_weights_of_the_claim_are_the_strict_mask():
    claim = "(H(T-1) - H(t-1))/(T-1)"
    assert check_formula("weights.causal", claim, where="mask=strict", **FEW).verdict == "equal"
    inclusive = check_formula("weights.causal", claim, where="tau=0", **FEW)
    assert inclusive.verdict == "counterexample" and inclusive.point["mask"] == "inclusive"


def test_the_search_is_deterministic_and_respects_the_constraints():
    a = check_formula("sample.overlap", "mu2/(mu2 + delta)", where="gamma>=2, delta=1/2", **FEW)
    b = check_formula("sample.overlap", "mu2/(mu2 + delta)", where="gamma>=2, delta=1/2", **FEW)
    assert a == b and a.verdict == "counterexample"
    assert a.point[gamma] >= 2 and a.point[delta] == sp.Rational(1, 2)


@pytest.mark.parametrize("kwargs, parameter", [
    ({"quantity_name": "sample.nope", "expr": "1"}, "quantity"),
    ({"quantity_name": "sample.overlap", "expr": "omega"}, "expr"),  # theta is the sheet's name: accepted
    ({"quantity_name": "sample.overlap", "expr": "x"}, "expr"),
    ({"quantity_name": "sample.overlap", "expr": "delta.__class__"}, "expr"),
    ({"quantity_name": "sample.overlap", "expr": "mu2**10**9"}, "expr"),
    ({"quantity_name": "sample.overlap", "expr": "1", "where": "tau=1"}, "where"),
    ({"quantity_name": "sample.overlap", "expr": "1", "where": "delta=-1"}, "where"),
    ({"quantity_name": "weights.causal", "expr": "1", "where": "mask=both"}, "where"),
    # short expressions whose evaluation by SymPy or mpmath would not end (one exact sum of 10^9 terms, a number
    # of 10^9 digits, a sine needing 10^17 digits of pi): refused before anything is evaluated
    ({"quantity_name": "sample.overlap", "expr": "H(10**9)"}, "expr"),
    ({"quantity_name": "sample.overlap", "expr": "harmonic(999999999)"}, "expr"),
    ({"quantity_name": "sample.overlap", "expr": "digamma(10**9)"}, "expr"),
    ({"quantity_name": "sample.overlap", "expr": "H(10**5)"}, "expr"),
    ({"quantity_name": "sample.overlap", "expr": "H(H(H(10)))"}, "expr"),
    ({"quantity_name": "sample.overlap", "expr": "((((10**60)**64)**64)**64)**64"}, "expr"),
    ({"quantity_name": "sample.overlap", "expr": "exp(exp(exp(exp(60))))"}, "expr"),
    ({"quantity_name": "sample.overlap", "expr": "sin(exp(exp(40)))"}, "expr"),
    # a fixed value is substituted into the proof: T = 10^9 would sum H(10^9) exactly
    ({"quantity_name": "weights.causal", "expr": "H(T)", "where": "T=1000000000"}, "where"),
    ({"quantity_name": "weights.causal", "expr": "1", "where": "T=100000"}, "where"),
    ({"quantity_name": "sample.overlap", "expr": "delta", "where": "mu2=1e300"}, "where"),
    ({"quantity_name": "sample.overlap", "expr": "1", "where": "delta=1/2, delta=1/3"}, "where"),
    ({"quantity_name": "sample.overlap", "expr": "1", "where": "gamma<1, gamma<=2"}, "where"),
])
def test_bad_input_names_its_parameter(kwargs, parameter):
    with pytest.raises(ParameterError) as info:
        check_formula(**kwargs, **FEW)
    assert info.value.parameter == parameter


def test_a_bare_symbol_is_an_expression():
    # L is alpha/kappa of optimal pooling on prefix:L (its formula on the sheet); SymPy's Symbol is also a Boolean,
    # which once made every expression that simplifies to a symbol "not a scalar expression"
    assert check_formula("alpha_over_kappa.optimal.prefix", "L", **FEW).verdict == "equal"
    assert check_formula("alpha_over_kappa.mean.prefix", "L", **FEW).verdict == "counterexample"


def test_an_evaluation_that_outlasts_its_budget_is_refused_naming_expr(monkeypatch):
    # exp(exp(exp(delta))) at delta > 3 exceeds 10^(10^21): its sine needs that many digits of pi, so mpmath would
    # not finish; nothing about it is exact, so only the time budget can stop it (1 s here instead of 10)
    monkeypatch.setattr("verify.formula.EXPRESSION_SECONDS", 1)
    monkeypatch.setattr("verify.formula.search.EXPRESSION_SECONDS", 1)
    with pytest.raises(ParameterError, match="took more than 1 s") as info:
        check_formula("sample.overlap", "sin(exp(exp(exp(delta))))", where="delta>3", examples=5)
    assert info.value.parameter == "expr"


def test_the_time_budget_stops_its_block_and_gives_back_an_outer_timer():
    # the budget is CPU time (ITIMER_PROF): a loaded machine delays its verdict and never changes it. Nothing here
    # compares clocks: which timer is armed is read back (getitimer), and the outer one must fire exactly once
    import signal

    from derive.sheet.userexpr import OutOfTime, time_budget

    fired = []
    previous = signal.signal(signal.SIGPROF, lambda *_: fired.append(True))
    signal.setitimer(signal.ITIMER_PROF, 0.5)
    try:
        with pytest.raises(OutOfTime) as info:
            with time_budget(0.2):
                armed = signal.getitimer(signal.ITIMER_PROF)[0]
                while True:
                    pass
        assert info.value.args == (0.2,) and 0 < armed <= 0.25 and fired == []  # the kernel rounds to its tick
        with time_budget(0.2):
            pass
        left = signal.getitimer(signal.ITIMER_PROF)[0]
        assert 0 < left <= 0.5 - 0.2 + 0.05  # the outer timer again, less the CPU time the first block used
        spins = 0
        while not fired and spins < 10**9:  # CPU time is what makes it fire: spin (a bound on work, not seconds)
            spins += 1
        assert fired == [True] and signal.getitimer(signal.ITIMER_PROF) == (0.0, 0.0)
    finally:
        signal.setitimer(signal.ITIMER_PROF, 0)
        signal.signal(signal.SIGPROF, previous)


def test_every_quantity_accepts_its_own_definition():
    for name in QUANTITIES:
        q = quantity(name)
        definition, polynomial = q.defined({k: v[0] for k, v in q.options.items()})
        if definition is not None:
            assert check_formula(name, definition, examples=3).verdict == "equal", name


def test_command_line_exit_status_and_document(capsys):
    assert main(["formula", "--quantity", "population.mu2_critical", "--expr", "kappa*(delta+sqrt(delta))/alpha",
                 "--examples", "20", "--json"]) == 1
    doc = json.loads(capsys.readouterr().out)
    assert set(doc) >= {"verdict", "point", "expected", "got", "examples", "proof"}
    assert doc["point"] == {"delta": "1", "kappa": "1", "alpha": "1"} and doc["expected"] == "1.0"
    assert main(["formula", "--quantity", "signal.strength", "--expr", "alpha*mu2 + alpha*delta", "--examples", "5"]) == 0
    assert "equal" in capsys.readouterr().out
    assert main(["formula", "--quantity", "signal.strength", "--expr", "alpha*(", "--json"]) == 2
    captured = capsys.readouterr()
    assert captured.out == "" and captured.err.count("\n") == 1 and captured.err.startswith("verify: error: expr")


def test_monte_carlo_at_the_counterexample_names_its_matrix_and_power():
    check = check_formula("sample.eigenvalue", "2*kappa", where="delta=1/2, gamma=1/4, kappa=1/8, alpha=7/32",
                          mc=True, mc_d=200, mc_seeds=4, **FEW)
    mc = check.mc
    assert check.verdict == "counterexample" and mc["S"] == "centered" and mc["d"] == 200
    assert set(mc["min_detectable_rel_error"]) == {"sample.eigenvalue"}
    # the user's value 1/4 lies far below the outlier (it is inside the bulk, whose edge is 0.47)
    assert mc["got_in_ci"] is False
    assert check_formula("population.overlap", "1", mc=True, **FEW).mc["skipped"]


def test_pytest_helper_passes_a_right_form_and_fails_with_the_point():
    assert assert_formula("bulk.population_right_edge", "kappa + 2*kappa*sqrt(delta) + kappa*delta").ok
    with pytest.raises(AssertionError, match=r"at \{'delta': '1', 'kappa': '1'\}"):
        assert_formula("bulk.population_right_edge", "kappa*(1 + delta)", **FEW)


def test_without_hypothesis_a_proof_still_stands_and_a_search_is_refused(monkeypatch):
    import sys
    monkeypatch.setitem(sys.modules, "hypothesis", None)  # import hypothesis now raises ImportError
    check = check_formula("signal.strength", "alpha*mu2 + alpha*delta")
    assert check.verdict == "equal" and check.examples == 0 and "not installed" in check.note
    with pytest.raises(ParameterError) as info:
        check_formula("signal.strength", "alpha*mu2")
    assert info.value.parameter == "hypothesis"


def test_the_mask_not_a_degenerate_point_is_what_separates_the_papers_causal_form():
    # the paper's form is the strict mask's (proved there); with the default mask the first point of the domain,
    # T = 1, leaves it undefined (0/0): the check shows where both are defined and differ instead (T = 2)
    c = check_formula("weights.causal", "(harmonic(T-1) - harmonic(t-1))/(T-1)", **FEW)
    assert c.verdict == "counterexample"
    assert c.separated_by == "equal for the strict mask; differs for the inclusive mask (the default)"
    assert c.got is not None and c.point[sp.Symbol("T", integer=True, positive=True)] == 2
    assert [o["where"] for o in c.conditions][:2] == ["mask=inclusive", "mask=strict"]
    assert c.conditions[1]["verdict"] == "equal"


def test_tau_separates_the_inclusive_form_and_a_fixed_condition_is_not_probed():
    # the inclusive mask's weights are H_T - H_{t-1} at tau = 0 only
    c = check_formula("weights.causal", "(harmonic(T) - harmonic(t-1))/T", **FEW)
    assert c.separated_by.startswith("equal for the inclusive mask (the default) at tau = 0; differs for tau > 0")
    fixed = check_formula("weights.causal", "(harmonic(T) - harmonic(t-1))/T", where="mask=strict", **FEW)
    assert fixed.verdict == "counterexample" and all("mask" not in o["where"] for o in fixed.conditions)
    # a quantity without conditions reports none
    plain = check_formula("sample.overlap", "mu2/(mu2 + delta)", **FEW)
    assert plain.conditions == () and plain.separated_by is None


def test_the_sheets_names_are_accepted_and_stand_for_what_the_sheet_defines():
    # the sheet writes the population outlier as ell(theta) with theta = alpha (mu2 + delta)
    ell = "theta*(delta*kappa - kappa - theta)/(delta*kappa - theta)"
    c = check_formula("population.eigenvalue", ell, **FEW)
    assert c.verdict == "equal" and set(c.names) == {"theta"}
    assert check_formula("population.eigenvalue", f"1.02*{ell}", **FEW).verdict == "counterexample"
    assert check_formula("population.mu2_critical", "theta/alpha - delta", **FEW).verdict == "equal"
    assert check_formula("weights.causal", "(H(T-1) - H(s-1))/(T-1)", where="mask=strict", **FEW).verdict == "equal"
    assert check_formula("bulk.population_right_edge", "lambda_H - theta_c + kappa*(delta + sqrt(delta))",
                         **FEW).verdict == "equal"
    # every name of the sheet that a quantity defines is accepted by it
    for name in QUANTITIES:
        q = quantity(name)
        for alias, (symbol, expression, _) in q.aliases.items():
            assert q.unaliased(symbol) == expression
    with pytest.raises(ParameterError, match="unknown name 'theta'"):
        check_formula("bulk.atom_at_zero", "2*theta", **FEW)
