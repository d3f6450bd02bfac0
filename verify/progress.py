"""Progress with an estimate of the time left, on stderr, for every run longer than a few seconds.

A long computation reports ``(done, total)`` in units of work of its own choosing (trials weighted by their cost,
figures' cells); :func:`progress` turns those reports into a tqdm bar on stderr that appears only after
:data:`DELAY` seconds, so that short runs print nothing and stdout (one JSON document) is never touched.
"""
from __future__ import annotations

import sys
import time

__all__ = ["DELAY", "Progress", "progress"]

DELAY = 2.0
"""Seconds a run may last before its progress bar appears."""

_FORMAT = "{desc}: {percentage:3.0f}%|{bar:20}|{counts} {elapsed} elapsed, about {remaining} left"


class Progress:
    """A callable ``report(done, total)`` drawing one bar; :meth:`close` ends it (also as a context manager). Its
    elapsed time counts from its making, or from a report of 0 done before the bar shows (the work's start)."""

    def __init__(self, desc: str, enabled: bool | None = None, unit: str | None = None):
        self.desc, self.enabled, self.unit, self.bar = desc, enabled, unit, None
        self.start = time.monotonic()

    def __call__(self, done: float, total: float) -> None:
        if self.enabled is False:
            return
        if self.bar is None and done == 0:
            # a report of nothing done marks where the work starts (after reading its input, say): the bar's elapsed
            # time is then the work's, the time its caller states for it (verify sweep --summarize's bar had said 24 s
            # where its summary said 45 s)
            self.start = time.monotonic()
        if self.bar is None:
            # a run shorter than DELAY never loads tqdm (30 ms of a one-trial command)
            if self.enabled is None and time.monotonic() - self.start < DELAY:
                return
            from tqdm import tqdm
            counts = f" {{n_fmt}}/{{total_fmt}} {self.unit}," if self.unit else ""
            self.bar = tqdm(total=total, desc=self.desc, file=sys.stderr, delay=0,
                            bar_format=_FORMAT.replace("{counts}", counts), mininterval=0.5)
            # the bar appears DELAY seconds or more into the work; its elapsed time counts from the work's start
            self.bar.start_t -= time.monotonic() - self.start
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


def progress(desc: str, *, enabled: bool | None = None, unit: str | None = None) -> Progress:
    """A progress report for ``desc``: shown after :data:`DELAY` seconds, at once if ``enabled=True``, never if
    ``enabled=False``; with a ``unit`` (``"trials"``) it also counts ``done/total``.

    >>> with progress("demo", enabled=False) as report:
    ...     report(1, 2)
    """
    return Progress(desc, enabled, unit)
