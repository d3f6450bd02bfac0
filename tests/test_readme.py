"""README's notebook example runs as written against the package, and prints what README says it prints; README opens
with the model and its notation, lists every quantity of verify formula with its meaning, names only what exists, and
agrees with the help texts, which carry no reStructuredText markup."""
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


def _between(marker: str) -> str:
    text = README.read_text()
    start = text.index(f"<!-- {marker}")
    start = text.index("-->", start) + len("-->\n")
    return text[start:text.index(f"<!-- /{marker} -->")]


def test_readme_opens_with_the_model_and_its_notation():
    from derive.sheet.notation import notation_markdown

    text = README.read_text()
    assert text.index("\n## ") == text.index("\n## Model and notation")
    assert _between("notation") == notation_markdown()


def test_readme_lists_every_quantity_with_its_meaning():
    from derive.sheet.meanings import QUANTITY_MEANINGS

    assert _between("quantities") == "".join(f"- `{k}`: {v}\n" for k, v in QUANTITY_MEANINGS.items())


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


def test_every_name_readme_and_the_notes_give_exists():
    notes = sorted((README.parent / "notes").glob("*.md"))
    for path in [README, *notes]:
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
            # README: "the claims ledger (about a minute on a 2-core machine ...)", "(`verify claims`, about 5 minutes"
            flat = " ".join(text.split())
            assert "about a minute on 2 cores" in flat and "full run about 5 minutes" in flat
    assert seen == 12  # derive and its 4 commands, verify and its 6
    assert "about a minute on a 2-core machine" in README.read_text()
    assert "(`verify claims`, about 5 minutes on 2 cores" in README.read_text()
