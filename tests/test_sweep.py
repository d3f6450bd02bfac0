"""verify sweep: seeds from task coordinates, resume after interruption (kill -9 included), identical
records on every executor, the results file's guards, summaries from the file alone."""
import io
import json
import os
import signal
import subprocess
import sys
import time
import tomllib
from pathlib import Path

import mpmath
import numpy as np
import pytest
import sympy as sp

import derive
from derive import Model
from derive.errors import ParameterError
from derive.numbers import format_real
from derive.report.documents import spike
from verify.sweeps import executors
from verify.cli import main
from verify.sweeps.results import RESULT_FIELDS, ResultsWriter, read_results, result_lines
from verify.sweeps.run import run_sweep, run_task, table_buffer
from verify.sweeps.spec import Sweep, load_sweep
from verify.sweeps.report import summarize

import processes
from processes import alive, descendants, wait_until

ROOT = Path(__file__).resolve().parents[1]
TINY = ROOT / "examples" / "sweeps" / "tiny.toml"
AXIS = ROOT / "examples" / "sweeps" / "axis.toml"
QUIET = io.StringIO()  # progress lines of run_sweep, unread


def tiny_data():
    return tomllib.loads(TINY.read_text())


@pytest.fixture(scope="module")
def reference(tmp_path_factory):
    """The tiny sweep run uninterrupted, in this process: ``(sweep, results path, result lines by task)``."""
    sweep = load_sweep(TINY)
    path = tmp_path_factory.mktemp("reference") / "tiny.jsonl"
    with executors.InProcess() as ex:
        run_sweep(sweep, path, ex, log=QUIET)
    return sweep, path, result_lines(read_results(path).records)


def test_toml_and_json_files_with_equal_values_are_one_sweep(tmp_path):
    data = tiny_data()
    data["model"]["delta"] = 0.5  # "1/2" in the TOML file
    data["grid"]["gamma"] = {"from": "1/4", "to": "0.5", "num": 2}
    path = tmp_path / "tiny.json"
    path.write_text(json.dumps(data))
    assert load_sweep(path).hash == load_sweep(TINY).hash
    data["sweep"]["root_seed"] += 1
    assert Sweep(data).hash != load_sweep(TINY).hash


def _with(change):
    data = tiny_data()
    section, name, value = change
    if value is None:
        del data[section][name]
    else:
        data.setdefault(section, {})[name] = value
    return data


@pytest.mark.parametrize("change, parameter", [
    (("model", "mu2", 1), "grid.mu2"),                      # fixed and an axis at once
    (("model", "d", None), "model.d"),                      # required parameter missing
    (("model", "colour", "red"), "model.colour"),           # unknown parameter
    (("sweep", "seeds", 0), "sweep.seeds"),
    (("sweep", "outputs", ["eigenvalues"]), "sweep.outputs"),
    (("sweep", "k", 40), "sweep.k"),                        # k >= min(d, N)
    (("grid", "gamma", ["1/4", "0.25"]), "grid.gamma"),     # the same value twice
    (("grid", "mu2", {"from": 0, "to": 1}), "grid.mu2"),    # a range without num
    (("model", "signs", "prefix:9"), "signs"),              # L > T
    (("model", "tau", 1), "model.tau"),                     # no causal weights to take it
])
def test_bad_sweeps_are_refused_naming_the_parameter(change, parameter):
    with pytest.raises(ParameterError) as err:
        Sweep(_with(change))
    assert err.value.parameter == parameter


def test_bad_sweep_file_on_the_command_line_exits_2_with_one_line(tmp_path, capsys):
    bad = tmp_path / "bad.toml"
    bad.write_text("[sweep\nseeds = 2\n")
    assert main(["sweep", str(bad), "--results", str(tmp_path / "r.jsonl")]) == 2
    out, err = capsys.readouterr()
    assert out == "" and len(err.strip().splitlines()) == 1 and err.startswith("verify: error: sweep: ")
    assert not (tmp_path / "r.jsonl").exists()


def test_a_key_given_twice_in_a_json_sweep_file_is_refused(tmp_path):
    # json keeps the last of two keys silently; the same file in TOML is refused by tomllib
    text = json.dumps(tiny_data()).replace('"seeds": 2', '"seeds": 2, "seeds": 3')
    (tmp_path / "twice.json").write_text(text)
    with pytest.raises(ParameterError, match="'seeds' is given twice") as err:
        load_sweep(tmp_path / "twice.json")
    assert err.value.parameter == "sweep"


def test_a_task_depends_on_its_coordinates_not_on_the_order(reference):
    sweep, _, lines = reference
    tasks = sweep.tasks()
    backwards = {t.key: sweep.record(t, run_task(sweep.job(t))) for t in reversed(tasks)}
    assert result_lines(backwards) == lines
    # and distinct tasks get distinct streams: no two records share their eigenvalues
    tops = [json.loads(line)["result"]["top_eigenvalues"][0] for line in lines.values()]
    assert len(set(tops)) == len(tasks)


def _axis_sweep(mu2, path="implicit"):
    return {"sweep": {"root_seed": 5, "seeds": 2, "outputs": ["top_eigenvalues", "overlaps"], "k": 3, "path": path},
            "model": {"d": 96, "delta": "1/2", "T": 4, "signs": "prefix:2", "centered": False,
                      **({"mu2": mu2} if not isinstance(mu2, list) else {})},
            "grid": {"weights": ["mean", "optimal"], "gamma": ["1/2", 2], **({"mu2": mu2} if isinstance(mu2, list) else {})}}


@pytest.mark.parametrize("path", ["implicit", "dense"])
def test_the_tasks_of_a_cell_are_one_draw_solved_at_each_mu2(tmp_path, path):
    # common random numbers: a task's draw is keyed without its mu2 index, so each record is the direct
    # dense solve of the cell's one draw at that mu2, and a one-value sweep at that mu2 repeats it;
    # both to 1e-8 (the mu2-axis solver errs by 1e-15 here, tests/test_mu2_axis.py)
    from verify.montecarlo.trials import run_trial
    from verify.sweeps.spec import SPECTRUM_STREAM, task_seed

    axis = ["0", "1/2", "2", "4"]
    sweep = Sweep(_axis_sweep(axis, path))
    with executors.InProcess() as ex:
        run_sweep(sweep, tmp_path / "axis.jsonl", ex, log=QUIET)
    records = read_results(tmp_path / "axis.jsonl").records
    assert {r["result"]["path"] for r in records.values()} == {"mu2-axis" if path == "implicit" else "dense"}
    one = Sweep(_axis_sweep("2", path))
    with executors.InProcess() as ex:
        run_sweep(one, tmp_path / "one.jsonl", ex, log=QUIET)
    alone = read_results(tmp_path / "one.jsonl").records
    assert len(alone) == len(records) // len(axis)
    for task in sweep.tasks():
        rec, job = records[task.key]["result"], sweep.job(task)
        model = Model(d=job.d, V=job.V, N=job.N, T=job.T, signs=job.signs, mu2=job.mu2, centered=job.centered)
        direct = run_trial(model, weights=list(job.weights), k=3, path="dense",
                           seed=task_seed(job.root_seed, sweep.draw_key(task), SPECTRUM_STREAM))
        np.testing.assert_allclose(rec["top_eigenvalues"], direct.top_eigenvalues, rtol=1e-8)
        np.testing.assert_allclose(rec["overlaps"], direct.overlaps, rtol=0, atol=1e-8)
        if task.point["mu2"] == "2":
            other = alone[sweep.draw_key(task)]["result"]
            np.testing.assert_allclose(other["top_eigenvalues"], rec["top_eigenvalues"], rtol=1e-8)
            np.testing.assert_allclose(other["overlaps"], rec["overlaps"], rtol=0, atol=1e-8)


def _worker_state(modules) -> tuple:
    """In a worker: were ``modules`` there before its task, what is its environment."""
    import os
    import sys

    return all(name in sys.modules for name in modules), os.environ["ATTENTION_RMT_PROBE"], os.environ["OMP_NUM_THREADS"]


def test_local_processes_give_the_in_process_records(reference, tmp_path):
    sweep, _, lines = reference
    with executors.LocalProcesses(2) as ex:
        doc = run_sweep(sweep, tmp_path / "local.jsonl", ex, log=QUIET)
    assert doc["computed"] == len(sweep.tasks())
    assert result_lines(read_results(tmp_path / "local.jsonl").records) == lines


def test_local_workers_are_forked_with_the_solvers_modules_and_the_drivers_environment(monkeypatch):
    # issue 43: each worker's start-up (an interpreter and the solver's imports, a second or more) had come after the
    # sweep was read and checked; now a fork server imports them once, from the moment the executor is entered
    # (the server outlives a pool: a later pool's workers still take the driver's environment of their own start)
    for probe in ("first", "second"):
        monkeypatch.setenv("ATTENTION_RMT_PROBE", probe)
        with executors.LocalProcesses(2) as ex:
            (_, seen), = ex.map_unordered(_worker_state, [executors.WORKER_MODULES])
        assert seen == (True, probe, "1")


def test_each_thread_keeps_its_own_table():
    # a Dask worker runs cells in several threads of one process: a table shared between them was overwritten by one
    # cell while another solved on it (the Dask test below then failed now and then). The barrier holds each task
    # until the other has started: two threads, however slow the machine (a pause of 50 ms had been the hope)
    import threading
    from concurrent.futures import ThreadPoolExecutor

    both = threading.Barrier(2)
    with ThreadPoolExecutor(2) as pool:
        ready = pool.map(lambda _: (both.wait(), table_buffer(3, 4))[1], range(2))
        a, b = list(ready)
    assert a is not b and table_buffer(3, 4) is table_buffer(3, 4)


def test_dask_gives_the_same_records_and_resumes_after_an_interruption(reference, tmp_path):
    distributed = pytest.importorskip("distributed")
    sweep, _, lines = reference
    path = tmp_path / "dask.jsonl"
    with distributed.LocalCluster(processes=False, n_workers=2, threads_per_worker=1, dashboard_address=None) as cluster, \
            distributed.Client(cluster) as client:
        with executors.Dask(client=client) as ex:
            first = run_sweep(sweep, path, ex, max_tasks=5, log=QUIET)
        with executors.Dask(client=client) as ex:
            rest = run_sweep(sweep, path, ex, log=QUIET)
    # cells of 2 tasks (2 values of mu2): a batch of 5 stops after the third cell
    assert (first["computed"], first["cells"], rest["done_before"], rest["computed"]) == (6, 3, 6, len(sweep.tasks()) - 6)
    assert result_lines(read_results(path).records) == lines


def test_a_torn_last_record_is_dropped_and_redone(reference, tmp_path):
    sweep, _, lines = reference
    path = tmp_path / "torn.jsonl"
    with executors.InProcess() as ex:
        run_sweep(sweep, path, ex, max_tasks=6, log=QUIET)
    intact = path.read_bytes()
    last = intact.rstrip(b"\n").rsplit(b"\n", 1)[1]
    with open(path, "ab") as f:
        f.write(last[: len(last) // 2])  # a write cut short by a crash
    assert read_results(path).torn == len(last) // 2
    with executors.InProcess() as ex:
        doc = run_sweep(sweep, path, ex, log=QUIET)
    assert (doc["done_before"], doc["repaired_bytes"]) == (6, len(last) // 2)
    data = path.read_bytes()
    assert data.startswith(intact) and data.endswith(b"\n")
    assert result_lines(read_results(path).records) == lines
    assert len(data.splitlines()) == 1 + len(lines)  # a header and one line per task: nothing twice


def test_a_results_file_of_another_sweep_is_refused(reference, tmp_path):
    _, path, _ = reference
    data = tiny_data()
    data["sweep"]["root_seed"] += 1
    before = path.read_bytes()
    with pytest.raises(ParameterError, match="holds another sweep"):
        ResultsWriter(path, Sweep(data))
    assert path.read_bytes() == before


@pytest.mark.parametrize("damage", ["middle line", "not a results file"])
def test_damage_that_is_not_a_torn_write_is_refused_untouched(reference, tmp_path, damage):
    sweep, path, _ = reference
    lines = path.read_bytes().splitlines(keepends=True)
    if damage == "middle line":
        data = b"".join(lines[:3]) + b'{"task": [0, 0,\n' + b"".join(lines[3:])
    else:
        data = b"d = 32"  # e.g. a sweep file given as --results
    target = tmp_path / "damaged.jsonl"
    target.write_bytes(data)
    with pytest.raises(ParameterError) as err:
        ResultsWriter(target, sweep)
    assert err.value.parameter == "results"
    assert target.read_bytes() == data


def test_a_second_sweep_on_a_file_in_use_is_refused(reference, tmp_path):
    sweep, _, _ = reference
    with ResultsWriter(tmp_path / "busy.jsonl", sweep):
        with pytest.raises(ParameterError, match="another running sweep"):
            ResultsWriter(tmp_path / "busy.jsonl", sweep)


@pytest.mark.parametrize("stop", ["write", "fsync"])
def test_a_signal_takes_back_a_torn_append_and_keeps_a_whole_one(reference, tmp_path, monkeypatch, stop):
    # a stop that fell in the fsync after the whole write had cut the records of a finished cell (test_signals.py's
    # sweep-SIGTERM failed when the signal arrived there); one during the write still takes the part written back
    import verify.sweeps.results as results
    from derive.cli.stop import Interrupted

    sweep, _, _ = reference
    path = tmp_path / "stopped.jsonl"
    records = [{"task": [0, k], "x": k} for k in range(3)]
    with ResultsWriter(path, sweep) as writer:
        header = path.read_bytes()

        def stopped(*args):
            raise Interrupted(15)

        if stop == "write":
            real = os.write
            monkeypatch.setattr(results.os, "write", lambda fd, data: real(fd, data[:5]) and stopped())
        else:
            monkeypatch.setattr(results.os, "fsync", stopped)
        with pytest.raises(Interrupted):
            writer.append(*records)
    monkeypatch.undo()
    expected = header + (b"".join(results.canonical_json(r).encode() + b"\n" for r in records) if stop == "fsync" else b"")
    assert path.read_bytes() == expected


def _record_lines(path: Path) -> int:
    try:
        return max(0, path.read_bytes().count(b"\n") - 1)
    except FileNotFoundError:
        return 0


def test_kill_9_and_restart_give_the_uninterrupted_records(tmp_path):
    # 72 tasks of about 10 ms on 2 workers: long enough to be killed part-way, short enough for the
    # suite (no bulk_edge: the driver then needs no theory, and starts faster)
    data = tiny_data()
    data["model"]["d"] = 40
    data["sweep"]["seeds"] = 6
    data["sweep"]["outputs"] = ["top_eigenvalues", "overlaps", "accuracy"]
    data["grid"]["mu2"] = ["1/2", 2, 4]
    sweep_file = tmp_path / "kill.json"
    sweep_file.write_text(json.dumps(data))
    sweep = load_sweep(sweep_file)
    total = len(sweep.tasks())
    results = tmp_path / "kill.jsonl"
    env = dict(os.environ)  # the thread policy is set in-process: the environment's variables do not matter
    command = [sys.executable, "-m", "verify.cli", "sweep", str(sweep_file), "--results", str(results), "--json"]
    proc = subprocess.Popen([*command, "--workers", "2"], env=env, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            start_new_session=True)
    try:
        # hung only by its work (tests/processes.py), never by the clock
        wait_until(lambda: _record_lines(results) >= 3, proc, cpu=300, poll=0.002)
        workers = descendants(proc.pid)
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait()
        # the workers die with their driver (parent-death signal), the resource tracker with its pipe: within
        # milliseconds; the wait ends as soon as they are gone, so only a worker left behind waits the 120 s
        deadline = time.monotonic() + 120
        while any(alive(pid) for pid in workers) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert workers and not [pid for pid in workers if alive(pid)]
    finally:
        proc.wait()
        try:  # the sweep's worker processes, orphaned by the kill of their parent
            os.killpg(proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        proc.stdout.close()
        proc.stderr.close()
    assert proc.returncode == -signal.SIGKILL
    intact = len(read_results(results).records)
    assert 3 <= intact < total, f"the kill came too late ({intact}/{total} records): make the sweep longer"
    with open(results, "ab") as f:
        f.write(b'{"code_version":"git torn","dims":{"N":1')  # and a torn write on top
    again = processes.run([*command, "--workers", "1"], env=env, cwd=ROOT, capture_output=True, text=True, cpu=300)
    assert again.returncode == 0, again.stderr
    doc = json.loads(again.stdout)
    assert doc["done_before"] == intact and doc["computed"] == total - intact and doc["repaired_bytes"] > 0
    with executors.InProcess() as ex:
        run_sweep(sweep, tmp_path / "uninterrupted.jsonl", ex, log=QUIET)
    assert result_lines(read_results(results).records) == result_lines(read_results(tmp_path / "uninterrupted.jsonl").records)


@pytest.fixture(scope="module")
def axis_reference(tmp_path_factory):
    """``examples/sweeps/axis.toml`` run uninterrupted in this process: ``(results path, result lines by task)``."""
    path = tmp_path_factory.mktemp("axis") / "whole.jsonl"
    with executors.InProcess() as ex:
        run_sweep(load_sweep(AXIS), path, ex, log=QUIET)
    return path, result_lines(read_results(path).records)


def _verify(capsys, *args):
    status = main([*args, "--json"])
    out, err = capsys.readouterr()
    assert status == 0, err
    return json.loads(out)


def test_a_sweep_on_the_mu2_axis_solver_resumes_and_summarizes(axis_reference, tmp_path, capsys):
    # the solver every real sweep takes (demo_phase.toml, paper.toml), chosen by the default path for axis.toml's
    # sizes; the tiny sweep is dense, which is why records of the "mu2-axis" path were once refused on resume and in
    # --summarize
    results, figures = tmp_path / "axis.jsonl", tmp_path / "figures"
    # 4 cells of 10 values of mu2: a batch of 7 tasks is the first whole cell
    first = _verify(capsys, "sweep", str(AXIS), "--results", str(results), "--max-tasks", "7")
    assert (first["computed"], first["cells"], first["remaining"]) == (10, 1, 30)
    again = _verify(capsys, "sweep", str(AXIS), "--results", str(results), "--workers", "1")
    assert (again["done_before"], again["computed"], again["cells"], again["remaining"]) == (10, 30, 3, 0)
    records = read_results(results).records
    assert {r["result"]["path"] for r in records.values()} == {"mu2-axis"}
    # resumed, the records are those of one uninterrupted run
    assert result_lines(records) == axis_reference[1]
    # (the model's limit at 20 points of T = 4 takes minutes of cavity populations: left out, and the summary says so)
    doc = _verify(capsys, "sweep", "--summarize", str(results), "--figures", str(figures), "--skip-model-limit")
    assert doc["tasks"] == {"total": 40, "done": 40} and len(doc["points"]) == 20
    assert [Path(f).name for f in doc["figures"]] == ["sweep_curves.png", "sweep_phase.png"]
    assert all(Path(f).stat().st_size for f in doc["figures"])
    assert doc["model_limit"]["computed"] is False and "--skip-model-limit" in doc["model_limit"]["reason"]
    assert all(p["theory"]["finite_vocabulary"] is None for p in doc["points"])
    # the run that created the file is named in its header, and the summary passes it on
    assert doc["created_by"] == read_results(results).header["provenance"]
    assert doc["created_by"]["package"] == "attention-rmt" and doc["created_by"]["libraries"]["numpy"]


def test_batches_complete_partly_done_cells_without_changing_a_record(axis_reference, tmp_path, capsys):
    # a results file whose cells are partly done, as a batch of the first 7 tasks in task order left it before
    # batches stopped at cell boundaries (or a kill between two appends of one cell): 2, 2, 2 and 1 of the 10 values
    # of mu2 in the 4 cells (gamma, seed); each batch of --max-tasks 1 then solves exactly one cell, once, and
    # writes the records of its missing tasks, those of the uninterrupted run, after the kept lines
    whole, reference = axis_reference
    sweep = load_sweep(AXIS)
    first = {task.key for task in sweep.tasks()[:7]}
    header, *lines = whole.read_bytes().splitlines(keepends=True)
    kept = header + b"".join(line for line in lines if tuple(json.loads(line)["task"]) in first)
    results = tmp_path / "partial.jsonl"
    results.write_bytes(kept)
    batches = []
    while len(read_results(results).records) < len(reference):
        doc = _verify(capsys, "sweep", str(AXIS), "--results", str(results), "--max-tasks", "1", "--workers", "1")
        batches.append((doc["computed"], doc["cells"]))
    # cells in the order of their first missing task: (gamma 1, seed 1) lacks mu2's second value first
    assert batches == [(9, 1), (8, 1), (8, 1), (8, 1)]
    assert results.read_bytes().startswith(kept)
    records = read_results(results).records
    assert result_lines(records) == reference
    # each new record names the group it was solved in: the missing tasks of its cell, not the cell's 10
    assert sorted({r["timing"]["group_tasks"] for key, r in records.items() if key not in first}) == [8, 9]


def test_summary_and_figures_come_from_the_results_file_alone(reference, tmp_path):
    sweep, path, lines = reference
    doc = summarize(path, tmp_path / "figures", model_limit=False)
    assert doc["tasks"] == {"total": 16, "done": 16} and len(doc["points"]) == 8 and doc["torn_bytes"] == 0
    assert sorted(Path(f).name for f in doc["figures"]) == ["sweep_curves_weights-mean.png",
                                                             "sweep_curves_weights-optimal.png",
                                                             "sweep_phase_weights-mean.png",
                                                             "sweep_phase_weights-optimal.png"]
    records = [json.loads(line) for line in lines.values()]
    for p in doc["points"]:
        mine = [r["result"] for r in records if r["task"][:-1] == p["index"]]
        assert p["seeds"] == len(mine) == 2
        assert float(p["monte_carlo"]["overlap"]["mean"]) == pytest.approx(np.mean([max(r["overlaps"]) for r in mine]),
                                                                            rel=1e-9)
    # the theory is that of derive spike at the realized d/V and d/N (mean pooling on prefix:2, T = 4)
    p = doc["points"][0]
    dims = p["dims"]
    direct = spike(sp.Rational(dims["d"], dims["V"]), sp.Rational(dims["d"], dims["N"]), sp.Rational(3, 8),
                   sp.Rational(1, 4), p["point"]["mu2"], centered=True, digits=15)
    assert p["point"]["weights"] == "mean"
    ge = p["theory"]["gaussian_equivalent"]
    assert ge["law"] == "gaussian-equivalent"
    assert ge["mu2_critical"] == {level: direct[level]["mu2_critical"] for level in ("population", "sample")}


# One weight (T = 1): the model's own law is exact (no cavity populations) and takes a second or two a point. At
# d = 500, V = N = 2d it differs from the Gaussian equivalent by 0.07 in the overlap at mu2 = 3 (0.548 against 0.619),
# where Monte Carlo at this d still sits between them (the d^(-1/2) bias near the law's clusters); at mu2 = 4 both laws
# are within 0.012 of each other and of Monte Carlo, the point where the limit is accurate at this d.
LAWS_SWEEP = {"sweep": {"root_seed": 5, "seeds": 10, "outputs": ["top_eigenvalues", "overlaps"], "k": 3},
              "model": {"d": 500, "delta": "1/2", "gamma": "1/2", "T": 1, "signs": "iid", "weights": "mean",
                        "centered": True},
              "grid": {"mu2": [3, 4]}}


@pytest.fixture(scope="module")
def laws_summary(tmp_path_factory):
    """The summary of LAWS_SWEEP with the model's limit, and the figures' matplotlib objects as drawn."""
    from verify import figures

    folder = tmp_path_factory.mktemp("laws")
    with executors.InProcess() as ex:
        run_sweep(Sweep(LAWS_SWEEP), folder / "laws.jsonl", ex, log=QUIET)
    drawn, save = {}, figures.save

    def keep(fig, where, name):
        drawn[name] = [(ax.get_ylabel(), [(c.get_label(), c) for c in ax.lines + ax.containers]) for ax in fig.axes]
        return save(fig, where, name)

    mp = pytest.MonkeyPatch()
    mp.setattr(figures, "save", keep)
    try:
        doc = summarize(folder / "laws.jsonl", folder, workers=1)
    finally:
        mp.undo()
    return doc, drawn


def test_a_summary_names_the_law_of_every_theory_value(laws_summary):
    doc, _ = laws_summary
    assert set(doc["laws"]) == {"gaussian_equivalent", "finite_vocabulary"}
    assert doc["model_limit"]["computed"] is True and doc["model_limit"]["points"] == 2
    # one law (the two mu2 of one T = 1 model): its limit sought to a tenth of the median of its points' Monte Carlo
    # half-widths, recomputed here from the intervals the summary prints
    widths = [(float(hi) - float(lo)) / 2 for p in doc["points"] for q in ("top_eigenvalue", "overlap")
              for lo, hi in [p["monte_carlo"][q]["ci95"]]]
    assert [float(e) for e in doc["model_limit"]["errors_sought"]] == [
        pytest.approx(min(1e-2, max(1e-3, 0.1 * float(np.median(widths)))), rel=1e-3)]
    for p in doc["points"]:
        ge, fv = p["theory"]["gaussian_equivalent"], p["theory"]["finite_vocabulary"]
        assert (ge["law"], fv["law"]) == ("gaussian-equivalent", "finite-vocabulary")
        # each law is derive.spike's for the model at the realized d, V, N, asked here of a Model built apart
        dims = p["dims"]
        m = Model(d=dims["d"], V=dims["V"], N=dims["N"], T=1, signs="iid", weights="mean", mu2=p["point"]["mu2"],
                  centered=True)
        with mpmath.workdps(15):
            for entry, law in ((ge, "gaussian-equivalent"), (fv, None)):
                o = derive.spike(m, law=law)
                assert float(entry["overlap"]) == pytest.approx(float(o.sample.overlap), rel=1e-9)
                assert float(entry["top_eigenvalue"]) == pytest.approx(float(o.sample.eigenvalue), rel=1e-9)
        # one weight: the model's own law is exact (no error), and its support unbounded (no bulk edge)
        assert fv["errors"] == {"top_eigenvalue": None, "overlap": None, "bulk_edge": None} and fv["bulk_edge"] is None
    # the two laws differ at mu2 = 3 by far more than their digits: a summary that showed one law twice would fail here
    at3 = doc["points"][0]["theory"]
    assert float(at3["gaussian_equivalent"]["overlap"]) - float(at3["finite_vocabulary"]["overlap"]) > 0.05


def test_the_monte_carlo_interval_covers_the_models_limit_where_it_is_accurate(laws_summary):
    # at mu2 = 4 the Student-t 95% interval over 10 seeds (half-width 0.021 in the overlap, 0.11 in the eigenvalue)
    # must hold the limit: a limit off by about twice the half-width (0.04, 0.2) would be outside it
    doc, _ = laws_summary
    p = doc["points"][1]
    assert p["point"]["mu2"] == "4" and p["seeds"] == 10
    fv = p["theory"]["finite_vocabulary"]
    for q in ("overlap", "top_eigenvalue"):
        lo, hi = map(float, p["monte_carlo"][q]["ci95"])
        assert lo <= float(fv[q]) <= hi and fv["in_ci95"][q] is True
    # an overlap's interval lies within [0, 1]
    for p in doc["points"]:
        lo, hi = map(float, p["monte_carlo"]["overlap"]["ci95"])
        assert 0 <= lo <= float(p["monte_carlo"]["overlap"]["mean"]) <= hi <= 1


def test_the_curves_figure_shows_both_laws_and_the_monte_carlo_with_error_bars(laws_summary):
    doc, drawn = laws_summary
    assert [Path(f).name for f in doc["figures"]] == ["sweep_curves.png"]
    panels = dict(drawn["sweep_curves.png"][:2])
    assert set(panels) == {r"$|\hat u^\top u|^2$", "top eigenvalue of S"}
    for ylabel, artists in panels.items():
        by_label = dict(artists)
        # the Gaussian equivalent: a curve on a fine grid of mu2; the model's limit and Monte Carlo: at the grid's points
        x, _ = by_label["Gaussian-equivalent law"].get_data()
        assert len(x) >= 30 and min(x) == 3 and max(x) == 4
        for label in ("finite-vocabulary limit (model's own)", "Monte Carlo mean, 95% interval"):
            line, caps, bars = by_label[label]
            assert list(line.get_xdata()) == [3.0, 4.0] and bars
    # the model's limit drawn is the summary's
    line = dict(panels[r"$|\hat u^\top u|^2$"])["finite-vocabulary limit (model's own)"][0]
    assert list(line.get_ydata()) == pytest.approx([float(p["theory"]["finite_vocabulary"]["overlap"])
                                                     for p in doc["points"]], rel=1e-9)


def test_the_models_limit_is_taken_at_the_realized_ratios_once_per_distinct_model():
    from verify.sweeps.report import model_limits

    # at d = 50, N = 117 sequences for d/gamma = 116.7: the limit is at d/N = 50/117, not at the sweep's gamma = 3/7;
    # d = 150 and 300 (N = 350, 700) realize 3/7 exactly and share one model
    data = {"sweep": {"seeds": 1, "outputs": ["overlaps"]},
            "model": {"delta": "1/2", "gamma": "3/7", "T": 1, "signs": "iid", "weights": "mean", "mu2": 4,
                      "centered": True},
            "grid": {"d": [50, 150, 300]}}
    entries, stats = model_limits(Sweep(data), [(0,), (1,), (2,)])
    assert (stats["points"], stats["models"]) == (3, 2)
    overlap = lambda gamma: float(derive.spike(Model(delta="1/2", gamma=gamma, T=1, signs="iid", weights="mean",  # noqa: E731
                                                     mu2=4, centered=True)).sample.overlap)
    with mpmath.workdps(15):
        realized, nominal = overlap(sp.Rational(50, 117)), overlap("3/7")
    assert float(entries[(0,)]["overlap"]) == pytest.approx(realized, rel=1e-12)
    assert float(entries[(1,)]["overlap"]) == float(entries[(2,)]["overlap"]) == pytest.approx(nominal, rel=1e-12)
    assert abs(realized - nominal) > 1e-4  # the two differ: a limit at the nominal ratio would fail above



def _ladder(tmp_path, outputs) -> Path:
    """A tiny sweep run over a ladder of d (24 and 48, two seeds each): its results file."""
    data = {"sweep": {"root_seed": 3, "seeds": 2, "outputs": outputs},
            "model": {"delta": "1/2", "gamma": "1/4", "T": 4, "signs": "prefix:2", "weights": "mean", "mu2": 3,
                      "centered": True},
            "grid": {"d": [24, 48]}}
    path = tmp_path / "ladder.jsonl"
    with executors.InProcess() as ex:
        run_sweep(Sweep(data), path, ex, log=QUIET)
    return path


def test_points_that_share_the_models_limit_each_show_its_estimate_and_error(monkeypatch, tmp_path):
    # the rungs of a ladder in d at the same ratios share one limit; with an estimate's error (here a stand-in for the
    # cavity populations' seconds) each point shows it to the digits its error leaves, the error to two digits
    from verify.sweeps import report

    def limit(params, error=None):
        entry = report.gaussian_theory(params)
        entry["errors"] = {"top_eigenvalue": None, "overlap": 1.234e-3, "bulk_edge": None}
        return {**entry, "law": "finite-vocabulary"}, 0.0

    monkeypatch.setattr(report, "model_limit", limit)
    path = _ladder(tmp_path, ["overlaps"])
    doc = summarize(path, workers=1)
    assert (doc["model_limit"]["points"], doc["model_limit"]["models"]) == (2, 1)
    shown = [p["theory"]["finite_vocabulary"] for p in doc["points"]]
    exact = float(doc["points"][0]["theory"]["gaussian_equivalent"]["overlap"])
    for entry in shown:
        assert entry["errors"]["overlap"] == "0.0012" and entry["overlap"] == format_real(exact, 3)


def test_an_overlaps_interval_is_kept_within_0_and_1():
    from verify.sweeps.report import interval
    from verify.stats import mean_ci

    values = [0.99, 1.0, 0.97, 1.0]
    assert mean_ci(values)[2] > 1  # the Student-t interval alone reaches past 1
    s = interval(values, 0, 1)
    assert s["ci95"][1] == 1 and s["ci95"][0] == mean_ci(values)[1] and s["mean"] == mean_ci(values)[0]
    assert interval([0.0, 0.01, 0.0], 0, 1)["ci95"][0] == 0


def test_the_text_summary_names_the_laws_and_a_skipped_limit(reference, capsys):
    _, path, _ = reference
    assert main(["sweep", "--summarize", str(path), "--figures", str(path.parent / "text"),
                 "--skip-model-limit"]) == 0
    out, _ = capsys.readouterr()
    assert "model's limit (finite-vocabulary): not computed, skipped (--skip-model-limit)" in out
    assert "gaussian-equivalent" in out and "MC " in out
    assert main(["sweep", str(TINY), "--skip-model-limit"]) == 2
    out, err = capsys.readouterr()
    assert out == "" and err.strip() == "verify: error: skip-model-limit: does not go with a sweep run"
    for bad in ("0", "-1e-3", "nan", "x"):
        assert main(["sweep", "--summarize", str(path), "--limit-error", bad]) == 2
        out, err = capsys.readouterr()
        assert out == "" and err.count("\n") == 1 and "limit-error" in err


def test_finite_size_fits_need_a_ladder_of_d(tmp_path):
    path = _ladder(tmp_path, ["overlaps", "bulk_edge"])
    doc = summarize(path, tmp_path, model_limit=False)
    fits = {f["quantity"]: f for f in doc["finite_size"]}
    assert set(fits) == {"overlap", "bulk_edge"} and all(f["d"] == [24, 48] for f in fits.values())
    assert {f["law"] for f in fits.values()} == {"gaussian-equivalent"}
    assert [Path(f).name for f in doc["figures"]] == ["sweep_finite_size.png"]


def test_without_dask_the_scheduler_option_says_how_to_install_it(monkeypatch, capsys, tmp_path):
    monkeypatch.setitem(sys.modules, "distributed", None)  # import distributed now raises ImportError
    assert main(["sweep", str(TINY), "--results", str(tmp_path / "r.jsonl"), "--scheduler", "local-dask"]) == 2
    out, err = capsys.readouterr()
    assert out == "" and len(err.strip().splitlines()) == 1 and "pip install attention-rmt[dask]" in err


def test_records_keep_timing_apart_from_the_result_fields(reference):
    _, path, _ = reference
    rec = next(iter(read_results(path).records.values()))
    assert set(rec) == {*RESULT_FIELDS, "code_version", "timing"}
    assert set(rec["result"]) == {"top_eigenvalues", "overlaps", "bulk_edge", "outliers_predicted", "accuracy",
                                  "n_test", "path"}


def test_projection_sums_the_fitted_cost_over_the_paper_grid():
    from benchmarks import sweeps as sweep_bench

    # cost = C d^p at every gamma: the projection is exactly tasks * C * d^p, split evenly over workers
    gammas = ["1/20", "21/20", "2"]
    same = {"gammas": gammas, "fits": {g: {"prefactor": 2e-7, "exponent": 2.0} for g in gammas}}
    proj = sweep_bench.projection(same)
    assert proj["tasks"] == 3 * 40 * 40 * 12 and proj["d"] == 10_000 and proj["V"] == 20_000
    assert proj["total_s"] == pytest.approx(proj["tasks"] * 2e-7 * 1e8, rel=1e-12)
    assert proj["wall_s"][64] == pytest.approx(proj["total_s"] / 64, rel=1e-12)
    # costs that differ by gamma: the extremes are the measured end points (interpolation, no extrapolation)
    rising = {"gammas": gammas, "fits": {g: {"prefactor": 1e-7 * (i + 1), "exponent": 2.0} for i, g in enumerate(gammas)}}
    proj = sweep_bench.projection(rising)
    assert (proj["min_task_s"], proj["max_task_s"]) == pytest.approx((10.0, 30.0), rel=1e-12)
    # continued from the top rung (d = 1000, 0.5 s) at slope 3: 0.5 * 10^3 s per task
    steep = {"d": [500, 1000], "gammas": gammas, "fits": {g: {"median_s": [0.1, 0.5], "last_slope": 3.0} for g in gammas}}
    assert sweep_bench.steep_projection(steep)["mean_task_s"] == pytest.approx(500.0, rel=1e-12)


@pytest.mark.slow
def test_tiny_benchmark_writes_its_section(tmp_path):
    from benchmarks import sweeps as sweep_bench

    out = tmp_path / "sweeps.md"
    out.write_text(f"# notes\n\n{sweep_bench.BEGIN}\nold\n{sweep_bench.END}\n\nafter\n")
    doc = sweep_bench.bench("tiny", out)
    text = out.read_text()
    assert text.startswith("# notes\n\n" + sweep_bench.BEGIN) and text.endswith(sweep_bench.END + "\n\nafter\n")
    assert "old" not in text and doc["identical"] is True
    assert [r["executor"] for r in doc["throughput"]] == ["in-process", "local processes", "Dask LocalCluster"]


def test_a_changed_weights_file_is_another_sweep_and_the_summary_needs_only_the_results(tmp_path):
    weights = tmp_path / "w.csv"
    weights.write_text("0.4,0.3,0.2,0.1\n")
    data = _with(("grid", "weights", ["mean", f"file:{weights}"]))
    data["sweep"]["outputs"] = ["top_eigenvalues", "overlaps"]
    path = tmp_path / "file.jsonl"
    with executors.InProcess() as ex:
        run_sweep(Sweep(data), path, ex, max_tasks=2, log=QUIET)
    weights.write_text("0.1,0.2,0.3,0.4\n")
    with pytest.raises(ParameterError, match="results"), executors.InProcess() as ex:
        run_sweep(Sweep(data), path, ex, log=QUIET)
    weights.unlink()
    assert len(summarize(path, model_limit=False)["points"]) >= 1


@pytest.mark.parametrize("change", [
    lambda r: r["result"]["top_eigenvalues"].__setitem__(0, -0.5),  # a negative top eigenvalue of a PSD S
    lambda r: r["result"].update(bulk_edge=5e307, top_eigenvalues=[5e307] + r["result"]["top_eigenvalues"][1:]),
    lambda r: r["result"]["top_eigenvalues"].reverse(),  # not the top of a spectrum, in decreasing order
    lambda r: r["result"].update(overlaps=[0.6, 0.6, 0.0]),  # orthonormal eigenvectors: the overlaps sum to 1 at most
    lambda r: r["result"].update(bulk_edge=r["result"]["bulk_edge"] * 1.5),  # not the eigenvalue below the outliers
    lambda r: r["result"].update(outliers_predicted=True),
    lambda r: r["result"].update(accuracy=0.5 + 1e-3),  # not a share of the 64 test sequences
    lambda r: r["result"].update(n_test=10**20),
    lambda r: r.update(code_version=7),  # a TypeError traceback in the summary
    lambda r: r.update(timing={"seconds": "a while"}),
], ids=["negative", "5e307", "unsorted", "overlaps-sum", "edge", "bool-outliers", "accuracy", "n_test", "code_version",
        "timing"])
def test_records_no_run_could_write_are_refused(reference, tmp_path, change):
    sweep, path, _ = reference
    lines = path.read_text().splitlines()
    record = json.loads(lines[1])
    change(record)
    forged = tmp_path / "forged.jsonl"
    forged.write_text("\n".join([lines[0], json.dumps(record), *lines[2:]]) + "\n")
    for run in (lambda: summarize(forged, model_limit=False),
                lambda: run_sweep(sweep, forged, executors.InProcess(), log=QUIET)):
        with pytest.raises(ParameterError, match=r"the record of task \[") as info:
            run()
        assert info.value.parameter == "results"


def test_a_sweep_of_a_million_tasks_is_never_listed(tmp_path, monkeypatch):
    # 10^4 grid points of 100 seeds: --max-tasks 1 and a summary had listed the 10^6 tasks (and checked each point's
    # trial): more than a minute; now each record's key is looked up, a batch's cells are made one by one
    data = {"sweep": {"root_seed": 1, "seeds": 100, "outputs": ["top_eigenvalues", "overlaps"], "k": 1},
            "model": {"d": 16, "delta": "1/2", "T": 2, "signs": "iid", "centered": True, "weights": "mean"},
            "grid": {"mu2": {"from": 0, "to": 10, "num": 100}, "gamma": {"from": "1/4", "to": 1, "num": 100}}}
    sweep = Sweep(data)
    monkeypatch.setattr(Sweep, "tasks", lambda self: pytest.fail("the tasks were listed"))
    with executors.InProcess() as ex:
        doc = run_sweep(sweep, tmp_path / "big.jsonl", ex, max_tasks=1, log=QUIET)
    assert (doc["tasks"], doc["computed"], doc["cells"], doc["remaining"]) == (10**6, 100, 1, 10**6 - 100)
    summary = summarize(tmp_path / "big.jsonl", model_limit=False)
    assert summary["tasks"] == {"total": 10**6, "done": 100} and len(summary["points"]) == 100


def test_a_cells_jobs_are_built_when_its_first_task_is_taken_not_before(tmp_path, monkeypatch):
    # building every cell's jobs (each point's theory, for bulk_edge) before the first task had kept a sweep of 120
    # cells 12 s from its first task, and a Ctrl-C then kept nothing: counted in jobs built, not in seconds
    sweep = load_sweep(TINY)
    built, job = [], Sweep.job
    monkeypatch.setattr(Sweep, "job", lambda self, task: (built.append(task.key), job(self, task))[1])

    class Watching(executors.InProcess):
        def map_unordered(self, fn, items):
            for i, group in enumerate(items):
                # the cells taken so far, and no more, have their jobs
                assert len(built) == sum(len(g) for g in taken) + len(group), (i, len(built))
                taken.append(group)
                yield group, fn(group)

    taken = []
    with Watching() as ex:
        doc = run_sweep(sweep, tmp_path / "tiny.jsonl", ex, log=QUIET)
    assert doc["cells"] == len(taken) > 1 and len(built) == doc["computed"] == sweep.task_count()


def test_the_progress_bar_counts_its_time_from_the_works_start(monkeypatch, capsys):
    # verify sweep --summarize's bar had said 24 s where its summary said 45 s: the bar appeared after the first model
    # and counted from there; now it counts from report(0, n), where model_limits starts its clock
    import verify.progress as progress_module

    clock = [1000.0]
    monkeypatch.setattr(progress_module.time, "monotonic", lambda: clock[0])
    report = progress_module.progress("work", unit="models")
    clock[0] += 7.0                      # reading the input: not the work's
    report(0, 2)
    clock[0] += 30.0                     # the first model: the bar appears now
    report(1, 2)
    elapsed = report.bar.format_dict["elapsed"]
    report.close()
    assert 30.0 <= elapsed < 31.0        # tqdm's own clock (real time) adds the microseconds this test takes


def test_the_model_limits_clock_starts_where_its_progress_starts(monkeypatch):
    import verify.sweeps.report as report_module

    sweep = load_sweep(TINY)
    # each model's limit stubbed: the order of the reports is what is checked, not the limits
    monkeypatch.setattr(report_module, "model_limit", lambda params, error=None: ({"law": "finite-vocabulary"}, 0.0))
    calls = []
    indices = sorted({task.key[:-1] for cell in sweep.cells(set()) for task in cell})
    report_module.model_limits(sweep, indices, 1, lambda done, total: calls.append((done, total)))
    assert calls[0][0] == 0 and calls[-1][0] == calls[-1][1] == calls[0][1] == len(calls) - 1


def test_each_laws_limit_is_sought_to_the_error_its_intervals_ask_for_or_the_one_given(monkeypatch):
    # tiny.toml: 2 schemes x 2 gamma = 4 laws of 2 mu2. Each law's points get one error: a tenth of the median of its
    # points' half-widths (here made up per law: 0.05, 0.5, 0.002 and none), within 1e-3 and 1e-2; --limit-error
    # gives one error to every law; without half-widths the limit's default (None)
    import verify.sweeps.report as report_module

    sweep = load_sweep(TINY)
    asked = {}
    monkeypatch.setattr(report_module, "model_limit",
                        lambda params, error=None: (asked.__setitem__(report_module._ratio_model(params), error),
                                                    ({"law": "finite-vocabulary"}, 0.0))[1])
    indices = sorted({task.key[:-1] for cell in sweep.cells(set()) for task in cell})
    law = lambda index: report_module._ratio_model({**sweep.params(sweep.point(index)), "mu2": None})  # noqa: E731
    laws = sorted({law(i) for i in indices}, key=str)
    made_up = dict(zip(laws, ([0.05, 0.04], [0.5, float("inf")], [0.002, 0.003], [])))
    widths = {i: made_up[law(i)] for i in indices}
    _, stats = report_module.model_limits(sweep, indices, 1, None, widths)
    expected = dict(zip(laws, (4.5e-3, 1e-2, 1e-3, 1e-2)))
    assert asked == {report_module._ratio_model(sweep.params(sweep.point(i))):
                     pytest.approx(expected[law(i)]) for i in indices}
    assert stats["errors_sought"] == pytest.approx([1e-3, 4.5e-3, 1e-2])
    asked.clear()
    _, stats = report_module.model_limits(sweep, indices, 1, None, widths, error=5e-3)
    assert set(asked.values()) == {5e-3} and stats["errors_sought"] == [5e-3]
    asked.clear()
    _, stats = report_module.model_limits(sweep, indices, 1)
    assert set(asked.values()) == {None} and stats["errors_sought"] == []


def test_the_command_line_gives_every_laws_limit_the_error_asked_for(laws_summary, capsys):
    # --limit-error as a user types it (an exact fraction), at the one-weight laws sweep (exact limits, seconds)
    doc, _ = laws_summary
    assert main(["sweep", "--summarize", doc["results"], "--figures", str(Path(doc["results"]).parent / "asked"),
                 "--limit-error", "1/200", "--json"]) == 0
    asked = json.loads(capsys.readouterr().out)
    assert asked["model_limit"]["errors_sought"] == ["0.005"]
    # and in the text a user reads (the errors are text in the document: a format for floats had failed on them)
    assert main(["sweep", "--summarize", doc["results"], "--figures", str(Path(doc["results"]).parent / "asked"),
                 "--limit-error", "1/200"]) == 0
    assert capsys.readouterr().out.splitlines()[1].endswith("s), sought to an error of 0.005")
    assert [p["theory"]["finite_vocabulary"]["overlap"] for p in asked["points"]] == [
        p["theory"]["finite_vocabulary"]["overlap"] for p in doc["points"]]
