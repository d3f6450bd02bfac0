"""The attack suite's cases in processes of their own, forked from a server that has imported the command line once
(``multiprocessing``'s forkserver, which preloads this module): each case starts in milliseconds instead of the
seconds of a fresh interpreter, under the same address-space cap as before, and a case that hangs or crashes takes
down its own process only (``tests/test_attack.py``)."""
import importlib
import json
import os
import resource
from pathlib import Path

from attack_cases import API_CASES, CASES, prepare, run_api, run_in_process

MEMORY = 4 * 2**30
"""The address-space cap of a case's process (4 GiB): a regression that allocated before checking its input fails
that case with a MemoryError instead of endangering the machine."""

# what the commands import when they run, imported here once: every forked case then finds it loaded
for _name in ("derive", "derive.cli", "verify.cli", "verify.formula", "verify.montecarlo.trials", "verify.sweeps.run",
              "verify.sweeps.report"):
    try:
        _module = importlib.import_module(_name)
    except ImportError:
        continue
    for _command in getattr(_module, "COMMANDS", ()):
        importlib.import_module(_command)


def run_case(kind: str, name: str, tmp: str, conn, pythonpath: str | None = None) -> None:
    """Run the case ``name`` (``kind`` "api" or "cli"; a CLI case's files made in ``tmp`` first) under the cap and
    send ``[outcome, why]`` through ``conn``, as JSON. ``pythonpath``: the variable as the test process has it (the
    server started with the tests' folder on it)."""
    if pythonpath is None:
        os.environ.pop("PYTHONPATH", None)
    else:
        os.environ["PYTHONPATH"] = pythonpath
    resource.setrlimit(resource.RLIMIT_AS, (MEMORY, MEMORY))
    if kind == "api":
        outcome = run_api(next(c for c in API_CASES if c.name == name))
    else:
        case = next(c for c in CASES if c.name == name)
        prepare(Path(tmp), case.setup)
        outcome = run_in_process(case, Path(tmp))
    conn.send(json.dumps(list(outcome)))
    conn.close()
