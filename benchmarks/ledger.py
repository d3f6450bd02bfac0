r"""``verify claims --quick`` and ``verify claims`` as whole processes, this checkout against the code before issue 35's
part 5 (:data:`BASELINE`), round-robin (``python -m benchmarks cost --parts ledger``).

Each code gets its own derivation cache, filled by a warm-up run of its quick ledger (whose time is reported too: the
first run on an empty cache, when the model's limits that C4's corrected statement quotes are computed). The rounds
then run, in turn, the quick ledger of each code and the full one of each, with no thread variable set (the command
limits BLAS itself, one process per core). Each run writes its report into a folder of its own; the verdicts of C2,
C4 and C9 are read back from its ``claims.json``.
"""
from __future__ import annotations

import json
import os
import sys
import tempfile
from pathlib import Path

__all__ = ["BASELINE", "ROUNDS", "DECIDED", "run", "markdown"]

BASELINE = "53c4da2"
"""The code this part compares with: main before the quick ledger decided C2, C4 and C9."""

ROUNDS = {"full": 1, "quick": 1, "tiny": 1}
"""Rounds after the warm-up (a full ledger of the code before takes minutes)."""

DECIDED = ("C2", "C4", "C9")
"""The claims whose verdicts each run's row gives."""


def _command(mode: str, folder: Path) -> list:
    argv = [sys.executable, "-m", "verify.cli", "claims", "--notes", str(folder / "claims.md"),
            "--figures", str(folder / "figures")]
    return argv + (["--quick"] if mode == "quick" else [])


def run(mode: str, log=sys.stderr) -> dict:
    """The timings of both ledgers of both codes (tiny: the quick ledger of this checkout once, the harness only)."""
    from benchmarks.processes import ROOT, baseline_tree, code_env, timed

    out = {"baseline": BASELINE, "rounds": ROUNDS[mode], "load_start": os.getloadavg()[0], "cold": {}, "times": {}}
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        codes = {"now": ROOT} if mode == "tiny" else {"now": ROOT, "before": baseline_tree(tmp, BASELINE)}
        ledgers = ("quick",) if mode == "tiny" else ("quick", "full")
        env = {name: code_env(code, None, tmp / f"cache-{name}") for name, code in codes.items()}

        def once(name: str, ledger: str, label: str) -> dict:
            folder = tmp / f"{name}-{ledger}-{label}"
            print(f"bench: verify claims{' --quick' if ledger == 'quick' else ''} ({name}, {label}) ...", file=log,
                  flush=True)
            load = os.getloadavg()[0]
            result = timed(_command(ledger, folder), env[name], tmp)
            claims = json.loads((folder / "claims.json").read_text())["claims"]
            return {"cpu_s": result["cpu_s"], "user_s": result["user_s"], "wall_s": result["wall_s"], "load": load,
                    "verdicts": {c: claims[c]["verdict"] for c in DECIDED}}

        for name in codes:
            out["cold"][name] = once(name, "quick", "warm-up")
        for r in range(out["rounds"]):
            for ledger in ledgers:
                for name in codes:
                    out["times"].setdefault(ledger, {}).setdefault(name, []).append(once(name, ledger, f"round {r + 1}"))
    out["load_end"] = os.getloadavg()[0]
    return out


def markdown(r: dict) -> list:
    """The part's section: a row per ledger and code, the ratio before/now in the same round
    (:func:`benchmarks.processes._summary`), the verdicts."""
    from benchmarks.processes import _summary

    lines = ["## The claims ledger, quick and full, as whole processes", "",
             f"`verify claims --quick` and `verify claims` of this checkout (`now`) and of commit {r['baseline']} "
             f"(`before`: main before the quick ledger decided C2, C4 and C9), each code with its own derivation "
             f"cache filled by a warm-up run of its quick ledger; {r['rounds']} round(s) round-robin after it, no "
             "thread variable set (one ledger process per core, each with one BLAS thread). CPU time: user plus "
             "system time of the process and its children; load: the 1-minute load average when the run started; "
             "ratio: before's time over now's in the same round.", "",
             "| ledger | code | CPU (s) | wall (s) | load | ratio, CPU | ratio, wall | C2, C4, C9 |",
             "|---|---|---|---|---|---|---|---|"]
    for ledger, times in r["times"].items():
        for name, x in _summary(times, "before" if "before" in times else "now").items():
            verdicts = ", ".join(times[name][-1]["verdicts"][c] for c in DECIDED)
            lines.append(f"| {ledger} | {name} | {x['cpu_s']:.1f} | {x['wall_s']:.1f} | {x['load']:.2f} | "
                         f"{x['cpu_ratio']:.2f}x | {x['wall_ratio']:.2f}x | {verdicts} |")
    cold = "; ".join(f"{name}: {x['cpu_s']:.1f} s CPU, {x['wall_s']:.1f} s wall (load {x['load']:.2f})"
                     for name, x in r["cold"].items())
    lines += ["", "The warm-up quick ledger of each code, on an empty derivation cache (SymPy derives its functions, "
                  "and this checkout computes the model's limits C4 quotes, about a minute of CPU each): " + cold + "."]
    return lines
