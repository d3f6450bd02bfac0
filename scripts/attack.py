"""The slow part of the attack suite: every case of ``tests/attack_cases.py`` in its own process (and session),
under a time limit (30 s) and a memory limit (4 GiB of address space), classified as refused cleanly, answered,
stopped cleanly (after the SIGINT or SIGTERM of a case that sends one), skipped (a full disk needs root to mount
one), or failed (a traceback, a hang, a crash, output that breaks the contract, a partial file, a process of the
command's session left running). Run from the checkout:

    .venv/bin/python scripts/attack.py [--only SUBSTRING] [--markdown notes/reliability.md]

Not part of the installed package; the fast cases also run in the default suite (``tests/test_attack.py``).
"""
from __future__ import annotations

import argparse
import contextlib
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

from attack_cases import CASES, argv_of, check_leaves, classify, cwd_of, env_of, prepare  # noqa: E402
from processes import in_session  # noqa: E402

TIMEOUT = 30.0
MEMORY = 4 * 2**30
OUTCOMES = ("refused", "answered", "stopped", "skipped", "failed")


def _limits(fsize):
    def apply():
        resource.setrlimit(resource.RLIMIT_AS, (MEMORY, MEMORY))
        if fsize is not None:
            resource.setrlimit(resource.RLIMIT_FSIZE, (fsize, fsize))
    return apply


@contextlib.contextmanager
def full_disk(folder: Path):
    """``folder`` as a 256 KiB file system filled to the last byte (a tmpfs; ``None`` where it cannot be
    mounted: not root, or no mount in this container)."""
    folder.mkdir(exist_ok=True)
    if subprocess.run(["mount", "-t", "tmpfs", "-o", "size=256k", "tmpfs", str(folder)], capture_output=True).returncode:
        yield None
        return
    try:
        with contextlib.suppress(OSError), open(folder / "filler", "wb", buffering=0) as f:
            while True:
                f.write(b"\0" * 4096)
        yield folder
    finally:
        subprocess.run(["umount", "-l", str(folder)], capture_output=True)


def run_case(case, tmp: Path) -> dict:
    argv = argv_of(case, tmp)
    exe = str(Path(sys.executable).parent / argv[0])
    start = time.monotonic()
    with (full_disk(tmp / "full") if case.disk == "full" else contextlib.nullcontext(tmp)) as disk:
        if disk is None:
            outcome, why = "skipped", "a full disk needs a tmpfs mount (root)"
        else:
            outcome, why = _run(case, exe, argv, tmp)
    seconds = time.monotonic() - start
    peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 2**20  # GiB, the largest child so far
    return {"case": case.name, "outcome": outcome, "why": why, "seconds": seconds, "peak_gib_so_far": peak}


def _run(case, exe: str, argv: list, tmp: Path) -> tuple[str, str]:
    proc = subprocess.Popen([exe, *argv[1:]], stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, cwd=cwd_of(case, tmp), env=env_of(case, tmp), preexec_fn=_limits(case.fsize),
                            start_new_session=True)
    try:
        if case.stop:
            try:
                proc.wait(case.after)
                return "failed", f"ended (exit {proc.returncode}) before the {case.stop} came after {case.after} s"
            except subprocess.TimeoutExpired:
                os.kill(proc.pid, getattr(signal, case.stop))
        out, err = proc.communicate(timeout=TIMEOUT)
        outcome, why = classify(proc.returncode, out, err, case.expect)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.communicate()
        return "failed", f"no answer within {TIMEOUT:.0f} s"
    deadline = time.monotonic() + 10
    while in_session(proc.pid) and time.monotonic() < deadline:
        time.sleep(0.05)
    left = in_session(proc.pid)
    if left:
        os.killpg(proc.pid, signal.SIGKILL)
        return "failed", f"left running: {sorted(left.values())[:3]}"
    if case.stop and proc.returncode != 128 + getattr(signal, case.stop):
        return "failed", f"exit {proc.returncode} after {case.stop}"
    wrong = check_leaves(case, tmp)
    if not wrong and case.never is not None and case.never in out:
        wrong = f"stdout holds {case.never!r}"
    return ("failed", wrong) if wrong and outcome != "failed" else (outcome, why)


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
    counts = {k: sum(r["outcome"] == k for r in rows) for k in OUTCOMES}
    peak = max(r["peak_gib_so_far"] for r in rows)
    print(f"tried {len(rows)}, refused cleanly {counts['refused']}, answered {counts['answered']}, stopped cleanly "
          f"{counts['stopped']}, skipped {counts['skipped']}, failed {counts['failed']}; slowest "
          f"{max(r['seconds'] for r in rows):.1f} s; largest resident memory of a case {peak:.2f} GiB (address space "
          f"capped at {MEMORY / 2**30:.0f} GiB)")
    if args.markdown:
        Path(args.markdown).write_text(markdown(rows, counts))
    return 1 if counts["failed"] else 0


def markdown(rows, counts) -> str:
    lines = ["| tried | refused cleanly | answered | stopped cleanly | skipped | failed |", "|---|---|---|---|---|---|",
             f"| {len(rows)} | {counts['refused']} | {counts['answered']} | {counts['stopped']} | {counts['skipped']} | "
             f"{counts['failed']} |", "", "| case | outcome | seconds | detail |", "|---|---|---|---|"]
    lines += [f"| {r['case']} | {r['outcome']} | {r['seconds']:.1f} | {r['why'].replace('|', '/')} |" for r in rows]
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    sys.exit(main())
