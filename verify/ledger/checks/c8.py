"""C8: downstream classification, where the claimed order and the alpha/kappa order agree and where they differ."""
from __future__ import annotations

import numpy as np

from verify.ledger.checks.common import AGREEMENT_LEVEL, DELTA, GAMMA, T, rung, scheme_floats
from verify.ledger.records import decide, setting
from verify.stats import mean_ci

__all__ = ["CLAIMED_ORDER", "FAMILIES", "MU2_GRID", "evidence_c8", "rule_c8", "check_c8"]

CLAIMED_ORDER = ("mean", "causal", "optimal")
"""The claim's ranking, worst to best."""

FAMILIES = ("prefix:3", "suffix:2")
"""Signal early (the orders agree) and signal late (causal attention has the lower ``alpha/kappa`` of the two)."""

MU2_GRID = (0.25, 0.5, 1.0, 2.0)

SATURATED = 0.99
"""A tie counts as consistent with a ranking where one of the two schemes is saturated (accuracy at least this)."""


def _pair(acc_lo: np.ndarray, acc_hi: np.ndarray) -> dict:
    mean, lo, hi = mean_ci(acc_hi - acc_lo, AGREEMENT_LEVEL)
    status = "higher" if lo > 0 else "reversed" if hi < 0 else "tied"
    return {"mean": mean, "ci": [lo, hi], "status": status,
            "saturated": bool(max(acc_hi.mean(), acc_lo.mean()) >= SATURATED)}


def evidence_c8(cfg: dict) -> dict:
    """Ridge classification accuracy of the three schemes (paired seeds) on each family of :data:`FAMILIES`,
    with the paired difference of every pair at every ``mu2``."""
    from verify.studies.classification import accuracy_curves

    d, seeds = cfg["classify_d"], cfg["classify_seeds"]
    V, N = rung(d, DELTA, GAMMA)
    out = {"T": T, "weights": list(CLAIMED_ORDER), "d": d, "delta": str(DELTA), "gamma": str(GAMMA), "V": V, "N": N,
           "seeds": seeds, "level": AGREEMENT_LEVEL, "mu2": list(MU2_GRID), "families": {}}
    for i, signs in enumerate(FAMILIES):
        schemes = {name: scheme_floats(name, signs) for name in CLAIMED_ORDER}
        ratio = {n: a / k for n, (_, a, k) in schemes.items()}
        acc = accuracy_curves({n: schemes[n][0] for n in schemes}, MU2_GRID, d, V, N, T, signs, seeds, 300 + i)
        pairs = {f"{hi}-{lo}": [_pair(acc[lo][:, j], acc[hi][:, j]) for j in range(len(MU2_GRID))]
                 for k, lo in enumerate(CLAIMED_ORDER) for hi in CLAIMED_ORDER[k + 1:]}
        out["families"][signs] = {"alpha_over_kappa": ratio, "alpha_over_kappa_order": sorted(ratio, key=ratio.get),
                                  "accuracy": {n: [list(mean_ci(acc[n][:, j])) for j in range(len(MU2_GRID))]
                                               for n in acc},
                                  "pairs": pairs}
    return out


def _ranked(pairs: dict, order) -> str:
    """How the accuracy relates to ``order`` (worst to best): ``"follows"`` (every adjacent pair higher at some
    ``mu2``, never reversed, ties only where saturated), ``"reversed"`` (a pair significantly the other way) or
    ``"unresolved"``."""
    verdicts = []
    for lo, hi in zip(order, order[1:]):
        rows = pairs.get(f"{hi}-{lo}")
        sign = 1
        if rows is None:
            rows, sign = pairs[f"{lo}-{hi}"], -1
        status = [r["status"] if sign == 1 else {"higher": "reversed", "reversed": "higher"}.get(r["status"], "tied")
                  for r in rows]
        if "reversed" in status:
            return "reversed"
        ties_ok = all(s != "tied" or r["saturated"] for s, r in zip(status, rows))
        verdicts.append("higher" in status and ties_ok)
    return "follows" if all(verdicts) else "unresolved"


def rule_c8(evidence: dict) -> dict:
    """The verdict of C8 from its evidence alone.

    * inconclusive: no family, or a family where the accuracy neither follows nor reverses the ``alpha/kappa``
      order (pairs not separated);
    * refuted: on some family the accuracy reverses a pair of the ``alpha/kappa`` order;
    * corrected: the accuracy follows ``alpha/kappa`` on every family, and on some family that order is not the
      claimed one (optimal > causal > mean);
    * confirmed: the accuracy follows ``alpha/kappa`` on every family and that order is the claimed one.
    """
    families = evidence.get("families") or {}
    if not families:
        return decide("inconclusive", "no classification in the evidence")
    status = {f: _ranked(v["pairs"], v["alpha_over_kappa_order"]) for f, v in families.items()}
    where = setting([{k: evidence.get(k) for k in ("T", "weights", "d", "delta", "gamma")}])
    where = f" ({where})" if where else ""
    if any(s == "reversed" for s in status.values()):
        bad = [f for f, s in status.items() if s == "reversed"]
        return decide("refuted", f"on {', '.join(bad)}{where} the accuracy significantly reverses the alpha/kappa order")
    if any(s != "follows" for s in status.values()):
        return decide("inconclusive", "the accuracy does not separate the schemes on "
                      + ", ".join(f for f, s in status.items() if s != "follows") + where)
    differ = [f for f, v in families.items() if tuple(v["alpha_over_kappa_order"]) != CLAIMED_ORDER]
    if differ:
        f = differ[0]
        order = " < ".join(families[f]["alpha_over_kappa_order"])
        return decide("corrected", f"the accuracy follows alpha/kappa on every family{where}; on {f} that order is "
                                   f"{order}",
                      "ridge classification accuracy ranks the pooling schemes by alpha/kappa; optimal > causal > mean "
                      f"holds where alpha/kappa orders them so (signal early, prefix:L), not in general (on {f}: "
                      f"{order})")
    return decide("confirmed", f"the accuracy follows alpha/kappa, which is the claimed order, on every family{where}")


def check_c8(cfg: dict) -> dict:
    """C8: ridge classification accuracy against the alpha/kappa order and the claimed order."""
    evidence = evidence_c8(cfg)
    derived = ("label = the shared sign of the block (prefix:3 or suffix:2, T = 8); N train, N/2 test sequences from the "
               "same table; ridge (C C^T/N + kappa I)^{-1} C y/N with lambda = kappa fixed in advance; no theoretical "
               "accuracy is derived here. Ranking by alpha/kappa: " + "; ".join(
                   f"{f}: " + " < ".join(v["alpha_over_kappa_order"]) for f, v in evidence["families"].items()))
    # every family is drawn: the claimed order holds on the first, C8's correction rests on the second
    curves = {f: (list(MU2_GRID), {n: tuple(np.array(v).T) for n, v in fam["accuracy"].items()},
                  fam["alpha_over_kappa_order"]) for f, fam in evidence["families"].items()}
    setting = {k: evidence[k] for k in ("d", "V", "N", "seeds")}
    return {**rule_c8(evidence), "derived": derived, "evidence": evidence,
            "artifacts": {"accuracy": {"families": curves, **setting}}}
