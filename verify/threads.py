"""The one place that knows how BLAS threads are set: the environment variables a child process reads.

Monte Carlo records must not depend on the number of BLAS threads (a sum split over threads rounds
differently), and one thread per process is also the fastest way to fill the cores with tasks.
"""
from __future__ import annotations

import contextlib
import os

__all__ = ["BLAS_THREAD_VARIABLES", "thread_environment", "blas_threads_for_children", "limit_blas_threads"]

BLAS_THREAD_VARIABLES = ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS")


def thread_environment(threads: int | None, base: dict | None = None) -> dict:
    """A copy of ``base`` (default ``os.environ``) in which every BLAS library runs ``threads`` threads
    (unchanged when ``threads`` is ``None``)."""
    env = dict(os.environ if base is None else base)
    if threads is not None:
        env.update({name: str(threads) for name in BLAS_THREAD_VARIABLES})
    return env


@contextlib.contextmanager
def blas_threads_for_children(threads: int = 1):
    """Set the BLAS thread variables to ``threads`` (unless the user set them) for the child processes
    started inside the block; restore them after."""
    saved = {name: os.environ.get(name) for name in BLAS_THREAD_VARIABLES}
    for name in BLAS_THREAD_VARIABLES:
        os.environ.setdefault(name, str(threads))
    try:
        yield
    finally:
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value


def limit_blas_threads(threads: int = 1) -> bool:
    """Limit the BLAS libraries already loaded in this process to ``threads`` threads (threadpoolctl), unless the
    user set one of :data:`BLAS_THREAD_VARIABLES`; return whether a limit was set.

    The command lines call it first: on a shared 2-core machine the default (one BLAS thread per core, inside
    processes that already fill the cores) made the ledger three times slower.
    """
    if any(os.environ.get(name) for name in BLAS_THREAD_VARIABLES):
        return False
    import numpy  # noqa: F401  (loads the BLAS whose pool is limited)
    from threadpoolctl import threadpool_limits
    threadpool_limits(limits=threads, user_api="blas")
    return True
