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
each other's at every switch, which cost a second of SymPy each time). A file that
does not compile, does not parse or lacks a function is treated as missing. Where the folder cannot
be written the results are still made, in memory, on every run.

``ATTENTION_RMT_CACHE_DIR`` overrides the folder; ``ATTENTION_RMT_CACHE_DIR=off`` turns the cache off.
"""
from __future__ import annotations

import functools
import hashlib
import importlib.util
import json
import os
import re
import sys
from pathlib import Path

import mpmath

__all__ = ["ENVIRONMENT", "STALE_AFTER", "cache_dir", "derivation_key", "mpmath_source", "mpmath_functions", "memo"]

ENVIRONMENT = "ATTENTION_RMT_CACHE_DIR"
"""The environment variable naming the cache folder (``off``: no cache)."""

_PACKAGE = Path(__file__).resolve().parent


def cache_dir() -> Path | None:
    """The folder of the cache: ``$ATTENTION_RMT_CACHE_DIR``, else ``$XDG_CACHE_HOME/attention-rmt``, else
    ``~/.cache/attention-rmt``; ``None`` when ``$ATTENTION_RMT_CACHE_DIR`` is ``off``."""
    chosen = os.environ.get(ENVIRONMENT)
    if chosen is not None:
        return None if chosen.strip().lower() == "off" else Path(chosen)
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
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


def _load(text: str, names) -> dict | None:
    namespace = {}
    try:
        exec(compile(text, "<derive.cache>", "exec"), namespace)
    except Exception:  # a damaged file is a missing one: the caller derives again
        return None
    if not all(name in namespace for name in names):
        return None
    return {name: namespace[name] for name in names}


_KEY_FOLDER = re.compile(r"^derive-[0-9a-f]{32}$")


def _folder() -> Path | None:
    folder = cache_dir()
    return None if folder is None else folder / f"derive-{derivation_key()[:32]}"


STALE_AFTER = 7 * 24 * 3600
"""Seconds after its last use at which the folder of another key is deleted."""


def _write(target: Path, text: str) -> None:
    """Write ``text`` to ``target`` atomically; the folders of other keys unused for :data:`STALE_AFTER` go."""
    import shutil
    import time

    from derive.errors import ParameterError
    from derive.files import write_file

    try:
        write_file(target, text, "cache")  # a reader sees the old file or the whole new one
        for stale in target.parent.parent.iterdir():
            if (stale.is_dir() and stale != target.parent and _KEY_FOLDER.match(stale.name)
                    and time.time() - stale.stat().st_mtime > STALE_AFTER):
                shutil.rmtree(stale, ignore_errors=True)
    except (OSError, ParameterError):
        pass  # a read-only or full disk: the results stay in memory for this run


def _read(target: Path | None) -> str | None:
    if target is None:
        return None
    try:
        text = target.read_text()
    except (OSError, UnicodeDecodeError):
        return None
    try:
        os.utime(target.parent)  # the folder's last use, by which stale folders are told apart
    except OSError:
        pass
    return text


def mpmath_functions(name: str, names, build) -> dict:
    """The functions ``names`` of the table ``build()`` (:func:`mpmath_source`), from the cache when it holds
    them for the current :func:`derivation_key`, else made by ``build`` (SymPy) and stored."""
    folder = _folder()
    target = None if folder is None else folder / f"{name}.py"
    text = _read(target)
    loaded = None if text is None else _load(text, names)
    if loaded is not None:
        return loaded
    text = mpmath_source(build())
    loaded = _load(text, names)
    if loaded is None:
        raise RuntimeError(f"derive.cache: the generated source of {name!r} does not define {list(names)}")
    if target is not None:
        _write(target, text)
    return loaded


def memo(name: str, arguments: dict, compute):
    """``compute()`` (a JSON document) for ``arguments`` (a JSON object), from the cache when it holds it
    for the current :func:`derivation_key`, else computed and stored. For exact results that take SymPy
    to make and are read often (a pooling's ``alpha``, ``kappa``, ``W`` as ``p/q`` text)."""
    text = json.dumps(arguments, sort_keys=True, separators=(",", ":"))
    folder = _folder()
    target = None if folder is None else folder / f"{name}-{hashlib.sha256(text.encode()).hexdigest()[:32]}.json"
    stored = _read(target)
    if stored is not None:
        try:
            entry = json.loads(stored)
            if entry["arguments"] == json.loads(text):
                return entry["value"]
        except (ValueError, KeyError, TypeError):
            pass
    value = compute()
    if target is not None:
        _write(target, json.dumps({"arguments": json.loads(text), "value": value}))
    return value
