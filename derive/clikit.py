"""Plumbing shared by the ``derive`` and ``verify`` command lines.

A command is a module with ``NAME``, ``HELP``, ``add_arguments(parser)`` and
``run(args) -> object`` (a JSON-ready document). Bad input, from argparse or from a
:class:`ParameterError`, ends with exit status 2 and one line on stderr.
"""
from __future__ import annotations

import argparse
import importlib
import json
import os
import re
import sys

from derive.errors import ParameterError

__all__ = ["run_cli"]


class _OneLineParser(argparse.ArgumentParser):
    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        # argparse reads "-1/2" or "-1e-3" as an option name, so "--sum-w -1/2" failed; every
        # numeric form that parse_rational accepts is a value here, and so is a list of them ("--x -1,0")
        number = r"(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?(/\d+)?"
        self._negative_number_matcher = re.compile(rf"^-{number}(,[+-]?{number})*$")

    def error(self, message):
        raise ParameterError("arguments", message)


def _print_human(doc, out):
    if isinstance(doc, str):
        print(doc, file=out)
    else:
        print(json.dumps(doc, indent=2), file=out)


def run_cli(prog: str, description: str, command_modules: list[str], argv=None) -> int:
    """Parse ``argv``, run the chosen command, print its document; return the exit status."""
    parser = _OneLineParser(prog=prog, description=description)
    sub = parser.add_subparsers(dest="command", parser_class=_OneLineParser)
    commands = {}
    for path in command_modules:
        module = importlib.import_module(path)
        p = sub.add_parser(module.NAME, help=module.HELP, description=module.HELP)
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
            print(json.dumps(doc))
        else:
            human = getattr(commands[args.command], "render", None)
            _print_human(human(doc) if human else doc, sys.stdout)
        sys.stdout.flush()
    except BrokenPipeError:
        # the reader stopped early (``| head``): not an error of ours, and no traceback; stdout goes
        # to /dev/null so that the interpreter's final flush does not raise again
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 1
    return 0
