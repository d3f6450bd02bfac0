"""Worker processes that never outlive their driver (the sweep's local workers, the ledger's checks).

* They are spawned, or forked from a fork server that has no thread, never forked from the driver: a fork of a
  process that runs threads (a Dask client, a BLAS pool) may deadlock.
* They ignore SIGINT: Ctrl-C reaches the terminal's whole process group, and a worker that took it would print a
  ``KeyboardInterrupt`` traceback of its own; the driver decides when they stop.
* They die with the driver even when it is killed by ``kill -9`` (:func:`die_with`).
* When the driver's work ends by an exception or a signal, :func:`process_pool` terminates them at once instead of
  waiting for the tasks they run (a ledger check lasts half a minute), so that the driver can exit promptly and
  nothing it started is left holding its pipes; the resource tracker of :mod:`multiprocessing` then sees its pipe
  close and exits too.
"""
from __future__ import annotations

import concurrent.futures as cf
import contextlib
import ctypes
import multiprocessing
import multiprocessing.forkserver
import os
import signal
import sys
import threading
import time

from verify.threads import blas_threads_for_children

__all__ = ["WATCH_SECONDS", "die_with", "process_pool", "stop_pool"]

WATCH_SECONDS = 0.5
"""How often a worker looks whether its driver is still alive (where no parent-death signal exists)."""


def die_with(driver: int) -> None:
    """Make this process end when the process ``driver`` ends, even by ``kill -9``: the kernel's
    parent-death signal where this process is the driver's child (Linux), and a watch thread that polls
    the driver every :data:`WATCH_SECONDS` everywhere (a Dask worker, or a fork server's, is the driver's
    grandchild). Without it, a killed sweep left its workers running, and holding memory, for minutes."""
    if sys.platform.startswith("linux") and os.getppid() == driver:
        PR_SET_PDEATHSIG = 1
        ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGKILL)

    def alive() -> bool:
        try:
            os.kill(driver, 0)
        except ProcessLookupError:
            return False
        except PermissionError:
            return True
        try:  # a killed driver that its own parent has not reaped yet is a zombie: dead
            with open(f"/proc/{driver}/stat", "rb") as f:
                return f.read().rsplit(b")", 1)[1].split()[0] != b"Z"
        except OSError:
            return True

    def watch():
        while alive():
            time.sleep(WATCH_SECONDS)
        os._exit(1)

    if not alive():  # the driver died before the signal was armed
        os._exit(1)
    threading.Thread(target=watch, name="die-with-driver", daemon=True).start()


def _start_worker(driver: int, environment: dict | None, initializer, initargs) -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    if environment is not None:
        # a forked worker has its fork server's environment, from when the server started: it takes the driver's
        os.environ.clear()
        os.environ.update(environment)
    die_with(driver)
    if initializer is not None:
        initializer(*initargs)


@contextlib.contextmanager
def process_pool(workers: int, initializer=None, initargs=(), preload=()):
    """A :class:`concurrent.futures.ProcessPoolExecutor` of ``workers`` spawned processes (each runs
    ``initializer(*initargs)`` first) that ignore SIGINT and die with this process; an exception or a signal
    that ends the block stops them at once (:func:`stop_pool`), a normal end waits for their tasks.

    With ``preload`` (module names) the workers are forked from :mod:`multiprocessing`'s fork server instead, which
    imports those modules once: a worker then starts in milliseconds, not in the second its imports take (twice that
    CPU on a busy machine). The server is a process of its own with no thread, so forking it is safe; it starts here,
    its imports overlapping the caller's work until the first task, and it serves this process's later pools too
    (with what it preloaded first). Each worker takes the caller's environment of the pool's start, not the server's."""
    if preload and "forkserver" in multiprocessing.get_all_start_methods():
        context, environment = multiprocessing.get_context("forkserver"), dict(os.environ)
        context.set_forkserver_preload(list(preload))
        # the server's BLAS gets one thread whatever the user asked for the workers: a BLAS pool's threads in the
        # server would make forking it unsafe (the workers set their own count, verify.threads.limit_blas_threads)
        with blas_threads_for_children(1, force=True):
            multiprocessing.forkserver.ensure_running()
    else:
        context, environment = multiprocessing.get_context("spawn"), None
    pool = cf.ProcessPoolExecutor(workers, mp_context=context, initializer=_start_worker,
                                  initargs=(os.getpid(), environment, initializer, initargs))
    try:
        yield pool
    except BaseException:
        stop_pool(pool)
        raise
    pool.shutdown(wait=True, cancel_futures=True)


def stop_pool(pool: cf.ProcessPoolExecutor, timeout: float = 10.0) -> None:
    """Terminate the workers of ``pool`` (SIGTERM, then SIGKILL after ``timeout`` seconds) and shut it down,
    without waiting for the tasks they run."""
    # Python 3.14 has pool.terminate_workers(); before it the processes are only reachable here
    processes = list((getattr(pool, "_processes", None) or {}).values())
    for process in processes:
        with contextlib.suppress(OSError, ValueError):
            process.terminate()
    for process in processes:
        process.join(timeout)
        if process.is_alive():
            process.kill()
            process.join()
    pool.shutdown(wait=True, cancel_futures=True)
