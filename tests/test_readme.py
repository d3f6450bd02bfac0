"""README is a front page that fits a screen: what the tool is, the two set-up commands, the main job and three first
commands, each with real output (run here as a user runs them), and links to the pages that hold the rest. README,
the documentation's pages and the notes name only what exists, and the help texts carry no reStructuredText markup."""
import contextlib
import io
import re
import sys
from pathlib import Path

import pytest

import processes

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
BIN = Path(sys.executable).parent


def _blocks(text: str) -> list[str]:
    return re.findall(r"```\n(.*?)```", text, flags=re.S)


def test_the_front_page_fits_a_screen_and_links_the_rest():
    text = README.read_text()
    assert len(text.splitlines()) <= 90
    sections = re.findall(r"(?m)^## (.*)$", text)
    assert sections == ["Set-up (fresh machine)", "The main job: every claim of the paper, checked", "First commands",
                        "Read on"]
    # the two set-up commands (CI runs them as written), and the main job
    setup = _blocks(text[text.index("## Set-up"):])[0].splitlines()
    assert setup == ["python3 -m venv .venv && .venv/bin/pip install -e '.[test]'", ".venv/bin/python -m pytest -q"]
    assert "$ .venv/bin/verify claims --quick" in text and "report: claims.md" in text
    assert "pip install -e '.[notebook]'" in text
    for page in ("notation", "ledger", "commands", "formulas", "python", "sweeps", "limits", "development"):
        assert f"](docs/{page}.md)" in text, page


def _links(path: Path):
    for target in re.findall(r"\]\(([^)#\s]+)(?:#[^)]*)?\)", path.read_text()):
        if not re.match(r"[a-z]+:", target):
            yield target


def test_every_link_of_readme_and_the_pages_leads_to_a_file_of_the_repository():
    for path in [README, *sorted((ROOT / "docs").glob("*.md"))]:
        for target in _links(path):
            assert (path.parent / target).resolve().exists(), f"{path.name} links {target}, which does not exist"


def _shown(block: str) -> tuple[list[str], list[str]]:
    """A command of README (``$ .venv/bin/...``) and the lines it shows, ``...`` marking lines left out."""
    command, *lines = block.splitlines()
    return command.removeprefix("$ .venv/bin/").split(" ", 1), lines


def _rounded(line: str) -> str:
    # Monte Carlo is seeded, but its last digits depend on the BLAS: compared to the digits a reader would use
    return re.sub(r"\d+\.\d+(?:e-?\d+)?", lambda m: f"{float(m.group()):.6g}", line)


def _in_order(shown: list[str], printed: list[str]) -> bool:
    printed = [_rounded(line) for line in printed]
    at = 0
    for line in shown:
        if line == "...":
            continue
        try:
            at = printed.index(_rounded(line), at) + 1
        except ValueError:
            return False
    return True


@pytest.mark.parametrize("which", ["derive spike", "verify mc", "verify formula"])
def test_a_first_command_prints_what_the_front_page_shows(which, tmp_path):
    import shlex

    blocks = [b for b in _blocks(README.read_text()[README.read_text().index("## First commands"):])
              if b.startswith(f"$ .venv/bin/{which} ")]
    assert len(blocks) == 1, which
    (program, arguments), shown = _shown(blocks[0])
    # hung only by its work (tests/processes.py): each needs a few CPU-seconds, however busy the machine
    done = processes.run([str(BIN / program), *shlex.split(arguments)], capture_output=True, text=True, cwd=tmp_path, cpu=600)
    assert done.returncode in (0, 1), done.stderr[-2000:]
    printed = done.stdout.splitlines()
    assert _in_order(shown, printed), f"README shows for {which}:\n" + "\n".join(shown)
    assert "how to read it:" in printed or "  derived, yours: to --digits" in done.stdout


def test_the_main_job_shows_what_the_ledger_prints():
    from verify.commands.claims import Ledger, render

    block = next(b for b in _blocks(README.read_text()) if b.startswith("$ .venv/bin/verify claims --quick"))
    _, shown = _shown(block)
    records = [{"id": line[:2], "verdict": line[4:16].strip(), "claim": "x"} for line in shown if re.match(r"C\d  ", line)]
    text = render(Ledger(records, "claims.md", "claims.json", ["figures/spectra.png"])).splitlines()
    # the lines after the table are the command's own, word for word
    for line in shown[shown.index("") + 1:]:
        assert line in text, line


def _resolves(name: str) -> bool:
    import importlib

    parts = name.split(".")
    for i in range(len(parts), 0, -1):
        try:
            obj = importlib.import_module(".".join(parts[:i]))
        except ImportError:
            continue
        try:
            for part in parts[i:]:
                obj = getattr(obj, part)
        except AttributeError:
            return False
        return True
    return False


def test_every_name_readme_the_pages_and_the_notes_give_exists():
    pages = sorted((ROOT / "notes").glob("*.md")) + sorted((ROOT / "docs").glob("*.md"))
    for path in [README, *pages]:
        for name in set(re.findall(r"\b((?:derive|verify)\.[A-Za-z_][A-Za-z0-9_.]*[A-Za-z0-9_])", path.read_text())):
            if not name.endswith((".py", ".md", ".toml")):
                assert _resolves(name), f"{path.name} names {name}, which does not exist"


def _helps():
    from derive.cli import COMMANDS as DERIVE
    from derive.cli import main as derive_main
    from verify.cli import COMMANDS as VERIFY
    from verify.cli import main as verify_main

    for main, commands in ((derive_main, DERIVE), (verify_main, VERIFY)):
        for argv in [[]] + [[module.rsplit(".", 1)[1].replace("_", "-")] for module in commands]:
            out = io.StringIO()
            with contextlib.redirect_stdout(out), contextlib.suppress(SystemExit):
                main([*argv, "--help"])
            yield argv, out.getvalue()


def test_help_texts_carry_no_markup_and_agree_with_readme():
    seen = 0
    for argv, text in _helps():
        assert text.startswith("usage:"), argv
        assert not re.search(r"``|:(func|mod|class|math|data|meth|attr):`", text), (argv, text)
        seen += 1
        if argv == ["claims"]:
            # the measured CPU-seconds (docs/ledger.md's table): the quick run warm and first, the full run first
            flat = " ".join(text.split())
            times = re.search(r"about (\d+) CPU-seconds on 2 cores, (\d+) the first time; the full run (\d+) the first "
                              r"time; wall times: docs/ledger.md", flat)
            assert times, flat
    assert seen == 12  # derive and its 4 commands, verify and its 6
    quick, first, full = times.groups()
    readme = " ".join(README.read_text().split())
    assert (f"It needs about {quick} CPU-seconds on 2 cores, {first} the first time (the full run, `verify claims`, "
            f"{full} the first time,") in readme
    # ... rounded from the table of docs/ledger.md, which has the measurements
    ledger = (ROOT / "docs" / "ledger.md").read_text()
    for stated, row in ((quick, "`verify claims --quick`, derivation cache filled by an earlier run"),
                        (first, "`verify claims --quick`, first run (empty derivation cache)"),
                        (full, "`verify claims` (full), first run")):
        measured = re.search(rf"^\| {re.escape(row)} \| (\d+) \|", ledger, flags=re.M)
        assert measured and abs(int(stated) - int(measured.group(1))) <= 0.05 * int(measured.group(1)), row
