r"""Trials of the model: a draw (:mod:`verify.montecarlo.draw`) solved by the chosen eigensolver.

A trial returns the top-``k`` eigenvalues of :math:`S = \frac1N \sum_n c_n c_n^T = \frac1N E A A^T E^T`
(or of the centered :math:`S_c = S - \bar c \bar c^T`, :math:`\bar c = E \bar a`,
:math:`\bar a = \frac1N A \mathbf 1`) and the squared overlaps :math:`|\hat u_i^T u|^2` of their
eigenvectors with :math:`u = \mu/\|\mu\| = \mathbf e_1` (also when :math:`\mu_2 = 0`, where the
overlap measures the null). Solvers: :func:`verify.montecarlo.dense.dense_top` and the one-pass Lanczos
of :mod:`verify.montecarlo.lanczos` (float64, or float32 certified in float64).

:func:`run_trials` gives trial ``j`` the seed ``SeedSequence(seed0).spawn(K)[j]``, which does not depend on ``K``.
"""
from __future__ import annotations

import numbers
from dataclasses import dataclass

import numpy as np

from derive.errors import ParameterError
from derive.numbers import check_count
from verify.montecarlo.dense import dense_top
from verify.montecarlo.draw import Draw, draw, given_weights, positive_int, trial_model, trial_weights
from verify.montecarlo.lanczos import Mixing, implicit_top, mixed_top
from verify.montecarlo.memory import check_trial, check_trials
from verify.montecarlo.mu2_axis import Axis, Pencil, axis_top, check_mu2s, dense_axis_top
from verify.progress import progress as progress_bar

__all__ = ["PATHS", "AXIS_PATHS", "ENGINES", "AUTO_COST_RATIO", "BLAS_BREAK_EVEN", "Trial", "Trials", "memory_model", "choose_path", "choose_engine",
           "choose_axis_path", "solve", "run_trial", "TrialsRequest", "trials_request", "run_trials", "run_request",
           "solve_axis", "AxisTrials", "run_axis"]

AUTO_COST_RATIO = 500
r"""``path='auto'`` solves densely when the full spectrum is requested or when the dense cost
:math:`m^2(M + 3m)` (:math:`m, M` the smaller and larger of ``d, N``: Gram product plus
eigensolver) is at most ``AUTO_COST_RATIO`` times :math:`dV` (one pass over the table), matrix-free
otherwise, on the ``'mixed'`` path (float32 Lanczos certified in float64: eigenvalues within
:math:`10^{-10}` relative, as the ``'implicit'`` path's, at half the bytes a pass; notes/mc.md). The
constant is the crossover measured in notes/mc.md (dense was faster at a cost ratio of 312 and 350,
implicit at 700 and above): a memory-bound pass is far slower per operation than the dense Gram's
matrix-matrix product, and Lanczos needs some 50 to 100 of them."""

BLAS_BREAK_EVEN = 80_000_000
r"""``engine='auto'`` (:func:`choose_engine`) runs the matrix-free paths on BLAS
(:data:`verify.montecarlo.lanczos.ENGINES`) when ``trials * d * V`` is at most this, on the compiled
kernels otherwise. Loading numba costs about a second per process (notes/benchmarks.md); BLAS reads the
table twice a step instead of once, one extra float32 pass of :math:`4dV` bytes on some 60 steps a trial,
at about 20 GB/s: the two cost the same at :math:`\text{trials}\cdot dV \approx 1\,\mathrm s \cdot
20\,\mathrm{GB/s} / (60 \cdot 4\,\mathrm B) \approx 8\cdot10^7`."""

ENGINES = ("auto", "numba", "blas")

PATHS = ("dense", "implicit", "mixed", "auto")

AXIS_PATHS = ("dense", "mu2-axis")
"""The solvers :func:`choose_axis_path` chooses among, named in every record of a sweep."""



def _check_k(k: int, d: int, N: int) -> int:
    """``k``, an integer >= 1 already read, after checking it is below ``min(d, N)``."""
    if k >= min(d, N):
        raise ParameterError("k", f"must be below min(d, N) = {min(d, N)}, got {k}")
    return k



@dataclass(frozen=True)
class Trial:
    """One trial's result.

    ``top_eigenvalues`` (``k``, descending) of :math:`S` or :math:`S_c`; ``overlaps`` (``k``):
    :math:`|\\hat u_i^T u|^2` of the matching unit eigenvectors ``eigenvectors`` (``d x k``);
    ``spectrum``: all ``d`` eigenvalues (descending) or ``None``; ``path``: ``'dense'`` or
    ``'implicit'`` or ``'mixed'``, the solver actually used; ``products``: how many times the
    implicit solver applied :math:`S` (``None`` on the dense path); ``passes``: how many times it
    read the table, by dtype (``{'float64': 70}``; ``None`` on the dense path); ``residuals``: the
    float64 relative residuals of the returned pairs where the solver measured them (the
    ``'mixed'`` path), else ``None``.
    """

    top_eigenvalues: np.ndarray
    overlaps: np.ndarray
    eigenvectors: np.ndarray
    spectrum: np.ndarray | None
    path: str
    products: int | None = None
    passes: dict | None = None
    residuals: np.ndarray | None = None


def choose_path(path, spectrum: bool, d: int, V: int, N: int, dtype=np.float64) -> str:
    """The solver :func:`solve` should use for ``path`` (resolving ``'auto'``), after validating
    ``path``, ``dtype`` and ``spectrum`` together."""
    if path not in PATHS:
        raise ParameterError("path", f"must be one of {', '.join(PATHS)}, got {path!r}")
    if dtype not in (np.float64, np.float32):
        raise ParameterError("dtype", f"must be numpy.float64 or numpy.float32, got {dtype!r}")
    if spectrum and path in ("implicit", "mixed"):
        raise ParameterError("spectrum", "the full spectrum needs the dense path")
    if dtype == np.float32 and path in ("dense", "mixed"):
        raise ParameterError("dtype", "a float32 table is offered on the implicit path only (the mixed path rounds it itself)")
    if path == "auto":
        m, M = min(d, N), max(d, N)
        if spectrum or (dtype == np.float64 and m * m * (M + 3 * m) <= AUTO_COST_RATIO * d * V):
            return "dense"
        return "mixed" if dtype == np.float64 else "implicit"
    return path


def choose_engine(engine, path: str, trials: int, d: int, V: int) -> str:
    """The engine of the matrix-free solvers for ``engine`` (resolving ``'auto'`` by :data:`BLAS_BREAK_EVEN`;
    ``'numba'`` on the dense path, which has no use for one).

    >>> choose_engine("auto", "mixed", 1, 2000, 4000), choose_engine("auto", "mixed", 100, 2000, 4000)
    ('blas', 'numba')
    """
    if engine not in ENGINES:
        raise ParameterError("engine", f"must be one of {', '.join(ENGINES)}, got {engine!r}")
    if engine == "auto":
        return "blas" if path != "dense" and trials * d * V <= BLAS_BREAK_EVEN else "numba"
    return engine


def memory_model(path: str, dtype=np.float64, axis: bool = False) -> str:
    """The memory model (:data:`verify.montecarlo.memory.SOLVERS`) of a chosen solver ``path`` (of :func:`solve`, or of
    :func:`solve_axis` if ``axis``) with a table of ``dtype``.

    >>> memory_model("dense"), memory_model("mixed"), memory_model("mu2-axis", axis=True)
    ('dense', 'lanczos-f32', 'lanczos')
    """
    if path == "dense":
        return "dense-axis" if axis else "dense"
    return "lanczos-f32" if path == "mixed" or np.dtype(dtype) == np.float32 else "lanczos"


def choose_axis_path(path, d: int, V: int, N: int, n: int) -> str:
    """The solver of :func:`solve_axis` for ``path`` and ``n`` values of ``mu2``: ``'dense'``
    (:func:`verify.montecarlo.mu2_axis.dense_axis_top`) or ``'mu2-axis'`` (its block Lanczos run). ``'auto'``
    is dense when forming :math:`S_0` and solving it ``n`` times, :math:`d^2 V + n d^3`, costs at most
    :data:`AUTO_COST_RATIO` passes over the table (one Krylov run costs some 50 to 100); ``'implicit'``
    and ``'mixed'`` are the block Lanczos run (float64: the axis is certified to :data:`verify.montecarlo.lanczos.TOL`)."""
    choose_path(path, False, d, V, N)
    if path == "auto":
        return "dense" if d * d * (V + n * d) <= AUTO_COST_RATIO * d * V else "mu2-axis"
    return "dense" if path == "dense" else "mu2-axis"


def _mixing(data: Draw, centered: bool) -> Mixing:
    return Mixing.of_tokens(data.tokens, data.weights, data.E.shape[1], centered)


def solve(data: Draw, k: int, centered: bool, path: str, spectrum: bool = False, dtype=np.float64,
          engine: str = "numba") -> Trial:
    """Eigen-solve one drawn trial by ``path`` (``'dense'``, ``'implicit'`` or ``'mixed'``) on ``engine``
    (``'numba'`` or ``'blas'``), both already chosen."""
    residuals = products = passes = full = None
    if path == "dense":
        vals, vecs, full = dense_top(data.E, data.A, k, centered, spectrum)
    elif path == "mixed":
        vals, vecs, products, passes, residuals = mixed_top(data.E, _mixing(data, centered), k, data.v0, engine)
    else:
        vals, vecs, products, passes = implicit_top(data.E, _mixing(data, centered), k, data.v0, dtype, engine)
    return Trial(vals, vecs[0] ** 2, vecs, full, path, products, passes, residuals)


def run_trial(model, *, k=3, path="auto", seed=0, spectrum=False, dtype=np.float64, engine="numba",
              weights=None) -> Trial:
    r"""One trial of ``model`` (a :class:`derive.Model` with ``d, V, N, T``, the sign family, the weight scheme and
    ``mu2``): the top-``k`` eigenvalues of :math:`S` (or :math:`S_c` if ``model.centered``) and their eigenvectors'
    squared overlaps with :math:`u = \mathbf e_1`.

    ``weights``: ``T`` reals to pool with instead of the model's scheme (:func:`verify.montecarlo.draw.trial_weights`).
    ``k < min(d, N)``. ``path``: ``'dense'`` (:func:`dense_top`), ``'implicit'`` (:func:`implicit_top`), ``'mixed'``
    (:func:`mixed_top`: float32 Lanczos certified by a float64 Rayleigh-Ritz step) or ``'auto'`` (dense or mixed, see
    :data:`AUTO_COST_RATIO`); ``engine`` runs the matrix-free ones (:func:`choose_engine`); all paths see the same draw,
    and their eigenvalues agree to about ``1e-10`` relative (:data:`TOL`, :data:`MIXED_ACCEPT`). ``spectrum=True``
    also returns all ``d`` eigenvalues (dense path). ``dtype=numpy.float32`` stores the table in float32 for the
    implicit solver (same draw, rounded). ``seed``: a non-negative integer or a :class:`numpy.random.SeedSequence`; the
    same seed gives the same numbers.
    """
    model = trial_model(model)
    w = given_weights(model, weights)
    k = _check_k(positive_int(k, "k"), model.d, model.N)
    spectrum = _flag(spectrum, "spectrum")
    chosen = choose_path(path, spectrum, model.d, model.V, model.N, dtype)
    check_trial(model.d, model.V, model.N, model.T, model.signs, _scheme_bytes(model), memory_model(chosen, dtype))
    engine = choose_engine(engine, chosen, 1, model.d, model.V)
    return solve(draw(model, seed, weights=w), k, model.centered, chosen, spectrum, dtype, engine)


def _scheme_bytes(model) -> int:
    """What the model's weight scheme holds in a trial (its ``trial_bytes``: ``softmax``'s attention weights)."""
    return 0 if model.weights is None else model.weights.trial_bytes(model.d, model.N, model.T)


def _flag(value, name: str) -> bool:
    """A boolean option: ``centered="no"`` must not mean centered."""
    if not isinstance(value, (bool, np.bool_)):
        raise ParameterError(name, f"must be True or False, got {value!r}")
    return bool(value)


@dataclass(frozen=True)
class Trials:
    """Results of :func:`run_trials`.

    ``top_eigenvalues`` and ``overlaps``: ``K x k`` arrays, row ``j`` from trial ``j``;
    ``seeds``: the ``K`` per-trial :class:`numpy.random.SeedSequence` (``run_trial(..., seed=seeds[j])``
    repeats trial ``j``); ``spectra``: ``K x d`` (all eigenvalues, descending) or ``None``;
    ``path``: the solver used; ``observed``: what :func:`run_request`'s ``observe`` made of each trial, or ``None``.
    """

    top_eigenvalues: np.ndarray
    overlaps: np.ndarray
    seeds: tuple
    spectra: np.ndarray | None
    path: str
    observed: tuple | None = None


@dataclass(frozen=True)
class TrialsRequest:
    """A run of trials checked once where it entered (:func:`trials_request`), so :func:`run_request` trusts it: the
    model, the float weights to pool with (``None``: the model's scheme, resolved when the run starts), ``k``, the number of trials ``seeds`` and
    the root seed ``seed0``, and the solver ``path`` and ``engine`` chosen."""

    model: object
    weights: np.ndarray | None
    k: int
    seeds: int
    seed0: int
    path: str
    spectrum: bool
    dtype: object
    engine: str


def _seeds(seeds, seed0) -> tuple[int, int]:
    """The number of trials (an integer >= 1) and the root seed of their ``SeedSequence`` (an integer >= 0)."""
    K = positive_int(seeds, "seeds")
    if isinstance(seed0, bool) or not isinstance(seed0, numbers.Integral) or seed0 < 0:
        raise ParameterError("seed0", f"must be a non-negative integer, got {seed0!r}")
    return K, int(seed0)


def trials_request(model, *, k=3, path="auto", seeds=1, seed0=0, spectrum=False, dtype=np.float64, engine="numba",
                   weights=None, text=False) -> TrialsRequest:
    """The request of :func:`run_trials` (same arguments), every argument checked: the trial's memory and the run's
    work on the solver chosen (:func:`verify.montecarlo.memory.check_trials`). ``text=True`` reads ``k``, ``seeds``
    and ``seed0`` as the command line's text (``verify mc``); a Python caller gives integers."""
    model = trial_model(model)
    # without weights the model's scheme is resolved when the run starts (run_request): the command line gives the
    # weights it computed for its theory instead
    w = None if weights is None else trial_weights(model, weights)
    if text:
        K, seed0 = check_count(seeds, "seeds", low=1), check_count(seed0, "seed0")
        k = _check_k(check_count(k, "k", low=1), model.d, model.N)
    else:
        k = _check_k(positive_int(k, "k"), model.d, model.N)
        K, seed0 = _seeds(seeds, seed0)
    spectrum = _flag(spectrum, "spectrum")
    chosen = choose_path(path, spectrum, model.d, model.V, model.N, dtype)
    check_trials(model.d, model.V, model.N, model.T, K, model.signs, _scheme_bytes(model), memory_model(chosen, dtype))
    return TrialsRequest(model, w, k, K, seed0, chosen, spectrum, dtype,
                         choose_engine(engine, chosen, K, model.d, model.V))


def run_trials(model, *, k=3, path="auto", seeds=1, seed0=0, spectrum=False, dtype=np.float64,
               progress: bool | None = None, engine="numba", weights=None) -> Trials:
    """``seeds`` independent trials of :func:`run_trial` (same arguments); trial ``j`` uses
    ``SeedSequence(seed0).spawn(seeds)[j]``, so it is the same whatever the number of trials (on one
    engine: ``engine='auto'`` picks by the number of trials, and engines agree up to rounding).

    ``progress``: ``True``/``False`` forces a progress report on stderr on or off; ``None`` shows
    it once the run has lasted :data:`verify.progress.DELAY` seconds.
    """
    return run_request(trials_request(model, k=k, path=path, seeds=seeds, seed0=seed0, spectrum=spectrum, dtype=dtype,
                                      engine=engine, weights=weights), progress=progress)


def run_request(request: TrialsRequest, *, progress: bool | None = None, observe=None) -> Trials:
    """The trials of a checked ``request`` (:func:`trials_request`; :func:`run_trials` says what they are).
    ``observe(draw, trial)``, when given, is called on each trial with its draw while the draw is held, and its values
    are the result's ``observed``: what a caller needs of the draws (their tokens) without drawing them again."""
    r = request
    w = r.weights if r.weights is not None else given_weights(r.model)
    children = tuple(np.random.SeedSequence(r.seed0).spawn(r.seeds))
    results, observed = [], []
    with progress_bar("verify.montecarlo", enabled=progress, unit="trials") as report:
        for j, child in enumerate(children):
            data = draw(r.model, child, weights=w)
            results.append(solve(data, r.k, r.model.centered, r.path, r.spectrum, r.dtype, r.engine))
            if observe is not None:
                observed.append(observe(data, results[-1]))
            report(j + 1, r.seeds)
    return Trials(
        np.array([t.top_eigenvalues for t in results]),
        np.array([t.overlaps for t in results]),
        children,
        np.array([t.spectrum for t in results]) if r.spectrum else None,
        r.path,
        tuple(observed) if observe is not None else None,
    )


def solve_axis(data: Draw, mu2s, k: int, centered: bool, path: str) -> Axis:
    """One draw of the noise table (made at ``mu2 = 0``) solved for every ``mu2`` of ``mu2s`` by ``path``
    (``'dense'`` or ``'mu2-axis'``, already chosen: :func:`choose_axis_path`)."""
    pencil = Pencil.of(data.E, _mixing(data, centered), data.s)
    return (dense_axis_top if path == "dense" else axis_top)(pencil, mu2s, k)


@dataclass(frozen=True)
class AxisTrials:
    """Results of :func:`run_axis`: ``top_eigenvalues`` and ``overlaps`` (``K x len(mu2) x k``, trial ``j``
    first), the per-trial seeds, the solver used, and ``observed``: what its ``observe`` made of each trial, or
    ``None``."""

    mu2: np.ndarray
    top_eigenvalues: np.ndarray
    overlaps: np.ndarray
    seeds: tuple
    path: str
    observed: tuple | None = None


def run_axis(model, mu2s, *, k=3, path="auto", seeds=1, seed0=0, weights=None, observe=None) -> AxisTrials:
    """:func:`run_trials` of ``model`` for every ``mu2`` of ``mu2s`` at once (the model's own ``mu2`` is not used):
    trial ``j`` draws once (seed ``SeedSequence(seed0).spawn(seeds)[j]``, as :func:`run_trials`) and is solved on the
    whole axis (:mod:`verify.montecarlo.mu2_axis`), so the ``mu2`` values share their draws (common random numbers)
    and agree with :func:`run_trials` at each ``mu2`` to ``1e-8``. ``observe(draw, axis)``, when given, is called on
    each trial while its draw is held, as :func:`run_request`'s."""
    mu2s = check_mu2s(mu2s)
    model = trial_model(model, mu2=0)
    w = given_weights(model, weights)
    k = _check_k(positive_int(k, "k"), model.d, model.N)
    K, seed0 = _seeds(seeds, seed0)
    chosen = choose_axis_path(path, model.d, model.V, model.N, len(mu2s))
    check_trial(model.d, model.V, model.N, model.T, model.signs, _scheme_bytes(model), memory_model(chosen, axis=True))
    children = tuple(np.random.SeedSequence(seed0).spawn(K))
    axes, observed = [], []
    for child in children:
        data = draw(model, child, weights=w)
        axes.append(solve_axis(data, mu2s, k, model.centered, chosen))
        if observe is not None:
            observed.append(observe(data, axes[-1]))
    return AxisTrials(mu2s, np.array([a.values for a in axes]), np.array([a.overlaps for a in axes]), children, chosen,
                      tuple(observed) if observe is not None else None)
