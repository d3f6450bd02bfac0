"""The ``derive`` command line: symbolic results, exact or to a requested precision."""
import sys

from derive.clikit import run_cli

COMMANDS: list[str] = [
    "derive.commands.weights",
    "derive.commands.bulk",
    "derive.commands.spike",
    "derive.commands.formulas",
]


def main(argv=None) -> int:
    return run_cli("derive", __doc__, COMMANDS, argv)


if __name__ == "__main__":
    sys.exit(main())
