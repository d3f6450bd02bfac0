r"""The results file of a sweep: one header line
``{"sweep_results": {"format": 1, "sweep_hash": ..., "sweep": {...}, "code_version": ..., "created": ...}}``
then one JSON line per finished task (:meth:`Sweep.record`), appended and ``fsync``'d as the task
finishes (:class:`ResultsWriter`).
A rerun skips the finished tasks; a torn last line (a write cut by a crash) is dropped and its task
redone; a file of another sweep, or one damaged before its last line, is refused.
"""
from __future__ import annotations

import datetime
import fcntl
import functools
import importlib.metadata
import json
import os
import subprocess
from dataclasses import dataclass
from pathlib import Path

from derive.errors import ParameterError
from verify.sweeps.spec import Sweep, canonical_json

__all__ = ["FORMAT", "RESULT_FIELDS", "HEADER_START", "Scan", "scan_results", "read_results", "ResultsWriter",
           "code_version", "result_lines"]

FORMAT = 1
"""Version of the results-file layout, in its header."""

RESULT_FIELDS = ("task", "point", "dims", "result")
"""The fields of a record that are a function of the sweep and the code alone (``timing`` and
``code_version`` are not)."""


@functools.lru_cache(maxsize=None)
def code_version() -> str:
    """``git describe`` of the project's checkout if it is one, else the installed package version."""
    root = Path(__file__).resolve().parents[2]
    if (root / ".git").exists() and (root / "pyproject.toml").exists():
        try:
            out = subprocess.run(["git", "-C", str(root), "describe", "--always", "--dirty", "--tags"],
                                 capture_output=True, text=True, timeout=30)
            if out.returncode == 0 and out.stdout.strip():
                return "git " + out.stdout.strip()
        except (OSError, subprocess.SubprocessError):
            pass
    try:
        return "attention-rmt " + importlib.metadata.version("attention-rmt")
    except importlib.metadata.PackageNotFoundError:
        return "unknown"



HEADER_START = b'{"sweep_results":'
"""How every header line starts (canonical JSON of ``{"sweep_results": {...}}``)."""


@dataclass
class Scan:
    """What a results file holds: its ``header`` (``None`` if empty), the ``records`` by task key, and
    ``good_end``, the byte offset after the last intact line (``torn`` bytes follow it)."""

    header: dict | None
    records: dict
    good_end: int
    torn: int


def _entry(line: bytes, first: bool):
    """The header (``first``) or record on a complete line, or ``None`` if the line is not one."""
    try:
        entry = json.loads(line)
    except (ValueError, UnicodeDecodeError):
        return None
    if first:
        head = entry.get("sweep_results") if isinstance(entry, dict) else None
        ok = isinstance(head, dict) and head.get("format") == FORMAT and isinstance(head.get("sweep_hash"), str)
        return head if ok else None
    ok = (isinstance(entry, dict) and isinstance(entry.get("task"), list) and isinstance(entry.get("result"), dict)
          and all(isinstance(i, int) and not isinstance(i, bool) for i in entry["task"]))
    return entry if ok else None


def scan_results(data: bytes, where: str) -> Scan:
    """Parse the bytes of a results file.

    Only the last line may be bad: a write cut by a crash (no newline, or not a record). A bad line
    followed by more lines means damage, and is refused; so is a first line that is not (the start
    of) a header, so that a file of something else is never truncated.
    """
    header, records, pos = None, {}, 0
    while pos < len(data):
        nl = data.find(b"\n", pos)
        end = len(data) if nl < 0 else nl + 1
        entry = None if nl < 0 else _entry(data[pos:nl], header is None)
        if entry is None:
            if end < len(data):
                raise ParameterError("results", f"{where}: line {_line_no(data, pos)} is not a valid record but more lines follow: "
                                                "the file is damaged (not a torn last write); refusing to touch it")
            torn = data[pos:]
            if header is None and not (HEADER_START.startswith(torn) or torn.startswith(HEADER_START)):
                raise ParameterError("results", f"{where}: not a sweep results file (format {FORMAT})")
            return Scan(header, records, pos, len(torn))
        if header is None:
            header = entry
        else:
            key = tuple(entry["task"])
            if key in records:
                raise ParameterError("results", f"{where}: task {list(key)} is recorded twice (line {_line_no(data, pos)})")
            records[key] = entry
        pos = end
    return Scan(header, records, pos, 0)


def _line_no(data: bytes, pos: int) -> int:
    return data.count(b"\n", 0, pos) + 1


def read_results(path) -> Scan:
    """Read a results file without changing it (a torn last line is reported in ``torn``, not removed)."""
    try:
        data = Path(path).read_bytes()
    except OSError as exc:
        raise ParameterError("results", f"{path}: cannot read ({exc.strerror})") from None
    scan = scan_results(data, str(path))
    if scan.header is None:
        raise ParameterError("results", f"{path}: holds no sweep header (empty file?)")
    return scan


def _header(sweep: Sweep) -> dict:
    return {"format": FORMAT, "sweep_hash": sweep.hash, "sweep": sweep.spec, "files": sweep.files,
            "code_version": code_version(),
            "created": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")}


class ResultsWriter:
    """The results file of ``sweep`` at ``path``, opened for appending (a context manager).

    Opening takes an exclusive lock (a second sweep on the same file is refused), checks the header's
    sweep hash, truncates a torn last line, and collects the finished tasks in ``done``. Each
    :meth:`append` writes one line and ``fsync``'s it before returning, so a record that was appended
    survives a crash, and a crash mid-write leaves at most a torn last line.
    """

    def __init__(self, path, sweep: Sweep):
        self.path = Path(path)
        created = not self.path.exists()
        self.fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            fcntl.flock(self.fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(self.fd)
            raise ParameterError("results", f"{path}: another running sweep is writing this file") from None
        try:
            self._open(sweep, created)
        except BaseException:
            os.close(self.fd)
            raise

    def _open(self, sweep: Sweep, created: bool):
        size = os.fstat(self.fd).st_size
        data = os.pread(self.fd, size, 0)
        scan = scan_results(data, str(self.path))
        if scan.header is not None and scan.header["sweep_hash"] != sweep.hash:
            raise ParameterError("results", f"{self.path}: holds another sweep (parameters hash "
                                            f"{scan.header['sweep_hash'][:12]}, this sweep {sweep.hash[:12]}); "
                                            "use another results file")
        keys = {t.key for t in sweep.tasks()}
        for key in scan.records:
            if key not in keys:
                raise ParameterError("results", f"{self.path}: task {list(key)} is not a task of this sweep")
        self.repaired = scan.torn
        os.ftruncate(self.fd, scan.good_end)
        os.lseek(self.fd, 0, os.SEEK_END)
        if scan.header is None:
            self.append({"sweep_results": _header(sweep)})
        else:
            os.fsync(self.fd)
        if created:
            dir_fd = os.open(self.path.parent, os.O_RDONLY)
            try:
                os.fsync(dir_fd)
            finally:
                os.close(dir_fd)
        self.header = scan.header or _header(sweep)
        self.done = scan.records

    def append(self, record: dict):
        line = (canonical_json(record) + "\n").encode()
        view = memoryview(line)
        while view:
            view = view[os.write(self.fd, view):]
        os.fsync(self.fd)

    def close(self):
        os.close(self.fd)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


def result_lines(records: dict) -> dict:
    """The canonical text of each record's result fields (:data:`RESULT_FIELDS`), by task key: what two
    runs of a sweep must agree on byte for byte."""
    return {key: canonical_json({f: rec[f] for f in RESULT_FIELDS}) for key, rec in records.items()}
