"""Running a sweep: one task on a worker (:func:`run_task`), and the tasks a results file still lacks
on an executor (:func:`run_sweep`, :mod:`verify.sweeps.executors`)."""
from __future__ import annotations

import os
import socket
import sys
import time

import numpy as np

from verify.sweeps.results import ResultsWriter, code_version
from verify.threads import limit_blas_threads
from verify.sweeps.spec import CLASSIFICATION_STREAM, SPECTRAL_OUTPUTS, SPECTRUM_STREAM, Job, Sweep, task_seed

__all__ = ["run_task", "run_sweep"]


def run_task(job: Job) -> dict:
    r"""Run one task with one BLAS thread (set here, in the worker's own process, so that a record is the
    same on every executor and for every worker count whatever the environment says:
    :func:`verify.threads.limit_blas_threads`): the requested outputs (``result``), this worker's ``code_version`` and ``timing``.

    * ``top_eigenvalues``, ``overlaps``: the top-``k`` eigenvalues of :math:`S` (or :math:`S_c`) and the
      squared overlaps :math:`|\hat u_i^T u|^2` of their eigenvectors (:func:`verify.simulate.run_trial`);
    * ``bulk_edge``: the largest eigenvalue below the ``outliers`` ones the theory predicts (an estimate
      of the bulk's right edge, stored with ``outliers_predicted``);
    * ``accuracy``: ridge classification (:mod:`verify.studies.classification`, :math:`\lambda = \kappa`) of the first
      position's sign from the pooled vectors, trained on ``N`` sequences and tested on ``N//2`` fresh
      ones of the same table (its own draw, stream 1). It holds the ``d x 3N/2`` pooled matrix in memory.
    """
    with limit_blas_threads(1):
        return _run_task(job)


def _run_task(job: Job) -> dict:
    from verify.montecarlo.draw import check_model, draw, pooled
    from verify.montecarlo.trials import run_trial

    start = time.perf_counter()
    result = {}
    if any(o in SPECTRAL_OUTPUTS for o in job.outputs):
        trial = run_trial(job.d, job.V, job.N, job.T, job.signs, list(job.weights), job.mu2, centered=job.centered,
                          k=job.k, path=job.path, seed=task_seed(job.root_seed, job.key, SPECTRUM_STREAM))
        result["path"] = trial.path
        if "top_eigenvalues" in job.outputs:
            result["top_eigenvalues"] = trial.top_eigenvalues.tolist()
        if "overlaps" in job.outputs:
            result["overlaps"] = trial.overlaps.tolist()
        if "bulk_edge" in job.outputs:
            result["bulk_edge"] = float(trial.top_eigenvalues[job.outliers])
            result["outliers_predicted"] = job.outliers
    if "accuracy" in job.outputs:
        from verify.studies.classification import accuracy, ridge_fit

        n_test = max(1, job.N // 2)
        model = check_model(job.d, job.V, job.N + n_test, job.T, job.signs, list(job.weights), job.mu2)
        data = draw(model, task_seed(job.root_seed, job.key, CLASSIFICATION_STREAM))
        C = pooled(data.E, data.A)
        y = data.xi[:, 0].astype(np.float64)
        beta = ridge_fit(C[:, :job.N], y[:job.N], job.ridge)
        result["accuracy"] = accuracy(beta, C[:, job.N:], y[job.N:])
        result["n_test"] = n_test
    return {"result": result, "code_version": code_version(),
            "timing": {"seconds": time.perf_counter() - start, "worker": f"{socket.gethostname()}:{os.getpid()}"}}


def run_sweep(sweep: Sweep, path, executor, *, max_tasks: int | None = None, log=sys.stderr) -> dict:
    """Run the tasks of ``sweep`` not yet in the results file ``path`` on ``executor``
    (:mod:`verify.sweeps.executors`), at most ``max_tasks`` of them; returns what was done."""
    start = time.perf_counter()
    with ResultsWriter(path, sweep) as out:
        if out.repaired:
            print(f"verify sweep: {path}: dropped a torn last record ({out.repaired} bytes); its task is redone",
                  file=log)
        if out.done and out.header.get("code_version") != code_version():
            print(f"verify sweep: {path}: started by {out.header.get('code_version')}, continued by "
                  f"{code_version()} (each record names its own)", file=log)
        tasks = sweep.tasks()
        pending = [t for t in tasks if t.key not in out.done]
        todo = pending if max_tasks is None else pending[:max_tasks]
        by_key = {t.key: t for t in todo}
        computed, first, last_report = 0, None, start
        for job, outcome in executor.map_unordered(run_task, (sweep.job(t) for t in todo)):
            out.append(sweep.record(by_key[job.key], outcome))
            computed += 1
            now = time.perf_counter()
            first = now - start if first is None else first
            if now - last_report >= 10 or computed == len(todo):
                print(f"verify sweep: {len(tasks) - len(pending) + computed}/{len(tasks)} tasks, "
                      f"{now - start:.0f} s", file=log, flush=True)
                last_report = now
    seconds = time.perf_counter() - start
    return {"results": str(path), "sweep_hash": sweep.hash, "tasks": len(tasks), "done_before": len(tasks) - len(pending),
            "computed": computed, "remaining": len(pending) - computed, "repaired_bytes": out.repaired,
            "executor": executor.name, "workers": executor.workers, "seconds": seconds,
            "first_result_seconds": first}
