"""Tests of the mu2 axis (verify.montecarlo.mu2_axis): the rank-two identity of the model, the secular
equation of notes/mc.md, and the one-run block Lanczos against direct dense solves at every mu2.

Direct solves are :func:`verify.montecarlo.dense.dense_top` on the table ``E = Z + sqrt(mu2) u s^T``
drawn for that mu2 (an independent route: the pooled vectors and their Gram matrix). Float64 rounding
of both is about ``1e-15`` relative, so ``1e-8`` (the issue's target) leaves seven orders of margin;
a wrong coupling (a factor 2 on ``beta``, a sign of ``sqrt(mu2)``, the raw ``g`` on the centered ``S``)
moves outliers and overlaps by ``1e-2`` or more and fails by six orders.
"""
import numpy as np
import pytest
from hypothesis import given, strategies as st

from derive.errors import ParameterError
from verify.montecarlo.dense import dense_top
from tests.trial_cases import model as trial_model
from verify.montecarlo.draw import draw
from verify.montecarlo.kernels import block_sweep
from verify.montecarlo.lanczos import TOL, Mixing
from verify.montecarlo.mu2_axis import Pencil, axis_top, coupling, dense_axis_top

from tests.strategies import covariance_problems

MU2 = np.linspace(0.0, 4.0, 41)
"""The axis of the tests: 0 (no signal), below and above both thresholds of the configuration."""


def _draw(d, centered, weights="mean", seed=7):
    V, N, T = 2 * d, 4 * d, 8
    w = [1 / T] * T if weights == "mean" else [1.0, 0.8, 0.6, 0.1, 0.0, 0.0, -0.2, 0.1]
    data = draw(trial_model(d, V, N, T, "prefix:3"), seed, weights=w)
    return data, Pencil.of(data.E, Mixing.of(data.A, centered), data.s)


def _dense_S(Z, A, s, mu2, centered):
    """S(mu2) of the table Z + sqrt(mu2) u s^T, formed densely from the (centered) mixing matrix."""
    M = A.toarray()
    if centered:
        M = M - M.mean(axis=1, keepdims=True)
    E = Z.copy()
    E[0] += np.sqrt(mu2) * s
    return E @ M @ M.T @ E.T / M.shape[1]


def _direct(data, mu2, k, centered):
    E = data.E.copy()
    E[0] += np.sqrt(mu2) * data.s
    vals, vecs, _ = dense_top(E, data.A, k, centered)
    return vals, vecs[0] ** 2


@pytest.mark.parametrize("block", [1, 2, 3])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("d", [5, 16, 21])
def test_block_sweep_is_one_block_step(block, dtype, d):
    rng = np.random.default_rng(d + block)
    V = 29
    E = rng.standard_normal((d, V)).astype(dtype)
    R, P = rng.standard_normal((V, block)).astype(dtype), rng.standard_normal((d, block))
    W, Yt = np.empty((d, block)), np.empty((block, V))
    block_sweep(E, np.ascontiguousarray(R.T), P, W, Yt, np.empty((block, V), dtype), np.empty(16, dtype))
    E64, R64 = E.astype(np.float64), R.astype(np.float64)
    # the bounds of tests/test_lanczos.py: 1e-12 of the absolute sums in float64, (V + 64) u in float32
    rel = 1e-12 if dtype == np.float64 else (V + 64) * 2.0**-24
    assert np.all(np.abs(W - (E64 @ R64 - P)) <= rel * (np.abs(E64) @ np.abs(R64) + np.abs(P)))
    assert np.all(np.abs(Yt.T - E64.T @ W) <= rel * (np.abs(E64.T) @ np.abs(W)))


@pytest.mark.parametrize("centered", [False, True])
def test_S_of_mu2_is_S0_plus_a_rank_two_term(centered):
    data, pencil = _draw(40, centered)
    S0 = _dense_S(data.E, data.A, data.s, 0.0, centered)
    for mu2 in (0.5, 3.0):
        S = _dense_S(data.E, data.A, data.s, mu2, centered)
        rank_two = pencil.U @ coupling(mu2, pencil.beta) @ pencil.U.T
        np.testing.assert_allclose(S0 + rank_two, S, rtol=0, atol=1e-12 * np.abs(S).max())


@pytest.mark.parametrize("centered", [False, True])
def test_secular_equation_gives_the_outlier_and_its_overlap(centered):
    # notes/mc.md: an eigenvalue lam of S(mu2) outside spec(S0) solves det(I - C G(lam)) = 0 with
    # G = U^T (lam - S0)^{-1} U, and its eigenvector (lam - S0)^{-1} U q has squared overlap
    # (G q)_1^2 / q^T (-G') q with u. G and G' come from the eigendecomposition of S0 here.
    data, pencil = _draw(60, centered)
    lam0, V0 = np.linalg.eigh(_dense_S(data.E, data.A, data.s, 0.0, centered))
    W = V0.T @ pencil.U
    G = lambda x: W.T @ (W / (x - lam0)[:, None])  # noqa: E731
    dG = lambda x: -W.T @ (W / ((x - lam0) ** 2)[:, None])  # noqa: E731
    mu2 = 3.0
    C = coupling(mu2, pencil.beta)
    vals, overlaps = _direct(data, mu2, 1, centered)
    lam = vals[0]
    assert lam > lam0[-1]  # an outlier above the whole spectrum of S0
    K = np.eye(2) - C @ G(lam)
    assert abs(np.linalg.det(K)) <= 1e-10 * np.abs(C @ G(lam)).max()
    q = np.linalg.svd(K)[2][-1]  # the null vector of I - C G(lam)
    np.testing.assert_allclose((G(lam) @ q)[0] ** 2 / (q @ -dG(lam) @ q), overlaps[0], rtol=1e-9)


@pytest.mark.parametrize("weights", ["mean", "spread"])
@pytest.mark.parametrize("centered", [False, True])
def test_one_run_gives_every_mu2_to_1e_8_of_direct_solves(centered, weights):
    data, pencil = _draw(160, centered, weights)
    k = 3
    axis = axis_top(pencil, MU2, k)
    assert axis.path == "mu2-axis" and axis.size < 160 and np.all(axis.residuals <= TOL)
    for i, mu2 in enumerate(MU2):
        vals, overlaps = _direct(data, mu2, k, centered)
        np.testing.assert_allclose(axis.values[i], vals, rtol=1e-8)
        np.testing.assert_allclose(axis.overlaps[i], overlaps, rtol=0, atol=1e-8)
    # one pass per block step, the first pass, and at most two recomputed images
    assert axis.passes <= axis.size // 2 + 3


def test_a_value_of_the_axis_is_its_own_one_value_axis():
    data, pencil = _draw(160, True)
    axis = axis_top(pencil, MU2, 3)
    for i in (0, 7, 25, 40):
        alone = axis_top(pencil, [MU2[i]], 3)
        np.testing.assert_allclose(alone.values[0], axis.values[i], rtol=1e-8)
        np.testing.assert_allclose(alone.overlaps[0], axis.overlaps[i], rtol=0, atol=1e-8)


def test_dense_axis_is_the_direct_solve():
    data, pencil = _draw(40, False)
    axis = dense_axis_top(pencil, MU2[::8], 3)
    for i, mu2 in enumerate(MU2[::8]):
        vals, overlaps = _direct(data, mu2, 3, False)
        np.testing.assert_allclose(axis.values[i], vals, rtol=1e-10)
        np.testing.assert_allclose(axis.overlaps[i], overlaps, rtol=0, atol=1e-10)


@given(covariance_problems(), st.lists(st.floats(0, 9), min_size=1, max_size=4))
def test_any_small_pencil_against_dense(problem, mu2s):
    # tiny sizes: the Krylov space fills up (fresh directions, or the dense fallback); eigenvalues
    # agree to rounding, an overlap within the Davis-Kahan bound residual/gap of its eigenvector
    E, A, k, centered, seed = problem
    d = E.shape[0]
    s = np.where(np.random.default_rng(seed).random(A.shape[0]) < 0.5, 1.0, -1.0)
    pencil = Pencil.of(E, Mixing.of(A, centered), s)
    if d < 2 or np.linalg.matrix_rank(pencil.U) < 2:
        return
    k = min(k, d - 1)
    axis = axis_top(pencil, mu2s, k)
    for i, mu2 in enumerate(mu2s):
        lam, vecs = np.linalg.eigh(_dense_S(E, A, s, mu2, centered))
        lam, vecs = lam[::-1], vecs[:, ::-1]
        scale = np.abs(lam).max() + 1e-300
        np.testing.assert_allclose(axis.values[i], lam[:k], rtol=0, atol=1e-9 * scale)
        for j in range(k):
            gap = np.min(np.abs(np.delete(lam, j) - lam[j]))
            if gap > 1e-6 * scale:
                bound = 3 * (TOL * abs(lam[j]) if axis.residuals is not None else 1e-13 * scale) / gap
                assert abs(axis.overlaps[i, j] - vecs[0, j] ** 2) <= bound + 1e-12


def test_bad_axes_are_refused_by_name():
    _, pencil = _draw(16, False)
    for bad in ([], [-1.0], [np.nan], "1", [True], None):
        with pytest.raises(ParameterError) as err:
            axis_top(pencil, bad, 2)
        assert err.value.parameter == "mu2"
    for k in (0, 16, 2.0):
        with pytest.raises(ParameterError) as err:
            axis_top(pencil, [1.0], k)
        assert err.value.parameter == "k"


@pytest.mark.parametrize("path", ["auto", "implicit"])
def test_run_axis_is_run_trials_at_each_mu2_with_shared_draws(path):
    from verify.montecarlo.trials import run_axis, run_trials

    mu2s = [0.25, 1.0, 3.0]
    w = [0.5, 0.3, 0.2, 0.0]
    axis = run_axis(trial_model(60, 120, 240, 4, "prefix:2", centered=True), mu2s, weights=w, k=3, path=path, seeds=2,
                    seed0=9)
    assert axis.path == ("dense" if path == "auto" else "mu2-axis")
    for i, mu2 in enumerate(mu2s):
        single = run_trials(trial_model(60, 120, 240, 4, "prefix:2", mu2, centered=True), weights=w, k=3, path="dense",
                            seeds=2, seed0=9)
        np.testing.assert_allclose(axis.top_eigenvalues[:, i], single.top_eigenvalues, rtol=1e-8)
        np.testing.assert_allclose(axis.overlaps[:, i], single.overlaps, rtol=0, atol=1e-8)


def test_kept_krylov_buffers_change_no_result():
    # a thread keeps its basis between runs (mu2_axis._buffers): run to the full space (d = 160 rows), the first run
    # grows fresh buffers past 128 rows (a copy of the rows filled so far), the second finds them holding the first
    # run's rows, the third follows a run of another shape; all three give the same block tridiagonal, bit for bit
    import math
    import threading

    from verify.montecarlo.mu2_axis import block_lanczos

    _, pencil = _draw(160, True)
    _, other = _draw(96, False)
    never = lambda krylov: (math.inf, False)  # noqa: E731 (run until the space is full)
    out = []

    def work():
        out.append(block_lanczos(pencil, never))
        out.append(block_lanczos(pencil, never))
        block_lanczos(other, never)
        out.append(block_lanczos(pencil, never))

    thread = threading.Thread(target=work)
    thread.start()
    thread.join()
    assert len(out) == 3 and out[0].size > 128
    for again in out[1:]:
        assert np.array_equal(again.diagonal, out[0].diagonal) and np.array_equal(again.couplings, out[0].couplings)
