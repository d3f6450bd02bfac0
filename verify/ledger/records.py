"""The claims ledger's machinery: a record per claim, verdicts decided by checks at run time.

A check is a function of the run's configuration (and, if the claim declares ``needs``, of the
results of the claims it needs). It computes its evidence and hands it to the claim's **rule**, a pure
function of the evidence alone (``rule_cN(evidence) -> {"verdict", "reason"[, "corrected"]}``), and returns
the rule's outcome with the derived statement, the evidence and optionally ``artifacts``: numbers the
figures reuse, kept out of the record. A check that raises, or that is skipped, makes its claim
``inconclusive`` with the reason, never ``confirmed``; a record whose check raised carries
``"errored": true`` (``verify claims`` then exits with status 1).

A claim may name a ``prepare`` step: the part of its evidence that reads no other claim (C9's histograms), which
:func:`run_ledger` with several workers computes next to the claims it needs instead of after them; or several
independent parts (C4's comparisons), which it computes side by side. Every check draws from its own seeds, so the
records are the same whichever process computes them, and in whatever order.
"""
from __future__ import annotations

import traceback
from dataclasses import dataclass, field
from typing import Any, Callable

__all__ = ["VERDICTS", "Claim", "Result", "prepare", "prepare_part", "evaluate", "run_claim", "run_ledger", "check_workers", "errored", "decide",
           "setting"]

VERDICTS = ("confirmed", "corrected", "refuted", "inconclusive")


@dataclass(frozen=True)
class Claim:
    """A claim of the paper, its check, and the claims whose results the check reads (``needs``).

    ``prepare(config)``, if given, computes the part of the evidence that needs no other claim; the check then
    receives its value as a last argument. A tuple of such functions is a set of parts that several workers compute
    at once; the check then receives the tuple of their values. ``cost`` is the check's expected share of a run's
    time (its ``prepare`` included), used only to start the long checks first."""

    id: str
    statement: str
    check: Callable[..., dict]
    needs: tuple[str, ...] = ()
    prepare: Callable[[dict], Any] | tuple[Callable[[dict], Any], ...] | None = None
    cost: float = 1.0


@dataclass(frozen=True)
class Result:
    """What one claim's check produced: its ledger ``record`` (JSON-ready) and its ``artifacts``."""

    record: dict
    artifacts: dict = field(default_factory=dict)


class _Failed:
    """A ``prepare`` step that raised: its error, carried to the check's record."""

    def __init__(self, exc: BaseException):
        self.error = f"{type(exc).__name__}: {exc}"
        self.traceback = traceback.format_exc(limit=3)


_NOT_PREPARED = object()


def _parts(claim: Claim) -> tuple:
    return claim.prepare if isinstance(claim.prepare, tuple) else (claim.prepare,)


def prepare_part(claim: Claim, config: dict, part: int):
    """Part ``part`` of ``claim``'s ``prepare`` step, or the error it raised (which :func:`evaluate` turns into the
    record)."""
    try:
        return _parts(claim)[part](config)
    except Exception as exc:  # reported by evaluate, as the check's own error would be
        return _Failed(exc)


def _joined(claim: Claim, values: list):
    """The value the check receives from the parts' ``values``: the first failure, else the one value or the tuple."""
    failed = [v for v in values if isinstance(v, _Failed)]
    if failed:
        return failed[0]
    return tuple(values) if isinstance(claim.prepare, tuple) else values[0]


def prepare(claim: Claim, config: dict):
    """``claim``'s ``prepare`` step computed here, part after part (:func:`prepare_part`)."""
    return _joined(claim, [prepare_part(claim, config, i) for i in range(len(_parts(claim)))])


def evaluate(claim: Claim, config: dict, prior: dict | None = None, prepared=_NOT_PREPARED) -> Result:
    """Run one claim's check (with the :class:`Result` of each claim it needs, from ``prior``, and the value of
    its ``prepare`` step, computed here unless given as ``prepared``).

    The record is ``inconclusive``, with the reason in its evidence, when the check or its ``prepare`` raised,
    said it was skipped (a true ``"skipped"`` entry, whose value is the reason), returned no evidence
    (missing, ``None`` or empty), returned something that is not a check's document, or needs a
    claim that has no result.
    """
    try:
        args = [config]
        if claim.needs:
            missing = [k for k in claim.needs if k not in (prior or {})]
            if missing:
                return Result(_inconclusive(claim, "", {"missing": missing}))
            args.append({k: prior[k] for k in claim.needs})
        if claim.prepare is not None:
            if prepared is _NOT_PREPARED:
                prepared = prepare(claim, config)
            if isinstance(prepared, _Failed):
                return _errored(claim, prepared.error, prepared.traceback)
            args.append(prepared)
        out = claim.check(*args)
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
        return _errored(claim, f"{type(exc).__name__}: {exc}", traceback.format_exc(limit=3))


def _errored(claim: Claim, error: str, trace: str) -> Result:
    """The record of a check (or its ``prepare`` step) that raised: inconclusive, with ``"errored": true``."""
    record = _inconclusive(claim, "", {"error": error, "traceback": trace})
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


def setting(entries) -> str:
    """The ``T``, weights, ``d``, ratios and attention scale that evidence ``entries`` (dicts with ``T``, ``weights``,
    ``d``, ``delta``, ``gamma``, ``tau`` where recorded; any of them may be a list, a ladder's ``d`` or the schemes
    compared) rest on, as a reason names them: each value once, in the entries' order, so that two reasons about
    different settings cannot read as one contradicting the other.

    >>> setting([{"T": 1, "weights": "mean", "d": 600, "delta": "1"}, {"T": 2, "weights": "mean", "d": 600}])
    'T = 1 and 2 with mean weights at d = 600, delta = 1'
    >>> setting([{"T": 8, "weights": w, "d": [100, 400]} for w in ("mean", "causal", "optimal")])
    'T = 8 with mean, causal and optimal weights at d = 100 and 400'
    >>> setting([{"T": 8, "weights": "softmax", "d": 400, "tau": tau} for tau in ("1", "2")])
    'T = 8 with softmax weights at d = 400, tau = 1 and 2'
    """
    def values(name):
        seen = []
        for e in entries:
            for v in (e.get(name) if isinstance(e.get(name), list) else [e.get(name)]):
                if v is not None and str(v) not in seen:
                    seen.append(str(v))
        return ", ".join(seen[:-1]) + " and " + seen[-1] if len(seen) > 1 else "".join(seen)

    T, weights, d = values("T"), values("weights"), values("d")
    ratios = "".join(f", {name} = {values(name)}" for name in ("delta", "gamma", "tau") if values(name))
    return ((f"T = {T}" if T else "") + (f" with {weights} weights" if weights else "") + (f" at d = {d}" if d else "")
            + ratios).strip()


def run_claim(claim: Claim, config: dict, prior: dict | None = None) -> dict:
    """The ledger record of one claim (:func:`evaluate` without the artifacts)."""
    return evaluate(claim, config, prior).record


def run_ledger(claims, config: dict, log=None, workers: int | None = 1) -> dict:
    """Every claim, each with the results of the claims it needs: ``{id: Result}`` in the order of ``claims``.

    With ``workers > 1`` (``None``: one per core) the checks run in that many processes, never more than there are
    checks and ``prepare`` parts (each with one BLAS thread), the costliest first, each as soon as the claims it
    needs have results and its ``prepare`` parts theirs; the parts start at once (unless the claim needs one outside
    the run). ``log(i, n, claim)`` hears of each claim as it starts (``i - 1`` claims done)."""
    import os

    claims = list(claims)
    tasks = len(claims) + sum(len(_parts(c)) for c in claims if c.prepare is not None)
    workers = min((os.cpu_count() or 1) if workers is None else check_workers(workers), tasks)
    if workers <= 1:
        results = {}
        for i, claim in enumerate(claims, 1):
            if log is not None:
                log(i, len(claims), claim)
            results[claim.id] = evaluate(claim, config, results)
        return results
    results = _run_parallel(claims, config, log, workers)
    return {claim.id: results[claim.id] for claim in claims}


def check_workers(workers) -> int:
    """The number of ledger processes: an integer from 1 to 64 (``ParameterError`` naming ``workers``)."""
    from derive.numbers import check_count

    return check_count(workers, "workers", low=1, high=64)


def _prepare_task(claim: Claim, config: dict, part: int):
    return prepare_part(claim, config, part)


def _evaluate_task(claim: Claim, config: dict, prior: dict, prepared) -> Result:
    return evaluate(claim, config, prior, prepared)


def _one_blas_thread() -> None:
    from verify.threads import limit_blas_threads

    limit_blas_threads(1)


def _run_parallel(claims: list, config: dict, log, workers: int) -> dict:
    from concurrent.futures import FIRST_COMPLETED, wait

    from verify.workers import process_pool

    ids = {c.id for c in claims}
    # a need outside the run is missing: evaluate says so before preparing anything, as in a serial run
    waiting = sorted(claims, key=lambda c: -c.cost)
    early = [c for c in waiting if c.prepare is not None and all(k in ids for k in c.needs)]
    results, parts, prepared, running, n = {}, {c.id: {} for c in early}, {}, {}, len(claims)
    # spawned, not forked (a fork would copy the parent's BLAS and numba threads in an unknown state); stopped at
    # once by a signal, and dying with this process
    with process_pool(workers, initializer=_one_blas_thread) as pool:
        for claim in early:
            for i in range(len(_parts(claim))):
                running[pool.submit(_prepare_task, claim, config, i)] = ("prepare", claim, i)
        while waiting or running:
            for claim in [c for c in waiting if all(k in results or k not in ids for k in c.needs)
                          and (c.id in prepared or c not in early)]:
                waiting.remove(claim)
                if log is not None:
                    log(len(results) + 1, n, claim)
                prior = {k: results[k] for k in claim.needs if k in results}
                running[pool.submit(_evaluate_task, claim, config, prior,
                                    prepared.pop(claim.id, _NOT_PREPARED))] = ("check", claim, None)
            done, _ = wait(running, return_when=FIRST_COMPLETED)
            for future in done:
                kind, claim, part = running.pop(future)
                if kind == "check":
                    results[claim.id] = future.result()
                    continue
                parts[claim.id][part] = future.result()
                if len(parts[claim.id]) == len(_parts(claim)):
                    prepared[claim.id] = _joined(claim, [parts[claim.id][i] for i in range(len(_parts(claim)))])
    return results


def _inconclusive(claim: Claim, derived, evidence: dict) -> dict:
    reason = evidence.get("error") or evidence.get("skipped") or (
        f"needs {', '.join(evidence['missing'])}, which have no result" if "missing" in evidence else "")
    return {"id": claim.id, "claim": claim.statement, "verdict": "inconclusive", "reason": reason,
            "derived": derived if isinstance(derived, str) else "", "evidence": evidence}


def errored(records) -> bool:
    """Whether a check of ``records`` raised (its claim then reads inconclusive for that reason)."""
    return any(r.get("errored") for r in records)
