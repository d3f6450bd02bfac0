"""``verify sweep``: run a parameter sweep that resumes after an interruption, or summarize its results file.

``verify sweep FILE [--results PATH] [--workers N | --scheduler ADDRESS|local-dask] [--max-tasks N]``
``verify sweep --summarize RESULTS [--figures DIR] [--workers N] [--skip-model-limit | --limit-error E]``

(Its throughput benchmark is ``python -m benchmarks sweeps``, in the checkout.)
"""
import contextlib
import math
import os
from pathlib import Path

from derive.errors import ParameterError
from derive.numbers import check_count, format_real
from verify.commands.options import add_max_memory

__all__ = ["NAME", "HELP", "add_arguments", "run", "render"]

NAME = "sweep"
HELP = "run a resumable parameter sweep (local processes or Dask), or summarize its results file"


def add_arguments(p):
    p.add_argument("file", nargs="?", help="the sweep file (.toml or .json)")
    p.add_argument("--results", help="results file (JSON lines; default FILE's name with .results.jsonl, here)")
    p.add_argument("--workers", help="local worker processes (default: all cores; 1 runs in this process); with "
                                     "--summarize, the processes that compute the model's limit")
    p.add_argument("--scheduler", help="a Dask scheduler address, or local-dask for a LocalCluster on this machine "
                                       "(needs: pip install attention-rmt[dask])")
    p.add_argument("--max-tasks", help="stop after the first cells whose new tasks reach this many (a cell: the tasks "
                                       "that differ only in mu2, solved together; the rest on a later run)")
    p.add_argument("--summarize", metavar="RESULTS", help="summarize a results file instead of running a sweep")
    p.add_argument("--figures", help="with --summarize: folder of the figures (default: the results file's folder)")
    p.add_argument("--skip-model-limit", action="store_true",
                   help="with --summarize: leave out the model's own finite-vocabulary limit (at T = 8 and an error "
                        "of 1e-2 about 0.4 CPU-seconds per grid point not yet in the derivation cache, 5 at 1e-3; "
                        "docs/sweeps.md) and compare with the Gaussian-equivalent law only")
    p.add_argument("--limit-error", help="with --summarize: the error the model's limit is sought to (a real > 0; "
                                         "default: a tenth of each law's median Monte Carlo 95%% half-width, within "
                                         "1e-3 and 1e-2)")
    add_max_memory(p)


def _count(value, name):
    return None if value is None else check_count(value, name, low=1)


def _error(value):
    from derive.numbers import check_range, parse_fraction

    return None if value is None else float(check_range(parse_fraction(value, "limit-error"), "limit-error", low=0,
                                                        low_open=True))


def _only(args, mode, allowed):
    given = {"file": args.file, "results": args.results, "workers": args.workers, "scheduler": args.scheduler,
             "max-tasks": args.max_tasks, "figures": args.figures, "max-memory": args.max_memory,
             "skip-model-limit": args.skip_model_limit or None, "limit-error": args.limit_error}
    for name, value in given.items():
        if value is not None and name not in allowed:
            raise ParameterError(name, f"does not go with {mode}")


def run(args):
    if args.summarize:
        from verify.sweeps.report import summarize

        from verify.progress import progress

        _only(args, "--summarize", {"figures", "workers", "skip-model-limit", "limit-error"})
        workers = _count(args.workers, "workers") or os.cpu_count() or 1
        with progress("verify sweep --summarize: the model's limit", unit="models") as report:
            return summarize(args.summarize, args.figures or str(Path(args.summarize).resolve().parent),
                             model_limit=not args.skip_model_limit, workers=workers, report=report,
                             limit_error=_error(args.limit_error))
    from verify.sweeps import executors

    _only(args, "a sweep run", {"file", "results", "workers", "scheduler", "max-tasks", "max-memory"})
    if args.file is None:
        raise ParameterError("file", "name a sweep file (or use --summarize RESULTS)")
    if args.workers is not None and args.scheduler is not None and args.scheduler != "local-dask":
        raise ParameterError("workers", "an existing Dask cluster has its own workers; --workers is for local runs")
    from verify.montecarlo.memory import set_max_memory

    set_max_memory(args.max_memory, 1 if args.scheduler not in (None, "local-dask") else
                   _count(args.workers, "workers") or os.cpu_count() or 1)
    with contextlib.ExitStack() as stack:
        def start():
            return stack.enter_context(executors.executor(args.scheduler, _count(args.workers, "workers")))

        # local workers start before the sweep's modules are imported and the sweep is read and checked, so that
        # their start-up overlaps that work (the first task had waited for both, one after the other); a Dask
        # scheduler is reached for a valid sweep only
        ex = start() if args.scheduler is None else None
        from verify.sweeps.run import run_sweep
        from verify.sweeps.spec import load_sweep

        sweep = load_sweep(args.file)
        results = args.results or Path(args.file).with_suffix(".results.jsonl").name
        # the command that resumes a stopped run: this one, without --max-tasks (which stops by itself)
        resume = " ".join(["verify sweep", args.file, "--results", str(results)]
                          + [f"--{name} {value}" for name, value in (("workers", args.workers),
                                                                       ("scheduler", args.scheduler),
                                                                       ("max-memory", args.max_memory))
                             if value is not None])
        doc = run_sweep(sweep, results, ex or start(), max_tasks=_count(args.max_tasks, "max-tasks"), resume=resume)
    doc["seconds"] = format_real(doc["seconds"], 4)
    if doc["first_result_seconds"] is not None:
        doc["first_result_seconds"] = format_real(doc["first_result_seconds"], 4)
    return doc


def _places(half: float) -> int:
    """Decimals that show two significant digits of ``half``.

    >>> _places(0.043), _places(2.5), _places(31.0)
    (3, 1, 0)
    """
    return max(0, 1 - math.floor(math.log10(half)))


def _monte_carlo(stats: dict) -> str:
    """A Monte Carlo mean and its interval, to two significant digits of the interval's half-width.

    >>> _monte_carlo({"mean": "0.7123456", "ci95": ["0.669", "0.7556"]}), _monte_carlo({"mean": "0.5", "ci95": [None, None]})
    ('0.712 [0.669, 0.756]', '0.5 (one seed: no interval)')
    """
    mean, (lo, hi) = float(stats["mean"]), stats["ci95"]
    if lo is None or hi is None:
        return f"{mean:.6g} (one seed: no interval)"
    half = (float(hi) - float(lo)) / 2
    if half <= 0:
        return f"{mean:.6g} [{float(lo):.6g}, {float(hi):.6g}]"
    k = _places(half)
    return f"{mean:.{k}f} [{float(lo):.{k}f}, {float(hi):.{k}f}]"


def _theory(entry: dict, q: str) -> str:
    """A law's value of ``q``: six significant digits where exact, else as the summary gives it (to the digits its
    error leaves) with the error beside it; ``*`` where the Monte Carlo interval does not hold it.

    >>> _theory({"overlap": "0.7807", "errors": {"overlap": "8.8e-5"}, "in_ci95": {"overlap": False}}, "overlap")
    '0.7807 ± 8.8e-5*'
    """
    value, error = entry[q], entry["errors"][q]
    if value is None:
        return "-"
    text = f"{value} ± {error}" if error is not None else f"{float(value):.6g}"
    return text + ("*" if entry.get("in_ci95", {}).get(q) is False else "")


def _limit_line(stats: dict) -> str:
    if not stats["computed"]:
        return f"model's limit (finite-vocabulary): not computed, {stats['reason']}"
    plural = lambda n, word: f"{n} {word}{'s' * (n != 1)}"  # noqa: E731
    return (f"model's limit (finite-vocabulary): {plural(stats['points'], 'point')}, "
            f"{plural(stats['models'], 'distinct model')} of {plural(stats['laws'], 'law')}, each computed once (or "
            f"read from the derivation cache) in "
            f"{stats['seconds']} s on {stats['workers']} process{'es' * (stats['workers'] != 1)} "
            f"(slowest {stats['slowest_seconds']} s){_sought(stats.get('errors_sought'))}")


def _sought(errors) -> str:
    if not errors:
        return ""
    return f", sought to an error of {errors[0]}" + (f" to {errors[-1]}" if len(errors) > 1 else "")


def _summary_text(doc) -> str:
    from derive.report.reading import reading

    lines = [f"{doc['results']}: {doc['tasks']['done']}/{doc['tasks']['total']} tasks, sweep {doc['sweep_hash'][:12]}",
             _limit_line(doc["model_limit"])]
    for p in doc["points"]:
        point = ", ".join(f"{k} = {v}" for k, v in p["point"].items())
        dims = ", ".join(f"{k} = {v}" for k, v in p["dims"].items() if k != "T")
        lines.append(f"  {point} ({p['seeds']} seed{'s' * (p['seeds'] > 1)}; {dims})")
        for key, entry in p["theory"].items():
            if entry is not None and "unavailable" in entry:
                lines.append(f"    {entry['law']}: unavailable, {entry['unavailable']}")
        for q, stats in p["monte_carlo"].items():
            laws = [f"{entry['law']} {_theory(entry, q)}" for entry in p["theory"].values()
                    if entry is not None and "unavailable" not in entry and q in entry]
            lines.append(f"    {q:<15} MC {_monte_carlo(stats)}" + "".join(f"; {text}" for text in laws))
    lines += [f"  figure: {f}" for f in doc["figures"]]
    return "\n".join(lines + [reading(
        "MC: the mean over the seeds and its Student-t 95% interval, to two digits of its half-width (an overlap's "
        "interval kept within [0, 1]; --json gives 10 digits)",
        *(f"{key.replace('_', '-')}: {text}" for key, text in doc["laws"].items()),
        "a law's value: six digits where exact, else to the digits its stated error leaves (± error); *: outside the MC "
        "interval widened by that error (the limit d -> oo is compared with a finite d); -: the law gives no value "
        "(the top eigenvalue where another outlier may be the top one; the model's own bulk has no right edge)",
        "overlap: the largest of the top k squared overlaps |u_hat^T u|^2; bulk_edge: the largest eigenvalue that "
        "is not a predicted outlier")])


def render(doc) -> str:
    if "points" in doc:
        return _summary_text(doc)
    return (f"{doc['results']}: {doc['done_before'] + doc['computed']}/{doc['tasks']} tasks done "
            f"({doc['done_before']} before, {doc['computed']} now in {doc['cells']} cell{'' if doc['cells'] == 1 else 's'} "
            f"on {doc['executor']} x{doc['workers']}, "
            f"{doc['remaining']} left) in {doc['seconds']} s")
