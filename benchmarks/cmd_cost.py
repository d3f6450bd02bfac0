"""``python -m benchmarks cost``: batches of whole cells, the paper's cell against its floor, ``verify mc`` against the
naive script; each part into its section of notes/benchmarks.md."""
from benchmarks import cost
from benchmarks.core import NOTES
from benchmarks.options import add_size, notes_out, size

__all__ = ["NAME", "HELP", "add_arguments", "run", "render"]

NAME = "cost"
HELP = ("time the sweep in batches of --max-tasks, a paper cell against its floor (and the grid's projection), and "
        "verify mc against the naive script, and the sweep's client at the paper's scale; write each part's section of notes/benchmarks.md")


def add_arguments(p):
    add_size(p, quick="one gamma for the cell, five rounds of verify mc")
    p.add_argument("--parts", default=",".join(cost.PARTS), help=f"comma-separated parts (default {','.join(cost.PARTS)})")
    p.add_argument("--out", default=None,
                   help="markdown file whose sections to update ('' for none; default notes/benchmarks.md, none with --tiny)")


def run(args):
    out = notes_out(args, NOTES)
    return cost.bench(size(args), [p.strip() for p in args.parts.split(",") if p.strip()], out)


def render(doc) -> str:
    return doc["markdown"] + (f"\n\nwrote {doc['written']}" if doc["written"] else "")
