"""The fast part of the attack suite (``tests/attack_cases.py``): every fast case ends in a clean refusal or
an answer, never a traceback. Each case runs in a process of its own (``tests/attack_server.py``: forked from a
server that has the command line imported, so a case costs what it computes), whose address space is capped (a
regression that allocated before checking could not endanger the machine) and which is called hung by the work it
has done, never by the clock (``tests/processes.py``); the slow part and the counts are ``scripts/attack.py``."""
import json
import multiprocessing
import os
from pathlib import Path

import pytest

from attack_cases import API_CASES, CASES
from processes import Hung, kill_tree, wait_until

FAST = [c for c in CASES if c.fast]
TESTS = Path(__file__).resolve().parent
CPU = 300
"""CPU-seconds a case may use (with what it starts) before it is called hung: the slowest fast case needs about 20."""


@pytest.fixture(scope="module")
def server():
    """multiprocessing's forkserver, preloading the command line (one per test process)."""
    from multiprocessing import forkserver

    context = multiprocessing.get_context("forkserver")
    context.set_forkserver_preload(["attack_server"])
    # Python 3.11's forkserver imports its preload before it takes this process's sys.path: it finds the tests'
    # folder on PYTHONPATH, set while it starts (each case puts the variable back: run_case's ``pythonpath``)
    before = os.environ.get("PYTHONPATH")
    os.environ["PYTHONPATH"] = os.pathsep.join([str(TESTS), *([before] if before else [])])
    try:
        forkserver.ensure_running()
    finally:
        if before is None:
            del os.environ["PYTHONPATH"]
        else:
            os.environ["PYTHONPATH"] = before
    yield context, before
    # stopped and reaped here, so that its CPU time (and its cases') counts in this process's children
    getattr(forkserver._forkserver, "_stop", lambda: None)()


@pytest.fixture(scope="module")
def folder(tmp_path_factory):
    """The folder of the cases' files (each made once, by the first case that needs it)."""
    return tmp_path_factory.mktemp("attack")


def _outcome(server, kind: str, name: str, folder: Path) -> tuple[str, str]:
    import attack_server

    context, pythonpath = server
    reader, writer = context.Pipe(duplex=False)
    process = context.Process(target=attack_server.run_case, args=(kind, name, str(folder), writer, pythonpath),
                              daemon=True)
    process.start()
    writer.close()
    try:
        sent = wait_until(reader.poll, process, cpu=CPU)
        if not sent:
            process.join()
            return "failed", f"its process ended (exit {process.exitcode}) without an outcome"
        outcome, why = json.loads(reader.recv())
        process.join()
        return outcome, why
    except Hung as exc:
        return "failed", str(exc)
    finally:
        if process.is_alive():
            kill_tree(process)
            process.join()
        reader.close()


@pytest.mark.parametrize("case", FAST, ids=[c.name for c in FAST])
def test_hostile_input_is_refused_or_answered(case, server, folder):
    outcome, why = _outcome(server, "cli", case.name, folder)
    assert outcome in ("refused", "answered"), why


@pytest.mark.parametrize("case", API_CASES, ids=[c.name for c in API_CASES])
def test_the_api_refuses_naming_the_parameter_or_answers(case, server, folder):
    outcome, why = _outcome(server, "api", case.name, folder)
    assert outcome in ("refused", "answered"), why
