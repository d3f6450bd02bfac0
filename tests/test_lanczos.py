"""Tests of the one-pass Lanczos solver (verify.montecarlo.lanczos) against dense linear algebra.

Float64 kernels are compared with NumPy at ``1e-12`` relative to the sum of absolute terms (a sum of
``n`` float64 products errs by at most ``n 2^-53`` of that, far below for ``n <= 60``). Float32
kernels sum in float32 for at most ``V`` terms (a row's dot product) or 64 rows (a partial of
``E^T w``), so their error is at most ``(V + 64) 2^-24`` of the sum of absolute terms: the standard
worst-case bound ``n u`` for recursive summation, which any order of summation also meets.
"""
import numpy as np
import pytest
import scipy.sparse as sps
from hypothesis import given, strategies as st

from derive.errors import ParameterError
from verify.montecarlo.kernels import lanczos_sweep
from verify.montecarlo.lanczos import ENGINES, Mixing, lanczos_top, product, transpose_product

from tests.strategies import covariance_problems

U32 = 2.0**-24


def _sweep(E, r, x, xprev, alpha, beta):
    d, V = E.shape
    w, y = np.empty(d), np.empty(V)
    lanczos_sweep(E, r.astype(E.dtype), x, xprev, alpha, beta, w, y, np.empty(V, E.dtype), np.empty(8, E.dtype))
    return w, y


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("d", [1, 7, 8, 21, 64, 77])
def test_sweep_is_one_lanczos_step(dtype, d):
    rng = np.random.default_rng(d)
    V = 37
    E = rng.standard_normal((d, V)).astype(dtype)
    r, x, xprev = rng.standard_normal(V).astype(dtype), rng.standard_normal(d), rng.standard_normal(d)
    w, y = _sweep(E, r, x, xprev, 0.7, -1.3)
    E64, r64 = E.astype(np.float64), r.astype(np.float64)
    expect_w = E64 @ r64 - 0.7 * x - 1.3 * -xprev
    scale_w = np.abs(E64) @ np.abs(r64) + 0.7 * np.abs(x) + 1.3 * np.abs(xprev)
    expect_y, scale_y = E64.T @ w, np.abs(E64.T) @ np.abs(w)
    rel = 1e-12 if dtype == np.float64 else (V + 64) * U32
    assert np.all(np.abs(w - expect_w) <= rel * scale_w)
    assert np.all(np.abs(y - expect_y) <= rel * scale_y)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("d, b", [(1, 1), (9, 3), (16, 2), (29, 5)])
def test_block_products_in_one_pass(dtype, d, b):
    rng = np.random.default_rng(b)
    V = 23
    E = rng.standard_normal((d, V)).astype(dtype)
    U, R = rng.standard_normal((d, b)), rng.standard_normal((V, b))
    E64 = E.astype(np.float64)
    # float64 accumulation throughout, whatever the table's type
    np.testing.assert_allclose(transpose_product(E, U), E64.T @ U, rtol=0, atol=1e-12 * (np.abs(E64.T) @ np.abs(U)).max())
    np.testing.assert_allclose(product(E, R), E64 @ R, rtol=0, atol=1e-12 * (np.abs(E64) @ np.abs(R)).max())


@given(covariance_problems())
def test_mixing_is_M_over_N(problem):
    E, A, k, centered, seed = problem
    V, N = A.shape
    dense = A.toarray()
    if centered:
        dense = dense - dense.mean(axis=1, keepdims=True)
    M = dense @ dense.T / N
    Y = np.random.default_rng(seed).standard_normal((V, 3))
    mixing = Mixing.of(A, centered)
    np.testing.assert_allclose(mixing.apply(Y), M @ Y, rtol=0, atol=1e-12 * (np.abs(M) @ np.abs(Y)).max() + 1e-300)
    np.testing.assert_allclose(mixing.apply(Y[:, 0]), M @ Y[:, 0], rtol=0, atol=1e-12 * (np.abs(M) @ np.abs(Y)).max() + 1e-300)


def _dense_S(E, A, centered):
    dense = A.toarray()
    if centered:
        dense = dense - dense.mean(axis=1, keepdims=True)
    C = E @ dense
    return C @ C.T / A.shape[1]


@pytest.mark.parametrize("engine", ENGINES)
@given(covariance_problems())
def test_lanczos_finds_the_top_eigenpairs_and_reports_true_residuals(engine, problem):
    E, A, k, centered, seed = problem
    S = _dense_S(E, A, centered)
    norm = np.abs(np.linalg.eigvalsh(S)).max()
    ritz = lanczos_top(E, Mixing.of(A, centered), k, np.random.default_rng(seed).standard_normal(len(E)), 1e-10,
                       engine=engine)
    top = np.linalg.eigvalsh(S)[::-1][:k]
    # each Ritz value is within its residual (1e-10 theta) of an eigenvalue; rounding adds ~1e-15 ||S||
    np.testing.assert_allclose(ritz.values, top, rtol=0, atol=1e-9 * norm + 1e-300)
    np.testing.assert_allclose(ritz.vectors.T @ ritz.vectors, np.eye(k), atol=1e-10)
    true = np.linalg.norm(S @ ritz.vectors - ritz.vectors * ritz.values, axis=0)
    # the estimate beta_m |s_m| is the residual itself up to rounding (the basis is orthonormal)
    np.testing.assert_allclose(ritz.residuals * np.abs(ritz.values), true, rtol=0, atol=1e-10 * norm + 1e-300)
    assert ritz.steps <= len(E) and ritz.passes >= ritz.steps + 1


@pytest.mark.parametrize("engine", ENGINES)
def test_lanczos_restarts_after_an_early_invariant_subspace(engine):
    # S = diag(4, 3, 2, 1, ...) and v0 = e_1: the Krylov space of v0 is invariant after one step,
    # so the other top eigenvalues come only from the restarts
    d = 12
    lam = np.arange(d, 0, -1, dtype=float)
    A = sps.csc_matrix(np.diag(np.sqrt(d * lam)))
    ritz = lanczos_top(np.eye(d), Mixing.of(A, False), 3, np.eye(d)[0], 1e-12, engine=engine)
    np.testing.assert_allclose(ritz.values, lam[:3], rtol=1e-13)
    np.testing.assert_allclose(np.abs(ritz.vectors), np.eye(d)[:, :3], atol=1e-12)
    assert ritz.passes > ritz.steps + 1


def test_lanczos_stops_with_the_whole_space_and_exact_values():
    rng = np.random.default_rng(3)
    E, A = rng.standard_normal((5, 9)), sps.csc_matrix(rng.standard_normal((9, 20)))
    ritz = lanczos_top(E, Mixing.of(A, False), 3, rng.standard_normal(5), 0.0)
    S = _dense_S(E, A, False)
    np.testing.assert_allclose(ritz.values, np.linalg.eigvalsh(S)[::-1][:3], rtol=1e-12)
    # with all d directions the residual estimates are rounding (tol = 0 is never met otherwise)
    assert ritz.steps == 5 and np.all(ritz.residuals < 1e-12)


def test_lanczos_grows_its_basis_past_many_doublings():
    # k = 130 needs more than one doubling of the first 65 rows before the first check
    rng = np.random.default_rng(4)
    E, A = rng.standard_normal((200, 300)), sps.csc_matrix(rng.standard_normal((300, 300)))
    ritz = lanczos_top(E, Mixing.of(A, False), 130, rng.standard_normal(200), 1e-9)
    S = _dense_S(E, A, False)
    top = np.linalg.eigvalsh(S)[::-1][:130]
    np.testing.assert_allclose(ritz.values, top, rtol=0, atol=1e-8 * top[0])


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("seed", range(10))
def test_float32_lanczos_past_the_rank_of_S(seed, engine):
    # rank(S) = 10 < d = 64: once the Krylov space is exhausted the float32 steps are rounding noise,
    # which must not leak into the top values (they once came out 2x or 1e16x too large). The
    # tolerance 1e-5 bounds each residual, hence each value's error, relative to theta; rounding the
    # table moves the values by about 1e-7 relative, so 1e-4 is ample and far below those failures.
    rng = np.random.default_rng(seed)
    E, A = rng.standard_normal((64, 40)), sps.csc_matrix(rng.standard_normal((40, 10)))
    ritz = lanczos_top(E, Mixing.of(A, False), 3, rng.standard_normal(64), 1e-5, dtype=np.float32, engine=engine)
    np.testing.assert_allclose(ritz.values, np.linalg.eigvalsh(_dense_S(E, A, False))[::-1][:3], rtol=1e-4)


def test_lanczos_refuses_k_outside_1_to_d_and_leaves_A_alone():
    rng = np.random.default_rng(5)
    E = rng.standard_normal((4, 6))
    A = sps.csc_matrix((np.ones(2), np.array([1, 1]), np.array([0, 2])), shape=(6, 1))  # a duplicate entry
    mixing = Mixing.of(A, False)
    assert A.nnz == 2 and mixing.values.sum() == 2
    for k in (0, 5, 2.0, True):
        with pytest.raises(ParameterError) as err:
            lanczos_top(E, mixing, k, rng.standard_normal(4), 1e-8)
        assert err.value.parameter == "k"


@given(st.integers(0, 2**32 - 1))
def test_float32_table_gives_the_rounded_operator(seed):
    # Lanczos on the float32 table converges to the eigenvalues of the float32-rounded S; its
    # residual against float64 S is its own plus the rounding of the table: E32 = E + D with
    # |D| <= 2^-24 |E| entrywise, so ||S - S32|| <= (2 ||E|| ||D|| + ||D||^2) ||M/N|| (plus float32
    # sums, bounded in the module docstring). These are worst-case bounds, far above the measured
    # errors: this test catches gross errors of the float32 path; its accuracy is checked against
    # dense by test_float32_lanczos_past_the_rank_of_S and by the certificates of the mixed path
    rng = np.random.default_rng(seed)
    E = rng.standard_normal((24, 40))
    A = sps.csc_matrix(rng.standard_normal((40, 50)))
    E32 = E.astype(np.float32)
    ritz = lanczos_top(E32, Mixing.of(A, False), 2, rng.standard_normal(24), 1e-5)
    S = _dense_S(E, A, False)
    D = E32.astype(np.float64) - E
    M = (A @ A.T).toarray() / 50
    perturbation = (2 * np.linalg.norm(E, 2) * np.linalg.norm(D, 2) + np.linalg.norm(D, 2) ** 2) * np.linalg.norm(M, 2)
    sums = (40 + 64) * U32 * np.linalg.norm(np.abs(E), 2) ** 2 * np.linalg.norm(np.abs(M), 2) * 2
    true = np.linalg.norm(S @ ritz.vectors - ritz.vectors * ritz.values, axis=0)
    assert np.all(true <= ritz.residuals * np.abs(ritz.values) + perturbation + sums)


@pytest.mark.parametrize("path", ["implicit", "mixed"])
def test_the_two_engines_give_the_same_trial(path):
    # BLAS reads the table twice a step, the kernels once: the same Krylov steps, so the same pairs up to
    # rounding (eigenvalues certified to 1e-10 relative on both, eigenvectors to the residual over the gap)
    from verify.montecarlo.trials import run_trial

    from tests.trial_cases import trial

    kwargs = trial(dict(d=300, V=600, N=1200, T=4, signs="prefix:2", weights=[0.4, 0.3, 0.2, 0.1], mu2=2.0, k=3,
                        path=path, seed=5, centered=True))
    numba, blas = run_trial(**kwargs, engine="numba"), run_trial(**kwargs, engine="blas")
    np.testing.assert_allclose(blas.top_eigenvalues, numba.top_eigenvalues, rtol=1e-10)
    np.testing.assert_allclose(blas.overlaps, numba.overlaps, rtol=0, atol=1e-6)
    with pytest.raises(ParameterError) as err:
        run_trial(**kwargs, engine="gpu")
    assert err.value.parameter == "engine"
