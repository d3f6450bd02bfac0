"""How many times, and in how many places, one command validates each parameter: the measure of issue 41's "parse at
the door, trust inside". Every checking function of ``derive`` and ``verify`` is wrapped to count its outermost calls
(a check inside a check is the same validation), keyed by the parameter it names and by the function of ours that
called it; then the command runs in this process. Run from the checkout:

    .venv/bin/python scripts/validations.py verify mc --d 40 --V 80 --N 160 --T 4 --signs prefix:2 --weights mean \\
        --mu2 3 --seeds 2
    .venv/bin/python scripts/validations.py --markdown derive spike --T 2 --weights causal --signs iid ...

Not part of the installed package; ``notes/architecture.md`` records its tables before and after.
"""
from __future__ import annotations

import argparse
import contextlib
import io
import sys
import traceback
from collections import Counter, defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

CHECKS = {
    "derive.numbers": ("parse_fraction", "parse_rational", "check_count", "check_range", "real_number", "real_vector",
                       "check_digits"),
    "derive.model.signs": ("check_T", "check_R"),
    "derive.model.schemes": ("parse_scheme", "exact_weights"),
    "derive.model.families": ("as_family", "parse_signs"),
    "verify.montecarlo.memory": ("check_trial", "check_trials"),
}
"""The checking functions, by module; a function named ``check`` of a sign family or a scheme is counted too."""

NAMED = {"check_digits": "digits", "check_T": "T", "check_R": "R", "parse_scheme": "weights", "exact_weights": "weights",
         "as_family": "signs", "parse_signs": "signs", "check_trial": "trial", "check_trials": "trial"}
"""The parameter a check validates when it takes no name."""


def _trusted() -> tuple:
    from derive.model.signs import Length
    from derive.numbers import Digits, Reals

    return Digits, Length, Reals


def _parameter(function: str, args, kwargs) -> str:
    if function in NAMED:
        return NAMED[function]
    name = kwargs.get("name", args[1] if len(args) > 1 else "?")
    return name if isinstance(name, str) else "?"


def _caller(depth: int = 3) -> str:
    """The first function of ours outside the checks that called this validation (``module:function``)."""
    for frame in traceback.extract_stack()[-depth::-1]:
        path = Path(frame.filename)
        if ROOT in path.parents and "scripts" not in path.parts and frame.name not in _WRAPPED:
            return f"{path.relative_to(ROOT).with_suffix('')}:{frame.name}".replace("/", ".")
    return "?"


_WRAPPED: set = set()


def instrument(calls: Counter, sites: defaultdict) -> None:
    """Wrap every check of :data:`CHECKS` (and each family's and scheme's ``check``) to count its outermost calls."""
    import importlib

    depth = [0]
    TRUSTED = _trusted()

    def wrap(function, label):
        def counted(*args, **kwargs):
            # a value checked where it entered (Digits, Length, Reals) passes as it is: trusted, not validated
            if depth[0] == 0 and not (args and isinstance(args[0], TRUSTED)):
                parameter = _parameter(label, args, kwargs)
                calls[parameter] += 1
                sites[parameter].add(_caller())
            depth[0] += 1
            try:
                return function(*args, **kwargs)
            finally:
                depth[0] -= 1
        counted.__wrapped__ = function
        return counted

    for module_name, names in CHECKS.items():
        module = importlib.import_module(module_name)
        for name in names:
            _WRAPPED.add(name)
            original = getattr(module, name)
            setattr(module, name, wrap(original, name))
            # the modules that imported the name before it was wrapped hold the original
            for other in list(sys.modules.values()):
                if getattr(other, "__name__", "").startswith(("derive", "verify")) and getattr(other, name, None) is original:
                    setattr(other, name, getattr(module, name))
    from derive.model import families, schemes

    _WRAPPED.add("check")
    for cls in (*families.CATALOGUE, families.UserFamily, *schemes.CATALOGUE):
        if "check" in vars(cls):
            label = "signs" if cls in (*families.CATALOGUE, families.UserFamily) else "weights"
            original = vars(cls)["check"]
            setattr(cls, "check", wrap(original, label if label == "weights" else "as_family"))


def measure(argv: list[str]) -> tuple[Counter, dict]:
    """Run ``argv`` (``derive ...`` or ``verify ...``) in this process with the checks counted."""
    import derive.cli
    import verify.cli

    calls, sites = Counter(), defaultdict(set)
    instrument(calls, sites)
    main = {"derive": derive.cli.main, "verify": verify.cli.main}[argv[0]]
    with contextlib.redirect_stdout(io.StringIO()):
        status = main(argv[1:])
    if status:
        raise SystemExit(f"{' '.join(argv)} exited with {status}")
    return calls, dict(sites)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--markdown", action="store_true", help="print a Markdown table")
    p.add_argument("command", nargs=argparse.REMAINDER)
    args = p.parse_args()
    calls, sites = measure(args.command)
    rows = sorted(calls, key=lambda k: (-len(sites[k]), k))
    if args.markdown:
        print("| parameter | validations | places |\n|---|---|---|")
        for k in rows:
            print(f"| `{k}` | {calls[k]} | {len(sites[k])}: {', '.join(f'`{s}`' for s in sorted(sites[k]))} |")
        return
    for k in rows:
        print(f"{k:>14} {calls[k]:>5} calls in {len(sites[k])} places: {', '.join(sorted(sites[k]))}")


if __name__ == "__main__":
    main()
