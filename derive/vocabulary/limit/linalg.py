r"""The generic linear algebra of the quenched populations (:mod:`derive.vocabulary.limit.signfield`), in numba: a
small Hermitian positive definite solve, Anderson mixing of a fixed-point iteration, and restarted GMRES for an operator
given as a function.

Each is written as plain loops, in the order of operations the populations' results were made with, so that moving
them here changed no digit. GMRES runs its outer loop in Python (numba cannot cache a compiled function that takes
another as an argument) and each step in numba; an application of the operator costs far more than the call.
"""
from __future__ import annotations

import math

import numba
import numpy as np

from derive.cache import keep_fresh
from derive.vocabulary.limit import KERNEL_FILES

__all__ = ["hermitian_solve", "anderson_work", "anderson_step", "norm", "gmres", "real_times"]


@numba.njit(cache=True, nogil=True)
def hermitian_solve(A, b):
    r""":math:`A^{-1}b` for a small Hermitian positive definite ``A`` by its Cholesky factor :math:`A = LL^H`
    (overwriting ``A`` with ``L``; a pivot that rounding makes negative is taken as 0). numba's ``np.linalg.solve``
    would add seconds to the first compilation for a ``6 x 6`` system.

    >>> A = np.array([[4.0, 2j], [-2j, 3.0]])
    >>> x = hermitian_solve(A.copy(), np.array([2.0 + 0j, 1j]))
    >>> bool(np.allclose(A @ x, [2, 1j]))
    True
    """
    k = A.shape[0]
    for j in range(k):
        d = A[j, j].real
        for m in range(j):
            d -= abs(A[j, m]) ** 2
        d = math.sqrt(d) if d > 0.0 else 0.0
        A[j, j] = d
        for i in range(j + 1, k):
            acc = A[i, j]
            for m in range(j):
                acc -= A[i, m] * A[j, m].conjugate()
            A[i, j] = acc / d
    x = b.copy()
    for i in range(k):
        for m in range(i):
            x[i] -= A[i, m] * x[m]
        x[i] /= A[i, i].real
    for i in range(k - 1, -1, -1):
        for m in range(i + 1, k):
            x[i] -= A[m, i].conjugate() * x[m]
        x[i] /= A[i, i].real
    return x


@numba.njit(cache=True, nogil=True)
def anderson_work(P, depth):
    """The work arrays of :func:`anderson_step` for iterates of length ``P`` and ``depth`` remembered differences:
    ``(G, Xprev, Gprev, dX, dG, products)``."""
    G, Xprev, Gprev = (np.empty(P, dtype=np.complex128), np.empty(P, dtype=np.complex128),
                       np.empty(P, dtype=np.complex128))
    dX, dG = np.empty((depth, P), dtype=np.complex128), np.empty((depth, P), dtype=np.complex128)
    products = np.zeros((depth, depth), dtype=np.complex128)  # dG[a]^H dG[c], kept with the differences
    return G, Xprev, Gprev, dX, dG, products


@numba.njit(cache=True, nogil=True)
def anderson_step(X, F, work, state, first, upper):
    r"""One step of Anderson mixing of the iteration :math:`X \leftarrow F(X)`, with ``F`` the map's image of ``X``:
    in place, :math:`X \leftarrow F - \sum_a\gamma_a(\Delta X_a + \Delta G_a)`, :math:`\gamma` the least-squares fit
    of the residual :math:`G = F - X` by the differences of the last ``depth`` residuals (the normal equations, their
    Gram matrix updated by the new difference's products only and regularized by :math:`10^{-14}` of its trace: the
    differences of nearly converged residuals are nearly dependent). A mixed step that leaves the closed upper
    half-plane (``upper``; a map that preserves it has its fixed point there) or is not finite is replaced by the plain
    step :math:`X \leftarrow F` and the history restarts. ``state`` holds ``(kept, slot)``; ``first`` marks the first
    step. Returns whether the step was mixed.

    A linear map contracting by 0.99 reaches its fixed point in a few steps where plain iteration would take thousands:

    >>> P = 4
    >>> work, state = anderson_work(P, 6), np.zeros(2, dtype=np.int64)
    >>> X = np.zeros(P, dtype=np.complex128)
    >>> for k in range(12):
    ...     F = 0.99 * X + np.arange(P) + 1j
    ...     _ = anderson_step(X, F, work, state, k == 0, True)
    >>> bool(np.allclose(X, (np.arange(P) + 1j) / 0.01))
    True
    """
    G, Xprev, Gprev, dX, dG, products = work
    depth = dX.shape[0]
    P = X.shape[0]
    kept, slot = state[0], state[1]
    for i in range(P):
        G[i] = F[i] - X[i]
    if not first:
        for i in range(P):
            dX[slot, i] = X[i] - Xprev[i]
            dG[slot, i] = G[i] - Gprev[i]
        kept = min(kept + 1, depth)
        for a in range(kept):  # only the new difference's products are new
            acc = 0j
            for i in range(P):
                acc += dG[a, i].conjugate() * dG[slot, i]
            products[a, slot] = acc
            products[slot, a] = acc.conjugate()
        slot = (slot + 1) % depth
    Xprev[:] = X
    Gprev[:] = G
    gram = products[:kept, :kept].copy()
    rhs = np.zeros(kept, dtype=np.complex128)
    trace = 0.0
    for a in range(kept):
        acc = 0j
        for i in range(P):
            acc += dG[a, i].conjugate() * G[i]
        rhs[a] = acc
        trace += gram[a, a].real
    mixed = kept > 0 and trace > 0.0
    if mixed:
        for a in range(kept):
            gram[a, a] += 1e-14 * trace
        gamma = hermitian_solve(gram, rhs)
        for i in range(P):
            v = F[i]
            for a in range(kept):
                v -= gamma[a] * (dX[a, i] + dG[a, i])
            if not ((v.imag >= 0.0 or not upper) and abs(v) < np.inf):
                mixed = False
                break
            X[i] = v
    if not mixed:
        X[:] = F
        kept = slot = 0
    state[0], state[1] = kept, slot
    return mixed


@numba.njit(cache=True, nogil=True, inline="always")
def real_times(r, z):
    r"""The real ``r`` times the complex ``z``, :math:`r\operatorname{Re}z + ir\operatorname{Im}z`: two products.
    numba widens ``r * z`` to a complex product, four products and two sums (the ``0 * Im z`` terms cannot be dropped
    without fast-math), and the populations' loops are mostly such products. For a finite ``z`` the result is the same
    to the bit (the terms dropped are zeros), up to the sign of a zero.

    >>> real_times(2.0, 3.0 - 1j)
    (6-2j)
    """
    return complex(r * z.real, r * z.imag)


@numba.njit(cache=True, nogil=True, inline="always")
def _dot(a, b):
    """:math:`\\bar a^\\top b` in a plain loop (a BLAS call costs more in threads than it computes here)."""
    acc = 0j
    for k in range(a.shape[0]):
        acc += a[k].conjugate() * b[k]
    return acc


@numba.njit(cache=True, nogil=True)
def norm(v):
    r"""The Euclidean norm :math:`\|v\|` of a complex vector.

    >>> norm(np.array([3.0 + 0j, 4j]))
    5.0
    """
    return np.sqrt((np.abs(v) ** 2).sum())


@numba.njit(cache=True, nogil=True)
def _residual(b, image):
    return b - image


@numba.njit(cache=True, nogil=True)
def _scaled(r, beta):
    return r / beta


@numba.njit(cache=True, nogil=True)
def _arnoldi(V, H, j, w):
    """Orthogonalize ``w = A V[j]`` against ``V[0..j]`` (modified Gram–Schmidt) into column ``j`` of ``H`` and
    ``V[j + 1]``; the new vector's norm."""
    n = w.shape[0]
    for i in range(j + 1):
        h = _dot(V[i], w)
        H[i, j] = h
        for l in range(n):
            w[l] -= h * V[i, l]
    hn = np.sqrt((np.abs(w) ** 2).sum())
    H[j + 1, j] = hn
    if hn > 0:
        V[j + 1] = w / hn
    return hn


@numba.njit(cache=True, nogil=True)
def _rotate(H, cs, sn, g, j):
    """Apply the previous complex Givens rotations to column ``j`` of ``H``, make the one that zeroes ``H[j + 1, j]``
    and rotate the right-hand side ``g``; the new residual norm ``|g[j + 1]|``."""
    for i in range(j):
        a0, a1 = H[i, j], H[i + 1, j]
        H[i, j] = cs[i] * a0 + sn[i] * a1
        H[i + 1, j] = -np.conj(sn[i]) * a0 + cs[i] * a1
    a, bb = H[j, j], H[j + 1, j]
    if a == 0:
        cs[j], sn[j] = 0.0, 1.0 + 0j
        H[j, j] = bb
    else:
        norm_ = np.sqrt(abs(a) ** 2 + abs(bb) ** 2)
        cs[j] = abs(a) / norm_
        sn[j] = (a / abs(a)) * np.conj(bb) / norm_
        H[j, j] = (a / abs(a)) * norm_
    H[j + 1, j] = 0
    g[j + 1] = -np.conj(sn[j]) * g[j]
    g[j] = cs[j] * g[j]
    return abs(g[j + 1])


@numba.njit(cache=True, nogil=True)
def _correct(x, V, H, g, k):
    """``x += V[:k]^T y`` with ``y`` the solution of the triangular ``H[:k, :k] y = g[:k]``."""
    n = x.shape[0]
    y = np.zeros(k, dtype=np.complex128)
    for i in range(k - 1, -1, -1):
        acc = g[i]
        for l in range(i + 1, k):
            acc -= H[i, l] * y[l]
        y[i] = acc / H[i, i]
    for i in range(k):
        for l in range(n):
            x[l] += y[i] * V[i, l]


def gmres(apply, b, x0, tol: float, restart: int = 40, max_restarts: int = 50):
    r"""Restarted GMRES (Saad and Schultz 1986) for :math:`Ax = b`, ``apply(v)`` returning :math:`Av` (a new complex
    array), from ``x0``: Arnoldi by modified Gram–Schmidt, the least-squares problem by complex Givens rotations, at
    most ``restart`` steps per cycle and ``max_restarts`` cycles. Returns ``x`` and whether the residual fell below
    ``tol`` times :math:`\|b\|`.

    >>> A = np.array([[3.0, 1.0, 0.0], [0.5, 2.0, 1j], [0.0, -1j, 4.0]])
    >>> b = np.array([1.0, 2.0, 3.0], dtype=np.complex128)
    >>> x, ok = gmres(lambda v: A @ v, b, np.zeros(3, dtype=np.complex128), 1e-12)
    >>> ok, bool(np.allclose(A @ x, b))
    (True, True)
    """
    n = b.shape[0]
    x = x0.copy()
    bnorm = norm(b)
    if bnorm == 0.0:
        return np.zeros(n, dtype=np.complex128), True
    for _ in range(max_restarts):
        r = _residual(b, apply(x))
        beta = norm(r)
        if beta <= tol * bnorm:
            return x, True
        V = np.empty((restart + 1, n), dtype=np.complex128)
        H = np.zeros((restart + 1, restart), dtype=np.complex128)
        cs = np.zeros(restart)
        sn = np.zeros(restart, dtype=np.complex128)
        g = np.zeros(restart + 1, dtype=np.complex128)
        V[0] = _scaled(r, beta)
        g[0] = beta
        k = 0
        for j in range(restart):
            hn = _arnoldi(V, H, j, apply(V[j]))
            residual = _rotate(H, cs, sn, g, j)
            k = j + 1
            if residual <= tol * bnorm or hn == 0:
                break
        _correct(x, V, H, g, k)
    return x, bool(norm(_residual(b, apply(x))) <= tol * bnorm)


keep_fresh(globals(), *KERNEL_FILES)  # last: every kernel of the module is defined
