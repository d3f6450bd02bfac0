"""Options shared by the ``verify`` commands (those shared with ``derive``'s are in :mod:`derive.cli.kit`)."""
from __future__ import annotations

__all__ = ["MEMORY_HELP", "add_max_memory"]

MEMORY_HELP = ("most memory one Monte Carlo trial may hold, e.g. 8GiB or 512MiB (default: half of the memory available, "
               "shared by the trials that run at once); a larger trial is refused before anything is drawn")
"""The help of every ``--max-memory`` (the commands that draw)."""


def add_max_memory(p) -> None:
    """The ``--max-memory SIZE`` option of a command that draws (:func:`verify.montecarlo.memory.set_max_memory`
    reads it)."""
    p.add_argument("--max-memory", default=None, metavar="SIZE", help=MEMORY_HELP)
