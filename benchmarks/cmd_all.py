"""``python -m benchmarks all``: every benchmark in one run, each figure with its baseline, written to notes/benchmarks.md."""
import sys
from pathlib import Path

from derive.errors import ParameterError
from derive.numbers import json_reals
from derive.files import write_file
from benchmarks import core as bench
from benchmarks.cost import carry
from benchmarks.options import add_size, notes_out, size

__all__ = ["NAME", "HELP", "add_arguments", "run", "render"]

NAME = "all"
HELP = "time every benchmark against its baseline and the machine's bandwidth floor; write notes/benchmarks.md"


def add_arguments(p):
    add_size(p, quick="smaller Monte Carlo ladder, no claims run (under two minutes)")
    p.add_argument("--out", default=None,
                   help="markdown file to write ('' for none; default notes/benchmarks.md, none with --tiny)")
    p.add_argument("--threads", default="1", help="BLAS threads of the Monte Carlo processes (default 1; 0 for the library's choice)")


def run(args):
    try:
        threads = int(args.threads)
    except ValueError:
        raise ParameterError("threads", f"must be an integer >= 0, got {args.threads!r}") from None
    if threads < 0:
        raise ParameterError("threads", f"must be an integer >= 0, got {threads}")
    out = notes_out(args, bench.NOTES)
    result = bench.run(size(args), threads or None, log=sys.stderr)
    if out:
        old = Path(out).read_text() if Path(out).exists() else ""
        write_file(out, carry(old, bench.markdown(result)), "out")
    doc = json_reals(result, 4)
    doc["written"] = out or None
    return doc


def render(doc):
    text = bench.summary_table(doc["summary"])
    return text + (f"\n\nwrote {doc['written']}" if doc["written"] else "")
