r"""A sweep summary's model's limit along a ``mu2`` axis: the models of one law (alike but for ``mu2``) solved in a
row, sharing the scan, the replicas' populations and ``mu2_critical``, against the code before, which solved each
model alone (``python -m benchmarks cost --parts lawaxis``).

The sweep is one law of ``examples/sweeps/demo_phase.toml`` (its settings, causal weights, ``gamma = 1/5``, its 12
values of ``mu2``): run once (seconds), then summarized with both laws by each code as a whole process on an empty
derivation cache (cold: SymPy derives, every limit is computed), ``--workers 1``. Each summary's finite-vocabulary
entries are read back, so the table also says how far the two codes' estimates lie apart against their stated errors.
The whole demo diagram is 30 such laws.
"""
from __future__ import annotations

import json
import os
import sys
import tempfile
from pathlib import Path

__all__ = ["BASELINE", "SLICE", "ROUNDS", "run", "markdown"]

BASELINE = "b7b3adf"
"""The code before: each model's limit computed alone (the scan, populations and ``mu2_critical`` of every ``mu2``)."""

SLICE = """[sweep]
root_seed = 20260602
seeds = 2
outputs = ["top_eigenvalues", "overlaps", "bulk_edge"]
k = 3

[model]
d = 200
delta = "1/2"
T = 8
signs = "prefix:3"
centered = true
mask = "strict"

[grid]
weights = ["causal"]
mu2 = {from = "1/4", to = 3, num = 12}
gamma = ["1/5"]
"""
"""One law of ``examples/sweeps/demo_phase.toml``: its settings, one weight scheme and one ``gamma``."""

ROUNDS = {"full": 2, "quick": 1, "tiny": 1}


def _limits(doc: dict) -> list:
    """``(mu2, eigenvalue, its error, overlap, its error)`` of each point's finite-vocabulary entry."""
    out = []
    for p in doc["points"]:
        fv = p["theory"]["finite_vocabulary"]
        out.append((p["point"]["mu2"], fv["top_eigenvalue"], fv["errors"]["top_eigenvalue"], fv["overlap"],
                    fv["errors"]["overlap"]))
    return out


def run(mode: str, log=sys.stderr) -> dict:
    """The slice run once, then summarized by each code, :data:`ROUNDS` round-robin, each summary a fresh process on a
    fresh derivation cache. Tiny mode (the harness only) summarizes this checkout once without the model's limit."""
    from benchmarks.processes import ROOT, baseline_tree, code_env, timed

    tiny = mode == "tiny"
    out = {"rounds": ROUNDS[mode], "baseline": BASELINE, "load_start": os.getloadavg()[0], "times": {}, "limits": {}}
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        (tmp / "slice.toml").write_text(SLICE)
        codes = {"now": ROOT, **({} if tiny else {"before": baseline_tree(tmp, BASELINE)})}
        print("bench: the slice's sweep ...", file=log, flush=True)
        timed([sys.executable, "-m", "verify.cli", "sweep", "slice.toml", "--results", "slice.jsonl", "--workers", "1"],
              code_env(ROOT, 1, tmp / "cache-sweep"), tmp)
        summarize = [sys.executable, "-m", "verify.cli", "sweep", "--summarize", "slice.jsonl", "--workers", "1",
                     "--json", *(["--skip-model-limit"] if tiny else [])]
        for r in range(out["rounds"]):
            for name, code in codes.items():
                print(f"bench: summary by {name}, round {r + 1} ...", file=log, flush=True)
                t = timed(summarize, code_env(code, 1, tmp / f"cache-{name}-{r}"), tmp)
                doc = json.loads(t.pop("stdout"))
                out["times"].setdefault(name, []).append(t)
                if not tiny:
                    out["limits"][name] = _limits(doc)
    out["load_end"] = os.getloadavg()[0]
    return out


def markdown(r: dict) -> list:
    """The part's section: each code's median CPU and wall time, before's over now's, and the two codes' estimates
    side by side with the largest difference in units of the errors they state."""
    import statistics

    med = {name: {k: statistics.median(t[k] for t in runs) for k in ("cpu_s", "wall_s")}
           for name, runs in r["times"].items()}
    lines = ["## A sweep summary's model's limit along a mu2 axis", "",
             "One law of `examples/sweeps/demo_phase.toml` (T = 8, prefix:3, strict causal weights, delta = 1/2, gamma = "
             "1/5, centered, its 12 values of mu2 from 1/4 to 3), summarized with both laws (`verify sweep --summarize "
             "--workers 1`) as a whole process on an empty derivation cache: SymPy derives, and every model's limit is "
             f"computed. `before` is the code of {r['baseline']} (each model's limit alone: the scan, the replicas' "
             "populations and mu2_critical again at every mu2), `now` this checkout (the models of one law in a row, "
             f"sharing them). {r['rounds']} round(s); CPU time: user plus system time of the process; ratio: before's "
             "over now's (`benchmarks/lawaxis.py`). The demo diagram is 30 such laws.", "",
             "| code | CPU (s), median | wall (s), median | CPU per point (s) | ratio, CPU |", "|---|---|---|---|---|"]
    points = max(len(v) for v in r["limits"].values()) if r["limits"] else 0
    for name, m in med.items():
        ratio = f"{med['before']['cpu_s'] / m['cpu_s']:.2f}x" if "before" in med else "–"
        per = f"{m['cpu_s'] / points:.1f}" if points else "–"
        lines.append(f"| {name} | {m['cpu_s']:.1f} | {m['wall_s']:.1f} | {per} | {ratio} |")
    if {"now", "before"} <= set(r["limits"]):
        lines += ["", "| mu2 | eigenvalue now | before | overlap now | before | largest difference / (sum of errors) |",
                  "|---|---|---|---|---|---|"]
        for a, b in zip(r["limits"]["now"], r["limits"]["before"]):
            ratios = [abs(float(x) - float(y)) / (float(ex) + float(ey))
                      for x, ex, y, ey in ((a[1], a[2], b[1], b[2]), (a[3], a[4], b[3], b[4]))]
            lines.append(f"| {a[0]} | {a[1]} ± {a[2]} | {b[1]} ± {b[2]} | {a[3]} ± {a[4]} | {b[3]} ± {b[4]} | "
                         f"{max(ratios):.2f} |")
    return lines


if __name__ == "__main__":
    result = run("quick")
    print("\n".join(markdown(result)))
