"""The documentation site builds as README says, every warning an error: README as its front page, the pages of docs/,
the notes, the API reference from the docstrings and the example notebook with its outputs. The pages show what the
code makes: the generated notation, every quantity of verify formula, and the Python example's real output."""
import contextlib
import io
import re
import resource
import sys
import time
import tomllib
from pathlib import Path

import pytest

import processes

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    """The site built from a fresh environment (``-E``) into a temporary folder, with the CPU and wall seconds it
    took (printed, never judged: the build is called hung by its work, tests/processes.py)."""
    out = tmp_path_factory.mktemp("site")
    start, before = time.perf_counter(), resource.getrusage(resource.RUSAGE_CHILDREN)
    done = processes.run([sys.executable, "-m", "sphinx", "-W", "--keep-going", "-E", "-q", "-b", "html", "-d",
                          str(out / "doctrees"), str(DOCS), str(out / "html")],
                         capture_output=True, text=True, cwd=ROOT, cpu=900)
    assert done.returncode == 0, done.stderr[-4000:]
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime
    print(f"\ndocumentation site built in {cpu:.1f} CPU-seconds, {time.perf_counter() - start:.1f} s wall")
    return out / "html"


def test_the_site_builds_without_warnings_with_every_page_of_readme(site):
    front = (site / "index.html").read_text()
    assert "First commands" in front and "verify claims --quick" in front
    for page in ("notation", "ledger", "commands", "formulas", "python", "sweeps", "limits", "development", "api"):
        assert (site / f"{page}.html").exists(), page
        assert f'href="{page}.html' in front or page == "api", page
    for note in (ROOT / "notes").glob("*.md"):
        assert note.name == "api.md" or (site / "notes" / f"{note.stem}.html").exists(), note.name


def test_the_api_reference_documents_every_public_name_from_its_docstring(site):
    import derive
    import verify

    page = (site / "api.html").read_text()
    for package in (derive, verify):
        for name in package.__all__:
            if name != "__version__":
                assert f'id="{package.__name__}.{name}"' in page, f"{package.__name__}.{name}"
    # the docstrings' mathematics is typeset, not shown as reStructuredText
    assert ":math:" not in page and r"\boxtimes" in page


def test_the_notebook_is_shown_with_its_outputs(site):
    page = (site / "notes" / "example.html").read_text()
    assert page.count("<img") >= 2  # the bulk density and the outlier curve
    assert "equal for the strict mask; differs for the inclusive mask (the default)" in page


def test_readme_the_development_page_and_pyproject_give_one_command_for_the_site():
    # pyproject.toml's docs extra had named another command (-c docs .) than README's
    command = ".venv/bin/python -m sphinx -W docs docs/_build/html"
    for path in (ROOT / "README.md", DOCS / "development.md", ROOT / "pyproject.toml"):
        text = path.read_text()
        assert command in text, f"{path.name} does not give README's command for the site"
        assert not re.search(r"-m sphinx (?!-W docs docs/_build/html)", text), f"{path.name} gives another command"


def test_what_the_suite_needs_for_the_site_and_the_notebook_is_in_the_test_extra_and_jupyter_in_its_own():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["optional-dependencies"]
    names = lambda extra: {re.match(r"[\w-]+", r).group() for r in project[extra]}  # noqa: E731
    assert {"sphinx", "myst-nb", "nbconvert", "ipykernel"} <= names("test")
    assert {"jupyterlab", "ipykernel"} <= names("notebook")
    pinned = (ROOT / ".ci" / "constraints.txt").read_text().lower()
    for name in ("sphinx", "myst-nb", "nbconvert", "ipykernel"):
        assert f"\n{name}==" in pinned, f"{name} is not pinned in .ci/constraints.txt"


def _between(path: Path, marker: str) -> str:
    text = path.read_text()
    start = text.index(f"<!-- {marker}")
    start = text.index("-->", start) + len("-->\n")
    return text[start:text.index(f"<!-- /{marker} -->")]


def test_the_notation_page_shows_the_generated_notation():
    from derive.sheet.notation import notation_markdown

    assert _between(DOCS / "notation.md", "notation") == notation_markdown()


def test_the_formulas_page_lists_every_quantity_with_its_meaning():
    from derive.sheet.meanings import QUANTITY_MEANINGS

    assert _between(DOCS / "formulas.md", "quantities") == "".join(f"- `{k}`: {v}\n" for k, v in QUANTITY_MEANINGS.items())


def test_the_own_sign_family_example_prints_what_its_page_shows():
    text = (DOCS / "python.md").read_text()
    section = text[text.index("## Your own sign family"):text.index("## Jupyter")]
    code, shown = re.findall(r"```(?:python)?\n(.*?)```", section, flags=re.S)[:2]
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(compile(code, "docs/python.md", "exec"), {})
    # exact rationals and a repr: the same text
    assert out.getvalue().splitlines() == shown.splitlines()


def test_the_python_example_prints_what_its_page_shows():
    text = (DOCS / "python.md").read_text()
    code, shown = re.findall(r"```(?:python)?\n(.*?)```", text, flags=re.S)[:2]
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(compile(code, "docs/python.md", "exec"), {})
    printed, expected = out.getvalue().splitlines(), shown.splitlines()
    # the theory lines are exact (mpmath at 20 digits; the cavity estimate seeds itself from its input); the Monte
    # Carlo line is seeded but its last digits depend on the BLAS, so it is compared to the precision a reader would use
    assert printed[:-1] == expected[:-1]
    assert [round(float(x), 6) for x in printed[-1].split()] == [round(float(x), 6) for x in expected[-1].split()]
