r"""``derive spike --d`` (the model at the user's dimension: an expectation over sampled token matrices) next to what a
user would run instead, ``verify mc`` at the same point, dimension and number of draws (``python -m benchmarks cost
--parts finite``).

Both are whole processes with the library's own thread settings, each code with a derivation cache filled by a warm-up
run of each command (the model's limit, which ``derive spike`` prints beside the expectation and ``verify mc`` as its
theory, is then read from the cache: what is timed is the expectation and the trials). Each run's numbers are read back
from its JSON document, so the table shows what each answer says beside what it cost.
"""
from __future__ import annotations

import json
import os
import sys
import tempfile
from pathlib import Path

__all__ = ["CASES", "DRAWS", "ROUNDS", "run", "markdown"]

DRAWS = 32
"""Token matrices of ``derive spike --d`` (its default) and trials of ``verify mc``."""

CASES = {
    "T = 16 strict causal, iid, d = 1000": dict(
        ratios=["--delta", "1/2", "--gamma", "4"], d=1000, V=2000, N=250,
        model=["--T", "16", "--weights", "causal", "--mask", "strict", "--signs", "iid", "--mu2", "8", "--centered"]),
    "T = 2 causal, iid, d = 1000": dict(
        ratios=["--delta", "1", "--gamma", "1"], d=1000, V=1000, N=1000,
        model=["--T", "2", "--weights", "causal", "--signs", "iid", "--mu2", "5", "--centered"]),
}
"""The points: issue 35's two (the threshold that creeps up with ``d``; the overlap a limit owes to rare tokens);
``derive spike`` takes the ratios ``delta = d/V``, ``gamma = d/N``, ``verify mc`` the sizes."""

ROUNDS = {"full": 3, "quick": 2, "tiny": 1}


def _commands(case: dict, tiny: bool) -> dict:
    d, V, N = (100, 200, 25) if tiny else (case["d"], case["V"], case["N"])
    draws = 4 if tiny else DRAWS
    spike = ["derive.cli", "spike", *case["ratios"], *case["model"], "--d", str(d), "--draws", str(draws), "--json"]
    mc = ["verify.cli", "mc", *case["model"], "--d", str(d), "--V", str(V), "--N", str(N), "--seeds", str(draws),
          "--json"]
    return {"derive spike --d": [sys.executable, "-m", *spike], "verify mc": [sys.executable, "-m", *mc]}


def _answer(name: str, doc: dict) -> dict:
    """Eigenvalue and overlap (mean and its standard error or interval) from one document."""
    if name == "derive spike --d":
        f = doc["finite_size"]
        return {"eigenvalue": f["eigenvalue"]["mean"], "overlap": f["overlap"]["mean"],
                "spread": [f["eigenvalue"]["sd"], f["overlap"]["sd"]]}
    return {"eigenvalue": doc["top_eigenvalue"]["mean"], "overlap": doc["overlap"]["mean"],
            "ci95": [doc["top_eigenvalue"]["ci95"], doc["overlap"]["ci95"]]}


def run(mode: str, log=sys.stderr) -> dict:
    """Both commands at every case (tiny: small sizes and 4 draws, the harness only): a warm-up run of each, whose
    document gives its answer, then :data:`ROUNDS` round-robin (:func:`benchmarks.processes.rounds`)."""
    from benchmarks.processes import ROOT, code_env, rounds, timed

    tiny = mode == "tiny"
    out = {"rounds": ROUNDS[mode], "draws": 4 if tiny else DRAWS, "load_start": os.getloadavg()[0], "times": {},
           "answers": {}}
    cases = list(CASES.items())[:1] if tiny else list(CASES.items())
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        env = code_env(ROOT, None, tmp / "cache")
        for case, spec in cases:
            print(f"bench: {case}: derive spike --d and verify mc ...", file=log, flush=True)
            commands = {name: (argv, env, tmp) for name, argv in _commands(spec, tiny).items()}
            # derive spike --d keeps its expectation in the cache too: each timed run finds only the limit there, as a
            # user's first --d does (verify mc keeps its theory, never its trials)
            spike = commands["derive spike --d"]
            commands["derive spike --d"] = (["sh", "-c", f"rm -f {tmp / 'cache'}/*/at-dimension-*; exec \"$@\"", "sh",
                                             *spike[0]], *spike[1:])
            out["answers"][case] = {name: _answer(name, json.loads(timed(*command)["stdout"]))
                                    for name, command in commands.items()}
            out["times"][case] = {name: [{k: v for k, v in run.items() if k != "stdout"} for run in runs]
                                  for name, runs in rounds(commands, out["rounds"], warm=False).items()}
    out["load_end"] = os.getloadavg()[0]
    return out


def markdown(r: dict) -> list:
    """The part's section: a row per case and command, its median times, the ratio of ``verify mc``'s time over
    ``derive spike --d``'s in the same round (:func:`benchmarks.processes._summary`), and what each answered."""
    from benchmarks.processes import _summary

    lines = ["## derive spike --d against verify mc at the same dimension", "",
             f"The model at the user's `d` (`derive spike --d`: the model's own law, finite vocabulary, over "
             f"{r['draws']} sampled token matrices) and Monte Carlo of the same point (`verify mc`, {r['draws']} "
             "trials), as whole processes with the library's thread settings, the model's limit read from a derivation "
             "cache filled by a warm-up run of each; the expectations at d kept there (derive spike's, and verify mc's "
             "theory at its d, which is derive's with fewer draws) removed before each run of derive spike --d, so that "
             f"each command computes its own as at a user's first run at the point; {r['rounds']} round(s) round-robin. CPU time: user plus system "
             "time of the process and its children; ratio: verify mc's time over derive spike --d's in the same round, "
             "median over rounds. Eigenvalue and overlap: derive spike's expectation over the draws (its spread over "
             "the draws beside it), verify mc's mean over the trials (its 95% interval).", "",
             "| case | command | CPU (s), median | wall (s), median | ratio, CPU | ratio, wall | eigenvalue "
             "| overlap |",
             "|---|---|---|---|---|---|---|---|"]
    for case, times in r["times"].items():
        for name, x in _summary(times, "verify mc").items():
            a = r["answers"][case][name]
            if "spread" in a:
                ev, ov = f"{a['eigenvalue']} (sd {a['spread'][0]})", f"{a['overlap']} (sd {a['spread'][1]})"
            else:
                ev = f"{float(a['eigenvalue']):.4g} [{', '.join(f'{float(v):.4g}' for v in a['ci95'][0])}]"
                ov = f"{float(a['overlap']):.4g} [{', '.join(f'{float(v):.4g}' for v in a['ci95'][1])}]"
            lines.append(f"| {case} | {name} | {x['cpu_s']:.2f} | {x['wall_s']:.2f} | {x['cpu_ratio']:.2f}x | "
                         f"{x['wall_ratio']:.2f}x | {ev} | {ov} |")
    return lines
