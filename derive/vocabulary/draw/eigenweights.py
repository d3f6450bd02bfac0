r"""The eigenvalues of a symmetric matrix and the weights of a few vectors on its eigenvectors, without computing the
eigenvectors themselves.

A draw's conditional law needs of its token matrix ``D`` only the spectral measures at ``s`` and at
:math:`\mathbf 1` (:mod:`derive.vocabulary.draw.spectrum`). A dense eigendecomposition spends more than half its time
turning the tridiagonal matrix's eigenvectors back into ``D``'s (:math:`2n^3` flops). Here the vectors are carried
forward instead: Householder's reduction :math:`D = QTQ^\top` (LAPACK ``dsytrd``), its reflectors applied to the ``k``
vectors (``dormtr``, :math:`O(kn^2)`), and the tridiagonal matrix's eigenvectors (divide and conquer, ``dstevd``,
which deflates the many repeated eigenvalues of a token matrix):
:math:`\phi_i^\top y = z_i^\top(Q^\top y)` with :math:`T = \sum_i\lambda_iz_iz_i^\top`.

The routines are SciPy's LAPACK (``scipy.linalg.cython_lapack``) called through ``ctypes``, which lets go of the
interpreter's lock for the call, as NumPy's ``eigh`` does: the draws of
:func:`derive.vocabulary.draw.finite_size.sample_draws` run on several threads at once (SciPy's own wrappers of these
routines keep the lock). Importing this module loads SciPy's LAPACK, and with it its BLAS: import it before a
``threadpoolctl`` limit is set, or the limit will not reach that library. SciPy's LAPACK module is loaded from its
file, without the rest of ``scipy.linalg``, whose import costs about half a CPU-second more (:func:`_lapack_module`);
still, a single small matrix does not repay it: one draw's measures use NumPy's ``eigh``
(:func:`derive.vocabulary.draw.spectrum.eigen_weights`).
"""
from __future__ import annotations

import ctypes
import importlib.machinery
import importlib.util
import os
import sys
from functools import lru_cache

import numpy as np

_NAME = "scipy.linalg.cython_lapack"


def _lapack_module():
    """SciPy's ``scipy.linalg.cython_lapack`` (the capsules of its LAPACK routines), loaded from its file alone: the
    package ``scipy.linalg`` around it imports SciPy's array-API layer, about 0.4 CPU-s that the routines do not need.
    The module is then taken out of ``sys.modules`` again, so that a later import of the package loads it the normal
    way (a Cython module hands back the same object) and binds it. Where SciPy's files are not laid out so, the plain
    import."""
    if _NAME in sys.modules:
        return sys.modules[_NAME]
    spec = importlib.util.find_spec("scipy")
    folders = [] if spec is None or not spec.submodule_search_locations else spec.submodule_search_locations
    paths = [os.path.join(folder, "linalg", "cython_lapack" + suffix) for folder in folders
             for suffix in importlib.machinery.EXTENSION_SUFFIXES]
    path = next((p for p in paths if os.path.isfile(p)), None)
    if path is None:
        import scipy.linalg.cython_lapack as module

        return module
    loader = importlib.machinery.ExtensionFileLoader(_NAME, path)
    module = importlib.util.module_from_spec(importlib.util.spec_from_file_location(_NAME, path, loader=loader))
    loader.exec_module(module)
    sys.modules.pop(_NAME, None)
    return module


_lapack = _lapack_module()

__all__ = ["spectral_weights"]

_INT = np.int32
"""LAPACK's integer in ``scipy.linalg.cython_lapack``: C ``int``."""


@lru_cache(maxsize=None)
def _routine(name: str, arguments: int):
    """The LAPACK routine ``name`` of ``scipy.linalg.cython_lapack`` as a ``ctypes`` function of ``arguments``
    pointers."""
    capsule = _lapack.__pyx_capi__[name]
    get_name = ctypes.pythonapi.PyCapsule_GetName
    get_name.restype, get_name.argtypes = ctypes.c_char_p, [ctypes.py_object]
    get_pointer = ctypes.pythonapi.PyCapsule_GetPointer
    get_pointer.restype, get_pointer.argtypes = ctypes.c_void_p, [ctypes.py_object, ctypes.c_char_p]
    return ctypes.CFUNCTYPE(None, *[ctypes.c_void_p] * arguments)(get_pointer(capsule, get_name(capsule)))


def _call(name: str, *arguments) -> None:
    """Call the LAPACK routine ``name`` with ``arguments`` (NumPy arrays, passed by address; a ``str`` as its first
    character; an ``int`` or ``float`` as a one-element array); raise if its ``info`` (the last argument) is not 0."""
    held = [np.array([ord(a)], dtype=np.uint8) if isinstance(a, str) else
            np.array([a], dtype=_INT) if isinstance(a, int) else
            np.array([a], dtype=float) if isinstance(a, float) else a for a in arguments]
    info = np.zeros(1, dtype=_INT)
    _routine(name, len(held) + 1)(*[a.ctypes.data for a in held], info.ctypes.data)
    if info[0] != 0:
        raise np.linalg.LinAlgError(f"LAPACK {name} failed (info {int(info[0])})")


def _work_size(name: str, *arguments) -> int:
    """The optimal workspace of ``name`` (a query: ``arguments`` with ``lwork = -1`` last)."""
    size = np.zeros(1)
    _call(name, *arguments[:-1], size, -1)
    return max(1, int(size[0]))


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
    # Fortran order: the reflectors below the subdiagonal stay where dormtr reads them
    a = np.array(M, dtype=float, order="F")
    carried = np.array(Y, dtype=float, order="F")
    n, k = carried.shape
    if a.shape != (n, n):
        raise ValueError(f"M must be {n} x {n}, got {a.shape}")
    if n == 0:
        return np.zeros(0), np.zeros((k, 0))
    diagonal, off, tau = np.zeros(n), np.zeros(n), np.zeros(max(1, n - 1))
    reduce_args = ("L", n, a, n, diagonal, off, tau)
    _call("dsytrd", *reduce_args, np.zeros(lwork := _work_size("dsytrd", *reduce_args, None)), lwork)
    if k:
        apply_args = ("L", "L", "T", n, k, a, n, tau, carried, n)
        _call("dormtr", *apply_args, np.zeros(lwork := _work_size("dormtr", *apply_args, None)), lwork)
    Z = np.zeros((n, n), order="F")
    _call("dstevd", "V", n, diagonal, off, Z, n, np.zeros(1 + 4 * n + n * n), 1 + 4 * n + n * n,
          np.zeros(3 + 5 * n, dtype=_INT), 3 + 5 * n)
    return diagonal, ((Z.T @ carried) ** 2).T
