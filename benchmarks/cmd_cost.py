"""``python -m benchmarks cost``: batches of whole cells, the paper's cell against its floor, ``verify mc`` against the
naive script; each part into its section of notes/benchmarks.md."""
from benchmarks import cost
from benchmarks.core import NOTES
from derive.files import check_output_target

__all__ = ["NAME", "HELP", "add_arguments", "run", "render"]

NAME = "cost"
HELP = ("time the sweep in batches of --max-tasks, a paper cell against its floor (and the grid's projection), and "
        "verify mc against the naive script, and the sweep's client at the paper's scale; write each part's section of notes/benchmarks.md")


def add_arguments(p):
    size = p.add_mutually_exclusive_group()
    size.add_argument("--quick", action="store_true", help="one gamma for the cell, five rounds of verify mc")
    size.add_argument("--tiny", action="store_true", help="tiny sizes, to check that the harness runs (numbers meaningless)")
    p.add_argument("--parts", default=",".join(cost.PARTS), help=f"comma-separated parts (default {','.join(cost.PARTS)})")
    p.add_argument("--out", default=None,
                   help="markdown file whose sections to update ('' for none; default notes/benchmarks.md, none with --tiny)")


def run(args):
    mode = "tiny" if args.tiny else "quick" if args.quick else "full"
    out = args.out if args.out is not None else ("" if args.tiny else str(NOTES))
    if out:
        check_output_target(out, "out")  # before the run, not after it
    return cost.bench(mode, [p.strip() for p in args.parts.split(",") if p.strip()], out)


def render(doc) -> str:
    return doc["markdown"] + (f"\n\nwrote {doc['written']}" if doc["written"] else "")
