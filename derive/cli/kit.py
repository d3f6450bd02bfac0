"""Plumbing shared by the ``derive`` and ``verify`` command lines.

A command is a module with ``NAME``, ``HELP``, ``add_arguments(parser)`` and
``run(args) -> object`` (a JSON-ready document), and optionally ``exit_status(doc) -> int`` (the status once
the document is printed; 0 without it), ``render(doc) -> str`` (its output without ``--json``; ``derive``'s are
in :mod:`derive.report.text`) and ``EPILOG`` (text printed as written after the options of its ``--help``). Bad
input, from argparse or from a :class:`ParameterError`, ends with exit status 2 and one line on stderr. SIGINT and
SIGTERM end a command with one line on stderr and status 130 or 143 (128 plus the signal's number), once every
``with`` block on the way out has closed: worker processes stopped, partial files removed
(:class:`derive.cli.stop.Interrupted`).
"""
from __future__ import annotations

import argparse
import importlib
import json
import os
import re
import sys

from derive.errors import ParameterError

__all__ = ["add_signs", "add_scheme", "scheme_options", "LAW_HELP", "add_law", "plain", "listed", "version", "run_cli"]


def add_signs(p, *, required: bool = False, default: str | None = None, help: str = "sign family") -> None:
    """The ``--signs`` option: its valid forms from the catalogue of sign families (:mod:`derive.model.families`)."""
    from derive.model.families import family_syntaxes

    p.add_argument("--signs", required=required, default=default, metavar=listed(family_syntaxes()), help=help)


def add_scheme(p, *, required: bool = False, default: str | None = None, help: str | None = "weight scheme") -> None:
    """The weight scheme's option ``--weights`` (``help=None`` leaves it out, for a command whose scheme is fixed) and
    every option of a scheme (``--tau``, ``--mask``), their forms and help from the catalogue of weight schemes
    (:mod:`derive.model.schemes`)."""
    from derive.model.schemes import CATALOGUE, OPTIONS, scheme_syntaxes

    if help is not None:
        p.add_argument("--weights", required=required, default=default, metavar=listed(scheme_syntaxes()), help=help)
    for o in OPTIONS:
        owners = " or ".join(s.name for s in CATALOGUE if o in s.options)
        p.add_argument(f"--{o.name}", default=None, metavar=listed(o.choices) if o.choices else None,
                       help=f"{owners} only: {o.help}")


def scheme_options(args) -> dict:
    """The scheme options a command read (``None`` where not given), as keywords of :class:`derive.Model`."""
    from derive.model.schemes import OPTIONS

    return {o.name: getattr(args, o.name) for o in OPTIONS}


LAW_HELP = {
    "finite-vocabulary": "the model's own law (the default; seconds to minutes the first time, then kept) with its "
                         "Gaussian equivalent beside it",
    "gaussian-equivalent": "the paper's law alone (pooled vectors replaced by Gaussian ones with the same covariance), "
                           "at once",
}
"""What each law of :data:`derive.interface.LAWS` gives, as every ``--law`` help says it."""


def add_law(p, *, default: str | None = None, more: str = "") -> None:
    """The ``--law`` option of a command that computes a law: the same choices (:data:`derive.interface.LAWS`) and
    help everywhere, followed by ``more`` (what the command adds)."""
    from derive.interface import LAWS

    p.add_argument("--law", default=default, metavar=listed(LAWS),
                   help="; ".join(f"{law}: {LAW_HELP[law]}" for law in LAWS) + more)


def plain(text: str | None) -> str | None:
    """``text`` without reStructuredText markup, as a terminal shows it (a docstring made into a ``--help``).

    >>> plain("The ``derive`` command line, see :func:`derive.weights`")
    'The derive command line, see derive.weights'
    """
    if text is None:
        return None
    return re.sub(r"``([^`]*)``", r"\1", re.sub(r":[a-z]+:`~?([^`]*)`", r"\1", text))


def listed(values) -> str:
    """The valid values of an option as ``--help`` shows them.

    >>> listed(("inclusive", "strict"))
    '{inclusive,strict}'
    """
    return "{" + ",".join(values) + "}"


class _OneLineParser(argparse.ArgumentParser):
    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        # argparse reads "-1/2" or "-1e-3" as an option name, so "--sum-w -1/2" failed; every
        # numeric form that parse_rational accepts is a value here, and so is a comma-separated list of
        # them that starts with a negative one ("--x -1,2")
        number = r"-?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?(/\d+)?"
        self._negative_number_matcher = re.compile(rf"^-{number[2:]}(,{number})*$")

    def error(self, message):
        raise ParameterError("arguments", message)


def version() -> str:
    """The installed version of the distribution (``attention-rmt``)."""
    from importlib.metadata import PackageNotFoundError, version as installed
    try:
        return installed("attention-rmt")
    except PackageNotFoundError:
        return "unknown (not installed)"


class _Version(argparse.Action):
    """``--version``: the installed version, looked up only when asked for (importlib.metadata reads the
    environment's distributions, 60 ms that every other command would pay)."""

    def __init__(self, option_strings, dest=argparse.SUPPRESS, default=argparse.SUPPRESS, prog="",
                 help="show program's version number and exit"):
        super().__init__(option_strings, dest=dest, default=default, nargs=0, help=help)
        self.prog = prog

    def __call__(self, parser, namespace, values, option_string=None):
        print(f"{self.prog} (attention-rmt) {version()}")
        parser.exit()


def _print_human(doc, out):
    from derive.report.text import readable

    print(doc if isinstance(doc, str) else readable(doc), file=out)


def run_cli(prog: str, description: str, command_modules: list[str], argv=None) -> int:
    """Parse ``argv``, run the chosen command, print its document; return the exit status. The ``main`` of each
    command line calls it under :func:`derive.cli.stop.run_stoppable`, which makes SIGINT and SIGTERM a clean stop
    from before this module is imported."""
    parser = _OneLineParser(prog=prog, description=plain(description))
    parser.add_argument("--version", action=_Version, prog=prog)
    sub = parser.add_subparsers(dest="command", parser_class=_OneLineParser)
    commands = {}
    for path in command_modules:
        module = importlib.import_module(path)
        # a command's EPILOG (a list laid out by hand) is printed as written, after the options
        epilog = getattr(module, "EPILOG", None)
        p = sub.add_parser(module.NAME, help=plain(module.HELP), description=plain(module.HELP), epilog=epilog,
                           formatter_class=argparse.RawDescriptionHelpFormatter if epilog else argparse.HelpFormatter)
        p.add_argument("--version", action=_Version, prog=prog)
        p.add_argument("--json", action="store_true", help="print exactly one JSON document")
        module.add_arguments(p)
        commands[module.NAME] = module
    try:
        args = parser.parse_args(argv)
        if args.command is None:
            raise ParameterError("command", f"choose one of {', '.join(commands)}")
        doc = commands[args.command].run(args)
    except ParameterError as exc:
        print(f"{prog}: error: {exc}", file=sys.stderr)
        return 2
    try:
        if args.json:
            from derive.report.provenance import with_provenance

            print(json.dumps(with_provenance(doc)))
        else:
            human = getattr(commands[args.command], "render", None)
            _print_human(human(doc) if human else doc, sys.stdout)
        sys.stdout.flush()
    except BrokenPipeError:
        # the reader stopped early (``| head``): not an error of ours, and no traceback; stdout goes
        # to /dev/null so that the interpreter's final flush does not raise again
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 1
    status = getattr(commands[args.command], "exit_status", None)
    return status(doc) if status else 0
