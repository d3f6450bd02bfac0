"""The verify command line: verify mc's document and its error paths."""
import json

import numpy as np
import pytest
from scipy import stats

from verify.cli import main

BASE = ["mc", "--d", "40", "--V", "80", "--N", "160", "--T", "4", "--signs", "prefix:2", "--weights", "mean",
        "--mu2", "2", "--seeds", "3", "--json"]


def test_mc_document_has_the_interface_fields_and_is_deterministic(capsys):
    assert main(BASE) == 0
    first = json.loads(capsys.readouterr().out)
    assert set(first) >= {"top_eigenvalues", "overlap", "top_eigenvalue", "theory"}
    assert len(first["top_eigenvalues"]) == 3
    assert set(first["theory"]) >= {"population", "sample", "bulk", "other_outliers"}
    # the summary is the Student-t 95% interval of the per-seed top eigenvalues the document lists, recomputed
    # here from them with scipy (the printed values carry 10 significant digits)
    tops = np.array([float(row[0]) for row in first["top_eigenvalues"]])
    half = stats.t.ppf(0.975, len(tops) - 1) * tops.std(ddof=1) / np.sqrt(len(tops))
    got = [float(first["top_eigenvalue"]["mean"])] + [float(x) for x in first["top_eigenvalue"]["ci95"]]
    assert got == pytest.approx([tops.mean(), tops.mean() - half, tops.mean() + half], rel=1e-8)
    assert main(BASE) == 0
    assert json.loads(capsys.readouterr().out) == first


@pytest.mark.parametrize("weights", ["mean", "softmax"])
def test_mc_samples_each_seeds_sequences_once_and_checks_the_run_once(capsys, monkeypatch, weights):
    """Issue 41: the conditional predictions drew each seed's sequences (softmax: the whole trial) a second time, and
    run_trials checked k, seeds and the trial's memory again after the command had."""
    import importlib

    draw, memory = (importlib.import_module(f"verify.montecarlo.{name}") for name in ("draw", "memory"))
    counts = {"sequences": 0, "checks": 0}

    def counted(name, function):
        def wrapper(*args, **kwargs):
            counts[name] += 1
            return function(*args, **kwargs)
        return wrapper

    monkeypatch.setattr(draw, "sample_sequences", counted("sequences", draw.sample_sequences))
    monkeypatch.setattr(memory, "check_trial", counted("checks", memory.check_trial))
    args = list(BASE)
    args[args.index("--weights") + 1] = weights
    assert main(args) == 0
    assert len(json.loads(capsys.readouterr().out)["conditional"]["per_seed"]) == 3
    assert counts == {"sequences": 3, "checks": 1}


def test_mc_paths_solve_the_same_draws(capsys):
    docs = {}
    for path in ("dense", "mixed"):
        assert main(BASE + ["--path", path]) == 0
        docs[path] = json.loads(capsys.readouterr().out)
        assert docs[path]["path"] == path
    # same seeds, same draws: the certified mixed path agrees with dense to 1e-10 relative, so
    # the 10-digit printouts agree up to their rounding (below 1e-9 relative)
    for a, b in zip(docs["dense"]["top_eigenvalues"], docs["mixed"]["top_eigenvalues"]):
        assert [float(x) for x in a] == pytest.approx([float(x) for x in b], rel=1e-9)


@pytest.mark.parametrize("change, parameter", [
    (("--d", "0"), "d"), (("--V", "81"), "V"), (("--N", "x"), "N"), (("--T", "1.5"), "T"),
    (("--signs", "prefix:9"), "signs"), (("--weights", "nope"), "scheme"), (("--mu2", "-1"), "mu2"),
    (("--mu2", "nan"), "mu2"), (("--seeds", "0"), "seeds"), (("--k", "40"), "k"), (("--path", "fast"), "path"),
])
def test_mc_bad_input_exits_2_with_one_line(capsys, change, parameter):
    args = list(BASE)
    if change[0] in args:
        args[args.index(change[0]) + 1] = change[1]
    else:
        args += list(change)
    assert main(args) == 2
    out, err = capsys.readouterr()
    assert out == ""
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("verify: error: ") and parameter in lines[0]


def test_mc_plot_draws_each_seed_against_the_theory(capsys, tmp_path):
    path = tmp_path / "mc" / "trials.png"
    assert main(["mc", "--d", "60", "--V", "120", "--N", "240", "--T", "2", "--signs", "iid", "--weights", "mean",
                 "--mu2", "2", "--seeds", "3", "--plot", str(path), "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert path.read_bytes()[:4] == b"\x89PNG" and len(doc["top_eigenvalues"]) == 3
    assert main(["mc", "--d", "60", "--V", "120", "--N", "240", "--T", "2", "--signs", "iid", "--weights", "mean",
                 "--mu2", "2", "--seeds", "3", "--plot", "/dev/null/x.png"]) == 2
    assert "plot" in capsys.readouterr().err


def test_mc_intervals_stay_in_the_range_of_their_quantity(capsys):
    # two seeds: the Student-t quantile is 12.7, and the overlap's interval had been [-0.24, 1.27]; cut to [0, 1] it
    # keeps its coverage (the mean overlap lies in [0, 1]), and the top eigenvalue of the positive semi-definite S >= 0
    argv = ["mc", "--d", "20", "--V", "40", "--N", "80", "--T", "4", "--signs", "prefix:2", "--weights", "mean",
            "--mu2", "2", "--seeds", "2", "--json"]
    assert main(argv) == 0
    doc = json.loads(capsys.readouterr().out)
    overlaps = [float(x) for x in doc["overlap"]["ci95"]]
    assert 0 <= overlaps[0] < float(doc["overlap"]["mean"]) < overlaps[1] <= 1 and overlaps == [0, 1]
    assert float(doc["top_eigenvalue"]["ci95"][0]) >= 0
