"""Every output field is documented (notes/outputs.md names each key a command prints), and every JSON document
carries the provenance of its run."""
import json
import re
import subprocess
from pathlib import Path

import pytest

from derive.cli import main as derive_main
from derive.model.schemes import OPTIONS
from derive.report.provenance import LIBRARIES
from verify.cli import main as verify_main

ROOT = Path(__file__).resolve().parents[1]
TINY = ROOT / "examples" / "sweeps" / "tiny.toml"

COMMANDS = [
    ("derive", ["weights", "--weights", "causal", "--T", "4", "--signs", "iid"]),
    ("derive", ["bulk", "--delta", "1", "--gamma", "1", "--kappa", "1", "--x", "1/2:2:3"]),
    ("derive", ["bulk", "--delta", "1", "--gamma", "1", "--T", "1", "--weights", "mean", "--x", "1", "--digits", "6"]),
    ("derive", ["spike", "--delta", "1/2", "--gamma", "1/4", "--alpha", "7/32", "--kappa", "1/8", "--mu2", "3/2"]),
    ("derive", ["spike", "--delta", "1/4", "--gamma", "1", "--T", "1", "--weights", "mean", "--signs", "iid",
                "--mu2", "3", "--digits", "6", "--d", "40", "--draws", "2"]),
    ("derive", ["formulas"]),
    ("verify", ["mc", "--d", "40", "--V", "80", "--N", "160", "--T", "2", "--signs", "iid", "--weights", "mean",
                "--mu2", "2", "--seeds", "2"]),
    ("verify", ["ladder", "--d", "40,80", "--seeds", "2", "--weights", "causal", "--mask", "strict"]),
    ("verify", ["attention-gap", "--d", "40,80", "--seeds", "2"]),
    # a scheme whose weights vary from sequence to sequence: its law's documents
    ("derive", ["weights", "--weights", "softmax", "--T", "4", "--tau", "1", "--mask", "strict", "--signs", "iid"]),
    ("derive", ["spike", "--delta", "1/2", "--gamma", "1/4", "--T", "4", "--weights", "softmax", "--tau", "1", "--mask",
                "strict", "--signs", "iid", "--mu2", "3", "--digits", "6"]),
    ("derive", ["bulk", "--delta", "1/2", "--gamma", "1/4", "--T", "4", "--weights", "softmax", "--tau", "1", "--mask",
                "strict", "--signs", "iid", "--x", "1", "--digits", "6"]),
    ("verify", ["mc", "--d", "40", "--V", "80", "--N", "160", "--T", "3", "--signs", "iid", "--weights", "softmax",
                "--tau", "1", "--mask", "strict", "--mu2", "3", "--seeds", "2"]),
    ("verify", ["attention-gap", "--d", "40,80", "--seeds", "2", "--scaling", "1/sqrt(d)", "--mask", "strict"]),
    ("verify", ["formula", "--quantity", "weights.causal", "--expr", "(harmonic(T-1)-harmonic(t-1))/(T-1)",
                "--examples", "20"]),
]

# keys that are data, not fields: the parameters of a point (a scheme's options among them), the quantities of a
# sweep, the libraries
DATA = {"delta", "gamma", "kappa", "alpha", "mu2", "T", "t", "weights", "d", "V", "N", *(o.name for o in OPTIONS),
        *LIBRARIES}


def _keys(doc) -> set:
    if isinstance(doc, dict):
        return set(doc) | {k for v in doc.values() for k in _keys(v)}
    if isinstance(doc, list):
        return {k for v in doc for k in _keys(v)}
    return set()


def _run(main, argv, capsys):
    status = main([*argv, "--json"])
    assert status in (0, 1), argv
    return json.loads(capsys.readouterr().out)


@pytest.fixture(scope="module")
def documented() -> set:
    return set(re.findall(r"`([A-Za-z_][A-Za-z0-9_]*)`", (ROOT / "notes" / "outputs.md").read_text()))


@pytest.mark.parametrize("prog,argv", COMMANDS, ids=lambda a: a if isinstance(a, str) else " ".join(a[:1]))
def test_every_key_a_command_prints_is_documented(prog, argv, documented, capsys):
    doc = _run(derive_main if prog == "derive" else verify_main, argv, capsys)
    missing = _keys(doc) - documented - DATA
    assert not missing, f"{prog} {argv[0]}: undocumented keys {sorted(missing)} (notes/outputs.md)"
    if isinstance(doc, dict):
        assert list(doc)[-1] == "provenance"


def test_sweep_documents_are_documented(tmp_path, documented, capsys):
    # the tiny sweep at T = 1, whose model's limit (every key of the summary) is exact and takes a second a point
    sweep = tmp_path / "tiny1.toml"
    sweep.write_text(TINY.read_text().replace("T = 4", "T = 1").replace('signs = "prefix:2"', 'signs = "iid"'))
    results = tmp_path / "tiny.jsonl"
    run = _run(verify_main, ["sweep", str(sweep), "--results", str(results), "--workers", "1", "--max-tasks", "4"],
               capsys)
    summary = _run(verify_main, ["sweep", "--summarize", str(results), "--figures", "", "--workers", "1"], capsys)
    assert summary["model_limit"]["computed"] and summary["points"][0]["theory"]["finite_vocabulary"]
    # the sweep's own normalized file and its grid's names are data
    summary.pop("sweep")
    for p in summary["points"]:
        p.pop("point")
    missing = (_keys(run) | _keys(summary)) - documented - DATA - {"top_eigenvalue", "overlap", "bulk_edge", "accuracy"}
    assert not missing, f"undocumented sweep keys {sorted(missing)}"


def test_provenance_names_the_code_and_the_libraries_that_ran(capsys):
    import mpmath
    import numba
    import numpy
    import scipy
    import sympy

    doc = _run(derive_main, ["weights", "--weights", "mean", "--T", "2"], capsys)
    p = doc.pop("provenance")
    # the rest of the document is what the library builds, byte for byte
    from derive.report.documents import weights_document
    from derive.model.spec import Model

    assert json.dumps(doc) == json.dumps(weights_document(Model(T=2, weights="mean"), 30))
    # versions read from the installed metadata agree with the imported modules' own
    assert p["libraries"] == {m.__name__: m.__version__ for m in (sympy, mpmath, numpy, scipy, numba)}
    import derive

    assert p["version"] == derive.__version__ and p["package"] == "attention-rmt"
    git = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "HEAD"], capture_output=True, text=True)
    if git.returncode == 0:
        assert p["commit"] == git.stdout.strip()
    assert re.fullmatch(r"[0-9a-f]{16}", p["source"])



def test_the_default_voice_is_documented(documented):
    # derive spike's at_dimension (skipped by the commands above, conftest), without the limit beside it (its cavity
    # populations cost seconds): an entry of each kind, the sampled one at d = 1e3 (V = N = 250, two draws), the others
    # unavailable (the token spikes they would take need a limit at 600 nonzero weights, refused before any work)
    import derive
    from derive.interface import at_dimensions
    from derive.report.documents import at_dimension_document

    m = derive.Model(delta=4, gamma=4, T=600, weights="mean", signs="iid", mu2=3)
    doc = {"at_dimension": at_dimension_document(at_dimensions(m, draws=2), 6)}
    assert [x["unavailable"] is None for x in doc["at_dimension"]] == [True, False, False, False]
    missing = _keys(doc) - documented - DATA
    assert not missing, f"derive spike: undocumented keys {sorted(missing)} (notes/outputs.md)"
