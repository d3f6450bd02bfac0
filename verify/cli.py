"""The ``verify`` command line: Monte Carlo, the claims ledger, reports."""
import sys

COMMANDS: list[str] = ["verify.commands.mc", "verify.commands.claims", "verify.commands.ladder",
                       "verify.commands.attention_gap", "verify.commands.sweep", "verify.commands.formula"]


def main(argv=None) -> int:
    """The ``verify`` command (``argv`` ``None``: this process is it, and its arguments are ``sys.argv``). The stop
    signals are handled before the command line's modules are imported (:mod:`derive.cli.stop`)."""
    from derive.cli.stop import run_stoppable

    def run():
        import os

        from derive.cli.kit import run_cli
        from verify.threads import BLAS_THREAD_VARIABLES, limit_blas_threads

        # one BLAS thread unless the user chose: on a shared 2-core machine the default (a thread per core inside
        # runs that already fill the cores) made the ledger three times slower
        if not any(os.environ.get(name) for name in BLAS_THREAD_VARIABLES):
            limit_blas_threads(1)
        return run_cli("verify", __doc__, COMMANDS, argv)

    return run_stoppable("verify", run, program=argv is None)


if __name__ == "__main__":
    sys.exit(main())
