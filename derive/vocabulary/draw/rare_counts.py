r"""The model at the user's ``d`` with one nonzero weight, for every ``d`` from 10 to :math:`10^9`: the draws of the
token counts (:mod:`derive.vocabulary.draw.token_counts`), with the rare counts above the signal integrated out.

*Why the plain draws are not enough.* The probability that the signal's eigenvalue is the top one is, at large ``d``,
:math:`\exp(-\sum_{k \ge k^*} V p_k)`, :math:`k^*` the first count whose spike :math:`c_k` lies above the signal's root
(:mod:`derive.vocabulary.limit.topbulk`): the event of one token among :math:`10^6` being used :math:`k^*` times. A
plain draw samples it, so its error is binomial (0.015 at 1000 draws and probability 1/2), and so are those of the top
eigenvalue and its overlap, which jump with it.

*The method* (``integrate=True``): each draw's histogram is exact
(:func:`derive.vocabulary.draw.token_counts.class_histograms`); the counts :math:`k \ge k_0` are taken out of it and
averaged over instead
(:func:`derive.vocabulary.draw.values.draw_values`), as independent Poisson numbers of tokens with means
:math:`\Lambda_k = V P(\mathrm{Bin}(N, 1/V) = k)` (each token's count is exactly :math:`\mathrm{Bin}(N, 1/V)`: a
sequence's token is in its class with probability 1/2 and is then one of ``V/2``). :math:`k_0` is the first count above
both the signal's root and the draw's own top (found on the first draw, raised on a draw that needs it, with the
decision taken from the counts below :math:`k_0` alone, which keeps the average unbiased), and no count at or above it
has :math:`\Lambda_k > ` :data:`LAMBDA_MAX` (such a count is present in every draw; it is drawn with the rest).

Left to sampling: the counts below :math:`k_0`, whose fluctuation moves the bulk and the signal by :math:`O(d^{-1/2})`
per draw (the spread over draws), and whether a count just below the signal makes a token spike near it (present, such a
token repels the signal's root, so it is drawn, not averaged). The
Poisson approximation of the counts at or above :math:`k_0` errs by :math:`O(\Lambda^2 k_0^2/(\lambda V))`
(:math:`q = P(n \ge k_0)`, :math:`\lambda = N/V`): :func:`poisson_error` gives the bound used, :math:`7\cdot10^{-5}`
at the issue's point at :math:`d = 10^6`.
"""
from __future__ import annotations

import math

import numpy as np

from derive.vocabulary.draw.observed import signal_eigenpair
from derive.vocabulary.draw.token_counts import class_histograms, count_measures
from derive.vocabulary.draw.values import draw_values

__all__ = ["LAMBDA_MAX", "POISSON_MAX", "count_mean", "poisson_error", "count_values"]

LAMBDA_MAX = 50.0
r"""Largest expected number of tokens :math:`\Lambda_k` of a count that is averaged over rather than drawn (a count
with more is present in every draw, and is a cluster of the bulk rather than token spikes:
:data:`derive.vocabulary.draw.finite_size.TW_RUN`)."""


POISSON_MAX = 1e-3
"""Largest :func:`poisson_error` at which the counts are averaged over; beyond it (small ``V``) every count is drawn."""


def count_mean(V: int, N: int, k: int) -> float:
    r""":math:`\Lambda_k = V P(\mathrm{Bin}(N, 1/V) = k)`, the expected number of tokens used ``k`` times.

    >>> round(count_mean(10**6, 10**6, 9), 4), round(10**6 * math.exp(-1) / math.factorial(9), 4)
    (1.0137, 1.0138)
    """
    if k > N:
        return 0.0
    p = 1 / V
    log = sum(math.log1p(-i / N) for i in range(k)) + k * math.log(N * p) - math.lgamma(k + 1) \
        + (N - k) * math.log1p(-p)
    return V * math.exp(log)


def poisson_error(V: int, N: int, k0: int) -> float:
    r"""A bound of the error of the Poisson approximation of the numbers of tokens used at least ``k0`` times, on a
    probability: the largest over :math:`m \ge k_0` of :math:`2e^{-L_m}L_m^2m^2/(\lambda V)`,
    :math:`L_m = \sum_{k \ge m}\Lambda_k`. What the average uses is the law of the largest count: the events "no token
    used ``m`` times or more", of chance :math:`e^{-L_m}`, and "one such token", :math:`L_me^{-L_m}`. The occupancy
    counts given their total are Poisson counts conditioned on it; conditioning moves the first by a relative
    :math:`\frac12L_mq_mm^2/\lambda` (:math:`q_m = L_m/V`; the local limit theorem of the total with and without those
    tokens) and the second by a relative :math:`q_mm^2/\lambda`: together :math:`\frac32e^{-L_m}L_m^2m^2/(\lambda V)`,
    doubled for the next orders and the mixture over the two classes' sizes. ``tests/test_user_d.py`` holds it to the
    exact occupancy law at ``V, N`` = (200, 200), (400, 200), (1000, 1000): it covers the error there and is 3 to 10
    times it.

    >>> poisson_error(10**6, 10**6, 9) < 1e-4
    True
    """
    lam = N / V
    means, k = [], k0
    while not means or (means[-1] > 1e-12 * means[0] and k < k0 + 200):
        means.append(count_mean(V, N, k))
        k += 1
    tails = np.cumsum(means[::-1])[::-1]
    return float(max(2 * math.exp(-L) * L**2 * m**2 / (lam * V) for m, L in zip(range(k0, k), tails)))


def _reference(o, own) -> float:
    """The point above which a spike of ``D`` is the top when present: the larger of the signal's root (``own``, its
    :func:`~derive.vocabulary.draw.observed.signal_eigenpair`) and the draw's own top."""
    return max(o.t_top, o.t_last, own[2] if own is not None else 0.0)


def count_values(weight: float, V: int, N: int, d: int, centered: bool, mu2: float, draws: int, seed: int,
                 integrate: bool = True) -> tuple[list, dict]:
    r"""The :class:`~derive.vocabulary.draw.values.DrawValues` of ``draws`` draws of the token counts (draw ``j`` from
    ``SeedSequence(seed).spawn(draws)[j]``), with the counts at and above :math:`k_0` averaged over where
    ``integrate`` and their Poisson approximation is within :data:`POISSON_MAX` (module docstring), and
    ``{"k0": k0, "poisson_error": bound, "largest": counts}`` (``k0`` ``None`` where every count is drawn, the bound
    then 0; ``counts`` each draw's largest count below ``k0``, or ``None`` where a draw raised ``k0``)."""
    from derive.vocabulary.draw.finite_size import draw_outlier

    scale = (d / N) * weight**2  # c_k = delta (V/N) w^2 k

    def outlier(plus, minus, top=None):
        cut = slice(None) if top is None else slice(0, top)
        return draw_outlier(count_measures(plus[cut], minus[cut], weight, V, N, d, centered), centered)

    def first_above(ref: float) -> int:
        k = max(1, int(math.floor(ref / scale)) + 1)
        while k * scale <= ref:
            k += 1
        while count_mean(V, N, k) > LAMBDA_MAX:
            k += 1
        return k

    children = np.random.SeedSequence(seed).spawn(int(draws))
    k0 = None
    if integrate:  # the first count above the signal's root (or, without one, above the draw's top), on the first draw
        pilot = outlier(*class_histograms(np.random.default_rng(children[0]), V, N))
        own = signal_eigenpair(pilot, mu2)
        k0 = first_above(own[2] if own is not None else max(pilot.t_top, pilot.t_last))
        if poisson_error(V, N, k0) > POISSON_MAX:  # the counts to average over are not rare enough: plain draws
            k0 = None
    first, out, largest = k0, [], []
    for child in children:
        plus, minus = class_histograms(np.random.default_rng(child), V, N)
        largest.append(max(int(np.flatnonzero(h[:k0])[-1]) if np.any(h[:k0]) else 0 for h in (plus, minus)))
        if k0 is None:
            out.append(draw_values(outlier(plus, minus), mu2, d))
            continue
        while True:
            o = outlier(plus, minus, k0)
            own = signal_eigenpair(o, mu2)
            if k0 * scale > _reference(o, own):
                break
            k0 += 1
        hi = max(k0 + 40, plus.size, minus.size)
        above = [(k * scale, count_mean(V, N, k)) for k in range(k0, hi)]
        # counts with fewer than 1e-12 expected tokens change no quantity by more than that (and their poles, that
        # close to the atom, are below the precision of a root)
        out.append(draw_values(o, mu2, d, [(c, lam) for c, lam in above if lam > 1e-12], own))
    # the bound at the first k0 covers every larger one (a maximum over the counts above it)
    return out, {"k0": k0, "poisson_error": poisson_error(V, N, first) if first is not None else 0.0,
                 "largest": largest if k0 == first else None}
