"""README's notebook example runs as written against the package, and prints what README says it prints."""
import contextlib
import io
import re
from pathlib import Path

README = Path(__file__).resolve().parents[1] / "README.md"


def _section(title: str) -> str:
    text = README.read_text()
    start = text.index(f"## {title}")
    end = text.find("\n## ", start + 1)
    return text[start:end if end > 0 else None]


def test_notebook_example_prints_what_readme_shows():
    section = _section("From Python (a notebook)")
    code, shown = re.findall(r"```(?:python)?\n(.*?)```", section, flags=re.S)[:2]
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(compile(code, "README.md", "exec"), {})
    printed, expected = out.getvalue().splitlines(), shown.splitlines()
    # the theory lines are exact (mpmath at 20 digits; the cavity estimate seeds itself from its input); the Monte
    # Carlo line is seeded but its last digits depend on the BLAS, so it is compared to the precision a reader would use
    assert printed[:-1] == expected[:-1]
    assert [round(float(x), 6) for x in printed[-1].split()] == [round(float(x), 6) for x in expected[-1].split()]
