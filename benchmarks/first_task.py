r"""How soon a sweep starts: the wall time from launching ``verify sweep FILE --workers N`` to its first result record
in the results file (the header and one record written), each run a process of its own, the codes taken in turn
round by round (issue 43: the first task within 2 s of the command).

``python -m benchmarks.first_task [--sweep FILE] [--workers N] [--rounds K] NAME=TREE ...``: each ``TREE`` a checkout
(``git worktree add --detach /tmp/before <commit>`` for an older code) put first on ``PYTHONPATH``; one warm-up run of
each fills its derivation cache (the folder of ``ATTENTION_RMT_CACHE_DIR``, or the user's), then ``K`` rounds. Prints a
Markdown table (median, lowest and highest of each code; the ratio of the first code's median over each) and the
1-minute load average at the start and the end.
"""
from __future__ import annotations

import argparse
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

__all__ = ["first_record", "main"]


def first_record(tree: str, sweep: str, workers: int, folder: Path) -> float:
    """Seconds from launching the sweep by the code of ``tree`` to its first record; the run is then stopped."""
    results = folder / "first.jsonl"
    results.unlink(missing_ok=True)
    env = dict(os.environ, PYTHONPATH=tree)
    start = time.perf_counter()
    # the console script beside this interpreter, as a user runs the command
    command = [str(Path(sys.executable).with_name("verify")), "sweep", sweep, "--results", str(results),
               "--workers", str(workers)]
    process = subprocess.Popen(command, env=env, cwd=tree,
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        while process.poll() is None:
            try:
                if results.read_bytes().count(b"\n") >= 2:
                    return time.perf_counter() - start
            except FileNotFoundError:
                pass
            time.sleep(0.005)
        raise RuntimeError(f"verify sweep ({tree}) ended with status {process.returncode} before its first record")
    finally:
        process.send_signal(signal.SIGTERM)
        process.wait()


def main(argv=None) -> int:
    p = argparse.ArgumentParser(prog="python -m benchmarks.first_task", description=__doc__.split("\n\n")[0])
    p.add_argument("codes", nargs="+", metavar="NAME=TREE")
    p.add_argument("--sweep", default="examples/sweeps/demo_phase.toml")
    p.add_argument("--workers", type=int, default=2)
    p.add_argument("--rounds", type=int, default=7)
    args = p.parse_args(argv)
    codes = dict(code.split("=", 1) for code in args.codes)
    times = {name: [] for name in codes}
    with tempfile.TemporaryDirectory() as tmp:
        for tree in codes.values():
            first_record(tree, args.sweep, args.workers, Path(tmp))
        load = os.getloadavg()[0]
        for _ in range(args.rounds):
            for name, tree in codes.items():
                times[name].append(first_record(tree, args.sweep, args.workers, Path(tmp)))
    reference = statistics.median(next(iter(times.values())))
    print(f"`verify sweep {args.sweep} --workers {args.workers}`, launch to the first record, {args.rounds} rounds; "
          f"1-minute load average {load:.2f} at the start and {os.getloadavg()[0]:.2f} at the end.\n")
    print("| code | median (s) | lowest (s) | highest (s) | ratio |\n|---|---|---|---|---|")
    for name, t in times.items():
        print(f"| {name} | {statistics.median(t):.2f} | {min(t):.2f} | {max(t):.2f} | "
              f"{reference / statistics.median(t):.1f}x |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
