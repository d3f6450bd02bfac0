"""The C1 bulk law evaluated: branch choice, support, mass, precision, scaling, the float path,
the command line, and a Monte Carlo check of the free multiplicative convolution itself."""
import json
import sys

import mpmath
import numpy as np
import pytest
import sympy as sp
from hypothesis import example, given, settings

import processes
from derive.gaussian import bulk
from derive.gaussian.freeprob import bulk_polynomial, delta, gamma, kappa, moments
from tests.strategies import ratios, scales

Q = sp.Rational


def _edges(params, dps=40):
    return [(mpmath.mpf(str(sp.N(a, dps))), mpmath.mpf(str(sp.N(b, dps)))) for a, b in bulk.support(*params)[0]]


def _naive(params, x, dps):
    # independent reference: all roots by mpmath.polyroots, the unique one with Im > 0
    L = bulk.law(*params)
    p, q = bulk._exact(x)
    with mpmath.workdps(dps):
        roots = mpmath.polyroots([pc.mp(p, q) for pc in reversed(L.coefficients)], maxsteps=200, extraprec=2 * dps)
        upper = [r for r in roots if mpmath.im(r) > mpmath.mpf(10) ** (-dps // 2)]
        assert len(upper) == 1
        return mpmath.im(upper[0]) / mpmath.pi


def _grid(a, b, n):
    return [a + (b - a) * Q(k, n + 1) for k in range(1, n + 1)]


@settings(max_examples=12)
@given(ratios, ratios, scales)
def test_density_is_nonnegative_vanishes_outside_and_matches_polyroots(d, g, k):
    params = (d, g, k)
    with mpmath.workdps(40):
        for a, b in _edges(params):
            width = b - a
            outside = [a - width * mpmath.mpf(10) ** -j for j in range(2, 14, 2)] + \
                      [b + width * mpmath.mpf(10) ** -j for j in range(2, 14, 2)]
            assert all(v == 0 for v in bulk.density(*params, outside, 30))
            inside = [a + width * mpmath.mpf(t) / 16 for t in range(1, 16)]
            values = bulk.density(*params, inside, 30)
            assert all(v > 0 for v in values)
            for x, v in list(zip(inside, values))[::4]:
                assert abs(v - _naive(params, x, 40)) <= mpmath.mpf(10) ** -25 * max(1, v)


@settings(max_examples=10)
@given(ratios, ratios, scales)
@example(Q(9, 4), Q(11, 5), Q(1, 10))  # a left edge at 1.5e-5 of a support 1.2 wide
def test_no_branch_jump_near_soft_edges(d, g, k):
    # a square-root edge: rho(e + h)^2 / h tends to a positive constant; a jump to another
    # root would break the ratio between h and h/4 (agreement to 2% is the O(h) correction).
    # The square-root regime of an edge extends over the smaller of the support's width and the
    # edge's distance to the hard edge at 0, so h is 1e-6 of that scale
    params = (d, g, k)
    with mpmath.workdps(40):
        for a, b in _edges(params):
            width = b - a
            for e, sign in ([(a, 1)] if a != 0 else []) + [(b, -1)]:
                h = min(width, e) * mpmath.mpf(10) ** -6
                r1, r2 = bulk.density(*params, [e + sign * h, e + sign * h / 4], 30)
                assert abs((r1**2 / h) / (r2**2 / (h / 4)) - 1) < 0.02


def _mass(params, dps=30):
    total = mpmath.mpf(0)
    with mpmath.workdps(dps):
        f = lambda x: bulk.density(*params, [x], dps)[0]  # noqa: E731
        for a, b in _edges(params):
            if a == 0:
                # a hard edge x^(-1/2) or x^(-2/3) at 0: x = b t^3 makes the integrand bounded
                total += mpmath.quad(lambda t: 3 * b * t**2 * f(b * t**3), [0, 1])
            else:
                # breakpoints geometric towards the left edge: when it is close to 0 the density
                # peaks on the scale a, which one tanh-sinh interval does not resolve
                near = [a + (b - a) * mpmath.mpf(10) ** -j for j in range(8, 0, -1)]
                total += mpmath.quad(f, [a] + near + [b])
    return total


def _continuous_mass(params):
    atom = bulk.support(*params)[1]
    with mpmath.workdps(40):
        return 1 - mpmath.mpf(atom.p) / atom.q


@settings(max_examples=5)
@given(ratios, ratios, scales)
def test_density_integrates_to_one_minus_atom(d, g, k):
    assert abs(_mass((d, g, k)) - _continuous_mass((d, g, k))) < 1e-20


@pytest.mark.parametrize("params", [(1, 1, 1), (2, 2, Q(1, 2)), (1, Q(1, 2), 3), (Q(3), Q(5, 2), Q(1, 7))])
def test_mass_with_atoms_and_hard_edges(params):
    assert abs(_mass(params) - _continuous_mass(params)) < 1e-20


@settings(max_examples=8)
@given(ratios, ratios, scales)
def test_30_and_60_digits_agree_to_25(d, g, k):
    with mpmath.workdps(70):
        xs = [x for a, b in _edges((d, g, k)) for x in _grid(a, b, 7)]
        low, high = bulk.density(d, g, k, xs, 30), bulk.density(d, g, k, xs, 60)
        assert all(abs(u - v) <= mpmath.mpf(10) ** -25 * abs(v) for u, v in zip(low, high))


@settings(max_examples=8)
@given(ratios, ratios, scales)
def test_kappa_scaling_law(d, g, k):
    with mpmath.workdps(40):
        xs = [x for a, b in _edges((d, g, 1)) for x in _grid(a, b, 5)]
        base = bulk.density(d, g, 1, xs, 30)
        scaled = bulk.density(d, g, k, [x * mpmath.mpf(k.p) / k.q for x in xs], 30)
        assert all(abs(s * k - b) <= mpmath.mpf(10) ** -27 * b for s, b in zip(scaled, base))
    assert bulk.support(d, g, k)[1] == bulk.support(d, g, 1)[1]


def test_mp1_boxtimes_mp1_is_the_fuss_catalan_density():
    # Penson-Zyczkowski (2011), s = 2, support [0, 27/4]
    with mpmath.workdps(40):
        for x in [Q(1, 100), Q(1, 3), Q(2), Q(6)]:
            xm = mpmath.mpf(x.p) / x.q
            A = 27 + 3 * mpmath.sqrt(81 - 12 * xm)
            fc = (mpmath.cbrt(2) * mpmath.sqrt(3) / (12 * mpmath.pi)
                  * (mpmath.cbrt(2) * A ** (mpmath.mpf(2) / 3) - 6 * mpmath.cbrt(xm)) / (xm ** (mpmath.mpf(2) / 3) * mpmath.cbrt(A)))
            assert abs(bulk.density(1, 1, 1, [x], 30)[0] - fc) < 1e-28 * fc
    assert bulk.support(1, 1, 1) == (((0, Q(27, 4)),), 0)


@pytest.mark.parametrize("params,zv", [((Q(1, 2), Q(1, 4), Q(1, 8)), mpmath.mpc(0.2, 0.05)),
                                       ((2, Q(1, 2), 1), mpmath.mpc(3, 1)),
                                       ((Q(1, 10), Q(1, 10), 1), mpmath.mpc(0.3, 0.01))])
def test_stieltjes_equals_the_transform_of_the_density(params, zv):
    (a, b), = _edges(params)
    atom = 1 - _continuous_mass(params)
    with mpmath.workdps(25):
        f = lambda x: bulk.density(*params, [x], 25)[0] / (x - zv)  # noqa: E731
        expected = mpmath.quad(f, [a, (a + b) / 2, b]) - atom / zv
    got = bulk.stieltjes(*params, zv, 25)
    assert abs(got - expected) < 1e-15 * abs(expected)
    with mpmath.workdps(25):
        assert got.imag > 0 and abs(bulk.stieltjes(*params, mpmath.conj(zv), 25) - mpmath.conj(got)) < 1e-20


@pytest.mark.parametrize("params", [(Q(1, 2), Q(1, 4), Q(1, 8)), (2, Q(1, 2), 1), (1, Q(1, 2), 1),
                                    (Q(1, 10), Q(1, 10), 1), (4, 4, 1), (Q(199, 200), Q(1, 3), 1)])
def test_float_path_against_30_digits(params):
    (a, b), = [(float(u), float(v)) for u, v in _edges(params)]
    xs = np.concatenate([np.linspace(a - 0.01 * (b - a), b + 0.01 * (b - a), 301),
                         a + np.logspace(-12, -1, 12) * (b - a), b - np.logspace(-14, -1, 14) * (b - a),
                         [np.nextafter(b, -np.inf), np.nextafter(b, np.inf)]
                         + ([np.nextafter(a, np.inf), np.nextafter(a, -np.inf)] if a else [])])
    xs = xs[xs != 0]
    fast = bulk.density_float(*params, xs)
    exact = np.array([float(v) for v in bulk.density(*params, list(xs), 30)])
    assert np.max(np.abs(fast - exact) / np.maximum(1, exact)) < 1e-13
    assert np.all(fast[(xs <= a) | (xs >= b)] == 0) and np.all(fast[(xs > a) & (xs < b)] > 0)


def _sample_spectrum(d, V, N, rng):
    # kappa Sigma^{1/2} W Sigma^{1/2}, Sigma = Z Z^T/V, W = G G^T/N: its nonzero eigenvalues are
    # those of M^T M, M = G^T Z / sqrt(VN); the rest of the d eigenvalues are zeros
    Z, G = rng.standard_normal((d, V)), rng.standard_normal((d, N))
    M = G.T @ Z / np.sqrt(V * N)
    ev = np.linalg.eigvalsh(M.T @ M if V <= N else M @ M.T)[::-1][:d]
    rank = min(d, V, N)
    return np.sort(ev[:rank])


def _cdf(params, grid=4001):
    # continuous part, by the trapezoid rule in a variable that smooths the edges
    (a, b), = [(float(u), float(v)) for u, v in _edges(params)]
    t = np.linspace(0, 1, grid)
    x, dx = (b * t**3, 3 * b * t**2) if a == 0 else (a + (b - a) * (1 - np.cos(np.pi * t)) / 2,
                                                    (b - a) * np.pi * np.sin(np.pi * t) / 2)
    f = np.zeros(grid)
    f[1:-1] = bulk.density_float(*params, x[1:-1]) * dx[1:-1]
    F = np.concatenate([[0], np.cumsum((f[1:] + f[:-1]) / 2 * np.diff(t))])
    return x, F / F[-1]


def _ks(ev, x, F):
    n = len(ev)
    model = np.interp(ev, x, F)
    return max(np.max(np.arange(1, n + 1) / n - model), np.max(model - np.arange(n) / n))


def _mp_cdf(ratio, scale):
    a, b = scale * (1 - np.sqrt(ratio)) ** 2, scale * (1 + np.sqrt(ratio)) ** 2
    x = a + (b - a) * (1 - np.cos(np.linspace(0, np.pi, 20001))) / 2
    rho = np.sqrt(np.clip((b - x) * (x - a), 0, None)) / (2 * np.pi * ratio * scale * x)
    F = np.concatenate([[0], np.cumsum((rho[1:] + rho[:-1]) / 2 * np.diff(x))])
    return x, F / F[-1]


@pytest.mark.parametrize("params,d", [((Q(1, 2), Q(1, 4), Q(1, 8)), 800), ((2, Q(1, 2), 1), 600),
                                      ((Q(1, 3), Q(3, 2), 2), 600)])
def test_monte_carlo_spectrum_matches_the_free_convolution(params, d):
    rng = np.random.default_rng(20260501)
    V, N = int(d / params[0]), int(d / params[1])
    ev = float(params[2]) * _sample_spectrum(d, V, N, rng)
    atom = bulk.support(*params)[1]
    # rank argument: exactly d - min(d, V, N) zero eigenvalues, the atom
    assert Q(d - len(ev), d) == atom
    # rigidity: eigenvalues sit within O(log n / n) in CDF of their quantiles, so the
    # Kolmogorov distance of the n nonzero eigenvalues is a few log(n)/n; 2 log(n)/n allowed
    x, F = _cdf(params)
    n = len(ev)
    tol = 2 * np.log(n) / n
    assert _ks(ev, x, F) < tol
    # moments fluctuate and are biased at O(1/d); 10 k / d relative is well above that
    for k in (1, 2, 3):
        exact = float(moments(bulk_polynomial(), k)[k].subs({delta: params[0], gamma: params[1], kappa: params[2]}))
        assert abs(np.sum(ev**k) / d - exact) < 10 * k / d * exact
    if atom == 0:
        # power: a single MP law with the same mean and variance is far outside the tolerance
        xa, Fa = _mp_cdf(float(params[0] + params[1]), float(params[2]))
        assert np.max(np.abs(np.interp(xa, x, F) - Fa)) > 3 * tol


def _cli(*args):
    return processes.run([sys.executable, "-m", "derive.cli", "bulk", *args, "--json"], capture_output=True, text=True,
                         cpu=300)


def test_cli_document():
    out = _cli("--delta", "1/2", "--gamma", "0.25", "--kappa", "1/8", "--x", "0.05,0.1,-1,1", "--digits", "20")
    assert out.returncode == 0
    doc = json.loads(out.stdout)
    assert set(doc) == {"law", "support", "atom_at_zero", "x", "density", "polynomial", "warning", "provenance"}
    # INTERFACE.md: without --T the answer is for Gaussian-equivalent pooled vectors, and N/V = 2 < 16 warns
    assert doc["law"] == "gaussian-equivalent" and "--T" in doc["warning"]
    assert doc["atom_at_zero"] == "0" and doc["density"][2:] == ["0", "0"]
    with mpmath.workdps(30):
        assert abs(mpmath.mpf(doc["density"][0]) - bulk.density(Q(1, 2), Q(1, 4), Q(1, 8), [Q(1, 20)], 25)[0]) < 1e-18
    m, z = sp.symbols("m z")
    expected = bulk_polynomial().subs({delta: Q(1, 2), gamma: Q(1, 4), kappa: Q(1, 8)})
    assert sp.simplify(sp.sympify(doc["polynomial"]) / expected).is_number


@pytest.mark.parametrize("args,parameter", [
    (["--delta", "0", "--gamma", "1", "--kappa", "1", "--x", "1"], "delta"),
    (["--delta", "1", "--gamma", "-1", "--kappa", "1", "--x", "1"], "gamma"),
    (["--delta", "1", "--gamma", "1", "--kappa", "0", "--x", "1"], "kappa"),
    (["--delta", "1", "--gamma", "1", "--kappa", "1", "--x", "1,,2"], "x"),
    (["--delta", "1", "--gamma", "1", "--kappa", "1", "--x", "nan"], "x"),
    (["--delta", "1", "--gamma", "1", "--kappa", "1", "--x", "0"], "x"),
])
def test_cli_bad_input(args, parameter):
    out = _cli(*args)
    assert out.returncode == 2 and out.stdout == ""
    assert out.stderr.count("\n") == 1 and f"error: {parameter}:" in out.stderr


def test_cli_grid_and_plot(tmp_path):
    out = _cli("--delta", "1/2", "--gamma", "1/4", "--kappa", "1/8", "--x", "0.1:0.3:3,1/2", "--digits", "12",
               "--plot", str(tmp_path / "d.png"))
    assert out.returncode == 0, out.stderr
    doc = json.loads(out.stdout)
    # 0.1, 0.2, 0.3 and 1/2: README's values at 0.1, 0.3, 0.5
    assert doc["density"][0] == "3.29023379746" and doc["density"][2] == "0.987681261784" and doc["density"][3] == "0"
    assert (tmp_path / "d.png").read_bytes()[:4] == b"\x89PNG"
    for x, reason in (("0:1", "malformed grid"), ("0:1:1", "must be an integer >= 2"),
                      ("0:1:1000000000000", "at most")):
        bad = _cli("--delta", "1", "--gamma", "1", "--kappa", "1", "--x", x)
        assert bad.returncode == 2 and reason in bad.stderr and bad.stdout == "", (x, bad.stderr)
