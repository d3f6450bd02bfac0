r"""Monte Carlo of the model of PAPER.md, with dense, implicit (matrix-free) and mixed-precision eigensolvers.

One trial draws

* a table :math:`E = [e_1 \dots e_V] \in \mathbb R^{d\times V}`, :math:`e_v = s_v\mu + z_v`, with
  :math:`s = (+1,\dots,+1,-1,\dots,-1)` (exactly ``V/2`` of each; which tokens carry which sign is
  immaterial because the tokens are exchangeable), :math:`\mu = \sqrt{\mu_2}\,\mathbf e_1` (the first
  basis vector; every result is rotation invariant) and :math:`z_v \sim N(0, I_d)` i.i.d.;
* ``N`` sign vectors :math:`\xi_n \in \{\pm1\}^T` from the family
  (:meth:`derive.model.SignFamily.sample`), and tokens :math:`v_{n,t}` uniform in the class
  :math:`\{v : s_v = \xi_{n,t}\}`, independent across positions given :math:`\xi_n`;
* the pooled vectors :math:`c_n = \sum_t w_t e_{v_{n,t}} = E a_n`, where the columns
  :math:`a_n = \sum_t w_t \mathbf e_{v_{n,t}}` of the sparse ``V x N`` matrix :math:`A` hold the
  weights at the drawn tokens (a token drawn twice in a sequence carries the sum of its weights).

It returns the top-``k`` eigenvalues of :math:`S = \frac1N \sum_n c_n c_n^T = \frac1N E A A^T E^T`
(or of the centered :math:`S_c = S - \bar c \bar c^T`, :math:`\bar c = E \bar a`,
:math:`\bar a = \frac1N A \mathbf 1`) and the squared overlaps :math:`|\hat u_i^T u|^2` of their
eigenvectors with :math:`u = \mu/\|\mu\| = \mathbf e_1` (also when :math:`\mu_2 = 0`, where the
overlap measures the null).

Randomness: a trial's seed (an integer or a :class:`numpy.random.SeedSequence`) is split into three
independent streams, for the table, the sequences and the eigensolver's starting vector, so the
table depends on ``(seed, d, V, mu2)`` only. :func:`run_trials` gives trial ``j`` the seed
``SeedSequence(seed0).spawn(K)[j]``, which does not depend on ``K``.
"""
from __future__ import annotations

import math
import numbers
import sys
import time
from dataclasses import dataclass

import numpy as np
import scipy.linalg
import scipy.sparse as sps

from derive.errors import ParameterError
from derive.model import SignFamily, parse_signs
from verify.lanczos import Mixing, lanczos_top, product, transpose_product

TOL = 1e-8
r"""Relative residual tolerance of Lanczos (:func:`implicit_top`) on the float64 table: :math:`\|S x - \theta x\| \le
\mathrm{TOL}\,\theta`. For a symmetric operator the Ritz values of the top-``k`` space then err by at
most :math:`\|r\|^2/g` (Kato-Temple), :math:`g = \theta_k - \lambda_{k+1}`, so the relative error is
below :math:`\mathrm{TOL}^2\,\theta/g = 10^{-16}\,\theta/g \le 10^{-10}` whenever the relative gap
:math:`g/\theta` is at least :math:`10^{-6}`; eigenvectors err by at most :math:`\mathrm{TOL}\,\theta/g`
(Davis-Kahan)."""

TOL_FLOAT32 = 1e-5
"""Residual tolerance on a float32 table: its products carry rounding of relative size about
``1e-6`` (float32 sums of ``V`` terms), so a smaller residual is not reliably reachable."""

AUTO_COST_RATIO = 500
r"""``path='auto'`` solves densely when the full spectrum is requested or when the dense cost
:math:`m^2(M + 3m)` (:math:`m, M` the smaller and larger of ``d, N``: Gram product plus
eigensolver) is at most ``AUTO_COST_RATIO`` times :math:`dV` (one pass over the table), implicitly
otherwise. The constant is the crossover measured in notes/mc.md (dense was faster at a cost ratio
of 312 and 350, implicit at 700 and above): a memory-bound pass is far slower per operation than
the dense Gram's matrix-matrix product, and Lanczos needs some 50 to 100 of them."""

PROGRESS_AFTER = 3.0
"""Seconds after which :func:`run_trials` starts reporting progress on stderr (when asked to decide)."""

MIXED_TOL = 5e-7
"""Residual tolerance of the float32 Lanczos stage of the ``'mixed'`` path (:func:`mixed_top`). The
float64 residual of its Ritz vectors follows that residual down to a floor of about ``1e-7`` set by
the float32 table and sums (notes/mc.md): stopping at half of :data:`MIXED_ACCEPT` leaves the
certificate a margin of 2 while staying five times above the floor, which Lanczos on the rounded
table cannot go below."""

MIXED_ACCEPT = 1e-6
r"""Largest float64 relative residual :math:`r = \|S\hat u - \theta\hat u\|/\theta` that
:func:`mixed_top` accepts from its Rayleigh-Ritz step (it measures about :data:`MIXED_TOL`). Kato-Temple
bounds the relative eigenvalue error by :math:`r^2\,\theta/g`: at most ``1e-10`` when the relative
gap :math:`g/\theta` is at least ``1e-2``. A larger residual sends the solve to float64 Lanczos."""

PATHS = ("dense", "implicit", "mixed", "auto")


# ----------------------------------------------------------------------------------------------
# validation


def _positive_int(value, name: str) -> int:
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise ParameterError(name, f"must be a positive integer, got {value!r}")
    if value < 1:
        raise ParameterError(name, f"must be a positive integer, got {value}")
    return int(value)


def _real(value, name: str) -> float:
    if isinstance(value, (bool, str)):
        raise ParameterError(name, f"must be a real number, got {value!r}")
    try:
        x = float(value)
    except (TypeError, ValueError):
        raise ParameterError(name, f"must be a real number, got {value!r}") from None
    if not math.isfinite(x):
        raise ParameterError(name, f"must be finite, got {value!r}")
    return x


@dataclass(frozen=True)
class Model:
    """Validated parameters of the model: sizes, sign family, pooling weights, signal strength."""

    d: int
    V: int
    N: int
    T: int
    family: SignFamily
    weights: np.ndarray
    mu2: float


def check_model(d, V, N, T, signs, weights, mu2) -> Model:
    """Validate the model's parameters; a bad one raises :class:`ParameterError` naming it.

    ``d, V, N, T`` are positive integers with ``V`` even, ``signs`` a family spec valid for ``T``,
    ``weights`` ``T`` finite reals not all zero, ``mu2`` a finite real ``>= 0``.

    >>> check_model(4, 6, 10, 2, "iid", [0.5, 0.5], 1).weights
    array([0.5, 0.5])
    """
    d, V, N, T = (_positive_int(x, n) for x, n in ((d, "d"), (V, "V"), (N, "N"), (T, "T")))
    if V % 2:
        raise ParameterError("V", f"must be even (two balanced classes), got {V}")
    if isinstance(signs, SignFamily):
        family = signs
    else:
        family = parse_signs(signs)
    family.R(T)  # rejects a family that does not fit T (prefix:L with L > T, a file of another size)
    if isinstance(weights, (str, bytes)):
        raise ParameterError("weights", f"must be a sequence of {T} reals, got {weights!r}")
    try:
        w = np.array([_real(x, "weights") for x in weights], dtype=np.float64)
    except TypeError:
        raise ParameterError("weights", f"must be a sequence of {T} reals, got {weights!r}") from None
    if w.shape != (T,):
        raise ParameterError("weights", f"needs T = {T} entries, got {len(w)}")
    if not np.any(w):
        raise ParameterError("weights", "are all zero")
    mu2 = _real(mu2, "mu2")
    if mu2 < 0:
        raise ParameterError("mu2", f"must be >= 0, got {mu2}")
    return Model(d, V, N, T, family, w, mu2)


def _check_k(k, d: int, N: int) -> int:
    k = _positive_int(k, "k")
    if k >= min(d, N):
        raise ParameterError("k", f"must be below min(d, N) = {min(d, N)}, got {k}")
    return k


def _seed_sequence(seed) -> np.random.SeedSequence:
    if isinstance(seed, np.random.SeedSequence):
        return seed
    if isinstance(seed, bool) or not isinstance(seed, numbers.Integral) or seed < 0:
        raise ParameterError("seed", f"must be a non-negative integer or a SeedSequence, got {seed!r}")
    return np.random.SeedSequence(int(seed))


def _streams(seed, n: int) -> list[np.random.Generator]:
    """``n`` independent generators derived from ``seed``.

    The children are built from the seed's entropy and spawn key rather than by
    ``SeedSequence.spawn``, which advances a counter inside the object: a second call with the same
    ``SeedSequence`` must give the same streams.
    """
    ss = _seed_sequence(seed)
    return [
        np.random.default_rng(np.random.SeedSequence(ss.entropy, spawn_key=ss.spawn_key + (i,), pool_size=ss.pool_size))
        for i in range(n)
    ]


# ----------------------------------------------------------------------------------------------
# sampling


def balanced_signs(V: int) -> np.ndarray:
    """The class signs :math:`s \\in \\{\\pm1\\}^V`: ``+1`` on the first ``V/2`` tokens, ``-1`` on the rest.

    >>> balanced_signs(4)
    array([ 1.,  1., -1., -1.])
    """
    return np.repeat([1.0, -1.0], V // 2)


def sample_table(rng: np.random.Generator, d: int, V: int, mu2: float) -> np.ndarray:
    r"""The table :math:`E = \mu s^T + Z` (``d x V``, C-contiguous float64), :math:`\mu = \sqrt{\mu_2}\,\mathbf e_1`,
    ``s`` from :func:`balanced_signs`, ``Z`` standard Gaussian."""
    E = rng.standard_normal((d, V))
    E[0] += math.sqrt(mu2) * balanced_signs(V)
    return E


def sample_sequences(rng: np.random.Generator, family: SignFamily, s: np.ndarray, N: int, T: int):
    r"""``N`` sign vectors and their tokens: ``(xi, tokens)``, both ``(N, T)`` arrays.

    ``xi`` (int8) has the family's law; ``tokens[n, t]`` (int64) is uniform over
    :math:`\{v : s_v = \xi_{n,t}\}`, independently across ``(n, t)`` given ``xi``.
    """
    xi = family.sample(rng, N, T)
    plus, minus = np.flatnonzero(s > 0), np.flatnonzero(s < 0)
    if len(plus) != len(minus):
        raise ParameterError("s", f"the classes must be balanced, got {len(plus)} and {len(minus)}")
    within = rng.integers(0, len(plus), size=(N, T))
    tokens = np.where(xi > 0, plus[within], minus[within])
    return xi, tokens


def mixing_matrix(tokens: np.ndarray, weights, V: int) -> sps.csc_matrix:
    r"""The sparse ``V x N`` matrix :math:`A` with columns :math:`a_n = \sum_t w_t \mathbf e_{v_{n,t}}`,
    so that the pooled vectors are :math:`C = E A`; repeated tokens of a sequence are summed.
    ``weights``: ``T`` weights shared by all sequences, or an ``N x T`` array of per-sequence
    (data-dependent) weights.

    >>> mixing_matrix(np.array([[0, 0], [1, 0]]), [0.25, 0.5], 2).toarray()
    array([[0.75, 0.5 ],
           [0.  , 0.25]])
    """
    N, T = tokens.shape
    values = np.array(np.broadcast_to(np.asarray(weights, dtype=np.float64), (N, T))).ravel()
    A = sps.csc_matrix((values, tokens.ravel(), np.arange(0, N * T + 1, T)), shape=(V, N))
    A.sum_duplicates()
    return A


def pooled(E: np.ndarray, A: sps.spmatrix) -> np.ndarray:
    """The pooled vectors :math:`C = E A` as a dense ``d x N`` array."""
    return np.ascontiguousarray((A.T @ np.ascontiguousarray(E.T)).T)


# ----------------------------------------------------------------------------------------------
# eigensolvers


def dense_top(E: np.ndarray, A: sps.spmatrix, k: int, centered: bool = False, spectrum: bool = False):
    r"""Top-``k`` eigenpairs of :math:`S` (or :math:`S_c`) from the smaller Gram matrix of :math:`C = E A`.

    With :math:`d \le N` the ``d x d`` matrix :math:`C C^T/N` is diagonalized; otherwise the
    ``N x N`` matrix :math:`C^T C/N`, whose unit eigenvector ``v`` maps to
    :math:`\hat u = C v/\sqrt{N\lambda}`. Returns ``(eigenvalues, eigenvectors, full)``: the ``k``
    largest eigenvalues (descending), a ``d x k`` array of unit eigenvectors, and all ``d``
    eigenvalues (descending, with the ``d - N`` structural zeros when ``d > N``) if ``spectrum``,
    else ``None``.
    """
    Ct = A.T @ np.ascontiguousarray(E.T)  # N x d; row gathers of a C-ordered E^T are the fast layout
    if centered:
        Ct -= Ct.mean(axis=0)
    N, d = Ct.shape
    small = d <= N
    G = (Ct.T @ Ct if small else Ct @ Ct.T) / N
    n = G.shape[0]
    vals, vecs = scipy.linalg.eigh(G, subset_by_index=[n - k, n - 1])
    vals, vecs = vals[::-1], vecs[:, ::-1]
    if not small:
        vecs = Ct.T @ vecs
        # dividing by the computed norm rather than sqrt(N lambda) keeps unit length when lambda
        # itself carries rounding
        vecs /= np.linalg.norm(vecs, axis=0)
    full = None
    if spectrum:
        # sorted after padding: a rank-deficient Gram (centered, d > N) has rounding-level negative eigenvalues
        full = np.sort(np.concatenate([scipy.linalg.eigvalsh(G), np.zeros(d - n)]))[::-1]
    return vals, vecs, full


def implicit_top(E: np.ndarray, mixing: Mixing, k: int, v0: np.ndarray, dtype=np.float64):
    """Top-``k`` eigenpairs of :math:`S` (or :math:`S_c`, as ``mixing`` says: :meth:`Mixing.of
    <verify.lanczos.Mixing.of>`) by Lanczos with one pass over the table per
    step (:func:`verify.lanczos.lanczos_top`), started at ``v0``, on the table rounded to ``dtype``
    (float64: ``E`` itself): ``(eigenvalues descending, d x k eigenvectors, number of products with
    S, {dtype: passes over the table})``. The residual tolerance is :data:`TOL` for float64 and
    :data:`TOL_FLOAT32` for float32.
    """
    tol = TOL_FLOAT32 if dtype == np.float32 else TOL
    ritz = lanczos_top(E, mixing, k, v0, tol, dtype=dtype)
    return ritz.values, ritz.vectors, ritz.steps, _passes(E, dtype, ritz.passes)


def _passes(E: np.ndarray, dtype, count: int) -> dict:
    """Passes over the table by the dtype they read: a rounded table's first pass reads ``E`` itself."""
    name = np.dtype(dtype).name
    if name == E.dtype.name:
        return {name: count}
    return {name: count - 1, E.dtype.name: 1}


def rayleigh_ritz(E: np.ndarray, mixing: Mixing, U: np.ndarray, k: int):
    r"""The top-``k`` Ritz pairs of :math:`S = E\,\mathrm{mixing}\,E^T` on the span of the columns of
    ``U``, with their relative residuals :math:`\|S\hat u - \theta\hat u\|/\theta`: ``(values
    descending, d x k vectors, residuals)``. Two passes over ``E`` whatever the number of columns
    (:func:`verify.lanczos.transpose_product`, :func:`verify.lanczos.product`); the projected matrix
    :math:`Q^T S Q = (E^T Q)^T\,\mathrm{mixing}\,(E^T Q)` needs only the first.
    """
    Q = np.linalg.qr(U)[0]
    Y = transpose_product(E, Q)
    R = mixing.apply(Y)
    H = Y.T @ R
    SQ = product(E, R)
    theta, Z = scipy.linalg.eigh((H + H.T) / 2)
    theta, Z = theta[::-1][:k], Z[:, ::-1][:, :k]
    vectors = Q @ Z
    residuals = np.linalg.norm(SQ @ Z - vectors * theta, axis=0) / np.maximum(np.abs(theta), np.finfo(float).tiny)
    return theta, vectors, residuals


def mixed_top(E: np.ndarray, mixing: Mixing, k: int, v0: np.ndarray):
    r"""Top-``k`` eigenpairs of :math:`S` (or :math:`S_c`, as ``mixing`` says) in mixed precision: Lanczos on the
    float32-rounded table (tolerance :data:`MIXED_TOL`, half the bytes per pass), then one
    float64 Rayleigh-Ritz step on the ``k`` Ritz vectors (:func:`rayleigh_ritz`, two float64 passes),
    whose residuals certify the result: if one exceeds :data:`MIXED_ACCEPT`, float64
    Lanczos (:func:`implicit_top`) is run from the refined top vector instead.

    Returns ``(eigenvalues descending, d x k eigenvectors, products, passes, residuals)``:
    ``products`` counts the products with :math:`S` in float32 and float64 alike, ``passes`` the
    passes over the table by dtype.
    """
    ritz = lanczos_top(E, mixing, k, v0, MIXED_TOL, dtype=np.float32)
    vals, vecs, residuals = rayleigh_ritz(E, mixing, ritz.vectors, k)
    passes = _passes(E, np.float32, ritz.passes)
    products, passes = ritz.steps + k, {**passes, "float64": passes["float64"] + 2}
    if not residuals.max() <= MIXED_ACCEPT:  # a NaN residual certifies nothing
        vals, vecs, more, again = implicit_top(E, mixing, k, vecs[:, 0])
        return vals, vecs, products + more, {**passes, "float64": passes["float64"] + again["float64"]}, None
    return vals, vecs, products, passes, residuals


# ----------------------------------------------------------------------------------------------
# trials


@dataclass(frozen=True)
class Draw:
    """The random inputs of one trial: table, class signs, sequence signs, tokens, ``A``, and the
    eigensolver's starting vector."""

    E: np.ndarray
    s: np.ndarray
    xi: np.ndarray
    tokens: np.ndarray
    A: sps.csc_matrix
    v0: np.ndarray


def draw(model: Model, seed) -> Draw:
    """Everything random in one trial of ``model``, from ``seed`` (see the module docstring)."""
    table_rng, seq_rng, start_rng = _streams(seed, 3)
    E = sample_table(table_rng, model.d, model.V, model.mu2)
    s = balanced_signs(model.V)
    xi, tokens = sample_sequences(seq_rng, model.family, s, model.N, model.T)
    return Draw(E, s, xi, tokens, mixing_matrix(tokens, model.weights, model.V), start_rng.standard_normal(model.d))


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
        cheap = dtype == np.float64 and m * m * (M + 3 * m) <= AUTO_COST_RATIO * d * V
        return "dense" if spectrum or cheap else "implicit"
    return path


def solve(model: Model, data: Draw, k: int, centered: bool, path: str, spectrum: bool = False, dtype=np.float64) -> Trial:
    """Eigen-solve one drawn trial by ``path`` (``'dense'``, ``'implicit'`` or ``'mixed'``, already chosen)."""
    residuals = products = passes = full = None
    if path == "dense":
        vals, vecs, full = dense_top(data.E, data.A, k, centered, spectrum)
    elif path == "mixed":
        vals, vecs, products, passes, residuals = mixed_top(data.E, Mixing.of(data.A, centered), k, data.v0)
    else:
        vals, vecs, products, passes = implicit_top(data.E, Mixing.of(data.A, centered), k, data.v0, dtype)
    return Trial(vals, vecs[0] ** 2, vecs, full, path, products, passes, residuals)


def run_trial(d, V, N, T, signs, weights, mu2, *, centered=False, k=3, path="auto", seed=0,
              spectrum=False, dtype=np.float64) -> Trial:
    r"""One trial of the model: the top-``k`` eigenvalues of :math:`S` (or :math:`S_c` if ``centered``)
    and their eigenvectors' squared overlaps with :math:`u = \mathbf e_1`.

    ``signs`` is a family spec (or a :class:`~derive.model.SignFamily`), ``weights`` ``T`` reals,
    ``k < min(d, N)``. ``path``: ``'dense'`` (:func:`dense_top`), ``'implicit'``
    (:func:`implicit_top`), ``'mixed'`` (:func:`mixed_top`: float32 Lanczos certified by a float64
    Rayleigh-Ritz step) or ``'auto'`` (dense or implicit, see :data:`AUTO_COST_RATIO`); all paths
    see the same draw, and their eigenvalues agree to about ``1e-10`` relative (:data:`TOL`,
    :data:`MIXED_ACCEPT`). ``spectrum=True`` also
    returns all ``d`` eigenvalues (dense path). ``dtype=numpy.float32`` stores the table in float32
    for the implicit solver (same draw, rounded). ``seed``: a non-negative integer or a
    :class:`numpy.random.SeedSequence`; the same seed gives the same numbers.
    """
    model = check_model(d, V, N, T, signs, weights, mu2)
    k = _check_k(k, model.d, model.N)
    chosen = choose_path(path, bool(spectrum), model.d, model.V, model.N, dtype)
    return solve(model, draw(model, seed), k, bool(centered), chosen, bool(spectrum), dtype)


@dataclass(frozen=True)
class Trials:
    """Results of :func:`run_trials`.

    ``top_eigenvalues`` and ``overlaps``: ``K x k`` arrays, row ``j`` from trial ``j``;
    ``seeds``: the ``K`` per-trial :class:`numpy.random.SeedSequence` (``run_trial(..., seed=seeds[j])``
    repeats trial ``j``); ``spectra``: ``K x d`` (all eigenvalues, descending) or ``None``;
    ``path``: the solver used.
    """

    top_eigenvalues: np.ndarray
    overlaps: np.ndarray
    seeds: tuple
    spectra: np.ndarray | None
    path: str


class _Progress:
    """A progress line on stderr, shown only once the run has lasted ``after`` seconds (or always,
    or never): a bar redrawn in place on a terminal, a throttled counter line otherwise."""

    def __init__(self, total: int, show: bool | None, label: str = "verify.simulate"):
        self.total, self.show, self.label = total, show, label
        self.start = self.last = time.monotonic()
        self.tty = sys.stderr.isatty()
        self.drawn = False

    def update(self, done: int):
        now = time.monotonic()
        if self.show is False or (self.show is None and now - self.start < PROGRESS_AFTER):
            return
        if self.tty:
            filled = int(30 * done / self.total)
            sys.stderr.write(f"\r{self.label}: [{'#' * filled}{'.' * (30 - filled)}] {done}/{self.total} trials, {now - self.start:.0f} s")
            self.drawn = True
        elif done == self.total or now - self.last >= 5.0 or not self.drawn:
            # a log file gets a new line per report, so reports are spaced out
            sys.stderr.write(f"{self.label}: {done}/{self.total} trials, {now - self.start:.0f} s\n")
            self.last, self.drawn = now, True
        sys.stderr.flush()

    def close(self):
        if self.tty and self.drawn:
            sys.stderr.write("\n")
            sys.stderr.flush()


def run_trials(d, V, N, T, signs, weights, mu2, *, centered=False, k=3, path="auto", seeds=1, seed0=0,
               spectrum=False, dtype=np.float64, progress: bool | None = None) -> Trials:
    """``seeds`` independent trials of :func:`run_trial` (same arguments); trial ``j`` uses
    ``SeedSequence(seed0).spawn(seeds)[j]``, so it is the same whatever the number of trials.

    ``progress``: ``True``/``False`` forces a progress report on stderr on or off; ``None`` shows
    it once the run has lasted :data:`PROGRESS_AFTER` seconds.
    """
    model = check_model(d, V, N, T, signs, weights, mu2)
    k = _check_k(k, model.d, model.N)
    K = _positive_int(seeds, "seeds")
    if isinstance(seed0, bool) or not isinstance(seed0, numbers.Integral) or seed0 < 0:
        raise ParameterError("seed0", f"must be a non-negative integer, got {seed0!r}")
    chosen = choose_path(path, bool(spectrum), model.d, model.V, model.N, dtype)
    children = tuple(np.random.SeedSequence(int(seed0)).spawn(K))
    bar = _Progress(K, progress)
    results = []
    for j, child in enumerate(children):
        results.append(solve(model, draw(model, child), k, bool(centered), chosen, bool(spectrum), dtype))
        bar.update(j + 1)
    bar.close()
    return Trials(
        np.array([r.top_eigenvalues for r in results]),
        np.array([r.overlaps for r in results]),
        children,
        np.array([r.spectrum for r in results]) if spectrum else None,
        chosen,
    )
