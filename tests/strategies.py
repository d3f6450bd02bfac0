"""Hypothesis strategies of the test suite: the fuzz strategies (inputs that must be refused) and the instances only
the tests need; the strategies of valid inputs are the installed :mod:`verify.strategies`, imported here."""
from __future__ import annotations

import mpmath
import numpy as np
import scipy.sparse as sps
import sympy as sp
from hypothesis import strategies as st

from derive.model import schemes
from verify import strategies as valid
from verify.strategies import causal_cases, families, rationals, sign_specs, weights  # noqa: F401 (re-exported)

ratios = valid.ratios()
"""Dimension ratios ``delta = d/V`` or ``gamma = d/N`` in ``(0, 4]``."""

scales = valid.scales()
"""Noise scales ``kappa = ||w||^2`` of the bulk law in ``[1/10, 4]``."""


@st.composite
def odd_equicorrelated_unrealizable(draw):
    """``(T, a)``: odd ``T`` and ``a`` in ``[-1/(T-1), -1/T)``, where ``(1-a) I + a J`` is PSD but no
    +-1 vector realizes it (``|sum_t xi_t| >= 1`` forces ``a >= -1/T``)."""
    T = draw(st.sampled_from([3, 5, 7]))
    a = draw(rationals(low=sp.Rational(-1, T - 1), high=sp.Rational(-1, T), open_high=True))
    return T, a


@st.composite
def mc_cases(draw, T_max: int = 12):
    """A small Monte Carlo configuration: ``(spec, T, delta, gamma, strength, scheme, centered)`` with
    ``2 <= T <= T_max``, every weight scheme, the raw or the centered ``S``, ratios on both sides of 1, and the
    signal's strength ``theta`` to be taken as ``strength`` times the sample threshold: from 1.6 (outside the
    critical window ``d^{-1/3}`` of the sizes the tests use) to 4."""
    spec, T = draw(sign_specs(T=draw(st.integers(2, T_max))))
    delta = draw(st.sampled_from([sp.Rational(1, 4), sp.Rational(1, 2), sp.Integer(1), sp.Integer(2)]))
    gamma = draw(st.sampled_from([sp.Rational(1, 8), sp.Rational(1, 4), sp.Rational(1, 2), sp.Integer(1), sp.Integer(2)]))
    strength = draw(st.sampled_from([sp.Rational(8, 5), sp.Rational(5, 2), sp.Integer(4)]))
    return spec, T, delta, gamma, strength, draw(st.sampled_from(valid.SCHEMES)), draw(st.booleans())


@st.composite
def covariance_problems(draw):
    """A small instance of :math:`S = E M E^T/N` for the eigensolvers: ``(E, A, k, centered, seed)``
    with ``d`` from 1 to 40 (tails of the 8-row blocks included), ``V`` and ``N`` up to 60, a sparse
    ``V x N`` mixing ``A`` with a few nonzeros per column (some repeated rows), ``k < min(d, N)``,
    a float64 table, and the seed of the starting vector."""
    d = draw(st.integers(2, 40))
    V = draw(st.integers(2, 60))
    N = draw(st.integers(2, 60))
    k = draw(st.integers(1, min(d, N) - 1))
    seed = draw(st.integers(0, 2**32 - 1))
    rng = np.random.default_rng(seed)
    T = draw(st.integers(1, 4))
    rows = rng.integers(0, V, size=(N, T))
    A = sps.csc_matrix((rng.standard_normal(N * T), rows.ravel(), np.arange(0, N * T + 1, T)), shape=(V, N))
    A.sum_duplicates()
    return rng.standard_normal((d, V)), A, k, draw(st.booleans()), seed


# ----------------------------------------------------------------------------------------------
# adversarial inputs (the fuzz suite): each strategy yields values that must be refused

GARBAGE_TEXT = ["nan", "NaN", "inf", "-inf", "Infinity", "abc", "", " ", "1/0", "0/0", "1//2", "0x10", "1e", "e5",
                "--1", "1,2", "1e99999", "9" * 300, "1_000", "None", "[]", "1/2/3", "+-1", "1e-99999", "1+1j", "2**3",
                "1.2.3", "0b11", "١/0"]
"""Texts that are no finite number in the accepted forms (integer, decimal, ``p/q``)."""

garbage_numbers = st.sampled_from(GARBAGE_TEXT)


def bad_text(*extra: str):
    """Garbage numbers or one of the parameter-specific bad texts ``extra``."""
    return st.one_of(garbage_numbers, st.sampled_from(list(extra))) if extra else garbage_numbers


bad_positive = bad_text("0", "-1", "-1/2", "-0.0", "-1e-30", "0/5")
"""Refused where a parameter must be ``> 0``."""
bad_nonnegative = bad_text("-1", "-1/2", "-1e-30", "-3")
"""Refused where a parameter must be ``>= 0``."""
bad_digits = st.sampled_from(["0", "-1", "1001", "1.5", "nan", "30.5", "1e9", "abc", "", "1/2"])
bad_lengths = bad_text("0", "-1", "1.5", "100001", "3/2")
bad_schemes = st.sampled_from(["nope", "", "file:", "file:/nonexistent/w.csv", "Mean", "causal:3", "file:/etc/hostname",
                               "optimal:1", " "])
bad_specs = st.sampled_from(["prefix:0", "prefix:-1", "prefix:1.5", "markov:2", "markov:-1.01", "gauss:1", "gauss:-1",
                             "iid:1", "bogus", "", ":", "file:", "file:/nonexistent/R.npy", "prefix", "markov:nan",
                             "prefix:L", "gauss:", "markov:1/0", "suffix:0", "file:/etc/hostname"])


def bad_option(option):
    """Refused values of a weight scheme's option (:class:`derive.model.schemes.Option`): garbage numbers or one of
    the texts the option names as refused."""
    return bad_text(*option.refused)


bad_point_lists = st.one_of(garbage_numbers.filter(lambda s: "," not in s and s.strip() != ""),
                            st.sampled_from(["", ",", "1,,2", "1,abc", ",1", "1,", "1;2", "nan,1"]))
bad_sizes = bad_text("0", "-4", "1.5")
bad_mc_paths = st.sampled_from(["fast", "", "DENSE", "gpu"])

JUNK = [None, True, False, float("nan"), float("inf"), -float("inf"), "abc", "", "1/0", [], {}, object(), (1, 2),
        complex(1, 1), b"1", sp.nan, sp.oo, sp.zoo, sp.I, sp.Symbol("x"), np.array([[1.0, 2.0]]), np.float64("nan"),
        10**400, -(10**400), -1, 0, 1.5, sp.Matrix([[1, 2], [3, 4]]), "1e400", "1e-400", mpmath.mpf("inf"),
        mpmath.mpc(1, 1)]
"""Python values of the wrong kind or out of range for (nearly) every parameter of the public API."""

junk = st.sampled_from(JUNK)


def argv_with_bad(draw, argv: list[str], bad: dict) -> tuple[list[str], str]:
    """``argv`` with one option's value replaced by a value from ``bad[option]``; returns it with the option."""
    option = draw(st.sampled_from(sorted(bad)))
    value = draw(bad[option])
    out = list(argv)
    if option in out:
        out[out.index(option) + 1] = value
    else:
        out += [option, value]
    return out, option


@st.composite
def spike_argv(draw):
    """A valid ``derive spike`` command line (without ``--json`` and ``--digits``)."""
    delta, gamma, alpha, kappa, mu2 = (draw(rationals(low=low, high=4, max_denominator=100, open_low=open_)) for low, open_ in
                                       ((0, True), (0, False), (0, False), (0, True), (0, False)))
    argv = ["spike", "--delta", str(delta), "--gamma", str(gamma), "--alpha", str(alpha), "--kappa", str(kappa),
            "--mu2", str(mu2)]
    if draw(st.booleans()):
        argv += ["--centered"]
    else:
        argv += ["--sum-w", str(draw(rationals(low=-2, high=2, max_denominator=20)))]
    return argv


@st.composite
def bulk_argv(draw):
    """A valid ``derive bulk`` command line (without ``--json`` and ``--digits``)."""
    delta, gamma = draw(ratios), draw(ratios)
    kappa = draw(scales)
    xs = draw(st.lists(rationals(low=-1, high=40, max_denominator=100), min_size=1, max_size=4))
    return ["bulk", "--delta", str(delta), "--gamma", str(gamma), "--kappa", str(kappa),
            "--x", ",".join(str(x) for x in xs)]


def _options(draw, scheme: str) -> list[str]:
    """The options of the weight scheme named ``scheme``, each with a value drawn from its examples."""
    (cls,) = [s for s in schemes.CATALOGUE if s.name == scheme]
    return [text for o in cls.options for text in (f"--{o.name}", str(draw(st.sampled_from(o.examples))))]


@st.composite
def weights_argv(draw, T_max: int = 12):
    """A valid ``derive weights`` command line (without ``--json`` and ``--digits``)."""
    spec, T = draw(sign_specs(T=draw(st.integers(2, T_max))))
    scheme = draw(st.sampled_from(valid.SCHEMES))
    return ["weights", "--weights", scheme, "--T", str(T), "--signs", spec, *_options(draw, scheme)]


@st.composite
def mc_argv(draw):
    """A valid, tiny ``verify mc`` command line (``d <= 12``: milliseconds per trial), without ``--json`` and ``--digits``,
    its theory the Gaussian equivalent (milliseconds; the model's own limit costs seconds per parameter set, and the
    robustness of the input's handling does not depend on it: tests/test_cli_verify.py runs the default)."""
    d = draw(st.integers(3, 12))
    spec, T = draw(sign_specs(T=draw(st.integers(1, 5))))
    scheme = draw(st.sampled_from(valid.SCHEMES))
    argv = ["mc", "--d", str(d), "--V", str(2 * draw(st.integers(1, 12))), "--N", str(draw(st.integers(d, 24))),
            "--T", str(T), "--signs", spec, "--weights", scheme, "--mu2", str(draw(rationals(low=0, high=8, max_denominator=10))),
            "--seeds", str(draw(st.integers(1, 3))), "--seed0", str(draw(st.integers(0, 2**40))), "--k", "2",
            "--law", "gaussian-equivalent"]
    if T >= 2:  # a scheme's options from T = 2 on: the strict causal mask has no output at T = 1
        argv += _options(draw, scheme)
    if draw(st.booleans()):
        argv += ["--centered"]
    return argv


THRESHOLD_LEVELS = ("population", "sample")


@st.composite
def near_thresholds(draw, distance_exponents=(25, 40)):
    """Exact inputs of ``derive spike`` within ``10^-25`` (relative) of one of its thresholds: the signal
    outlier's at either level (``mu2`` near ``mu2_critical``) or the raw ``S``'s mean outlier (``W`` near the
    ``W`` at which ``W^2 delta`` reaches the threshold). Returns ``(kwargs, which)``."""
    from derive.gaussian.outliers import outliers_at

    ratio = rationals(low=sp.Rational(1, 20), high=4, max_denominator=60)
    delta, gamma = draw(ratio), draw(ratio)
    kappa = draw(rationals(low=sp.Rational(1, 20), high=2, max_denominator=60))
    alpha = draw(rationals(low=sp.Rational(1, 50), high=1, max_denominator=60)) * kappa  # 0 < alpha <= kappa: a threshold at mu2 > 0
    level = draw(st.sampled_from(THRESHOLD_LEVELS))
    which = draw(st.sampled_from(["signal", "mean"]))
    eps = draw(st.sampled_from([-1, 1])) * sp.Rational(1, 10) ** draw(st.integers(*distance_exponents))
    kwargs = {"delta": delta, "gamma": gamma, "alpha": alpha, "kappa": kappa, "mu2": sp.Integer(1),
              "sum_w": sp.Integer(1), "centered": which == "signal"}
    with mpmath.workdps(80):
        o = outliers_at(delta, gamma, alpha, kappa, 1)
        lev = o.level(level)
        if which == "signal":
            # alpha <= kappa puts the threshold above the strength alpha delta of mu2 = 0: mu2_critical > 0
            kwargs["mu2"] = sp.Rational(mpmath.nstr(lev.mu2_critical, 70)) * (1 + eps)
        else:
            kwargs["sum_w"] = sp.Rational(mpmath.nstr(mpmath.sqrt(lev.threshold / delta), 70)) * (1 + eps)
    return kwargs, f"{which} at {level} level, relative distance {eps}"
