"""``python -m benchmarks``: run from the checkout's root (the harness writes into its notes/)."""
import sys

from derive.cli.kit import run_cli

COMMANDS = ["benchmarks.cmd_all", "benchmarks.cmd_cost", "benchmarks.cmd_sweeps", "benchmarks.cmd_mutation", "benchmarks.cmd_vocabulary"]


def main(argv=None) -> int:
    return run_cli("python -m benchmarks", __doc__, COMMANDS, argv)


if __name__ == "__main__":
    sys.exit(main())
