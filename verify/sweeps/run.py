"""Running a sweep: the tasks of one cell on a worker (:func:`run_group`; one task, :func:`run_task`), and
the tasks a results file still lacks on an executor (:func:`run_sweep`, :mod:`verify.sweeps.executors`)."""
from __future__ import annotations

import math
import os
import socket
import sys
import threading
import time

import numpy as np

from derive.errors import ParameterError
from verify.sweeps.results import ResultsWriter, code_version, read_results
from verify.sweeps.spec import CLASSIFICATION_STREAM, SPECTRAL_OUTPUTS, SPECTRUM_STREAM, Job, Sweep, task_seed
from verify.threads import limit_blas_threads

__all__ = ["table_buffer", "run_group", "run_task", "run_sweep"]


_TABLE = threading.local()
"""The table each thread of this worker keeps between its cells (:func:`table_buffer`): per thread, since a Dask
worker runs cells in several threads of one process at once."""


def table_buffer(d: int, V: int) -> np.ndarray:
    """A ``d x V`` float64 array for a cell's table, the same one for every cell of this shape that this thread
    runs: a fresh table of ``10^4 x 2 10^4`` spent about as long in page faults as in drawing its numbers
    (notes/benchmarks.md). A table of another shape replaces it (the old one released first)."""
    table = getattr(_TABLE, "table", None)
    if table is None or table.shape != (d, V):
        _TABLE.table = None
        _TABLE.table = table = np.empty((d, V))
    return table


def _spectra(job: Job) -> dict:
    """``{mu2: (path, top eigenvalues, overlaps)}`` on the cell's whole ``mu2`` axis, from one draw."""
    from derive import Model
    from verify.montecarlo.draw import draw
    from verify.montecarlo.memory import check_trial
    from verify.montecarlo.trials import choose_axis_path, memory_model, solve_axis

    model = Model(d=job.d, V=job.V, N=job.N, T=job.T, signs=job.signs, mu2=0)
    path = choose_axis_path(job.path, job.d, job.V, job.N, len(job.mu2_axis))
    check_trial(model.d, model.V, model.N, model.T, model.signs, solver=memory_model(path, axis=True))
    data = draw(model, task_seed(job.root_seed, job.draw_key, SPECTRUM_STREAM), table_buffer(model.d, model.V),
                weights=list(job.weights))
    axis = solve_axis(data, job.mu2_axis, job.k, job.centered, path)
    return {mu2: (axis.path, axis.values[i], axis.overlaps[i]) for i, mu2 in enumerate(job.mu2_axis)}


def _accuracies(jobs) -> dict:
    r"""``{mu2: (accuracy, n_test)}`` for the jobs of one cell: ridge classification (:mod:`verify.studies.classification`,
    :math:`\lambda = \kappa`) of the first position's sign, trained on ``N`` sequences and tested on ``N//2`` fresh
    ones of the same table (the cell's own draw, stream 1). The pooled vectors at signal strength
    :math:`\mu_2` differ from those of the noise table in their first coordinate only, by
    :math:`\sqrt{\mu_2}\,A^T s`. It holds the ``d x 3N/2`` pooled matrix in memory."""
    from derive import Model
    from verify.montecarlo.draw import draw, pooled
    from verify.montecarlo.memory import check_trial
    from verify.studies.classification import accuracy, ridge_fit

    job = jobs[0]
    n_test = max(1, job.N // 2)
    model = Model(d=job.d, V=job.V, N=job.N + n_test, T=job.T, signs=job.signs, mu2=0)
    check_trial(model.d, model.V, model.N, model.T, model.signs)
    data = draw(model, task_seed(job.root_seed, job.draw_key, CLASSIFICATION_STREAM), weights=list(job.weights))
    C0, signal = pooled(data.E, data.A), data.A.T @ data.s
    y = data.xi[:, 0].astype(np.float64)
    out = {}
    for job in jobs:
        C = C0.copy()
        C[0] += math.sqrt(job.mu2) * signal
        beta = ridge_fit(C[:, :job.N], y[:job.N], job.ridge)
        out[job.mu2] = accuracy(beta, C[:, job.N:], y[job.N:]), n_test
    return out


def run_group(jobs: tuple) -> list[dict]:
    """:func:`_run_group` with one BLAS thread, set here in the worker's own process, so that a record is the
    same on every executor and for every worker count whatever the environment says
    (:func:`verify.threads.limit_blas_threads`)."""
    with limit_blas_threads(1):
        return _run_group(jobs)


def _run_group(jobs: tuple) -> list[dict]:
    r"""Run the tasks of one cell (jobs that differ only in ``mu2``, :meth:`verify.sweeps.spec.Sweep.cells`):
    one outcome per job, each the requested outputs (``result``), this worker's ``code_version`` and
    ``timing`` (its share of the group's wall and CPU seconds, and the group's size).

    The cell's draw is solved once on the sweep's whole ``mu2`` axis (:func:`verify.montecarlo.trials.solve_axis`),
    so a task's numbers do not depend on which other tasks of its cell run with it.

    * ``top_eigenvalues``, ``overlaps``: the top-``k`` eigenvalues of :math:`S` (or :math:`S_c`) and the
      squared overlaps :math:`|\hat u_i^T u|^2` of their eigenvectors;
    * ``bulk_edge``: the largest eigenvalue below the ``outliers`` ones the theory predicts (an estimate
      of the bulk's right edge, stored with ``outliers_predicted``);
    * ``accuracy``: ridge classification (:func:`_accuracies`).
    """
    start, cpu = time.perf_counter(), time.process_time()
    first = jobs[0]
    spectra = _spectra(first) if any(o in SPECTRAL_OUTPUTS for o in first.outputs) else {}
    accuracies = _accuracies(jobs) if "accuracy" in first.outputs else {}
    results = []
    for job in jobs:
        result = {}
        if spectra:
            path, tops, overlaps = spectra[job.mu2]
            result["path"] = path
            if "top_eigenvalues" in job.outputs:
                result["top_eigenvalues"] = tops.tolist()
            if "overlaps" in job.outputs:
                result["overlaps"] = overlaps.tolist()
            if "bulk_edge" in job.outputs:
                result["bulk_edge"] = float(tops[job.outliers])
                result["outliers_predicted"] = job.outliers
        if accuracies:
            result["accuracy"], result["n_test"] = accuracies[job.mu2]
        results.append(result)
    share, cpu_share = (time.perf_counter() - start) / len(jobs), (time.process_time() - cpu) / len(jobs)
    worker = f"{socket.gethostname()}:{os.getpid()}"
    return [{"result": result, "code_version": code_version(),
             "timing": {"seconds": share, "cpu_seconds": cpu_share, "group_tasks": len(jobs), "worker": worker}}
            for result in results]


def run_task(job: Job) -> dict:
    """Run one task: :func:`run_group` of that task alone (the same record as in its group)."""
    return run_group((job,))[0]


def run_sweep(sweep: Sweep, path, executor, *, max_tasks: int | None = None, log=None,
              resume: str | None = None) -> dict:
    """Run the tasks of ``sweep`` not yet in the results file ``path`` on ``executor``
    (:mod:`verify.sweeps.executors`), cell by cell; with ``max_tasks``, the first cells whose missing tasks reach
    it (:meth:`Sweep.cells`: a batch stops at a cell boundary). A partly done cell (an interrupted run) is solved
    once for its missing tasks, which get the records an uninterrupted run writes; no record is changed. Returns
    what was done; progress goes to ``log`` (default: standard error). A run stopped by a signal or by a failure that is not the input's says on ``log``, once the file is
    closed, how many tasks the file keeps and how to go on (``resume``: the command that does); a refused input
    (:class:`ParameterError`) keeps its one line."""
    start = time.perf_counter()
    log = sys.stderr if log is None else log  # the stream of the moment (a caller may have replaced it), not of import
    try:
        return _run_sweep(sweep, path, executor, max_tasks, log, start)
    except ParameterError:
        raise
    except BaseException:
        _say_what_is_kept(sweep, path, log, resume)
        raise


def _say_what_is_kept(sweep: Sweep, path, log, resume: str | None) -> None:
    """The line of a stopped run: the tasks its results file keeps (read back from the file, which is what a rerun
    reads), how many are left, and the command that resumes. Nothing when the file holds no header of this sweep."""
    try:
        scan = read_results(path)
    except (OSError, ValueError):
        return
    if scan.header.get("sweep_hash") != sweep.hash:
        return
    kept, total = len(scan.records), sweep.task_count()
    print(f"verify sweep: stopped; {path} keeps {kept}/{total} tasks ({total - kept} left); "
          f"{resume or 'the same command'} resumes, skipping the finished ones", file=log, flush=True)


def _run_sweep(sweep: Sweep, path, executor, max_tasks, log, start) -> dict:
    with ResultsWriter(path, sweep) as out:
        if out.repaired:
            print(f"verify sweep: {path}: dropped a torn last record ({out.repaired} bytes); its task is redone",
                  file=log)
        if out.done and out.header.get("code_version") != code_version():
            print(f"verify sweep: {path}: started by {out.header.get('code_version')}, continued by "
                  f"{code_version()} (each record names its own)", file=log)
        # the records are tasks of this sweep (ResultsWriter checked them): what is left is counted, not listed, and
        # the cells of a batch are found one by one (a sweep of 10^6 tasks had listed them all for --max-tasks 1)
        total, done = sweep.task_count(), len(out.done)
        cells, todo = [], 0
        for cell in sweep.cells(out.done):
            if max_tasks is not None and todo >= max_tasks:
                break
            cells.append(cell)
            todo += len(cell)
        # a cell's jobs are built when the executor takes it: a job of a sweep with bulk_edge holds the count of
        # outliers its point's theory predicts, and building every cell's first had kept the first task waiting 12 s
        groups = (tuple(sweep.job(task) for task in cell) for cell in cells)
        by_key = {task.key: task for cell in cells for task in cell}
        computed, first, last_report = 0, None, start
        for group, outcomes in executor.map_unordered(run_group, groups):
            out.append(*(sweep.record(by_key[job.key], outcome) for job, outcome in zip(group, outcomes)))
            computed += len(group)
            now = time.perf_counter()
            first = now - start if first is None else first
            if now - last_report >= 10 or computed == todo:
                print(f"verify sweep: {done + computed}/{total} tasks, {now - start:.0f} s", file=log, flush=True)
                last_report = now
    seconds = time.perf_counter() - start
    return {"results": str(path), "sweep_hash": sweep.hash, "tasks": total, "done_before": done,
            "computed": computed, "cells": len(cells), "remaining": total - done - computed, "repaired_bytes": out.repaired,
            "executor": executor.name, "workers": executor.workers, "seconds": seconds,
            "first_result_seconds": first}
