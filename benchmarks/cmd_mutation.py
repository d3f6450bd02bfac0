"""``python -m benchmarks mutation``: the mutants of the core formulas against the test suite and the quick ledger."""
from derive.files import write_file

from benchmarks import mutation

__all__ = ["NAME", "HELP", "add_arguments", "run", "render", "exit_status"]

NAME = "mutation"
HELP = "apply each semantic mutant of benchmarks/mutation.py, run the default suite and the quick ledger; write notes/mutation.md"


def add_arguments(p):
    p.add_argument("--out", default="notes/mutation.md", help="the markdown file to write ('' for none)")
    p.add_argument("--only", default="", help="comma-separated names of the mutants to run (default: all)")


def run(args):
    chosen = [m for m in mutation.MUTANTS if not args.only or m.name in args.only.split(",")]
    result = mutation.run(chosen, log=lambda line: print(line, flush=True))
    result["markdown"] = mutation.markdown(result)
    if args.out:
        write_file(args.out, result["markdown"], "out")
    return result


def render(doc) -> str:
    return doc["markdown"]


def exit_status(doc) -> int:
    """1 when a mutant survived or a touched confirmed claim kept its verdict."""
    return 0 if all(r["killed"] and r["ledger_noticed"] for r in doc["rows"]) else 1
