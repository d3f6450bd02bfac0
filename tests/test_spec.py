"""The model specification (derive.model.spec.Model): read and checked once at the boundary, exact, immutable; a
user's file is opened once per run; the public API of INTERFACE.md; the layout has no import cycle, and the vocabulary's
limit never imports its draw."""
import ast
import json
import os
import re
import sys
from fractions import Fraction
from pathlib import Path

import pytest

import derive
import processes
import verify
from derive.errors import ParameterError
from derive.model.schemes import Causal
from derive.model.spec import Model

ROOT = Path(__file__).resolve().parents[1]


def test_the_interface_example_runs_as_written():
    import mpmath

    m = derive.Model(delta="1/2", gamma="1/4", T=8, weights="causal", mask="strict", signs="prefix:3", mu2="3/2",
                     centered=True)
    w = derive.weights(m)
    assert sum(w.weights) == 1 and w.weights[-1] == 0 and w.alpha > 0 and w.kappa > 0  # strict: no weight on t = T
    with mpmath.workdps(15):
        law = derive.bulk(m)
        assert law.law == "finite-vocabulary" and law.support[-1][1] == mpmath.inf and law.atom_at_zero >= 0
        assert law.density("0.3") > 0
        ge = derive.bulk(m, law="gaussian-equivalent")
        assert ge.law == "gaussian-equivalent" and ge.density("0.3") > 0
        out = derive.spike(m, law="gaussian-equivalent")
        assert out.law == "gaussian-equivalent" and out.sample.overlap <= out.population.overlap
    assert derive.__version__ and verify.__version__ == derive.__version__


@pytest.mark.slow
def test_the_interface_examples_model_spike():
    # INTERFACE.md's derive.spike(m): seven nonzero weights, so the model's own limit from quenched populations
    # (about a minute on a fresh machine, then kept): a finite-vocabulary law with stated errors, its overlap below
    # the population level's
    import mpmath

    m = derive.Model(delta="1/2", gamma="1/4", T=8, weights="causal", mask="strict", signs="prefix:3", mu2="3/2",
                     centered=True)
    with mpmath.workdps(15):
        out = derive.spike(m)
    errors = dict(out.sample.errors)
    assert out.law == "finite-vocabulary" and out.sample.outlier
    assert 0 < errors["overlap"] < 1e-2 and out.sample.overlap + errors["overlap"] <= out.population.overlap


def test_the_model_is_exact_immutable_and_compares_by_value():
    m = Model(delta="0.5", gamma=Fraction(1, 4), mu2=2)
    assert (m.delta, m.gamma, m.mu2) == (Fraction(1, 2), Fraction(1, 4), Fraction(2))
    with pytest.raises(AttributeError):
        m.mu2 = 3
    assert m == Model(delta="1/2", gamma="0.25", mu2="2") and hash(m) == hash(Model(delta="1/2", gamma="1/4", mu2=2))
    assert m.replace(mu2=3).mu2 == 3 and m.mu2 == 2
    sizes = Model(d=600, V=1200, N=300, T=8, weights="mean", signs="prefix:3")
    assert (sizes.delta, sizes.gamma) == (Fraction(1, 2), Fraction(2))
    assert sizes.replace(d=300).delta == Fraction(1, 4)
    causal = Model(T=4, weights="causal", tau="1/2")
    assert causal.weights == Causal(tau="1/2", mask="inclusive")
    assert causal.replace(mask="strict").weights.mask == "strict"


@pytest.mark.parametrize("kwargs, parameter", [
    ({"delta": 0}, "delta"), ({"delta": "1e13"}, "delta"), ({"gamma": -1}, "gamma"), ({"mu2": "-1"}, "mu2"),
    ({"d": 10, "V": 21}, "V"), ({"d": 10, "V": 20, "delta": "1/3"}, "delta"), ({"T": 0}, "T"),
    ({"T": 2, "signs": "prefix:3"}, "signs"), ({"T": 2, "weights": "mean", "tau": 1}, "tau"),
    ({"T": 2, "weights": "causal", "mask": "both"}, "mask"), ({"weights": [0, 0]}, "weights"),
    ({"T": 3, "weights": [1, 2]}, "weights"), ({"T": 2, "weights": "mean", "kappa": 1}, "kappa"),
    ({"kappa": 0}, "kappa"), ({"alpha": -1}, "alpha"), ({"centered": "yes"}, "centered"),
])
def test_bad_input_names_its_parameter(kwargs, parameter):
    with pytest.raises(ParameterError) as err:
        Model(**kwargs)
    assert err.value.parameter == parameter


_AUDIT = """
import sys
opened = []
target = sys.argv[1]
sys.addaudithook(lambda event, args: opened.append(args[0]) if event == "open" and str(args[0]) == target else None)
from {module} import main
import contextlib, io
with contextlib.redirect_stdout(io.StringIO()):
    status = main(sys.argv[2:])
print(status, len(opened))
"""


def _opens(module: str, path: Path, argv: list) -> tuple[int, int]:
    done = processes.run([sys.executable, "-c", _AUDIT.format(module=module), str(path), *argv],
                         capture_output=True, text=True, cwd=ROOT, cpu=300)
    assert done.returncode == 0, done.stderr
    status, count = done.stdout.split()
    return int(status), int(count)


def test_a_sign_file_is_opened_once_per_run(tmp_path):
    path = tmp_path / "R.csv"
    path.write_text("1,0.5,0\n0.5,1,0\n0,0,1\n")
    pair = tmp_path / "R2.csv"
    pair.write_text("1,0.5\n0.5,1\n")
    # strict causal weights at T = 2 have one nonzero weight: the exact law, whose windows of mu2 take 5 s at 6 digits
    # (38 s at the default 30)
    spike = ["spike", "--delta", "1/2", "--gamma", "1/4", "--T", "2", "--weights", "causal", "--mask", "strict",
             "--signs", f"file:{pair}", "--mu2", "2", "--digits", "6", "--json"]
    assert _opens("derive.cli", pair, spike) == (0, 1)
    assert _opens("derive.cli", path, ["weights", "--weights", "optimal", "--T", "3", "--signs", f"file:{path}",
                                       "--json"]) == (0, 1)
    mc = ["mc", "--d", "40", "--V", "80", "--N", "60", "--T", "3", "--signs", f"file:{path}", "--weights", "optimal",
          "--mu2", "2", "--seeds", "2", "--law", "gaussian-equivalent", "--json"]
    assert _opens("verify.cli", path, mc) == (0, 1)


def test_public_names_are_words_of_the_literature():
    for module in (derive, verify):
        for name in module.__all__:
            assert name == "__version__" or (len(name) > 1 and not name.endswith("_")), name
            getattr(module, name)


def _imports(path: Path, package: str) -> set:
    """The modules of ``package`` that ``path`` imports (at any depth: a function-level import is an arrow too)."""
    tree = ast.parse(path.read_text())
    out = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module and node.module.split(".")[0] == package:
            base = node.module
            for alias in node.names:
                out.add(f"{base}.{alias.name}" if (ROOT / (base + "." + alias.name).replace(".", "/")).with_suffix(
                    ".py").exists() or (ROOT / (base + "." + alias.name).replace(".", "/")).is_dir() else base)
        elif isinstance(node, ast.Import):
            out |= {a.name for a in node.names if a.name.split(".")[0] == package}
    return out


def _module_name(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


@pytest.mark.parametrize("package", ["derive", "verify"])
def test_no_import_cycle(package):
    graph = {}
    for path in (ROOT / package).rglob("*.py"):
        graph[_module_name(path)] = {m for m in _imports(path, package) if m != _module_name(path)}
    # a package's __init__ that re-exports lazily by name (importlib) draws no arrow
    state = {}

    def visit(node, stack):
        state[node] = "open"
        for nxt in sorted(graph.get(node, ())):
            if nxt not in graph:
                continue
            if state.get(nxt) == "open":
                raise AssertionError("import cycle: " + " -> ".join(stack[stack.index(nxt):] + [nxt]))
            if nxt not in state:
                visit(nxt, stack + [nxt])
        state[node] = "done"

    for node in sorted(graph):
        if node not in state:
            visit(node, [node])


def test_derive_has_few_top_level_modules_beside_its_wings():
    modules = [p for p in (ROOT / "derive").glob("*.py")]
    wings = [p for p in (ROOT / "derive").iterdir() if p.is_dir() and (p / "__init__.py").exists()]
    assert len(modules) <= 8, sorted(p.name for p in modules)
    assert {p.name for p in wings} == {"model", "gaussian", "vocabulary", "sheet", "report", "cli"}


def test_derive_never_imports_verify():
    for path in (ROOT / "derive").rglob("*.py"):
        assert not _imports(path, "verify"), path


def test_no_vocabulary_module_is_over_500_lines():
    """A module of ``derive/vocabulary`` that grows past 500 lines holds two things (issue 41): split it where they meet."""
    long = {str(p.relative_to(ROOT)): n for p in (ROOT / "derive" / "vocabulary").rglob("*.py")
            if (n := len(p.read_text().splitlines())) > 500}
    assert not long, long


def test_the_limit_never_imports_the_draw():
    """The draw builds on the limit (its conditional law is Silverstein's equation with the draw's spectrum as
    population, its outliers the limit's equations), never the other way round."""
    limit = ROOT / "derive" / "vocabulary" / "limit"
    assert limit.is_dir() and (ROOT / "derive" / "vocabulary" / "draw").is_dir()
    for path in limit.rglob("*.py"):
        assert not {m for m in _imports(path, "derive") if m.startswith("derive.vocabulary.draw")}, path


def test_only_the_command_lines_import_derives_command_line():
    """What both command lines print is in ``derive.report``; ``derive.cli`` is the command line alone, and in
    ``verify`` only its own command line (``verify/cli.py``, ``verify/commands/``) builds on it."""
    for path in [*(ROOT / "verify").rglob("*.py"), *(ROOT / "derive").rglob("*.py")]:
        module = _module_name(path)
        if module == "verify.cli" or module.startswith(("verify.commands", "derive.cli")):
            continue
        assert not {m for m in _imports(path, "derive") if m == "derive.cli" or m.startswith("derive.cli.")}, module


def test_each_parameter_of_a_verify_mc_run_is_validated_in_one_place(tmp_path):
    """Parse at the door, trust inside (issue 41): on the first command line of notes/architecture.md's table,
    ``scripts/validations.py`` finds one place (a function of ours) validating each of these parameters, the theory at
    ``d`` included (the command as a user runs it, on a cold cache); a second place is a layer that checks again what
    the layer above checked. ``digits``, ``weights`` and the pooling scalars still count twice (the note says why)."""
    argv = ("verify mc --d 40 --V 80 --N 160 --T 4 --signs prefix:2 --weights mean --mu2 3 --seeds 2 "
            "--law gaussian-equivalent").split()
    done = processes.run([sys.executable, str(ROOT / "scripts" / "validations.py"), *argv], capture_output=True,
                         text=True, cwd=ROOT, check=True, cpu=300,
                         env={**{k: v for k, v in os.environ.items() if k != "ATTENTION_RMT_DIMENSIONS"},
                              "ATTENTION_RMT_CACHE_DIR": str(tmp_path)})
    places = {m["name"]: int(m["places"])
              for m in re.finditer(r"^ *(?P<name>\S+) +\d+ calls in (?P<places>\d+) places", done.stdout, re.M)}
    once = ("d", "V", "N", "T", "delta", "gamma", "mu2", "signs", "k", "seeds", "seed0", "trial", "n")
    assert {name: places.get(name) for name in once} == dict.fromkeys(once, 1), done.stdout


def test_the_documents_are_built_outside_the_commands():
    for path in (ROOT / "derive" / "cli" / "commands").glob("*.py"):
        assert "import json" not in path.read_text() and "format_real" not in path.read_text(), path
    doc = json.loads(processes.run([sys.executable, "-m", "derive.cli", "weights", "--weights", "mean", "--T", "2",
                                    "--json"], capture_output=True, text=True, cwd=ROOT, check=True, cpu=300).stdout)
    assert doc["exact"] == ["1/2", "1/2"]


def test_verify_gets_the_outliers_and_the_pooling_of_a_model_through_derives_front_door():
    """``derive.spike`` and ``derive.weights`` on a ``Model`` are how verify asks for a prediction and a pooling (the
    precision agreement, the catalogue's options and the law's name come with them); resolving the pooling and calling
    the outlier functions by hand is left to the checks of the Gaussian-equivalent formulas themselves (C2's ordering
    proof and grid, C3's threshold)."""
    formulas = {"verify.ledger.checks.c2", "verify.ledger.checks.c3"}
    around = []
    for path in (ROOT / "verify").rglob("*.py"):
        tree = ast.parse(path.read_text())
        names = {alias.name for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)
                 and (node.module or "").startswith("derive") for alias in node.names}
        modules = {node.module for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)}
        if _module_name(path) not in formulas and ({"outliers_at", "pooling"} & names
                                                   or "derive.model.pooling" in modules):
            around.append(_module_name(path))
    assert not around, around
