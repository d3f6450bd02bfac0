r"""Lanczos for the top eigenpairs of :math:`S = \frac1N E M E^T` with one pass over the table per step.

Here :math:`E` is the ``d x V`` table and :math:`M = A A^T` (raw :math:`S`) or
:math:`M = A A^T - N \bar a \bar a^T` (centered :math:`S_c`), applied through the sparse ``V x N``
mixing matrix :math:`A` (:mod:`verify.montecarlo.draw`). The table is the only large operand: a product
:math:`S x = E\,(M (E^T x))/N` reads it twice, once for :math:`E^T x` and once for :math:`E r`, and at
the sizes where the Monte Carlo matters (``d`` in the thousands) the eigensolver's time is those reads.

*One pass per step.* Lanczos step ``j`` needs :math:`w = S x_j - \alpha_j x_j - \beta_j x_{j-1}` and,
for the next step, :math:`y_{j+1} = E^T x_{j+1} = E^T w/\beta_{j+1}`. With :math:`y_j = E^T x_j`
already known, :math:`r_j = M y_j/N` and :math:`\alpha_j = x_j^T S x_j = y_j^T r_j` cost no pass
over :math:`E`; then entry ``i`` of :math:`w` is :math:`e_i^T r_j - \alpha_j x_{j,i} - \beta_j x_{j-1,i}`
for the row :math:`e_i` of :math:`E`, and :math:`E^T w = \sum_i w_i e_i` can be accumulated while that
row is still in cache (:func:`verify.montecarlo.kernels.lanczos_sweep`). A step therefore reads the table
once instead of twice.

*Two engines.* ``engine="numba"`` runs the steps in the compiled kernels of :mod:`verify.montecarlo.kernels`
(one pass per step); ``engine="blas"`` runs the same steps with two BLAS matrix-vector products (NumPy),
twice the table traffic but nothing to compile or load. Loading numba's compiler context costs about a
second per process, more than a whole float32 solve at ``d = 2000``: one solve in a fresh process is
faster on BLAS (:data:`ENGINES`; notes/benchmarks.md). The two give the same pairs up to rounding.

*Full reorthogonalization, carried by linearity.* Each new vector is orthogonalized against all
earlier ones, :math:`w \leftarrow w - X h` with :math:`h = X^T w` (repeated once when it cancels more
than :data:`~verify.montecarlo.orthogonalize.REORTHOGONALIZE_AGAIN` of the norm: "twice is enough"), and the same correction is applied
to :math:`E^T w \leftarrow E^T w - Y h` with the stored :math:`Y = E^T X`, so :math:`y_{j+1}` stays
equal to :math:`E^T x_{j+1}` without another pass (unless the second pass runs: see
:func:`~verify.montecarlo.orthogonalize.reorthogonalize`).

*Stopping.* The tridiagonal :math:`T_m` gives the Ritz pairs :math:`(\theta_i, X s_i)` and their
residual norms :math:`\beta_{m}|s_{m,i}|` (in exact arithmetic,
:math:`\|S X s_i - \theta_i X s_i\| = \beta_m |e_m^T s_i|`); the solver stops when the top ``k``
are below ``tol`` relative to :math:`|\theta_i|`. It computes them at the steps
:func:`steps_before_check` schedules, and the steps in between run in one loop
(:func:`verify.montecarlo.kernels.lanczos_steps`, compiled; :func:`blas_steps`).

*Precision.* The table may be float64 or float32. Vectors, inner products and the
reorthogonalization are float64. In a pass, the dot product of a row is summed in the table's
type, ``w`` is rounded to that type for the update of :math:`E^T w`, and the update is summed in
that type over at most 64 rows before it is added in float64: a float32 table gives the products
of the float32-rounded operator up to float32 rounding of those sums and of ``w`` (relative
``~1e-7``).

:func:`transpose_product` and :func:`product` apply :math:`E^T` and :math:`E` to a few vectors in
one pass each (the Rayleigh-Ritz step of the mixed-precision solver).
"""
from __future__ import annotations

import math
import threading
from dataclasses import dataclass
from functools import cached_property

import numpy as np

from derive.errors import ParameterError
from derive.vocabulary.draw.tokenmatrix import PaddedColumns
from verify.montecarlo.orthogonalize import reorthogonalize

__all__ = ["ENGINES", "INVARIANT_ULPS", "MAX_STRIDE", "TOL", "TOL_FLOAT32",
           "MIXED_TOL", "MIXED_ACCEPT", "compiled_kernels", "steps_before_check",
           "rounded_transpose_product", "transpose_product", "product", "Mixing", "Ritz", "blas_steps", "lanczos_top",
           "implicit_top", "rayleigh_ritz", "mixed_top"]

ENGINES = ("numba", "blas")
"""How a pass over the table runs: ``"numba"``, the compiled one-pass kernels (:mod:`verify.montecarlo.kernels`),
or ``"blas"``, two NumPy matrix-vector products a step, with no compiler to load (module docstring)."""


def _check_engine(engine) -> str:
    if engine not in ENGINES:
        raise ParameterError("engine", f"must be one of {', '.join(ENGINES)}, got {engine!r}")
    return engine


def compiled_kernels():
    """The module of compiled kernels (:mod:`verify.montecarlo.kernels`), imported on first use: it loads numba."""
    from verify.montecarlo import kernels

    return kernels

INVARIANT_ULPS = 64
r"""The Krylov space counts as invariant when :math:`\beta_m` falls below this many units of roundoff
of the table's type times the running estimate :math:`\max_j(|\alpha_j| + \beta_j)` of
:math:`\|S\|`: ``1.4e-14`` for a float64 table, ``7.6e-6`` for a float32 one, whose products
carry rounding of about ``1e-7`` (module docstring). Below that level the new direction is
rounding noise: the solver continues from a fresh vector instead."""

MAX_STRIDE = 8
"""The most steps between two computations of the Ritz pairs (:func:`steps_before_check`)."""

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



def steps_before_check(history, m: int, worst: float, tol: float) -> int:
    r"""Steps to take before the Ritz pairs are computed again: three quarters of the number the
    last two checks predict before the largest residual reaches ``tol`` (taking it to fall
    geometrically at the rate measured between them; Lanczos converges faster than geometrically,
    so the margin makes an error of the prediction cost a check rather than a step), between 1 and
    :data:`MAX_STRIDE`; 1 without a usable history or a positive ``tol``.

    >>> steps_before_check((10, 1e-2), 14, 1e-4, 1e-6)  # 10^(-1/2) a step: 4 more steps, check after 3
    3
    >>> steps_before_check(None, 3, 1.0, 1e-6), steps_before_check((3, 1e-3), 4, 2e-3, 1e-6)
    (1, 1)
    """
    if history is None or tol <= 0 or not 0 < worst < history[1]:
        return 1
    rate = (worst / history[1]) ** (1 / (m - history[0]))
    predicted = math.log(tol / worst) / math.log(rate)
    return int(min(MAX_STRIDE, max(1, math.floor(0.75 * predicted))))


def rounded_transpose_product(E: np.ndarray, x: np.ndarray, dtype, out: np.ndarray | None = None, engine="numba"):
    r"""The table rounded to ``dtype`` and :math:`\tilde E^T x` (float64) for the rounded table
    :math:`\tilde E` (the first step of Lanczos on a rounded table): in one pass over ``E`` (``engine="numba"``),
    or a copy and a BLAS product (``"blas"``). The rounded table is written into ``out`` if given (``E``'s
    shape, ``dtype``), else into a new array.

    >>> rounded, y = rounded_transpose_product(np.array([[1 + 2.0**-30, 2.0]]), np.array([3.0]), np.float32)
    >>> rounded.dtype.name, y.tolist()
    ('float32', [3.0, 6.0])
    """
    rounded = np.empty(E.shape, dtype) if out is None else out
    if _check_engine(engine) == "blas":
        np.copyto(rounded, E, casting="same_kind")
        return rounded, transpose_product(rounded, np.asarray(x)[:, None], "blas")[:, 0]
    y = np.empty(E.shape[1])
    compiled_kernels().round_transpose_product(E, np.asarray(x, dtype=np.float64), rounded, y)
    return rounded, y


_workspace = threading.local()


def _scratch(shape: tuple, dtype) -> np.ndarray:
    """This thread's buffer for a rounded table: the one of the previous call if it has ``shape`` and
    ``dtype``, else a new one that replaces it. Monte Carlo trials of one size then reuse one buffer:
    mapping and faulting in a fresh table's pages cost more than a pass over it on the benchmark
    machine (notes/mc.md). The buffer lives until the thread ends or another size replaces it."""
    buffer = getattr(_workspace, "table", None)
    if buffer is None or buffer.shape != shape or buffer.dtype != dtype:
        _workspace.table = None  # freed before its successor is allocated
        _workspace.table = buffer = np.empty(shape, dtype)
    return buffer


def transpose_product(E: np.ndarray, U: np.ndarray, engine="numba") -> np.ndarray:
    r""":math:`E^T U` (``V x b``, float64) for a ``d x V`` table and a ``d x b`` block, in one pass over ``E``
    accumulated in float64 (``engine="numba"``), or by BLAS in the table's type (``"blas"``).

    >>> E = np.arange(6.0).reshape(2, 3)
    >>> transpose_product(E, np.array([[1.0], [2.0]])).ravel().tolist()
    [6.0, 9.0, 12.0]
    """
    if _check_engine(engine) == "blas":
        return np.asarray(E.T @ np.asarray(U, dtype=E.dtype), dtype=np.float64)
    U = np.ascontiguousarray(U, dtype=np.float64)
    out = np.empty((U.shape[1], E.shape[1]))
    compiled_kernels().transpose_product_into(E, U, out)
    return out.T


def product(E: np.ndarray, R: np.ndarray, engine="numba") -> np.ndarray:
    r""":math:`E R` (``d x b``, float64) for a ``d x V`` table and a ``V x b`` block, in one pass over ``E``
    accumulated in float64 (``engine="numba"``), or by BLAS in the table's type (``"blas"``).

    >>> E = np.arange(6.0).reshape(2, 3)
    >>> product(E, np.array([[1.0], [0.0], [-1.0]])).ravel().tolist()
    [-2.0, -2.0]
    """
    if _check_engine(engine) == "blas":
        return np.asarray(E @ np.asarray(R, dtype=E.dtype), dtype=np.float64)
    Rt = np.ascontiguousarray(np.asarray(R, dtype=np.float64).T)
    out = np.empty((E.shape[0], Rt.shape[0]))
    compiled_kernels().product_into(E, Rt, out)
    return out


@dataclass(frozen=True)
class Mixing:
    r"""The middle factor :math:`M/N` of :math:`S = E (M/N) E^T`: ``apply(Y)`` is :math:`M Y/N` for a
    ``V`` vector or a ``V x b`` block ``Y``, with :math:`M = A A^T = \sum_n a_n a_n^T` (raw) or
    :math:`M = A A^T - N \bar a \bar a^T` (centered, :math:`\bar a = A\mathbf 1/N`), in one pass over
    the columns :math:`a_n` of the sparse ``V x N`` matrix ``A``: :math:`M y = \sum_n a_n (a_n^T y)`.
    The columns are stored as ``rows`` and ``values`` (``N x L``, ``L`` the most nonzeros of a
    column, shorter columns padded with zero values), since a column holds at most ``T`` tokens.

    >>> import scipy.sparse as sps
    >>> A = sps.csc_matrix(np.array([[1.0, 0.0], [2.0, 3.0]]))
    >>> y = np.array([1.0, -1.0])
    >>> Mixing.of(A, False).apply(y).tolist()  # A A^T y / 2
    [-0.5, -5.5]
    >>> Mixing.of(A, True).apply(y).tolist()  # sum over the centered columns (a_n - abar)(a_n - abar)^T y / 2
    [0.5, -0.5]
    """

    rows: np.ndarray
    values: np.ndarray
    V: int
    abar: np.ndarray

    @classmethod
    def of(cls, A, centered: bool) -> "Mixing":
        """The mixing of raw :math:`S` or, if ``centered``, of :math:`S_c` (an empty ``abar`` when raw)."""
        import scipy.sparse as sps

        A = sps.csc_matrix(A, dtype=np.float64, copy=True)  # sum_duplicates works in place
        A.sum_duplicates()
        V, N = A.shape
        counts = np.diff(A.indptr)
        width = max(int(counts.max(initial=0)), 1)
        rows, values = np.zeros((N, width), dtype=np.int32), np.zeros((N, width))
        slot = np.arange(A.nnz) - np.repeat(A.indptr[:-1], counts)
        column = np.repeat(np.arange(N), counts)
        rows[column, slot], values[column, slot] = A.indices, A.data
        abar = np.asarray(A.sum(axis=1)).ravel() / N if centered else np.empty(0)
        return cls(rows, values, V, abar)

    @classmethod
    def of_tokens(cls, tokens: np.ndarray, weights, V: int, centered: bool) -> "Mixing":
        """The mixing of the columns :math:`a_n = \\sum_t w_t \\mathbf e_{v_{n,t}}` of drawn ``tokens`` (``N x T``)
        with ``weights`` (``T``, or ``N x T``), read directly: a token drawn twice in a sequence keeps two
        slots, whose terms add up to those of its summed entry.

        >>> m = Mixing.of_tokens(np.array([[0, 0], [1, 0]]), [0.25, 0.5], 2, True)
        >>> m.abar.tolist()  # the mean column of A = [[0.75, 0.5], [0, 0.25]]
        [0.625, 0.125]
        """
        tokens = np.asarray(tokens)
        N, T = tokens.shape
        values = np.array(np.broadcast_to(np.asarray(weights, dtype=np.float64), (N, T)))
        abar = np.bincount(tokens.ravel(), weights=values.ravel(), minlength=V) / N if centered else np.empty(0)
        return cls(tokens.astype(np.int32), values, V, abar)

    @property
    def N(self) -> int:
        return self.rows.shape[0]

    @cached_property
    def _columns(self) -> PaddedColumns:
        """The columns in the ``L x N`` layout whose NumPy products run along ``N``."""
        return PaddedColumns(np.ascontiguousarray(self.rows.T, dtype=np.intp), np.ascontiguousarray(self.values.T), self.V)

    def apply(self, Y: np.ndarray) -> np.ndarray:
        """:math:`M Y/N` in NumPy (:meth:`derive.vocabulary.draw.tokenmatrix.PaddedColumns.gram_times`; the compiled
        loop of :func:`verify.montecarlo.kernels.mix` serves the numba engine's steps)."""
        Y = np.asarray(Y, dtype=np.float64)
        block = Y.reshape(self.V, -1)
        out = self._columns.gram_times(block) / self.N
        if len(self.abar):
            out -= np.outer(self.abar, self.abar @ block)
        return out.reshape(Y.shape)


@dataclass(frozen=True)
class Ritz:
    """Result of :func:`lanczos_top`: the top ``k`` Ritz values (descending), their unit Ritz vectors
    (``d x k``), their relative residual estimates :math:`\\beta_m|s_{m,i}|/|\\theta_i|`, the number
    of Lanczos steps (products with :math:`S`) and the number of passes over the table."""

    values: np.ndarray
    vectors: np.ndarray
    residuals: np.ndarray
    steps: int
    passes: int


def blas_steps(E, rows, values, abar, X, Y, alphas, betas, m, last, scale, invariant, w, ynext, scratch):
    """The ``"blas"`` engine's Lanczos steps: :func:`verify.montecarlo.kernels.lanczos_steps` (same arguments,
    same results up to rounding) with the pass over the table as two BLAS products and the mixing in NumPy."""
    d, V = E.shape
    mixing = Mixing(rows, values, V, abar)
    taken = extra = 0
    while m <= last:
        x = X[m - 1]
        xprev, beta = (X[m - 2], betas[m - 2]) if m >= 2 and betas[m - 2] != 0.0 else (scratch[4], 0.0)
        r = mixing.apply(Y[m - 1])
        alpha = np.dot(Y[m - 1], r)
        w[:] = product(E, r[:, None], "blas")[:, 0] - alpha * x - beta * xprev
        ynext[:] = transpose_product(E, w[:, None], "blas")[:, 0]
        taken += 1
        beta, recompute = reorthogonalize(w, ynext, X[:m], Y[:m])
        if recompute:
            ynext[:] = transpose_product(E, w[:, None], "blas")[:, 0]
            extra += 1
        alphas[m - 1], betas[m - 1] = alpha, beta
        scale = max(scale, abs(alpha) + beta)
        if beta <= invariant * scale or m == d:
            return taken, extra, True, scale
        X[m], Y[m] = w / beta, ynext / beta
        m += 1
    return taken, extra, False, scale


def lanczos_top(E: np.ndarray, mixing: Mixing, k: int, v0: np.ndarray, tol: float, dtype=None,
                engine="numba") -> Ritz:
    r"""Top-``k`` eigenpairs of :math:`S = E\,\mathrm{mixing}\,E^T` by Lanczos with full
    reorthogonalization, one pass over ``E`` per step (module docstring; two on the ``"blas"`` ``engine``),
    started at ``v0``.

    ``dtype`` (default: ``E``'s): the type of the table the steps read; a narrower one than ``E``'s
    is rounded to during the first pass (:func:`rounded_transpose_product`), and the pairs are then
    those of the rounded table's :math:`S`.

    Stops when every one of the top ``k`` Ritz pairs has relative residual at most ``tol`` (checked
    as :func:`steps_before_check` schedules), or when the basis holds ``d`` vectors (the pairs are
    then exact up to rounding). When the Krylov space turns out invariant (:data:`INVARIANT_ULPS`)
    before that, it continues from a fresh vector orthogonal to the basis, so the loop ends with at
    most ``d`` vectors. The residuals returned are the estimates :math:`\beta_m|s_{m,i}|/|\theta_i|`.

    As for any single-vector Krylov method, an eigenvalue of multiplicity greater than one is found
    once unless a restart happens to reach its other directions: the top ``k`` values can then skip
    a repeat. The nonzero eigenvalues of :math:`S` for a Gaussian table are simple with probability
    one, and a random ``v0`` reaches every eigenvector with probability one.

    >>> rng = np.random.default_rng(0)
    >>> E = rng.standard_normal((40, 60))
    >>> import scipy.sparse as sps
    >>> A = sps.csc_matrix(rng.standard_normal((60, 90)))
    >>> ritz = lanczos_top(E, Mixing.of(A, False), 2, rng.standard_normal(40), 1e-10)
    >>> S = E @ (A @ A.T).toarray() @ E.T / 90
    >>> bool(np.allclose(ritz.values, np.linalg.eigvalsh(S)[::-1][:2], rtol=1e-12))
    True
    """
    d, V = E.shape
    if isinstance(k, bool) or not isinstance(k, (int, np.integer)) or not 1 <= k <= d:
        raise ParameterError("k", f"must be an integer from 1 to d = {d}, got {k!r}")
    steps = compiled_kernels().lanczos_steps if _check_engine(engine) == "numba" else blas_steps
    x = v0 / np.linalg.norm(v0)
    if dtype is None or np.dtype(dtype) == E.dtype:
        y = transpose_product(E, x[:, None], engine)[:, 0]
    else:
        E, y = rounded_transpose_product(E, x, dtype, out=_scratch(E.shape, np.dtype(dtype)), engine=engine)
    invariant_level = INVARIANT_ULPS * np.finfo(E.dtype).eps
    capacity = min(d, 64) + 1
    X, Y = np.empty((capacity, d)), np.empty((capacity, V))
    alphas, betas = np.empty(capacity), np.empty(capacity)
    X[0], Y[0] = x, y
    w, ynext = np.empty(d), np.empty(V)
    scratch = (np.empty(V), np.empty(V, E.dtype), np.empty(V, E.dtype), np.empty(8, E.dtype), np.zeros(d),
               np.empty((1, V)))
    m, passes, scale, check, history = 1, 1, 0.0, k, None
    restart = np.random.default_rng(d)
    while True:
        last = min(max(check, m), d)
        while last + 1 > len(X):
            grow = min(2 * len(X), d + 1) - len(X)
            X, Y = np.concatenate([X, np.empty((grow, d))]), np.concatenate([Y, np.empty((grow, V))])
            alphas, betas = np.concatenate([alphas, np.empty(grow)]), np.concatenate([betas, np.empty(grow)])
        taken, extra, invariant, scale = steps(E, mixing.rows, mixing.values, mixing.abar, X, Y, alphas, betas, m,
                                               last, scale, invariant_level, w, ynext, scratch)
        passes += taken + extra
        m += taken - 1  # the basis size at which the last step ran
        if m >= k:
            # a dense eigensolve of the small tridiagonal (m is at most a few hundred) keeps SciPy out of the solve
            theta, s = np.linalg.eigh(np.diag(alphas[:m]) + np.diag(betas[:m - 1], 1) + np.diag(betas[:m - 1], -1))
            theta, s = theta[::-1][:k], s[:, ::-1][:, :k]
            residuals = betas[m - 1] * np.abs(s[-1]) / np.maximum(np.abs(theta), np.finfo(float).tiny)
            if m == d or np.all(residuals <= tol):
                return Ritz(theta, X[:m].T @ s, residuals, m, passes)
            check = m + steps_before_check(history, m, residuals.max(), tol)
            history = (m, residuals.max())
        if invariant:
            # the new direction is rounding noise: go on from a fresh one (beta = 0 splits T into
            # independent blocks)
            fresh = restart.standard_normal(d)
            for _ in range(2):
                fresh -= (X[:m] @ fresh) @ X[:m]
            fresh /= np.linalg.norm(fresh)
            betas[m - 1] = 0.0
            X[m], Y[m] = fresh, transpose_product(E, fresh[:, None], engine)[:, 0]
            passes += 1
        m += 1


def implicit_top(E: np.ndarray, mixing: Mixing, k: int, v0: np.ndarray, dtype=np.float64, engine="numba"):
    """Top-``k`` eigenpairs of :math:`S` (or :math:`S_c`, as ``mixing`` says: :meth:`Mixing.of`) by Lanczos with one pass over the table per
    step (:func:`lanczos_top`), started at ``v0``, on the table rounded to ``dtype``
    (float64: ``E`` itself): ``(eigenvalues descending, d x k eigenvectors, number of products with
    S, {dtype: passes over the table})``. The residual tolerance is :data:`TOL` for float64 and
    :data:`TOL_FLOAT32` for float32. ``engine``: :data:`ENGINES`.
    """
    tol = TOL_FLOAT32 if dtype == np.float32 else TOL
    ritz = lanczos_top(E, mixing, k, v0, tol, dtype=dtype, engine=engine)
    return ritz.values, ritz.vectors, ritz.steps, _passes(E, dtype, ritz.passes)


def _passes(E: np.ndarray, dtype, count: int) -> dict:
    """Passes over the table by the dtype they read: a rounded table's first pass reads ``E`` itself."""
    name = np.dtype(dtype).name
    if name == E.dtype.name:
        return {name: count}
    return {name: count - 1, E.dtype.name: 1}


def rayleigh_ritz(E: np.ndarray, mixing: Mixing, U: np.ndarray, k: int, engine="numba"):
    r"""The top-``k`` Ritz pairs of :math:`S = E\,\mathrm{mixing}\,E^T` on the span of the columns of
    ``U``, with their relative residuals :math:`\|S\hat u - \theta\hat u\|/\theta`: ``(values
    descending, d x k vectors, residuals)``. Two passes over ``E`` whatever the number of columns
    (:func:`transpose_product`, :func:`product`); the projected matrix
    :math:`Q^T S Q = (E^T Q)^T\,\mathrm{mixing}\,(E^T Q)` needs only the first.
    """
    Q = np.linalg.qr(U)[0]
    Y = transpose_product(E, Q, engine)
    R = mixing.apply(Y)
    H = Y.T @ R
    SQ = product(E, R, engine)
    theta, Z = np.linalg.eigh((H + H.T) / 2)
    theta, Z = theta[::-1][:k], Z[:, ::-1][:, :k]
    vectors = Q @ Z
    residuals = np.linalg.norm(SQ @ Z - vectors * theta, axis=0) / np.maximum(np.abs(theta), np.finfo(float).tiny)
    return theta, vectors, residuals


def mixed_top(E: np.ndarray, mixing: Mixing, k: int, v0: np.ndarray, engine="numba"):
    r"""Top-``k`` eigenpairs of :math:`S` (or :math:`S_c`, as ``mixing`` says) in mixed precision: Lanczos on the
    float32-rounded table (tolerance :data:`MIXED_TOL`, half the bytes per pass), then one
    float64 Rayleigh-Ritz step on the ``k`` Ritz vectors (:func:`rayleigh_ritz`, two float64 passes),
    whose residuals certify the result: if one exceeds :data:`MIXED_ACCEPT`, float64
    Lanczos (:func:`implicit_top`) is run from the refined top vector instead.

    Returns ``(eigenvalues descending, d x k eigenvectors, products, passes, residuals)``:
    ``products`` counts the products with :math:`S` in float32 and float64 alike, ``passes`` the
    passes over the table by dtype (on the ``"blas"`` ``engine`` a step makes two).
    """
    ritz = lanczos_top(E, mixing, k, v0, MIXED_TOL, dtype=np.float32, engine=engine)
    vals, vecs, residuals = rayleigh_ritz(E, mixing, ritz.vectors, k, engine)
    passes = _passes(E, np.float32, ritz.passes)
    products, passes = ritz.steps + k, {**passes, "float64": passes["float64"] + 2}
    if not residuals.max() <= MIXED_ACCEPT:  # a NaN residual certifies nothing
        vals, vecs, more, again = implicit_top(E, mixing, k, vecs[:, 0], engine=engine)
        return vals, vecs, products + more, {**passes, "float64": passes["float64"] + again["float64"]}, None
    return vals, vecs, products, passes, residuals
