"""``derive formulas``: every derived result, with its SymPy form, LaTeX and assumptions."""
import sys

from derive.files import check_output_target, write_file

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


def render(doc):
    lines = []
    for f in doc:
        equation = f["sympy"] if f["lhs"] is None else f"{f['lhs']} = {f['sympy']}"
        lines += [f"[{f['claim']}] {f['name']}", f"    {equation}"]
    from derive.cli.reading import reading

    return "\n".join(lines + [reading(
        "[claim] name, then the formula: exact, in SymPy's syntax (harmonic(k) = H_k); --json adds its LaTeX, its "
        "assumptions and where it is derived; --latex writes the formula sheet")])
