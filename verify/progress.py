"""Progress with an estimate of the time left, on stderr, for every run longer than a few seconds.

A long computation reports ``(done, total)`` in units of work of its own choosing (trials weighted by their cost,
figures' cells); :func:`progress` turns those reports into a tqdm bar on stderr that appears only after
:data:`DELAY` seconds, so that short runs print nothing and stdout (one JSON document) is never touched.
"""
from __future__ import annotations

import sys

__all__ = ["DELAY", "Progress", "progress"]

DELAY = 2.0
"""Seconds a run may last before its progress bar appears."""

_FORMAT = "{desc}: {percentage:3.0f}%|{bar:20}| {elapsed} elapsed, about {remaining} left"


class Progress:
    """A callable ``report(done, total)`` drawing one bar; :meth:`close` ends it (also as a context manager)."""

    def __init__(self, desc: str, enabled: bool | None = None):
        self.desc, self.enabled, self.bar = desc, enabled, None

    def __call__(self, done: float, total: float) -> None:
        if self.enabled is False:
            return
        if self.bar is None:
            from tqdm import tqdm
            self.bar = tqdm(total=total, desc=self.desc, file=sys.stderr, delay=DELAY, bar_format=_FORMAT,
                            mininterval=0.5)
        self.bar.total = total
        self.bar.update(done - self.bar.n)

    def describe(self, desc: str) -> None:
        """Change the bar's label (what runs now)."""
        self.desc = desc
        if self.bar is not None:
            self.bar.set_description_str(desc, refresh=False)

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()
            self.bar = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


def progress(desc: str, *, enabled: bool | None = None) -> Progress:
    """A progress report for ``desc``; ``enabled=False`` silences it.

    >>> with progress("demo", enabled=False) as report:
    ...     report(1, 2)
    """
    return Progress(desc, enabled)
