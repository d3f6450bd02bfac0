"""The token matrix's resolvent along the class signs (derive/vocabulary/limit/signfield.py) against sampled token
matrices, the claim that only R enters, and the quenched population's determinism."""
import numpy as np
import pytest
import scipy.sparse as sps
import scipy.sparse.linalg as spl

from derive.model.spec import parse_signs
from derive.vocabulary.limit import signfield
from verify.montecarlo.draw import balanced_signs, mixing_matrix, sample_sequences
from verify.stats import mean_ci, student_t_quantile


def _tokens(rng, xi, V):
    """Tokens uniform in the class of each sign (as verify.montecarlo.draw.sample_sequences, for any sign law)."""
    s = balanced_signs(V)
    plus, minus = np.flatnonzero(s > 0), np.flatnonzero(s < 0)
    within = rng.integers(0, V // 2, size=xi.shape)
    return np.where(xi > 0, plus[within], minus[within])


def _along_signs(xi_law, T, delta, gamma, zeta, V, draws):
    r""":math:`\frac1V s^\top(D - \zeta)^{-1}s` of ``draws`` sampled token matrices at real or complex ``zeta`` off the
    spectrum (conjugate gradients on :math:`(D - \operatorname{Re}\zeta)^2 + (\operatorname{Im}\zeta)^2`, then
    :math:`(D - \bar\zeta)`), ``xi_law(rng, N)`` the sign vectors."""
    N = int(round(V * delta / gamma))
    out = []
    for seed in range(draws):
        rng = np.random.default_rng(seed)
        A = mixing_matrix(_tokens(rng, xi_law(rng, N), V), np.full(T, 1 / T), V)
        D = (A @ A.T).tocsr() * (V / N)
        s = balanced_signs(V)
        shifted = (D - zeta.real * sps.identity(V)).tocsr()
        b2 = zeta.imag**2
        op = spl.LinearOperator((V, V), matvec=lambda x: shifted @ (shifted @ x) + b2 * x, dtype=float)
        y, info = spl.cg(op, s, rtol=1e-12, maxiter=10000)
        assert info == 0
        out.append(s @ (shifted @ y + 1j * zeta.imag * y) / V)
    return np.array(out)


def _quenched(T, signs, delta, gamma, zeta, P=1 << 15, replicas=4, scale=1.0):
    """The replicas' ``h_D`` and ``g_D`` (``scale`` multiplies R off the diagonal: a broken coupling), averaged over
    2^19 root tokens each (the roots' sampling halves the replicas' scatter from 2^16: 6e-4 against 1.2e-3)."""
    R = np.array(parse_signs(signs).R(T), dtype=float) if isinstance(signs, str) else signs
    R = np.where(np.eye(T, dtype=bool), R, scale * R)
    found = [signfield.quenched(np.full(T, 1 / T), R, delta, gamma, P, 7 + r, samples=1 << 19).solve(zeta)
             for r in range(replicas)]
    return np.array([f.h for f in found]), np.array([f.g for f in found])


def _agree(quenched, sampled):
    """The replicas' mean within three of its standard errors plus the draws' 99% Student-t half width of the draws'
    mean (the draws' scatter is the token graph's, of order V^(-1/2))."""
    q = quenched.real
    half = student_t_quantile(0.995, len(sampled) - 1) * sampled.real.std(ddof=1) / np.sqrt(len(sampled))
    return abs(q.mean() - sampled.real.mean()) <= 3 * q.std(ddof=1) / np.sqrt(len(q)) + half


def test_the_field_agrees_with_sampled_token_matrices_and_catches_a_one_percent_coupling_error():
    # T = 3, prefix:3 (all three tokens of a sequence in one class: R = 1 1^T, the strongest field), delta = gamma = 1,
    # zeta = -1/2 (left of the spectrum of D >= 0: the sampled resolvent is well conditioned). Draws at V = 2e5
    # scatter by 4e-4 (the token graph's fluctuation; 8e-5 at V = 1e6, whose mean 0.84822 lies 1.4e-4 above V = 2e5's:
    # the finite-V bias is below the interval), the replicas by 6e-4. The allowed difference is about 2e-3 (3 standard
    # errors of 4 replicas' mean, 9e-4, plus the 99% half width of 4 draws' mean, 1.2e-3). h_D = 0.8484 differs from
    # g_D = 1.3736 by 40%: the field is most of it. Multiplying R's off-diagonal by 1.01 moves h_D by -3.2e-3: the
    # test fails for a coupling 1% off.
    zeta = -0.5 + 0j
    law = lambda rng, N: sample_sequences(rng, parse_signs("prefix:3"), 8, N, 3)[0]  # noqa: E731
    sampled = _along_signs(law, 3, 1.0, 1.0, zeta, 200_000, 4)
    h, g = _quenched(3, "prefix:3", 1.0, 1.0, zeta)
    assert _agree(h, sampled)
    assert abs(h.mean() - g.mean()) > 0.3 * abs(h.mean())
    broken, _ = _quenched(3, "prefix:3", 1.0, 1.0, zeta, scale=1.01)
    assert not _agree(broken, sampled)


def test_only_the_pairwise_correlation_of_the_signs_enters():
    # xi_4 = xi_1 xi_2 xi_3 with xi_1..3 iid: pairwise independent (R = I) and symmetric under a global flip, but
    # E[xi_1 xi_2 xi_3 xi_4] = 1. A path of the tree passes through a sequence once, entering and leaving at two
    # positions, so only R enters and h_D = g_D as for iid signs; a sampled D of this family agrees (T = 4,
    # delta = gamma = 1, zeta = -1/2, 4 draws at V = 1e5).
    def law(rng, N):
        xi = 2 * rng.integers(0, 2, size=(N, 4)) - 1
        xi[:, 3] = xi[:, 0] * xi[:, 1] * xi[:, 2]
        return xi

    zeta = -0.5 + 0j
    sampled = _along_signs(law, 4, 1.0, 1.0, zeta, 100_000, 4)
    h, g = _quenched(4, np.eye(4), 1.0, 1.0, zeta)
    assert np.array_equal(h, g) and _agree(h, sampled)


@pytest.mark.slow
@pytest.mark.parametrize("T,signs,zeta", [
    (2, "iid", 0.6 + 0.2j),         # iid: h_D = g_D, inside the bulk
    (3, "prefix:3", 0.3 + 0.2j),    # inside the bulk, where the field's mean diverges under iteration (|m| > 1)
    (3, "markov:1/2", 0.4 + 0.1j),  # every R entry nonzero, a law beyond R that is Markov
    (8, "prefix:3", 1.46 + 0j),     # real zeta in the exponentially thin tail: the outlier (delta 1/2, gamma 2)
])
def test_the_field_inside_the_spectrum(T, signs, zeta):
    delta, gamma = (0.5, 2.0) if T == 8 else (1.0, 1.0)
    law = lambda rng, N: sample_sequences(rng, parse_signs(signs), 8, N, T)[0]  # noqa: E731
    sampled = _along_signs(law, T, delta, gamma, zeta, 100_000, 4) if zeta.imag else None
    if sampled is None:
        # real zeta inside the support of D: MINRES on the indefinite D - zeta, which converges where no eigenvalue
        # of the draw lies too close (the mass of the law of D above 1.46 is 6e-10)
        N = int(round(100_000 * delta / gamma))
        values = []
        for seed in range(4):
            rng = np.random.default_rng(seed)
            A = mixing_matrix(_tokens(rng, law(rng, N), 100_000), np.full(T, 1 / T), 100_000)
            D = ((A @ A.T) * (100_000 / N) - zeta.real * sps.identity(100_000)).tocsr()
            s = balanced_signs(100_000)
            x, info = spl.minres(D, s, rtol=1e-12, maxiter=20000)
            assert info == 0
            values.append(s @ x / 100_000)
        sampled = np.array(values)
    h, _ = _quenched(T, signs, delta, gamma, zeta)
    for part in (np.real, np.imag):
        if part is np.imag and not zeta.imag:
            continue
        assert _agree(part(h) + 0j, part(sampled) + 0j)


@pytest.mark.parametrize("t", [0.95, 0.987, 1.01])
def test_the_mixed_iteration_reaches_the_plain_iterations_fixed_point(t):
    # population 1 of 2^12 tokens at T = 2, delta = gamma = 1/2 contracts slowly near the edge of the bulk (1591 to 2277
    # plain iterations to a relative change of 1e-12, a contraction factor of about 0.988). A change below c leaves an
    # error below c / (1 - 0.988): 1e-11 for the plain reference (run to 1e-13), 1e-10 for the mixed result (1e-12).
    # 2e-10 separates that from another fixed point. The mixed result is the map's image of an iterate that changed by
    # less than 1e-12, so it changes by about as little (1.1e-12 measured: the max norm need not contract every step)
    w = np.array([0.5, 0.5])
    q = signfield.quenched(w, np.eye(2), 0.5, 0.5, 1 << 12, 1, 1 << 10)
    args = (q.partners, q.ptr, q.node, q.position, w**2, q.s, t * (1 + 1e-3j) / 0.5)
    plain, image = np.full(q.P, -1 / args[-1]), np.empty(q.P, dtype=complex)
    for _ in range(20000):
        change = signfield._cavity_map(plain, *args, image)
        plain, image = image, plain
        if change < 1e-13:
            break
    assert change < 1e-13
    mixed = np.full(q.P, -1 / args[-1])
    assert signfield._fixed_point(mixed, *args, 1e-12, 5000)
    assert signfield._cavity_map(mixed, *args, image) < 1e-11
    assert np.abs(mixed - plain).max() < 2e-10 * np.abs(plain).max() and mixed.imag.min() > 0


def test_same_input_same_numbers():
    R = np.array(parse_signs("markov:1/2").R(3), dtype=float)
    a = signfield.transforms(0.7 + 0.01j, [0.5, 0.3, 0.2], R, 0.5, 1.0, P=1 << 10, replicas=2)
    b = signfield.transforms(0.7 + 0.01j, [0.5, 0.3, 0.2], R, 0.5, 1.0, P=1 << 10, replicas=2)
    assert [(x.g, x.h, x.dg, x.dh) for x in a] == [(x.g, x.h, x.dg, x.dh) for x in b]


def test_bad_input_names_the_parameter():
    from derive.errors import ParameterError

    with pytest.raises(ParameterError, match="weights"):
        signfield.quenched([0.0, 1.0], np.eye(2), 1, 1, 64, 0)
    with pytest.raises(ParameterError, match="signs"):
        signfield.quenched([0.5, 0.5], np.eye(3), 1, 1, 64, 0)


@pytest.mark.parametrize("signs,zeta", [("prefix:3", 0.9 + 0.05j), ("markov:1/2", 2.5 * (1 + 1e-3j))])
def test_the_derivatives_are_the_transforms_derivatives(signs, zeta):
    # On one quenched population (its roots fixed) g, h are analytic functions of zeta, and dg, dh solve the
    # differentiated equations exactly: central differences of step 1e-5 |zeta| agree with them to 1e-8 (complex zeta)
    # and 3e-6 (next to the real axis, where the curvature is larger), relative. The tolerance 1e-4 catches the chain
    # term of dH (dX H / X in _field_rhs) off by 1% (it moves dh by 3.7e-3 to 8.8e-3 relative), which the sampled
    # token matrices above do not resolve; the field's coupling (R off the diagonal, of which h' depends) is the
    # test above's.
    R = np.array(parse_signs(signs).R(3), dtype=float)
    q = signfield.quenched(np.array([0.5, 0.3, 0.2]), R, 1.0, 1.0, 1 << 11, 3, 1 << 12)
    step = 1e-5 * abs(zeta)
    at = q.solve(zeta, level=2.0)
    up, down = (q.solve(zeta + sign * step, start=at, level=2.0) for sign in (1, -1))
    for value, slope in ((lambda r: r.g, at.dg), (lambda r: r.h, at.dh)):
        assert abs((value(up) - value(down)) / (2 * step) - slope) < 1e-4 * abs(slope)
