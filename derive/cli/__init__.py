"""The ``derive`` command line: symbolic results, exact or to a requested precision."""

COMMANDS: list[str] = [
    "derive.cli.commands.weights",
    "derive.cli.commands.bulk",
    "derive.cli.commands.spike",
    "derive.cli.commands.formulas",
]


def main(argv=None) -> int:
    """The ``derive`` command (``argv`` ``None``: this process is it, and its arguments are ``sys.argv``). The stop
    signals are handled before the command line's modules are imported (:mod:`derive.cli.stop`)."""
    from derive.cli.stop import run_stoppable

    def run():
        from derive.cli.kit import run_cli

        return run_cli("derive", __doc__, COMMANDS, argv)

    return run_stoppable("derive", run, program=argv is None)
