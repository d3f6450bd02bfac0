"""The ``verify`` command line: Monte Carlo, the claims ledger, reports."""
import sys

from derive.clikit import run_cli

COMMANDS: list[str] = ["verify.commands.mc", "verify.commands.claims", "verify.commands.ladder",
                       "verify.commands.attention_gap", "verify.commands.sweep", "verify.commands.formula"]


def main(argv=None) -> int:
    from verify.threads import limit_blas_threads
    limit_blas_threads()
    return run_cli("verify", __doc__, COMMANDS, argv)


if __name__ == "__main__":
    sys.exit(main())
