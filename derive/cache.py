r"""Results derived once and kept between runs: mpmath code generated from SymPy expressions, and exact values.

Deriving the outlier formulas with SymPy takes about a second, and importing SymPy half of one; a
query then takes milliseconds. :func:`mpmath_functions` prints each expression once as Python source
calling :mod:`mpmath` only (SymPy's ``MpmathPrinter``), stores that source in the user's cache folder
(:func:`cache_dir`, never inside the installed package) and, on later runs, compiles the stored source
without importing SymPy. :func:`memo` keeps small exact results (JSON) the same way.

Files live in a folder named by a key (:func:`derivation_key`): the SHA-256 of the source of every
module of the :mod:`derive` package, of SymPy's release file (its version) and of the Python and
mpmath versions. Any change to the derivation or to the SymPy that performs it names another folder,
so a stale file is never read; a folder that no run has read or written for :data:`STALE_AFTER` seconds is deleted when
another is written (two checkouts of different versions on one machine keep their own folders instead of deleting
each other's at every switch, which cost a second of SymPy each time).

What is read is what was written, or it is not used. Each entry has its SHA-256 in a file of its own beside it
(``outliers.py.sha256``), and an entry whose bytes do not hash to it (changed, cut short, damaged) is treated as
missing: derived again and rewritten. Only a folder and files that this user owns and that no one else may write are
read (a cache folder others can write is not used at all: whoever could write there could write both files), and only
regular files (a FIFO there would block the read). The source of :func:`mpmath_functions` is arithmetic: before it is
compiled its syntax tree is checked to hold nothing but functions of their arguments built from numbers, operators and
the mathematical functions of :mod:`mpmath` (:func:`arithmetic_source`), and it runs without builtins, so even a
forged pair cannot run code. A :func:`memo` value may be checked by its caller (``valid``) before it is used. On any
doubt the result is derived again. Where the folder cannot be written the results are still made, in memory, on every
run.

``ATTENTION_RMT_CACHE_DIR`` overrides the folder (empty: the default folder, never the working one);
``ATTENTION_RMT_CACHE_DIR=off`` turns the cache off.

numba keeps the compiled kernels of the limit's populations and of the Monte Carlo solvers between runs in its own
cache, next to the code, keyed to the file that defines each kernel (a hash of that file alone). A kernel that
calls or inlines a compiled function of another file keeps its cached machine code when only that other file changes,
and runs the old code (numba/numba#8396, still open): after an edit, or after an update that changes one file and not
the other. :func:`keep_fresh` keys those caches to the contents of every file their code comes from as well.
"""
from __future__ import annotations

import ast
import functools
import hashlib
import hmac
import importlib.util
import json
import os
import re
import stat
import sys
from pathlib import Path

import mpmath

__all__ = ["ENVIRONMENT", "STALE_AFTER", "MAX_ENTRY_BYTES", "cache_dir", "derivation_key", "mpmath_source",
           "arithmetic_source", "mpmath_functions", "memo", "MODEL_PARTS", "model_key", "shaped", "real_text",
           "KERNEL_MARK", "sources_digest", "keep_fresh"]

ENVIRONMENT = "ATTENTION_RMT_CACHE_DIR"
"""The environment variable naming the cache folder (``off``: no cache)."""

MAX_ENTRY_BYTES = 4 * 2**20
"""Largest cache entry read (the generated sources are a few KB, the exact values less)."""

_PACKAGE = Path(__file__).resolve().parent


def cache_dir() -> Path | None:
    """The folder of the cache: ``$ATTENTION_RMT_CACHE_DIR``, else ``$XDG_CACHE_HOME/attention-rmt`` (an absolute
    ``XDG_CACHE_HOME`` only, as its specification says), else ``~/.cache/attention-rmt``; ``None`` when
    ``$ATTENTION_RMT_CACHE_DIR`` is ``off``. An empty variable is an unset one (an empty path had named the working
    folder), and a relative one is taken from the working folder once, here.

    >>> folder = cache_dir(); folder is None or folder.is_absolute()
    True
    """
    chosen = os.environ.get(ENVIRONMENT, "").strip()
    if chosen.lower() == "off":
        return None
    if chosen:
        return Path(os.path.abspath(os.path.expanduser(chosen)))
    base = os.environ.get("XDG_CACHE_HOME", "").strip()
    if not os.path.isabs(base):
        base = os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "attention-rmt"


def _sympy_release() -> bytes:
    """SymPy's release file (its version), found without importing SymPy."""
    spec = importlib.util.find_spec("sympy")
    if spec is None or spec.origin is None:
        return b"no sympy"
    try:
        return (Path(spec.origin).parent / "release.py").read_bytes()
    except OSError:
        return b"sympy release unknown"


@functools.lru_cache(maxsize=None)
def derivation_key() -> str:
    """The key of everything derived: SHA-256 of every ``derive/*.py`` source (by name), SymPy's release
    file, and the mpmath and Python versions.

    >>> len(derivation_key())
    64
    """
    digest = hashlib.sha256()
    for part in (sys.version, mpmath.__version__):
        digest.update(part.encode() + b"\0")
    digest.update(_sympy_release() + b"\0")
    for path in sorted(_PACKAGE.rglob("*.py")):
        digest.update(str(path.relative_to(_PACKAGE)).encode() + b"\0" + path.read_bytes() + b"\0")
    return digest.hexdigest()


def mpmath_source(table: dict) -> str:
    r"""Python source defining one function per entry of ``table``: ``name -> (arguments, expression)``
    (SymPy symbols and expression), or ``name -> [(arguments, expression), ...]`` for a list of
    functions; the source refers to :mod:`mpmath` only.

    >>> import sympy as sp
    >>> x = sp.Symbol("x")
    >>> print(mpmath_source({"f": ((x,), sp.sqrt(x) / 3)}))
    import mpmath
    <BLANKLINE>
    def f(x):
        return (mpmath.mpf(1)/mpmath.mpf(3))*mpmath.sqrt(x)
    """
    from sympy.printing.pycode import MpmathPrinter

    printer = MpmathPrinter({"fully_qualified_modules": True, "allow_unknown_functions": False})
    lines = ["import mpmath", ""]
    for name, entry in table.items():
        entries = entry if isinstance(entry, list) else [entry]
        names = [name if not isinstance(entry, list) else f"_{name}_{i}" for i in range(len(entries))]
        for fname, (args, expr) in zip(names, entries):
            lines += [f"def {fname}({', '.join(str(a) for a in args)}):", f"    return {printer.doprint(expr)}", ""]
        if isinstance(entry, list):
            lines += [f"{name} = [{', '.join(names)}]", ""]
    return "\n".join(lines).rstrip("\n")


_MPMATH_CALLS = frozenset((
    "mpf", "mpc", "sqrt", "cbrt", "root", "exp", "expm1", "log", "ln", "log10", "log1p", "power", "sin", "cos", "tan",
    "asin", "acos", "atan", "atan2", "sinh", "cosh", "tanh", "asinh", "acosh", "atanh", "fabs", "sign", "floor", "ceil",
    "re", "im", "conj", "arg", "harmonic", "psi", "digamma", "gamma", "loggamma", "rgamma", "factorial", "binomial",
    "beta", "erf", "erfc", "zeta", "polylog", "hypot"))
"""The functions of :mod:`mpmath` a generated source may call: SymPy's ``MpmathPrinter`` prints these and nothing
else for the elementary and special functions of the model's formulas."""

_MPMATH_CONSTANTS = frozenset(("pi", "e", "inf", "nan", "euler", "j"))
_BUILTINS = {"abs": abs, "min": min, "max": max}
"""The builtins the printer uses (``Abs``, ``Min``, ``Max``), the only names a generated function sees besides its
arguments and :mod:`mpmath`."""

_OPERATORS = (ast.Add, ast.Sub, ast.Mult, ast.Div, ast.Pow, ast.USub, ast.UAdd, ast.Load, ast.Lt, ast.LtE, ast.Gt,
              ast.GtE, ast.Eq, ast.NotEq, ast.And, ast.Or, ast.Not)


def _arithmetic_expression(root: ast.AST, arguments: set) -> bool:
    """Whether the expression ``root`` is arithmetic on ``arguments``: numbers, operators, comparisons and conditional
    expressions (a ``Piecewise``), calls of :data:`_MPMATH_CALLS` and of :data:`_BUILTINS`, the constants of
    :mod:`mpmath`; the tuple of a binary float only as the argument of ``mpmath.mpf``."""
    stack = [(root, False)]
    while stack:
        node, in_mpf = stack.pop()
        if isinstance(node, (ast.BinOp, ast.UnaryOp, ast.IfExp, ast.Compare, ast.BoolOp)):
            stack.extend((child, False) for child in ast.iter_child_nodes(node))
        elif isinstance(node, ast.Call):
            f = node.func
            if node.keywords:
                return False
            if isinstance(f, ast.Attribute) and isinstance(f.value, ast.Name) and f.value.id == "mpmath":
                if f.attr not in _MPMATH_CALLS:
                    return False
                stack.extend((arg, f.attr == "mpf") for arg in node.args)
            elif isinstance(f, ast.Name) and f.id in _BUILTINS:
                stack.extend((arg, False) for arg in node.args)
            else:
                return False
        elif isinstance(node, ast.Attribute):
            if not (isinstance(node.value, ast.Name) and node.value.id == "mpmath" and node.attr in _MPMATH_CONSTANTS):
                return False
        elif isinstance(node, ast.Name):
            if node.id not in arguments:
                return False
        elif isinstance(node, ast.Constant):
            if type(node.value) not in (int, float, complex):
                return False
        elif isinstance(node, ast.Tuple) and in_mpf:
            if not all(isinstance(x, ast.Constant) and type(x.value) is int for x in node.elts):
                return False
        elif not isinstance(node, _OPERATORS):
            return False
    return True


def arithmetic_source(text: str):
    """The syntax tree of ``text`` without its ``import mpmath`` line if ``text`` is what :func:`mpmath_source` writes
    (``import mpmath``; functions of positional arguments each returning an arithmetic expression,
    :func:`_arithmetic_expression`; lists of those functions), else ``None``: nothing else may run from the cache.

    >>> arithmetic_source("import mpmath\\n\\ndef f(x):\\n    return mpmath.sqrt(x)/3\\n") is not None
    True
    >>> arithmetic_source("import os\\n"), arithmetic_source("def f(x):\\n    return __import__('os')\\n")
    (None, None)
    """
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    defined, body = set(), []
    for node in tree.body:
        if isinstance(node, ast.Import):
            if [(a.name, a.asname) for a in node.names] != [("mpmath", None)]:
                return None
            continue
        if isinstance(node, ast.FunctionDef):
            a = node.args
            plain = not (node.decorator_list or a.posonlyargs or a.vararg or a.kwonlyargs or a.kwarg or a.defaults
                         or node.returns or any(x.annotation for x in a.args))
            if not (plain and len(node.body) == 1 and isinstance(node.body[0], ast.Return) and node.body[0].value
                    and _arithmetic_expression(node.body[0].value, {x.arg for x in a.args})):
                return None
        elif isinstance(node, ast.Assign):
            listed = (len(node.targets) == 1 and isinstance(node.targets[0], ast.Name) and isinstance(node.value, ast.List)
                      and all(isinstance(x, ast.Name) and x.id in defined for x in node.value.elts))
            if not listed:
                return None
        else:
            return None
        defined.add(node.name if isinstance(node, ast.FunctionDef) else node.targets[0].id)
        body.append(node)
    tree.body = body
    return tree


def _load(text: str, names) -> dict | None:
    """The functions ``names`` of the generated source ``text``, or ``None`` if it is not one
    (:func:`arithmetic_source`), does not compile or lacks one of them."""
    tree = arithmetic_source(text)
    if tree is None:
        return None
    namespace = {"__builtins__": dict(_BUILTINS), "mpmath": mpmath}
    try:
        exec(compile(tree, "<derive.cache>", "exec"), namespace)
    except Exception:  # a damaged file is a missing one: the caller derives again
        return None
    if not all(name in namespace for name in names):
        return None
    return {name: namespace[name] for name in names}


_KEY_FOLDER = re.compile(r"^derive-[0-9a-f]{32}$")

STALE_AFTER = 7 * 24 * 3600
"""Seconds after its last use at which the folder of another key is deleted."""


def _private(info: os.stat_result) -> bool:
    """Whether a file or folder belongs to this user and no one else may write it."""
    return info.st_uid == os.geteuid() and not info.st_mode & (stat.S_IWGRP | stat.S_IWOTH)


def _folder(create: bool = False) -> Path | None:
    """The folder of the current key, if it is (or, with ``create``, can be made) a private folder in a private cache
    folder; else ``None``: no cache this run."""
    root = cache_dir()
    if root is None:
        return None
    folder = root / f"derive-{derivation_key()[:32]}"
    try:
        if create:
            os.makedirs(root, mode=0o700, exist_ok=True)
        if not (stat.S_ISDIR((info := os.stat(root)).st_mode) and _private(info)):
            return None
        if create:
            try:
                os.mkdir(folder, 0o700)
            except FileExistsError:
                pass
        info = os.lstat(folder)
    except (OSError, ValueError):
        return None
    return folder if stat.S_ISDIR(info.st_mode) and _private(info) else None


def _read_private(path: Path) -> bytes | None:
    """The bytes of ``path`` if it is a private regular file of at most :data:`MAX_ENTRY_BYTES` (opened without
    blocking and without following a link), else ``None``."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_NOFOLLOW | getattr(os, "O_CLOEXEC", 0))
    except (OSError, ValueError):
        return None
    try:
        info = os.fstat(fd)
        if not (stat.S_ISREG(info.st_mode) and _private(info)) or info.st_size > MAX_ENTRY_BYTES:
            return None
        data = os.read(fd, MAX_ENTRY_BYTES + 1)
        return data if len(data) <= MAX_ENTRY_BYTES else None
    except OSError:
        return None
    finally:
        os.close(fd)


def _digest(data: bytes) -> bytes:
    return hashlib.sha256(data).hexdigest().encode()


def _read(folder: Path | None, name: str) -> str | None:
    """The entry ``name`` of ``folder`` if its bytes hash to the digest kept beside it, else ``None``."""
    if folder is None:
        return None
    data, digest = _read_private(folder / name), _read_private(folder / f"{name}.sha256")
    if data is None or digest is None or not hmac.compare_digest(_digest(data), digest.strip()):
        return None
    try:
        text = data.decode()
    except UnicodeDecodeError:
        return None
    try:
        os.utime(folder)  # the folder's last use, by which stale folders are told apart
    except OSError:
        pass
    return text


def _write(name: str, text: str) -> None:
    """Store the entry ``name`` (its bytes, then their digest beside it) in the folder of the current key, made private
    if it is missing; the folders of other keys unused for :data:`STALE_AFTER` go. A folder that cannot be written,
    or is not private, leaves the results in memory for this run."""
    import shutil
    import time

    from derive.errors import ParameterError
    from derive.files import write_file

    folder = _folder(create=True)
    if folder is None:
        return
    data = text.encode()
    try:
        # private like their folder: an entry others could write would be refused on reading
        write_file(folder / name, data, "cache", mode=0o600)
        write_file(folder / f"{name}.sha256", _digest(data) + b"\n", "cache", mode=0o600)
        for stale in folder.parent.iterdir():
            if (stale != folder and _KEY_FOLDER.match(stale.name) and not stale.is_symlink() and stale.is_dir()
                    and time.time() - stale.stat().st_mtime > STALE_AFTER):
                shutil.rmtree(stale, ignore_errors=True)
    except (OSError, ParameterError):
        pass  # a read-only or full disk: the results stay in memory for this run


def mpmath_functions(name: str, names, build) -> dict:
    """The functions ``names`` of the table ``build()`` (:func:`mpmath_source`), from the cache when it holds
    them for the current :func:`derivation_key` (unchanged since they were written, and arithmetic), else made by
    ``build`` (SymPy) and stored."""
    text = _read(_folder(), f"{name}.py")
    loaded = None if text is None else _load(text, names)
    if loaded is not None:
        return loaded
    text = mpmath_source(build())
    loaded = _load(text, names)
    if loaded is None:
        raise RuntimeError(f"derive.cache: the generated source of {name!r} does not define {list(names)}")
    _write(f"{name}.py", text)
    return loaded


def real_text(value) -> bool:
    """Whether ``value`` is a real as the documents write it: decimal text (``'0.25'``, ``'1.5e-7'``) or ``'inf'``.

    >>> real_text("1.5e-7"), real_text("inf"), real_text("nan"), real_text(0.5)
    (True, True, False, False)
    """
    return isinstance(value, str) and (value == "inf" or _REAL.fullmatch(value) is not None)


_REAL = re.compile(r"-?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?")


def shaped(value, template) -> bool:
    """Whether the JSON ``value`` has the fields and types of ``template``: a type (``bool`` apart from ``int``;
    ``float`` takes a finite number), ``None``, a predicate (:func:`real_text`), a tuple of alternatives, ``[t]`` a
    list of ``t``, or a dict (exactly its keys, each of its template).

    >>> shaped({"a": "0.5", "b": [True]}, {"a": (real_text, None), "b": [bool]})
    True
    >>> shaped({"a": 3, "b": []}, {"a": (real_text, None), "b": [bool]}), shaped(1, bool), shaped(float("nan"), float)
    (False, False, False)
    """
    import math

    if template is None:
        return value is None
    if isinstance(template, tuple):
        return any(shaped(value, t) for t in template)
    if isinstance(template, list):
        return isinstance(value, list) and all(shaped(v, template[0]) for v in value)
    if isinstance(template, dict):
        return isinstance(value, dict) and set(value) == set(template) and all(
            shaped(value[k], t) for k, t in template.items())
    if template is float:
        return type(value) in (int, float) and math.isfinite(value)
    if isinstance(template, type):
        return type(value) is template
    return bool(template(value))


MODEL_PARTS = ("weights", "T", "signs", "delta", "gamma", "mu2", "centered", "d", "V", "N")
"""The parts of a :class:`derive.Model` a cached result may depend on (:func:`model_key`)."""


def model_key(model, parts=MODEL_PARTS, *, digits=None, **extra) -> dict | None:
    """The cache key (:func:`memo`'s ``arguments``) of a result about ``model`` that depends on its ``parts`` (names of
    :data:`MODEL_PARTS`), on ``digits`` when given and on ``extra`` (JSON values); ``None``, so that the result is not
    kept between runs, when a part has no text that names it: weights or signs read from a file (which may change) or
    a user's family object (its ``memo_key`` is ``None``). Every cache key of a model is made here, so a part is
    written one way in all of them.

    >>> from derive import Model
    >>> model_key(Model(T=2, weights="mean", signs="iid", delta=1, gamma="1/2"), ("weights", "T", "signs", "gamma"))
    {'weights': {'scheme': 'mean'}, 'T': 2, 'signs': 'iid', 'gamma': '1/2'}
    """
    key = {}
    for part in parts:
        value = getattr(model, part)
        if part in ("weights", "signs") and value is not None:
            value = value.memo_key
            if value is None:
                return None
        elif isinstance(value, int) and not isinstance(value, bool):
            value = int(value)
        elif value is not None and not isinstance(value, bool):
            value = str(value)
        key[part] = value
    if digits is not None:
        key["digits"] = int(digits)
    return key | extra


def memo(name: str, arguments: dict | None, compute, valid=None):
    """``compute()`` (a JSON document) for ``arguments`` (a JSON object, :func:`model_key`), from the cache when it
    holds it for the current :func:`derivation_key` (unchanged since it was written, and accepted by ``valid(value)``
    when given: a check of its fields and types), else computed and stored; computed and not stored when ``arguments``
    is ``None`` (a model :func:`model_key` cannot name). For exact results that take SymPy to make and are read often
    (a pooling's ``alpha``, ``kappa``, ``W`` as ``p/q`` text)."""
    if arguments is None:
        return compute()
    text = json.dumps(arguments, sort_keys=True, separators=(",", ":"))
    entry_name = f"{name}-{hashlib.sha256(text.encode()).hexdigest()[:32]}.json"
    stored = _read(_folder(), entry_name)
    if stored is not None:
        try:
            entry = json.loads(stored)
            if isinstance(entry, dict) and "value" in entry and entry.get("arguments") == json.loads(text) and (
                    valid is None or valid(entry["value"])):
                return entry["value"]
        except Exception:  # noqa: BLE001 (an entry that makes its check fail is doubted: computed again)
            pass
    value = compute()
    _write(entry_name, json.dumps({"arguments": json.loads(text), "value": value}))
    return value


KERNEL_MARK = "attention-rmt sources"
"""The first item of a cache stamp that :func:`keep_fresh` extended (it extends a stamp once)."""


def sources_digest(paths) -> str:
    """SHA-256 of the names and contents of the files ``paths``, in the order of their names.

    >>> import tempfile
    >>> with tempfile.TemporaryDirectory() as folder:
    ...     (Path(folder) / "a.py").write_text("x = 1")
    ...     before = sources_digest([Path(folder) / "a.py"])
    ...     (Path(folder) / "a.py").write_text("x = 2")
    ...     before != sources_digest([Path(folder) / "a.py"])
    5
    5
    True
    """
    h = hashlib.sha256()
    for path in sorted(map(Path, paths), key=lambda p: p.name):
        h.update(path.name.encode() + b"\0" + path.read_bytes() + b"\0")
    return h.hexdigest()


@functools.lru_cache(maxsize=None)
def _kernel_digest(paths: tuple) -> str:
    # the modules of one package key their kernels to the same files: read them once per process
    return sources_digest(paths)


def keep_fresh(namespace: dict, *files: str) -> int:
    """Key the cache of every cached numba kernel in ``namespace`` (a module's ``globals()``) to the contents of
    ``files`` (names in the module's folder: every file whose compiled functions its kernels call or inline, its own
    included), beside numba's own stamp of the kernel's file; how many kernels. Only kernels whose Python function is
    in one of ``files`` are keyed, each once: one imported from another kernel module keeps the key its own module
    gave it, so that every process finds the same stamp. A numba whose caches are laid out otherwise is left as it is
    (numba's own stamp then applies)."""
    folder = Path(namespace["__file__"]).resolve().parent
    paths = tuple(folder / name for name in files)
    digest = _kernel_digest(paths)
    count = 0
    for value in list(namespace.values()):
        cache_file = getattr(getattr(value, "_cache", None), "_cache_file", None)
        stamp = getattr(cache_file, "_source_stamp", None)
        code = getattr(getattr(value, "py_func", None), "__code__", None)
        if stamp is None or code is None or Path(code.co_filename).resolve() not in paths \
                or (isinstance(stamp, tuple) and stamp[:1] == (KERNEL_MARK,)):
            continue
        cache_file._source_stamp = (KERNEL_MARK, stamp, digest)
        count += 1
    return count
