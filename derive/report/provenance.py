"""What produced a result: the package's version, the git commit of its checkout, a hash of the code that ran, and
the versions of Python and of the libraries the numbers depend on.

:func:`provenance` is the one place every JSON document of the command lines (``"provenance"``, added by
:func:`with_provenance`), the claims ledger (``claims.md``, ``claims.json``) and any other output take it from. It is cheap (a few milliseconds): the
versions are read from the names of the installed distributions' metadata folders, not by importing the libraries
or through :mod:`importlib.metadata` (which reads every distribution, some 60 to 250 ms), and the commit from the
files of the ``.git`` folder, without running ``git``.
"""
from __future__ import annotations

import functools
import hashlib
import os
import re
import sys
from pathlib import Path

__all__ = ["LIBRARIES", "provenance", "with_provenance", "installed_versions", "git_commit", "source_hash"]

LIBRARIES = ("sympy", "mpmath", "numpy", "scipy", "numba")
"""The libraries whose versions a result records: the ones that derive (SymPy), evaluate (mpmath) and draw and
solve (NumPy, SciPy, numba)."""

PACKAGE = "attention-rmt"

_ROOT = Path(__file__).resolve().parents[2]
"""The folder holding ``derive/`` and ``verify/`` (the checkout, for an editable install)."""

_DIST_INFO = re.compile(r"^(?P<name>[A-Za-z0-9_.]+?)-(?P<version>[^-]+?)\.dist-info$")
_HASH = re.compile(r"^[0-9a-f]{40}([0-9a-f]{24})?$")


def _normal(name: str) -> str:
    return re.sub(r"[-_.]+", "_", name).lower()


@functools.lru_cache(maxsize=None)
def installed_versions() -> dict:
    """The version of every distribution installed on ``sys.path``, by normalized name (``attention_rmt``), read
    from the names of the ``NAME-VERSION.dist-info`` folders; the first one on the path wins, as for imports.

    >>> installed_versions()["mpmath"] == __import__("mpmath").__version__
    True
    """
    found = {}
    for entry in sys.path:
        try:
            names = os.listdir(entry or ".")
        except OSError:
            continue
        for name in names:
            match = _DIST_INFO.match(name)
            if match:
                found.setdefault(_normal(match["name"]), match["version"])
    return found


def _git_dir(root: Path) -> Path | None:
    dot = root / ".git"
    if dot.is_dir():
        return dot
    if dot.is_file():
        # a worktree or submodule: ".git" is a file naming the real folder
        text = dot.read_text().strip()
        if text.startswith("gitdir:"):
            target = Path(text[len("gitdir:"):].strip())
            return target if target.is_absolute() else (root / target).resolve()
    return None


def _ref(git: Path, ref: str) -> str | None:
    """The commit ``ref`` names, from its loose file or ``packed-refs``, in ``git`` or in the folder it shares
    refs with (``commondir``, for a worktree)."""
    folders = [git]
    common = git / "commondir"
    if common.is_file():
        shared = Path(common.read_text().strip())
        folders.append(shared if shared.is_absolute() else (git / shared).resolve())
    for folder in folders:
        loose = folder / ref
        if loose.is_file():
            return loose.read_text().strip()
        packed = folder / "packed-refs"
        if packed.is_file():
            for line in packed.read_text().splitlines():
                if line.endswith(" " + ref):
                    return line.split(" ", 1)[0]
    return None


@functools.lru_cache(maxsize=None)
def git_commit(root: str | None = None) -> str | None:
    """The commit checked out where the package's code lives (``root``: the checkout, by default the folder holding
    ``derive/``), or ``None`` outside a git checkout (an installed wheel). A modified checkout has the same commit:
    :func:`source_hash` tells the code apart.

    >>> c = git_commit(); c is None or len(c) == 40
    True
    """
    try:
        git = _git_dir(Path(root) if root else _ROOT)
        if git is None:
            return None
        head = (git / "HEAD").read_text().strip()
        commit = _ref(git, head[len("ref:"):].strip()) if head.startswith("ref:") else head
    except OSError:
        return None
    return commit if commit and _HASH.match(commit) else None


@functools.lru_cache(maxsize=None)
def source_hash() -> str:
    """The first 16 hex digits of the SHA-256 of every ``.py`` file of the packages ``derive`` and ``verify`` as
    they ran (by path): two results with the same hash came from the same code, committed or not.

    >>> len(source_hash())
    16
    """
    digest = hashlib.sha256()
    for package in ("derive", "verify"):
        for path in sorted((_ROOT / package).rglob("*.py")):
            digest.update(str(path.relative_to(_ROOT)).encode() + b"\0" + path.read_bytes() + b"\0")
    return digest.hexdigest()[:16]


def provenance() -> dict:
    """What produced a result, as a JSON-ready dict: ``package``, ``version`` (``None`` when the package is not
    installed), ``commit`` (``None`` outside a git checkout), ``source`` (:func:`source_hash`), ``python`` and
    ``libraries`` (the version of each of :data:`LIBRARIES`, ``None`` if absent).

    >>> p = provenance(); sorted(p), sorted(p["libraries"])
    (['commit', 'libraries', 'package', 'python', 'source', 'version'], ['mpmath', 'numba', 'numpy', 'scipy', 'sympy'])
    """
    versions = installed_versions()
    return {"package": PACKAGE, "version": versions.get(_normal(PACKAGE)), "commit": git_commit(),
            "source": source_hash(), "python": ".".join(map(str, sys.version_info[:3])),
            "libraries": {name: versions.get(_normal(name)) for name in LIBRARIES}}


def with_provenance(doc):
    """A command's JSON document with the ``"provenance"`` of the run (:func:`provenance`) added as its last key; a
    document that is a list (``derive formulas``, ``verify claims``) is left as it is.

    >>> list(with_provenance({"law": "exact"})), with_provenance([1])
    (['law', 'provenance'], [1])
    """
    if not isinstance(doc, dict) or "provenance" in doc:
        return doc
    return {**doc, "provenance": provenance()}
