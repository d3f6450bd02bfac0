"""The command line of a scientific tool: version, valid values in --help, readable output, progress, threads."""
import json

import pytest

from derive.model.attention import MASK_OFFSETS
from derive.model.schemes import MASKS, scheme_syntaxes
from derive.cli import main as derive_main
from derive.report.text import readable
from verify.cli import main as verify_main
from verify.montecarlo.trials import PATHS
from verify.studies.finite_size import outlier_ladder

SCHEME_LIST = "{" + ",".join(scheme_syntaxes()) + "}"


@pytest.mark.parametrize("main, argv", [(derive_main, ["--version"]), (verify_main, ["--version"]),
                                        (derive_main, ["spike", "--version"]), (verify_main, ["formula", "--version"])])
def test_version(main, argv, capsys):
    with pytest.raises(SystemExit) as done:
        main(argv)
    assert done.value.code == 0
    assert "attention-rmt" in capsys.readouterr().out


@pytest.mark.parametrize("main, command, listed", [
    (derive_main, "weights", [SCHEME_LIST, "{inclusive,strict}", "gauss:rho"]),
    (verify_main, "mc", [SCHEME_LIST, "{inclusive,strict}", "{dense,implicit,mixed,auto}"]),
    (verify_main, "ladder", ["{inclusive,strict}", "{dense,implicit,mixed,auto}", "markov:r"]),
    (verify_main, "attention-gap", ["{inclusive,strict}"]),
    (verify_main, "formula", ["sample.overlap", "bulk.right_edge", "weights.causal"]),
])
def test_help_lists_the_valid_values(main, command, listed, capsys):
    with pytest.raises(SystemExit):
        main([command, "--help"])
    text = " ".join(capsys.readouterr().out.split())
    for values in listed:
        assert values in text, values


def test_the_listed_values_are_the_codes_own():
    assert MASKS == tuple(MASK_OFFSETS)
    assert set(PATHS) == {"dense", "implicit", "mixed", "auto"}


@pytest.mark.parametrize("main, argv", [
    (derive_main, ["spike", "--delta", "1/2", "--gamma", "1/4", "--alpha", "7/32", "--kappa", "1/8", "--mu2", "3/2"]),
    (derive_main, ["bulk", "--delta", "1/2", "--gamma", "1/4", "--kappa", "1/8", "--x", "0.1,0.3"]),
    (derive_main, ["weights", "--weights", "causal", "--T", "4", "--signs", "prefix:2"]),
    (verify_main, ["mc", "--d", "20", "--V", "40", "--N", "80", "--T", "2", "--signs", "iid", "--weights", "mean",
                   "--mu2", "2", "--seeds", "2", "--k", "2"]),
    (verify_main, ["formula", "--quantity", "signal.cosine2", "--expr", "mu2/(mu2+delta)", "--examples", "3"]),
])
def test_output_without_json_is_readable_text(main, argv, capsys):
    assert main(argv) == 0
    out = capsys.readouterr().out
    assert out.strip() and not out.lstrip().startswith(("{", "[")) and "{'" not in out and '{"' not in out


def test_readable_lays_out_nested_documents():
    text = readable({"a": {"b": [1, 2], "c": [[1, 2], [3, 4]]}, "d": [{"e": None}]})
    assert text.splitlines() == ["a:", "  b: 1, 2", "  c: [1, 2], [3, 4]", "d:", "  -", "    e: -"]


def test_ladder_reports_its_progress_in_units_of_cost_and_keeps_stdout_clean(capsys):
    reports = []
    outlier_ladder(["20", "40"], "1/2", "1/4", 2, "iid", "mean", "2", seeds=2, report=lambda d, t: reports.append((d, t)))
    assert [d for d, _ in reports] == [400, 800, 2400, 4000] and {t for _, t in reports} == {4000}
    assert verify_main(["ladder", "--d", "20,40", "--seeds", "2", "--T", "2", "--signs", "iid", "--json"]) == 0
    json.loads(capsys.readouterr().out)


def test_the_command_line_limits_blas_threads_unless_the_user_chose(monkeypatch):
    from threadpoolctl import threadpool_info, threadpool_limits
    from verify.threads import BLAS_THREAD_VARIABLES

    def blas_threads():
        return {pool["num_threads"] for pool in threadpool_info() if pool["user_api"] == "blas"}

    for name in BLAS_THREAD_VARIABLES:
        monkeypatch.delenv(name, raising=False)
    with threadpool_limits(limits=2, user_api="blas"):
        monkeypatch.setenv("OPENBLAS_NUM_THREADS", "2")
        with pytest.raises(SystemExit):
            verify_main(["mc", "--help"])
        assert blas_threads() == {2}
        monkeypatch.delenv("OPENBLAS_NUM_THREADS")
        with pytest.raises(SystemExit):
            verify_main(["mc", "--help"])
        assert blas_threads() == {1}


def test_the_ledger_writes_into_the_working_folder_by_default(capsys):
    with pytest.raises(SystemExit):
        verify_main(["claims", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    assert "default claims.md in the working folder" in text and "default figures/ in the working folder" in text
