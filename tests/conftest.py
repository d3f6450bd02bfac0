import atexit
import os
import shutil
import subprocess
import sys
import tempfile

import pytest
from hypothesis import HealthCheck, Phase, settings
from hypothesis.internal.conjecture import providers

# Hypothesis (6.131 and later) also draws "local constants" that it parses out of the project's modules already
# in sys.modules (within a time budget), so the examples a test saw depended on which test files had been imported
# before it and on the machine's load: (9/4, 11/5, 1/10) reached tests/test_bulk.py only in some orders. With an
# empty pool, derandomize=True makes a test's examples depend on its own code alone (tests/test_determinism.py).
providers._get_local_constants = lambda *args, **kwargs: providers.Constants()

from verify.threads import BLAS_THREAD_VARIABLES

# One BLAS thread in this process and in the commands it starts, unless the user chose otherwise, set
# before anything loads NumPy: the project's policy (verify/threads.py). With the library's default, on a
# busy 2-core machine BLAS threads spin against each other and the suite took twice the CPU time.
for _name in BLAS_THREAD_VARIABLES:
    os.environ.setdefault(_name, "1")

# the derivation cache (derive.cache) of this test session, and of the commands it starts: a fresh folder,
# so that no result of an earlier run or of the user's own cache can stand in for one derived now
if "ATTENTION_RMT_CACHE_DIR" not in os.environ:
    os.environ["ATTENTION_RMT_CACHE_DIR"] = tempfile.mkdtemp(prefix="attention-rmt-cache-")
    atexit.register(shutil.rmtree, os.environ["ATTENTION_RMT_CACHE_DIR"], True)

# derive spike's default voice (at_dimension: what a user measures at d = 1e3 to 1e6, up to a minute of CPU cold) is
# skipped by the many tests that ask for the limit alone; the tests of the voice ask for it (tests/test_voice.py)
os.environ.setdefault("ATTENTION_RMT_DIMENSIONS", "off")

# numba's kernels, compiled into its cache once while the test workers start and collect, so that no worker (nor a
# command a test starts) compiles them again: on a fresh checkout every worker compiled the same kernels
# (verify/montecarlo/precompile.py; notes/benchmarks.md measures the first run)
_PRECOMPILE: list = []


def pytest_configure(config):
    if hasattr(config, "workerinput") or not getattr(config.option, "numprocesses", None):
        return  # a worker, or no workers: one process compiles each kernel once anyway
    # two processes for two cores: the solvers' kernels take longest to compile, the other two parts about as long
    for parts in (["solvers"], ["cavity", "signfield"]):
        _PRECOMPILE.append(subprocess.Popen([sys.executable, "-m", "verify.montecarlo.precompile", *parts],
                                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE))


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_node_collection_finished(node, ids):
    # the controller hands out no test before this returns: the workers start on a filled cache
    while _PRECOMPILE:
        process = _PRECOMPILE.pop()
        _, err = process.communicate()
        if process.returncode:  # the tests that need the kernels compile them, and fail if they cannot
            reporter = node.config.pluginmanager.get_plugin("terminalreporter")
            reporter.write_line(f"precompiling numba's kernels failed: {err.decode(errors='replace').strip()[-300:]}")


settings.register_profile(
    "ci", derandomize=True, deadline=None, max_examples=60,
    suppress_health_check=[HealthCheck.too_slow],
)
# benchmarks/mutation.py: a failing example is all a mutant needs, so no time is spent shrinking it
settings.register_profile("mutation", settings.get_profile("ci"),
                          phases=[Phase.explicit, Phase.reuse, Phase.generate])
settings.load_profile(os.environ.get("ATTENTION_RMT_HYPOTHESIS_PROFILE", "ci"))


class BadInputs:
    """The distinct bad inputs the fuzz suite tried (each refused with a ParameterError or exit 2),
    and any that escaped (another exception, a wrong exit status, stray output); reported at the end."""

    def __init__(self):
        self.tried: set[str] = set()
        self.escaped: list[str] = []

    def refused(self, key) -> None:
        self.tried.add(repr(key))

    def escape(self, key, what: str) -> None:
        self.escaped.append(f"{key!r}: {what}")


_BAD_INPUTS = BadInputs()


@pytest.fixture(scope="session")
def bad_inputs() -> BadInputs:
    return _BAD_INPUTS


def pytest_terminal_summary(terminalreporter):
    if _BAD_INPUTS.tried or _BAD_INPUTS.escaped:
        terminalreporter.write_line(f"fuzz: {len(_BAD_INPUTS.tried)} distinct bad inputs tried, "
                                    f"{len(_BAD_INPUTS.escaped)} escaped")
        for line in _BAD_INPUTS.escaped[:20]:
            terminalreporter.write_line(f"  escaped: {line}")


@pytest.fixture
def script():
    """A loader of the checkout's ``scripts/NAME.py`` as a module (they are not installed): ``script("apidoc")``."""
    import importlib.util
    from pathlib import Path

    def load(name: str):
        path = Path(__file__).resolve().parents[1] / "scripts" / f"{name}.py"
        spec = importlib.util.spec_from_file_location(f"scripts_{name}", path)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        return module

    return load
