r"""Full reorthogonalization of a Lanczos step, in plain NumPy: the one source that both engines run (the BLAS
engine calls it, :mod:`verify.montecarlo.kernels` compiles it with numba)."""
from __future__ import annotations

import math

import numpy as np

__all__ = ["REORTHOGONALIZE_AGAIN", "reorthogonalize"]

REORTHOGONALIZE_AGAIN = math.sqrt(0.5)
r"""A second Gram-Schmidt pass runs when the first leaves less than this fraction of the norm of
:math:`w` (Kahan and Parlett's "twice is enough" criterion, with its constant :math:`1/\sqrt2`)."""


def reorthogonalize(w, ynext, basis, images):
    r"""Full reorthogonalization of a Lanczos step: :math:`w \leftarrow w - X(X^T w)` against the rows ``basis``
    of :math:`X`, carried to ``ynext`` :math:`= E^T w` by linearity with ``images`` :math:`= E^T X`, in place.
    When the first pass cancels more than :data:`REORTHOGONALIZE_AGAIN` of the norm a second one runs
    ("twice is enough"), and then ``ynext`` must be recomputed by a pass over the table instead: the
    correction would multiply the rounding of :math:`E^T w` by :math:`|h|/\beta > 1`, and on a float32
    table that error would grow from step to step once the Krylov space is nearly exhausted. Returns
    ``(beta, recompute)``, :math:`\beta = \|w\|`. Plain NumPy, so that both engines run this one source
    (:mod:`verify.montecarlo.kernels` compiles it).

    >>> w, y = np.array([1.0, 2.0]), np.array([2.0])
    >>> beta, again = reorthogonalize(w, y, np.array([[1.0, 0.0]]), np.array([[3.0]]))
    >>> float(beta), again, w.tolist(), y.tolist()
    (2.0, False, [0.0, 2.0], [-1.0])
    """
    before = np.sqrt(np.dot(w, w))
    h = np.dot(basis, w)
    w -= np.dot(h, basis)
    beta = np.sqrt(np.dot(w, w))
    if beta < REORTHOGONALIZE_AGAIN * before:
        w -= np.dot(np.dot(basis, w), basis)
        return np.sqrt(np.dot(w, w)), True
    ynext -= np.dot(h, images)
    return beta, False
