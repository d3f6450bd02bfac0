"""The memory model of a Monte Carlo trial is an upper bound of what each solver holds, and it admits the paper's sweep."""
import tracemalloc
from pathlib import Path

import numpy as np
import pytest

from derive.errors import ParameterError
from tests.trial_cases import model as trial_model
from verify.montecarlo.draw import draw
from verify.montecarlo.memory import MAX_TRIAL_BYTES, trial_bytes
from verify.montecarlo.trials import memory_model, solve, solve_axis

SHAPES = [(300, 600, 1200, 8), (400, 400, 200, 4), (600, 200, 2000, 1)]
"""``(d, V, N, T)`` at which every solver runs in well under a second: d below and above N, V below and above d,
long and single-token sequences (the old dense model fell 20% short at the second, 1% at the third)."""


def _peak(f) -> int:
    """The peak of the arrays ``f()`` allocates, measured on its second run (the first loads compiled kernels)."""
    f()
    tracemalloc.start()
    try:
        f()
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("path, dtype", [("dense", np.float64), ("implicit", np.float64), ("mixed", np.float64),
                                         ("implicit", np.float32)])
def test_a_trial_holds_less_than_its_memory_model(path, dtype, shape):
    d, V, N, T = shape
    model = trial_model(d, V, N, T, "iid", "1.5")
    peak = _peak(lambda: solve(draw(model, 0, weights=[1 / T] * T), 3, True, path, dtype=dtype))
    bound = trial_bytes(d, V, N, T, solver=memory_model(path, dtype))
    # the bound holds, and it is not loose by more than a few times (it would then refuse runs that fit)
    assert peak <= bound < 6 * peak, (path, peak, bound)


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("path", ["dense", "mu2-axis"])
def test_an_axis_holds_less_than_its_memory_model(path, shape):
    d, V, N, T = shape
    model = trial_model(d, V, N, T, "iid")
    peak = _peak(lambda: solve_axis(draw(model, 0, weights=[1 / T] * T), np.linspace(0.1, 4, 40), 3, True, path))
    bound = trial_bytes(d, V, N, T, solver=memory_model(path, axis=True))
    assert peak <= bound < 6 * peak, (path, peak, bound)


def test_the_paper_scale_sweep_fits_the_limit_on_its_solver():
    # examples/sweeps/paper.toml (d = 10^4, V = 2d, N up to 2 10^5) on the mu2 axis's block Lanczos: the table and the
    # tokens, 1.7 GiB at most. Counted as a dense trial (pooled vectors, Gram matrix) it would need 18 GiB, and the
    # sweep was refused before it started.
    from verify.sweeps.spec import load_sweep

    sweep = load_sweep(Path(__file__).resolve().parents[1] / "examples" / "sweeps" / "paper.toml")
    assert sweep.settings["path"] == "implicit"
    d, V, N = 10_000, 20_000, 200_000
    assert trial_bytes(d, V, N, 8, solver="lanczos") <= MAX_TRIAL_BYTES < trial_bytes(d, V, N, 8, solver="dense")


def test_the_memory_limit_is_the_users_and_the_refusal_names_the_flag(capsys, monkeypatch):
    from verify.montecarlo import memory
    from verify.cli import main

    monkeypatch.delenv(memory.MEMORY_VARIABLE, raising=False)
    monkeypatch.setattr(memory, "total_memory", lambda: 64 * 2**30)  # the sizes below, on any machine
    # a trial of the solver that will run (mixed: float32 Lanczos), refused above the user's limit, the flag named
    argv = ["mc", "--d", "8000", "--V", "8000", "--N", "8000", "--T", "1", "--signs", "iid", "--weights", "mean",
            "--mu2", "3", "--seeds", "1"]
    need = trial_bytes(8000, 8000, 8000, 1, solver="lanczos-f32")
    assert 2**29 < need < 2**30
    assert main([*argv, "--max-memory", "512MiB"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "needs 0.8 GiB, more than the 0.5 GiB limit per trial (set by --max-memory 512MiB)" in err[0]
    # ... and by default the limit is half of what this process may use, shared by the trials run at once
    monkeypatch.setattr(memory, "available_memory", lambda: 12 * 2**30)
    monkeypatch.delenv(memory.MEMORY_VARIABLE, raising=False)
    assert memory.set_max_memory(None) == 6 * 2**30 and memory.trial_limit()[0] == 6 * 2**30
    assert memory.set_max_memory(None, workers=3) == 2 * 2**30
    assert "shared by 3 workers; --max-memory SIZE changes it" in memory.trial_limit()[1]
    with pytest.raises(ParameterError, match="more than the 2.0 GiB limit per trial"):
        memory.check_trial(8000, 8000, 8000, 1, solver="dense")
    # a size the user exported stays when no flag is given; where nothing can be read, the old 2 GiB
    monkeypatch.setenv(memory.MEMORY_VARIABLE, "5GiB")
    assert memory.set_max_memory(None) == 5 * 2**30
    monkeypatch.delenv(memory.MEMORY_VARIABLE)
    monkeypatch.setattr(memory, "available_memory", lambda: None)
    assert memory.default_trial_limit() == (MAX_TRIAL_BYTES, "the memory available is unknown; --max-memory SIZE "
                                                                 "changes it")
    assert main([*argv, "--max-memory", "a lot"]) == 2
    assert "max-memory: not a memory size" in capsys.readouterr().err


@pytest.mark.parametrize("size, reason", [
    ("1e999999999", "an exponent of 999999999"), ("9" * 5000, "more than 40 digits"), ("1e-99999GiB", "an exponent of"),
    ("1e30", "more than the 64.0 GiB of memory and swap this machine has"), ("65GiB", "more than the 64.0 GiB")])
def test_a_memory_limit_the_machine_cannot_meet_is_refused_at_once(size, reason, monkeypatch):
    # 1e999999999 had been expanded into a billion-digit integer (every command that takes --max-memory hung), and
    # 5000 digits raised Python's limit on integer text as a traceback
    from verify.montecarlo import memory
    from verify.cli import main

    monkeypatch.setattr(memory, "total_memory", lambda: 64 * 2**30)
    with pytest.raises(ParameterError, match=reason) as info:
        memory.parse_size(size)
    assert info.value.parameter == "max-memory"
    monkeypatch.setenv(memory.MEMORY_VARIABLE, size)
    with pytest.raises(ParameterError) as info:
        memory.trial_limit()
    assert info.value.parameter == memory.MEMORY_VARIABLE
    assert main(["mc", "--d", "20", "--V", "40", "--N", "80", "--T", "2", "--signs", "iid", "--weights", "mean",
                 "--mu2", "1", "--seeds", "1", "--max-memory", size]) == 2


def test_the_available_memory_respects_the_address_space_limit():
    import resource
    import subprocess
    import sys

    code = ("import resource; resource.setrlimit(resource.RLIMIT_AS, (3 * 2**30, 3 * 2**30)); "
            "from verify.montecarlo.memory import available_memory; print(available_memory())")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert int(out) <= 3 * 2**30


def test_the_models_limit_is_refused_before_any_work_and_a_kept_one_is_served(monkeypatch, tmp_path):
    """Beyond what a command waits for (``limit_wait``), the model's limit is refused before the populations start; a
    limit ``derive spike`` computed and kept is served to the same command (the refusal's advice holds)."""
    import derive.interface as interface
    import derive.vocabulary.limit.outlier as outlier
    from derive import Model
    from derive.resources import limit_seconds, limit_wait
    from derive.vocabulary.limit.outlier import LimitSpike

    monkeypatch.setenv("ATTENTION_RMT_CACHE_DIR", str(tmp_path))
    calls = []

    def fake(*args, **kwargs):
        calls.append(args)
        return LimitSpike(True, 1.5, 0.25, 0.5, 0.01, 0.02, 0.5, 0.05, 0.0)

    monkeypatch.setattr(outlier, "limit_spike", fake)
    m = Model(delta="10", gamma="1/4", mu2=2, T=4, weights="mean", signs="prefix:2")
    # alpha/kappa = 3/2 for mean weights and prefix:2 at T = 4 (two positions share one sign)
    estimate = limit_seconds(4, 40, 3)
    with limit_wait(estimate / 2, "CPU-s the test waits", reuse="N"):
        with pytest.raises(ParameterError) as refused:
            interface._limit_sample(m)
    assert refused.value.parameter == "N" and f"about {estimate:.0f} CPU-s" in str(refused.value) and not calls
    kept = interface._limit_sample(m)
    assert len(calls) == 1
    with limit_wait(estimate / 2, "CPU-s the test waits", reuse="N"):
        assert interface._limit_sample(m).eigenvalue == kept.eigenvalue == 1.5
    assert len(calls) == 1
