r"""The gaps of a generalized Marchenko–Pastur law between two atoms of its population, and its right edge past the last
one, in float64 (NumPy alone).

Between two consecutive atoms :math:`c_k < c_{k+1}` the function :math:`C(t) = 1 - x'(t)` of Silverstein's equation
is convex and tends to :math:`+\infty` at both ends, so the interval holds at most one gap, :math:`\{C < 1\}`:
:func:`convex_gaps` finds the minimum of ``C`` on many intervals at once and, where it is below 1, both crossings.
Past the last atom ``C`` falls from :math:`+\infty` to 0, and its crossing of 1 is the right edge (:func:`right_edge`).
Shared by :mod:`derive.vocabulary.limit.silverstein` (the limit law's float path) and the law conditional on one draw
(:mod:`derive.vocabulary.draw.spectrum`, :mod:`derive.vocabulary.draw.quadrature`, :mod:`derive.vocabulary.draw.bulk`).
"""
from __future__ import annotations

import numpy as np

__all__ = ["crossing", "convex_gaps", "right_edge"]


def crossing(C, left, right, decreasing: bool) -> np.ndarray:
    """The crossing of ``C = 1`` in each ``[left, right]`` where ``C`` is monotone (``decreasing`` or increasing), by
    regula falsi with the Illinois halving (order 1.44; Dowell and Jarratt 1971), a bisection step wherever an end's
    value is not finite (a pole at ``left`` or ``right``, never evaluated: the first step of each bisects) or the
    secant leaves the bracket, until every bracket is within four ulps or a point has ``C = 1``: some 15 evaluations
    of ``C`` instead of the 64 of bisection, each a sum over every atom.

    >>> round(float(crossing(lambda t: 1 / t, [0.5], [4.0], True)[0]), 14)
    1.0
    """
    lo, hi = np.array(left, dtype=float), np.array(right, dtype=float)
    sign = 1.0 if decreasing else -1.0
    glo, ghi = np.full(lo.shape, np.inf), np.full(hi.shape, -np.inf)  # sign (C - 1): > 0 below the crossing
    side = np.zeros(lo.shape, dtype=int)
    for _ in range(100):
        open_ = hi - lo > 4 * np.finfo(float).eps * np.maximum(np.abs(lo), np.abs(hi))
        if not open_.any():
            break
        secant = np.isfinite(glo) & np.isfinite(ghi)
        with np.errstate(invalid="ignore", divide="ignore"):
            t = np.where(secant, (lo * ghi - hi * glo) / (ghi - glo), (lo + hi) / 2)
        t = np.where(secant & (t > lo) & (t < hi), t, (lo + hi) / 2)
        g = sign * (np.asarray(C(t), dtype=float) - 1)
        up = open_ & (g > 0)
        down = open_ & (g < 0)
        # Illinois: an end kept twice in a row has its value halved, so that the secant moves it too
        ghi = np.where(up & (side == 1), ghi / 2, ghi)
        glo = np.where(down & (side == -1), glo / 2, glo)
        lo, glo = np.where(up, t, lo), np.where(up, g, glo)
        hi, ghi = np.where(down, t, hi), np.where(down, g, ghi)
        side = np.where(up, 1, np.where(down, -1, side))
        hit = open_ & (g == 0)
        lo, hi = np.where(hit, t, lo), np.where(hit, t, hi)
    return (lo + hi) / 2


def convex_gaps(C, lo: np.ndarray, hi: np.ndarray, points: int = 64) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(index, ta, tb)``: the intervals ``(lo, hi)`` (between poles of a convex ``C``) that hold a gap, and its ends.
    ``C`` is evaluated on a grid of ``points`` per interval. Where its least value there is below 1, that point lies
    inside the gap. Where the grid's least value ``C_b`` is at least 1, convexity bounds the minimum below by
    ``min(2C_b - C_{b-1}, 2C_b - C_{b+1})`` (``C`` lies above the line through two grid points beyond them), and an
    interval whose bound is above 1 holds no gap. Only the intervals left undecided are searched by 40
    golden-section steps around the grid's best point (to 4e-9 of three grid cells: ``C`` is flat there, and it moves
    by the square of that, below its own rounding). Then both crossings of ``C = 1`` are found from a point inside
    the gap (:func:`crossing`, whose result does not depend on that point). ``C`` takes a one-dimensional array of
    points. A gap narrower than ``1/points`` of its interval may be missed.

    >>> C = lambda t: 0.01 / t**2 + 0.01 / (1 - t) ** 2   # two atoms at 0 and 1
    >>> index, ta, tb = convex_gaps(C, np.array([0.0]), np.array([1.0]))
    >>> index, round(float(C(ta)[0]), 12), round(float(C(tb)[0]), 12), round(float(ta[0] + tb[0]), 12)  # symmetric
    (array([0]), 1.0, 1.0, 1.0)
    >>> convex_gaps(lambda t: 0.26 / t**2 + 0.26 / (1 - t) ** 2, np.array([0.0]), np.array([1.0]))[0]   # min 2.08
    array([], dtype=int64)
    >>> C = lambda t: 0.124999 / t**2 + 0.124999 / (1 - t) ** 2   # min 0.999992 at 1/2, between two grid points
    >>> bool(C(np.array([31.5 / 64]))[0] > 1), convex_gaps(C, np.array([0.0]), np.array([1.0]))[0]
    (True, array([0]))
    """
    lo, hi = np.asarray(lo, dtype=float), np.asarray(hi, dtype=float)
    if not len(lo):
        return np.zeros(0, dtype=int), np.zeros(0), np.zeros(0)
    u = (np.arange(points) + 0.5) / points
    grid = lo[:, None] + (hi - lo)[:, None] * u[None, :]
    values = C(grid.ravel()).reshape(grid.shape)
    rows = np.arange(len(lo))
    best = np.argmin(values, axis=1)
    tmin, least = grid[rows, best], values[rows, best]
    bound = np.minimum(2 * least - values[rows, np.maximum(best - 1, 0)],
                       2 * least - values[rows, np.minimum(best + 1, points - 1)])
    # an end of the grid has no neighbour beyond it; a margin far above C's rounding keeps a bound at 1 undecided
    undecided = (least >= 1) & ((best == 0) | (best == points - 1) | (bound <= 1 + 1e-9))
    if undecided.any():
        k = best[undecided]
        a = lo[undecided] + (hi - lo)[undecided] * np.maximum(k - 1, 0) / points
        b = lo[undecided] + (hi - lo)[undecided] * np.minimum(k + 2, points) / points
        golden = (np.sqrt(5) - 1) / 2
        for _ in range(40):
            x1, x2 = b - golden * (b - a), a + golden * (b - a)
            left = C(x1) < C(x2)
            a, b = np.where(left, a, x1), np.where(left, x2, b)
        tmin[undecided] = (a + b) / 2
        least[undecided] = C(tmin[undecided])
    index = np.flatnonzero(least < 1)
    return index, crossing(C, lo[index], tmin[index], True), crossing(C, tmin[index], hi[index], False)


def right_edge(C, top: float) -> float:
    """The right edge in ``t``: the crossing of ``C = 1`` past the top pole ``top``, where ``C`` falls from ``+inf`` to 0.

    >>> round(right_edge(lambda t: 1 / (t - 1) ** 2, 1.0), 12)   # one atom at 1: C = 1 at t = 2
    2.0
    """
    far = 2 * top
    while C(far) >= 1:
        far *= 2
    return float(crossing(C, [top], [far], True)[0])
