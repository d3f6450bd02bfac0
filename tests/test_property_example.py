"""The property test of docs/formulas.md (a user's own, with the installed strategies), run as a user would: from its
own folder, against the installed package."""
import re
import sys
from pathlib import Path

import processes

PAGE = Path(__file__).resolve().parents[1] / "docs" / "formulas.md"


def test_the_documented_property_test_passes_against_the_installed_package(tmp_path):
    text = PAGE.read_text()
    block = re.search(r"<!-- user-property-test -->\n```python\n(.*?)```", text, re.S)
    assert block, "docs/formulas.md lost its user property test"
    (tmp_path / "test_mine.py").write_text(block.group(1))
    # run from tmp_path with no rootdir config: the clone's tests/ and conftest are not on the path
    done = processes.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--hypothesis-seed=0",
                          "test_mine.py"], cwd=tmp_path, capture_output=True, text=True, cpu=600)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    assert "2 passed" in done.stdout
