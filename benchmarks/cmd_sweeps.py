"""``python -m benchmarks sweeps``: throughput and per-task cost of sweeps, and the paper-scale projection."""
from benchmarks import sweeps
from benchmarks.options import add_size, size
from derive.files import check_output_target

__all__ = ["NAME", "HELP", "add_arguments", "run", "render"]

NAME = "sweeps"
HELP = "measure sweep throughput and per-task cost; update notes/sweeps.md"


def add_arguments(p):
    add_size(p, quick="a shorter ladder of d", tiny="tiny sizes (for the tests); writes only to --out")
    p.add_argument("--out", help="the markdown file to update (default notes/sweeps.md; none with --tiny)")


def run(args):
    if args.out is not None:
        check_output_target(args.out, "out")  # before the run, not after it
    return sweeps.bench(size(args), args.out)


def render(doc) -> str:
    return doc["markdown"]
