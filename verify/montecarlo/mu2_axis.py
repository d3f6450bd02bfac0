r"""The mu2 axis from one draw: the top eigenpairs of :math:`S(\mu_2)` for every signal strength at once.

For one draw (table noise :math:`Z`, the table at :math:`\mu_2 = 0`; class signs :math:`s`; tokens, hence
the mixing :math:`M`) the table at signal strength :math:`\mu_2` is :math:`E = Z + \sqrt{\mu_2}\,u s^T`
with :math:`u = \mathbf e_1` (:mod:`verify.montecarlo.draw`), so

.. math::

    S(\mu_2) = \tfrac1N E M E^T = S_0 + U C(\mu_2) U^T,\qquad S_0 = \tfrac1N Z M Z^T,\quad
    U = [u,\ g],\quad g = \tfrac1N Z M s,\quad
    C(\mu_2) = \begin{pmatrix}\beta\mu_2 & \sqrt{\mu_2}\\ \sqrt{\mu_2} & 0\end{pmatrix},\quad
    \beta = \tfrac1N s^T M s,

with :math:`M = A A^T` for the raw :math:`S` (the vocabulary-mean direction is part of :math:`S_0`) and
:math:`M = A A^T - N\bar a\bar a^T` for the centered :math:`S_c` (notes/mc.md derives it and the secular
equation :math:`\det(I - C G(\lambda)) = 0`, :math:`G(\lambda) = U^T(\lambda - S_0)^{-1}U`).

*One Krylov space for every* :math:`\mu_2`. Since :math:`S(\mu_2) - S_0` maps into the span of
:math:`U`, the block Krylov spaces :math:`\mathcal K_m(S(\mu_2), U)` and :math:`\mathcal K_m(S_0, U)`
coincide. Block Lanczos on :math:`S_0` from :math:`U = X_1 R_0` gives an orthonormal basis
:math:`Q = [X_1 \dots X_m]` and the block tridiagonal :math:`T = Q^T S_0 Q`; then
:math:`Q^T S(\mu_2) Q = T + E_1 R_0 C(\mu_2) R_0^T E_1^T` (only the first diagonal block moves), and
:math:`S(\mu_2) Q - Q\,Q^T S(\mu_2) Q = X_{m+1} B_m E_m^T` as for :math:`S_0`. So one run gives, for
every :math:`\mu_2`, the Ritz values, their residual norms :math:`\|B_m y_m\|` (:math:`y_m` the last
block of the Ritz vector :math:`y`) and the overlaps :math:`(u^T Q y)^2 = (R_0[:,0]^T y_1)^2`, without
forming a ``d``-vector. These Ritz pairs are those of the secular equation with :math:`G` replaced by
its block Gauss quadrature :math:`R_0^T E_1^T(\lambda - T)^{-1}E_1 R_0`.

*One pass per block step.* A step reads the table once for both :math:`W = Z R - P` and :math:`Z^T W`
(:func:`verify.montecarlo.kernels.block_sweep`), reorthogonalizes fully and carries :math:`Z^T W` by
linearity, as the single-vector solver does (:mod:`verify.montecarlo.lanczos`). Its first pass gives
:math:`g` and :math:`Z^T g` together; :math:`Z^T u` is the first row of :math:`Z`.
"""
from __future__ import annotations

import functools
import math
import numbers
import threading
from dataclasses import dataclass

import numpy as np

from derive.errors import ParameterError
from verify.montecarlo.lanczos import (INVARIANT_ULPS, TOL, Mixing, compiled_kernels, steps_before_check,
                                       transpose_product)
from verify.montecarlo.orthogonalize import REORTHOGONALIZE_AGAIN

__all__ = ["BLOCK", "Pencil", "coupling", "Krylov", "block_lanczos", "Axis", "axis_top", "dense_axis_top",
           "check_mu2s"]

BLOCK = 2
"""Columns of :math:`U = [u, g]`: the block size of the Krylov run."""


def coupling(mu2: float, beta: float) -> np.ndarray:
    r"""The ``2 x 2`` matrix :math:`C(\mu_2) = \begin{pmatrix}\beta\mu_2 & \sqrt{\mu_2}\\ \sqrt{\mu_2} & 0\end{pmatrix}`
    of :math:`S(\mu_2) = S_0 + U C(\mu_2) U^T`.

    >>> coupling(4.0, 0.5).tolist()
    [[2.0, 2.0], [2.0, 0.0]]
    """
    m = math.sqrt(mu2)
    return np.array([[beta * mu2, m], [m, 0.0]])


def check_mu2s(mu2s) -> np.ndarray:
    """``mu2s`` as a non-empty one-dimensional float array of finite values ``>= 0`` (else ``ParameterError``)."""
    if isinstance(mu2s, (str, bytes)) or not hasattr(mu2s, "__iter__"):
        raise ParameterError("mu2", f"must be a sequence of reals >= 0, got {mu2s!r}")
    values = []
    for x in mu2s:
        if isinstance(x, (bool, str, bytes)) or not isinstance(x, (numbers.Real, np.floating, np.integer)):
            raise ParameterError("mu2", f"must be a sequence of reals >= 0, got {x!r} in it")
        if not (math.isfinite(float(x)) and float(x) >= 0):
            raise ParameterError("mu2", f"must be finite and >= 0, got {x!r}")
        values.append(float(x))
    if not values:
        raise ParameterError("mu2", "is empty")
    return np.array(values)


@dataclass(frozen=True)
class Pencil:
    r"""One draw as :math:`S(\mu_2) = S_0 + U C(\mu_2) U^T` (module docstring): the table noise ``Z``
    (``d x V``), the ``mixing`` :math:`M/N` (raw or centered), :math:`g = ZMs/N`, its image
    :math:`Z^T g` and :math:`\beta = s^T M s/N`; ``u`` is :math:`\mathbf e_1`."""

    Z: np.ndarray
    mixing: Mixing
    g: np.ndarray
    Zt_g: np.ndarray
    beta: float

    @classmethod
    def of(cls, Z: np.ndarray, mixing: Mixing, s: np.ndarray) -> "Pencil":
        """The pencil of a draw: one pass over ``Z`` gives :math:`g` and :math:`Z^T g` (module docstring).

        >>> import scipy.sparse as sps
        >>> Z = np.array([[1.0, 2.0], [0.0, 1.0]])
        >>> p = Pencil.of(Z, Mixing.of(sps.csc_matrix(np.eye(2)), False), np.array([1.0, -1.0]))
        >>> p.g.tolist(), p.Zt_g.tolist(), p.beta   # M = I, N = 2: g = Z s/2
        ([-0.5, -0.5], [-0.5, -1.5], 1.0)
        """
        d, V = Z.shape
        Ms = mixing.apply(np.asarray(s, dtype=np.float64))
        W, Yt = np.empty((d, 1)), np.empty((1, V))
        compiled_kernels().block_sweep(Z, Ms[None, :].astype(Z.dtype), np.zeros((d, 1)), W, Yt, np.empty((1, V), Z.dtype),
                    np.empty(16, Z.dtype))
        return cls(Z, mixing, W[:, 0], Yt[0], float(np.dot(s, Ms)))

    @property
    def U(self) -> np.ndarray:
        """:math:`U = [u, g]` (``d x 2``)."""
        u = np.zeros(len(self.g))
        u[0] = 1.0
        return np.column_stack([u, self.g])


@dataclass(frozen=True)
class Krylov:
    r"""A block Lanczos run on :math:`S_0` from :math:`U = X_1 R_0`: the diagonal blocks :math:`A_j = X_j^T S_0 X_j`
    (``m x b x b``), the couplings :math:`B_j` with :math:`S_0 X_j = X_{j-1}B_{j-1}^T + X_j A_j + X_{j+1}B_j`
    (``m x b x b``, upper triangular; :math:`B_m` couples to the next block and measures the residuals),
    :math:`R_0` and the number of passes over the table."""

    diagonal: np.ndarray
    couplings: np.ndarray
    R0: np.ndarray
    passes: int

    @property
    def size(self) -> int:
        """Dimension of the Krylov space, :math:`bm`."""
        return self.diagonal.shape[0] * self.diagonal.shape[1]

    @functools.cached_property
    def _band(self) -> np.ndarray:
        m, b, _ = self.diagonal.shape
        ab = np.zeros((b + 1, m * b))
        for p in range(b):
            for q in range(p + 1):
                ab[p - q, q::b] = self.diagonal[:, p, q]
            for q in range(p, b):  # B_j sits at rows (j + 1) b + p, columns j b + q: distance b + p - q
                ab[b + p - q, q::b][:m - 1] = self.couplings[:m - 1, p, q]
        return ab

    def band(self, C: np.ndarray) -> np.ndarray:
        r""":math:`T + E_1 R_0 C R_0^T E_1^T` in the lower band storage of ``scipy.linalg.eig_banded``
        (``ab[i, j] = T[i + j, j]``; the bandwidth is ``b`` since the couplings are upper triangular)."""
        ab = self._band.copy()
        shift = self.R0 @ C @ self.R0.T
        for p in range(len(shift)):
            for q in range(p + 1):
                ab[p - q, q] += shift[p, q]
        return ab

    def ritz(self, C: np.ndarray, k: int):
        r"""The top-``k`` Ritz pairs of :math:`S_0 + U C U^T` on this space: ``(values descending,
        squared overlaps with u, relative residuals)``, the residual of pair ``i`` being
        :math:`\|B_m y_{m,i}\|/|\theta_i|`."""
        import scipy.linalg

        m, b, _ = self.diagonal.shape
        n = m * b
        k = min(k, n)
        theta, Y = scipy.linalg.eig_banded(self.band(C), lower=True, select="i", select_range=(n - k, n - 1))
        theta, Y = theta[::-1], Y[:, ::-1]
        overlaps = (self.R0[:, 0] @ Y[:b]) ** 2
        residuals = np.linalg.norm(self.couplings[-1] @ Y[-b:], axis=0) / np.maximum(np.abs(theta), np.finfo(float).tiny)
        return theta, overlaps, residuals


def _orthonormalize(W, Ynext, basis, pencil, level, rng):
    r"""``W = X B`` with ``X`` orthonormal and orthogonal to ``basis`` (rows), ``B`` upper triangular, by
    Gram-Schmidt column by column (twice); ``Z^T X`` from ``Ynext = Z^T W`` by the same combinations. A
    column left with norm at most ``level`` is rounding noise (the Krylov space is invariant in that
    direction): it is replaced by a fresh random vector orthogonal to everything, with ``B[c, c] = 0``
    and its image computed by a pass. Returns ``(X, Z^T X, B, passes)``."""
    d, b = W.shape
    X, Y, B = np.zeros((d, b)), np.zeros((len(Ynext), b)), np.zeros((b, b))
    passes = 0
    for c in range(b):
        v, y = W[:, c].copy(), Ynext[:, c].copy()
        for _ in range(2):
            h = X[:, :c].T @ v
            v -= X[:, :c] @ h
            y -= Y[:, :c] @ h
            B[:c, c] += h
        norm = np.linalg.norm(v)
        if norm > level:
            B[c, c] = norm
            X[:, c], Y[:, c] = v / norm, y / norm
            continue
        if len(basis) + c >= d:
            break  # no direction is left: the space is full, and the caller stops
        fresh = rng.standard_normal(d)
        for _ in range(2):
            fresh -= basis.T @ (basis @ fresh)
            fresh -= X[:, :c] @ (X[:, :c].T @ fresh)
        X[:, c] = fresh / np.linalg.norm(fresh)
        Y[:, c] = transpose_product(pencil.Z, X[:, c:c + 1])[:, 0]
        passes += 1
    return X, Y, B, passes


_KRYLOV = threading.local()
"""The basis and image buffers each thread keeps between its runs (:func:`_buffers`)."""


def _buffers(rows: int, d: int, V: int, filled: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """This thread's Krylov buffers (``rows' x d`` and ``rows' x V``, ``rows' >= rows``), kept between runs: a sweep's
    worker solves cell after cell of one shape, and at ``d = 10^4``, ``V = 2d`` allocating and faulting in the grown
    buffers of every cell cost 0.9 s of a 15 s cell (notes/benchmarks.md). Buffers too small are replaced by ones of
    ``rows`` rows, into which the first ``filled`` rows of the old ones are copied."""
    basis, images = getattr(_KRYLOV, "buffers", (None, None))
    same_shape = basis is not None and basis.shape[1] == d and images.shape[1] == V
    if same_shape and len(basis) >= rows:
        return basis, images
    new = np.empty((rows, d)), np.empty((rows, V))
    if same_shape:
        new[0][:filled], new[1][:filled] = basis[:filled], images[:filled]
    _KRYLOV.buffers = None  # the old ones released before a caller's next allocation
    _KRYLOV.buffers = new
    return new


def block_lanczos(pencil: Pencil, converged, max_size: int | None = None) -> Krylov:
    r"""Block Lanczos on :math:`S_0` from :math:`U` (module docstring), with full reorthogonalization.

    ``converged(krylov) -> worst`` is called at the steps :func:`verify.montecarlo.lanczos.steps_before_check`
    schedules and returns the largest relative residual that still matters and whether the run may stop
    (``(worst, done)``). The run also stops when another block would not fit in ``max_size`` (default
    ``d``) basis vectors.
    """
    Z, mixing = pencil.Z, pencil.mixing
    d, V = Z.shape
    b = BLOCK
    limit = d if max_size is None else min(d, max_size)
    X1, R0 = np.linalg.qr(pencil.U)
    if np.min(np.abs(np.diag(R0))) <= INVARIANT_ULPS * np.finfo(float).eps * max(1.0, np.abs(R0).max()):
        raise ParameterError("U", "u and g = Z M s/N are linearly dependent: no rank-two pencil")
    # Z^T X_1 = [Z^T u, Z^T g] R_0^{-1}, by linearity: no pass
    Y1 = np.linalg.solve(R0.T, np.vstack([Z[0], pencil.Zt_g])).T
    basis, images = _buffers(min(limit, 64 * b), d, V)
    basis[:b], images[:b] = X1.T, Y1.T
    diagonal, couplings = [], []
    W, Yt = np.empty((d, b)), np.empty((b, V))
    partial, wblock = np.empty((b, V), Z.dtype), np.empty(16, Z.dtype)
    passes, scale, check, history = 0, 0.0, 1, None
    invariant_level = INVARIANT_ULPS * np.finfo(Z.dtype).eps
    rng = np.random.default_rng(d)
    kernels = compiled_kernels()
    R = np.empty((V, b))
    m = 0
    while True:
        n = b * m
        Xj, Yj = basis[n:n + b].T, images[n:n + b].T
        for c in range(b):  # M Y/N by the compiled loop, column by column
            kernels.mix(mixing.rows, mixing.values, mixing.N, mixing.abar, images[n + c], R[:, c])
        Aj = Yj.T @ R
        Aj = (Aj + Aj.T) / 2
        P = Xj @ Aj
        if m:
            P += basis[n - b:n].T @ couplings[-1].T
        kernels.block_sweep(Z, np.ascontiguousarray(R.T, dtype=Z.dtype), P, W, Yt, partial, wblock)
        passes += 1
        Ynext = Yt.T.copy()
        old, before = basis[:n + b], np.linalg.norm(W, axis=0)
        H = old @ W
        # (H^T old)^T rather than old^T H: BLAS streams the rows of the C-ordered basis twice as fast (at d = 10^4 the
        # reorthogonalization was a tenth of a cell)
        W -= (H.T @ old).T
        Ynext -= (H.T @ images[:n + b]).T
        if np.any(np.linalg.norm(W, axis=0) < REORTHOGONALIZE_AGAIN * before):
            # the image would inherit the cancelled rounding (lanczos._lanczos_steps): recompute it
            W -= ((old @ W).T @ old).T
            Ynext = transpose_product(Z, W)
            passes += 1
        scale = max(scale, np.abs(Aj).sum(axis=0).max() + np.linalg.norm(W, axis=0).max())
        Xn, Yn, Bj, fresh = _orthonormalize(W, Ynext, old, pencil, invariant_level * scale, rng)
        passes += fresh
        diagonal.append(Aj)
        couplings.append(Bj)
        m += 1
        krylov = None
        full = b * (m + 1) > limit
        if m >= check or full:
            krylov = Krylov(np.array(diagonal), np.array(couplings), R0, passes)
            worst, done = converged(krylov)
            if done or full:
                return krylov
            check = m + steps_before_check(history, m, worst, TOL)
            history = (m, worst) if math.isfinite(worst) else None
        if b * (m + 1) > len(basis):
            basis, images = _buffers(min(2 * len(basis), limit), d, V, filled=b * m)
        basis[b * m:b * m + b], images[b * m:b * m + b] = Xn.T, Yn.T


@dataclass(frozen=True)
class Axis:
    """Top-``k`` eigenpairs of :math:`S(\\mu_2)` along an axis of ``mu2`` values: ``values`` and ``overlaps``
    (``len(mu2) x k``, descending eigenvalues and the squared overlaps of their eigenvectors with ``u``),
    ``residuals`` (the certified relative residuals, ``None`` on the direct path), the basis size, the
    passes over the table and the path (``'mu2-axis'`` or ``'dense'``)."""

    mu2: np.ndarray
    values: np.ndarray
    overlaps: np.ndarray
    residuals: np.ndarray | None
    size: int
    passes: int
    path: str


def axis_top(pencil: Pencil, mu2s, k: int, tol: float = TOL) -> Axis:
    r"""Top-``k`` eigenvalues of :math:`S(\mu_2)` and the squared overlaps of their eigenvectors with ``u``
    for every ``mu2`` in ``mu2s``, from one block Lanczos run (module docstring).

    The run stops when every Ritz pair of every ``mu2`` has relative residual at most ``tol``
    (:data:`verify.montecarlo.lanczos.TOL`: eigenvalues then err by at most :math:`\mathrm{tol}^2\theta/g`,
    Kato-Temple, and eigenvectors by :math:`\mathrm{tol}\,\theta/g`, Davis-Kahan, :math:`g` the gap).
    Which steps it stops at depends on the whole axis, so a result is a function of the draw and of
    ``mu2s`` together; two axes sharing a value agree there to that accuracy. If the space fills up
    (tiny ``d``) before that, the results come from :func:`direct_axis_top` instead.

    >>> import scipy.sparse as sps
    >>> rng = np.random.default_rng(1)
    >>> Z, A, s = rng.standard_normal((60, 80)), sps.random(80, 200, 0.05, random_state=2, format="csc"), np.repeat([1.0, -1.0], 40)
    >>> axis = axis_top(Pencil.of(Z, Mixing.of(A, True), s), [0.0, 2.0], 2)
    >>> E = Z.copy(); E[0] += np.sqrt(2.0) * s
    >>> Ac = A.toarray() - A.toarray().mean(axis=1, keepdims=True)
    >>> bool(np.allclose(axis.values[1], np.linalg.eigvalsh(E @ Ac @ Ac.T @ E.T / 200)[::-1][:2], rtol=1e-12))
    True
    """
    mu2s = check_mu2s(mu2s)
    d = pencil.Z.shape[0]
    if isinstance(k, bool) or not isinstance(k, (int, np.integer)) or not 1 <= k < d:
        raise ParameterError("k", f"must be an integer from 1 to d - 1 = {d - 1}, got {k!r}")
    couplings = [coupling(m, pencil.beta) for m in mu2s]
    values, overlaps, residuals = (np.full((len(mu2s), k), np.nan) for _ in range(3))
    worst = [math.inf] * len(mu2s)  # each mu2's largest residual when last looked at
    pending = list(range(len(mu2s)))

    def look(krylov: Krylov, i: int) -> bool:
        values[i], overlaps[i], residuals[i] = krylov.ritz(couplings[i], k)
        worst[i] = float(residuals[i].max()) if np.all(np.isfinite(residuals[i])) else math.inf
        return worst[i] <= tol

    def converged(krylov: Krylov):
        if krylov.size < k:
            return math.inf, False
        # the mu2 that was furthest from converging goes first: while it has not, the others need no look
        pending.sort(key=lambda i: -worst[i])
        for i in pending:
            if not look(krylov, i):
                return worst[i], False
        # all pending ones have now: the others are looked at again at this step (a pair found late, an
        # eigenvalue Lanczos had missed, can unsettle a mu2 that had converged earlier) and the run goes on
        # until every mu2 has converged at one and the same step
        settled = set(pending)
        pending[:] = [i for i in range(len(mu2s)) if i not in settled and not look(krylov, i)]
        return max(worst), not pending

    krylov = block_lanczos(pencil, converged)
    if pending:  # the space filled up first: answer directly
        return dense_axis_top(pencil, mu2s, k)
    return Axis(mu2s, values, overlaps, residuals, krylov.size, krylov.passes, "mu2-axis")


def dense_axis_top(pencil: Pencil, mu2s, k: int) -> Axis:
    r"""The same as :func:`axis_top` by dense linear algebra: :math:`S_0 = Z (M Z^T/N)` formed once
    (``d x d``), then for each ``mu2`` LAPACK's top-``k`` eigenpairs of :math:`S_0 + U C(\mu_2) U^T`.
    For small ``d`` (cost :math:`d^2 V + d^3` per ``mu2``).

    >>> import scipy.sparse as sps
    >>> Z, A = np.array([[1.0, 0.0], [0.0, 2.0]]), sps.csc_matrix(np.eye(2))
    >>> axis = dense_axis_top(Pencil.of(Z, Mixing.of(A, False), np.array([1.0, -1.0])), [0.0, 1.0], 1)
    >>> axis.values[0, 0], bool(np.isclose(axis.values[1, 0], (9 + 17 ** 0.5) / 4))  # S(1) = [[5, -2], [-2, 4]]/2
    (np.float64(2.0), True)
    """
    import scipy.linalg

    mu2s = check_mu2s(mu2s)
    Z, U = pencil.Z.astype(np.float64), pencil.U
    d = Z.shape[0]
    if isinstance(k, bool) or not isinstance(k, (int, np.integer)) or not 1 <= k <= d:
        raise ParameterError("k", f"must be an integer from 1 to d = {d}, got {k!r}")
    S0 = Z @ pencil.mixing.apply(np.ascontiguousarray(Z.T))
    S0 = (S0 + S0.T) / 2
    values, overlaps = np.empty((len(mu2s), k)), np.empty((len(mu2s), k))
    for i, mu2 in enumerate(mu2s):
        theta, vectors = scipy.linalg.eigh(S0 + U @ coupling(mu2, pencil.beta) @ U.T, subset_by_index=[d - k, d - 1])
        values[i], overlaps[i] = theta[::-1], vectors[0, ::-1] ** 2
    return Axis(mu2s, values, overlaps, None, d, 1, "dense")
