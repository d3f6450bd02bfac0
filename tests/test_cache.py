"""The derivation cache (derive.cache) and the fast first answer: generated mpmath code equals the SymPy
derivation it replaces, a changed derivation is never served stale, a damaged or unwritable cache only
costs time, and the command-line queries import nothing heavy they do not use."""
import hashlib
import json
import os
import sys
import time

import mpmath
import pytest
import sympy as sp

import processes
from derive import cache
from derive.gaussian import outliers

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


@pytest.fixture
def folder(tmp_path, monkeypatch):
    monkeypatch.setenv(cache.ENVIRONMENT, str(tmp_path))
    return tmp_path


def _table():
    x, y = sp.symbols("x y", positive=True)
    return {"f": ((x, y), sp.sqrt(x) * sp.Rational(2, 7) + sp.asin(y) / 3 + sp.pi), "g": [((x,), sp.Integer(-1)), ((x,), x ** 3)]}


def test_generated_functions_equal_lambdify_at_50_digits(folder):
    built = cache.mpmath_functions("t", ("f", "g"), _table)
    x, y = sp.symbols("x y", positive=True)
    direct = sp.lambdify((x, y), _table()["f"][1], modules="mpmath")
    with mpmath.workdps(50):
        a, b = mpmath.mpf(2) / 3, mpmath.mpf(1) / 7
        assert built["f"](a, b) == direct(a, b)  # the same operations in the same order: equal to the last bit
        assert [g(a) for g in built["g"]] == [-1, a ** 3]
        # and the rationals stay exact at any precision (no binary float constant in the source)
        assert "mpmath.mpf(2)/mpmath.mpf(7)" in cache.mpmath_source(_table())


def test_a_second_run_reads_the_cache_and_never_derives(folder):
    calls = []

    def build():
        calls.append(1)
        return _table()

    first = cache.mpmath_functions("t", ("f",), build)
    second = cache.mpmath_functions("t", ("f",), build)
    assert calls == [1] and first["f"](4, 0) == second["f"](4, 0)
    assert len(list(folder.glob("derive-*/t.py"))) == 1


def test_a_changed_derivation_names_another_folder_and_the_stale_one_goes(folder, monkeypatch):
    cache.mpmath_functions("t", ("f",), _table)
    old = next(folder.glob("derive-*"))
    (folder / "unrelated").mkdir()  # a folder of the user's own is never touched
    recent = folder / ("derive-" + "e" * 32)  # another checkout's, used an hour ago: kept
    recent.mkdir()
    unused = time.time() - cache.STALE_AFTER - 60
    os.utime(old, (unused, unused))
    os.utime(recent, (time.time() - 3600,) * 2)
    monkeypatch.setattr(cache, "derivation_key", lambda: "f" * 64)
    x, y = sp.symbols("x y", positive=True)
    changed = cache.mpmath_functions("t", ("f",), lambda: {"f": ((x, y), x + y)})
    assert changed["f"](2, 3) == 5  # not the stale sqrt(x) 2/7 + ...
    assert not old.exists() and recent.exists() and (folder / "unrelated").exists()


def test_reading_a_folder_marks_it_used(folder):
    cache.mpmath_functions("t", ("f",), _table)
    used = next(folder.glob("derive-*"))
    long_ago = time.time() - cache.STALE_AFTER - 60
    os.utime(used, (long_ago, long_ago))
    cache.mpmath_functions("t", ("f",), _table)
    assert time.time() - used.stat().st_mtime < cache.STALE_AFTER


def test_the_key_follows_the_source_of_derive(folder, monkeypatch, tmp_path):
    # a copy of the package with one character changed in a derivation module has another key
    key = cache.derivation_key()
    fake = tmp_path / "pkg"
    (fake / "gaussian").mkdir(parents=True)
    for name in ("gaussian/spikes.py", "cache.py"):
        (fake / name).write_text((cache._PACKAGE / name).read_text())
    monkeypatch.setattr(cache, "_PACKAGE", fake)
    cache.derivation_key.cache_clear()
    try:
        one = cache.derivation_key()
        (fake / "gaussian/spikes.py").write_text((fake / "gaussian/spikes.py").read_text() + "\n# changed\n")
        cache.derivation_key.cache_clear()
        assert cache.derivation_key() != one != key
    finally:
        cache.derivation_key.cache_clear()


@pytest.mark.parametrize("damage", ["def f(x, y):\n    return (", "x = 1\n", "\xff\xfe"])
def test_a_damaged_file_is_derived_again(folder, damage):
    cache.mpmath_functions("t", ("f",), _table)
    path = next(folder.glob("derive-*/t.py"))
    path.write_bytes(damage.encode("latin-1"))
    again = cache.mpmath_functions("t", ("f",), _table)
    assert again["f"](4, 0) == mpmath.mpf(4) / 7 + mpmath.pi
    assert path.read_text() == cache.mpmath_source(_table())  # and repaired


def test_an_unwritable_or_disabled_cache_still_answers(tmp_path, monkeypatch):
    blocker = tmp_path / "file"
    blocker.write_text("not a folder")
    for setting in (str(blocker / "below"), "off"):
        monkeypatch.setenv(cache.ENVIRONMENT, setting)
        assert cache.mpmath_functions("t", ("f",), _table)["f"](4, 0) == mpmath.mpf(4) / 7 + mpmath.pi
        assert cache.memo("m", {"a": 1}, lambda: {"v": "1/3"}) == {"v": "1/3"}


def test_exact_causal_weights_are_kept_and_a_kept_value_that_does_not_sum_to_1_is_derived_again(folder, monkeypatch):
    # SymPy took about 2 s to derive them in every process: a sweep of causal weights validated its grid on it before
    # its first task (issue 43)
    from derive.model import attention

    derived = [sp.Rational(x) for x in attention._exact_weights(8, "strict")]
    assert attention.causal_weights(8, 3, "strict") == derived and sum(derived) == 1
    with monkeypatch.context() as m:
        m.setattr(attention, "_exact_weight", None)  # a second call must not derive
        assert attention.causal_weights(8, 0, "strict") == derived
    assert not attention._sums_to_one(["1/2", "1/3"], 2) and not attention._sums_to_one(["1/2", "x"], 2)
    assert attention._sums_to_one([str(x) for x in derived], 8)


def test_memo_keys_on_its_arguments(folder):
    assert cache.memo("m", {"a": 1}, lambda: [1]) == [1]
    assert cache.memo("m", {"a": 1}, lambda: [2]) == [1]  # stored
    assert cache.memo("m", {"a": 2}, lambda: [3]) == [3]


def test_model_key_writes_each_part_one_way_and_refuses_what_a_file_names(folder, tmp_path):
    from derive import Model

    m = Model(d=4, V=8, N=16, T=2, weights="causal", mask="strict", signs="markov:1/2", mu2="3/2", centered=True)
    assert cache.model_key(m, digits=12, error="0.001") == {
        "weights": {"scheme": "causal", "tau": "0", "mask": "strict"}, "T": 2, "signs": "markov:1/2", "delta": "1/2",
        "gamma": "1/4", "mu2": "3/2", "centered": True, "d": 4, "V": 8, "N": 16, "digits": 12, "error": "0.001"}
    R = tmp_path / "R.csv"
    R.write_text("1,0\n0,1\n")
    w = tmp_path / "w.csv"
    w.write_text("1/2\n1/2\n")
    for changed in (m.replace(signs=f"file:{R}"), m.replace(weights=f"file:{w}")):
        assert cache.model_key(changed, ("delta", "weights", "signs")) is None
        assert cache.model_key(changed, ("delta", "gamma")) == {"delta": "1/2", "gamma": "1/4"}
    # a result without a key is computed at every call, never stored
    assert cache.memo("m", None, lambda: [1]) == [1] and cache.memo("m", None, lambda: [2]) == [2]
    assert not list(folder.glob("derive-*/m-*"))


def test_every_cache_key_of_a_model_is_made_by_model_key():
    """Issue 41: four hand-made keys wrote a model's parts four ways; a memo of a model takes model_key's."""
    import ast
    import pathlib

    for path in sorted(pathlib.Path(ROOT).glob("[dv]e*/**/*.py")):
        tree = ast.parse(path.read_text())
        made = {t.id for node in ast.walk(tree) if isinstance(node, ast.Assign) and isinstance(node.value, ast.Call)
                and getattr(node.value.func, "id", None) == "model_key" for t in node.targets}
        for node in ast.walk(tree):
            if isinstance(node, ast.Call) and getattr(node.func, "id", None) == "memo":
                key = node.args[1]
                by_model_key = (isinstance(key, ast.Call) and getattr(key.func, "id", None) == "model_key") or (
                    isinstance(key, ast.Name) and key.id in made)
                # the Tracy-Widom table is a constant of the code, and the exact causal weights a function of two
                # integers (T and the mask's offset) that no file or user object can name: neither is about a model
                assert by_model_key or path.name in ("tracywidom.py", "attention.py"), f"{path}:{node.lineno}"


def test_the_outlier_functions_from_the_cache_are_the_derived_ones(folder):
    outliers._compiled.cache_clear()
    try:
        fresh = outliers._compiled()  # derived by SymPy now, and stored
        outliers._compiled.cache_clear()
        stored = outliers._compiled()  # read back
        with mpmath.workdps(40):
            args = (mpmath.mpf(3) / 2, mpmath.mpf(1) / 2, mpmath.mpf(1) / 4, mpmath.mpf(1) / 8)
            for name in ("psi", "factor"):
                assert fresh[name](*args) == stored[name](*args)
    finally:
        outliers._compiled.cache_clear()


def _entry(folder, pattern):
    return next(folder.glob(f"derive-*/{pattern}"))


def _forge(path, text: str) -> None:
    """Rewrite an entry and the digest kept beside it: what only the owner of a private folder can do."""
    path.write_text(text)
    path.with_name(path.name + ".sha256").write_text(hashlib.sha256(text.encode()).hexdigest() + "\n")


def test_a_changed_entry_is_never_served(folder):
    # a value changed by hand (the digest beside it not): computed again, and the entry repaired
    assert cache.memo("m", {"a": 1}, lambda: {"eigenvalue": "2.5"}) == {"eigenvalue": "2.5"}
    path = _entry(folder, "m-*.json")
    path.write_text(path.read_text().replace("2.5", "0.5"))
    assert cache.memo("m", {"a": 1}, lambda: {"eigenvalue": "2.5"}) == {"eigenvalue": "2.5"}
    assert "2.5" in path.read_text()
    # a constant of a generated source changed: derived again
    cache.mpmath_functions("t", ("f",), _table)
    source = _entry(folder, "t.py")
    source.write_text(source.read_text().replace("mpmath.mpf(2)/mpmath.mpf(7)", "mpmath.mpf(3)/mpmath.mpf(7)"))
    assert cache.mpmath_functions("t", ("f",), _table)["f"](4, 0) == mpmath.mpf(4) / 7 + mpmath.pi


def test_code_in_the_cache_never_runs(folder, tmp_path):
    # even with its digest forged, a source that is not arithmetic is derived again, not run
    cache.mpmath_functions("t", ("f",), _table)
    source, trap = _entry(folder, "t.py"), tmp_path / "ran"
    for body in ("raise SystemExit(7)\n", f"open({str(trap)!r}, 'w')\n", "import os\n",
                 "def f(x, y):\n    return __import__('os').system('true')\n",
                 "def f(x, y):\n    return mpmath.runtests()\n", "def f(x, y=open('x')):\n    return x\n",
                 "@print\ndef f(x, y):\n    return x\n", "def f(x, y):\n    return mpmath.mp.__class__\n"):
        _forge(source, "import mpmath\n\n" + body)
        assert cache.mpmath_functions("t", ("f",), _table)["f"](4, 0) == mpmath.mpf(4) / 7 + mpmath.pi, body
    assert not trap.exists()


def test_a_stored_value_its_caller_doubts_is_computed_again(folder):
    template = {"outlier": bool, "eigenvalue": (cache.real_text, None)}
    good = {"outlier": True, "eigenvalue": "2.5"}
    assert cache.memo("m", {"a": 1}, lambda: good, lambda v: cache.shaped(v, template)) == good
    for forged in ({"outlier": "yes", "eigenvalue": "2.5"}, {"outlier": True, "eigenvalue": 7}, [1], None,
                   {"outlier": True}):
        _forge(_entry(folder, "m-*.json"), json.dumps({"arguments": {"a": 1}, "value": forged}))
        assert cache.memo("m", {"a": 1}, lambda: good, lambda v: cache.shaped(v, template)) == good, forged


def test_a_folder_others_can_write_is_not_used(folder):
    assert cache.memo("m", {"a": 1}, lambda: [1]) == [1]
    key = next(folder.glob("derive-*"))
    for where in (key, folder):
        where.chmod(0o777)
        assert cache.memo("m", {"a": 1}, lambda: [2]) == [2]  # not read, and nothing written there
        where.chmod(0o700)
    assert cache.memo("m", {"a": 1}, lambda: [3]) == [1]
    entry = _entry(folder, "m-*.json")
    entry.chmod(0o666)  # an entry others could have written
    assert cache.memo("m", {"a": 1}, lambda: [4]) == [4]
    if os.geteuid() == 0:
        os.chown(entry, 65534, 65534)  # another user's entry
        assert cache.memo("m", {"a": 1}, lambda: [5]) == [5]


def test_an_entry_that_is_a_fifo_does_not_block(folder):
    cache.memo("m", {"a": 1}, lambda: [1])
    entry = _entry(folder, "m-*.json")
    entry.unlink()
    os.mkfifo(entry, 0o600)
    code = ("import json; from derive import cache\n"
            "print(json.dumps(cache.memo('m', {'a': 1}, lambda: [2])))\n")
    assert _cold(code, folder) == [2]


def test_an_empty_cache_variable_is_the_default_folder_not_the_working_one(tmp_path, monkeypatch):
    (tmp_path / "work").mkdir()
    monkeypatch.setenv(cache.ENVIRONMENT, "")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    monkeypatch.chdir(tmp_path / "work")
    assert cache.memo("m", {"a": 1}, lambda: [1]) == [1]
    assert not list((tmp_path / "work").iterdir())
    assert list((tmp_path / "xdg" / "attention-rmt").glob("derive-*/m-*.json"))


def test_a_forged_source_does_not_stop_derive_spike(tmp_path):
    # SystemExit(7) in a cached source had made derive spike exit 7 with nothing on stderr
    spike = ["-m", "derive.cli", "spike", "--delta", "1/2", "--gamma", "1/4", "--alpha", "7/32", "--kappa", "1/8",
             "--mu2", "3/2", "--json"]
    env = dict(os.environ, **{cache.ENVIRONMENT: str(tmp_path)})
    run = lambda: processes.run([sys.executable, *spike], capture_output=True, text=True, env=env, cwd=ROOT,  # noqa: E731
                                cpu=300)
    clean = run()
    assert clean.returncode == 0, clean.stderr
    _forge(_entry(tmp_path, "outliers.py"), "import mpmath\nraise SystemExit(7)\n")
    again = run()
    assert (again.returncode, again.stdout) == (0, clean.stdout), again.stderr


def _cold(code: str, folder, dimensions: bool = False) -> dict:
    env = dict(os.environ, **{cache.ENVIRONMENT: str(folder)})
    if dimensions:  # the user's default: the model's law at the run's own d (verify mc's theory_at_d)
        env.pop("ATTENTION_RMT_DIMENSIONS", None)
    done = processes.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, cwd=ROOT, cpu=300)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1])


LOADED = "import sys, json; print(json.dumps({m: m in sys.modules for m in ('sympy', 'scipy', 'numba')}))"
SPIKE = ("import contextlib, io; from derive.cli import main\n"
         "with contextlib.redirect_stdout(io.StringIO()):\n"
         "    main(['spike', '--delta', '1/2', '--gamma', '1/4', '--alpha', '7/32', '--kappa', '1/8', '--mu2', '3/2', '--json'])\n")
MC = ("import contextlib, io; from verify.cli import main\n"
      "with contextlib.redirect_stdout(io.StringIO()):\n"
      "    main(['mc', '--d', '120', '--V', '240', '--N', '480', '--T', '4', '--signs', 'prefix:2', '--weights', "
      "'mean', '--mu2', '2', '--seeds', '1', '--path', 'mixed', '--json'])\n")


OWN = ("import contextlib, io; from derive.cli import main\n"
       "with contextlib.redirect_stdout(io.StringIO()):\n"
       "    main(['spike', '--delta', '1/2', '--gamma', '4', '--mu2', '4', '--T', '16', '--weights', 'mean', "
       "'--signs', 'iid', '--d', '1000', '--draws', '2', '--json'])\n")


@pytest.fixture(scope="module")
def warm():
    """The session's derivation cache (tests/conftest.py), filled by one run of each command if it was not yet
    (deriving from an empty cache is test_the_outlier_functions_from_the_cache_are_the_derived_ones)."""
    folder = os.environ[cache.ENVIRONMENT]
    _cold(SPIKE + MC + LOADED, folder)
    return folder


def test_derive_spike_from_a_warm_cache_imports_no_sympy(warm):
    assert _cold(SPIKE + LOADED, warm) == {"sympy": False, "scipy": False, "numba": False}


def test_one_verify_mc_trial_from_a_warm_cache_loads_no_sympy_scipy_or_numba(warm):
    assert _cold(MC + LOADED, warm) == {"sympy": False, "scipy": False, "numba": False}


def test_the_models_own_law_and_its_d_from_a_warm_cache_import_no_sympy(warm):
    # the model's own limit at 16 nonzero weights and the law at the user's d: the pooling, whether the law is exact
    # and the limit's default error are read without SymPy or the solver (0.8 CPU-s a query had gone to loading them)
    _cold(OWN + LOADED, warm)  # fills the cache
    assert _cold(OWN + LOADED, warm) == {"sympy": False, "scipy": False, "numba": False}


def test_verify_mc_with_the_theory_at_its_d_from_a_warm_cache_loads_no_sympy(warm):
    # the user's default, theory_at_d on: the voice's method is chosen from the kept weights (SymPy had cost a trial
    # at d = 2000 half a CPU-second, half of its whole process)
    _cold(MC + LOADED, warm, dimensions=True)  # fills the cache
    assert _cold(MC + LOADED, warm, dimensions=True) == {"sympy": False, "scipy": False, "numba": False}
