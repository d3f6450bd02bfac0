"""derive.cache.keep_fresh: a kernel's numba cache follows every file its compiled code comes from."""
from __future__ import annotations

import os
import re
import sys
from pathlib import Path

import pytest

import processes
from derive.vocabulary.limit import KERNEL_FILES

ROOT = Path(__file__).resolve().parents[1]

HELPER = "from numba import njit\n\n\n@njit(cache=True, inline='always')\ndef step(x):\n    return x + {}\n"

KERNEL = """from numba import njit

from derive.cache import keep_fresh
from pkg.helper import step


@njit(cache=True)
def twice(x):
    return 2 * step(x)


{}
"""


def _twice_of_one(folder: Path) -> str:
    env = {k: v for k, v in os.environ.items() if k != "NUMBA_CACHE_DIR"}  # the cache next to the code, as installed
    env["PYTHONPATH"] = os.pathsep.join([str(folder), str(ROOT)])
    done = processes.run([sys.executable, "-c", "from pkg.kernel import twice; print(twice(1))"], cwd=folder,
                         env=env, capture_output=True, text=True, cpu=120)
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout.strip()


@pytest.mark.parametrize("fresh", [False, True], ids=["numba alone", "keep_fresh"])
def test_a_cached_kernel_runs_the_new_code_of_the_file_it_inlines(tmp_path, fresh):
    """A kernel inlines a function of another file; that file changes. numba alone serves the old machine code
    (numba/numba#8396): if this numba no longer does, the control fails and ``keep_fresh`` may go."""
    package = tmp_path / "pkg"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "helper.py").write_text(HELPER.format(1))
    (package / "kernel.py").write_text(KERNEL.format('keep_fresh(globals(), "kernel.py", "helper.py")' if fresh else ""))
    assert _twice_of_one(tmp_path) == "4"
    (package / "helper.py").write_text(HELPER.format(2))
    assert _twice_of_one(tmp_path) == ("6" if fresh else "4")


def test_every_file_of_the_limit_package_that_uses_numba_keys_its_kernels_to_the_others():
    folder = ROOT / "derive" / "vocabulary" / "limit"
    using = {p.name for p in folder.glob("*.py") if re.search(r"^(import|from) numba\b", p.read_text(), re.MULTILINE)}
    assert using == set(KERNEL_FILES)
    for name in using:
        assert "\nkeep_fresh(globals(), *KERNEL_FILES)" in (folder / name).read_text(), name
