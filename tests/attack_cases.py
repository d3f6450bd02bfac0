"""The attack suite's cases: hostile or oversized input to every command, each of which must end in a
clean refusal (exit 2, one line on stderr naming the parameter, nothing on stdout) or a correct answer,
never a traceback, a hang or a run over the memory limit.

``tests/test_attack.py`` runs the ``fast`` cases in-process (default suite); ``scripts/attack.py`` runs
every case in its own process under a time and memory limit and writes the counts to
``notes/reliability.md``. A case's ``argv`` may hold ``{tmp}``, the folder its ``setup`` filled.
"""
from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from pathlib import Path

__all__ = ["Case", "CASES", "ApiCase", "API_CASES", "prepare", "argv_of", "classify", "run_in_process", "run_api"]


@dataclass(frozen=True)
class Case:
    name: str
    argv: tuple                       # ("derive" | "verify", subcommand, options...)
    expect: str = "refused"           # "refused" | "answered" | "either"
    fast: bool = True                 # in the default suite (in-process, well under a second)
    setup: tuple = field(default=())  # names of the files prepare() makes


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
    return ("derive", "weights", "--scheme", scheme, "--T", str(T), *rest, "--json")


BIG = "9" * 1000
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
                                        "{tmp}/nan.csv/figs", "--json"), "refused",
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
]


def argv_of(case: Case, tmp: Path) -> list[str]:
    """The case's command line with its folder filled in (``{case}`` names files of its own)."""
    slug = "".join(c if c.isalnum() else "-" for c in case.name)
    return [a.replace("{tmp}", str(tmp)).replace("{case}", slug) for a in case.argv]


def classify(returncode, out: str, err: str, expect: str) -> tuple[str, str]:
    """``(outcome, why)`` of a finished command: ``refused`` (exit 2, one short line on stderr naming a
    parameter, nothing on stdout), ``answered`` (exit 0 and one JSON document), else ``failed``."""
    if "Traceback" in err:
        return "failed", "traceback: " + err.strip().splitlines()[-1][:160]
    if returncode == 2:
        lines = err.strip().splitlines()
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


def run_in_process(case: Case, tmp: Path) -> tuple[str, str]:
    """Run ``case`` through the command line's ``main`` in this process (stdout and stderr captured); an
    exception that escapes ``main`` is a failure (the traceback a user would see)."""
    import contextlib
    import io
    import traceback

    from derive.cli import main as derive_main
    from verify.cli import main as verify_main

    argv = argv_of(case, tmp)
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            status = (derive_main if argv[0] == "derive" else verify_main)(argv[1:])
        except BaseException:  # noqa: BLE001 (anything that escapes is the failure being looked for)
            err.write(traceback.format_exc())
            status = None
    return classify(status, out.getvalue(), err.getvalue(), case.expect)


@dataclass(frozen=True)
class ApiCase:
    """A call of the public API that must raise ``ParameterError`` naming ``parameter`` (``None``: must answer)."""

    name: str
    function: str                     # "module:name"
    args: tuple = ()
    kwargs: tuple = ()                # (key, value) pairs
    parameter: str | None = None


API_CASES = [
    ApiCase("run_trial centered='no'", "verify.montecarlo.trials:run_trial",
            (20, 40, 80, 2, "iid", [0.5, 0.5], 1.0), (("centered", "no"),), "centered"),
    ApiCase("run_trials centered='no'", "verify.montecarlo.trials:run_trials",
            (20, 40, 80, 2, "iid", [0.5, 0.5], 1.0), (("centered", "no"),), "centered"),
    ApiCase("outliers_at centered='no'", "derive.gaussian.outliers:outliers_at", ("1/2", "1/4", "1/2", "1/4", "3"),
            (("centered", "no"),), "centered"),
    ApiCase("spike centered='no'", "derive.cli.documents:spike", ("1/2", "1/4", "1/2", "1/4", "3"),
            (("centered", "no"),), "centered"),
    ApiCase("run_trial N x T tokens", "verify.montecarlo.trials:run_trial",
            (2, 2, 10**8, 10, "iid", [0.1] * 10, 1.0), (("k", 1),), "N"),
    ApiCase("run_trials seeds 1e12", "verify.montecarlo.trials:run_trials",
            (20, 40, 80, 2, "iid", [0.5, 0.5], 1.0), (("seeds", 10**12),), "seeds"),
    ApiCase("check_model gauss T 1e5", "verify.montecarlo.draw:check_model",
            (4, 6, 10, 100000, "gauss:1/2", [1.0] * 100000, 1.0), (), "T"),
    ApiCase("pooling mean T 3000 markov", "derive.model.attention:pooling", ("mean", 3000, "markov:1/2"), (), None),
    ApiCase("pooling optimal T 1e5 prefix", "derive.model.attention:pooling", ("optimal", 100000, "prefix:3"), (), None),
    ApiCase("pooling optimal T 64 markov", "derive.model.attention:pooling", ("optimal", 64, "markov:1/2"), (), "T"),
    ApiCase("pooling causal T 3000", "derive.model.attention:pooling", ("causal", 3000, None), (), "T"),
    ApiCase("pooling bad signs object", "derive.model.attention:pooling", ("mean", 4, 3.5), (), "signs"),
    ApiCase("parse_rational arabic", "derive.numbers:parse_rational", ("\u0663", "delta"), (), "delta"),
    ApiCase("read_regular_file /dev/zero", "derive.files:read_regular_file", ("/dev/zero", "signs", 10), (), "signs"),
    ApiCase("limit_blas_threads 0", "verify.threads:limit_blas_threads", (0,), (), "threads"),
    ApiCase("sample_threshold double root", "derive.gaussian.outliers:sample_threshold", (1, 1, 1), (), None),
]


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
        from verify.sweeps import executors
        from verify.sweeps.run import run_sweep
        from verify.sweeps.spec import load_sweep
        import io

        with executors.InProcess() as ex:
            run_sweep(load_sweep(root / "tiny.toml"), path, ex, max_tasks=4, log=io.StringIO())
    return path.read_text().splitlines()


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
    return "\n".join(json.dumps(x) for x in lines) + "\n"


def prepare(root: Path, names) -> None:
    """Make the files ``names`` in ``root`` (each once)."""
    import numpy as np

    tiny = Path(__file__).resolve().parents[1] / "examples" / "sweeps" / "tiny.toml"
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
        else:
            raise ValueError(f"no recipe for {name}")
