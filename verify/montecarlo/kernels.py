r"""The compiled kernels of the matrix-free solvers (numba): passes over the table and the Lanczos step loop.

Every kernel reads the ``d x V`` table (float32 or float64, C order) row by row, eight rows at a time,
and does all its work on a row while the row is in cache (:mod:`verify.montecarlo.lanczos` explains the
one-pass Lanczos step they serve). Importing this module loads numba, and the first call of a kernel
in a process loads numba's compiler context (about a second on the benchmark machine, notes/benchmarks.md);
:mod:`verify.montecarlo.lanczos` therefore imports it only when its ``"numba"`` engine runs.
"""
from __future__ import annotations

import numpy as np
from numba import njit

from derive.cache import keep_fresh
from verify.montecarlo.orthogonalize import reorthogonalize as _reorthogonalize_source

__all__ = ["FASTMATH", "lanczos_sweep", "block_sweep", "transpose_product_into", "product_into",
           "round_transpose_product", "mix", "reorthogonalize", "lanczos_steps"]

FASTMATH = {"reassoc", "contract"}
"""LLVM flags of the kernels: reassociation lets the reductions run in SIMD lanes, contraction
fuses multiply and add; nothing else is relaxed (NaN and infinity keep their meaning)."""


reorthogonalize = njit(cache=True)(_reorthogonalize_source)
"""The full reorthogonalization of a Lanczos step (:func:`verify.montecarlo.orthogonalize.reorthogonalize`), compiled."""


@njit(inline="always")
def _eight_rows(E, i):
    return E[i], E[i + 1], E[i + 2], E[i + 3], E[i + 4], E[i + 5], E[i + 6], E[i + 7]


@njit(fastmath=FASTMATH, boundscheck=False, inline="always")
def _eight_dots(e0, e1, e2, e3, e4, e5, e6, e7, r, zero):
    # eight accumulators share each load of r; they start at `zero`, whose type they keep
    s0 = s1 = s2 = s3 = s4 = s5 = s6 = s7 = zero
    for k in range(r.shape[0]):
        rk = r[k]
        s0 += e0[k] * rk
        s1 += e1[k] * rk
        s2 += e2[k] * rk
        s3 += e3[k] * rk
        s4 += e4[k] * rk
        s5 += e5[k] * rk
        s6 += e6[k] * rk
        s7 += e7[k] * rk
    return s0, s1, s2, s3, s4, s5, s6, s7


@njit(fastmath=FASTMATH, boundscheck=False, inline="always")
def _eight_updates(out, e0, e1, e2, e3, e4, e5, e6, e7, c0, c1, c2, c3, c4, c5, c6, c7):
    # out += c0 e0 + ... + c7 e7: eight rows share each load and store of out
    for k in range(out.shape[0]):
        out[k] += ((c0 * e0[k] + c1 * e1[k]) + (c2 * e2[k] + c3 * e3[k])) + (
            (c4 * e4[k] + c5 * e5[k]) + (c6 * e6[k] + c7 * e7[k]))


@njit(fastmath=FASTMATH, boundscheck=False, cache=True)
def lanczos_sweep(E, r, x, xprev, alpha, beta, w, y, partial, wblock):
    r"""One Lanczos step's pass over the table: :math:`w = E r - \alpha x - \beta x_{prev}` and
    :math:`y = E^T w`, reading each row of ``E`` once from memory.

    ``E`` is ``d x V`` (C order, float32 or float64) and ``r`` has its dtype; ``x, xprev, w`` (``d``)
    and ``y`` (``V``) are float64; ``partial`` (``V``) and ``wblock`` (``8``) are scratch arrays of
    the table's dtype. ``w`` and ``y`` are overwritten. Rows go in blocks of eight (the loop over a
    block is unrolled by hand: eight dot products share each load of ``r``, and eight rows share each
    update of ``partial``); ``partial`` is added into ``y`` every 64 rows.
    """
    d, V = E.shape
    for k in range(V):
        y[k] = 0.0
        partial[k] = 0.0
    blocks = d // 8
    for b in range(blocks):
        i = 8 * b
        e0, e1, e2, e3, e4, e5, e6, e7 = _eight_rows(E, i)
        s0, s1, s2, s3, s4, s5, s6, s7 = _eight_dots(e0, e1, e2, e3, e4, e5, e6, e7, r, r[0] - r[0])
        w[i] = s0 - alpha * x[i] - beta * xprev[i]
        w[i + 1] = s1 - alpha * x[i + 1] - beta * xprev[i + 1]
        w[i + 2] = s2 - alpha * x[i + 2] - beta * xprev[i + 2]
        w[i + 3] = s3 - alpha * x[i + 3] - beta * xprev[i + 3]
        w[i + 4] = s4 - alpha * x[i + 4] - beta * xprev[i + 4]
        w[i + 5] = s5 - alpha * x[i + 5] - beta * xprev[i + 5]
        w[i + 6] = s6 - alpha * x[i + 6] - beta * xprev[i + 6]
        w[i + 7] = s7 - alpha * x[i + 7] - beta * xprev[i + 7]
        for q in range(8):
            wblock[q] = w[i + q]
        w0 = wblock[0]
        w1 = wblock[1]
        w2 = wblock[2]
        w3 = wblock[3]
        w4 = wblock[4]
        w5 = wblock[5]
        w6 = wblock[6]
        w7 = wblock[7]
        # the eight rows are still in cache: E^T w gathers their contribution now
        _eight_updates(partial, e0, e1, e2, e3, e4, e5, e6, e7, w0, w1, w2, w3, w4, w5, w6, w7)
        if (b + 1) % 8 == 0 or b == blocks - 1:
            for k in range(V):
                y[k] += partial[k]
                partial[k] = 0.0
    for i in range(8 * blocks, d):
        e = E[i]
        s = r[0] - r[0]
        for k in range(V):
            s += e[k] * r[k]
        w[i] = s - alpha * x[i] - beta * xprev[i]
        wi = w[i]
        for k in range(V):
            y[k] += wi * e[k]


@njit(fastmath=FASTMATH, boundscheck=False, inline="always")
def _eight_dots_two(e0, e1, e2, e3, e4, e5, e6, e7, r, q, zero):
    # the dot products of eight rows with two vectors: each load of a row serves both
    a0 = a1 = a2 = a3 = a4 = a5 = a6 = a7 = zero
    b0 = b1 = b2 = b3 = b4 = b5 = b6 = b7 = zero
    for k in range(r.shape[0]):
        rk, qk = r[k], q[k]
        x = e0[k]
        a0 += x * rk
        b0 += x * qk
        x = e1[k]
        a1 += x * rk
        b1 += x * qk
        x = e2[k]
        a2 += x * rk
        b2 += x * qk
        x = e3[k]
        a3 += x * rk
        b3 += x * qk
        x = e4[k]
        a4 += x * rk
        b4 += x * qk
        x = e5[k]
        a5 += x * rk
        b5 += x * qk
        x = e6[k]
        a6 += x * rk
        b6 += x * qk
        x = e7[k]
        a7 += x * rk
        b7 += x * qk
    return (a0, a1, a2, a3, a4, a5, a6, a7), (b0, b1, b2, b3, b4, b5, b6, b7)


@njit(fastmath=FASTMATH, boundscheck=False, inline="always")
def _eight_updates_two(p, q, e0, e1, e2, e3, e4, e5, e6, e7, w, v):
    # p += sum_r w_r e_r and q += sum_r v_r e_r: each load of the eight rows serves both
    for k in range(p.shape[0]):
        x0, x1, x2, x3, x4, x5, x6, x7 = e0[k], e1[k], e2[k], e3[k], e4[k], e5[k], e6[k], e7[k]
        p[k] += ((w[0] * x0 + w[1] * x1) + (w[2] * x2 + w[3] * x3)) + ((w[4] * x4 + w[5] * x5) + (w[6] * x6 + w[7] * x7))
        q[k] += ((v[0] * x0 + v[1] * x1) + (v[2] * x2 + v[3] * x3)) + ((v[4] * x4 + v[5] * x5) + (v[6] * x6 + v[7] * x7))


@njit(fastmath=FASTMATH, boundscheck=False, cache=True)
def block_sweep(E, Rt, P, W, Yt, partial, wblock):
    r"""One block Lanczos step's pass over the table: :math:`W = E R - P` and :math:`Y = E^T W`, reading
    each row of ``E`` once from memory (:func:`lanczos_sweep` for a block of ``b`` vectors).

    ``E`` is ``d x V`` (C order, float32 or float64) and ``Rt`` (``b x V``, :math:`R^T`) float32 or float64;
    ``P`` and ``W`` (``d x b``) and ``Yt`` (``b x V``, :math:`Y^T`) are float64; ``partial`` (``b x V``)
    and ``wblock`` (``16``) are scratch arrays of ``Rt``'s dtype, the type of the arithmetic (a float32 table with a
    float64 ``Rt`` is read in float32 and summed in float64). ``W`` and ``Yt`` are overwritten.
    Each block of eight rows serves the ``b`` columns in turn while it is in cache; at ``b = 2`` (the block of the
    mu2 axis) both columns at once, so that the block is read twice (its dot products, then its updates) rather than
    four times: 1.4 times faster at ``d = 10^4``, ``V = 2d`` (notes/benchmarks.md).
    """
    d, V = E.shape
    b = Rt.shape[0]
    for c in range(b):
        for k in range(V):
            Yt[c, k] = 0.0
            partial[c, k] = 0.0
    blocks = d // 8
    for q in range(blocks):
        i = 8 * q
        e0, e1, e2, e3, e4, e5, e6, e7 = _eight_rows(E, i)
        if b == 2:
            s, t = _eight_dots_two(e0, e1, e2, e3, e4, e5, e6, e7, Rt[0], Rt[1], Rt[0, 0] - Rt[0, 0])
            for r in range(8):
                W[i + r, 0] = s[r] - P[i + r, 0]
                W[i + r, 1] = t[r] - P[i + r, 1]
                wblock[r] = W[i + r, 0]
                wblock[8 + r] = W[i + r, 1]
            _eight_updates_two(partial[0], partial[1], e0, e1, e2, e3, e4, e5, e6, e7, wblock[:8], wblock[8:])
        else:
            for c in range(b):
                s0, s1, s2, s3, s4, s5, s6, s7 = _eight_dots(e0, e1, e2, e3, e4, e5, e6, e7, Rt[c], Rt[c, 0] - Rt[c, 0])
                W[i, c] = s0 - P[i, c]
                W[i + 1, c] = s1 - P[i + 1, c]
                W[i + 2, c] = s2 - P[i + 2, c]
                W[i + 3, c] = s3 - P[i + 3, c]
                W[i + 4, c] = s4 - P[i + 4, c]
                W[i + 5, c] = s5 - P[i + 5, c]
                W[i + 6, c] = s6 - P[i + 6, c]
                W[i + 7, c] = s7 - P[i + 7, c]
                for r in range(8):
                    wblock[r] = W[i + r, c]
                _eight_updates(partial[c], e0, e1, e2, e3, e4, e5, e6, e7, wblock[0], wblock[1], wblock[2], wblock[3],
                               wblock[4], wblock[5], wblock[6], wblock[7])
        if (q + 1) % 8 == 0 or q == blocks - 1:
            for c in range(b):
                for k in range(V):
                    Yt[c, k] += partial[c, k]
                    partial[c, k] = 0.0
    for i in range(8 * blocks, d):
        e = E[i]
        for c in range(b):
            s = Rt[c, 0] - Rt[c, 0]
            for k in range(V):
                s += e[k] * Rt[c, k]
            W[i, c] = s - P[i, c]
            wi = W[i, c]
            for k in range(V):
                Yt[c, k] += wi * e[k]


@njit(fastmath=FASTMATH, boundscheck=False, cache=True)
def transpose_product_into(E, U, out):
    d, V = E.shape
    b = U.shape[1]
    for c in range(b):
        for k in range(V):
            out[c, k] = 0.0
    blocks = d // 8
    for q in range(blocks):
        i = 8 * q
        e0, e1, e2, e3, e4, e5, e6, e7 = _eight_rows(E, i)
        for c in range(b):
            u0 = U[i, c]
            u1 = U[i + 1, c]
            u2 = U[i + 2, c]
            u3 = U[i + 3, c]
            u4 = U[i + 4, c]
            u5 = U[i + 5, c]
            u6 = U[i + 6, c]
            u7 = U[i + 7, c]
            _eight_updates(out[c], e0, e1, e2, e3, e4, e5, e6, e7, u0, u1, u2, u3, u4, u5, u6, u7)
    for i in range(8 * blocks, d):
        e = E[i]
        for c in range(b):
            u = U[i, c]
            o = out[c]
            for k in range(V):
                o[k] += u * e[k]


@njit(fastmath=FASTMATH, boundscheck=False, cache=True)
def product_into(E, Rt, out):
    d, V = E.shape
    b = Rt.shape[0]
    blocks = d // 8
    for q in range(blocks):
        i = 8 * q
        e0, e1, e2, e3, e4, e5, e6, e7 = _eight_rows(E, i)
        for c in range(b):
            s0, s1, s2, s3, s4, s5, s6, s7 = _eight_dots(e0, e1, e2, e3, e4, e5, e6, e7, Rt[c], 0.0)
            out[i, c] = s0
            out[i + 1, c] = s1
            out[i + 2, c] = s2
            out[i + 3, c] = s3
            out[i + 4, c] = s4
            out[i + 5, c] = s5
            out[i + 6, c] = s6
            out[i + 7, c] = s7
    for i in range(8 * blocks, d):
        e = E[i]
        for c in range(b):
            rc = Rt[c]
            s = 0.0
            for k in range(V):
                s += e[k] * rc[k]
            out[i, c] = s


@njit(fastmath=FASTMATH, boundscheck=False, cache=True)
def round_transpose_product(E, x, rounded, y):
    d, V = E.shape
    for k in range(V):
        y[k] = 0.0
    for i in range(d):
        e = E[i]
        f = rounded[i]
        xi = x[i]
        for k in range(V):
            f[k] = e[k]
            y[k] += xi * f[k]


@njit(boundscheck=False, cache=True)
def mix(rows, values, N, abar, y, out):
    V = out.shape[0]
    for v in range(V):
        out[v] = 0.0
    for n in range(rows.shape[0]):
        t = 0.0
        for s in range(rows.shape[1]):
            t += values[n, s] * y[rows[n, s]]
        for s in range(rows.shape[1]):
            out[rows[n, s]] += values[n, s] * t
    c = 0.0
    for v in range(abar.shape[0]):
        c += abar[v] * y[v]
    for v in range(V):
        out[v] /= N
    for v in range(abar.shape[0]):
        out[v] -= abar[v] * c


@njit(cache=True)
def lanczos_steps(E, rows, values, abar, X, Y, alphas, betas, m, last, scale, invariant, w, ynext, scratch):
    """The ``"numba"`` engine's Lanczos steps (:func:`verify.montecarlo.lanczos.blas_steps` is the same loop
    in NumPy): steps at basis sizes ``m, m + 1, ..., last`` (module docstring), each appending the next
    vector to ``X`` and its image to ``Y``, until one finds the Krylov space invariant (``beta`` at
    most ``invariant`` times ``scale``). Returns the number of steps taken, the number of extra passes
    over the table, whether the last step found the space invariant (then nothing was appended), and
    the updated estimate ``scale`` of the norm of the operator."""
    d, V = E.shape
    r, rtable, partial, wblock, zeros, column = scratch
    taken = extra = 0
    while m <= last:
        x = X[m - 1]
        if m >= 2 and betas[m - 2] != 0.0:
            xprev, beta = X[m - 2], betas[m - 2]
        else:
            xprev, beta = zeros, 0.0
        mix(rows, values, rows.shape[0], abar, Y[m - 1], r)
        alpha = np.dot(Y[m - 1], r)
        for v in range(V):
            rtable[v] = r[v]
        lanczos_sweep(E, rtable, x, xprev, alpha, beta, w, ynext, partial, wblock)
        taken += 1
        beta, recompute = reorthogonalize(w, ynext, X[:m], Y[:m])
        if recompute:
            transpose_product_into(E, w.reshape((d, 1)), column)
            ynext[:] = column[0]
            extra += 1
        alphas[m - 1] = alpha
        betas[m - 1] = beta
        scale = max(scale, abs(alpha) + beta)
        if beta <= invariant * scale or m == d:
            return taken, extra, True, scale
        X[m] = w / beta
        Y[m] = ynext / beta
        m += 1
    return taken, extra, False, scale


keep_fresh(globals(), "kernels.py", "orthogonalize.py")  # last: every kernel of the module is defined
