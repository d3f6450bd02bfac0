"""The one place that knows how BLAS threads are set: the environment variables a child process reads.

Monte Carlo records must not depend on the number of BLAS threads (a sum split over threads rounds
differently), and one thread per process is also the fastest way to fill the cores with tasks.
"""
from __future__ import annotations

import contextlib
import os

__all__ = ["BLAS_THREAD_VARIABLES", "thread_environment", "blas_threads_for_children"]

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
