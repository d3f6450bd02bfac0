"""The one place that knows how BLAS threads are set.

Monte Carlo records must not depend on the number of BLAS threads (a sum split over threads rounds
differently), and one thread per process is also the fastest way to fill the cores with tasks.

Two mechanisms, for two moments:

* :func:`limit_blas_threads` sets the thread pools **of this process**, now, through ``threadpoolctl``
  (every BLAS and OpenMP library already loaded). Whatever the environment says, the code inside runs
  with ``n`` threads. This is the policy wherever a record must not depend on the environment (a sweep
  task sets it itself, on whichever executor it runs) and at the command-line entry points.
* :func:`thread_environment` and :func:`blas_threads_for_children` write the environment variables a
  *child* process reads when its libraries load (they also keep the child from starting, and holding
  memory for, one BLAS thread per core before its first task).
"""
from __future__ import annotations

import contextlib
import os

from derive.errors import ParameterError

__all__ = ["BLAS_THREAD_VARIABLES", "limit_blas_threads", "thread_environment", "blas_threads_for_children"]

BLAS_THREAD_VARIABLES = ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS")


class limit_blas_threads:
    """Limit this process's BLAS and OpenMP thread pools to ``n`` threads, now and for the libraries
    loaded later.

    Both a process-wide setter and a context manager: called bare, ``limit_blas_threads(1)`` sets the
    limit for the rest of the process; ``with limit_blas_threads(1): ...`` restores the previous limits
    (and environment) on leaving the block. The libraries already loaded are limited through
    ``threadpoolctl``; one loaded inside the block (SciPy's own OpenBLAS is loaded by the first
    ``import scipy.linalg``) reads the thread variables, which are set to ``n`` as well.

    >>> import numpy as np
    >>> with limit_blas_threads(1):
    ...     float(np.ones((2, 2)) @ np.ones(2) @ np.ones(2))
    4.0
    """

    def __init__(self, n: int = 1):
        if isinstance(n, bool) or not isinstance(n, int) or n < 1:
            raise ParameterError("threads", f"must be an integer >= 1, got {n!r}")
        import numpy  # noqa: F401  (loads the BLAS that the limit must reach)
        from threadpoolctl import threadpool_limits

        self._saved = {name: os.environ.get(name) for name in BLAS_THREAD_VARIABLES}
        os.environ.update({name: str(n) for name in BLAS_THREAD_VARIABLES})
        self._limits = threadpool_limits(limits=n)

    def restore(self) -> None:
        """Put back the limits and thread variables that were in force before."""
        self._limits.restore_original_limits()
        _restore_environment(self._saved)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.restore()


def _restore_environment(saved: dict) -> None:
    for name, value in saved.items():
        if value is None:
            os.environ.pop(name, None)
        else:
            os.environ[name] = value


def thread_environment(threads: int | None, base: dict | None = None) -> dict:
    """A copy of ``base`` (default ``os.environ``) in which every BLAS library runs ``threads`` threads
    (unchanged when ``threads`` is ``None``)."""
    env = dict(os.environ if base is None else base)
    if threads is not None:
        env.update({name: str(threads) for name in BLAS_THREAD_VARIABLES})
    return env


@contextlib.contextmanager
def blas_threads_for_children(threads: int = 1, force: bool = False):
    """Set the BLAS thread variables to ``threads`` (unless the user set them, or whatever the user set with
    ``force``) for the child processes started inside the block; restore them after."""
    saved = {name: os.environ.get(name) for name in BLAS_THREAD_VARIABLES}
    for name in BLAS_THREAD_VARIABLES:
        if force:
            os.environ[name] = str(threads)
        else:
            os.environ.setdefault(name, str(threads))
    try:
        yield
    finally:
        _restore_environment(saved)
