"""``verify sweep``: run a parameter sweep that resumes after an interruption, or summarize its results file.

``verify sweep FILE [--results PATH] [--workers N | --scheduler ADDRESS|local-dask] [--max-tasks N]``
``verify sweep --summarize RESULTS [--figures DIR]``

(Its throughput benchmark is ``python -m benchmarks sweeps``, in the checkout.)
"""
import os
from pathlib import Path

from derive.cli.kit import add_max_memory
from derive.errors import ParameterError
from derive.numbers import check_count, format_real

__all__ = ["NAME", "HELP", "add_arguments", "run", "render"]

NAME = "sweep"
HELP = "run a resumable parameter sweep (local processes or Dask), or summarize its results file"


def add_arguments(p):
    p.add_argument("file", nargs="?", help="the sweep file (.toml or .json)")
    p.add_argument("--results", help="results file (JSON lines; default FILE's name with .results.jsonl, here)")
    p.add_argument("--workers", help="local worker processes (default: all cores; 1 runs in this process)")
    p.add_argument("--scheduler", help="a Dask scheduler address, or local-dask for a LocalCluster on this machine "
                                       "(needs: pip install attention-rmt[dask])")
    p.add_argument("--max-tasks", help="stop after the first cells whose new tasks reach this many (a cell: the tasks "
                                       "that differ only in mu2, solved together; the rest on a later run)")
    p.add_argument("--summarize", metavar="RESULTS", help="summarize a results file instead of running a sweep")
    p.add_argument("--figures", help="with --summarize: folder of the figures (default: the results file's folder)")
    add_max_memory(p)


def _count(value, name):
    return None if value is None else check_count(value, name, low=1)


def _only(args, mode, allowed):
    given = {"file": args.file, "results": args.results, "workers": args.workers, "scheduler": args.scheduler,
             "max-tasks": args.max_tasks, "figures": args.figures, "max-memory": args.max_memory}
    for name, value in given.items():
        if value is not None and name not in allowed:
            raise ParameterError(name, f"does not go with {mode}")


def run(args):
    if args.summarize:
        from verify.sweeps.report import summarize

        _only(args, "--summarize", {"figures"})
        return summarize(args.summarize, args.figures or str(Path(args.summarize).resolve().parent))
    from verify.sweeps import executors
    from verify.sweeps.spec import load_sweep
    from verify.sweeps.run import run_sweep

    _only(args, "a sweep run", {"file", "results", "workers", "scheduler", "max-tasks", "max-memory"})
    if args.file is None:
        raise ParameterError("file", "name a sweep file (or use --summarize RESULTS)")
    if args.workers is not None and args.scheduler is not None and args.scheduler != "local-dask":
        raise ParameterError("workers", "an existing Dask cluster has its own workers; --workers is for local runs")
    from derive.resources import set_max_memory

    set_max_memory(args.max_memory, 1 if args.scheduler not in (None, "local-dask") else
                   _count(args.workers, "workers") or os.cpu_count() or 1)
    sweep = load_sweep(args.file)
    results = args.results or Path(args.file).with_suffix(".results.jsonl").name
    # the command that resumes a stopped run: this one, without --max-tasks (which stops by itself)
    resume = " ".join(["verify sweep", args.file, "--results", str(results)]
                      + [f"--{name} {value}" for name, value in (("workers", args.workers), ("scheduler", args.scheduler),
                                                                   ("max-memory", args.max_memory)) if value is not None])
    with executors.executor(args.scheduler, _count(args.workers, "workers")) as ex:
        doc = run_sweep(sweep, results, ex, max_tasks=_count(args.max_tasks, "max-tasks"), resume=resume)
    doc["seconds"] = format_real(doc["seconds"], 4)
    if doc["first_result_seconds"] is not None:
        doc["first_result_seconds"] = format_real(doc["first_result_seconds"], 4)
    return doc


def render(doc) -> str:
    if "points" in doc:
        lines = [f"{doc['results']}: {doc['tasks']['done']}/{doc['tasks']['total']} tasks, sweep {doc['sweep_hash'][:12]}"]
        for p in doc["points"]:
            mc = ", ".join(f"{q} {s['mean']}" for q, s in p["monte_carlo"].items())
            point = ", ".join(f"{k} = {v}" for k, v in p["point"].items())
            lines.append(f"  {point} ({p['seeds']} seeds): {mc}; theory overlap {p['theory']['overlap']}")
        lines += [f"  figure: {f}" for f in doc["figures"]]
        from derive.cli.reading import reading

        return "\n".join(lines + [reading(
            "each point: the mean over its seeds (10 digits, far finer than their error; --json gives each mean's "
            "Student-t 95% interval), and the derived overlap of the sample-level outlier (0: none predicted)",
            "overlap: the largest of the top k squared overlaps |u_hat^T u|^2; bulk_edge: the largest eigenvalue that "
            "is not a predicted outlier")])
    return (f"{doc['results']}: {doc['done_before'] + doc['computed']}/{doc['tasks']} tasks done "
            f"({doc['done_before']} before, {doc['computed']} now in {doc['cells']} cell{'' if doc['cells'] == 1 else 's'} "
            f"on {doc['executor']} x{doc['workers']}, "
            f"{doc['remaining']} left) in {doc['seconds']} s")
