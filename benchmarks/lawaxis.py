r"""A sweep summary's model's limit along ``mu2`` axes, cold (``python -m benchmarks cost --parts lawaxis``).

``examples/sweeps/demo_phase.toml`` (30 laws of 12 ``mu2`` each, 360 models; the sweep itself takes seconds) is run once
and summarized as a whole process on an empty derivation cache (cold: SymPy derives, every limit is computed),
``--workers 2``: with both laws, each law's limit sought to a tenth of its Monte Carlo half-widths' median within 1e-3
to 1e-2 (the default), and with ``--skip-model-limit`` (the Gaussian equivalent alone: what a user runs instead of
waiting for the model's limit). One law of it (causal weights, ``gamma = 1/5``) is summarized by this checkout and by
the code before (:data:`BASELINE`: the limit to 1e-3 at every point, ``--workers 1``), the two codes' estimates side by
side against their stated errors.
"""
from __future__ import annotations

import json
import os
import sys
import tempfile
from pathlib import Path

__all__ = ["BASELINE", "SLICE", "DIAGRAM", "ROUNDS", "TARGET_S", "run", "markdown"]

BASELINE = "5c1ac87"
"""The code before: every model's limit sought to 1e-3 (populations of 2^13 tokens), a replica's root bisected onto
the end of the scan's bracket where it lay outside it."""

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

DIAGRAM = "examples/sweeps/demo_phase.toml"
"""The whole demo phase diagram (in the checkout)."""

ROUNDS = {"full": 2, "quick": 1, "tiny": 1}

TARGET_S = 180.0
"""Issue 42's target: the demo diagram summarized with both laws, cold, in at most 3 CPU-minutes."""


def _limits(doc: dict) -> list:
    """``(mu2, eigenvalue, its error, overlap, its error)`` of each point's finite-vocabulary entry (``None`` each
    where it is unavailable)."""
    out = []
    for p in doc["points"]:
        fv = p["theory"]["finite_vocabulary"]
        if "unavailable" in fv:
            out.append((p["point"]["mu2"], None, None, None, None))
            continue
        out.append((p["point"]["mu2"], fv["top_eigenvalue"], fv["errors"]["top_eigenvalue"], fv["overlap"],
                    fv["errors"]["overlap"]))
    return out


def run(mode: str, log=sys.stderr) -> dict:
    """The diagram and the slice run once; the diagram summarized by this checkout with and without the model's
    limit, the slice by each code, :data:`ROUNDS` round-robin, each summary a fresh process on a fresh derivation
    cache. Tiny mode (the harness only) summarizes the slice by this checkout once without the model's limit."""
    from benchmarks.processes import ROOT, baseline_tree, code_env, timed

    tiny = mode == "tiny"
    out = {"rounds": ROUNDS[mode], "baseline": BASELINE, "load_start": os.getloadavg()[0], "times": {}, "limits": {},
           "sought": {}}
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        (tmp / "slice.toml").write_text(SLICE)
        codes = {"now": ROOT, **({} if tiny else {"before": baseline_tree(tmp, BASELINE)})}
        print("bench: the sweeps ...", file=log, flush=True)
        sweeps = {"slice": "slice.toml"} | ({} if tiny else {"diagram": str(ROOT / DIAGRAM)})
        for name, spec in sweeps.items():
            timed([sys.executable, "-m", "verify.cli", "sweep", spec, "--results", f"{name}.jsonl", "--workers", "2"],
                  code_env(ROOT, 1, tmp / "cache-sweep"), tmp)
        summary = lambda results, workers, *extra: [sys.executable, "-m", "verify.cli", "sweep", "--summarize",  # noqa: E731
                                                    results, "--workers", str(workers), "--json", *extra]
        runs = {"slice " + name: (code, summary("slice.jsonl", 1, *(["--skip-model-limit"] if tiny else [])))
                for name, code in codes.items()}
        if not tiny:
            runs |= {"diagram, both laws": (ROOT, summary("diagram.jsonl", 2)),
                     "diagram, --skip-model-limit": (ROOT, summary("diagram.jsonl", 2, "--skip-model-limit"))}
        for r in range(out["rounds"]):
            for k, (name, (code, command)) in enumerate(runs.items()):
                print(f"bench: {name}, round {r + 1} ...", file=log, flush=True)
                t = timed(command, code_env(code, None, tmp / f"cache-{k}-{r}"), tmp)
                doc = json.loads(t.pop("stdout"))
                out["times"].setdefault(name, []).append(t)
                if not tiny and doc["model_limit"]["computed"]:
                    out["limits"][name] = _limits(doc)
                    out["sought"][name] = doc["model_limit"].get("errors_sought")
                    out["unavailable"] = out.get("unavailable", {}) | {name: sum(
                        "unavailable" in p["theory"]["finite_vocabulary"] for p in doc["points"])}
    out["load_end"] = os.getloadavg()[0]
    return out


def markdown(r: dict) -> list:
    """The part's section: each run's median CPU and wall time, its ratio against the diagram with both laws (and the
    slice before over now), and the slice's estimates by the two codes side by side with the largest difference in
    units of the errors they state."""
    import statistics

    med = {name: {k: statistics.median(t[k] for t in runs) for k in ("cpu_s", "wall_s")}
           for name, runs in r["times"].items()}
    lines = ["## A sweep summary's model's limit along mu2 axes", "",
             "`examples/sweeps/demo_phase.toml` (T = 8, prefix:3, delta = 1/2, centered; 3 weight schemes x 10 gamma: 30 "
             "laws of 12 mu2, 360 models) summarized as a whole process on an empty derivation cache (SymPy derives, "
             "every model's limit is computed), `--workers 2`: with both laws (each law's limit sought to a tenth of "
             "its Monte Carlo half-widths' median, within 1e-3 to 1e-2: the default) and with `--skip-model-limit` "
             "(the Gaussian equivalent alone, what a user runs instead of waiting for the model's limit). One law of it "
             "(causal, gamma = 1/5) summarized by this checkout and by the code of "
             f"{r['baseline']} (every limit to 1e-3), `--workers 1`. {r['rounds']} round(s); CPU time: user plus system "
             "time of the process and its children (`benchmarks/lawaxis.py`).", "",
             "| run | CPU (s), median | wall (s), median | CPU per model (s) | errors sought | points unavailable |",
             "|---|---|---|---|---|---|"]
    for name, m in med.items():
        points = len(r["limits"].get(name, ())) or (360 if name.startswith("diagram") else 12)
        sought = r["sought"].get(name)
        sought = "–" if not sought else sought[0] if len(sought) == 1 else f"{sought[0]} to {sought[-1]}"
        unavailable = r.get("unavailable", {}).get(name, "–")
        lines.append(f"| {name} | {m['cpu_s']:.1f} | {m['wall_s']:.1f} | {m['cpu_s'] / points:.2f} | {sought} | "
                     f"{unavailable} |")
    if {"slice now", "slice before"} <= set(med):
        lines += ["", f"The slice: before over now, {med['slice before']['cpu_s'] / med['slice now']['cpu_s']:.1f}x in "
                      f"CPU time (the diagram's 30 laws before: about {30 * med['slice before']['cpu_s'] / 60:.0f} "
                      f"CPU-minutes, projected from it)."]
    if "diagram, both laws" in med:
        cpu = med["diagram, both laws"]["cpu_s"]
        lines += ["", f"**Against the target** (the demo diagram summarized with both laws in <= {TARGET_S / 60:.0f} "
                      f"CPU-minutes, cold): **{'met' if cpu <= TARGET_S else 'not met'}** ({cpu / 60:.1f} CPU-minutes)."]
    if {"slice now", "slice before"} <= set(r["limits"]):
        lines += ["", "| mu2 | eigenvalue now | before | overlap now | before | largest difference / (sum of errors) |",
                  "|---|---|---|---|---|---|"]
        for a, b in zip(r["limits"]["slice now"], r["limits"]["slice before"]):
            ratios = [abs(float(x) - float(y)) / (float(ex) + float(ey))
                      for x, ex, y, ey in ((a[1], a[2], b[1], b[2]), (a[3], a[4], b[3], b[4]))
                      if None not in (x, ex, y, ey)]
            lines.append(f"| {a[0]} | {a[1]} ± {a[2]} | {b[1]} ± {b[2]} | {a[3]} ± {a[4]} | {b[3]} ± {b[4]} | "
                         f"{max(ratios, default=float('nan')):.2f} |")
    return lines


if __name__ == "__main__":
    result = run("quick")
    print("\n".join(markdown(result)))
