r"""The eigenvalues of a symmetric matrix and the weights of a few vectors on its eigenvectors, without the eigenvectors.

A draw's conditional law needs of its token matrix ``D`` only the spectral measures at ``s`` and at
:math:`\mathbf 1` (:mod:`derive.vocabulary.draw.spectrum`). A dense eigendecomposition spends more than half its time
turning the tridiagonal matrix's eigenvectors back into ``D``'s (:math:`2n^3` flops). Here the vectors are carried
forward instead: Householder's reduction :math:`D = QTQ^\top` (LAPACK ``dsytrd``), the reflectors applied to the
``k`` vectors (``dormqr``, :math:`O(kn^2)`), and the tridiagonal matrix's eigenvectors (MRRR, ``dstemr``,
:math:`O(n^2)`): :math:`\phi_i^\top y = z_i^\top(Q^\top y)` with :math:`T = \sum_i\lambda_iz_iz_i^\top`.
"""
from __future__ import annotations

import numpy as np
import scipy.linalg
from scipy.linalg import lapack

__all__ = ["spectral_weights"]


def spectral_weights(M, Y) -> tuple[np.ndarray, np.ndarray]:
    r"""The eigenvalues :math:`\lambda_i` of a real symmetric ``n x n`` matrix ``M`` (its lower triangle is read),
    ascending, and the squared projections :math:`W_{ji} = (\phi_i^\top y_j)^2` of the columns of ``Y`` (``n x k``)
    on its orthonormal eigenvectors :math:`\phi_i`: the spectral measure of ``M`` at each :math:`y_j` is
    :math:`\sum_i W_{ji}\,\delta_{\lambda_i}`. Returns ``(lam, W)``, ``W`` of shape ``(k, n)``.

    Within a repeated eigenvalue the split of a weight among its eigenvectors is arbitrary; only the sum over the
    eigenspace (:math:`\|P_\lambda y\|^2`) is defined.

    >>> lam, W = spectral_weights(np.array([[2.0, 1.0], [1.0, 2.0]]), np.array([[1.0, 1.0], [1.0, 0.0]]))
    >>> lam.round(12).tolist(), W.round(12).tolist()
    ([1.0, 3.0], [[0.0, 2.0], [0.5, 0.5]])
    """
    M = np.asarray(M, dtype=float)
    Y = np.asarray(Y, dtype=float)
    n = M.shape[0]
    if n == 0:
        return np.zeros(0), np.zeros((Y.shape[1], 0))
    lwork = int(lapack.dsytrd_lwork(n, lower=1)[0])
    reduced, diagonal, off, tau, info = lapack.dsytrd(M, lower=1, lwork=lwork)
    if info != 0:
        raise np.linalg.LinAlgError(f"dsytrd failed (info {info})")
    carried = np.array(Y, order="F")
    if n > 1:
        # Q = H(1)...H(n-1) acts on rows 2..n; its reflectors sit below the first subdiagonal (dormtr's 'L' case)
        out, _, info = lapack.dormqr("L", "T", reduced[1:, : n - 1], tau[: n - 1], carried[1:],
                                     lwork=max(1, 64 * Y.shape[1]))
        if info != 0:
            raise np.linalg.LinAlgError(f"dormqr failed (info {info})")
        carried[1:] = out
    lam, Z = scipy.linalg.eigh_tridiagonal(diagonal, off)
    return lam, ((Z.T @ carried) ** 2).T
