"""Outputs that explain themselves: what a command prints without ``--json`` says where its files went, what its
errors and its rounding mean, and where each number belongs, so that a reader needs no note to read it."""
import re

import pytest

from derive.cli import main as derive_main
from verify.cli import main as verify_main


def _text(main, argv, capsys) -> tuple[str, str]:
    assert main(argv) in (0, 1), argv
    captured = capsys.readouterr()
    return captured.out, captured.err


def test_verify_claims_says_where_its_report_and_evidence_went(monkeypatch, tmp_path, capsys):
    import verify.ledger.claims as ledger
    from verify.ledger.records import Claim

    claim = Claim("CA", "a claim", lambda cfg: {"verdict": "confirmed", "reason": "r", "derived": "d", "evidence": {}})
    monkeypatch.setattr(ledger, "CLAIMS", [claim])
    notes = tmp_path / "out" / "ledger.md"
    out, err = _text(verify_main, ["claims", "--quick", "--notes", str(notes), "--figures", "", "--workers", "1"], capsys)
    assert f"report: {notes} (each claim, its verdict and the reason" in out
    assert f"evidence: {notes.with_suffix('.json')} (every number behind the verdicts" in out
    assert "figures: none drawn (--figures '')" in out
    assert "verdicts: confirmed: the claim holds as stated" in out and "inconclusive: this run cannot resolve it" in out
    assert f"wrote {notes}" in err and f"wrote {notes.with_suffix('.json')}" in err
    out, _ = _text(verify_main, ["claims", "--quick", "--notes", "", "--figures", "", "--workers", "1"], capsys)
    assert "report: none written (--notes '')" in out


TINY = __import__("pathlib").Path(__file__).resolve().parents[1] / "examples" / "sweeps" / "tiny.toml"


class _StoppedAfterOneCell:
    """The in-process executor, stopped by a SIGINT to this process once the first cell's records are handed back,
    as a user's Ctrl-C stops a sweep part-way."""

    name, workers = "in-process", 1

    def map_unordered(self, fn, items):
        import os
        import signal

        for item in items:
            yield item, fn(item)
            os.kill(os.getpid(), signal.SIGINT)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


def test_a_stopped_sweep_says_how_many_tasks_are_kept_and_how_to_resume(monkeypatch, tmp_path, capsys):
    import contextlib

    from verify.sweeps import executors
    from verify.sweeps.results import read_results

    monkeypatch.setattr(executors, "executor", lambda *a, **k: contextlib.nullcontext(_StoppedAfterOneCell()))
    results = tmp_path / "tiny.jsonl"
    assert verify_main(["sweep", str(TINY), "--results", str(results), "--workers", "1"]) == 130
    err = capsys.readouterr().err.strip().splitlines()
    kept = len(read_results(results).records)
    assert 0 < kept < 16
    assert err[-2] == (f"verify sweep: stopped; {results} keeps {kept}/16 tasks ({16 - kept} left); "
                       f"verify sweep {TINY} --results {results} --workers 1 resumes, skipping the finished ones")
    assert err[-1] == "verify: interrupted by SIGINT"


def test_a_sweep_refused_on_its_input_keeps_its_one_line(tmp_path, capsys):
    results = tmp_path / "other.jsonl"
    results.write_text('{"sweep_results": {"format": 1, "sweep_hash": "0"}}\n')
    assert verify_main(["sweep", str(TINY), "--results", str(results), "--workers", "1"]) == 2
    assert len(capsys.readouterr().err.strip().splitlines()) == 1


def _capture_figures(monkeypatch) -> list:
    """Each figure ``verify.figures.save`` is given, kept open for the test (and still written)."""
    from verify import figures

    kept, save = [], figures.save

    def keep(fig, folder, name):
        import io

        fig.savefig(io.BytesIO(), format="png")  # lays the figure out as the file will be
        kept.append(fig)
        plt_close, figures.plt.close = figures.plt.close, lambda *_: None
        try:
            return save(fig, folder, name)
        finally:
            figures.plt.close = plt_close

    monkeypatch.setattr(figures, "save", keep)
    return kept


def test_a_sweep_figure_names_the_causal_mask_and_shows_both_thresholds(monkeypatch, tmp_path, capsys):
    data = (TINY.read_text().replace('weights = ["mean", "optimal"]', 'weights = ["causal"]')
            .replace('centered = true', 'centered = true\nmask = "strict"'))
    sweep = tmp_path / "causal.toml"
    sweep.write_text(data)
    results = tmp_path / "causal.jsonl"
    assert verify_main(["sweep", str(sweep), "--results", str(results), "--workers", "1"]) == 0
    shown = _capture_figures(monkeypatch)
    # (the model's limit, minutes of cavity populations at T = 4, is not what this test looks at)
    assert verify_main(["sweep", "--summarize", str(results), "--figures", str(tmp_path / "figures"),
                        "--skip-model-limit"]) == 0
    fig = shown[-1]  # the phase diagram, after the curves of the overlap and the eigenvalue
    ax = fig.axes[0]
    assert "causal weights (strict mask, tau=0)" in ax.get_title()
    low, high = ax.get_ylim()
    lines = {line.get_label(): line.get_ydata() for line in ax.get_lines()}
    population = next(y for label, y in lines.items() if label.startswith("population threshold"))
    sample = lines["sample threshold"]
    for curve in (population, sample):
        assert low < min(curve) and max(curve) < high
    out = capsys.readouterr().out
    assert "how to read it:" in out and "the mean over the seeds and its Student-t 95% interval" in out


def test_verify_mc_plot_says_where_it_went(tmp_path, capsys):
    plot = tmp_path / "mc.png"
    out, err = _text(verify_main, ["mc", "--d", "40", "--V", "80", "--N", "160", "--T", "2", "--signs", "iid",
                                   "--weights", "mean", "--mu2", "2", "--seeds", "3", "--plot", str(plot)], capsys)
    assert f"wrote {plot}: each seed's top eigenvalues and overlap against the theory" in err and plot.exists()
    assert "ci95: the Student-t 95% interval of the mean over the seeds" in out
    assert "Monte Carlo reals: 10 significant digits" in out


def test_the_panels_of_verify_mc_plot_do_not_overlap(monkeypatch, tmp_path):
    import numpy as np

    from verify.figures import mc_figure

    shown = _capture_figures(monkeypatch)
    # overlaps whose tick labels take three decimals (0.475, 0.500, ...), as a run at d = 200 draws them
    tops = np.array([[1.149, 0.943, 0.891], [1.161, 0.911, 0.867], [1.264, 0.906, 0.858], [1.230, 0.893, 0.858]])
    overlaps = np.array([[0.551, 0.016, 0.005], [0.550, 0.01, 0.0], [0.519, 0.0, 0.0], [0.653, 0.0, 0.0]])
    theory = {"sample": {"eigenvalue": "1.155", "overlap": "0.5755"}, "bulk": {"right_edge": "0.937"}, "law": "x"}
    mc_figure(tmp_path / "mc.png", tops, overlaps, theory, "caption")
    (fig,) = shown
    left, right = fig.axes
    renderer = fig.canvas.get_renderer()
    # everything the right panel draws (its y-label, its tick labels) clears everything the left one draws
    assert right.get_tightbbox(renderer).x0 > left.get_tightbbox(renderer).x1 + 5


def test_derive_bulk_prints_each_density_beside_its_x(capsys):
    import json

    out, _ = _text(derive_main, ["bulk", "--delta", "1", "--gamma", "1", "--kappa", "1", "--x", "1/2:2:4", "--digits",
                                 "6"], capsys)
    rows = out[out.index("x    density"):].splitlines()[1:5]
    assert [row.split()[0] for row in rows] == ["0.5", "1.0", "1.5", "2.0"]
    assert rows[0].split()[1] == "0.31831"  # 1/pi, the Marchenko-Pastur density at 1/2 for delta = gamma = kappa = 1
    doc = json.loads(_text(derive_main, ["bulk", "--delta", "1", "--gamma", "1", "--T", "1", "--weights", "mean", "--x",
                                         "1/2,1", "--digits", "6", "--json"], capsys)[0])
    assert doc["x"] == ["0.5", "1.0"] and len(doc["density"]) == 2


def test_derive_bulk_plot_says_where_it_went_and_draws_the_gaussian_equivalent_of_its_T_and_weights(monkeypatch, tmp_path,
                                                                                                    capsys):
    from matplotlib.figure import Figure

    drawn, savefig = [], Figure.savefig
    monkeypatch.setattr(Figure, "savefig", lambda fig, *a, **k: (drawn.append(fig), savefig(fig, *a, **k))[1])
    plot = tmp_path / "bulk.png"
    _, err = _text(derive_main, ["bulk", "--delta", "1/2", "--gamma", "1/4", "--T", "2", "--weights", "causal", "--mask",
                                 "strict", "--x", "0.05:1:8", "--digits", "4", "--plot", str(plot)], capsys)
    assert f"wrote {plot}: the density at the 8 points of --x" in err and plot.exists()
    (fig,) = drawn
    ax = fig.axes[0]
    assert "T=2, causal weights (strict mask, tau=0)" in ax.get_title()
    # the strict mask at T = 2 puts every weight on t = 1: kappa = 1, the Gaussian equivalent of those weights
    assert any(line.get_label() == "its Gaussian equivalent (kappa = 1)" for line in ax.get_lines())


def test_derive_bulk_plot_without_x_draws_the_whole_support(monkeypatch, tmp_path, capsys):
    from matplotlib.figure import Figure

    drawn, savefig = [], Figure.savefig
    monkeypatch.setattr(Figure, "savefig", lambda fig, *a, **k: (drawn.append(fig), savefig(fig, *a, **k))[1])
    plot = tmp_path / "bulk.png"
    # delta = gamma = kappa = 1: the support is [0, 27/4], the density positive inside it
    _, err = _text(derive_main, ["bulk", "--delta", "1", "--gamma", "1", "--kappa", "1", "--digits", "6", "--plot",
                                 str(plot)], capsys)
    assert "points over the support (no --x)" in err and plot.exists()
    (line,) = [ln for ln in drawn[0].axes[0].get_lines() if ln.get_label().startswith("density")]
    x, y = line.get_xdata(), line.get_ydata()
    # the whole support and some of beyond, the density drawn where it lives
    assert x[0] < 0.1 and x[-1] > 27 / 4 and (y[x < 27 / 4] > 0).all() and (y[x > 6.8] == 0).all()
    assert derive_main(["bulk", "--delta", "1", "--gamma", "1", "--kappa", "1"]) == 2
    assert capsys.readouterr().err.startswith("derive: error: x: is required")


def test_derive_spike_says_what_its_errors_mean_and_the_digits_they_leave():
    from derive.model.spec import Model
    from derive.report.documents import MODEL_ASSUMPTIONS, spike_document
    from derive.report.text import spike_text as render

    doc = spike_document(Model(delta="1/4", gamma=1, T=1, weights="mean", signs="iid", mu2=3, centered=True), 6)
    assert "_error" not in render(doc)  # exact at one nonzero weight: no error to explain
    # at more nonzero weights the sample level is estimated (derive spike --T 2 ... --digits 6 prints these)
    doc["sample"].update(eigenvalue="2.896", overlap="0.551", eigenvalue_error="4.3e-4", overlap_error="0.0011",
                         mu2_critical="0", mu2_critical_error="0")
    text = render(doc)
    assert ("sample: *_error is the error of an estimate from quenched cavity populations (three standard errors of "
            "the mean over independent populations)") in text
    assert "fewer than --digits may ask: eigenvalue 2.896 ± 4.3e-4 (4 digits), overlap 0.551 ± 0.0011 (3 digits)" in text
    assert "reals: to --digits significant digits (default 30)" in text
    # the assumptions are a whole sentence, not one cut at "the scale 1e-3 t"
    assert MODEL_ASSUMPTIONS.endswith(")") and MODEL_ASSUMPTIONS.count("(") == MODEL_ASSUMPTIONS.count(")")
    assert "relative 1e-3 off the real axis" in MODEL_ASSUMPTIONS


TEXT_FORMS = [
    (derive_main, ["weights", "--weights", "causal", "--T", "4", "--signs", "iid"]),
    (derive_main, ["bulk", "--delta", "1", "--gamma", "1", "--kappa", "1", "--x", "1/2:2:3"]),
    (derive_main, ["spike", "--delta", "1/2", "--gamma", "1/4", "--alpha", "7/32", "--kappa", "1/8", "--mu2", "3/2"]),
    (verify_main, ["mc", "--d", "40", "--V", "80", "--N", "160", "--T", "2", "--signs", "iid", "--weights", "mean",
                   "--mu2", "2", "--seeds", "2"]),
    (verify_main, ["ladder", "--d", "40,80", "--seeds", "2"]),
    (verify_main, ["attention-gap", "--d", "40,80", "--seeds", "2"]),
]


@pytest.mark.parametrize("main,argv", TEXT_FORMS, ids=lambda a: a[0] if isinstance(a, list) else "")
def test_every_text_form_ends_saying_how_to_read_it(main, argv, capsys):
    out, _ = _text(main, argv, capsys)
    block = out[out.rindex("how to read it:"):].splitlines()
    assert len(block) >= 2 and all(line.startswith("  ") for line in block[1:]), block
    assert re.search(r"digits|interval|exact", " ".join(block)), block


def _unexplained(out: str) -> set[str]:
    """The field names a text form prints that its "how to read it" does not name (the parameters under ``inputs``
    are the command's own options, named by its --help; a ``*_error`` field is explained by ``*_error``)."""
    printed, reading = out[:out.rindex("how to read it:")], out[out.rindex("how to read it:"):]
    names, inputs = set(), None
    for line in printed.splitlines():
        found = re.match(r"( *)([A-Za-z_]\w*):", line)
        if not found:
            continue
        depth, name = len(found.group(1)), found.group(2)
        if inputs is not None and depth > inputs:
            continue
        inputs = depth if name == "inputs" else None
        names.add(name)
    named = lambda name: re.search(rf"(?<![\w.]){re.escape(name)}(?!\w)", reading)  # noqa: E731
    return {n for n in names if not named(n) and not (n.endswith("_error") and "*_error" in reading)}


@pytest.mark.parametrize("main,argv", [
    (derive_main, ["spike", "--delta", "1/2", "--gamma", "1/4", "--T", "1", "--weights", "mean", "--signs", "iid",
                   "--mu2", "3/2", "--d", "100", "--digits", "6"]),
    TEXT_FORMS[3],
], ids=["derive spike --d", "verify mc"])
def test_every_field_a_text_form_prints_is_named_in_how_to_read_it(main, argv, capsys):
    out, _ = _text(main, argv, capsys)
    assert not _unexplained(out), _unexplained(out)


def test_verify_formula_says_what_its_values_are_to(capsys):
    out, _ = _text(verify_main, ["formula", "--quantity", "sample.overlap", "--expr", "mu2/(mu2 + delta)", "--examples",
                                 "5"], capsys)
    assert "derived, yours: to --digits significant digits (default 30)" in out


def test_derive_formulas_says_how_to_read_its_list():
    from derive.report.text import formulas_text

    text = formulas_text([{"claim": "C6", "name": "a weight", "lhs": "w_s", "sympy": "1/T"}])
    assert text.startswith("[C6] a weight\n    w_s = 1/T\nhow to read it:\n  [claim] name, then the formula: exact")
