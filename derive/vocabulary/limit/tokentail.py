r"""What a user measures at dimension ``d`` from the limit's law of token spikes: the method of ``derive spike --d`` for
more than one nonzero weight beyond the sampled range (:mod:`derive.vocabulary.draw.user_d`).

*The picture* (``notes/finite_vocabulary.md``). A token of ``D`` stands apart from the bulk when it is used often: its
spike ``c`` is where its pivot in the cavity equations vanishes, and the share :math:`F(t)` of tokens whose spike lies
above ``t`` is the share of the populations' root tokens whose pivot is positive at ``t``
(:attr:`derive.vocabulary.limit.curve.Point.above`). Among :math:`V = d/\delta` tokens the spikes above ``t`` are
nearly independent and rare: their number is Poisson with mean :math:`VF(t)`, so the largest spike :math:`c_{\max}`
has :math:`P(c_{\max} \le t) = e^{-VF(t)}` and the signal's eigenvalue (its root :math:`t_s`) is the top one with
probability

.. math:: P_\text{top} = e^{-VF(t_s)} = e^{-d\,m}, \qquad m = F(t_s)/\delta \text{ (the limit's ``bulk_mass_above``)}.

A token spike at ``c`` is the eigenvalue :math:`x(c) = c(1 - S_0(c))` of ``S`` and the signal, with the bulk's top at
``c``, has its threshold at :math:`-1/S_1(c)`; both maps are those of the law *without* the token classes a draw holds
only a few tokens of (rarer than :func:`kept_class`: each present token adds :math:`O(1/V)` to the transforms, and
kept at its mean mass such a class would put a pole where a draw has one token). So, with :math:`P(c_{\max} > t) =
1 - e^{-VF(t)}` and ``f`` increasing above the bulk,

.. math:: E\,f(c_{\max}) = f(t_0) + \int_{t_0}^\infty f'(t)\,P(c_{\max} > t)\,dt

for the top of the bulk (:math:`f = x`), the threshold (:math:`f = -1/S_1`) and the top eigenvalue
(:math:`\ell + E(x(c_{\max}) - \ell)^+`). On a grid of ``t`` the integral lies between the sums with ``P`` at either
end of each cell (``P`` decreases): their mean is the estimate, half their difference part of the error.

*Errors* (each quantity's ``error`` is the sum): three standard errors over the replicas (each replica's quantities
computed from its own population); the grid's bracket; below the lowest point ``t_0`` of the grid the event
:math:`c_{\max} < t_0` (probability :math:`e^{-VF(t_0)}`) times the range of ``f`` there; above the highest the
chance of a spike there times ``f``'s value; the order of the signal and the spikes near it, whose eigenvalues
fluctuate by :math:`O(d^{-1/2})` (:mod:`derive.vocabulary.draw.values`): ``P_top`` taken at :math:`t_s \pm
3\sigma_t`; and for the signal's own eigenvalue and overlap the classes a draw holds a few tokens of, between the limit
with them and without them (:func:`signal_bracket`).
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from derive.vocabulary.limit.roottokens import RARE

__all__ = ["PRESENT", "NEGLIGIBLE", "SHARE_FACTOR", "kept_class", "TailGrid", "signal_bracket", "window", "at_dimension"]

PRESENT = 100.0
r"""Expected tokens of a class below which a draw holds it as a few spikes, not at its mass: the transforms at ``d``
leave out the classes of :data:`~derive.vocabulary.limit.roottokens.RARE` rarer than ``PRESENT / V``."""

NEGLIGIBLE = 1e-3
r"""The expected number of spikes above the grid's highest point: beyond it the chance of a spike is left to the
error."""

SHARE_FACTOR = 3.0
r"""How far, either way, the populations' share of tokens whose spike lies above ``t`` may be off at more than one
nonzero weight: against the eigenvalues of 64 sampled token matrices (``T = 2``, causal, iid, ``V = N = 2000``) the
expected number above ``y`` = 2.8, 3.0, 3.3, 3.6 was 7.51, 4.67, 1.24, 0.92 (16 replicas) against 7.22, 3.33, 1.25,
0.34 (three standard errors 0.15 to 0.6 and 0.2 to 0.8): up to 2.7 times too many where a cluster of heavy tokens
straddles ``y`` (``notes/finite_vocabulary.md``). At one nonzero weight ``D`` is diagonal and the share is exact (1)."""


def kept_class(V: float) -> int:
    r"""The index ``k`` of :data:`~derive.vocabulary.limit.roottokens.RARE` whose bound is the smallest at least
    ``PRESENT / V``: the transforms at ``d`` keep the root tokens of tail probability at least ``RARE[k]`` (at most
    :math:`0`, the coarsest, where ``PRESENT / V`` exceeds ``RARE[0]``).

    >>> kept_class(10**4), kept_class(10**6), kept_class(10**7), kept_class(10**9)
    (0, 1, 2, 3)
    """
    k = 0
    for j, q in enumerate(RARE):
        if q >= PRESENT / V:
            k = j
    return k


@dataclass(frozen=True)
class TailGrid:
    r"""The limit on a grid of real ``t`` above the main bulk, per replica ``r``: ``t`` (ascending, ``J`` points),
    ``share[r, j]`` the share of tokens whose spike lies above ``t[j]``, and ``x[r, j, k]``, ``S1[r, j, k]`` the maps
    without the root tokens rarer than ``RARE[k]``; ``edge``: the grid starts at the main bulk, its first point the
    first outside it."""

    t: np.ndarray
    share: np.ndarray
    x: np.ndarray
    S1: np.ndarray
    edge: bool = False


def _threshold(S1: np.ndarray) -> np.ndarray:
    return np.where(S1 < 0, -1 / np.minimum(S1, -1e-300), 0.0)


def _expected(f: np.ndarray, above: np.ndarray) -> tuple[float, float]:
    r"""``E f(c)`` on the grid from ``f`` and ``above[j] = P(c > t[j])``, starting at ``f[0]``: each cell's change of
    ``f`` times the mean of ``P`` at its ends, and the bound of that rule where ``P`` is monotone in each cell, each
    cell's :math:`|\Delta f|` times half the change of ``P`` across it."""
    df = np.diff(f)
    return (float(f[0] + np.sum(df * 0.5 * (above[1:] + above[:-1]))),
            float(np.sum(np.abs(df) * 0.5 * np.abs(above[:-1] - above[1:]))))


def signal_bracket(full: float, without: float) -> tuple[float, float]:
    """The midpoint of the limit's value ``full`` and its value ``without`` the classes a draw holds a few tokens of,
    and half their distance: a draw holds such a class's tokens or not, and its signal lies between."""
    return 0.5 * (full + without), 0.5 * abs(full - without)


def window(grid: TailGrid, t_signal: float, ell: float, V: float) -> tuple[float, float]:
    r"""The signal's root ``t_signal`` less and plus three of its fluctuations, where the order of the signal and the
    token spikes is not settled: the eigenvalue fluctuates by :math:`\sigma_s^2 = 2\ell^2x'(t_s)/V`
    (:mod:`derive.vocabulary.draw.values`), in ``t`` by :math:`\sigma_s/x'` (the slope of the replicas' mean ``x``
    on the grid, without the classes a draw holds a few of). The whole grid where ``x`` does not rise there."""
    x = grid.x[:, :, kept_class(V)].mean(axis=0)
    t = grid.t
    i = min(max(int(np.searchsorted(t, t_signal)), 1), t.size - 1)
    slope = (x[i] - x[i - 1]) / (t[i] - t[i - 1])
    if not slope > 0:
        return float(t[0]), float(t[-1])
    sigma = math.sqrt(2 * ell**2 * slope / V) / slope
    return t_signal - 3 * sigma, t_signal + 3 * sigma


def at_dimension(grid: TailGrid, signal: dict | None, d: float, delta: float, gamma: float, mu2: float,
                 factor: float = 1.0) -> dict:
    r"""The six quantities of :data:`derive.vocabulary.draw.values.FIELDS` at dimension ``d`` (:math:`V = d/\delta`),
    each ``(mean, error, se)``, ``se`` the replicas' standard error (module docstring), and ``kept``: the tail
    probability of the rarest class kept at its mass. ``signal``: per replica (the grid's first) ``t`` (the signal's
    root), ``above`` (the share of tokens above it), ``window`` (the shares at either end of :func:`window`), ``ell``
    and ``overlap``; ``rare``, the limit's ``(q, eigenvalue, overlap)`` without the classes rarer than ``q``
    (:attr:`derive.vocabulary.limit.outlier.LimitSpike.rare`); ``ell_error`` and ``overlap_error``, the limit's
    errors; ``counts``, a token's mean number of uses where its spike is at the signal (:math:`N = d/\gamma`
    sequences draw them from a binomial law, which the limit's Poisson law approximates to a relative
    :math:`k^2/N`: a part of the error of ``P_top``). ``None`` where the limit has no outlier: the signal is then in
    the bulk, not on top (its overlap 0), and the top eigenvalue is the bulk's. ``factor``: how far the shares of
    tokens above may be off, either way (:data:`SHARE_FACTOR`); each quantity's error covers its values with the
    shares so scaled.
    """
    V = d / delta
    k = kept_class(V)
    # a finite sample's bulk ends within the Tracy-Widom scale n^(-2/3) (relative) of the limit's edge
    edge_scale = min(V, d / gamma) ** (-2 / 3)
    base = _summary(grid, signal, V, k, 1.0, edge_scale)
    if factor != 1.0:
        for scale in (factor, 1 / factor):
            other = _summary(grid, signal, V, k, scale, edge_scale)
            for name, (mean, error, se) in base.items():
                base[name] = (mean, error + abs(other[name][0] - base[name][0]) / 2, se)
    top, critical = base["top"], base["mu2_critical"]
    if signal is None:
        return {"on_top": (0.0, 0.0, 0.0), "eigenvalue": top, "overlap": (0.0, mu2 / V, 0.0),
                "signal_overlap": (0.0, mu2 / V, 0.0), "top": top, "mu2_critical": critical, "kept": RARE[k]}
    p, p_err, p_se = base["on_top"]
    shares = float(np.mean(signal["above"]))
    p_err += base["order"][1] + p * V * shares * signal["counts"] ** 2 / (d / gamma)
    rare = {q: (e, o) for q, e, o in signal["rare"]}
    ell, ell_half = signal_bracket(float(np.mean(signal["ell"])), rare[RARE[k]][0])
    ov, ov_half = signal_bracket(float(np.mean(signal["overlap"])), rare[RARE[k]][1])
    ell_err, ov_err = ell_half + signal["ell_error"], ov_half + signal["overlap_error"]
    excess, excess_err, excess_se = base["excess"]
    return {"on_top": (p, p_err, p_se),
            "eigenvalue": (ell + excess, ell_err + excess_err, excess_se),
            "overlap": (p * ov, p_err * ov + p * ov_err + mu2 / V, p_se * ov),
            "signal_overlap": (ov, ov_err, ov_err / 3),
            "top": top,
            "mu2_critical": critical,
            "kept": RARE[k]}


def _summary(grid: TailGrid, signal: dict | None, V: float, k: int, scale: float, edge_scale: float) -> dict:
    """The replicas' means, errors (three standard errors and the brackets) and standard errors of the quantities
    :func:`at_dimension` assembles, with every share of tokens above multiplied by ``scale``; ``edge_scale``: how far,
    relative to it, a finite sample's main edge may lie from the limit's."""
    t = grid.t
    names = ("on_top", "top", "mu2_critical", "excess", "order")
    per: dict = {name: [] for name in names}
    bracket: dict = {name: [] for name in names}
    for r in range(grid.share.shape[0]):
        share, x, g = scale * grid.share[r], grid.x[r, :, k], _threshold(grid.S1[r, :, k])
        above = 1 - np.exp(-V * share)  # P(c_max > t[j])
        # the lowest point above the classes kept at their mass
        start = int(np.argmax(grid.share[r] < RARE[k]))
        below = math.exp(-V * share[start])
        beyond = V * share[-1]
        for name, f in (("top", x), ("mu2_critical", g)):
            mean, half = _expected(f[start:], above[start:])
            per[name].append(mean)
            if grid.edge and start == 0 and f.size > 1:
                # no spike above t[0]: the top is the main bulk's edge, within the cell below t[0], across which x
                # (convex from its edge, where x' = 0) rises less than across the cell above; S1, smooth in t, changes
                # about as much as there (twice that is the bound); a finite sample's edge lies within edge_scale
                missed = 2 * abs(f[1] - f[0]) + (edge_scale * abs(f[0]) if name == "top" else 0.0)
            else:
                missed = abs(f[start])
            bracket[name].append(half + below * missed + beyond * abs(f[-1]))
        if signal is None:
            continue
        ts, ell = signal["t"][r], signal["ell"][r]
        p = math.exp(-V * scale * signal["above"][r])
        j = int(np.searchsorted(t, ts))
        if j <= start:
            # the signal below the spikes' range: a spike stands above it unless none reaches t[start]
            per["excess"].append(per["top"][-1] - ell)
            bracket["excess"].append(bracket["top"][-1] + below * abs(ell))
        else:
            mean, half = _expected(np.concatenate([[ell], x[j:]]), np.concatenate([[1 - p], above[j:]]))
            per["excess"].append(mean - ell)
            bracket["excess"].append(half + beyond * abs(x[-1]))
        lo, hi = signal["window"][r]
        per["order"].append(0.0)
        bracket["order"].append(0.5 * abs(math.exp(-V * scale * hi) - math.exp(-V * scale * lo)))
    if signal is not None:
        # every replica of the signal's root, not only the grid's
        per["on_top"] = [math.exp(-V * scale * a) for a in signal["above"]]
        bracket["on_top"] = [0.0]
    out = {}
    for name in names:
        v = np.asarray(per[name])
        if not v.size:
            continue
        se = float(v.std(ddof=1) / math.sqrt(v.size)) if v.size > 1 else math.inf
        out[name] = (float(v.mean()), float(3 * se + np.mean(bracket[name])), se)
    return out
