"""The claims ledger's machinery: a record per claim, verdicts decided by checks at run time.

A check is a function of the run's configuration (and, if the claim declares ``needs``, of the
results of the claims it needs). It computes its evidence and hands it to the claim's **rule**, a pure
function of the evidence alone (``rule_cN(evidence) -> {"verdict", "reason"[, "corrected"]}``), and returns
the rule's outcome with the derived statement, the evidence and optionally ``artifacts``: numbers the
figures reuse, kept out of the record. A check that raises, or that is skipped, makes its claim
``inconclusive`` with the reason, never ``confirmed``; a record whose check raised carries
``"errored": true`` (``verify claims`` then exits with status 1).
"""
from __future__ import annotations

import traceback
from dataclasses import dataclass, field
from typing import Callable

__all__ = ["VERDICTS", "Claim", "Result", "evaluate", "run_claim", "run_ledger", "errored", "decide"]

VERDICTS = ("confirmed", "corrected", "refuted", "inconclusive")


@dataclass(frozen=True)
class Claim:
    """A claim of the paper, its check, and the claims whose results the check reads (``needs``)."""

    id: str
    statement: str
    check: Callable[..., dict]
    needs: tuple[str, ...] = ()


@dataclass(frozen=True)
class Result:
    """What one claim's check produced: its ledger ``record`` (JSON-ready) and its ``artifacts``."""

    record: dict
    artifacts: dict = field(default_factory=dict)


def evaluate(claim: Claim, config: dict, prior: dict | None = None) -> Result:
    """Run one claim's check (with the :class:`Result` of each claim it needs, from ``prior``).

    The record is ``inconclusive``, with the reason in its evidence, when the check raised, said
    it was skipped (a true ``"skipped"`` entry, whose value is the reason), returned no evidence
    (missing, ``None`` or empty), returned something that is not a check's document, or needs a
    claim that has no result.
    """
    try:
        if claim.needs:
            missing = [k for k in claim.needs if k not in (prior or {})]
            if missing:
                return Result(_inconclusive(claim, "", {"missing": missing}))
            out = claim.check(config, {k: prior[k] for k in claim.needs})
        else:
            out = claim.check(config)
        if not isinstance(out, dict):
            raise TypeError(f"the check returned {type(out).__name__}, not a dict")
        verdict = out["verdict"]
        if verdict not in VERDICTS:
            raise ValueError(f"unknown verdict {verdict!r}")
        if out.get("skipped"):
            return Result(_inconclusive(claim, out.get("derived", ""), {"skipped": str(out["skipped"]),
                                                                        "evidence": out.get("evidence")}))
        evidence = out.get("evidence")
        if not isinstance(evidence, dict) or not evidence:
            return Result(_inconclusive(claim, out.get("derived", ""), {"error": f"the check returned no evidence "
                                                                                 f"(got {evidence!r}) for {verdict!r}"}))
        record = {"id": claim.id, "claim": claim.statement, "verdict": verdict,
                  "reason": str(out.get("reason", "")), "derived": out["derived"], "evidence": evidence}
        if "corrected" in out:
            record["corrected_statement"] = out["corrected"]
        return Result(record, dict(out.get("artifacts") or {}))
    except Exception as exc:  # a failed check must never read as a verdict
        record = _inconclusive(claim, "", {"error": f"{type(exc).__name__}: {exc}",
                                           "traceback": traceback.format_exc(limit=3)})
        record["errored"] = True
        return Result(record)


def decide(verdict: str, reason: str, corrected: str | None = None) -> dict:
    """A rule's outcome: ``{"verdict", "reason"}`` and, for ``corrected``, the corrected statement."""
    if verdict not in VERDICTS:
        raise ValueError(f"unknown verdict {verdict!r}")
    out = {"verdict": verdict, "reason": reason}
    if verdict == "corrected":
        out["corrected"] = corrected or ""
    return out


def run_claim(claim: Claim, config: dict, prior: dict | None = None) -> dict:
    """The ledger record of one claim (:func:`evaluate` without the artifacts)."""
    return evaluate(claim, config, prior).record


def run_ledger(claims, config: dict, log=None) -> dict:
    """Every claim in order, each with the results of the claims it needs: ``{id: Result}``."""
    results = {}
    for i, claim in enumerate(claims, 1):
        if log is not None:
            log(i, len(claims), claim)
        results[claim.id] = evaluate(claim, config, results)
    return results


def _inconclusive(claim: Claim, derived, evidence: dict) -> dict:
    reason = evidence.get("error") or evidence.get("skipped") or (
        f"needs {', '.join(evidence['missing'])}, which have no result" if "missing" in evidence else "")
    return {"id": claim.id, "claim": claim.statement, "verdict": "inconclusive", "reason": reason,
            "derived": derived if isinstance(derived, str) else "", "evidence": evidence}


def errored(records) -> bool:
    """Whether a check of ``records`` raised (its claim then reads inconclusive for that reason)."""
    return any(r.get("errored") for r in records)
