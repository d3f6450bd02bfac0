"""The slow part of the attack suite: every case of ``tests/attack_cases.py`` in its own process, under a
time limit (30 s) and a memory limit (4 GiB of address space), classified as refused cleanly, answered, or
failed (a traceback, a hang, a crash, output that breaks the contract). Run from the checkout:

    .venv/bin/python scripts/attack.py [--only SUBSTRING] [--markdown notes/reliability.md]

Not part of the installed package; the fast cases also run in the default suite (``tests/test_attack.py``).
"""
from __future__ import annotations

import argparse
import os
import resource
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))
sys.path.insert(0, str(ROOT))

from attack_cases import CASES, argv_of, classify, prepare  # noqa: E402

TIMEOUT = 30.0
MEMORY = 4 * 2**30


def _limit_memory():
    resource.setrlimit(resource.RLIMIT_AS, (MEMORY, MEMORY))


def run_case(case, tmp: Path) -> dict:
    argv = argv_of(case, tmp)
    exe = str(Path(sys.executable).parent / argv[0])
    start = time.monotonic()
    proc = subprocess.Popen([exe, *argv[1:]], stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, cwd=tmp, preexec_fn=_limit_memory, start_new_session=True)
    try:
        out, err = proc.communicate(timeout=TIMEOUT)
        outcome, why = classify(proc.returncode, out, err, case.expect)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.communicate()
        outcome, why = "failed", f"no answer within {TIMEOUT:.0f} s"
    seconds = time.monotonic() - start
    peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 2**20  # GiB, the largest child so far
    return {"case": case.name, "outcome": outcome, "why": why, "seconds": seconds, "peak_gib_so_far": peak}


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--only", default="", help="run the cases whose name contains this")
    p.add_argument("--markdown", default=None, help="write the table of counts and failures here")
    args = p.parse_args(argv)
    cases = [c for c in CASES if args.only in c.name]
    rows = []
    with tempfile.TemporaryDirectory() as d:
        tmp = Path(d)
        for case in cases:
            prepare(tmp, case.setup)
            row = run_case(case, tmp)
            rows.append(row)
            print(f"{row['outcome']:9} {row['seconds']:6.1f} s  {case.name}: {row['why']}", flush=True)
    counts = {k: sum(r["outcome"] == k for r in rows) for k in ("refused", "answered", "failed")}
    peak = max(r["peak_gib_so_far"] for r in rows)
    print(f"tried {len(rows)}, refused cleanly {counts['refused']}, answered {counts['answered']}, "
          f"failed {counts['failed']}; slowest {max(r['seconds'] for r in rows):.1f} s; largest resident "
          f"memory of a case {peak:.2f} GiB (address space capped at {MEMORY / 2**30:.0f} GiB)")
    if args.markdown:
        Path(args.markdown).write_text(markdown(rows, counts))
    return 1 if counts["failed"] else 0


def markdown(rows, counts) -> str:
    lines = ["| tried | refused cleanly | answered | failed |", "|---|---|---|---|",
             f"| {len(rows)} | {counts['refused']} | {counts['answered']} | {counts['failed']} |", "",
             "| case | outcome | seconds | detail |", "|---|---|---|---|"]
    lines += [f"| {r['case']} | {r['outcome']} | {r['seconds']:.1f} | {r['why'].replace('|', '/')} |" for r in rows]
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    sys.exit(main())
