"""The CPU time of a command and of every process it starts, with its wall time and the machine's load meanwhile.

    .venv/bin/python scripts/cputime.py .venv/bin/python -m pytest -q

prints, after the command's own output, one line on stderr: the CPU-seconds (user and system) of the command and all
its descendants, the wall seconds, and the 1-minute load average at the start and sampled every 5 s (mean, min, max);
the exit status is the command's. This process is a child subreaper (Linux ``PR_SET_CHILD_SUBREAPER``): a process
orphaned on the way (a server its parent never waited for, a daemon) is reparented here and reaped at the end, so its
CPU time counts too (``/usr/bin/time`` and ``getrusage`` in the parent miss it). The times of ``docs/development.md``
(the test suite) and of ``docs/ledger.md`` (the claims ledger) were measured so (issue 43).
"""
from __future__ import annotations

import ctypes
import os
import resource
import subprocess
import sys
import threading
import time

PR_SET_CHILD_SUBREAPER = 36


def main(argv: list[str]) -> int:
    if not argv:
        print(__doc__.strip().splitlines()[2].strip(), file=sys.stderr)
        return 2
    if ctypes.CDLL(None, use_errno=True).prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) != 0:
        print("cputime: not a child subreaper (Linux only): orphans are not counted", file=sys.stderr)
    loads, stop = [], threading.Event()

    def sample():
        while not stop.wait(5):
            loads.append(os.getloadavg()[0])

    threading.Thread(target=sample, daemon=True).start()
    start_load, start = os.getloadavg()[0], time.perf_counter()
    status = subprocess.call(argv)
    wall = time.perf_counter() - start
    while True:  # the orphans reparented here, each reaped once it ends
        try:
            os.wait()
        except ChildProcessError:
            break
    stop.set()
    used = resource.getrusage(resource.RUSAGE_CHILDREN)
    seen = loads or [start_load]
    print(f"cputime: exit {status}: {used.ru_utime + used.ru_stime:.1f} CPU-seconds ({used.ru_utime:.1f} user), "
          f"{wall:.1f} s wall; load {start_load:.1f} at the start, mean {sum(seen) / len(seen):.1f} "
          f"(min {min(seen):.1f}, max {max(seen):.1f})", file=sys.stderr)
    return status


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
