"""``python -m benchmarks sweeps``: throughput and per-task cost of sweeps, and the paper-scale projection."""
from benchmarks import sweeps
from derive.files import check_output_target

__all__ = ["NAME", "HELP", "add_arguments", "run", "render"]

NAME = "sweeps"
HELP = "measure sweep throughput and per-task cost; update notes/sweeps.md"


def add_arguments(p):
    size = p.add_mutually_exclusive_group()
    size.add_argument("--quick", action="store_true", help="a shorter ladder of d")
    size.add_argument("--tiny", action="store_true", help="tiny sizes (for the tests); writes only to --out")
    p.add_argument("--out", help="the markdown file to update (default notes/sweeps.md; none with --tiny)")


def run(args):
    mode = "tiny" if args.tiny else "quick" if args.quick else "full"
    if args.out is not None:
        check_output_target(args.out, "out")  # before the run, not after it
    return sweeps.bench(mode, args.out)


def render(doc) -> str:
    return doc["markdown"]
