"""``derive bulk`` and ``derive spike`` for the model's own S (``--T --weights``), and the law and warning of the
Gaussian-equivalent answers."""
import json
from fractions import Fraction

import mpmath
import pytest

from derive.gaussian import bulk
from derive.cli import main
from derive.vocabulary.limit.populations import PoissonPopulation
from derive.vocabulary.limit.silverstein import GeneralizedMP
from derive.vocabulary.limit.tokengraph import atom_at_zero


def run(capsys, *args):
    status = main([*args, "--json"])
    out, err = capsys.readouterr()
    return status, (json.loads(out) if status == 0 else None), err


def test_model_bulk_at_t1_is_the_exact_law(capsys):
    status, doc, err = run(capsys, "bulk", "--delta", "1", "--gamma", "1", "--T", "1", "--weights", "mean",
                           "--x", "0.5,7.3,7.5", "--digits", "12")
    assert status == 0 and err == ""
    assert doc["law"] == "finite-vocabulary" and doc["reuse"] == "1.0" and doc["density_error"] is None
    assert doc["support"][0] == ["0.053078784877", "7.25893662954"] and doc["support"][-1][1] == "inf"
    with mpmath.workdps(20):
        L = GeneralizedMP(1, PoissonPopulation(1))
        expected = [mpmath.nstr(L.density(x), 12) for x in ("0.5", "7.5")]
        assert doc["atom_at_zero"] == mpmath.nstr(mpmath.exp(-1), 12)
    assert [doc["density"][0], doc["density"][2]] == expected and doc["density"][1] == "0"  # 7.3: in a gap


def test_gaussian_equivalent_bulk_says_which_law_and_warns(capsys):
    status, doc, _ = run(capsys, "bulk", "--delta", "1/2", "--gamma", "1/4", "--kappa", "1/8", "--x", "0.1", "--digits", "12")
    L = bulk.law("1/2", "1/4", "1/8")
    assert doc["law"] == "gaussian-equivalent" and doc["polynomial"] == str(L.polynomial)
    assert doc["density"] == ["3.29023379746"] and "pass --T and --weights" in doc["warning"]
    _, doc, _ = run(capsys, "bulk", "--delta", "1", "--gamma", "1/32", "--kappa", "1", "--x", "1", "--digits", "6")
    assert doc["warning"] is None


@pytest.mark.parametrize("args,parameter", [
    (["--T", "2", "--kappa", "1/2", "--weights", "mean"], "kappa"),
    (["--T", "2"], "weights"),
    (["--weights", "mean", "--kappa", "1"], "weights"),
    (["--T", "2", "--weights", "optimal"], "signs"),
])
def test_bulk_refuses_mixed_or_missing_options(capsys, args, parameter):
    status = main(["bulk", "--delta", "1", "--gamma", "1", "--x", "1", *args, "--json"])
    out, err = capsys.readouterr()
    assert status == 2 and out == "" and err.startswith(f"derive: error: {parameter}:")


def test_model_spike_at_t1_case_5_of_the_issue(capsys):
    status, doc, _ = run(capsys, "spike", "--delta", "1/4", "--gamma", "1", "--T", "1", "--weights", "mean",
                         "--signs", "iid", "--mu2", "3", "--centered", "--digits", "8")
    assert status == 0 and doc["law"] == "finite-vocabulary" and doc["bulk"]["right_edge"] == "inf"
    s = doc["sample"]
    assert s["outlier"] and s["eigenvalue"] == "5.8571217" and s["overlap"] == "0.45899455"
    # the windows of mu2 with an outlier start at mu2_critical and overlap: no hole up to the last listed one
    windows = [[float(a), float(b)] for a, b in s["mu2_windows"]]
    assert float(s["mu2_critical"]) == windows[0][0] and all(b >= a2 for (_, b), (a2, _) in zip(windows, windows[1:]))
    assert doc["other_outliers"] == []  # one nonzero weight: W^2 = kappa, no mean outlier


def test_gaussian_equivalent_spike_has_law_and_warning(capsys):
    _, doc, _ = run(capsys, "spike", "--delta", "1/4", "--gamma", "1", "--alpha", "1", "--kappa", "1", "--mu2", "3",
                    "--centered", "--digits", "8")
    assert doc["law"] == "gaussian-equivalent" and doc["sample"]["overlap"] == "0.56410256" and doc["warning"]


def test_model_atom_for_t2_matches_tokengraph():
    with mpmath.workdps(15):
        assert mpmath.nstr(atom_at_zero(1, 1, [Fraction(1, 2)] * 2), 10) == "0.1619025595"
