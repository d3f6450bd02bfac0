"""The ledger machinery: a check that fails never reads as a verdict."""
from verify.ledger.records import Claim, run_claim
from verify.ledger.report import claims_markdown, verdict_table


def _boom(cfg):
    raise RuntimeError("simulated failure")


def test_failing_check_is_inconclusive_with_the_reason():
    rec = run_claim(Claim("CX", "a claim", _boom), {})
    assert rec["verdict"] == "inconclusive"
    assert "simulated failure" in rec["evidence"]["error"]


def test_unknown_verdict_is_inconclusive():
    rec = run_claim(Claim("CX", "a claim", lambda cfg: {"verdict": "probably", "derived": "", "evidence": {}}), {})
    assert rec["verdict"] == "inconclusive"


def test_reports_list_every_record():
    recs = [run_claim(Claim("C1", "one", lambda cfg: {"verdict": "confirmed", "derived": "d", "evidence": {"x": 1}}), {}),
            run_claim(Claim("C2", "two", _boom), {})]
    table = verdict_table(recs)
    assert "C1" in table and "confirmed" in table and "inconclusive" in table
    md = claims_markdown(recs, {"quick": True, "seconds": 1.0, "date": "2026-12-02"})
    assert "## C1: confirmed" in md and "## C2: inconclusive" in md
