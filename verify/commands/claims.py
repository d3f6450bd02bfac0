"""``verify claims``: the ledger of every claim of the paper, checked now."""
import datetime
import sys
import time
from pathlib import Path

from verify.ledger.claims import CLAIMS, FULL, QUICK, draw_figures
from verify.ledger.records import errored, run_ledger
from verify.ledger.report import claims_markdown, jsonable, verdict_table

__all__ = ["NAME", "HELP", "add_arguments", "run", "render", "exit_status"]

NAME = "claims"
HELP = "check every claim of the paper and give each a verdict with its evidence"


def add_arguments(p):
    p.add_argument("--quick", action="store_true", help="small dimensions and few seeds (about 3 minutes)")
    p.add_argument("--notes", default="notes/claims.md", help="where to write the readable ledger ('' for nowhere)")
    p.add_argument("--figures", default="notes/figures", help="folder for the figures ('' for none)")


def run(args):
    cfg = dict(QUICK if args.quick else FULL)
    cfg["figures"] = args.figures
    start = time.time()
    results = run_ledger(CLAIMS, cfg, log=lambda i, n, claim: print(f"[{i}/{n}] {claim.id} ...", file=sys.stderr,
                                                                    flush=True))
    records = [jsonable(r.record) for r in results.values()]
    if args.figures:
        print("figures ...", file=sys.stderr, flush=True)
        for path in draw_figures(cfg, results):
            print(f"  wrote {path}", file=sys.stderr)
    if args.notes:
        header = {"quick": args.quick, "seconds": time.time() - start,
                  "date": datetime.date.today().isoformat()}
        Path(args.notes).parent.mkdir(parents=True, exist_ok=True)
        Path(args.notes).write_text(claims_markdown(records, header))
    return records


def render(records):
    return verdict_table(records)


def exit_status(records) -> int:
    """1 when a check errored (its claim is inconclusive for that reason), else 0."""
    return 1 if errored(records) else 0
