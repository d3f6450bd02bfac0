"""Determinism and integrity: the same seed gives the same bytes in two processes, another seed
another sample; the claims ledger never confirms a check that errored, was skipped or gave no
evidence."""
from __future__ import annotations

import contextlib
import io
import json
import os
import sys

import processes
from verify.cli import main as verify_main
from verify.ledger.records import Claim, run_claim

TINY = ["mc", "--d", "10", "--V", "20", "--N", "24", "--T", "3", "--signs", "prefix:2", "--weights", "mean",
        "--mu2", "3", "--seeds", "3", "--law", "gaussian-equivalent", "--json"]


def _subprocess_bytes(argv) -> bytes:
    # a fresh interpreter each time: nothing cached or seeded in this process can leak into it
    env = dict(os.environ, PYTHONHASHSEED="random")
    code = "import sys; from verify.cli import main; sys.exit(main(sys.argv[1:]))"
    done = processes.run([sys.executable, "-c", code, *argv], capture_output=True, env=env, check=True, cpu=300)
    return done.stdout


def _in_process(argv) -> dict:
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert verify_main(argv) == 0
    return json.loads(out.getvalue())


def test_same_seed_same_bytes_across_two_processes():
    first, second = _subprocess_bytes(TINY + ["--seed0", "7"]), _subprocess_bytes(TINY + ["--seed0", "7"])
    assert first and first == second
    # and the same numbers in this process
    assert json.loads(first) == _in_process(TINY + ["--seed0", "7"])


def test_different_seeds_give_different_samples():
    a, b = _in_process(TINY + ["--seed0", "7"]), _in_process(TINY + ["--seed0", "8"])
    assert a["theory"] == b["theory"]
    # every trial differs: continuous eigenvalues of independent draws coincide with probability 0
    assert all(x != y for x, y in zip(a["top_eigenvalues"], b["top_eigenvalues"]))
    # the trials of one run are independent of each other too
    assert len({tuple(row) for row in a["top_eigenvalues"]}) == 3


def _claim(check):
    return Claim("CX", "a claim", check)


def test_a_check_that_raises_is_inconclusive_with_the_reason():
    def boom(cfg):
        raise ZeroDivisionError("no seeds left")

    rec = run_claim(_claim(boom), {})
    assert rec["verdict"] == "inconclusive" and "ZeroDivisionError: no seeds left" in rec["evidence"]["error"]


def test_a_skipped_check_is_inconclusive_with_the_reason():
    rec = run_claim(_claim(lambda cfg: {"verdict": "confirmed", "derived": "d", "evidence": {"n": 3},
                                        "skipped": "the Monte Carlo part needs --full"}), {})
    assert rec["verdict"] == "inconclusive" and rec["evidence"]["skipped"] == "the Monte Carlo part needs --full"


def test_a_check_without_evidence_is_inconclusive():
    for out in ({"verdict": "confirmed", "derived": "d"}, {"verdict": "confirmed", "derived": "d", "evidence": {}},
                {"verdict": "corrected", "derived": "d", "evidence": None}):
        rec = run_claim(_claim(lambda cfg, out=out: out), {})
        assert rec["verdict"] == "inconclusive" and "no evidence" in rec["evidence"]["error"], out


def test_a_check_that_returns_nothing_is_inconclusive():
    rec = run_claim(_claim(lambda cfg: None), {})
    assert rec["verdict"] == "inconclusive" and "NoneType" in rec["evidence"]["error"]


def test_a_check_with_evidence_keeps_its_verdict():
    rec = run_claim(_claim(lambda cfg: {"verdict": "confirmed", "derived": "d", "evidence": {"agree": True}}), {})
    assert rec["verdict"] == "confirmed" and rec["evidence"] == {"agree": True}


_PROBE = """
import importlib, sys
sys.path.insert(0, sys.argv[1])
import tests.conftest  # the profile, and the pinned pool of constants
for name in sys.argv[2:]:
    importlib.import_module(name)
from hypothesis import given
from tests.strategies import ratios, scales, mc_cases
seen = []
@given(ratios, ratios, scales, mc_cases())
def probe(d, g, k, case):
    seen.append((d, g, k, case))
probe()
print(repr(seen))
"""


def test_hypothesis_examples_do_not_depend_on_what_was_imported_before():
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

    def examples(*modules):
        done = processes.run([sys.executable, "-c", _PROBE, root, *modules], capture_output=True, text=True,
                             check=True, cpu=300)
        return done.stdout

    alone = examples()
    assert alone.count("(") > 10
    assert examples("tests.test_model", "tests.test_optimality", "derive.gaussian.bulk") == alone
