"""The attack suite's cases: hostile or oversized input to every command, faults (a file-size limit, a full disk, a
signal), each of which must end in a clean refusal (exit 2, one line on stderr naming the parameter, nothing on
stdout), a correct answer, or a clean stop (exit 130 or 143 and one line, after a SIGINT or SIGTERM), never a
traceback, a hang, a run over the memory limit, a partial file or a process left behind.

``tests/test_attack.py`` runs the ``fast`` cases through the command line's ``main``, each in a process of its own
forked from a server that has imported it (default suite; a case with an ``env`` in a fresh interpreter below that,
since it changes what a process keeps, its derivation cache); ``scripts/attack.py`` runs every case in its own
process under a time and memory limit and writes the counts to ``notes/reliability.md``. A case's ``argv`` and ``env``
may hold ``{tmp}``, the folder its ``setup`` filled. ``expect="counterexample"``: ``verify formula`` must find the
formula wrong (exit 1, verdict ``counterexample``), whatever ``--digits``.
"""
from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass, field
from pathlib import Path

__all__ = ["Case", "CASES", "ApiCase", "API_CASES", "prepare", "argv_of", "env_of", "classify", "check_leaves",
           "run_in_process", "run_api", "law_densities"]


@dataclass(frozen=True)
class Case:
    name: str
    argv: tuple                       # ("derive" | "verify", subcommand, options...)
    expect: str = "refused"           # "refused" | "answered" | "either" | "stopped" (with ``stop``)
    fast: bool = True                 # in the default suite (through main, well under a second)
    setup: tuple = field(default=())  # names of the files prepare() makes
    fsize: int | None = None          # a file-size limit (RLIMIT_FSIZE, bytes): writes beyond it fail
    stop: str | None = None           # "SIGINT" | "SIGTERM", sent ``after`` seconds (own process only)
    after: float = 0.0
    disk: str | None = None           # "full": {tmp}/full is a file system with no space left (own process, root)
    leaves: tuple = field(default=())  # what the run must leave (check_leaves): ("absent" | "whole" | "clean", path)
    env: tuple = field(default=())    # (name, value) pairs set for the run, which then has a process of its own
    never: str | None = None          # text its stdout must not hold (a value a poisoned cache or a wrong formula gives)


def _spike(**over):
    base = {"delta": "1/2", "gamma": "1/4", "alpha": "7/32", "kappa": "1/8", "mu2": "3/2"}
    base.update(over)
    return ("derive", "spike", *[x for k, v in base.items() for x in (f"--{k}", v)], "--json")


def _mc(**over):
    base = {"d": "20", "V": "40", "N": "80", "T": "4", "signs": "prefix:2", "weights": "mean", "mu2": "2",
            "seeds": "2"}
    base.update(over)
    return ("verify", "mc", *[x for k, v in base.items() for x in (f"--{k}", v)], "--json")


def _w(scheme, T, *rest):
    return ("derive", "weights", "--weights", scheme, "--T", str(T), *rest, "--json")


def _formula(expr, quantity="sample.overlap", *rest):
    return ("verify", "formula", "--quantity", quantity, "--expr", expr, "--examples", "20", *rest, "--json")


BIG = "9" * 1000
LONG = "a" * 100_000
EXTREME = "file:{tmp}/extreme.csv"  # 1e300, 1, -1e300, 1, 1, 1, 1, 1: sum 6, so |w|^2 about 5e598 once normalized
CASES = [
    # large but valid: answered promptly from closed forms, or refused up front
    Case("weights mean T=1e5 iid", _w("mean", 100000, "--signs", "iid", "--digits", "5"), "either", fast=False),
    Case("weights mean T=3000 markov", _w("mean", 3000, "--signs", "markov:1/2", "--digits", "8"), "either", fast=False),
    Case("weights causal T=1e5 strict", _w("causal", 100000, "--mask", "strict", "--digits", "5"), "either", fast=False),
    Case("weights causal T=1e5 tau=1", _w("causal", 100000, "--tau", "1", "--digits", "5"), "either", fast=False),
    Case("weights optimal T=3000 markov", _w("optimal", 3000, "--signs", "markov:1/2"), "either", fast=False),
    Case("weights optimal T=2000 gauss", _w("optimal", 2000, "--signs", "gauss:1/2"), "either", fast=False),
    Case("weights mean T=5000 gauss", _w("mean", 5000, "--signs", "gauss:1/2", "--digits", "8"), "either", fast=False),
    Case("weights mean T=1e5 prefix", _w("mean", 100000, "--signs", "prefix:50000", "--digits", "5"), "either", fast=False),
    Case("weights mean T=1e5 digits 1000", _w("mean", 100000, "--signs", "suffix:3", "--digits", "1000"), "either", fast=False),
    Case("mc T=1e5", _mc(T="100000", signs="iid"), "either", fast=False),
    Case("mc N x T tokens", _mc(d="2", V="2", N="100000000", T="10", signs="iid", k="1"), "refused"),
    Case("mc d=1e9", _mc(d="1000000000"), "refused"),
    Case("mc seeds 1e12", _mc(seeds="1000000000000"), "refused"),
    Case("ladder huge d", ("verify", "ladder", "--d", "1000000,2000000", "--seeds", "2", "--json"), "refused"),
    Case("ladder tiny delta", ("verify", "ladder", "--d", "100,200", "--delta", "1e-6", "--seeds", "2", "--json"), "refused"),
    Case("attention-gap huge d", ("verify", "attention-gap", "--d", "100000,200000", "--seeds", "2", "--json"), "refused"),
    # user files
    Case("weights csv one row 1e4", _w("file:{tmp}/row10k.csv", 10000), "answered", fast=False, setup=("row10k.csv",)),
    Case("weights csv 1e5 columns", _w("file:{tmp}/row100k.csv", 100000), "either", fast=False, setup=("row100k.csv",)),
    Case("weights csv 60 MB", _w("file:{tmp}/big60.csv", 10), "refused", setup=("big60.csv",)),
    Case("weights csv 3M rows", _w("file:{tmp}/rows3m.csv", 10), "refused", setup=("rows3m.csv",)),
    Case("weights /dev/zero", _w("file:/dev/zero", 4), "refused"),
    Case("weights fifo", _w("file:{tmp}/fifo.csv", 4), "refused", setup=("fifo.csv",)),
    Case("signs /dev/zero", _w("mean", 4, "--signs", "file:/dev/zero"), "refused"),
    Case("signs fifo", _w("mean", 4, "--signs", "file:{tmp}/fifo.csv"), "refused", setup=("fifo.csv",)),
    Case("signs directory", _w("mean", 4, "--signs", "file:{tmp}/dir.csv"), "refused", setup=("dir.csv",)),
    Case("weights npy 1e8 header", _w("file:{tmp}/huge.npy", 4), "refused", setup=("huge.npy",)),
    Case("weights npy object", _w("file:{tmp}/obj.npy", 2), "refused", setup=("obj.npy",)),
    Case("weights csv nan", _w("file:{tmp}/nan.csv", 2), "refused", setup=("nan.csv",)),
    Case("weights csv ragged", _w("file:{tmp}/ragged.csv", 3), "refused", setup=("ragged.csv",)),
    Case("weights csv binary", _w("file:{tmp}/binary.csv", 3), "refused", setup=("binary.csv",)),
    Case("signs R 2000x2000", _w("mean", 2000, "--signs", "file:{tmp}/R2000.npy"), "refused", setup=("R2000.npy",)),
    # numbers
    Case("spike delta 1e200", _spike(delta="1e200"), "either"),
    Case("spike gamma 1e400", _spike(gamma="1e400"), "either"),
    Case("spike mu2 1e-900", _spike(mu2="1e-900"), "either"),
    Case("spike kappa 1e-300", _spike(kappa="1e-300"), "either"),
    Case("spike alpha huge", _spike(alpha="1e300", kappa="1e-300"), "either"),
    Case("spike arabic digit", _spike(delta="\u0663"), "refused"),
    Case("spike fullwidth digit", _spike(mu2="\uff13"), "refused"),
    Case("spike superscript", _spike(mu2="\u00b2"), "refused"),
    Case("spike 1000-digit", _spike(mu2=BIG), "refused"),
    Case("spike 1000-digit ratio", _spike(mu2=f"1/{BIG}"), "refused"),
    Case("spike nan", _spike(mu2="nan"), "refused"),
    Case("spike inf", _spike(mu2="inf"), "refused"),
    Case("spike empty", _spike(mu2=""), "refused"),
    Case("spike digits 0", (*_spike(), "--digits", "0"), "refused"),
    Case("spike digits 1001", (*_spike(), "--digits", "1001"), "refused"),
    Case("spike digits 1000", (*_spike(), "--digits", "1000"), "answered", fast=False),
    Case("spike exactly on the population threshold", _spike(delta="1/9", gamma="0", alpha="1", kappa="1", mu2="1/3"),
         "either"),
    Case("spike sum-w huge", _spike(**{"sum-w": "1e300"}), "either"),
    Case("bulk x 3e4 points", ("derive", "bulk", "--delta", "1/2", "--gamma", "1/4", "--kappa", "1/8",
                               "--x", ",".join(["0.1"] * 30000), "--json"), "refused"),
    Case("bulk delta 1e-300", ("derive", "bulk", "--delta", "1e-300", "--gamma", "1/4", "--kappa", "1/8",
                               "--x", "0.1", "--json"), "refused"),
    Case("weights T 1e6", _w("mean", 1000000), "refused"),
    Case("weights T 1e200", _w("mean", "1e200"), "refused"),
    Case("weights tau 1e300", _w("causal", 4, "--tau", "1e300"), "refused"),
    Case("weights markov 1e-900", _w("mean", 4, "--signs", "markov:1e-900"), "either"),
    Case("weights gauss 0.999999", _w("optimal", 6, "--signs", "gauss:0.999999"), "either"),
    Case("mc mu2 1e300", _mc(mu2="1e300"), "refused"),
    # output paths
    Case("sweep results is a directory", ("verify", "sweep", "{tmp}/tiny.toml", "--results", "{tmp}/dir.csv", "--json"),
         "refused", setup=("tiny.toml", "dir.csv")),
    Case("sweep results fifo", ("verify", "sweep", "{tmp}/tiny.toml", "--results", "{tmp}/fifo.csv", "--json"),
         "refused", setup=("tiny.toml", "fifo.csv")),
    Case("sweep results /dev/null", ("verify", "sweep", "{tmp}/tiny.toml", "--results", "/dev/null", "--json"),
         "refused", setup=("tiny.toml",)),
    Case("sweep results under a file", ("verify", "sweep", "{tmp}/tiny.toml", "--results", "{tmp}/nan.csv/r.jsonl",
                                        "--json"), "refused", setup=("tiny.toml", "nan.csv")),
    Case("sweep results missing folder", ("verify", "sweep", "{tmp}/tiny.toml", "--results", "{tmp}/no/such/r.jsonl",
                                          "--json"), "refused", setup=("tiny.toml",)),
    Case("sweep figures under a file", ("verify", "sweep", "--summarize", "{tmp}/tiny.results.jsonl", "--figures",
                                        "{tmp}/nan.csv/figs", "--skip-model-limit", "--json"), "refused",
         setup=("tiny.results.jsonl", "nan.csv")),
    Case("claims notes is a directory", ("verify", "claims", "--quick", "--notes", "{tmp}/dir.csv", "--figures", "",
                                         "--json"), "refused", setup=("dir.csv",)),
    Case("claims figures under a file", ("verify", "claims", "--quick", "--notes", "", "--figures",
                                         "{tmp}/nan.csv/f", "--json"), "refused", setup=("nan.csv",)),
    # sweep files
    Case("sweep json nested 1e5", ("verify", "sweep", "{tmp}/nested.json", "--results", "{tmp}/r-{case}.jsonl", "--json"),
         "refused", setup=("nested.json",)),
    Case("sweep 5000-digit seed", ("verify", "sweep", "{tmp}/bigint.json", "--results", "{tmp}/r-{case}.jsonl", "--json"),
         "refused", setup=("bigint.json",)),
    Case("sweep seeds 1e12", ("verify", "sweep", "{tmp}/seeds.json", "--results", "{tmp}/r-{case}.jsonl", "--json"),
         "refused", setup=("seeds.json",)),
    Case("sweep num 1e9", ("verify", "sweep", "{tmp}/num.json", "--results", "{tmp}/r-{case}.jsonl", "--json"),
         "refused", setup=("num.json",)),
    Case("sweep mu2 1e300", ("verify", "sweep", "{tmp}/mu2.json", "--results", "{tmp}/r-{case}.jsonl", "--json"),
         "refused", setup=("mu2.json",)),
    Case("sweep d 2e5", ("verify", "sweep", "{tmp}/bigd.json", "--results", "{tmp}/r-{case}.jsonl", "--json"),
         "refused", setup=("bigd.json",)),
    Case("sweep file /dev/zero", ("verify", "sweep", "/dev/zero", "--results", "{tmp}/r-{case}.jsonl", "--json"), "refused"),
    Case("sweep file fifo", ("verify", "sweep", "{tmp}/fifo.toml", "--results", "{tmp}/r-{case}.jsonl", "--json"),
         "refused", setup=("fifo.toml",)),
    # damaged results files on resume and summary
    *[Case(f"resume {damage}", ("verify", "sweep", "{tmp}/tiny.toml", "--results", f"{{tmp}}/{damage}.jsonl",
                                "--max-tasks", "1", "--json"), "refused", setup=("tiny.toml", f"{damage}.jsonl"))
      for damage in ("empty-result", "nan-value", "foreign-record", "edited-seeds", "negative-key", "bad-point")],
    *[Case(f"summarize {damage}", ("verify", "sweep", "--summarize", f"{{tmp}}/{damage}.jsonl", "--figures", "",
                                   "--json"), "refused", setup=("tiny.toml", f"{damage}.jsonl"))
      for damage in ("empty-result", "nan-value", "foreign-record", "edited-seeds", "negative-key", "bad-point")],
    # issue 28. A sweep on the mu2-axis solver (every real sweep takes it), stopped part-way
    Case("resume mu2-axis sweep", ("verify", "sweep", "{tmp}/axis.toml", "--results", "{tmp}/axis.results.jsonl",
                                   "--workers", "1", "--json"), "answered", setup=("axis.toml", "axis.results.jsonl")),
    Case("summarize mu2-axis sweep", ("verify", "sweep", "--summarize", "{tmp}/axis.results.jsonl", "--figures",
                                      "{tmp}/axis-figures", "--skip-model-limit", "--json"), "answered", setup=("axis.toml", "axis.results.jsonl")),
    # short expressions that SymPy or mpmath would evaluate without end, --where values beyond the domain
    *[Case(f"formula {expr}", _formula(expr)) for expr in (
        "H(10**9)", "harmonic(999999999)", "digamma(10**9)", "((((10**60)**64)**64)**64)**64", "exp(exp(exp(exp(60))))",
        "H(H(H(10)))", "sin(exp(exp(40)))", "H(10**5)")],
    Case("formula where T=100000", _formula("H(T)/T", "weights.causal", "--where", "T=100000")),
    Case("formula where T=1e9", _formula("H(T)/T", "weights.causal", "--where", "T=1000000000")),
    Case("formula where delta twice", _formula("delta", "sample.overlap", "--where", "delta=1/2,delta=1/3")),
    Case("formula bare symbol", _formula("L", "alpha_over_kappa.optimal.prefix"), "answered"),
    # a file-size limit (RLIMIT_FSIZE: writes fail with EFBIG) and a full disk: one line, nothing partial
    Case("sweep results header beyond the size limit", ("verify", "sweep", "{tmp}/tiny.toml", "--results",
                                                        "{tmp}/fs-header.jsonl", "--workers", "1", "--json"),
         setup=("tiny.toml",), fsize=300, leaves=(("absent", "{tmp}/fs-header.jsonl"),)),
    Case("sweep results beyond the size limit", ("verify", "sweep", "{tmp}/tiny.toml", "--results", "{tmp}/fs-mid.jsonl",
                                                 "--workers", "1", "--json"),
         setup=("tiny.toml",), fsize=4000, leaves=(("whole", "{tmp}/fs-mid.jsonl"),)),
    Case("summarize figures beyond the size limit", ("verify", "sweep", "--summarize", "{tmp}/tiny.results.jsonl",
                                                     "--figures", "{tmp}/fs-figures", "--skip-model-limit", "--json"),
         setup=("tiny.results.jsonl",), fsize=5000, leaves=(("clean", "{tmp}/fs-figures"),)),
    Case("formula sheet beyond the size limit", ("derive", "formulas", "--latex", "--out", "{tmp}/fs/sheet.tex", "--json"),
         fast=False, fsize=5000, leaves=(("absent", "{tmp}/fs/sheet.tex"), ("clean", "{tmp}/fs"))),
    Case("sweep results on a full disk", ("verify", "sweep", "{tmp}/tiny.toml", "--results", "{tmp}/full/r.jsonl",
                                          "--workers", "1", "--json"),
         fast=False, setup=("tiny.toml",), disk="full", leaves=(("absent", "{tmp}/full/r.jsonl"),)),
    Case("summarize figures on a full disk", ("verify", "sweep", "--summarize", "{tmp}/tiny.results.jsonl", "--figures",
                                              "{tmp}/full/figures", "--skip-model-limit", "--json"),
         fast=False, setup=("tiny.results.jsonl",), disk="full", leaves=(("clean", "{tmp}/full"),)),
    Case("formula sheet on a full disk", ("derive", "formulas", "--latex", "--out", "{tmp}/full/sheet.tex", "--json"),
         fast=False, disk="full", leaves=(("absent", "{tmp}/full/sheet.tex"), ("clean", "{tmp}/full"))),
    # output paths where nothing can be written (root may write anywhere access() is asked about, not in /sys)
    Case("claims notes in /sys", ("verify", "claims", "--quick", "--notes", "/sys/notes.md", "--figures", "", "--json")),
    Case("claims figures in /sys", ("verify", "claims", "--quick", "--notes", "", "--figures", "/sys/figures", "--json")),
    Case("sweep results in /sys", ("verify", "sweep", "{tmp}/tiny.toml", "--results", "/sys/r.jsonl", "--json"),
         setup=("tiny.toml",)),
    Case("formula sheet in /sys", ("derive", "formulas", "--latex", "--out", "/sys/sheet.tex", "--json")),
    # SIGINT and SIGTERM: 130 or 143 and one line, no process of the command's session left, nothing partial
    *[Case(f"{stop} claims", ("verify", "claims", "--quick", "--notes", f"{{tmp}}/{stop}/claims.md", "--figures",
                              f"{{tmp}}/{stop}/figures", "--json"), "stopped", fast=False, stop=stop, after=8.0,
           leaves=(("absent", f"{{tmp}}/{stop}/claims.md"), ("clean", f"{{tmp}}/{stop}")))
      for stop in ("SIGINT", "SIGTERM")],
    *[Case(f"{stop} sweep", ("verify", "sweep", "{tmp}/stoppable.json", "--results", f"{{tmp}}/{stop}.jsonl", "--json"),
           "stopped", fast=False, setup=("stoppable.json",), stop=stop, after=8.0,
           leaves=(("whole", f"{{tmp}}/{stop}.jsonl"),)) for stop in ("SIGINT", "SIGTERM")],
    Case("SIGINT formulas", ("derive", "formulas", "--latex", "--out", "{tmp}/SIGINT-sheet/f.tex", "--json"), "stopped",
         fast=False, stop="SIGINT", after=1.5, leaves=(("absent", "{tmp}/SIGINT-sheet/f.tex"),)),
    Case("SIGTERM mc", _mc(d="200", V="400", N="800", T="8", seeds="5000"), "stopped", fast=False, stop="SIGTERM",
         after=3.0),
    # malformed files, weights that nearly cancel
    Case("weights npy negative shape", _w("file:{tmp}/negative.npy", 4), setup=("negative.npy",)),
    Case("weights npy truncated", _w("file:{tmp}/truncated.npy", 4), setup=("truncated.npy",)),
    Case("signs npy negative shape", _w("mean", 2, "--signs", "file:{tmp}/negativeR.npy"), setup=("negativeR.npy",)),
    Case("mc weights npy truncated", _mc(weights="file:{tmp}/truncated.npy"), setup=("truncated.npy",)),
    Case("bulk weights npy negative shape", ("derive", "bulk", "--delta", "1/2", "--gamma", "1", "--T", "4", "--weights",
                                             "file:{tmp}/negative.npy", "--x", "0.5", "--json"), setup=("negative.npy",)),
    Case("ladder weights 1e300", ("verify", "ladder", "--d", "100,200", "--seeds", "2", "--weights", EXTREME, "--json"),
         setup=("extreme.csv",)),
    Case("mc weights 1e300", _mc(T="8", weights=EXTREME), setup=("extreme.csv",)),
    Case("bulk weights 1e300", ("derive", "bulk", "--delta", "1/2", "--gamma", "1", "--T", "8", "--weights", EXTREME,
                                "--x", "0.5", "--json"), setup=("extreme.csv",)),
    Case("spike weights 1e300", ("derive", "spike", "--delta", "1/2", "--gamma", "1", "--T", "8", "--weights", EXTREME,
                                 "--signs", "iid", "--mu2", "2", "--json"), setup=("extreme.csv",)),
    Case("weights 1e300", _w(EXTREME, 8, "--signs", "iid"), setup=("extreme.csv",)),
    # long arguments are not echoed whole; a key given twice in a JSON sweep file
    Case("signs 100000 characters", _w("mean", 4, "--signs", LONG)),
    Case("scheme 100000 characters", _w(LONG, 4)),
    Case("mask 100000 characters", _w("causal", 4, "--mask", LONG)),
    Case("sweep value 1e6 characters", ("verify", "sweep", "{tmp}/longvalue.json", "--results", "{tmp}/r-{case}.jsonl",
                                        "--json"), setup=("longvalue.json",)),
    Case("sweep json key twice", ("verify", "sweep", "{tmp}/twice.json", "--results", "{tmp}/r-{case}.jsonl", "--json"),
         setup=("twice.json",)),
    # issue 37. Silent wrong answers: fewer digits never make a wrong formula agree; a nearly degenerate R's optimum
    *[Case(f"formula digits {digits}: an overlap of 3/4 for 1/3", _formula(
        "mu2/(mu2 + 1)", "sample.overlap", "--where", "delta=1, gamma=1, kappa=1, alpha=1, mu2=3", "--digits", digits),
        "counterexample") for digits in ("1", "3", "5")],
    Case("formula digits 1: a bulk edge 50% off", _formula("6*kappa", "bulk.population_right_edge", "--where", "delta=1",
                                                          "--digits", "1"), "counterexample"),
    Case("weights optimal markov 1e-20 digits 6", _w("optimal", 4, "--signs", "markov:1e-20", "--digits", "6"), "answered",
         never="degenerate"),
    Case("weights optimal markov 1e-900", _w("optimal", 4, "--signs", "markov:1e-900", "--digits", "6"), "either",
         never="degenerate"),
    # expressions the checker's own walk could not read
    *[Case(f"formula {name}", _formula(expr)) for name, expr in (
        ("Rational(1, 0)", "Rational(1, 0)"), ("Min()", "Min()"), ("Max()", "Max()"), ("Rational(1, 2, 3)", "Rational(1, 2, 3)"),
        ("1998 plus signs", "+" * 1998 + "1"), ("600 powers", "delta" + "**1" * 600), ("331 sums", "delta" + "+delta" * 330))],
    # hostile sizes and limits: refused at once, the limit named
    *[Case(f"mc max-memory {name}", _mc(**{"max-memory": size})) for name, size in (
        ("1e999999999", "1e999999999"), ("5000 digits", "9" * 5000), ("beyond the machine", "1e30"))],
    Case("mc ATTENTION_RMT_MAX_MEMORY 1e999999999", _mc(), env=(("ATTENTION_RMT_MAX_MEMORY", "1e999999999"),)),
    Case("formula ATTENTION_RMT_MAX_MEMORY 5000 digits", _formula("mu2/(mu2 + delta)", "sample.overlap", "--mc"),
         env=(("ATTENTION_RMT_MAX_MEMORY", "9" * 5000),)),
    *[Case(f"spike T=1 {name}", ("derive", "spike", *args, "--T", "1", "--weights", "mean", "--signs", "iid", "--json"))
      for name, args in (
          ("reuse 1e6", ("--delta", "1000000", "--gamma", "1", "--mu2", "3")),
          ("gamma 1e-6", ("--delta", "1", "--gamma", "1/1000000", "--mu2", "3")),
          ("delta 1e12", ("--delta", "1000000000000", "--gamma", "1/1000000", "--mu2", "3")),
          ("reuse 1e-3 digits 1000", ("--delta", "1/1000", "--gamma", "1", "--mu2", "3", "--digits", "1000")),
          ("mu2 1e5", ("--delta", "1/2", "--gamma", "1/4", "--mu2", "100000")))],
    *[Case(f"bulk T=1 {name}", ("derive", "bulk", *args, "--T", "1", "--weights", "mean", "--json")) for name, args in (
        ("reuse 1e6", ("--delta", "1000000", "--gamma", "1", "--x", "0.5")),
        ("digits 1000", ("--delta", "1", "--gamma", "1", "--x", "0.5", "--digits", "1000")),
        ("x 1e6", ("--delta", "1/2", "--gamma", "1/4", "--x", "1000000")))],
    Case("summarize a header of 10^6 tasks", ("verify", "sweep", "--summarize", "{tmp}/million.results.jsonl", "--figures",
                                               "", "--json"), "answered", setup=("million.results.jsonl",)),
    Case("max-tasks 1 of 10^6 tasks", ("verify", "sweep", "{tmp}/million.json", "--results", "{tmp}/r-{case}.jsonl",
                                       "--max-tasks", "1", "--workers", "1", "--json"), "answered", setup=("million.json",)),
    # forged records: what no run of the sweep could write
    *[Case(f"{verb} {damage}", (("verify", "sweep", "{tmp}/tiny.toml", "--results", f"{{tmp}}/{damage}.jsonl",
                                 "--max-tasks", "1", "--json") if verb == "resume" else
                                ("verify", "sweep", "--summarize", f"{{tmp}}/{damage}.jsonl", "--figures", "", "--json")),
           "refused", setup=("tiny.toml", f"{damage}.jsonl"))
      for verb in ("resume", "summarize") for damage in ("negative-eigenvalue", "huge-edge", "unsorted", "overlaps-sum",
                                                         "typed-code-version", "bool-outliers")],
    # cache poisoning: a changed entry is never served, a forged one never runs, a shared folder is never read
    Case("mc from a changed cache entry", _mc(), "answered", setup=("cache-changed",),
         env=(("ATTENTION_RMT_CACHE_DIR", "{tmp}/cache-changed"),), never="0.123456789"),
    Case("mc from a cache others can write", _mc(), "answered", setup=("cache-shared",),
         env=(("ATTENTION_RMT_CACHE_DIR", "{tmp}/cache-shared"),), never="0.123456789"),
    Case("mc from forged fields", _mc(), "answered", setup=("cache-typed",),
         env=(("ATTENTION_RMT_CACHE_DIR", "{tmp}/cache-typed"),)),
    Case("mc from a FIFO in the cache", _mc(), "answered", setup=("cache-fifo",),
         env=(("ATTENTION_RMT_CACHE_DIR", "{tmp}/cache-fifo"),)),
    Case("spike from a forged source", _spike(), "answered", setup=("cache-forged",),
         env=(("ATTENTION_RMT_CACHE_DIR", "{tmp}/cache-forged"),), leaves=(("absent", "{tmp}/ran"),)),
    Case("spike with an empty cache variable", _spike(), "answered",
         env=(("ATTENTION_RMT_CACHE_DIR", ""), ("XDG_CACHE_HOME", "{tmp}/xdg")), leaves=(("empty", "{tmp}/cwd"),)),
    # issue 44: the model's own law inside older commands; work at a limit's edge; signals inside kernels
    Case("spike --d 4 (no bulk at that d)", ("derive", "spike", "--delta", "4", "--gamma", "4", "--mu2", "4", "--T", "8",
                                             "--weights", "mean", "--signs", "iid", "--d", "4", "--draws", "4", "--json")),
    Case("spike --d 2", ("derive", "spike", "--delta", "1", "--gamma", "1", "--mu2", "4", "--T", "2", "--weights",
                         "mean", "--signs", "iid", "--d", "2", "--json")),
    Case("spike --digits 1000 --d 40", ("derive", "spike", "--delta", "1", "--gamma", "1", "--mu2", "4", "--T", "2",
                                        "--weights", "mean", "--signs", "iid", "--d", "40", "--digits", "1000", "--json"),
         "either", fast=False),
    Case("weights optimal anti-correlated", _w("optimal", 4, "--signs", "markov:-1/10"), "answered"),
    Case("weights 1,-1 and 0,0 name the same parameter", _w("1,-1", 2)),
    Case("spike --T 1e5 --d 40", ("derive", "spike", "--delta", "1/2", "--gamma", "4", "--mu2", "4", "--T", "100000",
                                  "--weights", "mean", "--signs", "iid", "--d", "40", "--draws", "2", "--json"),
         "either", fast=False),
    Case("spike --T 2000 causal --d 40", ("derive", "spike", "--delta", "1/2", "--gamma", "4", "--mu2", "4", "--T",
                                          "2000", "--weights", "causal", "--signs", "iid", "--d", "40", "--draws", "2",
                                          "--json"), "either", fast=False),
    Case("mc --V 2", _mc(V="2"), "refused", fast=False),
    Case("mc gauss T 200 at d 4", _mc(d="4", V="6", N="10", T="200", signs="gauss:1/2", k="1"), "refused", fast=False),
    Case("mc mu2 1e6 with the model's law", _mc(mu2="1000000", seeds="3", law="finite-vocabulary"), "refused",
         fast=False),
    # a cold theory of about 17 CPU-s, in its own cache: the signal arrives inside the populations' kernels
    Case("SIGTERM to mc in the root-token kernel", _mc(mu2="3", seeds="3", law="finite-vocabulary"), "stopped",
         fast=False, stop="SIGTERM", after=8.0, env=(("ATTENTION_RMT_CACHE_DIR", "{tmp}/cache-sigterm"),)),
    # an output beyond a file-size limit or on a full disk
    Case("bulk plot beyond the size limit", ("derive", "bulk", "--delta", "1/2", "--gamma", "1/4", "--kappa", "1/8", "--x",
                                             "0.1,0.5,1", "--plot", "{tmp}/fs-plot/b.png", "--json"),
         fsize=3000, leaves=(("clean", "{tmp}/fs-plot"),)),
    Case("bulk plot on a full disk", ("derive", "bulk", "--delta", "1/2", "--gamma", "1/4", "--kappa", "1/8", "--x",
                                      "0.1,0.5,1", "--plot", "{tmp}/full/b.png", "--json"),
         fast=False, disk="full", leaves=(("clean", "{tmp}/full"),)),
    # a signal in the first moments of every command (after Python's own start-up: before it, no code of ours runs)
    *[Case(f"{stop} {argv[1]} at 0.05 s", argv, "stopped", fast=False, stop=stop, after=0.05, setup=setup)
      for stop, argv, setup in (
          ("SIGINT", _w("optimal", 6, "--signs", "markov:1/2"), ()),
          ("SIGTERM", ("derive", "bulk", "--delta", "1/2", "--gamma", "1/4", "--kappa", "1/8", "--x", "0.5", "--json"), ()),
          ("SIGINT", _spike(), ()), ("SIGTERM", ("derive", "formulas", "--json"), ()), ("SIGTERM", _mc(), ()),
          ("SIGINT", ("verify", "ladder", "--d", "40,80", "--seeds", "2", "--json"), ()),
          ("SIGTERM", ("verify", "attention-gap", "--d", "40,80", "--seeds", "2", "--json"), ()),
          ("SIGINT", _formula("mu2/(mu2 + delta)"), ()),
          ("SIGTERM", ("verify", "sweep", "{tmp}/tiny.toml", "--results", "{tmp}/r-signal.jsonl", "--json"), ("tiny.toml",)),
          ("SIGINT", ("verify", "claims", "--quick", "--notes", "", "--figures", "", "--json"), ()))],
]


def argv_of(case: Case, tmp: Path) -> list[str]:
    """The case's command line with its folder filled in (``{case}`` names files of its own)."""
    slug = "".join(c if c.isalnum() else "-" for c in case.name)
    return [a.replace("{tmp}", str(tmp)).replace("{case}", slug) for a in case.argv]


def env_of(case: Case, tmp: Path) -> dict:
    """The environment of a case's own process: this one's with the case's ``env`` (``{tmp}`` filled in)."""
    return {**os.environ, **{name: value.replace("{tmp}", str(tmp)) for name, value in case.env}}


def cwd_of(case: Case, tmp: Path) -> Path:
    """Where a case runs: ``{tmp}``, or for a case with an ``env`` the empty folder ``{tmp}/cwd`` (made here), in which
    it must leave nothing (a cache folder named by an empty variable had gone to the working folder)."""
    if not case.env:
        return tmp
    (tmp / "cwd").mkdir(exist_ok=True)
    return tmp / "cwd"


_STOPPED = re.compile(r"^(derive|verify): interrupted by (SIGINT|SIGTERM)$")
_PROGRESS = re.compile(r"^verify sweep: \d+/\d+ tasks, \d+ s$|\d+%\|.*\| .*elapsed, about .* left")
"""A progress report of a run (a sweep's line every 10 s of the clock, a bar after 2 s): how many come before a
refusal depends on the machine's speed, so a refusal is judged without them."""


def classify(returncode, out: str, err: str, expect: str) -> tuple[str, str]:
    """``(outcome, why)`` of a finished command: ``refused`` (exit 2, one short line on stderr naming a
    parameter besides any progress reports, nothing on stdout), ``answered`` (exit 0 and one JSON document), ``stopped`` (exit 130 or 143 after
    a signal, its last line on stderr saying so, nothing on stdout), else ``failed``."""
    if "Traceback" in err:
        return "failed", "traceback: " + err.strip().splitlines()[-1][:160]
    if expect == "stopped":
        lines = err.strip().splitlines()
        if returncode not in (130, 143) or out or not lines or not _STOPPED.match(lines[-1]) or err.count("interrupted") != 1:
            return "failed", f"not a clean stop: exit {returncode}, stdout {len(out)} chars, stderr {err[-160:]!r}"
        return "stopped", lines[-1]
    if expect == "counterexample":
        try:
            verdict = json.loads(out).get("verdict") if returncode in (0, 1) else None
        except ValueError:
            verdict = None
        if returncode != 1 or verdict != "counterexample":
            return "failed", f"the wrong formula was not refuted: exit {returncode}, verdict {verdict!r} {err[-120:]!r}"
        return "answered", "counterexample"
    if returncode == 2:
        lines = [line for line in err.strip().splitlines() if not _PROGRESS.search(line)]
        if out or len(lines) != 1 or ": error: " not in lines[0] or len(lines[0]) > 400:
            return "failed", f"refusal not one short line on stderr (stdout {len(out)} chars): {err[:160]!r}"
        return ("refused" if expect in ("refused", "either") else "failed"), lines[0][:200]
    if returncode == 0:
        try:
            json.loads(out)
        except ValueError:
            return "failed", "exit 0 without one JSON document on stdout"
        if expect == "refused":
            return "failed", "exit 0 (a refusal was expected)"
        return "answered", "exit 0"
    return "failed", f"exit status {returncode}: {err.strip()[-160:]!r}"


def check_leaves(case: Case, tmp: Path) -> str | None:
    """What is wrong with the files ``case`` left (``None`` if nothing): ``absent`` paths must not exist, a
    ``whole`` results file (if any) must end with a whole record, a ``clean`` folder must hold no file that is part
    of an output (a temporary ``.part``, a probe, an empty file)."""
    from verify.sweeps.results import scan_results

    for kind, template in case.leaves:
        path = Path(template.replace("{tmp}", str(tmp)))
        if kind == "absent" and (path.exists() or path.is_symlink()):
            return f"{path.name} was left ({path.stat().st_size} bytes)"
        if kind == "whole" and path.exists():
            scan = scan_results(path.read_bytes(), str(path))
            if scan.torn or scan.header is None:
                return f"{path.name} ends in a torn line ({scan.torn} bytes) or holds no header"
        if kind == "empty" and path.is_dir() and any(path.iterdir()):
            return f"{path.name} holds {sorted(p.name for p in path.iterdir())[:3]}"
        if kind == "clean" and path.is_dir():
            partial = [p.name for p in path.rglob("*") if p.is_file() and (
                p.name.endswith(".part") or p.name.startswith(".probe-") or p.stat().st_size == 0)]
            if partial:
                return f"partial files left in {path.name}: {partial[:3]}"
    return None


def run_in_process(case: Case, tmp: Path) -> tuple[str, str]:
    """Run ``case`` through the command line's ``main`` in this process (stdout and stderr captured, under its
    file-size limit); an exception that escapes ``main`` is a failure (the traceback a user would see)."""
    import contextlib
    import io
    import resource
    import traceback

    from derive.cli import main as derive_main
    from verify.cli import main as verify_main

    argv = argv_of(case, tmp)
    if case.env:
        return _run_own(case, argv, tmp)
    out, err = io.StringIO(), io.StringIO()
    limit = resource.getrlimit(resource.RLIMIT_FSIZE)
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            if case.fsize is not None:
                resource.setrlimit(resource.RLIMIT_FSIZE, (case.fsize, limit[1]))
            status = (derive_main if argv[0] == "derive" else verify_main)(argv[1:])
        except BaseException:  # noqa: BLE001 (anything that escapes is the failure being looked for)
            err.write(traceback.format_exc())
            status = None
        finally:
            resource.setrlimit(resource.RLIMIT_FSIZE, limit)
    return _judged(case, tmp, status, out.getvalue(), err.getvalue())


def _judged(case: Case, tmp: Path, status, out: str, err: str) -> tuple[str, str]:
    """:func:`classify`, then the files the case left and the text its stdout must not hold."""
    outcome, why = classify(status, out, err, case.expect)
    wrong = check_leaves(case, tmp)
    if not wrong and case.never is not None and case.never in out:
        wrong = f"stdout holds {case.never!r}"
    return ("failed", wrong) if wrong and outcome != "failed" else (outcome, why)


def _run_own(case: Case, argv: list, tmp: Path) -> tuple[str, str]:
    """A case with an ``env``, in a process of its own (``python -m derive.cli ...``), called hung by the work it has
    done (:func:`processes.run`), never by the clock."""
    import sys

    from processes import Hung, run

    try:
        done = run([sys.executable, "-m", f"{argv[0]}.cli", *argv[1:]], capture_output=True, text=True,
                   env=env_of(case, tmp), cwd=cwd_of(case, tmp), cpu=300)
    except Hung as exc:
        return "failed", str(exc)
    return _judged(case, tmp, done.returncode, done.stdout, done.stderr)


def _trial_model(d, V, N, T, signs):
    from derive import Model

    return Model(d=d, V=V, N=N, T=T, signs=signs, mu2=1)


@dataclass(frozen=True)
class ApiCase:
    """A call of the public API that must raise ``ParameterError`` naming ``parameter`` (``None``: must answer)."""

    name: str
    function: str                     # "module:name"
    args: tuple = ()
    kwargs: tuple = ()                # (key, value) pairs
    parameter: str | None = None


API_CASES = [
    ApiCase("Model centered='no'", "derive.model.spec:Model", (),
            (("d", 20), ("V", 40), ("N", 80), ("T", 2), ("signs", "iid"), ("mu2", 1), ("centered", "no")), "centered"),
    ApiCase("outliers_at centered='no'", "derive.gaussian.outliers:outliers_at", ("1/2", "1/4", "1/2", "1/4", "3"),
            (("centered", "no"),), "centered"),
    ApiCase("spike centered='no'", "derive.report.documents:spike", ("1/2", "1/4", "1/2", "1/4", "3"),
            (("centered", "no"),), "centered"),
    ApiCase("run_trial N x T tokens", "verify.montecarlo.trials:run_trial",
            (_trial_model(2, 2, 10**8, 10, "iid"),), (("weights", [0.1] * 10), ("k", 1)), "N"),
    ApiCase("run_trials seeds 1e12", "verify.montecarlo.trials:run_trials",
            (_trial_model(20, 40, 80, 2, "iid"),), (("weights", [0.5, 0.5]), ("seeds", 10**12)), "seeds"),
    ApiCase("run_trial gauss T 1e5", "verify.montecarlo.trials:run_trial",
            (_trial_model(4, 6, 10, 100000, "gauss:1/2"),), (("weights", [1.0] * 100000),), "T"),
    ApiCase("run_trial not a Model", "verify.montecarlo.trials:run_trial", ((20, 40, 80, 2, "iid"),), (), "model"),
    ApiCase("pooling mean T 3000 markov", "derive.model.pooling:pooling", ("mean", 3000, "markov:1/2"), (), None),
    ApiCase("pooling optimal T 1e5 prefix", "derive.model.pooling:pooling", ("optimal", 100000, "prefix:3"), (), None),
    ApiCase("pooling optimal T 64 markov", "derive.model.pooling:pooling", ("optimal", 64, "markov:1/2"), (), "T"),
    ApiCase("pooling causal T 3000", "derive.model.pooling:pooling", ("causal", 3000, None), (), "T"),
    ApiCase("pooling bad signs object", "derive.model.pooling:pooling", ("mean", 4, 3.5), (), "signs"),
    ApiCase("parse_rational arabic", "derive.numbers:parse_rational", ("\u0663", "delta"), (), "delta"),
    ApiCase("read_regular_file /dev/zero", "derive.files:read_regular_file", ("/dev/zero", "signs", 10), (), "signs"),
    ApiCase("limit_blas_threads 0", "verify.threads:limit_blas_threads", (0,), (), "threads"),
    ApiCase("sample_threshold double root", "derive.gaussian.outliers:sample_threshold", (1, 1, 1), (), None),
    # issue 28: the command line's ranges hold in Python, and the formula checker's bounds
    ApiCase("outliers_at delta 10**100000", "derive.gaussian.outliers:outliers_at", (10**100000, 1, 1, 1, 1), (), "delta"),
    ApiCase("outliers_at kappa 1e40", "derive.gaussian.outliers:outliers_at", ("1/2", "1/4", 1, 10**40, 1), (), "kappa"),
    ApiCase("outliers_at gamma 1e-20", "derive.gaussian.outliers:outliers_at", ("1/2", "1e-20", 1, 1, 1), (), "gamma"),
    ApiCase("check_formula bare symbol", "verify.formula:check_formula", ("alpha_over_kappa.optimal.prefix", "L"),
            (("examples", 5),), None),
    ApiCase("check_formula H(10**9)", "verify.formula:check_formula", ("sample.overlap", "H(10**9)"), (), "expr"),
    ApiCase("check_formula where twice", "verify.formula:check_formula", ("sample.overlap", "delta"),
            (("where", "delta=1/2, delta=1/3"),), "where"),
    ApiCase("check_formula where T 1e9", "verify.formula:check_formula", ("weights.causal", "H(T)"),
            (("where", {"T": "1000000000"}),), "where"),
    # issue 37: misuse of the public API
    ApiCase("population_overlap at the pole of its formula", "derive.gaussian.outliers:population_overlap", (1, 1, 1), (),
            None),
    ApiCase("population_overlap continued, at its pole", "derive.gaussian.outliers:population_overlap", (1, 1, 1),
            (("continued", True),), "theta"),
    ApiCase("population_outlier below its threshold", "derive.gaussian.outliers:population_outlier", (1, 1, 1), (),
            "theta"),
    ApiCase("sample_outlier below its threshold", "derive.gaussian.outliers:sample_outlier", (1, 1, 1, 1), (), "theta"),
    *[ApiCase(f"densities {name}", "attack_cases:law_densities", (xs,), (), "x") for name, xs in (
        ("[nan]", [float("nan")]), ("[inf]", [float("inf")]), ("'0.5'", "0.5"), ("[1e300]", [1e300]), ("0.5", 0.5))],
    ApiCase("parse_size 1e999999999", "verify.montecarlo.memory:parse_size", ("1e999999999",), (), "max-memory"),
    ApiCase("parse_size 5000 digits", "verify.montecarlo.memory:parse_size", ("9" * 5000,), (), "max-memory"),
    *[ApiCase(f"check_formula {name}", "verify.formula:check_formula", ("sample.overlap", expr), (("examples", 5),),
              "expr") for name, expr in (("Rational(1, 0)", "Rational(1, 0)"), ("Max()", "Max()"),
                                         ("1998 plus signs", "+" * 1998 + "1"))],
    ApiCase("pooling optimal markov 1e-900", "derive.model.pooling:pooling", ("optimal", 4, "markov:1e-900"), (), None),
    # issue 44: user objects that never end, lie or change; numbers too long to print
    ApiCase("Model weights itertools.count(1)", "derive.model.spec:Model", (),
            (("T", 4), ("weights", __import__("itertools").count(1))), "weights"),
    ApiCase("Model weights a set", "derive.model.spec:Model", (), (("T", 2), ("weights", {1, 2})), "weights"),
    ApiCase("Model weights 5000-digit integer", "derive.model.spec:Model", (), (("weights", [10**5000, 1]),), "weights"),
    ApiCase("weights digits=[1]", "attack_cases:pooled_digits", ([1],), (), "digits"),
    ApiCase("pooling optimal markov:-1/10", "derive.model.pooling:pooling", ("optimal", 4, "markov:-1/10"), (), None),
    *[ApiCase(f"user sampler that {how}", "attack_cases:user_sample", (how,), (), "signs")
      for how in ("ignores its rng", "is not its R")],
    ApiCase("user family changed after use", "attack_cases:changed_family", (), (), None),
    ApiCase("sweep grid naming mu2 twice", "verify.sweeps.spec:normalize", (
        {"model": {"d": 8, "delta": "1/2", "gamma": "1/2", "T": 2, "signs": "iid", "weights": "mean"},
         "grid": [["mu2", [1, 2]], ["mu2", [3]]]},), (), "grid.mu2"),
]


def pooled_digits(digits):
    """The pooling of a small model at ``digits``: a malformed precision reaches the cache key otherwise."""
    import derive

    return derive.weights(derive.Model(T=2, weights="optimal", signs="markov:1/2"), digits=digits)


class _Family:
    name = "attack"

    def __init__(self, r=0.0, how=None):
        self.r, self.how = r, how

    def R(self, T):
        return [[1 if t == u else self.r for u in range(T)] for t in range(T)]

    def sample(self, rng, N, T):
        import numpy as np

        if self.how == "ignores its rng":
            rng = np.random.default_rng()
        xi = rng.choice([-1, 1], size=(N, T))
        return np.repeat(xi[:, :1], T, axis=1) if self.how == "is not its R" else xi


def user_sample(how):
    """The first draw of a user's family whose sampler ``how`` (ignores its rng, or samples another law than its R)."""
    import numpy as np

    from derive.model.families import as_family

    return as_family(_Family(how=how)).sample(np.random.default_rng(0), 4, 3)


def changed_family():
    """A user's family changed after a first answer: the second Model gets the new R's alpha, never the old one."""
    import sympy as sp

    import derive

    family = _Family(r=sp.Rational(1, 2))
    first = derive.weights(derive.Model(T=3, weights="mean", signs=family)).alpha
    family.r = 0
    second = derive.weights(derive.Model(T=3, weights="mean", signs=family)).alpha
    if (first, second) != (sp.Rational(2, 3), sp.Rational(1, 3)):
        raise AssertionError(f"alpha {first} then {second}; expected 2/3 (R with 1/2 off the diagonal), then 1/3 (R = I)")


def law_densities(xs):
    """The densities of the model's exact law (one nonzero weight) at ``xs``: the API a misuse reaches."""
    import derive

    return derive.bulk(derive.Model(delta="1/2", gamma="1/4", T=1, weights="mean", signs="iid")).densities(xs)


def run_api(case: ApiCase) -> tuple[str, str]:
    """``(outcome, why)`` of an API case: ``refused`` (the named ``ParameterError``), ``answered``, or ``failed``."""
    import importlib
    import traceback

    from derive.errors import ParameterError

    module, name = case.function.split(":")
    function = getattr(importlib.import_module(module), name)
    try:
        function(*case.args, **dict(case.kwargs))
    except ParameterError as exc:
        if exc.parameter == case.parameter:
            return "refused", str(exc)[:200]
        return "failed", f"ParameterError naming {exc.parameter!r}, expected {case.parameter!r}: {exc}"[:300]
    except BaseException:  # noqa: BLE001 (anything else is the failure being looked for)
        return "failed", "traceback: " + traceback.format_exc().strip().splitlines()[-1][:200]
    if case.parameter is None:
        return "answered", "returned"
    return "failed", f"returned; a ParameterError naming {case.parameter!r} was expected"


def _tiny_lines(root: Path) -> list[str]:
    """The header and records of the tiny sweep, run once per folder (fast: d = 32)."""
    path = root / "tiny.results.jsonl"
    if not path.exists():
        _partial_run(root / "tiny.toml", path, 4)
    return path.read_text().splitlines()


def _partial_run(sweep_file: Path, results: Path, tasks: int) -> None:
    import io

    from verify.sweeps import executors
    from verify.sweeps.run import run_sweep
    from verify.sweeps.spec import load_sweep

    with executors.InProcess() as ex:
        run_sweep(load_sweep(sweep_file), results, ex, max_tasks=tasks, log=io.StringIO())


def _damaged(root: Path, damage: str) -> str:
    lines = [json.loads(x) for x in _tiny_lines(root)]
    last = lines[-1]
    if damage == "empty-result":
        last["result"] = {}
    elif damage == "nan-value":
        return "\n".join(json.dumps(x) for x in lines[:-1]) + "\n" + json.dumps(last).replace(
            str(last["result"]["top_eigenvalues"][0]), "NaN") + "\n"
    elif damage == "foreign-record":
        last["point"] = {"weights": "mean", "mu2": "7", "gamma": "1/4"}
        last["result"]["top_eigenvalues"] = [9.0, 8.0, 7.0]
    elif damage == "edited-seeds":
        lines[0]["sweep_results"]["sweep"]["sweep"]["seeds"] = 1
    elif damage == "negative-key":
        last["task"] = [-1, 0, 0, 0]
    elif damage == "bad-point":
        last["point"]["mu2"] = "1e400"
    elif damage == "negative-eigenvalue":
        last["result"]["top_eigenvalues"][0] = -0.5
    elif damage == "huge-edge":
        last["result"]["top_eigenvalues"][0] = last["result"]["bulk_edge"] = 5e307
    elif damage == "unsorted":
        last["result"]["top_eigenvalues"].reverse()
    elif damage == "overlaps-sum":
        last["result"]["overlaps"] = [0.6, 0.6, 0.0]
    elif damage == "typed-code-version":
        last["code_version"] = 7
    elif damage == "bool-outliers":
        last["result"]["outliers_predicted"] = True
    return "\n".join(json.dumps(x) for x in lines) + "\n"


def prepare(root: Path, names) -> None:
    """Make the files ``names`` in ``root`` (each once)."""
    import numpy as np

    tiny, axis = (Path(__file__).resolve().parents[1] / "examples" / "sweeps" / name for name in ("tiny.toml", "axis.toml"))
    sweep_base = {"sweep": {"root_seed": 1, "seeds": 1, "outputs": ["top_eigenvalues"], "k": 1},
                  "model": {"d": 16, "delta": "1/2", "T": 2, "signs": "iid", "centered": True},
                  "grid": {"weights": ["mean"], "mu2": [1], "gamma": ["1/4"]}}

    def sweep_with(section, name, value):
        data = json.loads(json.dumps(sweep_base))
        data[section][name] = value
        return json.dumps(data)

    for name in names:
        p = root / name
        if p.exists() or p.is_symlink():
            continue
        if name == "row10k.csv":
            p.write_text(",".join(["0.5"] * 10000) + "\n")
        elif name == "row100k.csv":
            p.write_text(",".join(["1"] * 100000) + "\n")
        elif name == "big60.csv":
            with open(p, "w") as f:
                line = ",".join(["0.123456789"] * 10) + "\n"
                f.write(line * (60 * 2**20 // len(line)))
        elif name == "rows3m.csv":
            p.write_text("1\n" * 3_000_000)
        elif name in ("fifo.csv", "fifo.toml"):
            os.mkfifo(p)
        elif name == "dir.csv":
            p.mkdir()
        elif name == "huge.npy":
            # a header promising 10^8 float64 numbers, and 8 bytes of data
            header = "{'descr': '<f8', 'fortran_order': False, 'shape': (100000000,), }"
            header += " " * (118 - len(header)) + "\n"
            p.write_bytes(b"\x93NUMPY\x01\x00" + len(header).to_bytes(2, "little") + header.encode() + b"\0" * 8)
        elif name == "obj.npy":
            p.write_bytes(b"\x93NUMPY\x01\x00v\x00{'descr': '|O', 'fortran_order': False, 'shape': (2,), }"
                          + b" " * 59 + b"\n" + b"\x80\x04N.")
        elif name == "nan.csv":
            p.write_text("nan,1\n")
        elif name == "ragged.csv":
            p.write_text("1,2\n3\n")
        elif name == "binary.csv":
            p.write_bytes(bytes(range(256)) * 4)
        elif name == "R2000.npy":
            np.save(p, np.eye(2000))
        elif name == "tiny.toml":
            p.write_text(tiny.read_text())
        elif name == "tiny.results.jsonl":
            prepare(root, ["tiny.toml"])
            _tiny_lines(root)
        elif name == "axis.results.jsonl":
            prepare(root, ["axis.toml"])
            _partial_run(root / "axis.toml", p, 4)
        elif name == "million.results.jsonl":  # before the damaged files below, which end in .jsonl too
            from verify.sweeps.results import ResultsWriter
            from verify.sweeps.spec import Sweep

            ResultsWriter(p, Sweep(MILLION)).close()  # the header alone
        elif name.endswith(".jsonl"):
            prepare(root, ["tiny.toml"])
            p.write_text(_damaged(root, name[:-len(".jsonl")]))
        elif name == "nested.json":
            p.write_text("[" * 100000 + "]" * 100000)
        elif name == "bigint.json":
            p.write_text(json.dumps(sweep_base).replace('"root_seed": 1', '"root_seed": ' + "7" * 5000))
        elif name == "seeds.json":
            p.write_text(sweep_with("sweep", "seeds", 10 ** 12))
        elif name == "num.json":
            data = json.loads(json.dumps(sweep_base))
            data["grid"]["mu2"] = {"from": 0, "to": 1, "num": 10 ** 9}
            p.write_text(json.dumps(data))
        elif name == "mu2.json":
            data = json.loads(json.dumps(sweep_base))
            data["grid"]["mu2"] = [1, "1e300"]
            p.write_text(json.dumps(data))
        elif name == "bigd.json":
            p.write_text(sweep_with("model", "d", 200000))
        elif name == "axis.toml":
            p.write_text(axis.read_text())
        elif name == "stoppable.json":
            # minutes of tasks of a few ms on every core: records are being written when the signal comes
            data = json.loads(json.dumps(sweep_base))
            data["sweep"]["seeds"] = 10000
            data["grid"]["mu2"] = [1, 2]
            data["model"]["d"] = 40
            p.write_text(json.dumps(data))
        elif name in ("negative.npy", "negativeR.npy", "truncated.npy"):
            shape = {"negative.npy": "(-4,)", "negativeR.npy": "(-2, -2)", "truncated.npy": "(4,)"}[name]
            header = "{'descr': '<f8', 'fortran_order': False, 'shape': %s, }" % shape
            header += " " * (118 - len(header)) + "\n"
            data = np.ones(4).tobytes()[:20 if name == "truncated.npy" else 32]
            p.write_bytes(b"\x93NUMPY\x01\x00" + len(header).to_bytes(2, "little") + header.encode() + data)
        elif name == "extreme.csv":
            p.write_text("1e300,1,-1e300,1,1,1,1,1\n")
        elif name == "longvalue.json":
            p.write_text(sweep_with("model", "signs", "a" * 1_000_000))
        elif name == "twice.json":
            p.write_text(json.dumps(sweep_base).replace('"seeds": 1', '"seeds": 1, "seeds": 2'))
        elif name == "million.json":
            p.write_text(json.dumps(MILLION))
        elif name.startswith("cache-"):
            _poisoned_cache(p, name[len("cache-"):])
        else:
            raise ValueError(f"no recipe for {name}")


MILLION = {"sweep": {"root_seed": 1, "seeds": 100, "outputs": ["top_eigenvalues", "overlaps"], "k": 1},
           "model": {"d": 16, "delta": "1/2", "T": 2, "signs": "iid", "centered": True, "weights": "mean"},
           "grid": {"mu2": {"from": 0, "to": 10, "num": 100}, "gamma": {"from": "1/4", "to": 1, "num": 100}}}
"""A sweep of 10^6 tasks (10^4 grid points of 100 seeds) whose cells are tiny."""


def _poisoned_cache(folder: Path, how: str) -> None:
    """A derivation cache filled by the command it will serve (``verify mc`` of :func:`_mc`, ``derive spike`` of
    :func:`_spike` for ``forged``), then poisoned: ``changed`` an entry's value changed (its digest not), ``shared``
    a value changed with its digest and the folder writable by all, ``typed`` fields of the wrong types with their
    digest, ``fifo`` an entry made a FIFO, ``forged`` a generated source raising ``SystemExit(7)`` and writing a file,
    with its digest."""
    import hashlib
    import sys

    from processes import run

    argv = _spike() if how == "forged" else _mc()
    run([sys.executable, "-m", f"{argv[0]}.cli", *argv[1:]], capture_output=True, check=True, cpu=300,
        env={**os.environ, "ATTENTION_RMT_CACHE_DIR": str(folder)})
    entry = next(folder.glob("derive-*/outliers.py" if how == "forged" else "derive-*/pooling-*.json"))

    def forge(text: str) -> None:
        entry.write_text(text)
        entry.with_name(entry.name + ".sha256").write_text(hashlib.sha256(text.encode()).hexdigest() + "\n")

    if how == "forged":
        forge(f"import mpmath\nopen({str(folder.parent / 'ran')!r}, 'w')\nraise SystemExit(7)\n")
        return
    stored = json.loads(entry.read_text())
    if how == "changed":
        stored["value"]["weights_text"] = ["0.123456789"] * len(stored["value"]["weights_text"])
        entry.write_text(json.dumps(stored))
    elif how == "shared":
        stored["value"]["weights_text"] = ["0.123456789"] * len(stored["value"]["weights_text"])
        forge(json.dumps(stored))
        folder.chmod(0o777)
    elif how == "typed":
        stored["value"] = {"weights": "abc", "weights_text": 7, "alpha": [], "kappa": None, "W": {}}
        forge(json.dumps(stored))
    elif how == "fifo":
        entry.unlink()
        os.mkfifo(entry, 0o600)
