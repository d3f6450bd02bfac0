r"""Parameter sweeps: a grid of model parameters times seeds, one task per (grid point, seed), results
appended to a JSON-lines file that a rerun resumes.

**Sweep file** (TOML or JSON, read as data by :mod:`tomllib` / :mod:`json`, never evaluated)::

    [sweep]
    root_seed = 20260601          # the seed every task's stream derives from
    seeds = 2                     # seeds per grid point
    outputs = ["top_eigenvalues", "overlaps", "bulk_edge", "accuracy"]
    k = 3                         # top eigenvalues per task
    path = "auto"                 # eigensolver of verify.simulate.run_trial

    [model]                       # parameters fixed for the whole sweep
    d = 32
    delta = "1/2"                 # d/V: V = d/delta rounded to an even integer
    T = 4
    signs = "prefix:2"
    centered = true

    [grid]                        # axes, in this order: a list, or {from, to, num} (exact, evenly spaced)
    weights = ["mean", "optimal"]
    mu2 = ["1/2", 2]
    gamma = {from = "1/4", to = "1/2", num = 2}   # d/N: N = d/gamma rounded

Every model parameter (``d, delta, gamma, T, signs, weights, mu2``, optional ``tau``, ``mask``,
``centered``) is given exactly once, in ``[model]`` or as an axis of ``[grid]``. Numbers are read
exactly (:func:`derive.numbers.parse_rational`; a TOML float through its shortest decimal ``repr``).
The sweep's identity is the SHA-256 of its normalized parameters (:func:`canonical_json`), so
``"0.5"`` and ``"1/2"`` name the same sweep.

**Tasks and seeds.** Task ``(i_1, ..., i_m, j)`` is grid point ``(i_1, ..., i_m)`` (indices along the
axes) with seed index ``j``. Its randomness is ``SeedSequence(root_seed, spawn_key=(i_1, ..., i_m, j, s))``
with ``s = 0`` for the spectrum and ``s = 1`` for the classification draw (:func:`task_seed`): a
function of the task's coordinates only, never of the order in which tasks run or of the worker.

**Results file**: one header line
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
import hashlib
import importlib.metadata
import itertools
import json
import os
import socket
import subprocess
import sys
import time
import tomllib
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import sympy as sp

from derive.errors import ParameterError
from derive.numbers import check_range, parse_rational

FORMAT = 1
"""Version of the results-file layout, in its header."""

OUTPUTS = ("top_eigenvalues", "overlaps", "bulk_edge", "accuracy")
SPECTRAL_OUTPUTS = ("top_eigenvalues", "overlaps", "bulk_edge")
SPECTRUM_STREAM, CLASSIFICATION_STREAM = 0, 1
SOLVER_PATHS = ("auto", "dense", "implicit", "mixed")
RESULT_FIELDS = ("task", "point", "dims", "result")
"""The fields of a record that are a function of the sweep and the code alone (``timing`` and
``code_version`` are not)."""


# ----------------------------------------------------------------------------------------------
# reading and normalizing the sweep's parameters


def _integer(value, name: str, low: int) -> int:
    if isinstance(value, bool):
        raise ParameterError(name, f"must be an integer >= {low}, got {value!r}")
    q = parse_rational(repr(value) if isinstance(value, float) else value, name)
    if not q.is_Integer or q < low:
        raise ParameterError(name, f"must be an integer >= {low}, got {value!r}")
    return int(q)


def _rational(value, name: str) -> sp.Rational:
    if isinstance(value, bool) or not isinstance(value, (int, float, str)):
        raise ParameterError(name, f"must be a number (integer, decimal or 'p/q'), got {value!r}")
    return parse_rational(repr(value) if isinstance(value, float) else value, name)


def _positive_rational(value, name: str) -> str:
    return str(check_range(_rational(value, name), name, low=0, low_open=True))


def _nonnegative_rational(value, name: str) -> str:
    return str(check_range(_rational(value, name), name, low=0))


def _text(value, name: str) -> str:
    if not isinstance(value, str) or not value:
        raise ParameterError(name, f"must be a non-empty string, got {value!r}")
    return value


def _boolean(value, name: str) -> bool:
    if not isinstance(value, bool):
        raise ParameterError(name, f"must be true or false, got {value!r}")
    return value


def _mask(value, name: str) -> str:
    if value not in ("inclusive", "strict"):
        raise ParameterError(name, f"must be 'inclusive' or 'strict', got {value!r}")
    return value


MODEL_PARAMETERS = {
    "d": lambda v, n: _integer(v, n, 2),
    "delta": _positive_rational,
    "gamma": _positive_rational,
    "T": lambda v, n: _integer(v, n, 1),
    "signs": _text,
    "weights": _text,
    "mu2": _nonnegative_rational,
    "tau": _nonnegative_rational,
    "mask": _mask,
    "centered": _boolean,
}
REQUIRED = ("d", "delta", "gamma", "T", "signs", "weights", "mu2")
OPTIONAL_DEFAULTS = {"centered": False}
RATIONAL_PARAMETERS = ("delta", "gamma", "mu2", "tau")


def _axis(name: str, values) -> list:
    """The normalized values of grid axis ``name``: a list, or ``{from, to, num}`` (exact, evenly spaced)."""
    where = f"grid.{name}"
    if isinstance(values, dict):
        if name not in RATIONAL_PARAMETERS:
            raise ParameterError(where, f"{{from, to, num}} is for the rational parameters {', '.join(RATIONAL_PARAMETERS)}")
        if set(values) != {"from", "to", "num"}:
            raise ParameterError(where, f"a range needs exactly the keys from, to, num; got {sorted(values)}")
        lo, hi = _rational(values["from"], f"{where}.from"), _rational(values["to"], f"{where}.to")
        num = _integer(values["num"], f"{where}.num", 1)
        if num == 1 and lo != hi:
            raise ParameterError(f"{where}.num", "a range of one value needs from = to")
        step = 0 if num == 1 else (hi - lo) / (num - 1)
        values = [str(lo + i * step) for i in range(num)]
    if not isinstance(values, list) or not values:
        raise ParameterError(where, f"must be a non-empty list or a {{from, to, num}} range, got {values!r}")
    out = [MODEL_PARAMETERS[name](v, where) for v in values]
    if len(set(map(json.dumps, out))) != len(out):
        raise ParameterError(where, f"lists a value twice: {values!r}")
    return out


def canonical_json(obj) -> str:
    """The one byte-exact JSON text of ``obj`` (sorted keys, no spaces) that hashes and records use.

    >>> canonical_json({"b": [1, "1/2"], "a": 0.1})
    '{"a":0.1,"b":[1,"1/2"]}'
    """
    return json.dumps(obj, sort_keys=True, separators=(",", ":"), allow_nan=False)


def normalize(data) -> dict:
    """The normalized parameters of a sweep given as data (the parsed TOML or JSON document).

    Raises :class:`ParameterError` naming the bad entry (``sweep.seeds``, ``grid.mu2``, ...).

    >>> normalize({"model": {"d": 8, "delta": 0.5, "gamma": "1/2", "T": 2, "signs": "iid",
    ...            "weights": "mean"}, "grid": {"mu2": {"from": 0, "to": 1, "num": 3}}})["grid"]
    [['mu2', ['0', '1/2', '1']]]
    """
    if not isinstance(data, dict):
        raise ParameterError("sweep", f"must be a table of tables, got {type(data).__name__}")
    unknown = set(data) - {"sweep", "model", "grid"}
    if unknown:
        raise ParameterError("sweep", f"unknown section(s) {sorted(unknown)} (sweep, model, grid)")
    settings, model, grid = (data.get(s, {}) for s in ("sweep", "model", "grid"))
    if isinstance(grid, list) and all(isinstance(a, list) and len(a) == 2 for a in grid):
        grid = dict(grid)  # the normalized form, as a results header stores it
    for section, table in (("sweep", settings), ("model", model), ("grid", grid)):
        if not isinstance(table, dict):
            raise ParameterError(section, f"must be a table, got {table!r}")
    for section, table in (("model", model), ("grid", grid)):
        for name in table:
            if name not in MODEL_PARAMETERS:
                raise ParameterError(f"{section}.{name}", f"unknown parameter (one of {', '.join(MODEL_PARAMETERS)})")
    both = sorted(set(model) & set(grid))
    if both:
        raise ParameterError(f"grid.{both[0]}", "is also fixed in [model]; give it in one place only")
    for name in REQUIRED:
        if name not in model and name not in grid:
            raise ParameterError(f"model.{name}", "is required (in [model], or as an axis of [grid])")
    schemes = grid["weights"] if "weights" in grid else [model["weights"]]
    for name in ("tau", "mask"):
        if (name in model or name in grid) and "causal" not in (schemes if isinstance(schemes, list) else []):
            raise ParameterError(f"{'grid' if name in grid else 'model'}.{name}", "belongs to the causal scheme, "
                                                                                 "and no weights of this sweep are causal")
    unknown = set(settings) - {"root_seed", "seeds", "outputs", "k", "path"}
    if unknown:
        raise ParameterError(f"sweep.{sorted(unknown)[0]}", "unknown setting (root_seed, seeds, outputs, k, path)")
    outputs = settings.get("outputs", list(SPECTRAL_OUTPUTS))
    if not isinstance(outputs, list) or not outputs or any(o not in OUTPUTS for o in outputs):
        raise ParameterError("sweep.outputs", f"must be a non-empty list of {', '.join(OUTPUTS)}; got {outputs!r}")
    path = settings.get("path", "auto")
    if path not in SOLVER_PATHS:
        raise ParameterError("sweep.path", f"must be one of {', '.join(SOLVER_PATHS)}, got {path!r}")
    fixed = {**OPTIONAL_DEFAULTS, **{n: MODEL_PARAMETERS[n](v, f"model.{n}") for n, v in model.items()}}
    for name in grid:
        fixed.pop(name, None)
    return {
        "sweep": {
            "root_seed": _integer(settings.get("root_seed", 0), "sweep.root_seed", 0),
            "seeds": _integer(settings.get("seeds", 1), "sweep.seeds", 1),
            "outputs": [o for o in OUTPUTS if o in outputs],
            "k": _integer(settings.get("k", 3), "sweep.k", 1),
            "path": path,
        },
        "model": fixed,
        "grid": [[name, _axis(name, values)] for name, values in grid.items()],
    }


def load_sweep_data(path) -> dict:
    """The document of a ``.toml`` or ``.json`` sweep file, parsed as data."""
    p = Path(path)
    if p.suffix not in (".toml", ".json"):
        raise ParameterError("sweep", f"{path}: must be a .toml or .json file")
    try:
        raw = p.read_bytes()
    except OSError as exc:
        raise ParameterError("sweep", f"{path}: cannot read ({exc.strerror})") from None
    try:
        return tomllib.loads(raw.decode()) if p.suffix == ".toml" else json.loads(raw)
    except (tomllib.TOMLDecodeError, json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise ParameterError("sweep", f"{path}: not valid {p.suffix[1:].upper()}: {exc}") from None


# ----------------------------------------------------------------------------------------------
# the grid, its tasks and their seeds


def task_seed(root_seed: int, key: tuple, stream: int) -> np.random.SeedSequence:
    """The seed of stream ``stream`` of task ``key`` (grid indices, then the seed index).

    >>> a = task_seed(7, (1, 0, 2), 0).generate_state(2)
    >>> b = task_seed(7, (1, 0, 2), 0).generate_state(2)
    >>> bool((a == b).all()), bool((a == task_seed(7, (0, 1, 2), 0).generate_state(2)).all())
    (True, False)
    """
    return np.random.SeedSequence(root_seed, spawn_key=(*key, stream))


def dimensions(params: dict) -> dict:
    """``d, V, N, T`` of a grid point, ``V`` and ``N`` by :func:`verify.finite_size.rung` (the records
    keep them; the theory uses the realized ``d/V`` and ``d/N``).

    >>> dimensions({"d": 30, "delta": "1/2", "gamma": "1/3", "T": 4})
    {'d': 30, 'V': 60, 'N': 90, 'T': 4}
    """
    from verify.finite_size import rung

    V, N = rung(params["d"], params["delta"], params["gamma"])
    return {"d": params["d"], "V": V, "N": N, "T": params["T"]}


@functools.lru_cache(maxsize=None)
def _scheme(scheme: str, T: int, signs: str, tau, mask):
    """Exact weights, ``alpha``, ``kappa`` and ``sum w`` of a scheme (``tau``/``mask`` for causal only)."""
    from derive import attention

    causal = scheme == "causal"
    w, R = attention.resolve_weights(scheme, T, signs, tau=tau if causal else None, mask=mask if causal else None)
    return w, attention.alpha(w, R), attention.kappa(w), attention.sum_w(w)


def scheme_scalars(params: dict):
    """``(weights, alpha, kappa, sum_w)`` of a grid point's pooling, exact where derive gives them exactly."""
    return _scheme(params["weights"], params["T"], params["signs"], params.get("tau"), params.get("mask"))


@functools.lru_cache(maxsize=None)
def _theory(d, V, N, scheme, T, signs, tau, mask, mu2, centered) -> dict:
    from derive.spikes import spike

    _, alpha, kappa, W = _scheme(scheme, T, signs, tau, mask)
    return spike(sp.Rational(d, V), sp.Rational(d, N), alpha, kappa, mu2, sum_w=W, centered=centered, digits=15)


def theory(params: dict) -> dict:
    """The :func:`derive.spikes.spike` document at a grid point's realized ``d/V``, ``d/N`` (15 digits)."""
    dims = dimensions(params)
    return _theory(dims["d"], dims["V"], dims["N"], params["weights"], params["T"], params["signs"],
                   params.get("tau"), params.get("mask"), params["mu2"], params["centered"])


def predicted_outliers(doc: dict) -> int:
    """How many eigenvalues of ``S`` (or ``S_c``) the theory puts above the bulk at sample level."""
    return int(doc["sample"]["outlier"]) + sum(o["level"] == "sample" for o in doc["other_outliers"])


@dataclass(frozen=True)
class Job:
    """What a worker needs to run one task (plain data, so it pickles to processes and Dask workers)."""

    key: tuple
    root_seed: int
    d: int
    V: int
    N: int
    T: int
    signs: str
    weights: tuple
    mu2: float
    centered: bool
    k: int
    path: str
    outputs: tuple
    outliers: int | None
    ridge: float


@dataclass(frozen=True)
class Task:
    """One grid point and seed index: ``key = (axis indices..., seed index)``, ``point`` the axis values."""

    key: tuple
    point: dict


def file_digests(spec) -> dict:
    """``{PATH: sha256 of its bytes}`` for every ``file:PATH`` value anywhere in ``spec``."""
    found = {}

    def walk(x):
        if isinstance(x, str) and x.startswith("file:"):
            path = x[len("file:"):]
            try:
                found[path] = hashlib.sha256(Path(path).read_bytes()).hexdigest()
            except OSError as exc:
                raise ParameterError("sweep", f"cannot read {path}: {exc.strerror}") from None
        elif isinstance(x, dict):
            for v in x.values():
                walk(v)
        elif isinstance(x, (list, tuple)):
            for v in x:
                walk(v)

    walk(spec)
    return dict(sorted(found.items()))


class Sweep:
    """A validated sweep (from the data of a sweep file, or a results header's normalized ``sweep``):
    its normalized parameters ``spec``, their hash, its axes and tasks."""

    def __init__(self, data: dict, files: dict | None = None):
        self.spec = normalize(data)
        # a file:PATH spec names a file whose content may change between runs: its digest joins the
        # identity, so a resumed sweep cannot mix results from two versions of the file; a results
        # header carries the digests, so a summary needs only the results file
        self.files = file_digests(self.spec) if files is None else dict(files)
        identity = {"sweep": self.spec, "files": self.files} if self.files else self.spec
        self.hash = hashlib.sha256(canonical_json(identity).encode()).hexdigest()
        self.settings, self.fixed = self.spec["sweep"], self.spec["model"]
        self.axes = [(name, values) for name, values in self.spec["grid"]]
        self.outputs = tuple(self.settings["outputs"])
        for index in itertools.product(*(range(len(v)) for _, v in self.axes)):
            self._check_point(self.params(self.point(index)))

    def point(self, index) -> dict:
        return {name: values[i] for (name, values), i in zip(self.axes, index)}

    def params(self, point: dict) -> dict:
        """All model parameters at a grid point."""
        return {**self.fixed, **point}

    def _check_point(self, params: dict):
        from verify.simulate import check_model

        dims = dimensions(params)
        w = scheme_scalars(params)[0]
        check_model(dims["d"], dims["V"], dims["N"], dims["T"], params["signs"], [float(x) for x in w],
                    float(sp.Rational(params["mu2"])))
        k = self.settings["k"]
        if k >= min(dims["d"], dims["N"]):
            raise ParameterError("sweep.k", f"must be below min(d, N) = {min(dims['d'], dims['N'])} at {params}")
        if "bulk_edge" in self.outputs and k <= predicted_outliers(theory(params)):
            raise ParameterError("sweep.k", f"bulk_edge needs k above the {predicted_outliers(theory(params))} "
                                            f"predicted outlier(s) at {params}")

    def tasks(self) -> list[Task]:
        """Every task, grid points in axis order (last axis fastest), seeds innermost."""
        seeds = range(self.settings["seeds"])
        return [Task((*index, j), self.point(index))
                for index in itertools.product(*(range(len(v)) for _, v in self.axes)) for j in seeds]

    def job(self, task: Task) -> Job:
        params = self.params(task.point)
        dims = dimensions(params)
        w, _, kappa, _ = scheme_scalars(params)
        outliers = predicted_outliers(theory(params)) if "bulk_edge" in self.outputs else None
        return Job(task.key, self.settings["root_seed"], dims["d"], dims["V"], dims["N"], dims["T"], params["signs"],
                   tuple(float(x) for x in w), float(sp.Rational(params["mu2"])), params["centered"],
                   self.settings["k"], self.settings["path"], self.outputs, outliers, float(kappa))

    def record(self, task: Task, outcome: dict) -> dict:
        """The results-file record of a finished task."""
        return {"task": list(task.key), "point": task.point, "dims": dimensions(self.params(task.point)), **outcome}


def load_sweep(path) -> Sweep:
    """The :class:`Sweep` of a ``.toml`` or ``.json`` file."""
    return Sweep(load_sweep_data(path))


# ----------------------------------------------------------------------------------------------
# one task (runs on a worker)


@functools.lru_cache(maxsize=None)
def code_version() -> str:
    """``git describe`` of the project's checkout if it is one, else the installed package version."""
    root = Path(__file__).resolve().parents[1]
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


def run_task(job: Job) -> dict:
    r"""Run one task: the requested outputs (``result``), this worker's ``code_version`` and ``timing``.

    * ``top_eigenvalues``, ``overlaps``: the top-``k`` eigenvalues of :math:`S` (or :math:`S_c`) and the
      squared overlaps :math:`|\hat u_i^T u|^2` of their eigenvectors (:func:`verify.simulate.run_trial`);
    * ``bulk_edge``: the largest eigenvalue below the ``outliers`` ones the theory predicts (an estimate
      of the bulk's right edge, stored with ``outliers_predicted``);
    * ``accuracy``: ridge classification (:mod:`verify.classify`, :math:`\lambda = \kappa`) of the first
      position's sign from the pooled vectors, trained on ``N`` sequences and tested on ``N//2`` fresh
      ones of the same table (its own draw, stream 1). It holds the ``d x 3N/2`` pooled matrix in memory.
    """
    from verify.simulate import check_model, draw, run_trial

    start = time.perf_counter()
    result = {}
    if any(o in SPECTRAL_OUTPUTS for o in job.outputs):
        trial = run_trial(job.d, job.V, job.N, job.T, job.signs, list(job.weights), job.mu2, centered=job.centered,
                          k=job.k, path=job.path, seed=task_seed(job.root_seed, job.key, SPECTRUM_STREAM))
        result["path"] = trial.path
        if "top_eigenvalues" in job.outputs:
            result["top_eigenvalues"] = trial.top_eigenvalues.tolist()
        if "overlaps" in job.outputs:
            result["overlaps"] = trial.overlaps.tolist()
        if "bulk_edge" in job.outputs:
            result["bulk_edge"] = float(trial.top_eigenvalues[job.outliers])
            result["outliers_predicted"] = job.outliers
    if "accuracy" in job.outputs:
        from verify.classify import accuracy, ridge_fit

        n_test = max(1, job.N // 2)
        model = check_model(job.d, job.V, job.N + n_test, job.T, job.signs, list(job.weights), job.mu2)
        data = draw(model, task_seed(job.root_seed, job.key, CLASSIFICATION_STREAM))
        C = np.asarray((data.A.T @ data.E.T).T)
        y = data.xi[:, 0].astype(np.float64)
        beta = ridge_fit(C[:, :job.N], y[:job.N], job.ridge)
        result["accuracy"] = accuracy(beta, C[:, job.N:], y[job.N:])
        result["n_test"] = n_test
    return {"result": result, "code_version": code_version(),
            "timing": {"seconds": time.perf_counter() - start, "worker": f"{socket.gethostname()}:{os.getpid()}"}}


# ----------------------------------------------------------------------------------------------
# the results file


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


# ----------------------------------------------------------------------------------------------
# running a sweep


def run_sweep(sweep: Sweep, path, executor, *, max_tasks: int | None = None, log=sys.stderr) -> dict:
    """Run the tasks of ``sweep`` not yet in the results file ``path`` on ``executor``
    (:mod:`verify.executors`), at most ``max_tasks`` of them; returns what was done."""
    start = time.perf_counter()
    with ResultsWriter(path, sweep) as out:
        if out.repaired:
            print(f"verify sweep: {path}: dropped a torn last record ({out.repaired} bytes); its task is redone",
                  file=log)
        if out.done and out.header.get("code_version") != code_version():
            print(f"verify sweep: {path}: started by {out.header.get('code_version')}, continued by "
                  f"{code_version()} (each record names its own)", file=log)
        tasks = sweep.tasks()
        pending = [t for t in tasks if t.key not in out.done]
        todo = pending if max_tasks is None else pending[:max_tasks]
        by_key = {t.key: t for t in todo}
        computed, first, last_report = 0, None, start
        for job, outcome in executor.map_unordered(run_task, (sweep.job(t) for t in todo)):
            out.append(sweep.record(by_key[job.key], outcome))
            computed += 1
            now = time.perf_counter()
            first = now - start if first is None else first
            if now - last_report >= 10 or computed == len(todo):
                print(f"verify sweep: {len(tasks) - len(pending) + computed}/{len(tasks)} tasks, "
                      f"{now - start:.0f} s", file=log, flush=True)
                last_report = now
    seconds = time.perf_counter() - start
    return {"results": str(path), "sweep_hash": sweep.hash, "tasks": len(tasks), "done_before": len(tasks) - len(pending),
            "computed": computed, "remaining": len(pending) - computed, "repaired_bytes": out.repaired,
            "executor": executor.name, "workers": executor.workers, "seconds": seconds,
            "first_result_seconds": first}


def result_lines(records: dict) -> dict:
    """The canonical text of each record's result fields (:data:`RESULT_FIELDS`), by task key: what two
    runs of a sweep must agree on byte for byte."""
    return {key: canonical_json({f: rec[f] for f in RESULT_FIELDS}) for key, rec in records.items()}

