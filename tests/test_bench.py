"""The benchmark harness still runs end to end (tiny sizes; nothing here is timed or compared to a speed)."""
import contextlib
import io
import json

import pytest

from benchmarks import core as bench
from benchmarks import cost
from benchmarks import mc as bench_mc
from benchmarks.__main__ import main


@pytest.fixture(scope="module")
def tiny_run(tmp_path_factory):
    """One ``python -m benchmarks all --tiny --json`` run (about 5 s), shared by the tests below."""
    out = tmp_path_factory.mktemp("bench") / "benchmarks.md"
    stdout, stderr = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(stdout), contextlib.redirect_stderr(stderr):
        status = main(["all", "--tiny", "--json", "--out", str(out)])
    return status, stdout.getvalue(), out.read_text()


def test_tiny_run_prints_one_json_document(tiny_run):
    status, stdout, _ = tiny_run
    assert status == 0
    doc = json.loads(stdout)
    assert doc["mode"] == "tiny" and doc["written"].endswith("benchmarks.md")
    figures = [row["figure"] for row in doc["summary"]]
    assert any(f.startswith("bulk density, ") for f in figures) and any(f.startswith("derive spike") for f in figures)
    # reals follow the project's JSON convention (strings); a ratio is a positive number
    ratio = doc["summary"][0]["ratio"]
    assert isinstance(ratio, str) and float(ratio) > 0


def test_tiny_markdown_has_every_section_and_row(tiny_run):
    _, _, text = tiny_run
    for heading in ("# Benchmarks", "## Targets and ratios", "## Memory bandwidth", "## Bulk density", "## derive spike",
                    "## Monte Carlo", "### The matrix-free paths against the bandwidth floor",
                    "### Dense and matrix-free, solve after solve", "## The largest gap to the floor",
                    "## The mu2 axis from one draw", "### Table passes per converged eigenpair",
                    "## Whole processes"):
        assert f"\n{heading}" in text or text.startswith(heading), heading
    assert "Machine:" in text and "load average" in text and "BLAS threads: 1; times are process CPU time." in text
    mode = bench.MODES["tiny"]
    for d in mode.ladder:
        for path in bench_mc.PATHS:
            assert f"\n| {d} | {path} |" in text, (d, path)
    # the dense path stops at dense_max: the table says so instead of leaving the row out
    assert f"\n| {mode.ladder[-1]} | dense | – | skipped |" in text
    for path in bench_mc.PATHS:
        assert f"- {path}: p = " in text
    assert "skipped in --tiny" in text


def test_float_density_is_exact_outside_the_support_in_the_tiny_run(tiny_run):
    # The accuracy columns are measured, not timed: the float64 path is 0 wherever the 30-digit
    # density is (its support test is exact), and its error is within its documented bound
    # 1e-13 max(1, rho) (derive.gaussian.bulk.BulkLaw.density_float).
    _, stdout, _ = tiny_run
    bulk = json.loads(stdout)["bulk"]
    f = bulk["float"]
    assert f["outside"] > 0 and f["nonzero_outside"] == 0
    assert float(f["max_abs_error"]) < 1e-13 * max(1.0, float(bulk["max_density"]))


def test_bad_threads_is_one_line_on_stderr(capsys):
    assert main(["all", "--tiny", "--threads", "-1"]) == 2
    captured = capsys.readouterr()
    assert captured.out == "" and captured.err.count("\n") == 1 and "threads" in captured.err


def test_cost_writes_each_part_into_its_own_section(tmp_path, monkeypatch):
    # a part run again replaces its section and leaves the text around it (and the other parts) as they were; the
    # part's numbers are those of two made-up rounds (the tiny `all` run above runs the harness's processes)
    from benchmarks import processes

    rounds = {name: [{"cpu_s": c, "user_s": c / 2, "wall_s": c} for c in cpus]
              for name, cpus in (("naive script", (4.0, 5.0)), ("verify mc (now)", (0.5, 0.5)))}
    made_up = {"baseline": "2792ba3", "rounds": 2, "load_start": 1.0, "load_end": 1.0,
               "mc": processes._summary(rounds, "naive script")}
    monkeypatch.setattr(cost, "run_part", lambda part, mode, log: made_up)
    out = tmp_path / "benchmarks.md"
    out.write_text("# Benchmarks\n\nearlier text\n")
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
        for _ in range(2):
            assert main(["cost", "--tiny", "--parts", "mc", "--out", str(out)]) == 0
    text = out.read_text()
    begin, end = cost.markers("mc")
    assert text.startswith("# Benchmarks\n\nearlier text\n") and text.count(begin) == 1 and text.count(end) == 1
    assert "| verify mc (now) | 0.50 | 0.25 | 0.50 | 9.0x (8.0x to 10.0x) | 9.0x | 9.0x |" in text
    assert "Target >= 8x (CPU, median over rounds): met" in text
    assert "python -m benchmarks cost --parts mc --tiny" in text
    assert cost.splice(text, "batches", "B") == text + "\nB\n"
    # `all` rewrites the page and keeps the parts' sections
    kept = cost.carry(text, "# Benchmarks\n\nnew run\n")
    assert kept.startswith("# Benchmarks\n\nnew run\n") and text[text.index(begin):text.index(end)] in kept


def test_limit_part_runs_derive_spike_and_compares_the_codes_round_by_round():
    # the harness runs this checkout's derive spike (tiny: the last case at mu2 = 0, no outlier to seek); the table's
    # ratios are before's time over now's in each round, here 20/10 and 24/12 s of CPU, 10/4 and 12/6 s of wall
    result = cost.run_part("limit", "tiny", io.StringIO())
    assert list(result["times"]) == list(cost.LIMITS)[-1:]
    assert all(list(t) == ["now"] and result["samples"][case]["now"]["outlier"] is False
               for case, t in result["times"].items())
    now = [{"cpu_s": 10.0, "user_s": 9.0, "wall_s": 4.0}, {"cpu_s": 12.0, "user_s": 11.0, "wall_s": 6.0}]
    before = [{"cpu_s": 20.0, "user_s": 19.0, "wall_s": 10.0}, {"cpu_s": 24.0, "user_s": 23.0, "wall_s": 12.0}]
    made_up = {"baseline": cost.LIMIT_BASELINE, "rounds": 2, "times": {"T = 9": {"now": now, "before": before}},
               "samples": {"T = 9": {"now": {"eigenvalue": "1.25", "eigenvalue_error": "2.0e-4", "overlap": "0.5",
                                             "overlap_error": "1.0e-4", "mu2_critical": "0.3",
                                             "mu2_critical_error": "0.01"},
                                     "before": {"eigenvalue": "1.2", "overlap": "0.5", "mu2_critical": "0.3"}}}}
    text = "\n".join(cost._limit_lines(made_up))
    assert "| T = 9 | now | 11.00 | 5.00 | 2.00x | 2.25x | 1.25 (2.0e-4), 0.5 (1.0e-4), 0.3 (0.01) |" in text
    assert "| T = 9 | before | 22.00 | 11.00 | 1.00x | 1.00x | 1.2, 0.5, 0.3 |" in text


def test_lawaxis_part_gives_each_runs_cost_and_the_slices_estimates_against_their_errors():
    # made-up timings: the slice 600 s before, 150 s now over 2 points (4.0x); the diagram 170 s with both laws over 360
    # models, 12 s without; the eigenvalues differ by 1e-4 against errors summing to 4e-4 (0.25), the overlaps by 3e-4
    # against 6e-4 (0.50): the larger is shown
    from benchmarks import lawaxis

    made_up = {"baseline": lawaxis.BASELINE, "rounds": 1, "load_start": 1.0, "load_end": 2.0,
               "times": {"slice now": [{"cpu_s": 150.0, "wall_s": 160.0}],
                         "slice before": [{"cpu_s": 600.0, "wall_s": 610.0}],
                         "diagram, both laws": [{"cpu_s": 170.0, "wall_s": 90.0}],
                         "diagram, --skip-model-limit": [{"cpu_s": 12.0, "wall_s": 12.5}]},
               "limits": {"slice now": [["1/4", "0.8673", "2.0e-4", "0.1459", "3.0e-4"]] * 2,
                          "slice before": [["1/4", "0.8674", "2.0e-4", "0.1462", "3.0e-4"]] * 2,
                          "diagram, both laws": [["1/4", "0.8674", "2.0e-3", "0.1462", "3.0e-3"]] * 360},
               "sought": {"slice now": ["0.01"], "slice before": None, "diagram, both laws": ["0.009", "0.01"]},
               "unavailable": {"slice now": 0, "slice before": 0, "diagram, both laws": 8}}
    text = "\n".join(lawaxis.markdown(made_up))
    assert "| slice now | 150.0 | 160.0 | 75.00 | 0.01 | 0 |" in text
    assert "| slice before | 600.0 | 610.0 | 300.00 | – | 0 |" in text
    assert "| diagram, both laws | 170.0 | 90.0 | 0.47 | 0.009 to 0.01 | 8 |" in text
    assert "| diagram, --skip-model-limit | 12.0 | 12.5 | 0.03 | – | – |" in text
    assert "before over now, 4.0x" in text and text.count("| 0.50 |") == 2
    assert "**met** (2.8 CPU-minutes)" in text


def test_ledger_part_gives_before_over_now_in_the_same_round_and_the_verdicts():
    # the table of `cost --parts ledger` from made-up timings: ratios before/now per round (40/20 s CPU, 30/10 s wall),
    # the verdicts of the run, the cold warm-up runs below the table
    from benchmarks import ledger

    def run(cpu, wall, verdicts):
        return {"cpu_s": cpu, "user_s": cpu, "wall_s": wall, "load": 1.5, "verdicts": dict(zip(ledger.DECIDED, verdicts))}
    decided, unknown = ("confirmed", "corrected", "confirmed"), ("inconclusive",) * 3
    made_up = {"baseline": ledger.BASELINE, "rounds": 1,
               "times": {"quick": {"now": [run(20.0, 10.0, decided)], "before": [run(40.0, 30.0, unknown)]}},
               "cold": {"now": run(90.0, 50.0, decided), "before": run(45.0, 31.0, unknown)}}
    text = "\n".join(ledger.markdown(made_up))
    assert "| quick | now | 20.0 | 10.0 | 1.50 | 2.00x | 3.00x | confirmed, corrected, confirmed |" in text
    assert "| quick | before | 40.0 | 30.0 | 1.50 | 1.00x | 1.00x | inconclusive, inconclusive, inconclusive |" in text
    assert "now: 90.0 s CPU, 50.0 s wall" in text


@pytest.mark.slow
def test_ledger_part_runs_the_quick_ledger():
    result = cost.run_part("ledger", "tiny", io.StringIO())
    assert list(result["times"]) == ["quick"] and list(result["times"]["quick"]) == ["now"]
    assert set(result["cold"]) == {"now"}
    assert all(v in ("confirmed", "corrected", "refuted", "inconclusive")
               for v in result["times"]["quick"]["now"][0]["verdicts"].values())


def test_cost_refuses_an_unknown_part(capsys):
    assert main(["cost", "--tiny", "--parts", "mc,bogus", "--out", ""]) == 2
    assert "parts" in capsys.readouterr().err


def test_client_part_runs_the_sweep_with_stubbed_solves(capsys):
    # the harness of `cost --parts client`: its child processes run the sweep to the end in the client's process and
    # on a LocalCluster, the stub's records pass the results file's checks, and the resume finds nothing to do
    from benchmarks import client

    result = client.run("tiny", log=io.StringIO())
    runs = list(result["runs"].values())
    assert [x["executor"] for x in runs] == list(client.EXECUTORS)
    for x in runs:
        assert x["run"]["computed"] == x["run"]["tasks"] == 480 and x["run"]["cells"] == 12
        assert x["resume"]["computed"] == 0 and x["resume"]["cells"] == 0
    text = "\n".join(client.markdown(result))
    assert "| now | in-process |" in text and "| now | Dask LocalCluster, 2 workers |" in text


def test_cell_projection_adds_the_slower_reading_whole():
    # one gamma, two workers whose steady (second) cell made 100 passes over a 0.8 GB table, read at 20 GB/s when
    # measured; at 5 GB/s a core the passes take 80 GB x (1/5 - 1/20) s/GB = 12 s longer, and the floor is the
    # generation (1e8 variates at 10 ns: 1 s) plus 80 GB at the core's bandwidth
    from benchmarks import cell

    worker = {"t_rng": 1e-8, "read_bytes_per_s": 20e9,
              "cells": [{"cpu_s": 9.0, "passes": 100, "table_bytes": 8e8, "passes_s": 6.0, "generate_s": 1.0},
                        {"cpu_s": 8.0, "passes": 100, "table_bytes": 8e8, "passes_s": 6.0, "generate_s": 1.0}]}
    result = {"gammas": ["1"], "pairs": {"1": [worker, worker]}, "alone": {"1": {"read_bytes_per_s": 20e9}}}
    here = cell.projection(result, 2, None)
    assert here["cell_s"] == 8.0 and abs(here["floor_s"] - 5.0) < 1e-12 and abs(here["ratio"] - 8.0 / 5.0) < 1e-12
    slow = cell.projection(result, 16, 80e9)
    assert abs(slow["bandwidth_per_core"] - 5e9) < 1 and abs(slow["cell_s"] - 20.0) < 1e-9
    assert abs(slow["floor_s"] - 17.0) < 1e-9 and abs(slow["ratio"] - 20.0 / 17.0) < 1e-12
    assert abs(slow["hours"] - 1440 * 20.0 / 16 / 3600) < 1e-12


def test_finite_part_gives_verify_mc_over_derive_spike_in_the_same_round_and_both_answers():
    # the table of `cost --parts finite` from made-up timings: verify mc is the baseline (what a user would run
    # instead), the ratio its time over derive spike --d's per round (30/10 and 36/12 s of CPU); each row its answer
    from benchmarks import finite

    def run(cpu, wall):
        return {"cpu_s": cpu, "user_s": cpu, "wall_s": wall}
    made_up = {"rounds": 2, "draws": 32,
               "times": {"P": {"derive spike --d": [run(10.0, 5.0), run(12.0, 6.0)],
                               "verify mc": [run(30.0, 20.0), run(36.0, 24.0)]}},
               "answers": {"P": {"derive spike --d": {"eigenvalue": "1.5", "overlap": "0.55",
                                                      "spread": ["0.07", "0.02"]},
                                 "verify mc": {"eigenvalue": 1.52, "overlap": 0.554,
                                               "ci95": [[1.49, 1.55], [0.548, 0.56]]}}}}
    text = "\n".join(finite.markdown(made_up))
    assert "| P | derive spike --d | 11.00 | 5.50 | 3.00x | 4.00x | 1.5 (sd 0.07) | 0.55 (sd 0.02) |" in text
    assert "| P | verify mc | 33.00 | 22.00 | 1.00x | 1.00x | 1.52 [1.49, 1.55] | 0.554 [0.548, 0.56] |" in text
