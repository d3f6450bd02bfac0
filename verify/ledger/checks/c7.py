"""C7: causal attention against mean pooling."""
from __future__ import annotations

import sympy as sp

__all__ = ["check_c7"]


def check_c7(cfg: dict) -> dict:
    """C7: exact alpha/kappa of causal attention against mean pooling, every T <= 64, prefix/suffix/markov."""
    from derive import optimality as opt

    rows = {k: opt.compare_causal_vs_mean(k, 64) for k in ("prefix", "suffix", "markov")}
    wins = opt.winning_block_lengths(rows["prefix"])
    suffix = opt.summarize(rows["suffix"])
    markov = opt.summarize(rows["markov"])
    pick = {mask: {n: wins[mask][n] for n in (4, 8, 16, 32, 64)} for mask in wins}
    suffix_causal_wins = sum(len(v["causal"]) for v in suffix.values())
    markov_r = lambda mask, who: sorted({f for f, _ in markov[mask][who]}, key=lambda x: float(sp.Rational(x.split(":")[1])))  # noqa: E731
    corrected = ("causal attention beats mean pooling in alpha/kappa for prefix:L exactly when L lies in a range "
                 "[2, L_max(T)] with L_max(T) < T, for every T >= 4 (T <= 3: see evidence) (e.g. strict mask: " + ", ".join(
                     f"T={n}: L<={v[1]}" for n, v in pick["strict"].items() if v) + "); it loses for L = T and "
                 "ties at L = 1 (R = I); for suffix:L (signal late) it never wins; for markov:r it wins iff r < 0")
    evidence = {"prefix_winning_L_range": pick, "suffix_rows_where_causal_wins": suffix_causal_wins,
                "markov_r_causal_wins": {m: markov_r(m, "causal") for m in markov},
                "markov_r_mean_wins": {m: markov_r(m, "mean") for m in markov}}
    no_win = {m: [n for n in sorted(wins[m]) if wins[m][n] is None] for m in wins}
    evidence["T_where_causal_never_wins_on_prefix"] = no_win
    holds_early = all(set(v) <= {1, 2, 3} for v in no_win.values()) and all(
        wins[m][n][0] == 2 and wins[m][n][1] < n for m in wins for n in range(4, 65))
    negative_r = {f"markov:{r}" for r in opt.MARKOV_GRID if r < 0}
    markov_iff = all(set(markov_r(m, "causal")) == negative_r for m in markov)
    verdict = "corrected" if holds_early and suffix_causal_wins == 0 and markov_iff else "inconclusive"
    return {"verdict": verdict, "derived": corrected, "evidence": evidence, "corrected": corrected}
