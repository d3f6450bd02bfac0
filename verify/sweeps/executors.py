"""Where a sweep's tasks run: in this process, in local worker processes, or on a Dask cluster.

Each executor is a context manager with ``name``, ``workers`` and
``map_unordered(fn, items)``, which yields ``(item, fn(item))`` pairs as the tasks finish (any order),
keeping at most a few tasks per worker in flight so that a long sweep never queues all its tasks at
once. The records do not depend on the executor: a task's numbers are a function of the task alone
(:func:`verify.sweep.task_seed`), provided every worker's BLAS runs the same number of threads; the
local and ``local-dask`` executors give their workers one thread each (as Dask's nannies do by
default), and one task per core is also the fastest way to fill the cores.
"""
from __future__ import annotations

import concurrent.futures as cf
import contextlib
import itertools
import os

from derive.errors import ParameterError
from verify.threads import blas_threads_for_children
from verify.workers import process_pool

__all__ = ["IN_FLIGHT_PER_WORKER", "DASK_HINT", "WORKER_MODULES", "default_workers", "InProcess", "LocalProcesses",
           "Dask", "executor"]

IN_FLIGHT_PER_WORKER = 2
DASK_HINT = "pip install attention-rmt[dask]"


def default_workers() -> int:
    """All cores this process may use."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:
        return os.cpu_count() or 1


class InProcess:
    """Tasks one after the other in this process (``--workers 1``: no start-up cost)."""

    name, workers = "in-process", 1

    def map_unordered(self, fn, items):
        for item in items:
            yield item, fn(item)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return None


WORKER_MODULES = ("verify.sweeps.run", "verify.montecarlo.trials", "verify.montecarlo.mu2_axis",
                  "verify.montecarlo.kernels", "numba.np.arraymath")
"""What a sweep's task imports (NumPy, SymPy, numba and the solver; ``numba.np.arraymath``, NumPy's support, which
loads SciPy's LAPACK, is what numba imports at a process's first use of a compiled kernel): about 1.5 s, which local
workers get from their fork server once (:func:`verify.workers.process_pool`)."""


class LocalProcesses:
    """``workers`` local processes (default: all cores) of :func:`verify.workers.process_pool`: forked from a fork
    server that imported ``preload`` once (each worker reads the one-thread BLAS settings and the driver's
    environment at its start), dying with the driver, stopped at once by an exception or a signal. The server starts
    when the executor is entered, so that its imports overlap the driver's own work before its first task (reading
    and checking a sweep); a worker is forked at a task, in milliseconds.
    """

    name = "local-processes"

    def __init__(self, workers: int | None = None, preload=WORKER_MODULES):
        self.workers = default_workers() if workers is None else workers
        self.preload = tuple(preload)
        self._stack = contextlib.ExitStack()
        self._pool = None

    def __enter__(self):
        with contextlib.ExitStack() as stack:
            stack.enter_context(blas_threads_for_children(1))
            self._pool = stack.enter_context(process_pool(self.workers, preload=self.preload))
            self._stack = stack.pop_all()
        return self

    def __exit__(self, *exc):
        return self._stack.__exit__(*exc)

    def map_unordered(self, fn, items):
        items = iter(items)
        running = {}

        def submit(n):
            for item in itertools.islice(items, n):
                running[self._pool.submit(fn, item)] = item

        submit(IN_FLIGHT_PER_WORKER * self.workers)
        # no cancel of the futures still running when the consumer stops: the pool's own exit cancels or stops them
        # (a future cancelled here and then failed by a stopped worker made Python 3.11 print a traceback)
        while running:
            done, _ = cf.wait(running, return_when=cf.FIRST_COMPLETED)
            for future in done:
                yield running.pop(future), future.result()
            submit(len(done))


def _distributed():
    try:
        import distributed
    except ImportError:
        raise ParameterError("scheduler", f"Dask is not installed: {DASK_HINT}") from None
    return distributed


class Dask:
    """Tasks on a Dask distributed cluster: the scheduler at ``address``, a ``LocalCluster`` of
    ``workers`` single-threaded worker processes for ``address="local-dask"``, or an existing
    ``client`` (the tests' in-process cluster). The workers must have this project installed."""

    name = "dask"

    def __init__(self, address: str | None = None, workers: int | None = None, client=None):
        self.address, self._workers, self.client = address, workers, client
        self._owned = []

    def __enter__(self):
        distributed = _distributed()
        if self.client is None:
            if self.address == "local-dask":
                cluster = distributed.LocalCluster(n_workers=self._workers or default_workers(), threads_per_worker=1,
                                                   dashboard_address=None)
                self._owned.append(cluster)
                target = cluster
            else:
                target = self.address
            try:
                self.client = distributed.Client(target, timeout="20s")
            except (OSError, TimeoutError, ValueError) as exc:
                self.__exit__(None, None, None)
                raise ParameterError("scheduler", f"cannot connect to {self.address!r}: {exc}") from None
            self._owned.insert(0, self.client)
        self.workers = sum(self.client.nthreads().values()) or 1
        return self

    def __exit__(self, *exc):
        for thing in self._owned:
            thing.close()
        self._owned.clear()

    def map_unordered(self, fn, items):
        distributed = _distributed()
        items = iter(items)
        running, finished = {}, distributed.as_completed()

        def submit(n):
            for item in itertools.islice(items, n):
                future = self.client.submit(fn, item, pure=False)
                running[future.key] = future, item
                finished.add(future)

        submit(IN_FLIGHT_PER_WORKER * self.workers)
        try:
            for future in finished:
                yield running.pop(future.key)[1], future.result()
                submit(1)
        finally:
            if running:
                self.client.cancel([future for future, _ in running.values()])


def executor(scheduler: str | None = None, workers: int | None = None):
    """The executor of the command line: ``scheduler`` a Dask address or ``local-dask``, else local
    processes (``workers``, default all cores; one worker runs in this process)."""
    if workers is not None and workers < 1:
        raise ParameterError("workers", f"must be at least 1, got {workers}")
    if scheduler is not None:
        _distributed()
        return Dask(scheduler, workers)
    if workers == 1 or (workers is None and default_workers() == 1):
        return InProcess()
    return LocalProcesses(workers)
