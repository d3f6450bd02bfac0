"""C9: the simulations taken together."""
from __future__ import annotations

__all__ = ["check_c9"]


def check_c9(cfg: dict, needs: dict) -> dict:
    """C9: the simulation checks of C1, C2, C4 taken together."""
    records = {k: r.record for k, r in needs.items()}
    hist = records["C1"]["evidence"].get("esd_vs_claimed_density", {})
    runs = records["C2"]["evidence"].get("runs", []) + records["C4"]["evidence"].get("runs", [])
    ok_hist = bool(hist) and all(h["pass"] for h in hist.values())
    ok_runs = bool(runs) and all(r["agree"] for r in runs)
    evidence = {"histograms_pass": ok_hist, "outlier_and_overlap_runs": len(runs),
                "runs_agreeing": sum(r["agree"] for r in runs)}
    derived = ("eigenvalue histograms follow the derived density within the O(1/d) Kolmogorov bound; outlier "
               "locations, overlaps and detectability (outlier present or not) agree with the derived formulas")
    if ok_runs and ok_hist:
        return {"verdict": "confirmed", "derived": derived, "evidence": evidence}
    if ok_runs and hist.get("mean", {}).get("pass"):
        corrected = ("outlier locations, overlaps and detectability agree with the derived formulas; histograms "
                     "follow the claimed density within O(1/d) for mean pooling, but for concentrated weights "
                     "(causal, optimal) the distance exceeds that bound, as the correction of C1 allows")
        evidence["histograms_failing"] = [k for k, h in hist.items() if not h["pass"]]
        return {"verdict": "corrected", "derived": corrected, "evidence": evidence, "corrected": corrected}
    return {"verdict": "inconclusive", "derived": derived, "evidence": evidence}
