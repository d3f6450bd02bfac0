r"""The model's bulk for any weights: the cavity equations of the sparse token matrix ``D``, solved by population
dynamics and folded into Silverstein's equation.

*The tree.* Seen from a token, the token–sequence graph is a two-type Galton–Watson tree: a token is in
:math:`K_t \sim \mathrm{Poisson}(\lambda)` sequences at position ``t`` (independently over ``t``,
:math:`\lambda = N/V`), a sequence holds :math:`T'` tokens with the nonzero weights :math:`w_t`. With
:math:`D = s\,AA^\top`, :math:`s = V/N`, the linearization :math:`\begin{pmatrix}-\zeta & \sqrt s A\\ \sqrt s A^\top &
-1\end{pmatrix}` has :math:`(D - \zeta)^{-1}` as its token block, and on a tree its diagonal entries solve
(Rogers, Pérez Castillo, Kühn and Takeda 2008; Bordenave and Lelarge 2010)

.. math:: X \overset{d}{=} \frac{1}{-\zeta - s\sum_t w_t^2 \sum_{j=1}^{K_t} Y_{t,j}}, \qquad
          Y_t \overset{d}{=} \frac{1}{-1 - s\sum_{u \ne t} w_u^2 X_u},

all :math:`X_u, Y_{t,j}` independent, and :math:`g_D(\zeta) = \frac1V\operatorname{tr}(D-\zeta)^{-1} = E X` (a token's
full resolvent has the same law as its cavity one: a Poisson number of sequences, less one, is Poisson). At one
nonzero weight :math:`Y = -1` and :math:`X = 1/(w^2 K/\lambda - \zeta)`: the exact law of :mod:`derive.vocabulary.limit.silverstein`.

*The fold.* With :math:`t = -1/m` (:mod:`derive.vocabulary.limit.silverstein`),
:math:`S_0(t) = \frac1\delta\bigl(1 + \zeta\, g_D(\zeta)\bigr)` at :math:`\zeta = t/\delta`, and the density at a
real ``x`` is :math:`\operatorname{Im}t/(\pi|t|^2)` at the root of :math:`t(1 - S_0(t)) = x` in :math:`\mathbb C^+`.
Inside the support :math:`\operatorname{Im}\zeta > 0`: the Gaussian table regularizes the sparse resolvent, and no
:math:`\eta \to 0` limit is taken.

*The solver.* A population of ``P`` values of ``X`` (and ``T'`` of ``Y``) is updated by the two equations with
random partners; the derivative populations :math:`\partial_\zeta X = X^2(1 + s\sum w^2\sum\partial Y)`,
:math:`\partial_\zeta Y = Y^2 s\sum w^2 \partial X` ride along, so that ``t`` is found by Newton's method while the
population relaxes, starting from :math:`x + i(1+x)` and lowering the imaginary part of ``z`` to 0 in stages.
Then ``t`` is held and :math:`E X`, :math:`E\partial X` are averaged over further sweeps, and one last Newton step
gives the density. ``R`` independent replicas give the estimate (their mean) and its error (three standard errors
of the mean); the bias of a finite population is checked against a four times larger one in
tests/test_cavity.py.

*Determinism.* The solver is stochastic but seeds itself: replica ``r`` at point ``x`` uses a seed made from the
parameters, ``x`` and ``r`` only, so the same input gives the same numbers, whatever the other points asked for or
the number of threads.
"""
from __future__ import annotations

import zlib
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

import numba
import numpy as np

from derive.cache import keep_fresh
from derive.errors import ParameterError
from derive.vocabulary.limit import KERNEL_FILES
from derive.vocabulary.limit.linalg import real_times

__all__ = ["Settings", "DEFAULT", "Estimate", "densities", "sweep", "solve_point", "Transform", "resolvent",
           "stieltjes", "solve_transform"]


@dataclass(frozen=True)
class Settings:
    """Population size (at ``T' <= 2``; divided by ``T'/2`` beyond), replicas and sweeps of the solver (the defaults
    aim at three digits)."""

    population: int = 1 << 13
    replicas: int = 4
    stages: int = 3
    stage_sweeps: int = 3
    average_sweeps: int = 20
    rounds: int = 4


DEFAULT = Settings()


@dataclass(frozen=True)
class Estimate:
    """The density at one point: the mean over the replicas, the error (three standard errors of the mean, plus the
    largest change of a replica's density in its last round of averaging), the replicas' values and the mean
    root ``t``."""

    density: float
    error: float
    replicas: tuple
    t: complex


@numba.njit(cache=True, nogil=True, inline="always")
def _next(state):
    """xorshift64* (Vigna 2016): the next 64-bit word of the generator held in ``state[0]``."""
    x = state[0]
    x ^= x >> np.uint64(12)
    x ^= x << np.uint64(25)
    x ^= x >> np.uint64(27)
    state[0] = x
    return x * np.uint64(2685821657736338717)


@numba.njit(cache=True, nogil=True, inline="always")
def _index(state, n):
    """A uniform integer in ``[0, n)`` (Lemire's multiply-shift on the top 32 bits)."""
    return np.int64(((_next(state) >> np.uint64(32)) * np.uint64(n)) >> np.uint64(32))


@numba.njit(cache=True, nogil=True)
def _stratified_counts(K, lam, state):
    """For each position ``u``, the ``P`` counts :math:`K_{u,i}` are the Poisson(``lam``) quantiles at the stratified
    points :math:`(j + U_j)/P`, then shuffled (Fisher–Yates): the population carries the Poisson law with no sampling
    error in the counts, only in the partners. At one nonzero weight the counts are the only randomness."""
    n, P = K.shape
    p0 = np.exp(-lam)
    for u in range(n):
        k = 0
        p = p0
        cdf = p0
        for j in range(P):
            q = (j + (_next(state) >> np.uint64(11)) * (1.0 / 9007199254740992.0)) / P
            while q > cdf and k < 1000:
                k += 1
                p *= lam / k
                cdf += p
            K[u, j] = k
        for j in range(P - 1, 0, -1):
            i = _index(state, j + 1)
            K[u, i], K[u, j] = K[u, j], K[u, i]


@numba.njit(cache=True, nogil=True, inline="always")
def _inverse(a):
    # 1/a without the scaling of the general complex division: |a| stays far from under- and overflow here
    r = 1.0 / (a.real * a.real + a.imag * a.imag)
    return complex(a.real * r, -a.imag * r)


@numba.njit(cache=True, nogil=True)
def sweep(X, dX, Y, dY, w2, s, lam, zeta, xs, dxs, K, state):
    """One update of every ``Y`` (a sequence of ``T'`` random ``X`` gives one ``Y`` per position) and every ``X``
    (Poisson numbers of random ``Y`` per position, stratified: :func:`_stratified_counts`), with the derivative
    populations; ``xs, dxs, K`` are work arrays of shapes ``(T',)``, ``(T',)``, ``(T', P)``."""
    P = X.shape[0]
    n = w2.shape[0]
    _stratified_counts(K, lam, state)
    for i in range(P):
        total = 0j
        dtotal = 0j
        for u in range(n):
            j = _index(state, P)
            xs[u] = X[j]
            dxs[u] = dX[j]
            total += real_times(w2[u], X[j])
            dtotal += real_times(w2[u], dX[j])
        for u in range(n):
            y = _inverse(-1.0 - real_times(s, total - real_times(w2[u], xs[u])))
            Y[u, i] = y
            dY[u, i] = real_times(s, y * y) * (dtotal - real_times(w2[u], dxs[u]))
    for i in range(P):
        acc = 0j
        dacc = 0j
        for u in range(n):
            for _ in range(K[u, i]):
                j = _index(state, P)
                acc += real_times(w2[u], Y[u, j])
                dacc += real_times(w2[u], dY[u, j])
        x = _inverse(-zeta - real_times(s, acc))
        X[i] = x
        dX[i] = x * x * (1.0 + real_times(s, dacc))


@numba.njit(cache=True, nogil=True)
def _means(X, dX):
    return X.mean(), dX.mean()


@numba.njit(cache=True, nogil=True)
def _linearized_root(x, t, delta, g0, dg, zeta0):
    """The root of :math:`t(1 - S_0(t)) = x` with :math:`g_D` linearized about ``zeta0``: its error is second order
    in the distance from ``zeta0``."""
    for _ in range(30):
        zeta = t / delta
        g = g0 + dg * (zeta - zeta0)
        S0 = (1.0 + zeta * g) / delta
        S1 = (g + zeta * dg) / (delta * delta)
        step = (t * (1.0 - S0) - x) / (1.0 - S0 - t * S1)
        t = t - step
        if abs(step) <= 1e-14 * abs(t):
            break
    return t


@numba.njit(cache=True, nogil=True)
def _density(t):
    return max(t.imag, 0.0) / (np.pi * abs(t) ** 2)


@numba.njit(cache=True, nogil=True)
def _replica_arrays(n, P):
    """A replica's working arrays: the token variances ``X`` and their derivatives, the sequence variances ``Y`` (started
    at -1) and theirs, one sequence's ``xs`` and ``dxs``, and the counts ``K``."""
    return (np.empty(P, dtype=np.complex128), np.zeros(P, dtype=np.complex128), np.full((n, P), -1.0 + 0j),
            np.zeros((n, P), dtype=np.complex128), np.empty(n, dtype=np.complex128), np.empty(n, dtype=np.complex128),
            np.empty((n, P), dtype=np.int32))


@numba.njit(cache=True, nogil=True)
def solve_point(x, w2, s, lam, delta, P, stages, stage_sweeps, average_sweeps, rounds, seed):
    """The root ``t`` of :math:`t(1 - S_0(t)) = x`, the density there and the change of the density in the last
    round of averaging (a measure of how far the root search still was from converged), for one replica."""
    state = np.array([np.uint64(seed) * np.uint64(0x9E3779B97F4A7C15) | np.uint64(1)], dtype=np.uint64)
    n = w2.shape[0]
    X, dX, Y, dY, xs, dxs, K = _replica_arrays(n, P)
    eta0 = 1.0 + abs(x)
    t = complex(x, eta0)
    zeta = t / delta
    for i in range(P):
        X[i] = -1.0 / zeta
    # at small x the imaginary part of z must come down to the scale of x before it is dropped
    while eta0 * 0.25 ** stages > 0.25 * abs(x) and stages < 40:
        stages += 1
    for stage in range(stages + 1):
        eta = eta0 * (0.25 ** stage) if stage < stages else 0.0
        z = complex(x, eta)
        for _ in range(stage_sweeps):
            sweep(X, dX, Y, dY, w2, s, lam, zeta, xs, dxs, K, state)
            g, dg = _means(X, dX)
            S0 = (1.0 + zeta * g) / delta
            S1 = (g + zeta * dg) / (delta * delta)
            step = (t * (1.0 - S0) - z) / (1.0 - S0 - t * S1)
            new = t - 0.7 * step
            t = new if new.imag > 0 else complex(new.real, 0.5 * t.imag)
            zeta = t / delta
    rho = _density(t)
    change = np.inf
    half = average_sweeps // 2
    for _ in range(rounds):
        sums = np.zeros(4, dtype=np.complex128)  # g and dg over the first and the second half of the sweeps
        for k in range(2 * half):
            sweep(X, dX, Y, dY, w2, s, lam, zeta, xs, dxs, K, state)
            g, dg = _means(X, dX)
            sums[2 * (k // half)] += g / half
            sums[2 * (k // half) + 1] += dg / half
        zeta0 = zeta
        t_new = _linearized_root(x, t, delta, (sums[0] + sums[2]) / 2, (sums[1] + sums[3]) / 2, zeta0)
        # the two halves' roots differ by about twice the noise of the whole: a round that moves the density by
        # no more than three times that noise (or 1e-6 of it) has converged
        noise = abs(_density(_linearized_root(x, t, delta, sums[0], sums[1], zeta0))
                    - _density(_linearized_root(x, t, delta, sums[2], sums[3], zeta0))) / 2
        new = _density(t_new)
        change = abs(new - rho)
        rho = new
        t = t_new if t_new.imag > 0 else complex(t_new.real, 1e-12 * abs(t_new))
        zeta = t / delta
        if change <= 3 * noise + 1e-6 * rho:
            change = 0.0
            break
    return t, rho, change


def _seed(key: str, x: float, replica: int) -> int:
    return zlib.crc32(f"{key}|{x!r}|{replica}".encode())


def _parameters(weights, delta, gamma) -> tuple:
    """The squares of the nonzero ``weights`` and ``delta, gamma`` as floats, checked."""
    w = np.asarray([float(v) for v in weights if float(v) != 0.0])
    if w.size == 0:
        raise ParameterError("weights", "are all zero")
    delta, gamma = float(delta), float(gamma)
    if not (delta > 0 and gamma > 0):
        raise ParameterError("delta", "delta and gamma must be > 0")
    return w**2, delta, gamma


def densities(xs, weights, delta, gamma, settings: Settings = DEFAULT, threads: int = 2) -> list[Estimate]:
    r"""The density of the model's own law at each point of ``xs`` (floats), for nonzero ``weights`` (floats, the
    zero ones left out), ``delta, gamma > 0`` (floats): :class:`Estimate` per point.

    Points are independent (each replica seeds itself from the parameters and the point) and run on ``threads``
    threads.
    """
    w2, delta, gamma = _parameters(weights, delta, gamma)
    lam = delta / gamma
    key = f"{delta!r}|{gamma!r}|{tuple(w2.tolist())!r}|{settings!r}"

    # a token's field averages about T' + r' partners, whose noise the population carries: at the same precision
    # it can shrink as T' grows (8192 at T' <= 2, 2048 at T' = 8)
    population = max(1024, settings.population * 2 // max(2, w2.size))

    def one(xv: float) -> Estimate:
        values = [solve_point(xv, w2, 1 / lam, lam, delta, population, settings.stages,
                              settings.stage_sweeps, settings.average_sweeps, settings.rounds, _seed(key, xv, r))
                  for r in range(settings.replicas)]
        rho = np.array([v[1] for v in values])
        unconverged = max(v[2] for v in values)
        error = (3 * rho.std(ddof=1) / np.sqrt(len(rho)) if len(rho) > 1 else np.inf) + unconverged
        return Estimate(float(rho.mean()), float(error), tuple(rho.tolist()), complex(np.mean([v[0] for v in values])))

    xs = [float(x) for x in xs]
    if threads <= 1 or len(xs) == 1:
        return [one(x) for x in xs]
    with ThreadPoolExecutor(threads) as pool:
        return list(pool.map(one, xs))


# ---------------------------------------------------------------------------------------------------------------
# the transforms at a fixed complex point


@dataclass(frozen=True)
class Transform:
    """A transform at one complex point: the mean over the replicas, its error (three standard errors of the mean
    plus the population's bias, each the larger of the real and the imaginary part's), the replicas' values and the
    bias: a third of the change of the mean from replicas of a quarter of the population to the full one."""

    value: complex
    error: float
    replicas: tuple
    bias: float


def _off_spectrum(point: complex, name: str) -> complex:
    point = complex(point)
    if not (point.imag > 0 or (point.imag == 0 and point.real < 0)):
        raise ParameterError(name, f"must lie in the upper half-plane or on the negative axis, got {point}")
    return point


@numba.njit(cache=True, nogil=True)
def _guarded(new, old, negative_axis):
    """A Newton step's new root kept where the transform is defined: on the negative axis there, else above it."""
    if negative_axis:
        return complex(new.real if new.real < 0 else 0.5 * old.real, 0.0)
    return new if new.imag > 0 else complex(new.real, 0.5 * old.imag)


@numba.njit(cache=True, nogil=True)
def solve_transform(z, w2, s, lam, delta, fold, P, relax_sweeps, average_sweeps, rounds, seed):
    r"""One replica at a fixed complex ``z`` (upper half-plane or negative axis): with ``fold`` the root ``t`` of
    :math:`t(1 - S_0(t)) = z` (Newton's method while the population relaxes, then rounds of averaging at a held
    ``t``), and :math:`m_S(z) = -1/t`; without, :math:`g_D(z) = EX` at :math:`\zeta = z`."""
    state = np.array([np.uint64(seed) * np.uint64(0x9E3779B97F4A7C15) | np.uint64(1)], dtype=np.uint64)
    n = w2.shape[0]
    negative_axis = z.imag == 0
    X, dX, Y, dY, xs, dxs, K = _replica_arrays(n, P)
    t = z
    zeta = t / delta if fold else z
    for i in range(P):
        X[i] = -1.0 / zeta
    for _ in range(relax_sweeps):
        sweep(X, dX, Y, dY, w2, s, lam, zeta, xs, dxs, K, state)
        if fold:
            g, dg = _means(X, dX)
            S0 = (1.0 + zeta * g) / delta
            S1 = (g + zeta * dg) / (delta * delta)
            t = _guarded(t - 0.7 * (t * (1.0 - S0) - z) / (1.0 - S0 - t * S1), t, negative_axis)
            zeta = t / delta
    value = 0j
    for _ in range(rounds):
        g = 0j
        dg = 0j
        for _ in range(average_sweeps):
            sweep(X, dX, Y, dY, w2, s, lam, zeta, xs, dxs, K, state)
            a, b = _means(X, dX)
            g += a / average_sweeps
            dg += b / average_sweeps
        if not fold:
            value += g / rounds
            continue
        t = _guarded(_linearized_root(z, t, delta, g, dg, zeta), t, negative_axis)
        zeta = t / delta
        value = -1.0 / t
    return value


def _transform(point, weights, delta, gamma, settings, fold: bool, threads: int) -> Transform:
    w2, delta, gamma = _parameters(weights, delta, gamma)
    lam = delta / gamma
    key = f"{'m' if fold else 'g'}|{delta!r}|{gamma!r}|{tuple(w2.tolist())!r}|{settings!r}"
    population = max(1024, settings.population * 2 // max(2, w2.size))
    sweeps = settings.stages * settings.stage_sweeps * 4

    def one(job) -> complex:
        P, r = job
        return solve_transform(point, w2, 1 / lam, lam, delta, fold, P, sweeps, settings.average_sweeps,
                               settings.rounds, _seed(f"{key}|{P}", point, r))

    # the replicas at the population and at a quarter of it: a finite population's bias falls like 1/P, so the
    # change from P/4 to P is three times the bias left at P
    jobs = [(population, r) for r in range(settings.replicas)] + [(population // 4, r) for r in range(settings.replicas)]
    if threads <= 1:
        values = [one(j) for j in jobs]
    else:
        with ThreadPoolExecutor(threads) as pool:
            values = list(pool.map(one, jobs))
    v, quarter = np.array(values[:settings.replicas]), np.array(values[settings.replicas:])
    if len(v) < 2:
        return Transform(complex(v.mean()), np.inf, tuple(complex(x) for x in v), np.inf)
    bias = max(abs(part(quarter.mean() - v.mean())) for part in (np.real, np.imag)) / 3
    noise = max(3 * part(v).std(ddof=1) for part in (np.real, np.imag)) / np.sqrt(len(v))
    return Transform(complex(v.mean()), float(noise + bias), tuple(complex(x) for x in v), float(bias))


def resolvent(zeta, weights, delta, gamma, settings: Settings = DEFAULT, threads: int = 2) -> Transform:
    r"""The resolvent of the token matrix, :math:`g_D(\zeta) = \lim \frac1V\operatorname{tr}(D - \zeta)^{-1} = EX`,
    at a complex ``zeta`` in the upper half-plane or on the negative axis, for nonzero ``weights`` (floats),
    ``delta, gamma > 0``: the population at ``zeta`` relaxed from :math:`X = -1/\zeta`, ``EX`` averaged over
    ``settings.rounds * settings.average_sweeps`` sweeps; :class:`Transform` over ``settings.replicas`` replicas.

    >>> g = resolvent(-1.0, [1.0], 1, 1)   # one weight: E 1/(n + 1) = 1 - 1/e, n ~ Poisson(1)
    >>> f"{g.value.real:.5f}", abs(g.value.real - (1 - float(np.exp(-1)))) <= g.error < 1e-5
    ('0.63212', True)
    """
    return _transform(_off_spectrum(zeta, "zeta"), weights, delta, gamma, settings, False, threads)


def stieltjes(z, weights, delta, gamma, settings: Settings = DEFAULT, threads: int = 2) -> Transform:
    r"""The Stieltjes transform :math:`m(z) = \int d\mu(x)/(x - z) = -1/t` of the model's own law of ``S`` at a
    complex ``z`` in the upper half-plane or on the negative axis: ``t`` the root of :math:`t(1 - S_0(t)) = z`,
    :math:`S_0(t) = \frac1\delta(1 + \zeta g_D(\zeta))`, :math:`\zeta = t/\delta`, found by Newton's method
    while the population relaxes, then corrected after each round of averaging with :math:`g_D` linearized;
    :class:`Transform` over ``settings.replicas`` replicas.

    >>> from derive.vocabulary.limit.populations import PoissonPopulation
    >>> from derive.vocabulary.limit.silverstein import GeneralizedMP
    >>> m = stieltjes(-1 + 1j, [1.0], 1, 1)   # one weight: the exact T = 1 law
    >>> exact = complex(GeneralizedMP(1, PoissonPopulation(1)).stieltjes(-1 + 1j))
    >>> abs(m.value.real - exact.real) <= m.error and abs(m.value.imag - exact.imag) <= m.error < 1e-4
    True
    """
    return _transform(_off_spectrum(z, "z"), weights, delta, gamma, settings, True, threads)


keep_fresh(globals(), *KERNEL_FILES)  # last: every kernel of the module is defined
