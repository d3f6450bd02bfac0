"""Processes seen through /proc (Linux): what a driver started, whether it still runs, and how much work it has done.
Shared by the kill tests (``tests/test_sweep.py``, ``scripts/kill_test.py``) and by every test that waits for a
process of its own.

A test waits for a child until it ends or is hung, and "hung" is measured in work, not in seconds of the clock: the
child (with everything below it) has used more CPU time than ``cpu`` seconds, a generous multiple of what it needs
(a loop without end), or has used none for :data:`IDLE` seconds (blocked for good: on a shared machine a process
that runs gets some CPU time every second). A busy machine makes a child slower, never "hung"."""
import os
import signal
import subprocess
import time
from pathlib import Path

__all__ = ["descendants", "alive", "in_session", "cpu_seconds", "Hung", "IDLE", "communicate", "run", "wait_until",
           "kill_tree"]

IDLE = 300.0
"""Seconds of the clock in which a child and every process below it used no CPU time at all: it is hung (blocked)."""

_TICK = os.sysconf("SC_CLK_TCK")


def _table() -> dict:
    """``{pid: (ppid, clock ticks used: its own and those of the children it has reaped)}`` of every process."""
    table = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                fields = (entry / "stat").read_bytes().rsplit(b")", 1)[1].split()
            except OSError:
                continue
            # after the command's name: state, ppid, ... utime, stime, cutime, cstime are fields 14 to 17 of stat
            table[int(entry.name)] = (int(fields[1]), sum(int(x) for x in fields[11:15]))
    return table


def _below(pid: int, table: dict) -> set:
    children = {}
    for child, (ppid, _) in table.items():
        children.setdefault(ppid, []).append(child)
    out, todo = set(), [pid]
    while todo:
        for child in children.get(todo.pop(), []):
            out.add(child)
            todo.append(child)
    return out


def descendants(pid: int) -> set:
    """The living processes below ``pid``."""
    return _below(pid, _table())


def cpu_seconds(pid: int) -> float:
    """The CPU time (user and system) used so far by ``pid`` and every process below it, living or reaped by one of
    them."""
    table = _table()
    return sum(table[p][1] for p in {pid} | _below(pid, table) if p in table) / _TICK


def alive(pid: int) -> bool:
    """Whether ``pid`` runs (a zombie, dead but not yet reaped, does not)."""
    try:
        return Path(f"/proc/{pid}/stat").read_bytes().rsplit(b")", 1)[1].split()[0] != b"Z"
    except OSError:
        return False


def in_session(sid: int) -> dict:
    """The living processes of session ``sid`` (a command started with ``start_new_session=True`` has its pid as
    session id, and so has everything it starts, even once orphaned): ``{pid: command line}``."""
    out = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                fields = (entry / "stat").read_bytes().rsplit(b")", 1)[1].split()
                command = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace").strip()
            except OSError:
                continue
            if int(fields[3]) == sid and fields[0] != b"Z":
                out[int(entry.name)] = command
    return out


class Hung(AssertionError):
    """A child that used more CPU time than its bound, or none for :data:`IDLE` seconds (it was killed)."""


class _Watch:
    """The work of the process tree at ``pid``, looked at about once a second: :meth:`check` raises :class:`Hung`
    once it is over ``cpu`` CPU-seconds or has stood still for ``idle`` seconds."""

    def __init__(self, pid: int, cpu: float, idle: float, what: str):
        self.pid, self.cpu, self.idle, self.what = pid, cpu, idle, what
        self.used, self.looked = -1.0, 0.0
        self.moved = time.monotonic()

    def check(self) -> None:
        now = time.monotonic()
        if now - self.looked < 1.0:
            return
        self.looked = now
        used = cpu_seconds(self.pid)
        if used > self.cpu:
            raise Hung(f"{self.what} used more than {self.cpu:g} CPU-seconds ({used:.0f}): a loop without end?")
        if used > self.used:
            self.used, self.moved = used, now
        elif now - self.moved > self.idle:
            raise Hung(f"{self.what} used no CPU time for {self.idle:g} s (after {used:.1f} CPU-seconds): blocked?")


def kill_tree(proc) -> None:
    """SIGKILL to ``proc`` (a :class:`subprocess.Popen` or :class:`multiprocessing.Process`) and every process below
    it."""
    for pid in descendants(proc.pid):
        try:
            os.kill(pid, signal.SIGKILL)
        except OSError:
            pass
    proc.kill()


def communicate(proc: subprocess.Popen, *, cpu: float, idle: float = IDLE, what: str | None = None):
    """``proc.communicate()`` (its stdout and stderr), raising :class:`Hung` (after killing it and everything below
    it) if the process tree at ``proc`` uses more than ``cpu`` CPU-seconds or stands still for ``idle`` seconds."""
    watch = _Watch(proc.pid, cpu, idle, what or f"pid {proc.pid}")
    step = 0.01
    while True:
        try:
            return proc.communicate(timeout=step)
        except subprocess.TimeoutExpired:
            step = min(1.0, 2 * step)
        try:
            watch.check()
        except Hung:
            kill_tree(proc)
            proc.communicate()
            raise


def run(argv, *, cpu: float, idle: float = IDLE, check: bool = False, capture_output: bool = False,
        **popen) -> subprocess.CompletedProcess:
    """:func:`subprocess.run` bounded by work instead of a timeout: :class:`Hung` if the command (with what it
    starts) uses more than ``cpu`` CPU-seconds, or none for ``idle`` seconds."""
    if capture_output:
        popen.update(stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    with subprocess.Popen(argv, **popen) as proc:
        what = " ".join(str(a) for a in (argv if isinstance(argv, (list, tuple)) else [argv]))[:120]
        out, err = communicate(proc, cpu=cpu, idle=idle, what=what)
    done = subprocess.CompletedProcess(proc.args, proc.returncode, out, err)
    if check:
        done.check_returncode()
    return done


def wait_until(predicate, proc, *, cpu: float, idle: float = IDLE, poll: float = 0.05) -> bool:
    """Wait until ``predicate()`` holds or ``proc`` (a :class:`subprocess.Popen` or :class:`multiprocessing.Process`)
    has ended (``predicate()`` is then returned); :class:`Hung` if the process tree at ``proc`` uses more than ``cpu``
    CPU-seconds or none for ``idle`` seconds before (it is left running: the caller's ``finally`` stops it)."""
    watch = _Watch(proc.pid, cpu, idle, f"pid {proc.pid}")
    ended = (lambda: proc.poll() is not None) if hasattr(proc, "poll") else (lambda: not proc.is_alive())  # noqa: E731
    step = min(poll, 0.001)
    while not predicate():
        if ended():
            return predicate()
        watch.check()
        time.sleep(step)
        step = min(poll, 2 * step)  # a quick answer is seen at once, a long wait polls every ``poll`` seconds
    return True
