"""``verify claims``: the ledger of every claim of the paper, checked now (in one process per core)."""
import datetime
import os
import sys
import time
from pathlib import Path

from derive.files import check_output_folder, check_output_target
from derive.cli.kit import add_max_memory
from verify.progress import progress

__all__ = ["NAME", "HELP", "add_arguments", "run", "render", "exit_status"]

NAME = "claims"
HELP = "check every claim of the paper and give each a verdict with its evidence"


def add_arguments(p):
    p.add_argument("--quick", action="store_true", help="small dimensions and few seeds (about 3 minutes)")
    p.add_argument("--notes", default="claims.md",
                   help="where to write the readable ledger (default claims.md in the working folder; '' for nowhere)")
    p.add_argument("--figures", default="figures",
                   help="folder for the figures (default figures/ in the working folder; '' for none)")
    p.add_argument("--workers", default=None,
                   help="processes that run the checks (default: one per core, at most one per check); the records do not "
                        "depend on it")
    add_max_memory(p)


def run(args):
    from verify.ledger.records import check_workers

    from derive.resources import set_max_memory

    workers = None if args.workers is None else check_workers(args.workers)  # None: one per core
    set_max_memory(args.max_memory, workers or os.cpu_count() or 1)
    # the outputs are checked before the run, not after it
    if args.notes:
        check_output_target(args.notes, "notes")
    if args.figures:
        check_output_folder(args.figures, "figures")
    # the ledger's modules are imported here, not at the top: the command line builds every parser first
    from verify.ledger.claims import CLAIMS, FULL, QUICK, draw_figures
    from verify.ledger.records import run_ledger
    from verify.ledger.report import claims_markdown, jsonable

    cfg = dict(QUICK if args.quick else FULL)
    cfg["figures"] = args.figures
    start = time.time()
    with progress("claims") as report:
        def starting(i, n, claim):
            report.describe(f"claims ({claim.id})")
            report(i - 1, n)
        results = run_ledger(CLAIMS, cfg, log=starting, workers=workers)
    records = [jsonable(r.record) for r in results.values()]
    if args.figures:
        with progress("figures") as report:
            paths = draw_figures(cfg, results, report=report)
        for path in paths:
            print(f"wrote {path}", file=sys.stderr)
    if args.notes:
        header = {"quick": args.quick, "seconds": time.time() - start,
                  "date": datetime.date.today().isoformat()}
        Path(args.notes).parent.mkdir(parents=True, exist_ok=True)
        Path(args.notes).write_text(claims_markdown(records, header))
    return records


def render(records):
    from verify.ledger.report import verdict_table

    return verdict_table(records)


def exit_status(records) -> int:
    """1 when a check errored (its claim is inconclusive for that reason), else 0."""
    from verify.ledger.records import errored

    return 1 if errored(records) else 0
