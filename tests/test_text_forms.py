"""Outputs that explain themselves: what a command prints without ``--json`` says where its files went, what its
errors and its rounding mean, and where each number belongs, so that a reader needs no note to read it."""
import re

import pytest

from derive.cli import main as derive_main
from verify.cli import main as verify_main


def _text(main, argv, capsys) -> tuple[str, str]:
    assert main(argv) in (0, 1), argv
    captured = capsys.readouterr()
    return captured.out, captured.err


def test_verify_claims_says_where_its_report_and_evidence_went(monkeypatch, tmp_path, capsys):
    import verify.ledger.claims as ledger
    from verify.ledger.records import Claim

    claim = Claim("CA", "a claim", lambda cfg: {"verdict": "confirmed", "reason": "r", "derived": "d", "evidence": {}})
    monkeypatch.setattr(ledger, "CLAIMS", [claim])
    notes = tmp_path / "out" / "ledger.md"
    out, err = _text(verify_main, ["claims", "--quick", "--notes", str(notes), "--figures", "", "--workers", "1"], capsys)
    assert f"report: {notes} (each claim, its verdict and the reason" in out
    assert f"evidence: {notes.with_suffix('.json')} (every number behind the verdicts" in out
    assert "figures: none drawn (--figures '')" in out
    assert "verdicts: confirmed: the claim holds as stated" in out and "inconclusive: this run cannot resolve it" in out
    assert f"wrote {notes}" in err and f"wrote {notes.with_suffix('.json')}" in err
    out, _ = _text(verify_main, ["claims", "--quick", "--notes", "", "--figures", "", "--workers", "1"], capsys)
    assert "report: none written (--notes '')" in out
