"""The ``derive`` command line: symbolic results, exact or to a requested precision."""
from derive.cli.kit import run_cli

COMMANDS: list[str] = [
    "derive.cli.commands.weights",
    "derive.cli.commands.bulk",
    "derive.cli.commands.spike",
    "derive.cli.commands.formulas",
]


def main(argv=None) -> int:
    return run_cli("derive", __doc__, COMMANDS, argv)

