"""``derive formulas``: every derived result, with its SymPy form, LaTeX and assumptions."""
from pathlib import Path

from derive.errors import ParameterError

__all__ = ["NAME", "HELP", "add_arguments", "run", "render"]

NAME = "formulas"
HELP = "list every derived result (name, SymPy form, LaTeX, assumptions); --latex writes the formula sheet"


def add_arguments(p):
    p.add_argument("--latex", action="store_true", help="also write the standalone LaTeX formula sheet")
    p.add_argument("--output", default="notes/formulas.tex", help="where --latex writes (default notes/formulas.tex)")


def run(args):
    # here, not at the top: the command line builds every command's parser before running one
    from derive.formulas import all_formulas
    from derive.latex import formula_sheet

    formulas = all_formulas()
    if args.latex:
        try:
            Path(args.output).parent.mkdir(parents=True, exist_ok=True)
            Path(args.output).write_text(formula_sheet(formulas))
        except OSError as exc:
            raise ParameterError("output", f"cannot write {args.output!r}: {exc.strerror or exc}") from None
    return [f.as_dict() for f in formulas]


def render(doc):
    return "\n".join(f"{f['name']}: {f['sympy']}" for f in doc)
