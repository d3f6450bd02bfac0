"""The options the benchmark commands share: how large a run is (``--quick``, ``--tiny``) and the notes it writes."""
from derive.files import check_output_target

__all__ = ["TINY", "add_size", "size", "notes_out"]

TINY = "tiny sizes, to check that the harness runs (numbers meaningless)"


def add_size(p, quick: str, tiny: str = TINY) -> None:
    """``--quick`` and ``--tiny``, one or neither (a full run), each with what it leaves out."""
    group = p.add_mutually_exclusive_group()
    group.add_argument("--quick", action="store_true", help=quick)
    group.add_argument("--tiny", action="store_true", help=tiny)


def size(args) -> str:
    """``full``, ``quick`` or ``tiny``: the run the options asked for."""
    return "tiny" if args.tiny else "quick" if args.quick else "full"


def notes_out(args, default) -> str:
    """The file ``--out`` names ('' for none; ``default`` without it, none with ``--tiny``), checked before the run,
    not after it."""
    out = args.out if args.out is not None else ("" if args.tiny else str(default))
    if out:
        check_output_target(out, "out")
    return out
