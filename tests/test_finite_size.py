"""``derive spike --d``: the expectation at the user's dimension over sampled token matrices
(derive/vocabulary/draw/finite_size.py), against exact cases, the law of the largest token count at T = 1
(derive/vocabulary/limit/topbulk.py) and Monte Carlo of the model (verify/studies/at_dimension.py)."""
import json
import math

import mpmath
import numpy as np
import pytest
import sympy as sp

import derive
from derive.cli import main
from derive.errors import ParameterError
from derive.vocabulary.draw.spectrum import SpectralMeasures
from derive.resources import MAX_DRAWS
from derive.vocabulary.draw.finite_size import check_sizes, draw_outlier, finite_size, sample_draws
from derive.vocabulary.draw.sampling import sample_token_matrix, sizes
from derive.vocabulary.draw.tracywidom import tracy_widom_moments


def _measures(c, p, q, r, delta=0.5, V=1000):
    return SpectralMeasures(*(np.array(x, dtype=float) for x in (c, p, q, r)), delta, V)


# ----------------------------------------------------------------------------------------------
# exact cases


@pytest.mark.parametrize("delta", [0.25, 0.5, 2.0])
def test_identity_token_matrix_is_the_spiked_model(delta):
    # D = I: the bulk is Marchenko-Pastur's, the outlier the spiked rectangular model's (classical, independent)
    V = 4000
    o = draw_outlier(_measures([delta], [1], [1], [0], delta, V), centered=True)
    assert o.top == pytest.approx((1 + math.sqrt(delta)) ** 2, rel=1e-12)
    assert o.mu2_critical == pytest.approx(math.sqrt(delta), rel=1e-12)
    # Johnstone (2001): the largest eigenvalue of V samples in dimension d = delta V
    assert o.scale == pytest.approx((1 + math.sqrt(delta)) * (1 + 1 / math.sqrt(delta)) ** (1 / 3) * V ** (-2 / 3),
                                    rel=1e-9)
    mu2 = 2 * math.sqrt(delta) + 0.5
    outlier, ell, overlap = o.at(mu2)
    assert outlier and ell == pytest.approx((1 + mu2) * (delta + mu2) / mu2, rel=1e-12)
    assert overlap == pytest.approx(1 - delta * (1 + mu2) / (mu2 * (mu2 + delta)), rel=1e-10)
    assert o.at(0.9 * math.sqrt(delta)) == (False, o.expected_top, 0.0)


def _one_atom_x(t, c0, p0, delta):
    return t * (1 - p0 * c0 / (delta * (c0 - t)))


def test_a_token_spike_is_the_top_of_the_bulk_and_sets_the_threshold():
    # a bulk atom at 1/2 and one token used many times (mass 1/V, weight 1/V along s) at 4
    V, delta = 1000, 0.5
    p0 = 1 - 1 / V
    o = draw_outlier(_measures([0.5, 4.0], [p0, 1 / V], [p0, 1 / V], [0, 0], delta, V), centered=True)
    assert not o.edge and o.top == pytest.approx(_one_atom_x(4.0, 0.5, p0, delta), rel=1e-12)
    critical = -delta * (0.5 - 4.0) / (p0 * 0.5)  # -1/S1(4) with S1 of the bulk atom alone
    assert o.mu2_critical == pytest.approx(critical, rel=1e-12) and o.expected_top == o.top
    above, below = o.at(1.5 * critical), o.at(0.5 * critical)
    assert above[0] and above[1] > o.top and above[2] > 0.2
    # below: the top eigenvector is the token's, pushed up by the signal below it (its root sits q c / (delta (1/mu2 +
    # S1(4))) = 0.028 above its pole) and with the O(mu2/V) overlap of its weight along s
    # S1 near the pole is q c / (delta (t - c)^2) = 10 there, so the overlap x'/(mu2 t S1') is about 1/(7 * 10)
    shift = (1 / V) * 4.0 / (delta * (1 / (0.5 * critical) - 1 / critical))
    assert not below[0] and 0 < below[1] - o.top < 2 * shift and below[2] < 0.02


def test_a_spike_aligned_with_the_signs_carries_the_signal():
    # the same atom with half the weight of s: D's own outlier along s, above the bulk at every mu2 > 0
    V, delta = 1000, 0.5
    o = draw_outlier(_measures([0.5, 4.0], [1 - 1 / V, 1 / V], [0.5, 0.5], [0, 0], delta, V), centered=True)
    t_edge = 0.5 + math.sqrt(0.5 * (1 - 1 / V))  # C(t) = p0 c0^2 / (delta (c0 - t)^2) = 1 above the bulk atom
    assert o.edge and o.t_edge == pytest.approx(t_edge, rel=1e-9) and o.mu2_critical == 0.0
    outlier, ell, overlap = o.at(0.2)
    assert outlier and ell > _one_atom_x(4.0, 0.5, 1 - 1 / V, delta) and 0 < overlap < 0.5


def test_the_raw_mean_atom_is_neither_bulk_nor_signal():
    V, delta = 1000, 0.5
    m = _measures([0.5, 4.0], [1 - 1 / V, 1 / V], [1 - 1 / V, 1 / V], [0.0, 1.0], delta, V)
    raw, centered = draw_outlier(m, centered=False), draw_outlier(m, centered=True)
    assert raw.edge and raw.t_last == raw.t_edge and raw.top < centered.top
    assert raw.mu2_critical == pytest.approx(-1 / float(raw.bulk.S1(raw.t_edge)), rel=1e-12)


def test_tracy_widom_moments_are_the_known_ones():
    # Bornemann (2010), table 1 (another method: the Painleve II representation)
    mean, sd = tracy_widom_moments()
    assert mean == pytest.approx(-1.2065335745820, abs=1e-10) and sd ** 2 == pytest.approx(1.6077810345810, abs=1e-10)


# ----------------------------------------------------------------------------------------------
# sampling, seeds, sizes


def test_token_matrices_follow_the_family_and_the_classes():
    from derive.model.families import parse_signs

    rng = np.random.default_rng(3)
    A = sample_token_matrix(rng, parse_signs("prefix:3"), [0.25] * 4, 40, 500)
    s = np.repeat([1.0, -1.0], 20)
    # each sequence's first three tokens share a class: |A^T s| >= 3/4 - 1/4
    assert A.shape == (40, 500) and np.all(np.abs(A.transpose_times(s)[:, 0]) >= 0.5 - 1e-12)
    assert np.allclose(A.transpose_times(np.ones(40))[:, 0], 1.0)


def test_same_seed_same_numbers_on_any_number_of_threads():
    m = derive.Model(d=120, delta="1/2", gamma="1", T=3, weights="mean", signs="markov:1/2", mu2=3)
    a, b = finite_size(m, draws=6, seed=5), finite_size(m, draws=6, seed=5, threads=1)
    assert a == b and a.seed == 5 and (a.V, a.N) == (240, 120)
    assert finite_size(m, draws=6, seed=6).rows != a.rows


def test_draws_past_the_carried_work_are_the_ones_numpys_eigh_gives(monkeypatch):
    # 8 draws at min(V, N) = 600 take the reduction without eigenvectors (the path of --d at d = 1000), on two threads;
    # the same draws by NumPy's eigh (an independent method) agree to rounding
    import derive.vocabulary.draw.finite_size as fs

    m = derive.Model(d=600, delta=1, gamma=1, T=2, weights="causal", signs="iid", mu2=5, centered=True)
    assert 8 * 600**3 > fs.CARRIED_WORK
    carried = sample_draws(m, draws=8, seed=3)
    monkeypatch.setattr(fs, "CARRIED_WORK", math.inf)
    dense = sample_draws(m, draws=8, seed=3)
    for a, b in zip(carried.outliers, dense.outliers):
        assert (a.edge, a.bulk.c.size, a.full.c.size) == (b.edge, b.bulk.c.size, b.full.c.size)
        assert np.allclose([a.top, a.t_last, a.mu2_critical, *a.at(5.0)[1:]],
                           [b.top, b.t_last, b.mu2_critical, *b.at(5.0)[1:]], rtol=1e-9, atol=0)


def test_sizes_are_the_rule_of_the_studies():
    from verify.montecarlo.draw import rung

    for d, delta, gamma in [(1000, "1/2", "4"), (333, "3/7", "5/3"), (5, "2", "2")]:
        assert sizes(d, sp.Rational(delta), sp.Rational(gamma)) == rung(d, delta, gamma)


@pytest.mark.parametrize("change,parameter", [
    (dict(draws=0), "draws"), (dict(draws=MAX_DRAWS + 1), "draws"), (dict(seed=-1), "seed"), (dict(threads=0), "threads"),
    (dict(d=40000), "d"), (dict(d=8000, draws=600), "draws"),
])
def test_sizes_the_machine_cannot_meet_are_refused(change, parameter):
    m = derive.Model(d=change.pop("d", 100), delta="1/2", gamma="4", T=16, weights="causal", mask="strict", signs="iid",
                     mu2=4)
    with pytest.raises(ParameterError, match=f"^{parameter}:"):
        finite_size(m, **change)


def test_one_nonzero_weight_is_cheap_at_any_size():
    check_sizes(10**6, 2 * 10**6, 10**6, 1, 32, True)
    with pytest.raises(ParameterError, match="^d:"):
        check_sizes(10**8, 2 * 10**8, 10**8, 2, 32, True)


def test_the_expectation_needs_d_and_the_token_law():
    with pytest.raises(ParameterError, match="^d:"):
        finite_size(derive.Model(delta="1/2", gamma=1, T=2, weights="mean", signs="iid", mu2=3))
    with pytest.raises(ParameterError, match="^d:"):
        derive.finite_size(derive.Model(d=100, delta="1/2", gamma=1, alpha=1, kappa=1, mu2=3))


def test_spike_with_d_carries_it():
    m = derive.Model(d=100, delta="1/2", gamma=1, T=1, weights="mean", signs="iid", mu2=3, centered=True)
    with mpmath.workdps(15):
        o = derive.spike(m, draws=4, seed=2)
        assert derive.spike(m.replace(d=None, delta=m.delta, gamma=m.gamma)).finite_size is None
    assert o.finite_size == derive.finite_size(m, draws=4, seed=2) and o.law == "finite-vocabulary"
    # computed when asked for: a Monte Carlo trial's model (its d, V, N) pays nothing, and a d out of reach says so
    # then (here the limit the token spikes need, refused before any work at 4000 nonzero weights)
    big = derive.spike(derive.Model(d=40000, V=80000, N=10000, T=4000, weights="mean", signs="iid", mu2=4),
                       law="gaussian-equivalent")
    with pytest.raises(ParameterError, match="^T:"):
        big.finite_size


def _run(capsys, *args):
    status = main(["spike", *args, "--json"])
    out, err = capsys.readouterr()
    return status, (json.loads(out) if status == 0 else None), err


MODEL = ("--delta", "1/2", "--gamma", "1", "--mu2", "3", "--T", "1", "--weights", "mean", "--signs", "iid",
         "--centered", "--digits", "8")
"""A model whose limit is exact and quick (one weight): the command's own part is what is tested."""


def test_command_line_gives_the_expectation_at_d(capsys):
    status, doc, err = _run(capsys, *MODEL, "--d", "200", "--draws", "8", "--seed", "3")
    assert status == 0 and err == ""
    f = doc["finite_size"]
    assert (f["d"], f["V"], f["N"], f["draws"], f["seed"], f["method"]) == (200, 400, 200, 8, 3, "token counts")
    # INTERFACE.md's fields (V, N, seed and warning beside them)
    assert set(f) == {"d", "method", "draws", "outlier_probability", "outlier_probability_error", "eigenvalue",
                      "overlap", "signal_overlap", "top_of_bulk", "mu2_critical", "V", "N", "seed", "warning"}
    assert all(set(f[k]) == {"mean", "sd", "error"} for k in ("eigenvalue", "overlap", "mu2_critical"))
    assert all(set(f[k]) == {"mean", "error"} for k in ("signal_overlap", "top_of_bulk"))
    r = derive.finite_size(derive.Model(d=200, delta="1/2", gamma=1, T=1, weights="mean", signs="iid", mu2=3,
                                        centered=True), draws=8, seed=3)
    assert abs(float(f["mu2_critical"]["mean"]) - r.mu2_critical.mean) <= r.mu2_critical.error
    assert _run(capsys, *MODEL, "--d", "200", "--draws", "8", "--seed", "3")[1]["finite_size"] == f


@pytest.mark.parametrize("args,parameter", [
    (("--draws", "4"), "draws"), (("--seed", "1"), "seed"), (("--d", "100", "--draws", "0"), "draws"),
    (("--d", "100", "--seed", "-1"), "seed"),
])
def test_command_line_refusals(capsys, args, parameter):
    status, _, err = _run(capsys, *MODEL, *args)
    assert status == 2 and err.startswith(f"derive: error: {parameter}:") and err.count("\n") == 1


def test_command_line_needs_the_token_law_for_d(capsys):
    status, _, err = _run(capsys, "--delta", "1/2", "--gamma", "4", "--mu2", "4", "--alpha", "1", "--kappa", "1",
                          "--d", "100")
    assert status == 2 and err.startswith("derive: error: d:")


# ----------------------------------------------------------------------------------------------
# T = 1: the law of the largest token count (derive/vocabulary/limit/topbulk.py), derived without sampling


def test_at_one_weight_the_signal_is_on_top_as_often_as_no_token_is_used_k_star_times():
    from derive.vocabulary.limit.populations import PoissonPopulation
    from derive.vocabulary.limit.signal import signal_outlier
    from derive.vocabulary.limit.silverstein import GeneralizedMP
    from derive.vocabulary.limit.topbulk import signal_on_top_probability, top_of_bulk

    d, draws = 1000, 400
    law = GeneralizedMP(sp.Rational(1, 2), PoissonPopulation(sp.Rational(1, 2)))
    with mpmath.workdps(15):
        ell = signal_outlier(law, 3).eigenvalue  # 6.268, between the eigenvalues of counts 4 (5.712) and 5 (6.516)
        expected, top = float(signal_on_top_probability(law, ell, d)), top_of_bulk(law, d)["mean_eigenvalue"]
    r = finite_size(derive.Model(d=d, delta="1/2", gamma=1, T=1, weights="mean", signs="iid", mu2=3, centered=True),
                    draws=draws, seed=1)
    # binomial 99% (the per-draw outlier moves by O(d^-1/2) = 0.03, far from both counts' eigenvalues)
    assert abs(r.outlier_probability - expected) <= 2.58 * math.sqrt(expected * (1 - expected) / draws)
    # the top is at or above the eigenvalue of the most used token (its law Poissonized): above it where several
    # tokens share the largest count, whose cluster spreads (by 0.3 at d = 1000; Monte Carlo:
    # notes/finite_vocabulary.md), never below it
    assert r.top_of_bulk.mean >= top - 2.58 * r.top_of_bulk.se


# ----------------------------------------------------------------------------------------------
# Monte Carlo of the model (independent trials; verify/studies/at_dimension.py)


def _close(mc, derived, bias: float, z: float = 2.58) -> bool:
    """Monte Carlo ``(mean, se)`` against the derived ``(mean, se)``: within ``z`` standard errors of their difference
    (99%) plus a bound on the derived mean's known bias."""
    return abs(mc[0] - derived[0]) <= z * math.hypot(mc[1], derived[1]) + bias


def test_the_issue_point_against_monte_carlo():
    # T = 16 strict causal, iid signs, delta = 1/2, gamma = 4 (N T / V = 2), d = 1000, centered: 64 trials on the mu2
    # axis against 128 independently sampled token matrices, and against each trial's own token matrix. The known
    # biases: each draw's outlier is exact up to a mean O(1/d) (notes/finite_vocabulary.md measured b/d with |b| = 4,
    # 1.5 times the eigenvalue, and 2 for the overlap), and the top of the bulk, with its Tracy-Widom shift (-0.020
    # here), has a next order O(1/d). This resolves 0.035 on the eigenvalue and 0.017 on the overlap (independent draws), and 0.011
    # on the top of the bulk (same draws; without the Tracy-Widom shift Monte Carlo is 0.017 below, 4 standard errors).
    from verify.studies.at_dimension import CASES, compare

    d = 1000
    c = compare(dict(CASES["issue"], mu2s=(8.0,)), d, seeds=64, draws=128, seed0=1, seed=1)
    row = c["rows"][0]
    assert row["probability"] == (1.0, 0.0) and row["mc_above_tau"][0] == 1.0
    assert _close(c["mc_minus_own_top0"], (0.0, 0.0), 1.3 / d), c["mc_minus_own_top0"]
    assert _close(c["mc_top0"], c["top0"], 1.3 / d), (c["mc_top0"], c["top0"])
    assert _close(row["mc_top"], row["top"], 1.5 * row["top"][0] / d), (row["mc_top"], row["top"])
    assert _close(row["mc_overlap"], row["overlap"], 2 / d), (row["mc_overlap"], row["overlap"])


@pytest.mark.slow
@pytest.mark.parametrize("name,checked", [("prefix", (1.5, 2.0, 3.0)), ("T1", (3.0, 3.5, 4.0, 6.0))])
def test_other_points_against_monte_carlo(name, checked):
    # T = 8 mean pooling on prefix:3 (N T / V = 2) and T = 1, d = 1000, as notes/finite_vocabulary.md: the top of the
    # bulk on the same draws, and where the signal is well above the threshold's critical window the top eigenpair on
    # independent draws and the share of draws whose top eigenvector has squared overlap above 0.05. At T = 1, mu2 = 3
    # the signal sits 0.25 below the eigenvalue of a token used 5 times in a third of the draws: the top eigenvector
    # there mixes the two (P(overlap > 0.05) = 0.96 derived; 0.67 without the mixing, which this detects).
    from verify.studies.at_dimension import CASES, compare

    d = 1000
    c = compare(CASES[name], d, seeds=64, draws=256, seed0=1, seed=0)
    assert _close(c["mc_minus_own_top0"], (0.0, 0.0), 1.3 / d), c["mc_minus_own_top0"]
    for row in c["rows"]:
        if row["mu2"] in checked:
            assert _close(row["mc_top"], row["top"], 1.5 * row["top"][0] / d), row
            assert _close(row["mc_overlap"], row["overlap"], 2 / d), row
            # two proportions of 64 and 256 draws: their binomial spread at the pooled share (at least that of 1/64)
            mc, p = row["mc_above_tau"][0], row["above_tau"][0]
            pooled = (64 * mc + 256 * p) / 320
            assert abs(mc - p) <= 2.58 * math.sqrt(max(pooled * (1 - pooled), 1 / 64) * (1 / 64 + 1 / 256)), row


def test_the_raw_s_against_monte_carlo():
    # The raw S: the vocabulary mean's atom of D is left aside (its outlier is not the signal's). Mean pooling with
    # weights summing to W = 2 on prefix:3, T = 8, delta = 1/2, gamma = 1/4, mu2 = 5, d = 400: the signal's outlier is
    # on top (1.37) and the mean's second (0.68 in Monte Carlo), so Monte Carlo's top eigenpair is the signal's. 64
    # independent trials against 64 sampled token matrices, within 2.58 standard errors of the difference plus the
    # conditional prediction's measured bias (1.5 l/d and 2/d, as above). It resolves about 0.024 (1.8%) on the
    # eigenvalue and 0.008 on the overlap. Here the signal's outlier does not depend on how the mean atom is classed
    # (it lies below the signal and s is nearly orthogonal to it: keeping it as a token spike passes this test, and
    # test_the_raw_mean_atom_is_neither_bulk_nor_signal catches that); what this holds is the raw path as a whole.
    from verify.montecarlo.trials import run_trials
    from verify.stats import mean_se

    d = 400
    m = derive.Model(d=d, delta="1/2", gamma="1/4", T=8, weights=["1/4"] * 8, signs="prefix:3", mu2=5, centered=False)
    r = finite_size(m, draws=64, seed=0)
    V, N = sizes(d, m.delta, m.gamma)
    mc = run_trials(m.replace(V=V, N=N), k=3, seeds=64, seed0=1)
    top, overlap = mc.top_eigenvalues[:, 0], mc.overlaps[:, 0]
    assert r.outlier_probability == 1.0 and np.all(mc.top_eigenvalues[:, 1] < top)
    assert _close(mean_se(top), (r.eigenvalue.mean, r.eigenvalue.se), 1.5 * r.eigenvalue.mean / d), (top.mean(),
                                                                                                   r.eigenvalue)
    assert _close(mean_se(overlap), (r.overlap.mean, r.overlap.se), 2 / d), (overlap.mean(), r.overlap)
