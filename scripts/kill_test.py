"""The kill test of sweeps: ``kill -9`` a running ``verify sweep`` at random moments, check that no process it
started outlives it, resume, and compare the finished records with an uninterrupted run. Run from the checkout:

    .venv/bin/python scripts/kill_test.py [--kills 20] [--executor local|local-dask] [--seed 1]

Prints one line per kill and the verdict; exit status 1 if a process was left behind or a record differs.
"""
from __future__ import annotations

import argparse
import json
import os
import random
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))

from processes import alive, descendants  # noqa: E402

VERIFY = str(Path(sys.executable).parent / "verify")
SWEEP = {"sweep": {"root_seed": 11, "seeds": 3, "outputs": ["top_eigenvalues", "overlaps", "accuracy"], "k": 2},
         "model": {"delta": "1/2", "T": 4, "signs": "prefix:2", "centered": True, "weights": "mean"},
         "grid": {"d": [60, 120], "mu2": ["1/2", 1, 2, 3], "gamma": ["1/4", "1/2"]}}


def records(path: Path) -> dict:
    out = {}
    for line in path.read_text().splitlines()[1:]:
        rec = json.loads(line)
        out[tuple(rec["task"])] = json.dumps({k: rec[k] for k in ("task", "point", "dims", "result")}, sort_keys=True)
    return out


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--kills", type=int, default=20)
    p.add_argument("--executor", choices=["local", "local-dask"], default="local")
    p.add_argument("--seed", type=int, default=1)
    args = p.parse_args(argv)
    rng = random.Random(args.seed)
    executor = ["--workers", "2"] if args.executor == "local" else ["--scheduler", "local-dask", "--workers", "2"]
    with tempfile.TemporaryDirectory() as d:
        tmp = Path(d)
        spec = tmp / "kill.json"
        spec.write_text(json.dumps(SWEEP))
        reference, killed = tmp / "reference.jsonl", tmp / "killed.jsonl"
        start = time.monotonic()
        subprocess.run([VERIFY, "sweep", str(spec), "--results", str(reference), *executor], check=True,
                       capture_output=True, cwd=tmp, timeout=600)
        duration = time.monotonic() - start
        print(f"uninterrupted run ({args.executor}): {duration:.1f} s", flush=True)
        left, kills, with_workers = [], 0, 0
        total = len(records(reference))
        while kills < args.kills:
            proc = subprocess.Popen([VERIFY, "sweep", str(spec), "--results", str(killed), *executor],
                                    stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, cwd=tmp)
            delay = rng.uniform(0.3, 0.95) * duration
            time.sleep(delay)
            seen = descendants(proc.pid)
            if proc.poll() is not None:
                print(f"finished before the kill at {delay:.1f} s; starting again from scratch", flush=True)
                killed.unlink()
                continue
            proc.send_signal(signal.SIGKILL)
            proc.wait()
            kills += 1
            deadline = time.monotonic() + 10
            while time.monotonic() < deadline and any(alive(pid) for pid in seen):
                time.sleep(0.2)
            survivors = sorted(pid for pid in seen if alive(pid))
            done = len(records(killed)) if killed.exists() else 0
            print(f"kill {kills:2d} at {delay:4.1f} s: {len(seen)} processes below the driver, "
                  f"{len(survivors)} alive 10 s later; {done} records", flush=True)
            with_workers += len(seen) >= 2
            for pid in survivors:
                left.append(pid)
                os.kill(pid, signal.SIGKILL)
            if done == total:  # killed while closing a finished sweep: the next kill starts a fresh one
                killed.unlink()
        subprocess.run([VERIFY, "sweep", str(spec), "--results", str(killed), "--workers", "1"], check=True,
                       capture_output=True, cwd=tmp, timeout=600)
        a, b = records(reference), records(killed)
        differ = sum(a[k] != b.get(k) for k in a)
        print(f"{args.kills} kills ({args.executor}; {with_workers} with worker processes running): "
              f"{len(left)} processes left behind; after resuming, "
              f"{len(b)}/{len(a)} records, {differ} differ from the uninterrupted run")
        return 1 if left or differ or len(a) != len(b) else 0


if __name__ == "__main__":
    sys.exit(main())
