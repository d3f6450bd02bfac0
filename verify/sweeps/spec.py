r"""Parameter sweeps: a grid of model parameters times seeds, one task per (grid point, seed), results
appended to a JSON-lines file that a rerun resumes.

**Sweep file** (TOML or JSON, read as data by :mod:`tomllib` / :mod:`json`, never evaluated)::

    [sweep]
    root_seed = 20260601          # the seed every task's stream derives from
    seeds = 2                     # seeds per grid point
    outputs = ["top_eigenvalues", "overlaps", "bulk_edge", "accuracy"]
    k = 3                         # top eigenvalues per task
    path = "auto"                 # eigensolver of verify.montecarlo.trials.run_trial

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
without the index along ``mu2`` (:meth:`Sweep.draw_key`), with ``s = 0`` for the spectrum and ``s = 1`` for
the classification draw (:func:`task_seed`): a function of the task's coordinates only, never of the order
in which tasks run or of the worker, and the same for every ``mu2`` of a cell (common random numbers: the
tasks of a cell are one draw solved along the ``mu2`` axis, :mod:`verify.montecarlo.mu2_axis`).

The results file is :mod:`verify.sweeps.results`; running the tasks, :mod:`verify.sweeps.run`.
"""
from __future__ import annotations

import functools
import hashlib
import itertools
import json
import math
import tomllib
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import sympy as sp

from derive.errors import ParameterError
from derive.files import MAX_BYTES as MAX_USER_FILE_BYTES, read_regular_file
from derive.model.schemes import CATALOGUE as SCHEME_CATALOGUE, OPTIONS as SCHEME_OPTIONS
from derive.numbers import check_count, check_range, parse_rational
from verify.montecarlo.memory import MAX_MU2, MAX_SEEDS, check_trial

__all__ = ["OUTPUTS", "SPECTRAL_OUTPUTS", "SOLVER_PATHS", "MAX_SWEEP_FILE_BYTES", "MAX_TASKS", "MAX_AXIS", "check_tasks", "check_axis", "SPECTRUM_STREAM", "CLASSIFICATION_STREAM", "canonical_json", "sweep_hash", "normalize",
           "load_sweep_data", "task_seed", "dimensions", "point_pooling", "theory", "predicted_outliers", "MOST_OUTLIERS", "Job",
           "Task", "Sweep", "load_sweep"]

OUTPUTS = ("top_eigenvalues", "overlaps", "bulk_edge", "accuracy")
SPECTRAL_OUTPUTS = ("top_eigenvalues", "overlaps", "bulk_edge")
SPECTRUM_STREAM, CLASSIFICATION_STREAM = 0, 1
SOLVER_PATHS = ("auto", "dense", "implicit", "mixed")

MAX_SWEEP_FILE_BYTES = 2**20
"""Largest sweep file read (the paper-scale sweep is 1 KB)."""

MAX_TASKS = 10**6
"""Most tasks of one sweep (grid points times seeds)."""

MAX_AXIS = 10_000
"""Most values of one sweep axis (a range's ``num``, a list)."""


def check_tasks(n: int, name: str = "sweep.seeds") -> None:
    """Refuse a sweep of more than :data:`MAX_TASKS` tasks.

    >>> check_tasks(10**7)
    Traceback (most recent call last):
    ...
    derive.errors.ParameterError: sweep.seeds: the sweep has 10000000 tasks, more than 1000000
    """
    if n > MAX_TASKS:
        raise ParameterError(name, f"the sweep has {n} tasks, more than {MAX_TASKS}")


def check_axis(n: int, name: str) -> None:
    """Refuse a sweep axis of more than :data:`MAX_AXIS` values.

    >>> check_axis(10**9, "grid.mu2")
    Traceback (most recent call last):
    ...
    derive.errors.ParameterError: grid.mu2: at most 10000 values, got 1000000000
    """
    if n > MAX_AXIS:
        raise ParameterError(name, f"at most {MAX_AXIS} values, got {n}")


# ----------------------------------------------------------------------------------------------
# reading and normalizing the sweep's parameters


def _rational(value, name: str) -> sp.Rational:
    if isinstance(value, bool) or not isinstance(value, (int, float, str)):
        raise ParameterError(name, f"must be a number (integer, decimal or 'p/q'), got {value!r}")
    return parse_rational(repr(value) if isinstance(value, float) else value, name)


def _positive_rational(value, name: str) -> str:
    return str(check_range(_rational(value, name), name, low=0, low_open=True))


def _signal(value, name: str) -> str:
    # float64 eigenvalues of S carry errors of about 1e-16 mu2 (verify mc refuses the same)
    return str(check_range(_rational(value, name), name, low=0, high=MAX_MU2))


def _text(value, name: str) -> str:
    if not isinstance(value, str) or not value:
        raise ParameterError(name, f"must be a non-empty string, got {value!r}")
    return value


def _boolean(value, name: str) -> bool:
    if not isinstance(value, bool):
        raise ParameterError(name, f"must be true or false, got {value!r}")
    return value


def _option(option):
    """The reader of a weight scheme's option in a sweep file: checked by the scheme's catalogue entry
    (:data:`derive.model.schemes.OPTIONS`), kept as the text it normalizes to."""
    def read(value, name: str) -> str:
        if isinstance(value, bool) or not isinstance(value, (int, float, str)):
            raise ParameterError(name, f"must be a number or a string, got {value!r}")
        try:
            return option.text(option.read(repr(value) if isinstance(value, float) else value))
        except ParameterError as exc:
            raise ParameterError(name, exc.reason) from None
    return read


MODEL_PARAMETERS = {
    "d": lambda v, n: check_count(v, n, low=2),
    "delta": _positive_rational,
    "gamma": _positive_rational,
    "T": lambda v, n: check_count(v, n, low=1),
    "signs": _text,
    "weights": _text,
    "mu2": _signal,
    **{o.name: _option(o) for o in SCHEME_OPTIONS},
    "centered": _boolean,
}
REQUIRED = ("d", "delta", "gamma", "T", "signs", "weights", "mu2")
OPTIONAL_DEFAULTS = {"centered": False}
RATIONAL_PARAMETERS = ("delta", "gamma", "mu2", *(o.name for o in SCHEME_OPTIONS if o.choices is None))


def _axis(name: str, values) -> list:
    """The normalized values of grid axis ``name``: a list, or ``{from, to, num}`` (exact, evenly spaced)."""
    where = f"grid.{name}"
    if isinstance(values, dict):
        if name not in RATIONAL_PARAMETERS:
            raise ParameterError(where, f"{{from, to, num}} is for the rational parameters {', '.join(RATIONAL_PARAMETERS)}")
        if set(values) != {"from", "to", "num"}:
            raise ParameterError(where, f"a range needs exactly the keys from, to, num; got {sorted(values)}")
        lo, hi = _rational(values["from"], f"{where}.from"), _rational(values["to"], f"{where}.to")
        num = check_count(values["num"], f"{where}.num", low=1)
        check_axis(num, f"{where}.num")
        if num == 1 and lo != hi:
            raise ParameterError(f"{where}.num", "a range of one value needs from = to")
        step = 0 if num == 1 else (hi - lo) / (num - 1)
        values = [str(lo + i * step) for i in range(num)]
    if not isinstance(values, list) or not values:
        raise ParameterError(where, f"must be a non-empty list or a {{from, to, num}} range, got {values!r}")
    check_axis(len(values), where)
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
    if isinstance(grid, list) and all(isinstance(a, list) and len(a) == 2 and isinstance(a[0], str) for a in grid):
        names = [a[0] for a in grid]
        twice = sorted({n for n in names if names.count(n) > 1})
        if twice:
            raise ParameterError(f"grid.{twice[0]}", "is an axis twice; give each parameter's values once")
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
    for option in SCHEME_OPTIONS:
        owners = [s.name for s in SCHEME_CATALOGUE if option in s.options]
        name = option.name
        if (name in model or name in grid) and not set(owners) & set(schemes if isinstance(schemes, list) else []):
            owner = " or ".join(owners)
            raise ParameterError(f"{'grid' if name in grid else 'model'}.{name}", f"belongs to the {owner} scheme, "
                                                                                 f"and no weights of this sweep are "
                                                                                 f"{owner}")
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
    seeds = check_count(settings.get("seeds", 1), "sweep.seeds", low=1)
    if seeds > MAX_SEEDS:
        raise ParameterError("sweep.seeds", f"at most {MAX_SEEDS} seeds per grid point, got {seeds}")
    axes = [[name, _axis(name, values)] for name, values in grid.items()]
    check_tasks(seeds * math.prod(len(values) for _, values in axes))
    return {
        "sweep": {
            "root_seed": check_count(settings.get("root_seed", 0), "sweep.root_seed", low=0),
            "seeds": seeds,
            "outputs": [o for o in OUTPUTS if o in outputs],
            "k": check_count(settings.get("k", 3), "sweep.k", low=1),
            "path": path,
        },
        "model": fixed,
        "grid": axes,
    }


class _DuplicateKey(ValueError):
    pass


def _unique_keys(pairs) -> dict:
    """A JSON object whose keys are all distinct (``json`` keeps the last of two silently; TOML refuses them)."""
    out = {}
    for key, value in pairs:
        if key in out:
            raise _DuplicateKey(key)
        out[key] = value
    return out


def load_sweep_data(path) -> dict:
    """The document of a ``.toml`` or ``.json`` sweep file, parsed as data."""
    p = Path(path)
    if p.suffix not in (".toml", ".json"):
        raise ParameterError("sweep", f"{path}: must be a .toml or .json file")
    raw = read_regular_file(p, "sweep", MAX_SWEEP_FILE_BYTES)
    try:
        return tomllib.loads(raw.decode()) if p.suffix == ".toml" else json.loads(raw, object_pairs_hook=_unique_keys)
    except (tomllib.TOMLDecodeError, json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise ParameterError("sweep", f"{path}: not valid {p.suffix[1:].upper()}: {exc}") from None
    except _DuplicateKey as exc:
        raise ParameterError("sweep", f"{path}: the key {exc.args[0]!r} is given twice in one object") from None
    except RecursionError:
        raise ParameterError("sweep", f"{path}: nested too deeply to be a sweep file") from None
    except ValueError as exc:
        # an integer of more than 4300 digits (Python's limit on reading one)
        raise ParameterError("sweep", f"{path}: {exc}".split(";")[0]) from None


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
    """``d, V, N, T`` of a grid point, ``V`` and ``N`` by :func:`verify.montecarlo.draw.rung` (the records
    keep them; the theory uses the realized ``d/V`` and ``d/N``).

    >>> dimensions({"d": 30, "delta": "1/2", "gamma": "1/3", "T": 4})
    {'d': 30, 'V': 60, 'N': 90, 'T': 4}
    """
    return dict(_dimensions(params["d"], params["delta"], params["gamma"], params["T"]))


@functools.lru_cache(maxsize=None)
def _dimensions(d, delta, gamma, T) -> tuple:
    # memoized: a paper-scale sweep asks for the dimensions of its 4 800 points once per task and per record
    from verify.montecarlo.draw import rung

    V, N = rung(d, delta, gamma)
    return (("d", d), ("V", V), ("N", N), ("T", T))


def point_model(params: dict, **sizes):
    """The :class:`derive.Model` of a grid point (``sizes``: ``d, V, N`` or ``delta, gamma`` to set), its scheme's
    options those the point gives for its scheme."""
    from derive.model.schemes import CATALOGUE

    scheme = next((s for s in CATALOGUE if s.name == params["weights"]), None)
    options = {o.name: params.get(o.name) for o in (scheme.options if scheme else ())}
    return _model(params["T"], params["signs"], params["weights"], params["mu2"], params["centered"],
                  tuple(sorted(options.items())), tuple(sorted(sizes.items())))


@functools.lru_cache(maxsize=None)
def _model(T, signs, weights, mu2, centered, options, sizes):
    from derive import Model

    return Model(T=T, signs=signs, weights=weights, mu2=mu2, centered=centered, **dict(options), **dict(sizes))


def point_pooling(params: dict):
    """The :class:`derive.model.pooling.Pooling` of a grid point (exact where derive gives it exactly)."""
    from derive import weights

    return weights(point_model(params))


MOST_OUTLIERS = 2
"""The most eigenvalues of ``S`` the theory puts above the bulk at sample level: the population covariance is the
bulk's plus a term of rank two at most (the signal direction; the vocabulary mean, of the raw ``S`` only), and a
perturbation of rank ``r`` moves at most ``r`` eigenvalues out (:func:`predicted_outliers`)."""

THEORY_DIGITS = 30
"""Working precision of a grid point's theory (its figures are compared with float64 Monte Carlo)."""


@functools.lru_cache(maxsize=None)
def _theory(model):
    import mpmath

    from derive import spike

    with mpmath.workdps(THEORY_DIGITS):
        return spike(model, law="gaussian-equivalent")


def theory(params: dict):
    """The Gaussian-equivalent :class:`derive.gaussian.outliers.Outliers` at a grid point's realized ``d/V``, ``d/N``
    (:func:`derive.spike`)."""
    dims = dimensions(params)
    return _theory(point_model(params, d=dims["d"], V=dims["V"], N=dims["N"]))


def predicted_outliers(o) -> int:
    """How many eigenvalues of ``S`` (or ``S_c``) the :class:`derive.gaussian.outliers.Outliers` ``o`` puts above the
    bulk at sample level."""
    return int(o.sample.outlier) + sum(x.level == "sample" for x in o.other_outliers)


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
    draw_key: tuple = ()
    mu2_axis: tuple = ()


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
            found[path] = hashlib.sha256(read_regular_file(path, "sweep", MAX_USER_FILE_BYTES)).hexdigest()
        elif isinstance(x, dict):
            for v in x.values():
                walk(v)
        elif isinstance(x, (list, tuple)):
            for v in x:
                walk(v)

    walk(spec)
    return dict(sorted(found.items()))


def sweep_hash(spec: dict, files: dict) -> str:
    """The hash that names a sweep: over its normalized parameters and the digests of the files they name.

    >>> sweep_hash({"a": 1}, {})[:12]
    '015abd7f5cc5'
    """
    identity = {"sweep": spec, "files": files} if files else spec
    return hashlib.sha256(canonical_json(identity).encode()).hexdigest()


class Sweep:
    """A validated sweep (from the data of a sweep file, or a results header's normalized ``sweep``):
    its normalized parameters ``spec``, their hash, its axes and tasks."""

    def __init__(self, data: dict, files: dict | None = None):
        self.spec = normalize(data)
        # a file:PATH spec names a file whose content may change between runs: its digest joins the
        # identity, so a resumed sweep cannot mix results from two versions of the file; a results
        # header carries the digests, so a summary needs only the results file
        self.files = file_digests(self.spec) if files is None else dict(files)
        self.hash = sweep_hash(self.spec, self.files)
        self.settings, self.fixed = self.spec["sweep"], self.spec["model"]
        self.axes = [(name, values) for name, values in self.spec["grid"]]
        self.outputs = tuple(self.settings["outputs"])
        self._mu2_axis = tuple(float(sp.Rational(v)) for v in dict(self.axes).get("mu2", [self.fixed.get("mu2")]))
        self._point_jobs = {}
        checked = set()
        for index in itertools.product(*(range(len(v)) for _, v in self.axes)):
            self._check_point(self.params(self.point(index)), checked)

    def point(self, index) -> dict:
        return {name: values[i] for (name, values), i in zip(self.axes, index)}

    def params(self, point: dict) -> dict:
        """All model parameters at a grid point."""
        return {**self.fixed, **point}

    def _check_point(self, params: dict, checked: set):
        """Refuse a grid point whose trial the machine cannot hold, or whose ``k`` is too small; the trial is checked
        once for the points that differ in ``mu2`` alone (``checked`` holds those done), and the theory is asked
        only when ``bulk_edge`` needs ``k`` above the outliers it predicts and ``k`` could be too small: the sweep
        of 10^4 grid points had spent most of a minute on these checks."""
        dims = dimensions(params)
        trial = canonical_json({name: value for name, value in params.items() if name != "mu2"})
        if trial not in checked:
            self._check_trial(params, dims)
            checked.add(trial)
        k = self.settings["k"]
        if k >= min(dims["d"], dims["N"]):
            raise ParameterError("sweep.k", f"must be below min(d, N) = {min(dims['d'], dims['N'])} at {params}")
        if "bulk_edge" in self.outputs and k <= MOST_OUTLIERS and k <= predicted_outliers(theory(params)):
            raise ParameterError("sweep.k", f"bulk_edge needs k above the {predicted_outliers(theory(params))} "
                                            f"predicted outlier(s) at {params}")

    def _check_trial(self, params: dict, dims: dict):
        from derive import Model
        from verify.montecarlo.draw import trial_weights
        from verify.montecarlo.trials import choose_axis_path, memory_model

        if point_model(params).weights.scores is not None:
            # one draw solved along the mu2 axis pools with weights that do not depend on mu2; attention computed from
            # the table does (the signal's share of its scores)
            raise ParameterError("weights", f"the {params['weights']} scheme pools each sequence with its own attention, "
                                            "which depends on mu2: sweeps pool one draw with fixed weights along the mu2 "
                                            "axis (verify mc runs it)")
        w = point_pooling(params).weights
        try:
            model = Model(d=dims["d"], V=dims["V"], N=dims["N"], T=dims["T"], signs=params["signs"], mu2=params["mu2"])
            trial_weights(model, [float(x) for x in w])
            # the spectra: one draw solved along the mu2 axis, by the solver the cell will use
            path = choose_axis_path(self.settings["path"], model.d, model.V, model.N, len(self.mu2_axis()))
            check_trial(model.d, model.V, model.N, model.T, model.signs, solver=memory_model(path, axis=True))
            if "accuracy" in self.outputs:
                # the classifier forms the pooled vectors of N + N/2 sequences
                check_trial(model.d, model.V, model.N + model.N // 2, model.T, model.signs, solver="dense")
        except ParameterError as exc:
            if exc.parameter not in ("d", "V", "N", "T"):
                raise
            # V and N follow from d, delta, gamma: name the sweep's own entry for d
            name = "d" if exc.parameter in ("V", "N") else exc.parameter
            where = "grid" if any(a == name for a, _ in self.axes) else "model"
            raise ParameterError(f"{where}.{name}", f"{exc.reason} at {params}") from None

    def tasks(self) -> list[Task]:
        """Every task, grid points in axis order (last axis fastest), seeds innermost."""
        seeds = range(self.settings["seeds"])
        return [Task((*index, j), point) for index in itertools.product(*(range(len(v)) for _, v in self.axes))
                for point in (self.point(index),) for j in seeds]

    def task_count(self) -> int:
        """The number of tasks, without listing them (a sweep may have 10^6).

        >>> Sweep({"sweep": {"seeds": 3, "outputs": ["overlaps"]}, "model": {"d": 8, "delta": "1/2", "gamma": "1/2",
        ...        "T": 2, "signs": "iid", "weights": "mean"}, "grid": {"mu2": [1, 2]}}).task_count()
        6
        """
        return math.prod(len(values) for _, values in self.axes) * self.settings["seeds"]

    def task(self, key) -> Task | None:
        """The task of ``key`` (a tuple of grid indices and a seed index), or ``None`` when it is not one of this
        sweep's: found without listing the tasks."""
        if not (isinstance(key, tuple) and len(key) == len(self.axes) + 1
                and all(type(i) is int for i in key)):
            return None
        sizes = [len(values) for _, values in self.axes] + [self.settings["seeds"]]
        if not all(0 <= i < n for i, n in zip(key, sizes)):
            return None
        return Task(key, self.point(key[:-1]))

    def cells(self, done=frozenset()):
        """The tasks whose keys are not in ``done``, one list per cell (:meth:`draw_key`: the tasks that differ in
        ``mu2`` alone), cells in the order of their first such task in :meth:`tasks`, made one at a time: a batch of
        a few cells of a sweep of 10^6 tasks is found without listing them all.

        >>> sweep = Sweep({"sweep": {"seeds": 2, "outputs": ["overlaps"]}, "model": {"d": 8, "delta": "1/2",
        ...     "gamma": "1/2", "T": 2, "signs": "iid", "weights": "mean"}, "grid": {"mu2": [1, 2, 3]}})
        >>> [[task.key for task in cell] for cell in sweep.cells({(0, 0)})]
        [[(0, 1), (1, 1), (2, 1)], [(1, 0), (2, 0)]]
        """
        names = [name for name, _ in self.axes]
        at = names.index("mu2") if "mu2" in names else None
        sizes = [len(values) for _, values in self.axes]
        seen = set()
        for key in itertools.product(*(range(n) for n in sizes), range(self.settings["seeds"])):
            if key in done:
                continue
            draw = key if at is None else key[:at] + key[at + 1:]
            if draw in seen:
                continue
            seen.add(draw)
            keys = [key] if at is None else [(*draw[:at], j, *draw[at:]) for j in range(sizes[at])]
            yield [Task(k, self.point(k[:-1])) for k in keys if k not in done]

    def job(self, task: Task) -> Job:
        return Job(key=task.key, root_seed=self.settings["root_seed"], k=self.settings["k"], path=self.settings["path"],
                   outputs=self.outputs, draw_key=self.draw_key(task), mu2_axis=self.mu2_axis(),
                   **self._point_job(task.key[:-1]))

    def _point_job(self, index: tuple) -> dict:
        """The fields of a :class:`Job` that the tasks of grid point ``index`` share whatever their seed, built once a
        point: the paper's sweep has 12 seeds a point, and building them per task was most of its client's start-up
        (notes/benchmarks.md)."""
        if index not in self._point_jobs:
            params = self.params(self.point(index))
            dims = dimensions(params)
            pool = point_pooling(params)
            self._point_jobs[index] = {
                "d": dims["d"], "V": dims["V"], "N": dims["N"], "T": dims["T"], "signs": params["signs"],
                "weights": tuple(float(x) for x in pool.weights), "mu2": float(sp.Rational(params["mu2"])),
                "centered": params["centered"], "ridge": float(pool.kappa),
                "outliers": predicted_outliers(theory(params)) if "bulk_edge" in self.outputs else None}
        return self._point_jobs[index]

    def draw_key(self, task: Task) -> tuple:
        """The coordinates a task's draw derives from: its key without the index along ``mu2``, so that the
        tasks of one cell share their draw whatever their signal strength (common random numbers)."""
        names = [name for name, _ in self.axes]
        return tuple(i for i, name in zip(task.key, [*names, "seed"]) if name != "mu2")

    def mu2_axis(self) -> tuple:
        """The sweep's values of ``mu2`` as floats (one value when ``mu2`` is fixed): every cell is solved
        on the whole axis (:func:`verify.sweeps.run.run_group`)."""
        return self._mu2_axis

    def record(self, task: Task, outcome: dict) -> dict:
        """The results-file record of a finished task."""
        return {"task": list(task.key), "point": task.point, "dims": dimensions(self.params(task.point)), **outcome}


def load_sweep(path) -> Sweep:
    """The :class:`Sweep` of a ``.toml`` or ``.json`` file."""
    return Sweep(load_sweep_data(path))
