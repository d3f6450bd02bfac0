"""C6: the limit weights of causal attention."""
from __future__ import annotations

import sympy as sp

from verify.ledger.records import decide, setting
from verify.ledger.statements import c6_corrected
from verify.stats import finite_size_fit

__all__ = ["LADDER", "corrected", "evidence_c6", "rule_c6", "check_c6"]

LADDER = (32, 128, 512, 2048)
"""The dimensions at which real softmax attention (``T = 8``, ``tau = 1``) is compared with its limit."""

corrected = c6_corrected
"""The corrected statement (:func:`verify.ledger.statements.c6_corrected`, which ``verify formula`` reads too)."""


def evidence_c6(cfg: dict) -> dict:
    """The derived limit weights of both masks against the claimed harmonic form (exact, ``T`` up to 32), and
    real attention against its limit over a ladder of ``d`` with the fitted rate of its deviation."""
    from derive.model.attention import causal_weights
    from verify.studies.attention_gap import weight_deviation

    def normalized(v):
        return [x / sum(v) for x in v]

    def harmonic(n):
        return normalized([sp.harmonic(n - 1) - sp.harmonic(t - 1) for t in range(1, n + 1)])

    equal = {mask: all(causal_weights(n, tv, mask) == harmonic(n) for n in range(2, 33) for tv in (0, 2))
             for mask in ("strict", "inclusive")}
    monotone = all(all(a >= b for a, b in zip(w, w[1:])) for n in (8, 32) for mask in ("inclusive", "strict")
                   for w in (causal_weights(n, 0, mask), [float(x) for x in causal_weights(n, 3, mask)]))
    real = {}
    for mask in ("inclusive", "strict"):
        limit = [float(x) for x in causal_weights(8, 1, mask)]
        rows = [weight_deviation(d, 8, 1.0, mask, limit, n=200, seed=7) for d in LADDER]
        fit = finite_size_fit(LADDER, [r["per_sequence"] for r in rows])
        real[mask] = {"T": 8, "weights": "causal", "tau": "1", "d": list(LADDER),
                      "per_sequence_max_dev": [r["per_sequence"] for r in rows],
                      "mean_weights_max_dev": [r["bias"] for r in rows], "rate": fit.rate,
                      "rate_ci95": list(fit.rate_ci95)}
    return {"claimed_form_equals_limit_T_2_to_32_tau_0_and_2": equal,
            "monotone_decreasing": monotone,
            "real_attention_tau_1_T8": real}


def rule_c6(evidence: dict) -> dict:
    """The verdict of C6 from its evidence alone.

    * inconclusive: real attention is not seen to converge to its derived limit (the fitted rate of its deviation
      is not above 0 for some mask);
    * refuted: the claimed form is the limit for neither mask, or a limit is not decreasing;
    * corrected: the claimed form is the limit for one mask only (the claim must say which);
    * confirmed: the claimed form is the limit for both masks.
    """
    real = evidence.get("real_attention_tau_1_T8") or {}
    equal = evidence.get("claimed_form_equals_limit_T_2_to_32_tau_0_and_2") or {}
    exact = "T = 2 to 32 with causal weights, tau = 0 and 2; exact, in the limit d -> oo"
    ladder = setting(list(real.values()))
    ladder = f" ({ladder})" if ladder else ""
    if not real or not equal or any(r["rate_ci95"][0] <= 0 for r in real.values()):
        return decide("inconclusive", f"real attention{ladder} is not seen to converge to its derived limit")
    if not any(equal.values()) or not evidence.get("monotone_decreasing"):
        return decide("refuted", f"the claimed harmonic form is the limit for neither mask ({exact}), or a limit is "
                                 "not decreasing (T = 8 and 32, tau = 0 and 3)")
    if all(equal.values()):
        return decide("confirmed", f"the claimed form is the limit for both masks ({exact}), and real attention"
                                   f"{ladder} converges to it")
    which = [m for m, e in equal.items() if e]
    return decide("corrected", f"the claimed form is the limit for the {which[0]} mask only ({exact}); real attention"
                               f"{ladder} converges to the derived limit of each mask", corrected())


def check_c6(cfg: dict) -> dict:
    """C6: the derived limit weights against the claimed harmonic form, and real attention."""
    evidence = evidence_c6(cfg)
    return {**rule_c6(evidence), "derived": corrected(), "evidence": evidence}
