"""SIGINT and SIGTERM end a command with one line on stderr and status 130 or 143, after stopping every process
it started (the ledger's checks, the sweep's workers, multiprocessing's resource tracker) and leaving no partial
file. Each command runs in a session of its own, so that whatever it starts, even once orphaned, is found."""
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from processes import in_session
from verify.sweeps.results import read_results

ROOT = Path(__file__).resolve().parents[1]
TINY = ROOT / "examples" / "sweeps" / "tiny.toml"


def _sweep_file(folder: Path) -> Path:
    # long enough to be stopped part-way on two workers (a few seconds), records from the first second
    data = __import__("tomllib").loads(TINY.read_text())
    data["sweep"]["seeds"] = 40
    data["sweep"]["outputs"] = ["top_eigenvalues", "overlaps"]
    path = folder / "long.json"
    path.write_text(json.dumps(data))
    return path


def _wait(predicate, proc, seconds=120.0):
    deadline = time.monotonic() + seconds
    while not predicate() and proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.05)


def _record_lines(path: Path) -> int:
    try:
        return path.read_bytes().count(b"\n") - 1
    except OSError:
        return 0


@pytest.mark.parametrize("stop", [signal.SIGINT, signal.SIGTERM], ids=["SIGINT", "SIGTERM"])
@pytest.mark.parametrize("command", ["claims", "sweep"])
def test_a_signal_stops_the_command_and_everything_it_started(command, stop, tmp_path):
    out = tmp_path / "out"
    out.mkdir()
    if command == "claims":
        argv = ["claims", "--quick", "--workers", "2", "--notes", str(out / "claims.md"), "--figures", str(out / "figures")]
    else:
        argv = ["sweep", str(_sweep_file(tmp_path)), "--results", str(out / "long.jsonl"), "--workers", "2"]
    proc = subprocess.Popen([sys.executable, "-m", "verify.cli", *argv, "--json"], cwd=tmp_path, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, start_new_session=True)
    try:
        # stopped while its workers run: two of them, and for the sweep once records are being written
        started = lambda: (len(in_session(proc.pid)) >= 4  # noqa: E731 (driver, resource tracker, two workers)
                           and (command == "claims" or _record_lines(out / "long.jsonl") >= 2))
        _wait(started, proc)
        before = in_session(proc.pid)
        assert proc.poll() is None and len(before) >= 4, f"the command ended before it could be stopped: {before}"
        os.kill(proc.pid, stop)
        stdout, stderr = proc.communicate(timeout=60)
        deadline = time.monotonic() + 10
        while in_session(proc.pid) and time.monotonic() < deadline:
            time.sleep(0.05)
        left = in_session(proc.pid)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.communicate()
    print(f"\n{command} stopped by {stop.name}: before the signal", *[f"  {pid} {cmd[:100]}" for pid, cmd in before.items()],
          f"after: {left or 'nothing'}", sep="\n")
    assert not left, f"left running: {left}"
    assert proc.returncode == 128 + stop, stderr[-2000:]
    assert stdout == "" and "Traceback" not in stderr
    assert stderr.strip().splitlines()[-1] == f"verify: interrupted by {stop.name}"
    assert stderr.count("interrupted") == 1
    # no partial file: no notes, no figure, no temporary file; the results file ends with a whole record
    names = sorted(p.relative_to(out).as_posix() for p in out.rglob("*"))
    if command == "claims":
        assert names in ([], ["figures"]), names
    else:
        assert names == ["long.jsonl"], names
        scan = read_results(out / "long.jsonl")
        assert scan.torn == 0 and len(scan.records) >= 2
