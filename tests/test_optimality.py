from fractions import Fraction

import mpmath
import numpy as np
import pytest
import sympy as sp
from hypothesis import given, settings
from hypothesis import strategies as st

from derive.model.attention import alpha, kappa, mean_weights, optimal_weights
from derive.model.spec import parse_signs
from derive.symbols import L as L_, T as T_
from derive.model.families import CATALOGUE
from derive.model.optimality import (c, compare_causal_vs_mean, lam, lam_max, mean_block_quotient,
                                     optimal_block_quotient, rayleigh_gap, rayleigh_quotient, summarize,
                                     top_eigenvalue, winning_block_lengths)
from tests.strategies import families, weights

BLOCK_KINDS = [cls.kind for cls in CATALOGUE if cls.block_form() is not None]
"""The families whose ``R`` has a block form: the closed forms of C5 hold for them."""


def _parallel(w, v):
    return sp.Matrix([w]).rank() == 1 and sp.Matrix([w, v]).rank() == 1


@settings(max_examples=40)
@given(st.integers(2, 7).flatmap(lambda n: st.tuples(st.integers(1, n), st.just(n))).flatmap(
    lambda LT: st.tuples(st.just(LT), st.sampled_from(BLOCK_KINDS), weights(T=LT[1]))))
def test_no_weights_beat_the_block_top_eigenvector_exactly(case):
    (L, n), kind, w = case
    fam = parse_signs(f"{kind}:{L}")
    R = fam.R(n)
    v, _ = optimal_weights(fam, n)
    q = rayleigh_quotient(w, R)
    assert q <= fam.top_eigenvalue(n) == L
    if L >= 2:
        assert (q == L) == _parallel(w, v)


@settings(max_examples=20)
@given(st.integers(2, 6).flatmap(lambda n: st.tuples(families(T=n), weights(T=n))))
def test_no_weights_beat_the_numeric_top_eigenvector(case):
    (fam, n), w = case
    R = fam.R(n)
    lam = top_eigenvalue(R, 30)
    v, _ = optimal_weights(fam, n, 30)
    with mpmath.workdps(40):
        assert abs(mpmath.mpf(sp.N(rayleigh_quotient(v, R), 40)) - lam) < mpmath.mpf(10) ** -28
        assert mpmath.mpf(sp.N(rayleigh_quotient(w, R), 40)) <= lam + mpmath.mpf(10) ** -28


@settings(max_examples=15)
@given(st.integers(2, 5).flatmap(lambda n: st.tuples(families(T=n), weights(T=n))))
def test_rayleigh_gap_is_the_distance_of_alpha_over_kappa_from_the_top_eigenvalue(case):
    # The identity evaluated on the spectral data of a real R (numpy's eigh) and real weights: its left side must
    # be lambda_max(R) minus alpha/kappa as derive.model.optimality computes it, its right side a non-negative sum
    (fam, n), w = case
    R = fam.R(n)
    lam_, Q = np.linalg.eigh(np.array(R, dtype=float))
    c_ = Q.T @ np.array([float(x) for x in w])
    values = {T_: n, lam_max: float(lam_.max())}
    values.update({lam[i + 1]: float(lam_[i]) for i in range(n)})
    values.update({c[i + 1]: float(c_[i]) for i in range(n)})
    gap = rayleigh_gap()
    lhs, rhs = (float(side.subs(T_, n).doit().subs(values)) for side in (gap.lhs, gap.rhs))
    assert lhs == pytest.approx(float(top_eigenvalue(R, 20)) - float(rayleigh_quotient(w, R)), abs=1e-9)
    assert rhs == pytest.approx(lhs, abs=1e-9) and rhs >= -1e-12


def test_block_closed_forms_match_the_model_R():
    for n in range(1, 7):
        for L in range(1, n + 1):
            for kind in BLOCK_KINDS:
                R = parse_signs(f"{kind}:{L}").R(n)
                w = mean_weights(n)
                assert alpha(w, R) / kappa(w) == mean_block_quotient(kind).subs({T_: n, L_: L})
                v, _ = optimal_weights(parse_signs(f"{kind}:{L}"), n)
                assert alpha(v, R) / kappa(v) == optimal_block_quotient(kind).subs(L_, L) or L == 1


def test_c7_small_cases_by_hand():
    rows = {(r["family"], r["T"], r["mask"]): r for r in compare_causal_vs_mean("prefix", 3)}
    # inclusive T=3: w = (11, 5, 2)/18, alpha = (16^2 + 2^2)/18^2, kappa = 150/18^2 -> 26/15 > 5/3
    assert rows[("prefix:2", 3, "inclusive")]["causal"] == "26/15"
    assert rows[("prefix:2", 3, "inclusive")]["winner"] == "causal"


def test_c7_table_structure_up_to_32():
    prefix = compare_causal_vs_mean("prefix", 32)
    suffix = compare_causal_vs_mean("suffix", 32)
    for row in prefix + suffix:
        L = int(row["family"].split(":")[1])
        if L == 1:
            assert row["winner"] == "tie"  # R = I: every w has alpha/kappa = 1
        if L == row["T"] and L > 1:
            assert row["winner"] == "mean"  # R = J: the mean is the top eigenvector
    assert all(s == [] for s in (summarize(suffix)[m]["causal"] for m in ("inclusive", "strict")))
    wins = winning_block_lengths(prefix)
    assert wins["inclusive"][32] == [2, 21] and wins["strict"][32] == [2, 21]
    assert wins["strict"][3] is None and wins["inclusive"][3] == [2, 2]


def test_c7_markov_sign_of_r_decides():
    rows = compare_causal_vs_mean("markov", 12)
    for row in rows:
        r = Fraction(row["family"].split(":")[1])
        assert row["winner"] == ("tie" if r == 0 else "causal" if r < 0 else "mean")


@pytest.mark.parametrize("kind", [cls.kind for cls in CATALOGUE if not cls.tabulated(2)])
def test_c7_refuses_the_families_without_a_table(kind):
    with pytest.raises(ValueError):
        compare_causal_vs_mean(kind)


@pytest.mark.slow
def test_c7_prefix_wins_up_to_64():
    wins = winning_block_lengths(compare_causal_vs_mean("prefix", 64))
    assert wins["inclusive"][64] == [2, 42] and wins["strict"][64] == [2, 42]
