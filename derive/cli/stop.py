"""SIGINT and SIGTERM as a command line's clean stop: one line on stderr and status 130 or 143 (128 plus the signal's
number), from the first line of the command's code to its last.

This module imports nothing but the standard library's ``os``, ``signal``, ``sys`` and ``threading``, so that a
command installs its handlers before anything else is imported: a signal in the first tens of milliseconds, while
``argparse`` and the command's modules were still being imported, had ended in a ``KeyboardInterrupt`` traceback
(SIGINT) or a silent death (SIGTERM: status -15). Python's own start-up, before the console script's first line, stays
outside any handler of ours.
"""
from __future__ import annotations

import os
import signal
import sys
import threading

__all__ = ["STOP_SIGNALS", "Interrupted", "stopped_line", "run_stoppable"]

STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM)
"""The signals that stop a command cleanly."""


class Interrupted(BaseException):
    """A stop signal, raised in the main thread where it arrived, so that everything on the way out closes as it
    does for an error (a ``BaseException``: no ``except Exception`` of a check or of SymPy takes it for a failure)."""

    def __init__(self, signum: int):
        super().__init__(signum)
        self.signum = signum


def stopped_line(prog: str, signum: int) -> str:
    """The line a stopped command prints.

    >>> stopped_line("derive", signal.SIGTERM)
    'derive: interrupted by SIGTERM'
    """
    return f"{prog}: interrupted by {signal.Signals(signum).name}"


def _exit(prog: str, signum: int, printed: list) -> None:
    try:
        # ending without unwinding: the outputs being written are removed here, not by their own blocks
        files = sys.modules.get("derive.files")
        if files is not None:
            files.remove_pending()
        if not printed:
            printed.append(True)
            print(stopped_line(prog, signum), file=sys.stderr, flush=True)
    finally:
        os._exit(128 + signum)


GRACE = 2.0
"""Seconds the main thread has to take a stop signal up before the process ends without it: a numba kernel (they
release the GIL) or a C loop runs on without looking at Python's handlers, and a stop must come within a second or
two whatever is being computed (a SIGTERM had gone unheard for minutes in the model's root-token kernel)."""

CLEANUP = 10.0
"""Seconds a stop that was taken up has to close what it opened (a sweep's results file) before the process ends."""


def _watch(prog: str, received: list, printed: list) -> None:
    """A daemon thread that hears a stop signal where the main thread may not: the C-level handler writes the signal's
    number to a pipe (:func:`signal.set_wakeup_fd`) whatever the main thread is doing; :data:`GRACE` seconds later, if
    the main thread has not taken the signal up (``received`` empty), the line is printed and the process ends with
    ``128 + signal``; if it has, it gets :data:`CLEANUP` seconds to finish the same way."""
    read, write = os.pipe()
    os.set_blocking(write, False)
    try:
        signal.set_wakeup_fd(write, warn_on_full_buffer=False)
    except ValueError:
        return

    def watch():
        signum = os.read(read, 1)[0]
        if not threading.Event().wait(GRACE) and not received:
            _exit(prog, signum, printed)
        threading.Event().wait(CLEANUP - GRACE)
        _exit(prog, received[0] if received else signum, printed)

    threading.Thread(target=watch, name="stop-watch", daemon=True).start()


def run_stoppable(prog: str, run, *, program: bool = False) -> int:
    """``run()`` (the command: its imports, its work, its output; it returns the exit status) with the first SIGINT or
    SIGTERM turned into :class:`Interrupted` while it runs; then the line is printed and ``128 + signal`` returned. A
    second signal while the first is being handled prints the line and exits at once (the workers die with this
    process).

    ``program``: this process is the command (its console script, or ``python -m``). Then the handlers stay after
    ``run()`` has returned: a signal while the interpreter exits ends it the same way, never with the default action
    (a second SIGTERM had found the default handler back, and the status was -15); after a stop, further stops are
    ignored while it exits. Otherwise (a call from Python, a
    test) the former handlers are restored, and a signal in the instant between the two goes to them.
    """
    if threading.current_thread() is not threading.main_thread():
        return run()
    received, active, printed = [], [True], []

    def stop(signum, frame):
        received.append(signum)
        if active[0] and len(received) == 1:
            raise Interrupted(signum)
        if program or len(received) > 1:
            _exit(prog, received[0], printed)
        handler = previous.get(signum)
        if callable(handler):
            handler(signum, frame)
        elif handler == signal.SIG_DFL:
            signal.signal(signum, signal.SIG_DFL)
            os.kill(os.getpid(), signum)

    previous = {}
    try:
        try:
            # inside: a signal between the two handlers, or while the watchdog starts, is a clean stop like any other
            for s in STOP_SIGNALS:
                previous[s] = signal.signal(s, stop)
            if program:
                _watch(prog, received, printed)
            status = run()
        finally:
            active[0] = False
    except BaseException:
        if not received:
            raise
    finally:
        if not program:
            for s, handler in previous.items():
                signal.signal(s, handler)
    if received:
        if program:
            # a further stop while the interpreter exits is ignored: its finalization gives a Python handler's signals
            # the default action back, and a second SIGTERM there had ended a stopped sweep with -15 after its line
            # (the watchdog still ends the process within CLEANUP seconds)
            for s in STOP_SIGNALS:
                signal.signal(s, signal.SIG_IGN)
        printed.append(True)
        print(stopped_line(prog, received[0]), file=sys.stderr, flush=True)
        return 128 + received[0]
    return status
