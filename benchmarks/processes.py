r"""Whole processes side by side (part of ``python -m benchmarks all``): one ``verify mc`` trial against the
naive script a user would write, ``derive spike`` from a fresh process, ``verify claims --quick`` and the
default test suite, each next to the same command of the code this work started from (:data:`BASELINE`,
unpacked from git into a temporary folder and put first on ``PYTHONPATH``), in the same run.

Each command runs as its own process; its time is the CPU time of the process and its children
(``getrusage``), which other jobs on a shared machine inflate far less than wall time, and the wall
time is given too. The commands of one comparison run round-robin, so that the ratio of each round
compares neighbouring runs; the reported ratio is the median over rounds. Every command runs once
before the timed rounds (numba's and the derivation cache's files exist, as on any run but a user's
very first; that first run is measured apart, with an empty derivation cache).

``verify mc`` and the naive script run with one BLAS thread (the issue's setting); the ledger and the
suite with the library defaults (no thread variable set), as a user runs them.
"""
from __future__ import annotations

import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

__all__ = ["BASELINE", "NAIVE", "MC", "SPIKE", "MODES", "mc_trial", "baseline_tree", "code_env", "timed", "rounds", "mc_rounds", "run",
           "markdown"]

ROOT = Path(__file__).resolve().parents[1]
BASELINE = "2792ba3"
"""The commit issue 17 started from."""

MC = {"d": 2000, "V": 4000, "N": 8000, "T": 8, "signs": "prefix:3", "mu2": "3/2"}
NAIVE = """
import numpy as np
d, V, N, T, mu2 = {d}, {V}, {N}, {T}, 1.5
rng = np.random.default_rng(0)
s = np.repeat([1.0, -1.0], V // 2)
E = rng.standard_normal((d, V))
E[0] += np.sqrt(mu2) * s
xi = rng.choice([-1, 1], size=(N, T))  # prefix:3: the first three positions share one sign
xi[:, 1:3] = xi[:, :1]
tokens = np.where(xi > 0, rng.integers(0, V // 2, (N, T)), V // 2 + rng.integers(0, V // 2, (N, T)))
w = np.full(T, 1 / T)
C = np.zeros((d, N))
for t in range(T):
    C += w[t] * E[:, tokens[:, t]]
S = C @ C.T / N
vals, vecs = np.linalg.eigh(S)
print(vals[-4:][::-1], vecs[0, -1] ** 2)
""".format(**{k: v for k, v in MC.items() if k in "dVNT"})
"""The naive script: the pooled vectors as a dense ``d x N`` matrix, ``S``, and ``numpy.linalg.eigh``."""

SPIKE = ["spike", "--delta", "1/2", "--gamma", "1/4", "--alpha", "7/32", "--kappa", "1/8", "--mu2", "3/2", "--json"]

MODES = {"full": {"rounds": 5, "ledger": True, "suite": True}, "quick": {"rounds": 3, "ledger": True, "suite": True},
         "tiny": {"rounds": 1, "ledger": False, "suite": False}}


def baseline_tree(folder: Path, commit: str = BASELINE) -> Path | None:
    """``commit`` (default :data:`BASELINE`) unpacked into ``folder`` (``None`` outside a git checkout)."""
    target = folder / f"baseline-{commit}"
    target.mkdir()
    archive = subprocess.run(["git", "-C", str(ROOT), "archive", commit], capture_output=True)
    if archive.returncode != 0:
        return None
    subprocess.run(["tar", "-x", "-C", str(target)], input=archive.stdout, check=True)
    return target


def code_env(code: Path, threads: int | None, cache: Path | None = None) -> dict:
    """The environment of a command run by ``code``: BLAS limited to ``threads`` (``None``: the library's choice), the
    derivation cache in ``cache`` (give each code its own: a checkout that finds the cache folder of another
    version of ``derive`` deletes it and derives again, a second of SymPy, so two versions run in turn, or another
    checkout on the machine, would each pay it on every run). Python writes bytecode, as in a user's shell: a
    process that finds none (``PYTHONDONTWRITEBYTECODE`` set) compiles every module of the project again, 40 ms of
    a ``verify mc`` trial."""
    from verify.threads import BLAS_THREAD_VARIABLES, thread_environment

    env = {k: v for k, v in os.environ.items() if k not in BLAS_THREAD_VARIABLES} if threads is None else thread_environment(threads)
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(code), os.environ.get("PYTHONPATH")]))
    if cache is not None:
        env["ATTENTION_RMT_CACHE_DIR"] = str(cache)
    return env


def timed(argv, env: dict, cwd: Path) -> dict:
    """CPU seconds (user and system), user seconds and wall seconds of one process (and its children) running
    ``argv``, and its standard output."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    done = subprocess.run(argv, env=env, cwd=cwd, capture_output=True, text=True)
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        raise RuntimeError(f"{' '.join(map(str, argv[:4]))} ...: exit {done.returncode}: {done.stderr.strip()[-300:]}")
    user = after.ru_utime - before.ru_utime
    return {"cpu_s": user + (after.ru_stime - before.ru_stime), "user_s": user, "wall_s": wall, "stdout": done.stdout}


def rounds(commands: dict, n: int, warm: bool = True) -> dict:
    """``commands`` (``name -> (argv, env, cwd)``) round-robin, ``n`` rounds after a warm-up run of each:
    ``{name: [timing, ...]}``."""
    if warm:
        for argv, env, cwd in commands.values():
            timed(argv, env, cwd)
    out = {name: [] for name in commands}
    for _ in range(n):
        for name, (argv, env, cwd) in commands.items():
            out[name].append(timed(argv, env, cwd))
    return out


def _summary(times: dict, reference: str) -> dict:
    """Medians (of the load too where every run recorded it), and the median over rounds of the reference's time over
    each command's."""
    out = {}
    for name, runs in times.items():
        load = {"load": statistics.median(r["load"] for r in runs)} if all("load" in r for r in runs) else {}
        out[name] = {**load, "cpu_s": statistics.median(r["cpu_s"] for r in runs), "wall_s": statistics.median(r["wall_s"] for r in runs),
                     "cpu_ratios": [a["cpu_s"] / b["cpu_s"] for a, b in zip(times[reference], runs)],
                     "user_s": statistics.median(r["user_s"] for r in runs),
                     "user_ratio": statistics.median(a["user_s"] / b["user_s"] for a, b in zip(times[reference], runs)),
                     "cpu_ratio": statistics.median(a["cpu_s"] / b["cpu_s"] for a, b in zip(times[reference], runs)),
                     "wall_ratio": statistics.median(a["wall_s"] / b["wall_s"] for a, b in zip(times[reference], runs)),
                     "runs": len(runs)}
    return out


def mc_rounds(codes: dict, mode: str, n: int, tmp: Path, log=sys.stderr) -> dict:
    """One ``verify mc`` trial (:data:`MC`) by each of ``codes`` (``name -> checkout``) against the naive script,
    ``n`` rounds round-robin: their medians and ratios (:func:`_summary`)."""
    python = sys.executable
    mc = [f"--{k}={v}" for k, v in MC.items()] + ["--weights", "mean", "--seeds", "1", "--json"]
    if mode == "tiny":
        mc = [a.replace("2000", "40").replace("4000", "80").replace("8000", "160") for a in mc]
    print("bench: verify mc against the naive script, whole processes ...", file=log, flush=True)
    commands = {"naive script": ([python, "-c", NAIVE], code_env(ROOT, 1), tmp)} if mode != "tiny" else {}
    commands.update({f"verify mc ({name})": ([python, "-m", "verify.cli", "mc", *mc],
                                             code_env(code, 1, tmp / f"cache-{name}"), tmp)
                     for name, code in codes.items()})
    times = rounds(commands, n, mode != "tiny")  # tiny mode checks that the harness runs, nothing more
    return _summary(times, "naive script" if mode != "tiny" else "verify mc (now)")


def run(mode: str, log=sys.stderr) -> dict:
    settings = MODES[mode]
    python, n = sys.executable, settings["rounds"]
    out = {"baseline": BASELINE, "rounds": n, "load_start": os.getloadavg()[0]}
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        # tiny mode checks the harness only: the code before would first compile its numba kernels
        base = baseline_tree(tmp) if mode != "tiny" else None
        codes = {"now": ROOT, **({"before": base} if base is not None else {})}
        out["mc"] = mc_rounds(codes, mode, n, tmp, log)
        warm = mode != "tiny"  # tiny mode checks that the harness runs, nothing more
        print("bench: derive spike from a fresh process ...", file=log, flush=True)
        spike = {f"derive spike ({name})": ([python, "-m", "derive.cli", *SPIKE], code_env(code, 1, tmp / f"cache-{name}"),
                                            tmp)
                 for name, code in codes.items()}
        reference = "derive spike (before)" if base is not None else "derive spike (now)"
        out["spike"] = _summary(rounds(spike, max(n, 3) if warm else n, warm), reference)
        if warm:
            first = tmp / "empty-cache"
            out["spike_first_ever"] = timed([python, "-m", "derive.cli", *SPIKE], code_env(ROOT, 1, first), tmp)
            shutil.rmtree(first, ignore_errors=True)
        for name, enabled, argv in (("ledger", settings["ledger"], ["-m", "verify.cli", "claims", "--quick", "--json",
                                                                     "--notes", "", "--figures", str(tmp / "figures")]),
                                    ("suite", settings["suite"], ["-m", "pytest", "-q", "-p", "no:cacheprovider", "-x"])):
            if not enabled:
                continue
            print(f"bench: {name}, default threads ...", file=log, flush=True)
            commands = {f"{name} ({code_name})": ([python, *argv], code_env(code, None, tmp / f"cache-{code_name}"),
                                                  code if name == "suite" else tmp)
                        for code_name, code in codes.items()}
            out[name] = _summary(rounds(commands, 1, warm=False), f"{name} (before)" if base is not None else f"{name} (now)")
    out["load_end"] = os.getloadavg()[0]
    return out


def markdown(result: dict) -> list[str]:
    lines = ["## Whole processes", "",
             f"Each command a process of its own, round-robin ({result['rounds']} rounds after a warm-up run of each, "
             "unless said otherwise); CPU time of the process and its children, wall time in parentheses; ratio: the "
             "reference's time over the command's, median over rounds. `before` is the code of commit "
             f"{result['baseline']} (where this work started) run from a `git archive` of it; `now` this checkout. "
             f"1-minute load average {result['load_start']:.2f} at the start of these runs and {result['load_end']:.2f} "
             "at the end (`benchmarks/processes.py`).", ""]
    blocks = [("mc", f"One `verify mc` trial at d = {MC['d']} (V = {MC['V']}, N = {MC['N']}, T = {MC['T']}, {MC['signs']}, "
                     "mean pooling, mu2 = 3/2, raw S, top 4, default path) against the naive script (pooled vectors as a "
                     "dense d x N matrix, S = C C^T/N, numpy.linalg.eigh), one BLAS thread each"),
              ("spike", "`derive spike` from a fresh process, its derivation cache filled by the warm-up run"),
              ("ledger", "`verify claims --quick` end to end, no thread variable set (one run each; now: one process per "
                         "core, each with one BLAS thread)"),
              ("suite", "the default test suite (`python -m pytest -q`), no thread variable set (one run each; now: one "
                        "pytest-xdist worker per core)")]
    for key, text in blocks:
        if key not in result:
            continue
        lines += [f"**{text}.**", "", "| command | CPU (s) | wall (s) | ratio, CPU | ratio, wall |", "|---|---|---|---|---|"]
        for name, r in result[key].items():
            lines.append(f"| {name} | {r['cpu_s']:.2f} | {r['wall_s']:.2f} | {r['cpu_ratio']:.1f}x | {r['wall_ratio']:.1f}x |")
        lines.append("")
    first = result.get("spike_first_ever")
    if first:
        lines += [f"The first `derive spike` with an empty derivation cache (SymPy derives and the cache is written): "
                  f"{first['cpu_s']:.2f} s CPU ({first['wall_s']:.2f} s wall).", ""]
    return lines
