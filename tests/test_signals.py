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

from processes import communicate, in_session, run, wait_until
from verify.sweeps.results import read_results

ROOT = Path(__file__).resolve().parents[1]
TINY = ROOT / "examples" / "sweeps" / "tiny.toml"
CPU = 300
"""CPU-seconds a command (with what it starts) may use before it is called hung: the claims ledger's quick run, the
longest here, needs about 100 to finish and is stopped long before."""


EXIT = 120.0
"""Seconds of the clock a process that is ending may take to be gone (it takes milliseconds): the wait ends as soon
as it is, so only a process left behind waits this long."""


def _gone(sid: int) -> None:
    """Wait until session ``sid`` holds no living process, or :data:`EXIT` seconds."""
    deadline = time.monotonic() + EXIT
    while in_session(sid) and time.monotonic() < deadline:
        time.sleep(0.05)


def _sweep_file(folder: Path) -> Path:
    # long enough to be stopped part-way on two workers (a few seconds), records from the first second
    data = __import__("tomllib").loads(TINY.read_text())
    data["sweep"]["seeds"] = 40
    data["sweep"]["outputs"] = ["top_eigenvalues", "overlaps"]
    path = folder / "long.json"
    path.write_text(json.dumps(data))
    return path


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
        wait_until(started, proc, cpu=CPU)  # hung only by work (tests/processes.py), never by the clock
        before = in_session(proc.pid)
        assert proc.poll() is None and len(before) >= 4, f"the command ended before it could be stopped: {before}"
        os.kill(proc.pid, stop)
        stdout, stderr = communicate(proc, cpu=CPU)
        # what the driver stopped is gone when it exits; orphans would stay: the wait ends at once unless one did
        _gone(proc.pid)
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


def _handled(pid: int) -> bool:
    """Whether the process catches SIGTERM (its ``SigCgt`` mask): Python leaves SIGTERM to the default action, so the
    command's own handlers are in place (derive.cli.stop installs SIGINT's and SIGTERM's together, SIGTERM's last)."""
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return False
    mask = next((line.split()[1] for line in status.splitlines() if line.startswith("SigCgt:")), "0")
    return bool(int(mask, 16) >> (signal.SIGTERM - 1) & 1)


FIRST_LINE = [
    ("derive.cli", ["weights", "--weights", "optimal", "--T", "6", "--signs", "markov:1/2"]),
    ("derive.cli", ["bulk", "--delta", "1/2", "--gamma", "1/4", "--kappa", "1/8", "--x", "0.5"]),
    ("derive.cli", ["spike", "--delta", "1/2", "--gamma", "1/4", "--alpha", "7/32", "--kappa", "1/8", "--mu2", "3/2"]),
    ("derive.cli", ["formulas"]),
    ("verify.cli", ["mc", "--d", "20", "--V", "40", "--N", "80", "--T", "2", "--signs", "iid", "--weights", "mean",
                    "--mu2", "1", "--seeds", "2"]),
    ("verify.cli", ["claims", "--quick", "--notes", "", "--figures", ""]),
    ("verify.cli", ["ladder", "--d", "40,80", "--seeds", "2"]),
    ("verify.cli", ["attention-gap", "--d", "40,80", "--seeds", "2"]),
    ("verify.cli", ["sweep", str(TINY), "--results", "{tmp}/r.jsonl", "--workers", "1"]),
    ("verify.cli", ["formula", "--quantity", "sample.overlap", "--expr", "mu2/(mu2 + delta)"]),
]


@pytest.mark.parametrize("i", range(len(FIRST_LINE)), ids=[f"{m.split('.')[0]} {a[0]}" for m, a in FIRST_LINE])
def test_a_signal_from_the_first_line_of_every_command_stops_it_cleanly(i, tmp_path):
    # the signal comes as soon as the command's handlers are in place, before its modules are imported: a signal
    # while argparse and the commands were imported had been a KeyboardInterrupt traceback or a silent -15; the
    # commands take SIGINT, SIGTERM and two SIGTERMs in turn (the second had once met the default handler again)
    module, argv = FIRST_LINE[i]
    stops = [[signal.SIGINT], [signal.SIGTERM], [signal.SIGTERM, signal.SIGTERM]][i % 3]
    argv = [a.replace("{tmp}", str(tmp_path)) for a in argv]
    proc = subprocess.Popen([sys.executable, "-m", module, *argv, "--json"], cwd=tmp_path, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, start_new_session=True)
    try:
        wait_until(lambda: _handled(proc.pid), proc, cpu=CPU, poll=0.0005)
        for stop in stops:
            proc.send_signal(stop)  # nothing is sent once the command has exited (its status is then read)
        out, err = communicate(proc, cpu=CPU)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.communicate()
    prog = module.split(".")[0]
    if proc.returncode == 0:
        pytest.fail(f"the command ended before its handlers were seen: {err[-300:]}")
    assert proc.returncode == 128 + stops[0], (proc.returncode, err[-500:])
    assert out == "" and "Traceback" not in err and err.count("interrupted") == 1, err[-500:]
    assert err.strip().splitlines()[-1] == f"{prog}: interrupted by {signal.Signals(stops[0]).name}"
    assert not in_session(proc.pid)


EDGE = """
import atexit, builtins, os, signal, sys
stop = getattr(signal, {stop!r})
sys.argv = [{prog!r}, *{argv!r}, "--json"]
if {edge!r} == "start":
    real = builtins.__import__

    def hooked(name, *args, **kwargs):
        # the signal arrives while the command line's modules are imported, as it does a few ms after start-up
        if name == "argparse" and not hasattr(hooked, "sent"):
            hooked.sent = os.kill(os.getpid(), stop) or True
        return real(name, *args, **kwargs)

    builtins.__import__ = hooked
else:
    atexit.register(os.kill, os.getpid(), stop)  # while the interpreter exits, after the command's last line
from {module} import main
sys.exit(main())
"""


@pytest.mark.parametrize("edge", ["start", "end"])
@pytest.mark.parametrize("stop", ["SIGINT", "SIGTERM"])
@pytest.mark.parametrize("module", ["derive.cli", "verify.cli"])
def test_a_signal_at_either_edge_of_a_run_is_a_clean_stop(module, stop, edge):
    prog = module.split(".")[0]
    argv = ["weights", "--weights", "mean", "--T", "4"] if prog == "derive" else [
        "mc", "--d", "20", "--V", "40", "--N", "80", "--T", "2", "--signs", "iid", "--weights", "mean", "--mu2", "1",
        "--seeds", "2"]
    code = EDGE.format(stop=stop, prog=prog, argv=argv, edge=edge, module=module)
    done = run([sys.executable, "-c", code], capture_output=True, text=True, cpu=CPU)
    assert done.returncode == 128 + getattr(signal, stop), (done.returncode, done.stderr[-500:])
    assert "Traceback" not in done.stderr and done.stderr.strip().splitlines()[-1] == f"{prog}: interrupted by {stop}"
    assert done.stderr.count("interrupted") == 1


KERNEL = """
import sys
from derive.cli.stop import run_stoppable
from derive.files import replaced
from derive.vocabulary.limit.roottokens import _binomial_quantile

def run():
    _binomial_quantile(4, 0.5, 0.5)   # compiled (or loaded from numba's cache) before the long call
    with replaced(sys.argv[1], "out") as f:
        f.write(b"partial")
        print("in the kernel", flush=True)
        # (1/2)^k underflows to 0 for a huge k: the loop walks all 10^15 terms, in memory it already has
        _binomial_quantile(10**15, 0.5, 0.5)
    return 0

sys.exit(run_stoppable("kernel", run, program=True))
"""


@pytest.mark.parametrize("stop", [signal.SIGINT, signal.SIGTERM], ids=["SIGINT", "SIGTERM"])
def test_a_signal_stops_a_numba_kernel_that_never_looks_at_python(stop, tmp_path):
    # the kernel runs for days without returning to the interpreter, so Python's own handler never runs: only stop's watchdog can end it. Without it the process outlives the hang timeout below.
    p = subprocess.Popen([sys.executable, "-c", KERNEL, str(tmp_path / "out.txt")], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         text=True, start_new_session=True, env={**os.environ, "PYTHONPATH": str(ROOT)})
    try:
        assert p.stdout.readline() == "in the kernel\n"
        time.sleep(0.2)
        p.send_signal(stop)
        _, err = p.communicate(timeout=EXIT)
    finally:
        p.kill()
    assert p.returncode == 128 + stop and err == f"kernel: interrupted by {signal.Signals(stop).name}\n"
    assert list(tmp_path.iterdir()) == []  # the output being written is removed, not left partial
