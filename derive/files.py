"""Files named by the user: read only regular files of bounded size, check an output path before any work is
done, and write an output whole or not at all.

A name may point at ``/dev/zero``, a FIFO or a directory; reading such a thing never ends or fails late.
The input file is opened without blocking (a FIFO with no writer would block ``open``), checked with
``fstat`` on the open descriptor (no race between the check and the read), and read up to its limit.

An output path is checked by making (and removing) a file where the output will go, so that a read-only or
pseudo file system (``/sys``) is refused before the work, not after it. An output is written to a temporary file
in its folder and renamed into place (:func:`replaced`): a full disk, a file-size limit or a signal leaves the
former file, or none, never a part of one.
"""
from __future__ import annotations

import os
import stat
import tempfile
from contextlib import contextmanager
from pathlib import Path

from derive.errors import ParameterError

__all__ = ["MAX_BYTES", "read_regular_file", "check_output_file", "check_output_folder", "check_output_target",
           "make_folder", "replaced", "remove_pending", "write_file"]

MAX_BYTES = 16 * 2**20
"""Largest user data file read (10^5 numbers of 100 characters each)."""


def _name(path, parameter: str) -> Path:
    if not isinstance(path, (str, Path)) or not str(path):
        raise ParameterError(parameter, f"a file name must be a non-empty string, got {path!r}")
    if "\0" in str(path):
        raise ParameterError(parameter, "a file name cannot hold a NUL character")
    return Path(path)


def read_regular_file(path, parameter: str, max_bytes: int) -> bytes:
    """The bytes of the regular file ``path``, at most ``max_bytes`` of them; anything else is refused
    naming ``parameter``.

    >>> read_regular_file("/dev/zero", "signs", 10)
    Traceback (most recent call last):
    ...
    derive.errors.ParameterError: signs: /dev/zero: not a regular file (a device, FIFO or folder is never read)
    """
    p = _name(path, parameter)
    try:
        fd = os.open(p, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    except FileNotFoundError:
        raise ParameterError(parameter, f"{path}: no such file") from None
    except OSError as exc:
        raise ParameterError(parameter, f"{path}: cannot be opened ({exc.strerror})") from None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise ParameterError(parameter, f"{path}: not a regular file (a device, FIFO or folder is never read)")
        if info.st_size > max_bytes:
            raise ParameterError(parameter, f"{path}: {info.st_size} bytes, more than the {max_bytes} read")
        with os.fdopen(fd, "rb", closefd=False) as f:
            # one byte more than fstat said, to see a file that grows while it is read
            data = f.read(min(info.st_size, max_bytes) + 1)
    except OSError as exc:
        raise ParameterError(parameter, f"{path}: unreadable ({exc.strerror})") from None
    finally:
        os.close(fd)
    if len(data) > max_bytes:
        raise ParameterError(parameter, f"{path}: grew beyond the {max_bytes} bytes read")
    return data


def check_output_file(path, parameter: str) -> Path:
    """``path`` as a file that can be created or appended to: an existing regular file or a new name in
    an existing folder (not a folder, a device, a FIFO, ``/dev/null``, nor a name under a file).

    >>> check_output_file("/dev/null", "results")
    Traceback (most recent call last):
    ...
    derive.errors.ParameterError: results: /dev/null: not a regular file
    """
    p = _name(path, parameter)
    try:
        info = os.stat(p)
    except FileNotFoundError:
        parent = p.parent if str(p.parent) else Path(".")
        if not parent.is_dir():
            raise ParameterError(parameter, f"{path}: the folder {parent} does not exist") from None
        _probe(parent, path, parameter)
        return p
    except NotADirectoryError:
        raise ParameterError(parameter, f"{path}: a part of the path is a file, not a folder") from None
    except OSError as exc:
        raise ParameterError(parameter, f"{path}: {exc.strerror}") from None
    if not stat.S_ISREG(info.st_mode):
        raise ParameterError(parameter, f"{path}: not a regular file")
    try:
        os.close(os.open(p, os.O_WRONLY | os.O_APPEND | os.O_NONBLOCK | os.O_CLOEXEC))
    except OSError as exc:
        raise ParameterError(parameter, f"{path}: not writable ({exc.strerror})") from None
    return p


def _probe(folder: Path, path, parameter: str) -> None:
    """Make and remove a file in ``folder``: the one sure test that an output can be written there (``access``
    says yes to root in ``/sys``, and to a read-only file system's folders)."""
    try:
        fd, name = tempfile.mkstemp(dir=folder, prefix=".probe-")
    except OSError as exc:
        raise ParameterError(parameter, f"{path}: nothing can be written in {folder} ({exc.strerror})") from None
    os.close(fd)
    os.unlink(name)


def check_output_folder(path, parameter: str) -> Path:
    """``path`` as a folder that exists or can be made (its nearest existing ancestor is a writable
    folder), checked before the work that fills it.

    >>> check_output_folder("/dev/null/figures", "figures")
    Traceback (most recent call last):
    ...
    derive.errors.ParameterError: figures: /dev/null/figures: /dev/null is not a folder
    """
    p = _name(path, parameter)
    ancestor = p
    while not ancestor.exists() and ancestor != ancestor.parent:
        if ancestor.is_symlink():
            raise ParameterError(parameter, f"{path}: {ancestor} is a broken link")
        ancestor = ancestor.parent
    if not ancestor.is_dir():
        raise ParameterError(parameter, f"{path}: {ancestor} is not a folder")
    _probe(ancestor, path, parameter)
    return p


def check_output_target(path, parameter: str) -> Path:
    """``path`` as a file to be written whose missing folders will be made: its nearest existing ancestor
    a writable folder, and the file itself regular or new once its folder exists.

    >>> check_output_target("/dev/null/notes.md", "notes")
    Traceback (most recent call last):
    ...
    derive.errors.ParameterError: notes: /dev/null: /dev/null is not a folder
    """
    p = _name(path, parameter)
    check_output_folder(p.parent, parameter)
    if p.parent.is_dir():
        check_output_file(p, parameter)
    return p


def make_folder(path, parameter: str) -> Path:
    """The folder ``path``, made with its missing parents; a failure (a full disk, a name taken meanwhile) is a
    :class:`ParameterError` naming ``parameter``."""
    p = _name(path, parameter)
    try:
        p.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise ParameterError(parameter, f"{path}: the folder cannot be made ({exc.strerror or exc})") from None
    return p


_PENDING: set = set()
"""The temporary files of :func:`replaced` still being written."""


def remove_pending() -> None:
    """Remove the temporary files still being written: a process about to end without unwinding (a stop signal that
    the main thread could not take up in time, :mod:`derive.cli.stop`) leaves no partial file."""
    for temporary in list(_PENDING):
        try:
            os.unlink(temporary)
        except OSError:
            pass


@contextmanager
def replaced(path, parameter: str, mode: int | None = None):
    """A binary file whose content replaces ``path`` (its folders made as needed) when the block ends without
    error: written to a temporary file in the same folder, flushed to disk, then renamed into place. A failure
    in the block (a full disk, a file-size limit, a signal) leaves ``path`` as it was and removes the temporary
    file; a write error is a :class:`ParameterError` naming ``parameter``. The file's permissions are ``mode``, else
    those of the file it replaces, else the default of the umask.

    >>> import tempfile, os
    >>> target = os.path.join(tempfile.mkdtemp(), "sheet.tex")
    >>> with replaced(target, "out") as f:
    ...     _ = f.write(b"whole")
    >>> open(target).read(), os.listdir(os.path.dirname(target))
    ('whole', ['sheet.tex'])
    """
    p = _name(path, parameter)
    folder = make_folder(p.parent if str(p.parent) else Path("."), parameter)
    if mode is None:
        try:
            mode = stat.S_IMODE(os.stat(p).st_mode)
        except OSError:
            mode = 0o666 & ~_umask()
    try:
        fd, temporary = tempfile.mkstemp(dir=folder, prefix=f".{p.name}.", suffix=".part")
    except OSError as exc:
        raise ParameterError(parameter, f"{path}: cannot be written ({exc.strerror or exc})") from None
    _PENDING.add(temporary)
    try:
        with os.fdopen(fd, "wb") as f:
            yield f
            f.flush()
            os.fchmod(f.fileno(), mode)
            os.fsync(f.fileno())
        os.replace(temporary, p)
        _PENDING.discard(temporary)
    except BaseException as exc:
        _PENDING.discard(temporary)
        try:
            os.unlink(temporary)
        except OSError:
            pass
        if isinstance(exc, OSError):
            raise ParameterError(parameter, f"{path}: cannot be written ({exc.strerror or exc})") from None
        raise


def write_file(path, content, parameter: str, mode: int | None = None) -> Path:
    """Write ``content`` (text, as UTF-8, or bytes) to ``path`` whole or not at all, with the permissions ``mode``
    (:func:`replaced`)."""
    with replaced(path, parameter, mode) as f:
        f.write(content.encode() if isinstance(content, str) else content)
    return Path(path)


def _umask() -> int:
    mask = os.umask(0o022)
    os.umask(mask)
    return mask
