"""The claims ledger's machinery: a record per claim, verdicts decided by checks at run time.

A check returns its verdict, the derived statement and the evidence; a check that raises,
or that is skipped, makes its claim ``inconclusive`` with the reason, never ``confirmed``.
"""
from __future__ import annotations

import traceback
from dataclasses import dataclass
from typing import Callable

VERDICTS = ("confirmed", "corrected", "refuted", "inconclusive")


@dataclass(frozen=True)
class Claim:
    id: str
    statement: str
    check: Callable[[dict], dict]


def run_claim(claim: Claim, config: dict) -> dict:
    """Run one claim's check and return its ledger record."""
    try:
        out = claim.check(config)
        verdict = out["verdict"]
        if verdict not in VERDICTS:
            raise ValueError(f"unknown verdict {verdict!r}")
        record = {"id": claim.id, "claim": claim.statement, "verdict": verdict,
                  "derived": out["derived"], "evidence": out["evidence"]}
        if "corrected" in out:
            record["corrected_statement"] = out["corrected"]
        return record
    except Exception as exc:  # a failed check must never read as a verdict
        return {"id": claim.id, "claim": claim.statement, "verdict": "inconclusive",
                "derived": "", "evidence": {"error": f"{type(exc).__name__}: {exc}",
                                            "traceback": traceback.format_exc(limit=3)}}

