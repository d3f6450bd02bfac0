"""The softmax scheme: causal softmax attention at scores tau <x_t, x_s>/sqrt(d) (derive/model/softmax.py, the
Gaussian-equivalent law with per-sequence weights in derive/gaussian/random_weights.py, notes/softmax.md)."""
from __future__ import annotations

import json
from fractions import Fraction

import mpmath
import numpy as np
import pytest
import sympy as sp

import derive
from derive.cli import main as derive_main
from derive.model.families import parse_signs
from derive.model.softmax import limit_weights, row_moments, softmax_law
from verify.cli import main as verify_main


def _harmonic(T):
    w = [sp.harmonic(T - 1) - sp.harmonic(s - 1) for s in range(1, T + 1)]
    return tuple(x / sum(w) for x in w)


@pytest.mark.parametrize("tau", ["0", "1/2", "1", "3"])
def test_the_strict_masks_mean_weights_are_the_harmonic_weights_exactly(tau):
    for T in range(2, 21):
        p = derive.weights(derive.Model(T=T, weights="softmax", tau=tau, mask="strict"))
        assert p.weights == _harmonic(T) and all(x.is_Rational for x in p.weights)
        assert (p.law.random is True) == (tau != "0" and T >= 3)


def test_exact_where_the_weights_do_not_vary():
    # tau = 0: uniform attention at every d (the causal limit at tau = 0, both masks); T = 2 strict: w = (1, 0)
    for mask in ("strict", "inclusive"):
        p = derive.weights(derive.Model(T=6, weights="softmax", tau=0, mask=mask, signs="prefix:3"))
        q = derive.weights(derive.Model(T=6, weights="causal", tau=0, mask=mask, signs="prefix:3"))
        assert (p.weights, p.alpha, p.kappa) == (q.weights, q.alpha, q.kappa) and p.kappa.is_Rational
    p = derive.weights(derive.Model(T=2, weights="softmax", tau=5, mask="strict", signs="iid"))
    assert p.weights == (1, 0) and p.kappa == 1 and p.errors is None
    # inclusive, tau > 0: mean pooling in the limit
    p = derive.weights(derive.Model(T=5, weights="softmax", tau="1/3", mask="inclusive", signs="iid"))
    assert p.weights == (sp.Rational(1, 5),) * 5 and p.kappa == sp.Rational(1, 5)


@pytest.mark.parametrize("tau", [1.0, 2.5, 8.0])
def test_alpha_kappa_and_the_fourth_moment_against_draws_of_the_limit_law(tau):
    """200 000 draws of the limit law (i.i.d. N(0, tau^2) scores): each derived moment within 4.5 standard errors
    (a relative error of 0.5% in kappa, 1% in alpha or E||w||^4 would be seen)."""
    T, family = 8, parse_signs("prefix:3")
    law = softmax_law(T, Fraction(tau), "strict")
    alpha, alpha_error = law.alpha(family)
    assert law.error < 1e-10 and alpha_error < 1e-10
    W = limit_weights(np.random.default_rng(7), 200_000, T, tau, "strict")
    R = np.array(family.R(T), dtype=float)
    b = np.einsum("ns,ns->n", W, W)
    for values, derived in ((b, law.kappa), (b * b, law.kappa_moments[1]), (np.einsum("ns,st,nt->n", W, R, W), alpha)):
        assert abs(values.mean() - float(derived)) < 4.5 * values.std() / np.sqrt(len(values))
    assert np.abs(W.mean(axis=0) - np.array([float(x) for x in law.mean])).max() < 4.5 * W.std(axis=0).max() / 447


def test_row_moments_converge_and_are_exact_where_they_must():
    r = row_moments(Fraction(2), 5)
    assert r.m2[0] == r.m4[0] == 1 and r.m22[0] == 0
    for k in range(2, 6):
        assert 1 / k ** 2 < r.m2[k - 1] < 1 / k  # between uniform and one-hot attention
        assert r.m2[k - 1] ** 2 <= r.m4[k - 1] and r.m22[k - 1] > 0
    assert r.error < 1e-11
    assert row_moments(Fraction(0), 3).exact


@pytest.mark.parametrize("d", [1000, 4000])
def test_alpha_and_kappa_against_real_attention_at_d(d):
    """Real softmax attention at scores 1/sqrt(d) (the exact Gram law of 20 000 sequences of distinct tokens, with the
    signal mu2 = 3/2 in the scores) against the derived alpha and kappa: within a 95% interval plus the measured
    O(d^-1/2) allowance 0.15/sqrt(d) (verify/studies/softmax.py), and able to detect a 2% error with power 0.8."""
    from verify.studies.softmax import weight_moments

    r = weight_moments(d, 8, 1, "strict", "prefix:3", n=20_000, seed=d)
    for name in ("alpha", "kappa"):
        assert r[name]["within"], r[name]
        assert r[name]["min_detectable"] < 0.02, r[name]


def test_the_gram_law_is_the_embeddings_law():
    """At d = 64 (where the finite-d law is far from the limit) the weights from T x d Gaussian tokens and from the
    exact Gram law agree: mean weights, mean ||w||^2 and mean (w^T xi)^2 within 4 standard errors of their difference."""
    from verify.studies.softmax import _sequences

    family = parse_signs("prefix:2")
    out = [_sequences(np.random.default_rng(seed), family, 20_000, 5, 64, 2.0, 2.0, "strict", method)
           for seed, method in ((1, "gram"), (2, "embeddings"))]
    for f in (lambda xi, w: w, lambda xi, w: np.sum(w * w, axis=1), lambda xi, w: np.sum(w * xi, axis=1) ** 2):
        a, b = (np.asarray(f(*o), dtype=float) for o in out)
        se = np.sqrt(a.var(axis=0) / len(a) + b.var(axis=0) / len(b))
        assert np.all(np.abs(a.mean(axis=0) - b.mean(axis=0)) <= 4 * se)


def test_the_inclusive_mask_tends_to_mean_pooling_at_its_rate():
    from derive.model.softmax import inclusive_rate
    from verify.montecarlo.attention import attention_weights

    d, T = 400, 6
    X = np.random.default_rng(3).standard_normal((200, T, d))
    w = attention_weights(X, 1.0, "inclusive", "1/sqrt(d)")
    # the first-order rate (t - 1) e^{-tau sqrt(d) + 3 tau^2/2} per row, with a margin for the lognormal spread
    assert np.abs(w - 1 / T).max() < 100 * T * inclusive_rate(1, d)


def test_the_random_weight_law_is_the_fixed_weight_law_for_fixed_weights():
    from derive.gaussian.outliers import outliers_at
    from derive.gaussian.random_weights import WeightSample, random_weight_law

    for delta, gamma, alpha, kappa, mu2 in ((0.5, 0.25, 0.6, 0.25, 1.5), (2.0, 1.5, 0.3, 0.2, 3.0)):
        law = random_weight_law(delta, gamma, WeightSample(np.full(16, alpha), np.full(16, kappa)))
        s = law.signal(mu2)
        with mpmath.workdps(20):
            o = outliers_at(delta, gamma, alpha, kappa, mu2)
        assert abs(law.right_edge[0] - float(o.right_edge)) < 1e-12
        assert abs(s.eigenvalue - float(o.sample.eigenvalue)) < 1e-10
        assert abs(s.overlap - float(o.sample.overlap)) < 1e-7
        assert abs(s.mu2_critical - float(o.sample.mu2_critical)) < 1e-9
        xs = [0.3 * float(o.right_edge), 0.8 * float(o.right_edge)]
        from derive.gaussian import bulk

        with mpmath.workdps(15):
            fixed = bulk.law(mpmath.mpf(delta), mpmath.mpf(gamma), mpmath.mpf(kappa))
            assert np.allclose(law.density(xs)[0], [float(fixed.density(mpmath.mpf(x))) for x in xs], rtol=1e-7)


def test_the_heteroscedastic_outlier_against_gaussian_vectors():
    """Pooled vectors a_n mu + sqrt(b_n) Sigma^{1/2} g_n with (a^2, b) = (0.1, 2) or (1, 0.2), each with probability
    1/2 (a law chosen to make the per-sequence scale matter): 16 draws at d = 300 against the derived outlier. The
    fixed-weight formula at the mean scalars is 2.6% higher in eigenvalue: the interval (about 1%) tells them apart."""
    from derive.gaussian.random_weights import WeightSample, random_weight_law

    d, mu2 = 300, 9.0
    V = N = 2 * d
    law = random_weight_law(0.5, 0.5, WeightSample(np.tile([0.1, 1.0], 8), np.tile([2.0, 0.2], 8)))
    exists, predicted, overlap, _ = law.law.spike(mu2, law.law.a2, 1.0)
    fixed = random_weight_law(0.5, 0.5, WeightSample(np.full(16, 0.55), np.full(16, 1.1)))
    wrong = fixed.law.spike(mu2, fixed.law.a2, 1.0)[1]
    rng = np.random.default_rng(11)
    tops = []
    for _ in range(16):
        Z = rng.standard_normal((d, V)) / np.sqrt(V)
        big = rng.random(N) < 0.5
        b, a = np.where(big, 2.0, 0.2), np.where(big, np.sqrt(0.1), 1.0) * rng.choice([-1.0, 1.0], N)
        C = Z @ (rng.standard_normal((V, N)) * np.sqrt(b))
        C[0] += np.sqrt(mu2) * a
        tops.append(np.linalg.eigvalsh(C @ C.T / N)[-1])
    mean, half = np.mean(tops), 2.13 * np.std(tops, ddof=1) / 4
    assert exists and abs(mean - predicted) < half + 0.01 * predicted  # 1%: the outlier's O(1/d) bias at d = 300
    assert abs(mean - wrong) > half


def test_derive_spike_and_bulk_give_the_random_weight_law_and_say_what_is_not_derived(capsys):
    base = ["--delta", "1/2", "--gamma", "1/4", "--T", "6", "--weights", "softmax", "--tau", "1", "--mask", "strict",
            "--signs", "prefix:2"]
    assert derive_main(["spike", *base, "--mu2", "3/2", "--centered", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["law"] == "gaussian-equivalent" and doc["weights_law"].startswith("random")
    assert doc["own_law"].startswith("not derived") and float(doc["sample"]["eigenvalue_error"]) < 1e-3
    assert doc["gaussian_equivalent"]["law"].startswith("gaussian-equivalent at the mean scalars")
    assert derive_main(["bulk", *base, "--x", "0.4", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert float(doc["density"][0]) > 0 and doc["gaussian_equivalent"]["law"].startswith("gaussian-equivalent at")
    assert derive_main(["weights", "--weights", "softmax", "--T", "6", "--tau", "1", "--mask", "strict", "--signs",
                        "prefix:2", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["random_weights"] is True and len(doc["kappa_moments"]) == 2 and doc["kappa_moments"][0] == doc["kappa"]


@pytest.mark.parametrize("argv, parameter", [
    (["weights", "--weights", "softmax", "--T", "4", "--tau", "11"], "tau"),
    (["weights", "--weights", "softmax", "--T", "4", "--tau", "-1"], "tau"),
    (["weights", "--weights", "softmax", "--T", "1", "--mask", "strict"], "T"),
    (["weights", "--weights", "softmax", "--T", "200"], "T"),
    (["weights", "--weights", "softmax", "--T", "4", "--mask", "both"], "mask"),
    (["weights", "--weights", "softmax", "--T", "4", "--tau", "nan"], "tau"),
    (["spike", "--delta", "1/2", "--gamma", "1/4", "--T", "4", "--weights", "softmax", "--tau", "1", "--mask", "strict",
      "--signs", "iid", "--mu2", "1", "--d", "100"], "d"),
    (["bulk", "--delta", "1/2", "--gamma", "1/4", "--T", "4", "--weights", "softmax", "--tau", "1", "--mask", "strict",
      "--signs", "iid", "--law", "finite-vocabulary", "--x", "1"], "law"),
])
def test_bad_input_is_refused_in_one_line_naming_the_parameter(argv, parameter, capsys):
    assert derive_main([*argv, "--json"]) == 2
    captured = capsys.readouterr()
    assert captured.out == "" and captured.err.count("\n") == 1 and f"error: {parameter}:" in captured.err


def test_verify_mc_runs_real_attention_and_shows_the_law(capsys):
    """A softmax trial pools each sequence with its own attention on the drawn table: not the mean weights."""
    import verify

    m = derive.Model(d=60, V=120, N=240, T=4, weights="softmax", tau=2, mask="strict", signs="iid", mu2=3)
    real = verify.run_trials(m, seeds=2, k=2)
    mean = verify.run_trials(m, seeds=2, k=2, weights=[float(x) for x in derive.weights(m).weights])
    assert not np.allclose(real.top_eigenvalues, mean.top_eigenvalues)
    assert verify_main(["mc", "--d", "60", "--V", "120", "--N", "240", "--T", "4", "--signs", "iid", "--weights",
                        "softmax", "--tau", "2", "--mask", "strict", "--mu2", "3", "--seeds", "2", "--k", "2", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["theory"]["weights_law"].startswith("random") and "O(d^-1/2)" in doc["verdict"]["against"]
    assert np.allclose([[float(x) for x in row] for row in doc["top_eigenvalues"]], real.top_eigenvalues, rtol=1e-8)


def test_the_catalogue_draws_the_scheme_and_declares_its_costs():
    from hypothesis import HealthCheck, Phase, find, settings

    from derive.model.schemes import OPTIONS, Softmax
    from verify.strategies import SCHEMES, model_configs

    assert "softmax" in SCHEMES and {o.name for o in Softmax.options} == {"tau", "mask"} <= {o.name for o in OPTIONS}
    quick = settings(phases=[Phase.generate], max_examples=200, suppress_health_check=list(HealthCheck), deadline=None)
    config = find(model_configs(max_T=6, schemes=("softmax",)),
                  lambda c: c["mask"] == "strict" and c["tau"] > 0 and c["T"] >= 3, settings=quick)
    assert config["pooling"].law.random and config["pooling"].errors["kappa"] < 1e-10
    # a trial's memory counts the attention weights (N x T) and the chunks of tokens they are computed from
    assert Softmax(tau=1).trial_bytes(1000, 4000, 8) == 8 * 4000 * 8 + 3 * 8 * min(512 * 8 * 1000, 1 << 22)
    from derive.model.schemes import Mean

    assert Mean().trial_bytes(1000, 4000, 8) == 0


@pytest.mark.parametrize("option", [["--draws", "5"], ["--seed", "3"]])
def test_draws_and_seed_are_refused_where_random_weights_have_no_at_dimension(capsys, monkeypatch, option):
    monkeypatch.delenv("ATTENTION_RMT_DIMENSIONS", raising=False)
    # without --d they belong to at_dimension, which the strict mask's per-sequence weights do not have: silently
    # ignoring them had read as if they were used
    base = ["--delta", "1/2", "--gamma", "1/4", "--mu2", "3", "--T", "4", "--weights", "softmax", "--tau", "1",
            "--mask", "strict", "--signs", "iid"]
    assert derive_main(["spike", *base, *option]) == 2
    assert capsys.readouterr().err.startswith(f"derive: error: {option[0][2:]}: belongs to at_dimension")
