"""``derive formulas``: every derived result, with its SymPy form, LaTeX and assumptions."""
import sys

from derive.files import check_output_target, write_file
from derive.report.text import formulas_text as render

__all__ = ["NAME", "HELP", "add_arguments", "run", "render"]

NAME = "formulas"
HELP = "list every derived result (name, SymPy form, LaTeX, assumptions); --latex writes the formula sheet"


def add_arguments(p):
    p.add_argument("--latex", action="store_true", help="also write the standalone LaTeX formula sheet")
    p.add_argument("--out", "--output", dest="out", default="formulas.tex",
                   help="where --latex writes the sheet (default formulas.tex in the working folder)")


def run(args):
    # here, not at the top: the command line builds every command's parser before running one
    from derive.sheet.formulas import all_formulas
    from derive.sheet.latex import formula_sheet, record

    if args.latex:
        check_output_target(args.out, "out")  # before the sheet is made, not after
    formulas = all_formulas()
    if args.latex:
        write_file(args.out, formula_sheet(formulas), "out")
        print(f"wrote {args.out}: the formula sheet (a complete LaTeX document)", file=sys.stderr)
    return [record(f) for f in formulas]
