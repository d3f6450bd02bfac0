"""The thread policy: set in-process (threadpoolctl), it reaches the libraries loaded before and after,
and a sweep's records do not depend on the thread variables of the environment."""
import json
import os
import sys

import pytest
from threadpoolctl import threadpool_limits

import processes
from derive.errors import ParameterError
from verify.sweeps import executors
from verify.sweeps.results import read_results, result_lines
from verify.sweeps.run import run_sweep
from verify.sweeps.spec import Sweep
from verify.threads import BLAS_THREAD_VARIABLES, limit_blas_threads

from test_sweep import QUIET

PROBE = """
import json
from threadpoolctl import threadpool_info
from verify.threads import limit_blas_threads
with limit_blas_threads(1):
    import scipy.linalg  # SciPy's own BLAS, loaded inside the block
    inside = [pool["num_threads"] for pool in threadpool_info()]
after = {pool["filepath"].rsplit("/", 1)[-1]: pool["num_threads"] for pool in threadpool_info()}
print(json.dumps({"inside": inside, "after": after}))
"""


def test_the_limit_reaches_libraries_loaded_before_and_inside_the_block():
    env = {**os.environ, **{name: "2" for name in BLAS_THREAD_VARIABLES}}
    out = json.loads(processes.run([sys.executable, "-c", PROBE], env=env, capture_output=True, text=True,
                                   check=True, cpu=120).stdout)
    assert len(out["inside"]) >= 2 and set(out["inside"]) == {1}
    # NumPy's BLAS, loaded before the block, gets its 2 threads back
    assert [n for name, n in out["after"].items() if "64_" in name] == [2]


@pytest.mark.parametrize("n", [0, -1, 1.0, True, "1"])
def test_a_bad_thread_count_is_refused(n):
    with pytest.raises(ParameterError, match="threads"):
        limit_blas_threads(n)


def test_records_do_not_depend_on_the_thread_environment(tmp_path, monkeypatch):
    # the dense path's Gram matrix and eigh split their sums over BLAS threads: with 2 threads the
    # last bits of the records differ from 1 thread at this size (d = 300, N = 1200; without the policy
    # this test fails)
    sweep = Sweep({"sweep": {"root_seed": 7, "seeds": 2, "outputs": ["top_eigenvalues", "overlaps"], "k": 2,
                             "path": "dense"},
                   "model": {"d": 300, "delta": "1/2", "T": 4, "signs": "prefix:2", "centered": True,
                             "weights": "mean", "mu2": 3, "gamma": "1/4"}})
    with threadpool_limits(limits=1), executors.InProcess() as ex:
        run_sweep(sweep, tmp_path / "one.jsonl", ex, log=QUIET)
    for name in BLAS_THREAD_VARIABLES:
        monkeypatch.setenv(name, "2")
    with executors.LocalProcesses(2) as ex:
        run_sweep(sweep, tmp_path / "two.jsonl", ex, log=QUIET)
    assert (result_lines(read_results(tmp_path / "one.jsonl").records)
            == result_lines(read_results(tmp_path / "two.jsonl").records))
