"""The dense eigensolver: the smaller Gram matrix of the pooled vectors, diagonalized by LAPACK."""
from __future__ import annotations

import numpy as np

__all__ = ["dense_top"]


def dense_top(E: np.ndarray, A, k: int, centered: bool = False, spectrum: bool = False):
    r"""Top-``k`` eigenpairs of :math:`S` (or :math:`S_c`) from the smaller Gram matrix of :math:`C = E A`.

    With :math:`d \le N` the ``d x d`` matrix :math:`C C^T/N` is diagonalized; otherwise the
    ``N x N`` matrix :math:`C^T C/N`, whose unit eigenvector ``v`` maps to
    :math:`\hat u = C v/\sqrt{N\lambda}`. Returns ``(eigenvalues, eigenvectors, full)``: the ``k``
    largest eigenvalues (descending), a ``d x k`` array of unit eigenvectors, and all ``d``
    eigenvalues (descending, with the ``d - N`` structural zeros when ``d > N``) if ``spectrum``,
    else ``None``.
    """
    import scipy.linalg

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
