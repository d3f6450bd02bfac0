"""Fuzzing the command lines and the public API with random and adversarial input.

Every call must end in one of two ways: a result with no NaN or infinity anywhere in it, or a
refusal (``ParameterError`` in Python; exit status 2 with exactly one line on stderr and nothing
on stdout on the command line). A value that is refused is counted in the session's
``bad_inputs`` (tests/conftest.py), which the terminal summary reports.
"""
from __future__ import annotations

import contextlib
import io
import json
import math
import re
import warnings

import mpmath
import numpy as np
import pytest
import sympy as sp
from hypothesis import given, settings, strategies as st

from derive import numbers
from derive.gaussian import bulk, freeprob, outliers
from derive.model import attention, families, optimality, pooling as pooling_, realizable, schemes, signs as model, spec
from derive.vocabulary.limit import tokenreuse
from derive.report.documents import spike
from verify.montecarlo.signs import sample_signs
from derive.cli import main as derive_main
from derive.errors import ParameterError
from tests import strategies as S
from verify import stats
from verify.strategies import SCHEMES
from verify.ledger import records as ledger
from verify.cli import main as verify_main

_NUMBER = re.compile(r"^[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?$")
_NONFINITE = re.compile(r"^[+-]?(nan|inf|infinity)$", re.IGNORECASE)


def run(main, argv):
    """``(status, stdout, stderr, warnings)`` of one in-process command line."""
    out, err = io.StringIO(), io.StringIO()
    with warnings.catch_warnings(record=True) as caught, contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        warnings.simplefilter("always")
        status = main(list(argv))
    return status, out.getvalue(), err.getvalue(), [str(w.message) for w in caught]


def nonfinite_reals(doc, path="$"):
    """Paths of the reals in a JSON document that are not finite (reals are strings; a float would be too)."""
    if isinstance(doc, dict):
        return [p for k, v in doc.items() for p in nonfinite_reals(v, f"{path}.{k}")]
    if isinstance(doc, list):
        return [p for i, v in enumerate(doc) for p in nonfinite_reals(v, f"{path}[{i}]")]
    if isinstance(doc, float):
        return [] if math.isfinite(doc) else [path]
    if isinstance(doc, str):
        if _NONFINITE.match(doc.strip()):
            return [path]
        if _NUMBER.match(doc) and not mpmath.isfinite(mpmath.mpf(doc)):
            return [path]
    return []


def nulls(doc, path="$"):
    """Paths of the ``null`` values in a JSON document."""
    if isinstance(doc, dict):
        return [p for k, v in doc.items() for p in nulls(v, f"{path}.{k}")]
    if isinstance(doc, list):
        return [p for i, v in enumerate(doc) for p in nulls(v, f"{path}[{i}]")]
    return [path] if doc is None else []


def check_outcome(main, argv, bad_inputs, *, must_refuse: bool, may_refuse=None):
    """Run ``argv`` and check the contract; return the document (``None`` when refused).

    ``must_refuse``: the input is bad and must exit 2. Otherwise it is valid and must succeed,
    unless ``may_refuse`` (a regular expression) matches the one error line.
    """
    status, out, err, caught = run(main, argv)
    assert status in (0, 2), (argv, status, err)
    assert not caught, (argv, caught)
    if status == 2:
        lines = err.splitlines()
        assert out == "", (argv, out)
        assert len(lines) == 1 and re.match(r"^(derive|verify): error: \S", lines[0]), (argv, err)
        assert "Traceback" not in err
        if not must_refuse:
            assert may_refuse is not None and re.search(may_refuse, lines[0]), (argv, lines[0])
        bad_inputs.refused(tuple(argv))
        return None
    assert not must_refuse, (argv, out[:300])
    doc = json.loads(out)
    assert not nonfinite_reals(doc), (argv, nonfinite_reals(doc))
    return doc


# ----------------------------------------------------------------------------------------------
# the command lines

SPIKE_BAD = {"--delta": S.bad_positive, "--gamma": S.bad_nonnegative, "--alpha": S.bad_nonnegative,
             "--kappa": S.bad_positive, "--mu2": S.bad_nonnegative, "--sum-w": S.garbage_numbers,
             "--digits": S.bad_digits}
BULK_BAD = {"--delta": S.bad_text("0", "-1", "1e-13", "1e13"), "--gamma": S.bad_text("0", "-2", "1e-20"),
            "--kappa": S.bad_text("0", "-1", "1e-31", "1e31"), "--x": S.bad_point_lists, "--digits": S.bad_digits}
WEIGHTS_BAD = {"--weights": S.bad_schemes, "--T": S.bad_lengths, "--signs": S.bad_specs, "--digits": S.bad_digits}
OPTION_BAD = {f"--{o.name}": S.bad_option(o) for o in schemes.OPTIONS}
MC_BAD = {"--d": S.bad_sizes, "--V": S.bad_text("0", "-2", "1.5", "7", "13"), "--N": S.bad_sizes,
          "--T": S.bad_lengths, "--signs": S.bad_specs, "--weights": S.bad_schemes,
          "--mu2": S.bad_text("-1", "-1e-9", "1000001", "1e300"), "--seeds": S.bad_sizes,
          "--seed0": S.bad_text("-1", "0.5", "1/3"), "--k": S.bad_text("0", "-1", "1000"),
          "--digits": S.bad_digits, "--path": S.bad_mc_paths}
# the optimal weights of an anti-correlated family can sum to zero: then no normalization to sum 1 exists; or to
# nearly zero, and normalized to sum 1 they leave the documented range of kappa
ZERO_SUM = r"sum to zero|nearly cancel"


OPTIONAL = {"weights": {"--signs", *OPTION_BAD}, "spike": {"--sum-w"}, "bulk": set(),
            "mc": {"--seeds", "--seed0", "--k", "--law", *OPTION_BAD}}


def structural_damage(draw, argv: list[str]) -> list[str]:
    """``argv`` with an unknown option, a missing value, a stray word, or a required option dropped."""
    required = [i for i, a in enumerate(argv) if a.startswith("--") and i + 1 < len(argv)
                and not argv[i + 1].startswith("--") and a not in OPTIONAL.get(argv[0], set())]
    kind = draw(st.sampled_from(["unknown", "missing value", "stray", "bad command"] + (["drop"] if required else [])))
    if kind == "unknown":
        return argv + ["--bogus", "1"]
    if kind == "missing value":
        return argv[:-1] if argv[-1].startswith("-") is False and argv[-2].startswith("--") else argv + ["--digits"]
    if kind == "stray":
        return argv + ["extra"]
    if kind == "drop":
        i = draw(st.sampled_from(required))
        return argv[:i] + argv[i + 2:]
    return ["nosuch"] + argv[1:]


@settings(max_examples=60)
@given(st.data())
def test_derive_spike_refuses_every_bad_value(bad_inputs, data):
    argv = data.draw(S.spike_argv()) + ["--json"]
    bad, _ = S.argv_with_bad(data.draw, argv, SPIKE_BAD)
    check_outcome(derive_main, bad, bad_inputs, must_refuse=True)


@settings(max_examples=25)
@given(S.spike_argv(), st.integers(1, 80))
def test_derive_spike_answers_every_valid_input(bad_inputs, argv, digits):
    doc = check_outcome(derive_main, argv + ["--json", "--digits", str(digits)], bad_inputs, must_refuse=False)
    allowed = {"$.population.eigenvalue", "$.sample.eigenvalue", "$.population.mu2_critical", "$.sample.mu2_critical",
               "$.warning"}
    assert set(nulls(doc)) <= allowed


@settings(max_examples=40)
@given(st.data())
def test_derive_bulk_refuses_every_bad_value(bad_inputs, data):
    argv = data.draw(S.bulk_argv()) + ["--json"]
    bad, _ = S.argv_with_bad(data.draw, argv, BULK_BAD)
    check_outcome(derive_main, bad, bad_inputs, must_refuse=True)


@settings(max_examples=12)
@given(S.bulk_argv())
def test_derive_bulk_answers_every_valid_input(bad_inputs, argv):
    doc = check_outcome(derive_main, argv + ["--json", "--digits", "20"], bad_inputs, must_refuse=False,
                        may_refuse=r"x: the density diverges at the hard edge x = 0")
    assert doc is None or set(nulls(doc)) <= {"$.warning"}


@settings(max_examples=60)
@given(st.data())
def test_derive_weights_refuses_every_bad_value(bad_inputs, data):
    argv = data.draw(S.weights_argv()) + ["--json"]
    (scheme,) = [s for s in schemes.CATALOGUE if s.name in argv]
    table = dict(WEIGHTS_BAD, **{f"--{o.name}": OPTION_BAD[f"--{o.name}"] for o in scheme.options})
    bad, option = S.argv_with_bad(data.draw, argv, table)
    check_outcome(derive_main, bad, bad_inputs, must_refuse=True)


@settings(max_examples=25)
@given(S.weights_argv(), st.integers(1, 60))
def test_derive_weights_answers_every_valid_input(bad_inputs, argv, digits):
    doc = check_outcome(derive_main, argv + ["--json", "--digits", str(digits)], bad_inputs, must_refuse=False,
                        may_refuse=ZERO_SUM)
    # a scheme's options are null in the document of a scheme without them (INTERFACE.md); a scheme with a law of its
    # weights states their errors, null where the weights are exact (notes/outputs.md)
    assert doc is None or set(nulls(doc)) <= {"$.exact", "$.note", "$.errors",
                                              *(f"$.{o.name}" for o in schemes.OPTIONS)}


@settings(max_examples=50)
@given(st.data())
def test_command_lines_refuse_structural_damage(bad_inputs, data):
    main, argv = data.draw(st.sampled_from([
        (derive_main, S.spike_argv()), (derive_main, S.bulk_argv()), (derive_main, S.weights_argv()),
        (verify_main, S.mc_argv()), (derive_main, st.just(["formulas", "--latex"])),
        (verify_main, st.just(["claims", "--quick"]))]))
    argv = data.draw(argv)
    check_outcome(main, structural_damage(data.draw, argv + ["--json"]), bad_inputs, must_refuse=True)


@pytest.mark.parametrize("argv", [
    [], ["--json"], ["weights", "--json", "--json=1"], ["claims", "--quick=3"], ["claims", "--notes"],
    ["mc", "--help-me"], ["formulas", "--latex", "--output", "/proc/no/such/dir/f.tex"],
    ["formulas", "--latex", "--output", ""],
])
def test_odd_command_lines_are_refused(argv, bad_inputs):
    main = verify_main if argv[:1] in (["claims"], ["mc"]) else derive_main
    check_outcome(main, argv, bad_inputs, must_refuse=True)


@settings(max_examples=40)
@given(st.data())
def test_verify_mc_refuses_every_bad_value(bad_inputs, data):
    argv = data.draw(S.mc_argv()) + ["--json"]
    bad, _ = S.argv_with_bad(data.draw, argv, MC_BAD)
    check_outcome(verify_main, bad, bad_inputs, must_refuse=True)


@settings(max_examples=15)
@given(S.mc_argv(), st.integers(1, 40))
def test_verify_mc_answers_every_valid_input(bad_inputs, argv, digits):
    doc = check_outcome(verify_main, argv + ["--json", "--digits", str(digits)], bad_inputs, must_refuse=False,
                        may_refuse=ZERO_SUM)
    if doc is None:
        return
    # the contract's nulls: the intervals of a single seed, and the theory's absent outliers; weights that vary from
    # sequence to sequence have a theory of their own (the model's law's fields: INTERFACE.md), whose errors and
    # difference from the paper's law at the mean scalars (gaussian_equivalent) have no value without the outlier
    allowed = {"$.population.eigenvalue", "$.sample.eigenvalue", "$.population.mu2_critical", "$.sample.mu2_critical"}
    one_seed = argv[argv.index("--seeds") + 1] == "1"
    random = doc["theory"].get("weights_law") is not None
    for path in nulls(doc):
        if path.startswith("$.theory_at_d"):
            # the theory at the run's d: no warning, or no value at all where it is unavailable (then said why)
            unavailable = doc["theory_at_d"]["unavailable"] is not None
            assert path == "$.theory_at_d.warning" or (path == "$.theory_at_d.unavailable") != unavailable, path
        elif path.startswith("$.theory"):
            assert "$" + path[len("$.theory"):] in allowed or (random and re.fullmatch(
                r"\$\.theory\.(sample\.\w+_error|gaussian_equivalent\.(population|sample)\.(eigenvalue|mu2_critical)|"
                r"difference\.(eigenvalue|overlap|mu2_critical))", path)), path
        elif path.startswith("$.conditional"):
            # a draw without the signal outlier has no predicted eigenvalue and is compared at the top of the bulk (a
            # draw with it is not); a comparison no draw enters has no difference; a draw without a bulk (a tiny V)
            # has no edge to predict
            assert re.fullmatch(r"\$\.conditional\.(per_seed\[\d+\]\.(eigenvalue|edge_overlap)|"
                                r"mc_signal\.(eigenvalue|overlap|edge_overlap)\[\d+\]|"
                                r"mc_minus_conditional\.\w+\.(mean|ci95\[[01]\]))", path) or (
                one_seed and path.endswith(("ci95[0]", "ci95[1]"))), path
        elif path.startswith("$.verdict_at_d"):
            # the limit inside the run's interval (or no interval): nothing to explain
            assert path == "$.verdict_at_d.limit", path
        elif path.startswith("$.verdict"):
            # fewer than two draws enter a comparison: no detectable difference, and no top of the bulk to judge
            assert re.fullmatch(r"\$\.verdict\.(min_detectable\.\w+|top_of_bulk)", path), path
        else:
            assert one_seed and path.endswith(("ci95[0]", "ci95[1]")), path


def test_verify_mc_refuses_a_run_too_large_for_the_machine(bad_inputs):
    argv = ["mc", "--d", "1e9", "--V", "40", "--N", "40", "--T", "3", "--signs", "iid", "--weights", "mean",
            "--mu2", "1", "--seeds", "1", "--json"]
    check_outcome(verify_main, argv, bad_inputs, must_refuse=True)


@pytest.mark.parametrize("signs, weights", [("gauss:1/2", "mean"), ("markov:1/2", "optimal"), ("gauss:-3/10", "optimal")])
def test_verify_mc_accepts_irrational_alpha(signs, weights, bad_inputs):
    # alpha of these is irrational (arcsines, square roots); nsimplify's guess of it was refused by spike
    argv = ["mc", "--d", "8", "--V", "16", "--N", "16", "--T", "3", "--signs", signs, "--weights", weights,
            "--mu2", "2", "--seeds", "2", "--law", "gaussian-equivalent", "--json"]
    doc = check_outcome(verify_main, argv, bad_inputs, must_refuse=False)
    assert doc["theory"]["bulk"]["right_edge"]


# ----------------------------------------------------------------------------------------------
# files from users are data, never code


class _Tripwire:
    """Unpickling this would create ``path``: the proof that a file was executed."""

    def __init__(self, path):
        self.path = str(path)

    def __reduce__(self):
        return (open, (self.path, "w"))


@pytest.mark.parametrize("where", ["signs", "weights"])
def test_a_pickled_npy_is_refused_and_never_unpickled(tmp_path, where, bad_inputs):
    trap = tmp_path / "executed"
    f = tmp_path / "evil.npy"
    np.save(f, np.array([_Tripwire(trap), 1.0], dtype=object), allow_pickle=True)
    assert b"executed" in f.read_bytes() and b"'descr': '|O'" in f.read_bytes()  # the file really holds a pickle
    argv = (["weights", "--weights", "mean", "--T", "2", "--signs", f"file:{f}", "--json"] if where == "signs"
            else ["weights", "--weights", f"file:{f}", "--T", "2", "--json"])
    check_outcome(derive_main, argv, bad_inputs, must_refuse=True)
    assert not trap.exists()


@pytest.mark.parametrize("text", [
    "1,2,abc\n", "1;2;3\n", "1,2\n3\n", "\x00\x01\x02", "1,2,3\n4,5\n", "", "\n\n", "1,nan,1\n", "1,inf,1\n",
    "1,1e99999,1\n", "=cmd|' /C calc'!A0,1,1\n", "__import__('os').system('touch x'),1,1\n", "0,0,0\n", "1,1,1,1\n",
    "\xff\xfe1,2,3", "1/0,1,1\n",
])
def test_garbage_csv_weights_are_refused(tmp_path, text, bad_inputs):
    f = tmp_path / "w.csv"
    f.write_bytes(text.encode("latin-1"))
    check_outcome(derive_main, ["weights", "--weights", f"file:{f}", "--T", "3", "--json"], bad_inputs, must_refuse=True)


@pytest.mark.parametrize("rows", [
    [[1, 2], [2, 1]],                                      # not PSD
    [[1, 0.5], [0.4, 1]],                                  # not symmetric
    [[2, 0], [0, 1]],                                      # diagonal not 1
    [[1, -0.5, -0.5], [-0.5, 1, -0.5], [-0.5, -0.5, 1]],   # PSD, but no +-1 vector has it
    [[1, 0, 0]],                                           # not square
    [[1, float("nan")], [float("nan"), 1]],
])
def test_bad_correlation_files_are_refused(tmp_path, rows, bad_inputs):
    f = tmp_path / "R.npy"
    np.save(f, np.array(rows, dtype=float))
    check_outcome(derive_main, ["weights", "--weights", "mean", "--T", str(len(rows[0])), "--signs", f"file:{f}", "--json"],
                  bad_inputs, must_refuse=True)


# ----------------------------------------------------------------------------------------------
# the Python API

fam = spec.parse_signs("prefix:2")
R2 = sp.Matrix([[1, 1], [1, 1]])
BLOCK_KINDS = [cls.kind for cls in families.CATALOGUE if cls.block_form() is not None]
TABULATED_KINDS = [cls.kind for cls in families.CATALOGUE if cls.tabulated(2)]


def _valid_or(junk_or_valid):
    return st.one_of(S.junk, st.sampled_from(junk_or_valid))


def _curve_or(valid):
    # a huge integer is a valid SymPy expression, and deriving the MP curve of ratio 10^400 takes seconds
    return st.one_of(S.junk.filter(lambda v: not isinstance(v, int) or abs(v) < 10**6), st.sampled_from(valid))


# (function, strategies of its positional arguments); each argument is junk or a valid value
API = {
    "parse_rational": (numbers.parse_rational, [st.one_of(S.junk, S.garbage_numbers), st.just("x")]),
    "check_count": (numbers.check_count, [_valid_or([3, "4", 2.5]), st.just("n")]),
    "check_digits": (numbers.check_digits, [_valid_or([30, "60", 1000])]),
    "check_range": (lambda v: numbers.check_range(v, "v", low=0), [_valid_or([1, sp.Rational(1, 2)])]),
    "real_vector": (numbers.real_vector, [_valid_or([[1, 2], (0.5,)]), st.just("w")]),
    "format_real": (numbers.format_real, [_valid_or([1, 0.5, sp.sqrt(2)]), _valid_or([5, 30])]),
    "format_exact": (numbers.format_exact, [_valid_or([sp.Rational(1, 3), 2])]),
    "check_T": (model.check_T, [_valid_or([3, "8"])]),
    "check_R": (model.check_R, [_valid_or([R2, [[1]]]), _valid_or([None, 2])]),
    "parse_signs": (spec.parse_signs, [st.one_of(S.junk, S.bad_specs)]),
    "SignFamily.R": (fam.R, [_valid_or([2, 3])]),
    "sample_signs": (lambda *a: sample_signs(fam, *a), [_valid_or([np.random.default_rng(0)]), _valid_or([4]), _valid_or([3])]),
    "causal_weights": (attention.causal_weights, [_valid_or([3]), _valid_or([0, 1]), _valid_or(["strict"]), _valid_or([20])]),
    "causal_weight": (attention.causal_weight, [_valid_or(["inclusive"])]),
    "softmax_normalizer": (attention.softmax_normalizer, [_valid_or(["strict"])]),
    "mean_weights": (attention.mean_weights, [_valid_or([3])]),
    "alpha": (attention.alpha, [_valid_or([[1, 1]]), _valid_or([R2])]),
    "kappa": (attention.kappa, [_valid_or([[1, 1]])]),
    "sum_w": (attention.sum_w, [_valid_or([[1, 1]])]),
    "normalized": (attention.normalized, [_valid_or([[1, 1], [1, -1]]), st.just("w")]),
    "optimal_weights": (attention.optimal_weights, [_valid_or([fam]), _valid_or([3]), _valid_or([20])]),
    "load_weights_file": (schemes.load_weights_file, [_valid_or(["/nonexistent/w.csv"]), _valid_or([3])]),
    "scheme_weights": (pooling_.scheme_weights, [_valid_or(list(SCHEMES)), _valid_or([3]),
                                                  _valid_or([fam, None]), _valid_or([20])]),
    "pooling": (pooling_.pooling, [_valid_or(["mean"]), _valid_or([3]), _valid_or(["iid", None])]),
    "bulk.parameters": (bulk.parameters, [_valid_or([1])] * 3),
    "bulk.law": (bulk.law, [_valid_or(["1/2"]), _valid_or(["1/4"]), _valid_or([1])]),
    "bulk.support": (bulk.support, [_valid_or([1]), _valid_or([2]), _valid_or([1])]),
    "bulk.density": (bulk.density, [_valid_or([1]), _valid_or([1]), _valid_or([1]), _valid_or([["1/2"], [0.5, 7]]),
                                    _valid_or([15])]),
    "bulk.stieltjes": (bulk.stieltjes, [_valid_or([1]), _valid_or([1]), _valid_or([1]), _valid_or([1j, mpmath.mpc(1, 2)]),
                                        _valid_or([15])]),
    "bulk.real_root": (bulk.real_root, [_valid_or([np.array([[-2.0], [2.0], [-1.0], [1.0]])])]),
    "spike": (spike, [_valid_or(["1/2"]), _valid_or(["1/4"]), _valid_or([1]), _valid_or([1]), _valid_or([2]),
                             _valid_or([1]), st.booleans(), _valid_or([12])]),
    "sample_threshold": (outliers.sample_threshold, [_valid_or([mpmath.mpf(1)])] * 3),
    "outliers_at": (outliers.outliers_at, [_valid_or([mpmath.mpf(1) / 2]), _valid_or([mpmath.mpf(1) / 4]), _valid_or([1]),
                                     _valid_or([1]), _valid_or([2])]),
    "rayleigh_quotient": (optimality.rayleigh_quotient, [_valid_or([[1, 0]]), _valid_or([R2])]),
    "top_eigenvalue": (optimality.top_eigenvalue, [_valid_or([R2]), _valid_or([20])]),
    "mean_block_quotient": (optimality.mean_block_quotient, [_valid_or(BLOCK_KINDS)]),
    "optimal_block_quotient": (optimality.optimal_block_quotient, [_valid_or(BLOCK_KINDS)]),
    "compare_causal_vs_mean": (optimality.compare_causal_vs_mean, [_valid_or(TABULATED_KINDS), _valid_or([3])]),
    "summarize": (optimality.summarize, [_valid_or([[]])]),
    "winning_block_lengths": (optimality.winning_block_lengths, [_valid_or([[]])]),
    "read_rational_array": (realizable.read_rational_array, [_valid_or(["/nonexistent/a.csv"]), st.just("w"), _valid_or([1])]),
    "is_positive_semidefinite": (realizable.is_positive_semidefinite, [_valid_or([R2])]),
    "cut_patterns": (realizable.cut_patterns, [_valid_or([3])]),
    "realizing_mixture": (realizable.realizing_mixture, [_valid_or([R2, sp.eye(2)])]),
    "load_correlation_file": (realizable.load_correlation_file, [_valid_or(["/nonexistent/R.npy"])]),
    "token_count_moments": (tokenreuse.token_count_moments, [_valid_or([2, sp.Symbol("lam", positive=True)]), _valid_or([3])]),
    "wishart_moments": (tokenreuse.wishart_moments, [_valid_or([sp.Rational(1, 2)]), _valid_or([3])]),
    "moments_from_free_cumulants": (tokenreuse.moments_from_free_cumulants, [_valid_or([[1, 1, 1]]), _valid_or([3])]),
    "bulk_moments": (tokenreuse.bulk_moments, [_valid_or(["claimed", "T=1"]), _valid_or([3])]),
    "noncrossing_partitions": (freeprob.noncrossing_partitions, [_valid_or([3])]),
    "kreweras_complement": (freeprob.kreweras_complement, [_valid_or([((1, 2, 3),)]), _valid_or([3])]),
    "free_cumulants": (freeprob.free_cumulants, [_valid_or([[1, 1, 2, 5]])]),
    "free_multiplicative_moments": (freeprob.free_multiplicative_moments, [_valid_or([[1, 1, 2]])] * 2),
    "marchenko_pastur": (freeprob.marchenko_pastur, [_curve_or([sp.Rational(1, 2)])]),
    "moments": (freeprob.moments, [_curve_or([freeprob.marchenko_pastur()]), _valid_or([3])]),
    "s_transform": (freeprob.s_transform, [_curve_or([freeprob.marchenko_pastur()])]),
    "discriminant": (freeprob.discriminant, [_curve_or([freeprob.marchenko_pastur()])]),
    "mean_ci": (stats.mean_ci, [_valid_or([[1.0, 2.0]]), _valid_or([0.95])]),
    "finite_size_fit": (stats.finite_size_fit, [_valid_or([[100, 200, 400]]), _valid_or([[0.1, 0.07, 0.05]])]),
}


def finite_result(x) -> bool:
    """Whether no NaN or infinity hides anywhere in a returned value."""
    if isinstance(x, (list, tuple)):
        return all(finite_result(v) for v in x)
    if isinstance(x, dict):
        return all(finite_result(v) for v in x.values())
    if isinstance(x, np.ndarray):
        return x.dtype.kind not in "fc" or bool(np.all(np.isfinite(x)))
    if isinstance(x, (float, mpmath.mpf)):
        return bool(mpmath.isfinite(x))
    if isinstance(x, sp.Basic):
        return not x.has(sp.nan, sp.zoo, sp.oo, -sp.oo)
    return True


@pytest.mark.parametrize("name", sorted(API))
def test_public_api_refuses_bad_input_with_a_parameter_error(name, bad_inputs):
    f, arg_strategies = API[name]

    @settings(max_examples=30)
    @given(st.tuples(*arg_strategies))
    def inner(args):
        with warnings.catch_warnings():
            warnings.simplefilter("error")  # a warning instead of a refusal is a silent answer
            try:
                result = f(*args)
            except ParameterError as exc:
                assert exc.parameter and exc.reason
                bad_inputs.refused((name, repr(args)))
                return
        assert finite_result(result), (name, args, result)

    inner()


def test_the_ledger_never_confirms_without_evidence():
    # the fuzzing of verify claims stops at its arguments (a full run takes minutes): its
    # machinery is checked directly in tests/test_determinism.py; here every malformed check output
    outs = [None, 3, {}, {"verdict": "confirmed"}, {"verdict": "confirmed", "derived": "d"},
            {"verdict": "confirmed", "derived": "d", "evidence": {}}, {"verdict": "confirmed", "derived": "d", "evidence": None},
            {"verdict": "confirmed", "derived": "d", "evidence": {"x": 1}, "skipped": "no time"}]
    for out in outs:
        rec = ledger.run_claim(ledger.Claim("CX", "c", lambda cfg, out=out: out), {})
        assert rec["verdict"] == "inconclusive", out
        assert rec["evidence"], out


# ----------------------------------------------------------------------------------------------
# issue 37: the formula checker's reading, the sweeps' records and the derivation cache, each with any input

_EXPRESSION_TOKENS = ["delta", "gamma", "mu2", "kappa", "alpha", "1", "0", "2.5", "10**60", "+", "-", "*", "/", "**",
                      "^", "(", ")", ",", "sqrt(", "Min(", "Max(", "Rational(", "H(", "exp(", "log(", "Abs(", " ",
                      "Min()", "Max()", "Rational(1, 0)", "Rational(1, 2, 3)", "**1"]


@settings(max_examples=150)
@given(st.lists(st.sampled_from(_EXPRESSION_TOKENS), max_size=40), st.integers(0, 3), st.sampled_from("+-"),
       st.integers(0, 1950))
def test_any_text_is_read_as_an_expression_or_refused(tokens, nesting, sign, signs):
    from derive.sheet.quantities import quantity
    from derive.sheet.userexpr import parse_user_expression

    text = sign * signs + "(" * nesting * 10 + "".join(tokens) + ")" * nesting * 10
    try:
        expr = parse_user_expression(text, quantity("sample.overlap").names)
    except ParameterError as exc:
        assert exc.parameter == "expr"
        return
    assert isinstance(expr, sp.Expr) and not expr.has(sp.zoo, sp.nan, sp.oo, -sp.oo)


@pytest.fixture(scope="module")
def tiny_results(tmp_path_factory):
    from verify.sweeps import executors
    from verify.sweeps.run import run_sweep
    from verify.sweeps.spec import load_sweep
    from pathlib import Path

    path = tmp_path_factory.mktemp("fuzz-sweep") / "tiny.jsonl"
    with executors.InProcess() as ex:
        run_sweep(load_sweep(Path(__file__).resolve().parents[1] / "examples" / "sweeps" / "tiny.toml"), path, ex,
                  max_tasks=2, log=io.StringIO())
    return path


def _paths(x, at=()):
    yield at
    if isinstance(x, dict):
        for k, v in x.items():
            yield from _paths(v, (*at, k))
    elif isinstance(x, list):
        for i, v in enumerate(x):
            yield from _paths(v, (*at, i))


_JSON = st.recursive(st.none() | st.booleans() | st.integers(-10**30, 10**30) | st.floats(allow_nan=False)
                     | st.text(max_size=5), lambda inner: st.lists(inner, max_size=3)
                     | st.dictionaries(st.text(max_size=5), inner, max_size=3), max_leaves=6)


@settings(max_examples=80)
@given(st.data())
def test_a_forged_record_is_refused_or_is_one_a_run_could_write(tiny_results, tmp_path_factory, data):
    from verify.sweeps.report import summarize

    header, first, *rest = tiny_results.read_text().splitlines()
    record = json.loads(first)
    where = data.draw(st.sampled_from([p for p in _paths(record) if p]))
    target = record
    for key in where[:-1]:
        target = target[key]
    target[where[-1]] = data.draw(_JSON)
    forged = tmp_path_factory.mktemp("forged") / "forged.jsonl"
    forged.write_text("\n".join([header, json.dumps(record), *rest]) + "\n")
    try:
        doc = summarize(forged)
    except ParameterError as exc:
        assert exc.parameter == "results"
        return
    # accepted: then the record is one a run could have written, and the summary has no NaN
    assert not nonfinite_reals(json.loads(json.dumps(doc, default=str)))


@settings(max_examples=60)
@given(st.binary(max_size=200) | st.text(max_size=200).map(str.encode), st.booleans())
def test_any_bytes_in_the_cache_are_derived_again(tmp_path_factory, content, with_digest):
    import hashlib

    from derive import cache

    folder = tmp_path_factory.mktemp("cache")
    environ = {cache.ENVIRONMENT: str(folder)}
    with pytest.MonkeyPatch.context() as mp:
        for name, value in environ.items():
            mp.setenv(name, value)
        good = {"eigenvalue": "2.5"}
        check = lambda v: cache.shaped(v, {"eigenvalue": cache.real_text})  # noqa: E731
        cache.memo("m", {"a": 1}, lambda: good, check)
        x = sp.Symbol("x")
        cache.mpmath_functions("t", ("f",), lambda: {"f": ((x,), x / 3)})
        for entry in (next(folder.glob("derive-*/m-*.json")), next(folder.glob("derive-*/t.py"))):
            entry.write_bytes(content)
            if with_digest:
                entry.with_name(entry.name + ".sha256").write_text(hashlib.sha256(content).hexdigest())
        stored = cache.memo("m", {"a": 1}, lambda: good, check)
        assert stored == good or check(stored)
        assert cache.mpmath_functions("t", ("f",), lambda: {"f": ((x,), x / 3)})["f"](mpmath.mpf(3)) == 1
