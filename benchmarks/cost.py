r"""The cost of the paper's grid and of one ``verify mc`` trial, part by part (``python -m benchmarks cost``), each part
written into its own section of ``notes/benchmarks.md``:

* ``batches``: a sweep run to the end in batches of ``--max-tasks``, whole cells against the split cells of the code
  before (:mod:`benchmarks.batches`);
* ``cell``: a cell of the paper's grid at ``d = 10^4`` against its floor, alone and two at once, and the grid's
  projection (:mod:`benchmarks.cell`);
* ``mc``: one ``verify mc`` trial, its conditional theory included, against the naive script and against the code of
  :data:`benchmarks.processes.BASELINE`, round-robin (:func:`benchmarks.processes.mc_rounds`), and where a trial's
  CPU time goes (:func:`stages`: imports, the table, the solve, the conditional prediction);
* ``client``: the sweep's own overhead for the paper's 1440 cells, its solves stubbed, in the client's process and on
  a Dask ``LocalCluster`` (:mod:`benchmarks.client`).
* ``limit``: ``derive spike`` for the model's own limits with the default voice (:data:`LIMITS`: two to sixteen
  nonzero weights, the quenched cavity populations) on an empty derivation cache, against the code of
  :data:`LIMIT_BASELINE`, round-robin.
* ``finite``: ``derive spike --d`` (the model at the user's dimension) against ``verify mc`` at the same point, size
  and number of draws (:mod:`benchmarks.finite`).
* ``ledger``: ``verify claims --quick`` and ``verify claims`` as whole processes against the code before they decided
  C2, C4 and C9 (:mod:`benchmarks.ledger`).
* ``lawaxis``: a sweep summary's model's limit along one law's ``mu2`` axis, cold, against the code that solved each
  model alone (:mod:`benchmarks.lawaxis`).

A part takes minutes; each is a run of its own, whose section says when, at which commit and load it ran, and whose
ratios compare timings of that run only (the machine is shared: absolute times move with the other jobs).
"""
from __future__ import annotations

import datetime
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from derive.errors import ParameterError
from derive.files import write_file

__all__ = ["PARTS", "LIMITS", "LIMIT_BASELINE", "LIMIT_ROUNDS", "MC_ROUNDS", "CELL_FLOOR_FACTOR", "RECORDS_AGREE",
           "STAGES", "markers", "stages", "run_part", "section",
           "splice", "carry", "bench", "main"]

PARTS = ("batches", "cell", "mc", "client", "limit", "finite", "ledger", "lawaxis")
LIMITS = {"T = 2 causal iid": ["spike", "--T", "2", "--weights", "causal", "--signs", "iid", "--delta", "1",
                                "--gamma", "1", "--mu2", "5", "--centered", "--json"],
          "T = 4 mean prefix:2": ["spike", "--T", "4", "--weights", "mean", "--signs", "prefix:2", "--delta", "1/2",
                                  "--gamma", "1/4", "--mu2", "2", "--centered", "--json"],
          "T = 8 causal prefix:3": ["spike", "--T", "8", "--weights", "causal", "--signs", "prefix:3", "--delta", "1/2",
                                    "--gamma", "1/4", "--mu2", "3/2", "--centered", "--json"],
          "T = 16 mean iid": ["spike", "--T", "16", "--weights", "mean", "--signs", "iid", "--delta", "1/2",
                              "--gamma", "4", "--mu2", "4", "--centered", "--json"]}
"""The ``limit`` part's commands: issue 42's four models of the model's limit, cold (notes/benchmarks.md), as a user
runs them: the limit and the default voice (what a user measures at d = 1e3 to 1e6 beside it)."""
LIMIT_BASELINE = "7ffe36d"
"""The code the ``limit`` part compares with: the voice's grid of token spikes on the limit's own replicas (2^13
tokens, 2^16 roots), the Tracy-Widom moments at 96 nodes."""
LIMIT_ROUNDS = {"full": 3, "quick": 2, "tiny": 1}
MC_ROUNDS = {"full": 7, "quick": 5, "tiny": 1}
"""Rounds of the ``mc`` part (after a warm-up run of each command)."""


CELL_FLOOR_FACTOR = 1.5
"""Issue 27's target: a cell of the paper's grid within 1.5 times its floor (:mod:`benchmarks.cell`)."""

RECORDS_AGREE = 1e-10
"""The records of the sweep in batches of whole cells agree with those of the code before (whose block passes summed
in another order; :mod:`benchmarks.batches`) to the accuracy the axis solver certifies: residuals below
:data:`verify.montecarlo.lanczos.TOL` = 1e-8, eigenvalues then to 1e-10 relative at a relative gap of 1e-6."""

STAGES = ("table", "solve", "conditional", "theory", "theory at d")
"""The timed stages of a ``verify mc`` trial (:func:`stages`)."""


def stages(argv: list[str]) -> dict:
    """CPU seconds of the stages of ``verify mc ARGV`` run in this process: the imports of the command, the draw's
    table (:func:`verify.montecarlo.draw.sample_table`), the eigensolve (:func:`verify.montecarlo.trials.solve`), the
    conditional prediction of each draw (:func:`verify.montecarlo.conditional.conditional_observables`), the
    Gaussian-equivalent theory (:func:`derive.report.documents.spike_document`), the model's law at the run's d
    (:func:`verify.commands.mc.theory_at_d`), and the whole."""
    import contextlib
    import importlib
    import io

    start = time.process_time()
    import verify.cli
    import verify.commands.mc
    import verify.montecarlo.conditional
    import verify.montecarlo.trials
    import derive.report.documents

    imported = time.process_time()
    spent = dict.fromkeys(STAGES, 0.0)
    draw_module = importlib.import_module("verify.montecarlo.draw")  # the package exports a function of that name
    for name, module, attribute in (("table", draw_module, "sample_table"), ("solve", verify.montecarlo.trials, "solve"),
                                    ("conditional", verify.montecarlo.conditional, "conditional_observables"),
                                    ("theory", derive.report.documents, "spike_document"),
                                    ("theory at d", verify.commands.mc, "theory_at_d")):
        def timed(*args, _f=getattr(module, attribute), _name=name, **kwargs):
            t0 = time.process_time()
            try:
                return _f(*args, **kwargs)
            finally:
                spent[_name] += time.process_time() - t0
        setattr(module, attribute, timed)
    with contextlib.redirect_stdout(io.StringIO()):
        status = verify.cli.main(["mc", *argv])
    if status:
        raise RuntimeError(f"verify mc {' '.join(argv)}: exit {status}")
    return {"imports": imported - start, **spent, "total": time.process_time() - start}


def _stage_runs(runs: int, tmp: Path) -> list[dict]:
    """:func:`stages` of :data:`benchmarks.processes.MC`'s trial, each run a fresh process (after a warm-up run)."""
    from benchmarks.processes import MC, ROOT, code_env

    argv = [f"--{k}={v}" for k, v in MC.items()] + ["--weights", "mean", "--seeds", "1", "--json"]
    out = []
    for _ in range(runs + 1):
        done = subprocess.run([sys.executable, "-m", "benchmarks.cost", "--stages", *argv],
                              env=code_env(ROOT, 1, tmp / "cache-now"), cwd=tmp, capture_output=True, text=True)
        if done.returncode:
            raise RuntimeError(f"benchmarks.cost --stages: exit {done.returncode}: {done.stderr.strip()[-300:]}")
        out.append(json.loads(done.stdout))
    return out[1:]


def markers(part: str) -> tuple[str, str]:
    return f"<!-- cost:{part}:begin -->", f"<!-- cost:{part}:end -->"


def run_part(part: str, mode: str, log=sys.stderr) -> dict:
    """The numbers of one part in ``mode`` (``full``, ``quick`` or ``tiny``)."""
    from benchmarks import batches, cell, client, finite, lawaxis, ledger, processes

    if part == "ledger":
        return ledger.run(mode, log)
    if part == "lawaxis":
        return lawaxis.run(mode, log)
    if part == "finite":
        return finite.run(mode, log)
    if part == "batches":
        return batches.run(mode, log)
    if part == "client":
        return client.run(mode, log)
    if part == "cell":
        return cell.run(mode, log)
    if part == "limit":
        return _limit_run(mode, log)
    out = {"baseline": processes.BASELINE, "rounds": MC_ROUNDS[mode], "load_start": os.getloadavg()[0]}
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        base = processes.baseline_tree(tmp) if mode != "tiny" else None
        codes = {"now": processes.ROOT, **({"before": base} if base is not None else {})}
        out["mc"] = processes.mc_rounds(codes, mode, out["rounds"], tmp, log)
        if mode != "tiny":
            print("bench: the stages of a verify mc trial ...", file=log, flush=True)
            out["stages"] = _stage_runs(out["rounds"], tmp)
    out["load_end"] = os.getloadavg()[0]
    return out


def _limit_run(mode: str, log) -> dict:
    """:data:`LIMITS` by this checkout and by :data:`LIMIT_BASELINE`'s, round-robin after a warm-up run of each (which
    compiles the code's numba kernels), every run a fresh process on an empty derivation cache; two BLAS threads, as
    the populations' two replica threads use. Tiny mode runs this checkout once on the last case at mu2 = 0 (no
    outlier to seek) without the voice: the harness only."""
    from benchmarks.processes import ROOT, baseline_tree, code_env, timed

    out = {"baseline": LIMIT_BASELINE, "rounds": LIMIT_ROUNDS[mode], "load_start": os.getloadavg()[0]}
    cases = list(LIMITS.items()) if mode != "tiny" else [
        (name, [("0" if previous == "--mu2" else a) for previous, a in zip(["", *argv], argv)] + ["--no-dimensions"])
        for name, argv in list(LIMITS.items())[-1:]]
    commands = {name: [sys.executable, "-m", "derive.cli", *argv] for name, argv in cases}
    print("bench: derive spike's limits on an empty derivation cache ...", file=log, flush=True)
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        codes = {"now": ROOT}
        if mode != "tiny":
            codes["before"] = baseline_tree(tmp, LIMIT_BASELINE)
        times = {case: {name: [] for name in codes} for case in commands}
        samples = {case: {} for case in commands}
        for r in range(out["rounds"] + (mode != "tiny")):
            for case, argv in commands.items():
                for name, code in codes.items():
                    run = timed(argv, code_env(code, 2, tmp / f"cache-{name}-{r}"), tmp)
                    samples[case][name] = json.loads(run.pop("stdout"))["sample"]
                    if r or mode == "tiny":
                        times[case][name].append(run)
    out.update(times=times, samples=samples, load_end=os.getloadavg()[0])
    return out


def _limit_lines(r: dict) -> list[str]:
    from benchmarks.processes import _summary

    lines = ["## derive spike's limits on an empty derivation cache", "",
             "The model's own signal outlier in the limit as a user's first call computes it (later calls read the "
             "derivation cache), with the default voice, what a user measures at d = 1e3, 1e4, 1e5 and 1e6 beside it "
             "(sampled token matrices where the voice's bounds allow, else the token spikes of the limit): "
             + "; ".join(f"`derive {' '.join(argv)}`" for argv in LIMITS.values()) + ". "
             f"`before` is the code of {r['baseline']} (the voice's grid of token spikes on the limit's own replicas "
             "of 2^13 tokens and 2^16 roots, the Tracy-Widom moments at 96 nodes), `now` this checkout. "
             f"{r['rounds']} rounds round-robin after a warm-up run of each (which compiles numba's kernels), every "
             "run a fresh process on an empty derivation cache (SymPy derives its functions again: the same for both), "
             "two BLAS threads; CPU time is user plus system time of the process; ratio: before's time over now's, "
             "median over rounds. The target (issue 42): a cold `derive spike --T` at most 20 CPU-s for T <= 16.", "",
             "| case | code | CPU (s), median | wall (s), median | ratio, CPU | ratio, wall | eigenvalue, overlap, "
             "mu2_critical (error) |", "|---|---|---|---|---|---|---|"]
    for case, times in r["times"].items():
        for name, x in _summary(times, "before" if "before" in times else "now").items():
            sample = r["samples"][case].get(name, {})
            values = ", ".join(f"{sample.get(q)}" + (f" ({sample.get(q + '_error')})" if q + "_error" in sample else "")
                               for q in ("eigenvalue", "overlap", "mu2_critical"))
            lines.append(f"| {case} | {name} | {x['cpu_s']:.2f} | {x['wall_s']:.2f} | {x['cpu_ratio']:.2f}x | "
                         f"{x['wall_ratio']:.2f}x | {values} |")
    return lines


def _mc_lines(r: dict) -> list[str]:
    from benchmarks.core import PROCESS_TARGET
    from benchmarks.processes import MC

    lines = ["## verify mc with the conditional theory against the naive script", "",
             f"One `verify mc` trial at d = {MC['d']} (V = {MC['V']}, N = {MC['N']}, T = {MC['T']}, {MC['signs']}, mean "
             "pooling, mu2 = 3/2, raw S, top 4, default path; its document holds the Gaussian-equivalent theory and the "
             "conditional prediction of the draw, the Lanczos quadrature of its token matrix) against the naive script "
             "(pooled vectors as a dense d x N matrix, S = C C^T/N, numpy.linalg.eigh), and against `verify mc` of commit "
             f"{r['baseline']} (before issue 17, no conditional block); one BLAS thread each. {r['rounds']} rounds "
             "round-robin after a warm-up run of each; CPU time of each process (wall beside it); ratio: the naive script's "
             "time over the command's in the same round, median (min to max) over rounds. CPU time is user plus "
             "system time: the system time is mostly page faults of fresh arrays (the naive script's 64 MB table, "
             "128 MB pooled matrix and 32 MB S), which vary with the state of the machine's memory, so the ratio of "
             "user times is given beside it.", "",
             "| command | CPU (s), median | user (s), median | wall (s), median | ratio, CPU: median (min to max) "
             "| ratio, user | ratio, wall |", "|---|---|---|---|---|---|---|"]
    for name, x in r["mc"].items():
        lines.append(f"| {name} | {x['cpu_s']:.2f} | {x['user_s']:.2f} | {x['wall_s']:.2f} | {x['cpu_ratio']:.1f}x "
                     f"({min(x['cpu_ratios']):.1f}x to {max(x['cpu_ratios']):.1f}x) | {x['user_ratio']:.1f}x | "
                     f"{x['wall_ratio']:.1f}x |")
    if r.get("stages"):
        runs = r["stages"]
        rest = [x["total"] - x["imports"] - sum(x[s] for s in STAGES) for x in runs]
        lines += ["", "Where a trial's CPU time goes (this checkout, the same command run in-process with its stages "
                      f"timed, {len(runs)} fresh processes after a warm-up; median, interpreter start-up excluded): "
                  + ", ".join(f"{name} {statistics.median(x[name] for x in runs):.3f} s"
                              for name in ("imports", *STAGES)) + f", the rest {statistics.median(rest):.3f} s; "
                  f"total {statistics.median(x['total'] for x in runs):.3f} s. The conditional prediction costs "
                  f"{statistics.median(x['conditional'] / x['solve'] for x in runs):.2f} times the draw's eigensolve "
                  "(median of the runs' ratios)."]
    now = r["mc"].get("verify mc (now)")
    if now is not None and "naive script" in r["mc"]:
        met = now["cpu_ratio"] >= PROCESS_TARGET
        lines += ["", f"Target >= {PROCESS_TARGET:.0f}x (CPU, median over rounds): {'met' if met else '**not met**'} "
                      f"({now['cpu_ratio']:.2f}x; {now['user_ratio']:.2f}x in user time)."]
    return lines


def _batches_verdict(r: dict) -> list[str]:
    if "before" not in r:
        return []
    met = r["now"]["solves"] == r["cells"] and r["difference"] <= RECORDS_AGREE
    return ["", f"Target: each cell solved once in its batch ({r['now']['solves']} solves for {r['cells']} cells, before "
                f"{r['before']['solves']}), the records within {RECORDS_AGREE:.0e} of the code before's: "
                f"{'met' if met else '**not met**'}."]


def _cell_verdict(r: dict) -> list[str]:
    from benchmarks.cell import floor

    lines = [""]
    for g in r["gammas"]:
        for name, workers in (("alone", [r["alone"][g]]), ("two at once", r["pairs"][g])):
            ratios = []
            for w in workers:
                c = w["cells"][-1]
                f = floor(c, w["t_rng"], w["read_bytes_per_s"])
                ratios.append((f["ratio"], c, f))
            ratio, c, f = max(ratios, key=lambda x: x[0])
            rest = c["cpu_s"] - c["generate_s"] - c["passes_s"]
            met = ratio <= CELL_FLOOR_FACTOR
            lines.append(f"- gamma {g}, {name} (the worker's last cell{', the slower worker' if len(workers) > 1 else ''}): "
                         f"cell / floor = {ratio:.2f} (target <= {CELL_FLOOR_FACTOR}: {'met' if met else '**not met**'}); "
                         f"generation {c['generate_s']:.2f} s against its floor {f['generate_s']:.2f} s, "
                         f"{c['passes']} passes {c['passes_s']:.2f} s against {f['passes_s']:.2f} s, "
                         f"the rest {rest:.2f} s (no floor).")
    return lines


def section(part: str, result: dict, mode: str) -> str:
    """The part's section of notes/benchmarks.md: its markers, the run's provenance and its tables."""
    from benchmarks import batches, cell, client, finite, lawaxis, ledger
    from benchmarks.core import NOTES, revision

    rev = revision()
    begin, end = markers(part)
    dirty = f" (uncommitted changes in {', '.join(rev['uncommitted'])})" if rev["uncommitted"] else ""
    when = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    body = {"batches": lambda r: batches.markdown(r) + _batches_verdict(r), "cell": lambda r: cell.markdown(r) + _cell_verdict(r), "mc": _mc_lines,
            "client": lambda r: client.markdown(r, NOTES.read_text() if NOTES.exists() else ""), "limit": _limit_lines,
            "finite": finite.markdown, "ledger": ledger.markdown, "lawaxis": lawaxis.markdown}[part](result)
    head = (f"*Measured by `python -m benchmarks cost --parts {part}{'' if mode == 'full' else ' --' + mode}` on {when} "
            f"at commit {rev['head']}{dirty}, on {os.cpu_count()} cores shared with other jobs: 1-minute load average "
            f"{result['load_start']:.2f} at the start and {result['load_end']:.2f} at the end.*")
    return "\n".join([begin, body[0], "", head, *body[1:], end])


def splice(text: str, part: str, new: str) -> str:
    """``text`` with the part's section replaced by ``new`` (appended if it has none)."""
    begin, end = markers(part)
    if begin in text and end in text:
        return text[:text.index(begin)] + new + text[text.index(end) + len(end):]
    return text + ("\n" if text and not text.endswith("\n") else "") + "\n" + new + "\n"


def carry(old: str, new: str) -> str:
    """``new`` with every marked section of ``old`` (:func:`markers`: the parts this module measured in runs of their
    own, and the sections written by hand beside them), which ``python -m benchmarks all`` keeps when it rewrites
    the page."""
    for part in re.findall(r"<!-- cost:([\w-]+):begin -->", old):
        begin, end = markers(part)
        if end in old:
            new = splice(new, part, old[old.index(begin):old.index(end) + len(end)])
    return new


def bench(mode: str, parts, out, log=sys.stderr) -> dict:
    """Run ``parts`` one after the other, each written into its section of ``out`` (if given) as soon as it ends."""
    parts = list(parts)
    unknown = [p for p in parts if p not in PARTS]
    if unknown or not parts:
        raise ParameterError("parts", f"must name some of {', '.join(PARTS)}, got {','.join(parts)!r}")
    results, sections = {}, []
    for part in parts:
        results[part] = run_part(part, mode, log)
        sections.append(section(part, results[part], mode))
        if out:
            target = Path(out)
            write_file(target, splice(target.read_text() if target.exists() else "", part, sections[-1]), "out")
    return {"mode": mode, "parts": parts, "results": results, "written": str(out) if out else None,
            "markdown": "\n\n".join(sections)}


def main(argv=None) -> int:
    """``python -m benchmarks.cost --stages ARGS``: :func:`stages` of ``verify mc ARGS`` as one JSON document."""
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] != ["--stages"]:
        print("usage: python -m benchmarks.cost --stages VERIFY_MC_ARGS (run by `python -m benchmarks cost`)",
              file=sys.stderr)
        return 2
    print(json.dumps(stages(argv[1:])))
    return 0


if __name__ == "__main__":
    sys.exit(main())
