r"""The root tokens of a quenched population (:mod:`derive.vocabulary.limit.signfield`), whose averages are its
transforms: their counts of child sequences per position, drawn once per population and tilt (stratified, half
Poisson and half tilted towards the weighted degree of the point asked for, and weighted back to the Poisson law:
:func:`root_counts`, :func:`tilt`), their classes by rarity (:data:`RARE`, :func:`rarity_classes`), and the averages
over them of what their child sequences send up (:func:`root_averages`).
"""
from __future__ import annotations

import math

import numba
import numpy as np

from derive.cache import keep_fresh
from derive.vocabulary.limit import KERNEL_FILES
from derive.vocabulary.limit.cavity import _index, _next
from derive.vocabulary.limit.linalg import real_times

__all__ = ["RARE", "rarity_classes", "root_counts", "tilt", "root_averages"]


RARE = (1e-3, 1e-4, 1e-5, 1e-6)
r"""The classes of root tokens by the tail probability :math:`P(\sum_tw_t^2K_t \ge a)` of their weighted degree
``a``: at least ``1e-3``, then each decade down to ``1e-6``, then below. A token class of probability ``p`` is present
at dimension ``d`` only where :math:`d/\delta \gg 1/p`: what the limit owes to the rarer classes, a finite ``d`` does
not see (:attr:`derive.vocabulary.limit.signfield.Transforms.classes`)."""


def rarity_classes(K: np.ndarray, weight: np.ndarray, w2: np.ndarray) -> np.ndarray:
    """Each root's class of :data:`RARE`: the tail probability of its weighted degree, estimated from the roots
    themselves (their weights make the tilted half count at its Poisson mass)."""
    a = K @ w2
    values, inverse = np.unique(-a, return_inverse=True)  # descending weighted degrees
    tail = np.cumsum(np.bincount(inverse, weights=weight, minlength=values.size)) / K.shape[0]
    return np.searchsorted(-np.asarray(RARE), -tail[inverse], side="right").astype(np.int64)


@numba.njit(cache=True, nogil=True)
def _poisson_cdf(lam):
    """The Poisson(``lam``) distribution function on ``0..lam + 40 sqrt(lam) + 60`` (the masses from the mode outward
    in logarithms, so that a large ``lam`` does not underflow)."""
    size = int(lam + 40 * np.sqrt(lam) + 60)
    mode = int(lam)
    logp = np.empty(size)
    logp[mode] = mode * np.log(lam) - lam - math.lgamma(mode + 1.0) if lam > 0 else 0.0
    for k in range(mode + 1, size):
        logp[k] = logp[k - 1] + np.log(lam / k)
    for k in range(mode - 1, -1, -1):
        logp[k] = logp[k + 1] - np.log(lam / (k + 1))
    return np.cumsum(np.exp(logp))


@numba.njit(cache=True, nogil=True)
def _binomial_quantile(k, p, u):
    """The ``u``-quantile of Binomial(``k``, ``p``) (summing the masses; ``k`` is a root's count, tens at most)."""
    if p >= 1.0:
        return k
    mass = (1.0 - p) ** k
    cdf = mass
    j = 0
    while u > cdf and j < k:
        mass *= (k - j) / (j + 1.0) * p / (1.0 - p)
        j += 1
        cdf += mass
    return j


@numba.njit(cache=True, nogil=True)
def _stratified_column(state, m):
    """The ``m`` stratified uniforms :math:`(j + U_j)/m`, shuffled."""
    out = np.empty(m)
    for j in range(m):
        out[j] = (j + (_next(state) >> np.uint64(11)) * (1.0 / 9007199254740992.0)) / m
    for j in range(m - 1, 0, -1):
        i = _index(state, j + 1)
        out[i], out[j] = out[j], out[i]
    return out


@numba.njit(cache=True, nogil=True)
def root_counts(lam, tilted, samples, seed):
    r"""The roots' counts per position and their weights: half of the roots with Poisson(``lam``) counts per position,
    half with Poisson(``tilted[t]``). Independent Poisson counts are a Poisson total split by successive binomials;
    each half draws the total and every binomial at its own column of stratified uniforms (a Latin hypercube): the
    total, on which a root's ``X`` mostly depends, and each position's share, on which the field depends, carry
    their laws with no sampling error. The weight of ``K`` is :math:`p(K)/(\frac12p(K) + \frac12\tilde p(K))`, so
    that the weighted mean estimates the mean over the Poisson law."""
    state = np.array([np.uint64(seed) * np.uint64(0xD1B54A32D192ED03) | np.uint64(1)], dtype=np.uint64)
    n = tilted.shape[0]
    half = samples // 2
    K = np.zeros((2 * half, n), dtype=np.int64)
    for part in range(2):
        means = np.full(n, lam) if part == 0 else tilted.copy()
        table = _poisson_cdf(means.sum())
        u = np.empty((n, half))
        for t in range(n):
            u[t] = _stratified_column(state, half)
        for j in range(half):
            left = min(np.searchsorted(table, u[0, j]), table.shape[0] - 1)
            rest = means.sum()
            for t in range(n - 1):
                k = _binomial_quantile(left, means[t] / rest, u[t + 1, j])
                K[part * half + j, t] = k
                left -= k
                rest -= means[t]
            K[part * half + j, n - 1] = left
    logs = np.log(tilted / lam)
    shift = (tilted - lam).sum()
    weight = np.empty(2 * half)
    for m in range(2 * half):
        r = -shift
        for t in range(n):
            r += K[m, t] * logs[t]
        weight[m] = 1.0 / (0.5 + 0.5 * np.exp(r))
    return K, weight


def tilt(lam: float, a: np.ndarray, level: float) -> np.ndarray:
    r"""The tilted Poisson means :math:`\lambda e^{\theta a_t}` whose weighted degree :math:`\sum_t a_tK_t` has mean
    ``level`` (:math:`\theta = 0` where the plain mean already reaches it): the tokens whose eigenvalue lies near
    ``level`` are then sampled as often as the typical ones."""
    if lam * a.sum() >= level:
        return np.full(a.size, lam)
    lo, hi = 0.0, 1.0
    while lam * (a * np.exp(hi * a)).sum() < level:
        hi *= 2
    for _ in range(100):
        mid = 0.5 * (lo + hi)
        lo, hi = (mid, hi) if lam * (a * np.exp(mid * a)).sum() < level else (lo, mid)
    return lam * np.exp(hi * a)


@numba.njit(cache=True, nogil=True)
def root_averages(fields, w2, s, zeta, K, weight, rarity, seed):
    r"""The averages over root tokens of :math:`X, \partial X, \bar H, \partial\bar H`, of
    :math:`1\{\operatorname{Re}(1/X) > 0\}` and of 1, root ``m`` with the counts ``K[m]`` and the weight
    ``weight[m]`` (:func:`root_counts`), its child sequences drawn from the population's
    (:func:`derive.vocabulary.limit.signfield._sequence_fields`); one row per class of :data:`RARE` (``rarity[m]``:
    :func:`rarity_classes`), whose sum is the average over all roots. Where ``fields`` hold no field (two numbers per
    child, not four) :math:`\bar H = X`: the field's averages are those of ``X`` and :math:`\partial X`."""
    P, n, width = fields.shape
    field = width == 4
    state = np.array([np.uint64(seed) * np.uint64(0x9E3779B97F4A7C15) | np.uint64(1)], dtype=np.uint64)
    out = np.zeros((len(RARE) + 1, 6), dtype=np.complex128)
    samples = K.shape[0]
    for m in range(samples):
        a = 0j
        da = 0j
        b = 0j
        db = 0j
        for t in range(n):
            for _ in range(K[m, t]):
                c = _index(state, P)
                a += real_times(w2[t], fields[c, t, 0])
                da += real_times(w2[t], fields[c, t, 1])
                if field:
                    b += fields[c, t, 2]
                    db += fields[c, t, 3]
        pivot = -zeta - s * a
        x = 1.0 / pivot
        dx = x * x * (1.0 + s * da)
        row = out[rarity[m]]
        row[0] += weight[m] * x
        row[1] += weight[m] * dx
        row[2] += weight[m] * x * (1.0 + s * b)
        row[3] += weight[m] * (dx * (1.0 + s * b) + x * s * db)
        if pivot.real > 0:
            row[4] += weight[m]
        row[5] += weight[m]
    return out / samples


keep_fresh(globals(), *KERNEL_FILES)  # last: every kernel of the module is defined
