r"""The results file of a sweep: one header line
``{"sweep_results": {"format": 1, "sweep_hash": ..., "sweep": {...}, "code_version": ..., "created": ..., "provenance": ...}}``
then one JSON line per finished task (:meth:`Sweep.record`), the lines of a cell appended and ``fsync``'d together as
its solve finishes (:class:`ResultsWriter`).
A rerun skips the finished tasks; a torn last line (a write cut by a crash) is dropped and its task
redone; a file of another sweep, or one damaged before its last line, is refused.
"""
from __future__ import annotations

import contextlib
import datetime
import fcntl
import functools
import importlib.metadata
import json
import math
import os
import stat
import subprocess
from dataclasses import dataclass
from pathlib import Path

from derive.errors import ParameterError
from derive.files import check_output_file, read_regular_file
from verify.montecarlo.trials import AXIS_PATHS
from verify.sweeps.spec import MOST_OUTLIERS, SPECTRAL_OUTPUTS, Sweep, canonical_json, dimensions, sweep_hash

__all__ = ["MAX_RESULTS_BYTES", "FORMAT", "RESULT_FIELDS", "RECORD_FIELDS", "HEADER_START", "Scan", "scan_results",
           "header_sweep", "EIGENVALUE_TAIL", "eigenvalue_ceiling", "TIMING_FIELDS", "check_records", "read_results",
           "ResultsWriter", "code_version", "result_lines"]

MAX_RESULTS_BYTES = 4 * 2**30
"""Largest results file read (10^6 tasks of a few KB)."""

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


RECORD_FIELDS = {"task", "point", "dims", "result", "code_version", "timing"}
"""Every field of a record, and no other."""


def header_sweep(header: dict, where: str) -> Sweep:
    """The :class:`Sweep` a header describes, after checking that its parameters still hash to its
    ``sweep_hash`` (a header edited by hand, ``seeds`` say, is refused)."""
    spec, files = header.get("sweep"), header.get("files", {})
    if not isinstance(spec, dict) or not isinstance(files, dict) or sweep_hash(spec, files) != header["sweep_hash"]:
        raise ParameterError("results", f"{where}: the header's parameters do not match its hash (edited by hand?)")
    try:
        return Sweep(spec, files=files)
    except ParameterError as exc:
        raise ParameterError("results", f"{where}: the header's sweep is not valid ({exc})") from None


def _finite(x) -> bool:
    return isinstance(x, (int, float)) and not isinstance(x, bool) and math.isfinite(x)


def _count(x) -> bool:
    return type(x) is int


EIGENVALUE_TAIL = 700
r"""The tail of the noise's norms the eigenvalue ceiling allows (:func:`eigenvalue_ceiling`): a chi-square of ``d``
degrees of freedom exceeds :math:`d + 2\sqrt{dx} + 2x` with probability at most :math:`e^{-x}` (Laurent and Massart),
:math:`e^{-700} \approx 10^{-304}` for each token."""


def eigenvalue_ceiling(job) -> float:
    r"""An eigenvalue of ``S`` (or ``S_c``) that no draw of the task ``job`` reaches but with probability below
    :math:`10^{-290}`: :math:`\lambda_{max}(S_c) \le \lambda_{max}(S) \le \max_n \|c_n\|^2 \le \|w\|_1^2
    \max_v \|e_v\|^2`, and :math:`\|e_v\| \le \sqrt{\mu_2} + \|z_v\|` with :math:`\|z_v\|^2` below the tail
    :data:`EIGENVALUE_TAIL` for all ``V`` tokens."""
    x = EIGENVALUE_TAIL
    norm = math.sqrt(job.mu2) + math.sqrt(job.d + 2 * math.sqrt(job.d * x) + 2 * x)
    return sum(abs(w) for w in job.weights) ** 2 * norm ** 2 * (1 + 1e-9)


def _spectrum_problem(values, ceiling: float) -> str | None:
    """What a run could not have written in a top-``k`` spectrum of a positive semi-definite matrix: a negative top
    eigenvalue, values out of order or below zero beyond rounding (``1e-8`` of the top), one above ``ceiling``."""
    top, slack = values[0], 1e-8 * max(abs(values[0]), 1e-300)
    if top < 0 or top > ceiling:
        return f"a top eigenvalue {top!r} outside [0, {ceiling:.3g}], where the eigenvalues of this S lie"
    if any(b > a + slack for a, b in zip(values, values[1:])) or values[-1] < -slack:
        return "eigenvalues that are not the decreasing top of a positive semi-definite spectrum"
    return None


def _result_problem(sweep: Sweep, task, result: dict) -> str | None:
    """What is wrong with a record's ``result`` for this sweep (``None`` if nothing): exactly the fields of
    the sweep's outputs, each of its type and shape, and nothing a run could not write (an eigenvalue of the positive
    semi-definite ``S`` below zero or above :func:`eigenvalue_ceiling`, overlaps of orthonormal eigenvectors summing
    above 1, a bulk edge that is not the eigenvalue below the predicted outliers, an accuracy that is not a count of
    the ``N/2`` test sequences)."""
    k, expected = sweep.settings["k"], set()
    job = sweep.job(task)
    if any(o in SPECTRAL_OUTPUTS for o in sweep.outputs):
        expected.add("path")
        if not (isinstance(result.get("path"), str) and result["path"] in AXIS_PATHS):
            return f"path {str(result.get('path'))[:40]!r} is not a solver"
    for name in ("top_eigenvalues", "overlaps"):
        if name in sweep.outputs:
            expected.add(name)
            values = result.get(name)
            if not (isinstance(values, list) and len(values) == k and all(_finite(x) for x in values)):
                return f"{name} must be {k} finite numbers, got {values!r}"[:200]
    if "top_eigenvalues" in sweep.outputs:
        problem = _spectrum_problem(result["top_eigenvalues"], eigenvalue_ceiling(job))
        if problem:
            return problem
    if "overlaps" in sweep.outputs and not (all(-1e-12 <= x <= 1 + 1e-12 for x in result["overlaps"])
                                            and sum(result["overlaps"]) <= 1 + 1e-9):
        return "overlaps outside [0, 1], or summing above 1 (those of orthonormal eigenvectors cannot)"
    if "bulk_edge" in sweep.outputs:
        expected |= {"bulk_edge", "outliers_predicted"}
        edge, outliers = result.get("bulk_edge"), result.get("outliers_predicted")
        if not _finite(edge) or not _count(outliers):
            return "bulk_edge must be a finite number with an integer outliers_predicted"
        if not 0 <= outliers <= min(k - 1, MOST_OUTLIERS):
            return f"outliers_predicted {outliers} is not a count of outliers below k = {k}"
        if "top_eigenvalues" in sweep.outputs and edge != result["top_eigenvalues"][outliers]:
            return "bulk_edge is not the eigenvalue below the predicted outliers"
        if not -1e-8 * abs(edge) <= edge <= eigenvalue_ceiling(job):
            return f"a bulk edge {edge!r} outside the eigenvalues of this S"
    if "accuracy" in sweep.outputs:
        expected |= {"accuracy", "n_test"}
        accuracy, n_test = result.get("accuracy"), result.get("n_test")
        if not (_finite(accuracy) and 0 <= accuracy <= 1 and _count(n_test)):
            return "accuracy must be a number in [0, 1] with an integer n_test"
        if n_test != max(1, job.N // 2) or abs(accuracy * n_test - round(accuracy * n_test)) > 1e-9 * n_test:
            return f"accuracy {accuracy!r} is not a share of the {max(1, job.N // 2)} test sequences"
    if set(result) != expected:
        return f"fields {sorted(map(str, result))}, expected {sorted(expected)}"[:200]
    return None


def _timing_problem(timing) -> str | None:
    if not (isinstance(timing, dict) and set(timing) == TIMING_FIELDS):
        return f"timing must hold {sorted(TIMING_FIELDS)}"
    if not (_finite(timing["seconds"]) and _finite(timing["cpu_seconds"]) and timing["seconds"] >= 0
            and timing["cpu_seconds"] >= 0 and _count(timing["group_tasks"]) and timing["group_tasks"] >= 1
            and isinstance(timing["worker"], str)):
        return "timing must be seconds >= 0, a number of tasks and a worker's name"
    return None


TIMING_FIELDS = {"seconds", "cpu_seconds", "group_tasks", "worker"}
"""The fields of a record's ``timing``."""


def check_records(sweep: Sweep, records: dict, where: str) -> None:
    """Refuse a results file holding a record that this sweep would not write: a key that is not one of
    its tasks, a point or dimensions that do not match the key, missing or extra fields or fields of another type,
    a result that a run could not write (:func:`_result_problem`). Each key is looked up, not the tasks listed (a
    sweep may have 10^6)."""
    dims = {}
    for key, rec in records.items():
        task = sweep.task(key)
        problem = None
        if task is None:
            problem = "is not a task of this sweep"
        elif set(rec) != RECORD_FIELDS:
            problem = f"has fields {sorted(map(str, rec))}, expected {sorted(RECORD_FIELDS)}"[:200]
        elif rec["point"] != task.point:
            problem = f"has the point {rec['point']!r}, but its key is the point {task.point!r}"[:300]
        elif not isinstance(rec["code_version"], str):
            problem = "has a code_version that is not text"
        elif (timing := _timing_problem(rec["timing"])) is not None:
            problem = f"has a bad timing: {timing}"
        else:
            index = key[:-1]
            if index not in dims:
                dims[index] = dimensions(sweep.params(task.point))
            if rec["dims"] != dims[index]:
                problem = f"has dimensions {rec['dims']!r}, expected {dims[index]!r}"[:300]
            elif not isinstance(rec["result"], dict):
                problem = "has no result"
            else:
                problem = _result_problem(sweep, task, rec["result"])
                problem = None if problem is None else f"has a bad result: {problem}"
        if problem:
            raise ParameterError("results", f"{where}: the record of task {list(key)} {problem}; "
                                            "the file is not this sweep's output (remove the record to redo its task)")


def _line_no(data: bytes, pos: int) -> int:
    return data.count(b"\n", 0, pos) + 1


def read_results(path) -> Scan:
    """Read a results file without changing it (a torn last line is reported in ``torn``, not removed)."""
    data = read_regular_file(path, "results", MAX_RESULTS_BYTES)
    scan = scan_results(data, str(path))
    if scan.header is None:
        raise ParameterError("results", f"{path}: holds no sweep header (empty file?)")
    return scan


def _header(sweep: Sweep) -> dict:
    from derive.report.provenance import provenance

    # the provenance of the run that created the file (package, commit, source hash, Python and library versions):
    # the records name the code version that wrote each
    return {"format": FORMAT, "sweep_hash": sweep.hash, "sweep": sweep.spec, "files": sweep.files,
            "code_version": code_version(),
            "created": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
            "provenance": provenance()}


class ResultsWriter:
    """The results file of ``sweep`` at ``path``, opened for appending (a context manager).

    Opening takes an exclusive lock (a second sweep on the same file is refused), checks the header's
    sweep hash, truncates a torn last line, and collects the finished tasks in ``done``. Each
    :meth:`append` writes its lines and ``fsync``'s them before returning, so a record that was appended
    survives a crash, and a crash mid-write leaves at most a torn last line. A write that fails (a full disk,
    a file-size limit, its ``fsync``) or is interrupted by a signal is taken back: the file ends after its last whole
    record, and a file this writer created holds at least its header, or is removed. Records written whole before a
    signal stops the command during their ``fsync`` stay.
    """

    def __init__(self, path, sweep: Sweep):
        self.path = check_output_file(path, "results")
        created = not self.path.exists()
        try:
            self.fd = os.open(self.path, os.O_RDWR | os.O_CREAT | os.O_NONBLOCK | os.O_CLOEXEC, 0o644)
        except OSError as exc:
            raise ParameterError("results", f"{path}: cannot be opened ({exc.strerror})") from None
        if not stat.S_ISREG(os.fstat(self.fd).st_mode):
            os.close(self.fd)
            raise ParameterError("results", f"{path}: not a regular file")
        try:
            fcntl.flock(self.fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(self.fd)
            raise ParameterError("results", f"{path}: another running sweep is writing this file") from None
        try:
            self._open(sweep, created)
        except BaseException:
            if created and os.fstat(self.fd).st_size == 0:
                os.unlink(self.path)  # its header could not be written: leave no empty file
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
        if scan.header is not None:
            header_sweep(scan.header, str(self.path))
        check_records(sweep, scan.records, str(self.path))
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

    def append(self, *records: dict):
        """Write ``records`` (a cell's, say) in one write and make them durable with one ``fsync``: a sweep of 57 600
        tasks paid 57 600 fsyncs, the largest part of its client's time (notes/benchmarks.md)."""
        line = "".join(canonical_json(record) + "\n" for record in records).encode()
        end = os.lseek(self.fd, 0, os.SEEK_END)
        whole = False
        try:
            view = memoryview(line)
            while view:
                view = view[os.write(self.fd, view):]
            whole = True
            os.fsync(self.fd)
        except BaseException as exc:
            if whole and not isinstance(exc, OSError):
                # a signal during the fsync: the records are whole, and the kernel writes them back as the command
                # ends. Cutting them had lost a finished cell at every stop that fell there (tests/test_signals.py)
                raise
            # part of the lines may be on disk, or a failed fsync may have lost them: cut them, so that the file never
            # ends in a torn record while this process lives (a kill -9 mid-write still can, and the next run drops it)
            with contextlib.suppress(OSError):
                os.ftruncate(self.fd, end)
            if isinstance(exc, OSError):
                raise ParameterError("results", f"{self.path}: cannot be written ({exc.strerror or exc}); "
                                                "the records before these are kept") from None
            raise

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
