"""``verify claims``: the ledger of every claim of the paper, checked now (in one process per core)."""
import datetime
import os
import sys
import time
from pathlib import Path

from derive.files import check_output_folder, check_output_target, write_file
from verify.commands.options import add_max_memory
from verify.progress import progress

__all__ = ["NAME", "HELP", "VERDICTS", "Ledger", "add_arguments", "run", "render", "exit_status"]

NAME = "claims"
HELP = "check every claim of the paper and give each a verdict with its evidence"


VERDICTS = ("confirmed: the claim holds as stated, within its targets; corrected: it holds once corrected (the "
            "derived statement says how); refuted: it does not hold; inconclusive: this run cannot resolve it (a "
            "quick run is the full run's verdict or inconclusive) or a check raised")
"""What each verdict means, printed under the table."""


class Ledger(list):
    """The records of ``verify claims`` (its JSON document, a list), with the files the run wrote: ``report`` (the
    Markdown report), ``evidence`` (its JSON beside it) and ``figures`` (the PNG files), each ``None`` or empty when
    not asked for. The text form names them under the table."""

    def __init__(self, records, report=None, evidence=None, figures=()):
        super().__init__(records)
        self.report, self.evidence, self.figures = report, evidence, list(figures)


def add_arguments(p):
    p.add_argument("--quick", action="store_true",
                   help="half the trials of the full run, at the same sizes (about 140 CPU-seconds on 2 cores, 300 the "
                        "first time; the full run 430 the first time; wall times: docs/ledger.md)")
    p.add_argument("--notes", default="claims.md",
                   help="where to write the readable ledger (default claims.md in the working folder; '' for nowhere); "
                        "its evidence goes beside it, in claims.json")
    p.add_argument("--figures", default="figures",
                   help="folder for the figures (default figures/ in the working folder; '' for none)")
    p.add_argument("--workers", default=None,
                   help="processes that run the checks (default: one per core, at most one per check); the records do not "
                        "depend on it")
    add_max_memory(p)


def run(args):
    from verify.ledger.records import check_workers

    from verify.montecarlo.memory import set_max_memory

    workers = None if args.workers is None else check_workers(args.workers)  # None: one per core
    set_max_memory(args.max_memory, workers or os.cpu_count() or 1)
    # the outputs are checked before the run, not after it
    if args.notes:
        check_output_target(args.notes, "notes")
        check_output_target(_evidence_path(args.notes), "notes")
    if args.figures:
        check_output_folder(args.figures, "figures")
    # the ledger's modules are imported here, not at the top: the command line builds every parser first
    from verify.ledger.claims import CLAIMS, FULL, QUICK
    from verify.ledger.figures import draw_figures
    from verify.ledger.records import run_ledger
    from verify.ledger.report import claims_json, claims_markdown, jsonable

    cfg = dict(QUICK if args.quick else FULL)
    cfg["figures"] = args.figures
    start = time.time()
    with progress("claims") as report:
        def starting(i, n, claim):
            report.describe(f"claims ({claim.id})")
            report(i - 1, n)
        results = run_ledger(CLAIMS, cfg, log=starting, workers=workers)
    records = [jsonable(r.record) for r in results.values()]
    paths = []
    if args.figures:
        with progress("figures") as report:
            paths = draw_figures(cfg, results, report=report)
        for path in paths:
            print(f"wrote {path}", file=sys.stderr)
    if args.notes:
        from derive.report.provenance import provenance
        from verify.ledger.figures import FIGURES

        notes, evidence = Path(args.notes), _evidence_path(args.notes)
        drawn = {Path(p).name for p in paths}
        figures = [(claims, Path(os.path.relpath(Path(args.figures) / name, notes.parent)).as_posix(), caption)
                   for name, claims, caption in FIGURES if name in drawn]
        header = {"quick": args.quick, "seconds": time.time() - start, "date": datetime.date.today().isoformat(),
                  "provenance": provenance(), "evidence": evidence.name, "figures": figures}
        write_file(evidence, claims_json(records, header), "notes")
        print(f"wrote {evidence}", file=sys.stderr)
        write_file(notes, claims_markdown(records, header), "notes")
        print(f"wrote {notes}", file=sys.stderr)
        return Ledger(records, str(notes), str(evidence), paths)
    return Ledger(records, figures=paths)


def _evidence_path(notes) -> Path:
    """The JSON file of the evidence beside the report: ``claims.md`` -> ``claims.json``."""
    return Path(notes).with_suffix(".json")


def render(records):
    """The verdict table, what the verdicts mean, and where the report, its evidence and the figures went.

    >>> print(render(Ledger([{"id": "C1", "verdict": "confirmed", "claim": "a claim"}], "claims.md", "claims.json",
    ...                     ["figures/a.png", "figures/b.png"])))  # doctest: +ELLIPSIS
    id  verdict    claim
    ...
    C1  confirmed  a claim
    <BLANKLINE>
    verdicts: confirmed: the claim holds as stated, ...
    report: claims.md (each claim, its verdict and the reason, the derived statement, the figures)
    evidence: claims.json (every number behind the verdicts, and what produced them)
    figures: figures/a.png, figures/b.png
    """
    from verify.ledger.report import verdict_table

    lines = [verdict_table(records), "", f"verdicts: {VERDICTS}"]
    report, evidence, figures = (getattr(records, name, None) for name in ("report", "evidence", "figures"))
    if report:
        lines += [f"report: {report} (each claim, its verdict and the reason, the derived statement, the figures)",
                  f"evidence: {evidence} (every number behind the verdicts, and what produced them)"]
    else:
        lines.append("report: none written (--notes '')")
    lines.append(f"figures: {', '.join(figures)}" if figures else "figures: none drawn (--figures '')")
    return "\n".join(lines)


def exit_status(records) -> int:
    """1 when a check errored (its claim is inconclusive for that reason), else 0."""
    from verify.ledger.records import errored

    return 1 if errored(records) else 0
