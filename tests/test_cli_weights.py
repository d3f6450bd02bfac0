import json

import numpy as np
import pytest

from derive.cli import main


def run(capsys, *args):
    status = main(["weights", *args, "--json"])
    out, err = capsys.readouterr()
    return status, out, err


def test_causal_strict_is_the_claimed_harmonic_form(capsys):
    status, out, err = run(capsys, "--weights", "causal", "--T", "4", "--mask", "strict", "--signs", "prefix:2")
    doc = json.loads(out)
    # (H_3 - H_{t-1})/3 = (11/18, 5/18, 1/9, 0); alpha = (16/18)^2 + (2/18)^2, kappa = 150/324
    assert status == 0 and err == ""
    assert doc["exact"] == ["11/18", "5/18", "1/9", "0"]
    assert doc["alpha"] == "0.802469135802469135802469135802" and doc["alpha_over_kappa"] == "1.73333333333333333333333333333"


def test_mean_without_signs_has_null_alpha(capsys):
    doc = json.loads(run(capsys, "--weights", "mean", "--T", "3", "--digits", "5")[1])
    assert doc["exact"] == ["1/3"] * 3 and doc["alpha"] is None and doc["alpha_over_kappa"] is None
    assert doc["kappa"] == "0.33333"


def test_causal_positive_tau_is_not_rational(capsys):
    doc = json.loads(run(capsys, "--weights", "causal", "--T", "2", "--tau", "1", "--digits", "20")[1])
    # row 2 attends (1, e)/(1 + e): w_2 = e/(2(1+e)) = 0.36552928931500243963...
    assert doc["exact"] is None and doc["weights"][1] == "0.36552928931500243963"


def test_optimal_and_file_schemes(capsys, tmp_path):
    doc = json.loads(run(capsys, "--weights", "optimal", "--T", "5", "--signs", "prefix:3")[1])
    assert doc["exact"] == ["1/3", "1/3", "1/3", "0", "0"] and doc["alpha_over_kappa"] == "3.0"
    np.save(tmp_path / "w.npy", np.array([2.0, 1.0, 1.0]))
    doc = json.loads(run(capsys, "--weights", f"file:{tmp_path / 'w.npy'}", "--T", "3")[1])
    assert doc["exact"] == ["1/2", "1/4", "1/4"]


@pytest.mark.parametrize("args, parameter", [
    (["--weights", "nope", "--T", "3"], "weights"),
    (["--weights", "mean", "--T", "0"], "T"),
    (["--weights", "mean", "--T", "abc"], "T"),
    (["--weights", "mean", "--T", "1.5"], "T"),
    (["--weights", "causal", "--T", "3", "--tau", "-1"], "tau"),
    (["--weights", "causal", "--T", "3", "--tau", "nan"], "tau"),
    (["--weights", "causal", "--T", "3", "--mask", "foo"], "mask"),
    (["--weights", "causal", "--T", "1", "--mask", "strict"], "T"),
    (["--weights", "mean", "--T", "3", "--tau", "1"], "tau"),
    (["--weights", "optimal", "--T", "3"], "signs"),
    (["--weights", "mean", "--T", "3", "--signs", "prefix:x"], "signs"),
    (["--weights", "mean", "--T", "3", "--signs", "prefix:4"], "signs"),
    (["--weights", "mean", "--T", "3", "--digits", "0"], "digits"),
    (["--weights", "file:/nonexistent/w.npy", "--T", "3"], "weights"),
])
def test_bad_input_exits_2_with_one_line_naming_the_parameter(capsys, args, parameter):
    status, out, err = run(capsys, *args)
    assert status == 2 and out == ""
    assert len(err.splitlines()) == 1 and err.startswith(f"derive: error: {parameter}:")


@pytest.mark.parametrize("content, reason", [("1,2\n", "2 weights for T = 3"), ("0,0,0\n", "all weights are zero"),
                                             ("1,-1,0\n", "sum to zero"), ("1,inf,0\n", "not a finite number")])
def test_bad_weight_files(capsys, tmp_path, content, reason):
    path = tmp_path / "w.csv"
    path.write_text(content)
    status, out, err = run(capsys, "--weights", f"file:{path}", "--T", "3")
    assert status == 2 and out == "" and len(err.splitlines()) == 1
    assert err.startswith("derive: error: weights:") and reason in err


def test_the_causal_weights_name_their_mask_and_tau_and_other_schemes_do_not(capsys):
    doc = json.loads(run(capsys, "--weights", "causal", "--T", "3")[1])
    assert (doc["mask"], doc["tau"]) == ("inclusive", "0")  # the default, named
    doc = json.loads(run(capsys, "--weights", "causal", "--T", "3", "--mask", "strict", "--tau", "1/2")[1])
    assert (doc["mask"], doc["tau"]) == ("strict", "0.5")
    doc = json.loads(run(capsys, "--weights", "mean", "--T", "3")[1])
    assert doc["mask"] is None and doc["tau"] is None


def test_the_readable_output_says_what_alpha_needs_and_which_mask_is_the_papers(capsys):
    assert main(["weights", "--weights", "causal", "--T", "4"]) == 0
    out = capsys.readouterr().out
    assert "alpha: needs --signs" in out and "None" not in out
    assert "mask = inclusive (the default; the paper's harmonic form H_{T-1} - H_{t-1} is the strict mask's)" in out


def test_every_mask_help_puts_the_papers_form_next_to_the_default(capsys):
    from verify.cli import main as verify_main

    for prog, argv in ((main, ["weights"]), (main, ["bulk"]), (main, ["spike"]), (verify_main, ["mc"]),
                       (verify_main, ["ladder"])):
        with pytest.raises(SystemExit):
            prog([*argv, "--help"])
        flat = " ".join(capsys.readouterr().out.split())
        assert "inclusive (keys s <= t; the default)" in flat and "are the strict mask's" in flat, argv


def test_the_models_own_law_of_causal_weights_names_them(capsys):
    assert main(["bulk", "--delta", "1", "--gamma", "1", "--T", "2", "--weights", "causal", "--mask", "strict",
                 "--x", "1", "--digits", "5", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert (doc["mask"], doc["tau"]) == ("strict", "0")


def test_scheme_is_the_older_name_of_weights_and_still_answers(capsys):
    new = json.loads(run(capsys, "--weights", "causal", "--T", "4", "--signs", "prefix:2")[1])
    old = json.loads(run(capsys, "--scheme", "causal", "--T", "4", "--signs", "prefix:2")[1])
    assert new == old
    # an error names the option typed
    assert run(capsys, "--scheme", "nope", "--T", "3")[2].startswith("derive: error: scheme: unknown scheme 'nope'")


@pytest.mark.parametrize("args, line", [
    (["--weights", "mean", "--scheme", "mean", "--T", "3"], "scheme: is the older name of --weights"),
    (["--T", "3"], "weights: is required"),
])
def test_weights_once_by_one_name(capsys, args, line):
    status, out, err = run(capsys, *args)
    assert status == 2 and out == "" and len(err.splitlines()) == 1 and err.startswith(f"derive: error: {line}")


def test_the_help_names_weights_and_calls_scheme_deprecated(capsys):
    with pytest.raises(SystemExit):
        main(["weights", "--help"])
    out = capsys.readouterr().out
    assert "--weights {mean," in out and "\n  --scheme" not in out
    assert "--scheme is its older name, deprecated" in " ".join(out.split())


def test_optimal_weights_of_alternating_signs_come_at_unit_norm(capsys):
    # markov:-1 at T = 4: R = v v^T with v = (1, -1, 1, -1), so the top eigenvector is v/2 (unit norm, sum zero; it
    # had been refused as weights that cannot sum to 1), alpha = (v.v/2)^2 = 4 and kappa = 1
    status, out, _ = run(capsys, "--weights", "optimal", "--T", "4", "--signs", "markov:-1", "--json")
    doc = json.loads(out)
    w = [float(x) for x in doc["weights"]]
    assert status == 0 and max(abs(abs(x) - 0.5) for x in w) < 1e-25 and abs(sum(w)) < 1e-25
    assert abs(float(doc["alpha"]) - 4) < 1e-25 and abs(float(doc["kappa"]) - 1) < 1e-25 and "unit norm" in doc["note"]
