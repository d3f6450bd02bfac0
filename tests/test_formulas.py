"""The formula registry and the LaTeX sheet made from it: complete equations, LaTeX that parses back to the
evaluated expression, no duplicates, one section per claim, and a sheet that compiles without overfull boxes."""
import os
import re
import shutil

import pytest
import sympy as sp

import processes
from derive.cli import main
from derive.sheet.formulas import CLAIMS, all_formulas
from derive.symbols import Formula
from derive.sheet.latex import as_products, display, equation_latex, formula_sheet, parse_back, record, unbroken


def _names(expr) -> dict:
    """Assumption-free symbols (and indexed bases) for every name in ``expr``."""
    names = {s.name: sp.Symbol(s.name) for s in expr.free_symbols if isinstance(s, sp.Symbol)}
    names.update({str(b): sp.IndexedBase(str(b)) for b in expr.atoms(sp.IndexedBase)})
    return names


def _plain(expr):
    """The expression with every symbol replaced by an assumption-free one of the same name."""
    names = _names(expr)
    replace = {s: names[s.name] for s in expr.free_symbols if isinstance(s, sp.Symbol)}
    replace.update({b: names[str(b)] for b in expr.atoms(sp.IndexedBase)})
    return expr.xreplace(replace)


def _same(a, b) -> bool:
    return a == b or sp.simplify(a - b) == 0 or sp.simplify((a - b).doit()) == 0


def test_every_formula_round_trips_through_its_sympy_string():
    formulas = all_formulas()
    assert len(formulas) >= 20
    for f in formulas:
        parsed = sp.sympify(record(f)["sympy"], locals=_names(f.expr))
        target = _plain(f.expr)
        if str(parsed) == str(f.expr):  # bound variables (Sum indices) keep their assumptions: compare prints
            continue
        if isinstance(target, sp.Equality):
            assert sp.simplify(parsed.lhs - target.lhs) == 0 and sp.simplify(parsed.rhs - target.rhs) == 0
        else:
            assert sp.simplify(parsed - target) == 0, f.name


@pytest.mark.parametrize("f", all_formulas(), ids=lambda f: f.name)
def test_the_latex_on_the_sheet_parses_back_to_the_evaluated_equation(f):
    shown = unbroken(display(f))
    parsed = parse_back(shown, f)
    target = as_products(f.equation)
    assert _same(parsed.lhs, target.lhs), (f.name, parsed.lhs, target.lhs)
    assert _same(parsed.rhs, target.rhs), (f.name, parsed.rhs, target.rhs)


def test_a_misprint_is_caught_by_the_parse_back():
    f = next(f for f in all_formulas() if f.name == "population outlier")
    wrong = equation_latex(f).replace(r"\delta \kappa - \theta}", r"\delta \kappa + \theta}")
    assert wrong != equation_latex(f)
    assert not _same(parse_back(wrong, f).rhs, f.equation.rhs)


def test_every_entry_is_a_complete_equation_in_a_claims_section_and_none_repeats():
    formulas = all_formulas()
    seen, names = set(), set()
    for f in formulas:
        assert isinstance(f.equation, sp.Equality) and f.claim in CLAIMS, f.name
        key = sp.srepr(_plain(as_products(f.equation)))
        assert key not in seen, f"duplicate entry: {f.name}"
        assert f.name not in names, f"duplicate name: {f.name}"
        seen.add(key)
        names.add(f.name)


def _text_outside_math(text: str) -> str:
    return re.sub(r"\$[^$]*\$", "", text)


def test_no_ascii_mathematics_is_set_as_text():
    for f in all_formulas():
        for text in (f.name, f.assumptions):
            outside = _text_outside_math(text)
            for ascii_math in (r"->", r"<=", r">=", r"!=", r"\|\|", r"\^", r"_", r"\boo\b", r"sqrt", r"\\"):
                assert not re.search(ascii_math, outside), (f.name, text)
    assert r"\operatorname{harmonic}" not in formula_sheet()


def test_a_sheet_entry_without_a_left_hand_side_is_refused():
    with pytest.raises(ValueError, match="left-hand side"):
        Formula("bare", sp.Symbol("x"), "", "x").equation


def test_latex_is_written_where_asked_and_nothing_under_notes(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert main(["formulas", "--latex", "--json"]) == 0
    assert (tmp_path / "formulas.tex").read_text() == formula_sheet()
    assert not (tmp_path / "notes").exists()
    assert main(["formulas", "--latex", "--out", "sheets/f.tex", "--json"]) == 0
    assert (tmp_path / "sheets" / "f.tex").is_file()


def test_the_sheet_compiles_without_errors_or_overfull_boxes(tmp_path):
    if shutil.which("pdflatex") is None:
        if os.environ.get("CI"):
            pytest.fail("pdflatex missing: .ci/run installs it")
        pytest.skip("pdflatex is not installed (.ci/run installs it)")
    (tmp_path / "formulas.tex").write_text(formula_sheet())
    done = processes.run(["pdflatex", "-interaction=nonstopmode", "-halt-on-error", "formulas.tex"],
                         cwd=tmp_path, capture_output=True, text=True, cpu=300)
    log = (tmp_path / "formulas.log").read_text(errors="replace")
    assert done.returncode == 0, log[-3000:]
    assert "Overfull" not in log, [line for line in log.splitlines() if "Overfull" in line]
    assert (tmp_path / "formulas.pdf").stat().st_size > 0
