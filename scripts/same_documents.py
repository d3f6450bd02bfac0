"""Run the documented command lines of two checkouts and say which outputs differ.

``python scripts/same_documents.py OLD_TREE NEW_TREE`` runs every command line of :data:`COMMANDS` (the examples
of README and the notes, and the cross product of every weight scheme and sign family with each command) with
each tree first on ``PYTHONPATH``, and compares their standard output, standard error and exit status byte for
byte (the standard error where a command refused: a run's progress bar depends on its timing). The ``provenance`` key of a JSON document (the commit and the hash of the sources, which a change changes by
definition) and the derivation cache's folder are set aside: each tree runs on a fresh cache folder of its own.
A refactoring must leave every document as it was; exit status 1 names the command lines that moved.
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor

__all__ = ["COMMANDS", "run", "main"]

SCHEMES = (["--weights", "mean"], ["--weights", "causal"], ["--weights", "causal", "--mask", "strict", "--tau", "1/2"],
           ["--weights", "optimal"])
FAMILIES = ("iid", "prefix:2", "suffix:2", "markov:1/2", "gauss:1/3")


def _commands() -> list[list[str]]:
    out = [
        "derive weights --weights causal --T 8",
        "derive weights --weights causal --T 8 --json",
        "derive weights --weights causal --T 8 --mask strict --signs prefix:3 --digits 8 --json",
        "derive weights --weights mean --T 1000 --signs iid --digits 6 --json",
        "derive weights --weights optimal --T 5 --signs markov:1/3 --digits 12 --json",
        "derive weights --weights optimal --T 5 --signs iid --json",
        "derive weights --weights causal --T 1 --mask strict --json",
        "derive weights --weights mean --T 3 --tau 1 --json",
        "derive weights --weights bogus --T 3 --json",
        "derive weights --weights mean --T 3 --signs prefix:4 --json",
        "derive weights --weights mean --T 3 --signs wobble:1 --json",
        # --scheme, the older name of --weights, still answers (until the release after the rename)
        "derive weights --scheme causal --T 8 --mask strict --signs prefix:3 --digits 8 --json",
        "derive weights --scheme bogus --T 3 --json",
        "derive weights --help",
        "derive bulk --help",
        "derive spike --help",
        "derive bulk --delta 1 --gamma 1 --T 1 --weights mean --x 0.5,1 --digits 8 --json",
        "derive bulk --delta 1/2 --gamma 1/4 --kappa 1/8 --x 0.1,0.3,0.5 --digits 12 --json",
        "derive bulk --delta 1/2 --gamma 1/2 --T 3 --weights causal --mask strict --x 0.5,1 --digits 6 --json",
        "derive bulk --delta 1/2 --gamma 1/2 --T 3 --weights optimal --signs prefix:2 --x 0.5 --digits 6 --json",
        "derive bulk --delta 1/2 --gamma 1/2 --T 3 --weights causal --x 0.5,1 --digits 6 --law gaussian-equivalent --json",
        "derive bulk --delta 1/2 --gamma 1/2 --T 4 --weights mean --kappa 1/4 --x 1 --json",
        "derive spike --delta 1/2 --gamma 1/4 --alpha 7/32 --kappa 1/8 --mu2 3/2 --digits 12 --json",
        "derive spike --delta 1/2 --gamma 1/4 --alpha 7/32 --kappa 1/8 --mu2 3/2",
        "derive spike --delta 1/2 --gamma 1/2 --weights mean --signs iid --T 1 --mu2 7/2 --json",
        "derive spike --delta 1/4 --gamma 1 --T 1 --weights mean --signs iid --mu2 3 --centered --digits 6 --json",
        "derive spike --delta 1/2 --gamma 1/2 --weights mean --signs iid --T 2 --mu2 3 --centered --json",
        "derive spike --delta 1/2 --gamma 1/2 --T 2 --weights causal --mask strict --signs prefix:2 --mu2 3 --json",
        "derive spike --delta 1/2 --gamma 1/2 --T 3 --weights optimal --signs suffix:2 --mu2 3 --json",
        "derive spike --delta 1 --gamma 1 --T 2 --weights causal --signs iid --mu2 5 --centered --json",
        "derive spike --delta 1/2 --gamma 1/4 --T 8 --weights mean --signs prefix:3 --mu2 3/2 --law gaussian-equivalent "
        "--digits 12 --json",
        "derive spike --delta 1/2 --gamma 1/2 --T 3 --weights causal --signs prefix:2 --mu2 3 --law gaussian-equivalent "
        "--json",
        "derive formulas --json",
        "verify formula --quantity bulk.population_right_edge --expr kappa+2*kappa*sqrt(delta)+kappa*delta --json",
        "verify formula --quantity sample.overlap --expr mu2/(mu2+delta) --json",
        "verify formula --quantity weights.causal --expr (harmonic(T-1)-harmonic(t-1))/(T-1) --where mask=strict",
        "verify formula --help",
        "verify mc --help",
        "verify mc --d 60 --V 120 --N 240 --T 8 --signs prefix:3 --weights mean --mu2 3/2 --seeds 3 --centered --json",
        "verify mc --d 60 --V 120 --N 120 --T 3 --signs prefix:2 --weights causal --tau 1 --mu2 2 --seeds 2 --json",
        "verify mc --d 60 --V 120 --N 120 --T 3 --signs bogus --weights mean --mu2 2 --json",
        "verify mc --d 60 --V 120 --N 120 --T 3 --signs prefix:2 --weights optimal --mu2 2 --seeds 2 --law "
        "gaussian-equivalent --json",
    ]
    cmds = [line.split() for line in out]
    for family in FAMILIES:
        for scheme in SCHEMES:
            T = "4"
            cmds.append(["derive", "weights", *scheme, "--T", T, "--signs", family, "--digits", "12", "--json"])
            cmds.append(["verify", "mc", "--d", "40", "--V", "80", "--N", "160", "--T", T, *scheme, "--signs", family,
                                 "--mu2", "2", "--seeds", "2", "--digits", "12", "--json"])
    return cmds


COMMANDS = _commands()
"""The command lines compared: the documented examples, bad input, ``--help``, and every scheme with every family."""

_MAIN = {"derive": "from derive.cli import main", "verify": "from verify.cli import main"}


def run(tree: str, argv: list[str], cache: str) -> tuple[int, str, str]:
    """``argv`` run with ``tree`` first on the path and ``cache`` as the derivation cache: (status, stdout, stderr),
    the provenance of a JSON document removed."""
    env = dict(os.environ, PYTHONPATH=tree, ATTENTION_RMT_CACHE_DIR=cache)
    code = f"import sys; {_MAIN[argv[0]]}; sys.argv[0] = {argv[0]!r}; sys.exit(main(sys.argv[1:]))"
    p = subprocess.run([sys.executable, "-c", code, *argv[1:]], capture_output=True, text=True, env=env,
                       cwd=tempfile.gettempdir())
    out = p.stdout
    if "--json" in argv and p.returncode in (0, 1):
        doc = json.loads(out)
        if isinstance(doc, dict):
            doc.pop("provenance", None)
            for key in ("version", "commit"):
                doc.pop(key, None)
        out = json.dumps(doc)
    return p.returncode, out, p.stderr


def _shown(result: tuple[int, str, str]) -> tuple:
    """What is compared of a run: the status, the standard output, and the standard error of a refusal (a
    successful run's standard error holds a progress bar, which appears when a run outlasts a delay: timing)."""
    status, out, err = result
    return status, out, err if status != 0 else None


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("old")
    parser.add_argument("new")
    parser.add_argument("--jobs", type=int, default=2)
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as a, tempfile.TemporaryDirectory() as b:
        def both(cmd):
            return run(os.path.abspath(args.old), cmd, a), run(os.path.abspath(args.new), cmd, b)

        with ThreadPoolExecutor(args.jobs) as pool:
            results = list(pool.map(both, COMMANDS))
    moved = [(cmd, old, new) for cmd, (old, new) in zip(COMMANDS, results) if _shown(old) != _shown(new)]
    for cmd, old, new in moved:
        print(f"DIFFERS: {' '.join(cmd)}\n  old: {old[0]} {old[1][:300]!r} {old[2][:300]!r}\n"
              f"  new: {new[0]} {new[1][:300]!r} {new[2][:300]!r}")
    print(f"{len(COMMANDS) - len(moved)} of {len(COMMANDS)} command lines give identical output")
    return 1 if moved else 0


if __name__ == "__main__":
    sys.exit(main())
