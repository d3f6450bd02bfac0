"""Processes seen through /proc (Linux): what a driver started, and whether it still runs. Shared by the
kill tests (``tests/test_sweep.py``, ``scripts/kill_test.py``)."""
from pathlib import Path

__all__ = ["descendants", "alive", "in_session"]


def descendants(pid: int) -> set:
    """The living processes below ``pid``."""
    children = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                ppid = int((entry / "stat").read_bytes().rsplit(b")", 1)[1].split()[1])
            except OSError:
                continue
            children.setdefault(ppid, []).append(int(entry.name))
    out, todo = set(), [pid]
    while todo:
        for child in children.get(todo.pop(), []):
            out.add(child)
            todo.append(child)
    return out


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
