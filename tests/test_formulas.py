"""The formula registry and the LaTeX sheet made from it."""
import sympy as sp

from derive.cli import main
from derive.formulas import all_formulas
from derive.latex import formula_sheet


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


def test_every_formula_round_trips_through_its_sympy_string():
    formulas = all_formulas()
    assert len(formulas) >= 20
    for f in formulas:
        parsed = sp.sympify(f.as_dict()["sympy"], locals=_names(f.expr))
        target = _plain(f.expr)
        if str(parsed) == str(f.expr):  # bound variables (Sum indices) keep their assumptions: compare prints
            continue
        if isinstance(target, sp.Equality):
            assert sp.simplify(parsed.lhs - target.lhs) == 0 and sp.simplify(parsed.rhs - target.rhs) == 0
        else:
            assert sp.simplify(parsed - target) == 0, f.name


def test_sheet_holds_the_latex_of_the_evaluated_objects_and_is_reproducible(tmp_path):
    out = tmp_path / "formulas.tex"
    assert main(["formulas", "--latex", "--output", str(out), "--json"]) == 0
    text = out.read_text()
    assert text == formula_sheet()
    assert text.startswith(r"\documentclass") and text.rstrip().endswith(r"\end{document}")
    for f in all_formulas():
        assert sp.latex(f.expr) in text
        assert f.source.split(":")[0] in text.replace(r"\_", "_")
