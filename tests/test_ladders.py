"""The finite-size ladder and the attention-vs-limit study: structure, seeding, exact cases, errors."""
import numpy as np
import pytest

from verify.studies import attention_gap as gap
from verify.studies import finite_size as fs
from verify.montecarlo.attention import attention_weights, sequence_attention_weights
from verify.cli import main
from tests.trial_cases import model as trial_model
from derive import Model

TINY = dict(delta="1/2", gamma="1/4", T=4, signs="prefix:2", mu2="3", seeds=3)


def test_chunked_attention_weights_equal_the_direct_ones():
    rng = np.random.default_rng(0)
    E = rng.standard_normal((16, 40))
    tokens = rng.integers(0, 40, size=(23, 5))
    X = np.transpose(E[:, tokens], (1, 2, 0))
    for mask in ("inclusive", "strict"):
        np.testing.assert_allclose(sequence_attention_weights(E, tokens, 1.5, mask, chunk=4),
                                   attention_weights(X, 1.5, mask), rtol=1e-14)


def test_at_zero_temperature_real_attention_is_its_limit_exactly():
    # tau = 0 makes every softmax row uniform on its window: the data weights are the limit
    # weights for every sequence, so both covariances are the same matrix
    w, _, _ = fs.scheme_prediction(Model(delta="1/2", gamma="1/4", T=4, signs="prefix:2", weights="causal", mu2=3,
                                         centered=True, tau="0", mask="strict"))
    t = gap.paired_trial(trial_model(40, 80, 160, 4, "prefix:2", 3), w, 5, 0.0, "strict")
    assert t["weight_spread"] < 1e-15
    np.testing.assert_allclose(t["attention"], t["limit"], rtol=1e-12)


def test_a_rung_does_not_depend_on_the_other_rungs():
    a = fs.outlier_ladder([40, 80], **TINY, scheme="mean")
    b = fs.outlier_ladder([80, 120], **TINY, scheme="mean")
    assert a["rows"][1] == b["rows"][0]
    assert a["rows"][0]["V"] == 80 and a["rows"][0]["N"] == 160
    assert set(a["fits"]) >= {"eigenvalue_rms", "overlap_rms"}
    # a bias gets a rate only if resolved from zero at every rung
    for name in ("eigenvalue", "overlap"):
        assert (f"{name}_bias" in a["fits"]) == all(r[name]["bias_resolved"] for r in a["rows"])


def test_a_file_family_is_read_once_per_ladder(tmp_path, monkeypatch):
    """Issue 41: the ladder handed the family down as its spec, and a file family was read five times for three
    rungs."""
    from derive.model import realizable

    R = tmp_path / "R.csv"
    R.write_text("1,1/2,1/4,1/8\n1/2,1,1/2,1/4\n1/4,1/2,1,1/2\n1/8,1/4,1/2,1\n")
    reads = []
    load = realizable.load_correlation_file
    monkeypatch.setattr(realizable, "load_correlation_file", lambda *a, **k: reads.append(a) or load(*a, **k))
    doc = fs.outlier_ladder([40, 60, 80], **{**TINY, "signs": f"file:{R}", "seeds": 2}, scheme="mean")
    assert len(doc["rows"]) == 3 and len(reads) == 1


def test_attention_gap_document_and_its_determinism():
    a = gap.attention_gap([40, 60], TINY["delta"], TINY["gamma"], 4, "prefix:2", "1", "inclusive", "3", seeds=2)
    assert a == gap.attention_gap([40, 60], TINY["delta"], TINY["gamma"], 4, "prefix:2", "1", "inclusive", "3", seeds=2)
    row = a["rows"][0]
    assert row["weight_spread"]["mean"] > 0 and set(row["eigenvalue"]) >= {"gap", "gap_rms", "gap_resolved"}
    assert sum(a["limit_weights"]) == pytest.approx(1)


@pytest.mark.parametrize("argv, parameter", [
    (["ladder", "--d", "100"], "d"),
    (["ladder", "--d", "100,x"], "d"),
    (["ladder", "--delta", "-1"], "delta"),
    (["ladder", "--seeds", "1"], "seeds"),
    (["ladder", "--mu2", "0"], "mu2"),
    (["ladder", "--path", "fast"], "path"),
    (["attention-gap", "--mask", "both"], "mask"),
    (["attention-gap", "--gamma", "0"], "gamma"),
])
def test_bad_ladder_input_exits_2_with_one_line(argv, parameter, capsys):
    assert main(argv + ["--d", "40,60"] * (argv[1:2] != ["--d"]) + ["--json"]) == 2
    out, err = capsys.readouterr()
    assert out == "" and len(err.strip().splitlines()) == 1 and parameter in err


def test_ladder_command_prints_strings_for_reals(capsys):
    assert main(["ladder", "--d", "40,60", "--seeds", "2", "--T", "4", "--mu2", "3", "--json"]) == 0
    import json
    doc = json.loads(capsys.readouterr().out)
    assert isinstance(doc["rows"][0]["eigenvalue"]["rms"], str)
    assert doc["rows"][0]["eigenvalue"]["bias"]["ci95"][0] is not None
