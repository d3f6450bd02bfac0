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
    """Run one claim's check and return its ledger record.

    The record is ``inconclusive``, with the reason in its evidence, when the check raised, said
    it was skipped (a true ``"skipped"`` entry, whose value is the reason), returned no evidence
    (missing, ``None`` or empty) or returned something that is not a check's document.
    """
    try:
        out = claim.check(config)
        if not isinstance(out, dict):
            raise TypeError(f"the check returned {type(out).__name__}, not a dict")
        verdict = out["verdict"]
        if verdict not in VERDICTS:
            raise ValueError(f"unknown verdict {verdict!r}")
        if out.get("skipped"):
            return _inconclusive(claim, out.get("derived", ""), {"skipped": str(out["skipped"]),
                                                                 "evidence": out.get("evidence")})
        evidence = out.get("evidence")
        if not isinstance(evidence, dict) or not evidence:
            return _inconclusive(claim, out.get("derived", ""), {"error": f"the check returned no evidence "
                                                                          f"(got {evidence!r}) for {verdict!r}"})
        record = {"id": claim.id, "claim": claim.statement, "verdict": verdict,
                  "derived": out["derived"], "evidence": evidence}
        if "corrected" in out:
            record["corrected_statement"] = out["corrected"]
        return record
    except Exception as exc:  # a failed check must never read as a verdict
        return _inconclusive(claim, "", {"error": f"{type(exc).__name__}: {exc}",
                                         "traceback": traceback.format_exc(limit=3)})


def _inconclusive(claim: Claim, derived, evidence: dict) -> dict:
    return {"id": claim.id, "claim": claim.statement, "verdict": "inconclusive",
            "derived": derived if isinstance(derived, str) else "", "evidence": evidence}

