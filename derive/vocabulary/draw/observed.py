r"""What a user measures in one draw, from its :class:`~derive.vocabulary.draw.finite_size.DrawOutlier`: whether the
signal's eigenvalue is the top one, the top eigenpair (what PCA returns), the signal's own eigenvector wherever it
sits, the top of the bulk and the draw's threshold.

*The signal's eigenvector wherever it sits* (:func:`signal_eigenpair`). The top eigenpair
(:meth:`DrawOutlier.at <derive.vocabulary.draw.finite_size.DrawOutlier.at>`) is the largest root of the whole
:math:`S_1(t) = -1/\mu_2`, token spikes included; once a token used many times stands above the signal it is the
token's eigenvector, with an overlap :math:`O(\mu_2/V)`. Whether the signal has an eigenvector of its own is decided
without the token spikes: a root of :math:`\tilde S_1(t) = -1/\mu_2` (:math:`\tilde S_1` of the bulk and the spikes
of ``D`` aligned with the class signs) in a gap of the bulk, the one of largest squared overlap
:math:`x'(t)/(\mu_2 t\tilde S_1'(t))` (:func:`derive.vocabulary.limit.signal.plain_equations`) where there are
several. Its eigenvalue and overlap are then those of the most aligned root of the whole :math:`S_1` in that gap: a
token spike far from the signal moves its root by :math:`O(1/V)`, one within :math:`O(V^{-1/2})` of it shares the
signal's direction with it (two roots, the overlap split between them), and the most aligned is what Monte Carlo's
most aligned eigenvector measures. :math:`S_1` increases between its poles, so each gap, split at the poles inside it, holds at most
one root. Without a root of :math:`\tilde S_1` in a gap the signal has no eigenvector of its own: overlap 0.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from derive.vocabulary.draw.outliers import increasing_root
from derive.vocabulary.draw.spectrum import functions as conditional_functions

__all__ = ["Observed", "signal_eigenpair", "with_poles", "observe"]


@dataclass(frozen=True)
class Observed:
    """One draw at signal strength ``mu2`` (:func:`observe`): ``on_top`` (the signal's eigenvalue is the top one), the
    top ``eigenvalue`` and the squared ``overlap`` of its eigenvector with ``u``, the ``signal_overlap`` of the
    signal's own eigenvector (0 where it has none), the mean top of the bulk ``top`` and the draw's ``mu2_critical``."""

    on_top: bool
    eigenvalue: float
    overlap: float
    signal_overlap: float
    top: float
    mu2_critical: float


def _pieces(gaps, poles: np.ndarray) -> list[tuple[float, float]]:
    """The ``gaps`` of a bulk (in ``t``, ascending), split at the ``poles`` inside them."""
    out = []
    for ta, tb in gaps:
        cuts = [ta] + sorted(float(c) for c in poles if ta < c < tb) + [tb]
        out += list(zip(cuts[:-1], cuts[1:]))
    return out


def _roots(o, S1, poles, gaps, mu2: float) -> list[tuple[float, float, float]]:
    """``(eigenvalue, squared overlap, t)`` of every root of ``S1 = -1/mu2`` in the ``gaps`` of the bulk of ``o``, each
    gap split at the ``poles`` of ``S1`` inside it."""
    target, f, out = -1 / mu2, conditional_functions(), []
    for a, b in _pieces(gaps, poles):
        # S1 rises from its value at a (or -inf just above a pole) to its value at b (or +inf below a pole; 0 at infinity)
        lo = -math.inf if a in poles else float(S1(a))
        hi = math.inf if (b in poles or not math.isfinite(b)) else float(S1(b))
        if not lo <= target <= hi:
            continue
        start = a * (1 + 1e-14) if a in poles else a
        end = b * (1 - 1e-14) if b in poles else b
        tr = increasing_root(lambda tv: float(S1(tv)) - target, start, end)
        s0, ds0 = o.bulk.S0(tr, 1)
        ds1 = float(S1(tr, 1)[1])
        out.append((float(f["location"](tr, mu2, s0, ds0, ds1)), float(f["overlap"](tr, mu2, s0, ds0, ds1)), tr))
    return out


def signal_eigenpair(o, mu2: float) -> tuple[float, float, float] | None:
    r"""``(eigenvalue, squared overlap, t)`` of the signal's own eigenvector in the draw ``o`` at ``mu2`` (module
    docstring; ``t`` its root), or ``None`` where the signal's root lies inside the bulk (its gaps: ``o.gaps``).
    Whether the signal has an eigenvector of its own is decided without the token spikes (a root of
    :math:`\tilde S_1` in a gap of the bulk; a root next to a token's pole is that token's); its eigenvalue and overlap
    are then those of the most aligned root of the whole :math:`S_1` in the same gap.

    At :math:`D = I` it is the spiked model's outlier above the threshold :math:`\sqrt\delta` and ``None`` below:

    >>> from derive.vocabulary.draw.finite_size import draw_outlier
    >>> from derive.vocabulary.draw.spectrum import SpectralMeasures
    >>> one = np.array([1.0])
    >>> o = draw_outlier(SpectralMeasures(0.5 * one, one, one, 0 * one, 0.5, 2000), centered=True)
    >>> [round(x, 10) for x in signal_eigenpair(o, 3.0)], signal_eigenpair(o, 0.5)
    ([4.6666666667, 0.8095238095, 3.5], None)
    """
    mu2 = float(mu2)
    if not mu2 > 0:
        return None
    gaps = o.gaps
    aligned = o.signal.c[~np.isin(o.signal.c, o.bulk.c)]
    own = _roots(o, o.signal.S1, aligned, gaps, mu2)
    if not own:
        return None
    t0 = max(own, key=lambda r: r[1])[2]
    gap = next((a, b) for a, b in gaps if a <= t0 <= b)
    poles = o.full.c[~np.isin(o.full.c, o.bulk.c)]
    return max(_roots(o, o.full.S1, poles, [gap], mu2), key=lambda r: r[1])


def with_poles(o, mu2: float, own, poles) -> tuple[float, float, float]:
    """The signal's own eigenpair ``own`` (:func:`signal_eigenpair`) with further token poles ``(c, q)`` (positions,
    weights along ``s``) joined to :math:`S_1`: the most aligned root in the same gap of the bulk."""
    from derive.vocabulary.draw.spectrum import SpectralMeasures

    if not poles:
        return own
    c, q = (np.array(x, dtype=float) for x in zip(*poles))
    f = o.full
    full = SpectralMeasures(np.concatenate([f.c, c]), np.concatenate([f.p, q]), np.concatenate([f.q, q]),
                            np.concatenate([f.r, q]), f.delta, f.V)
    gap = (o.t_edge, math.inf) if own[2] > o.t_edge else next((a, b) for a, b in o.gaps if a <= own[2] <= b)
    return max(_roots(o, full.S1, full.c[~np.isin(full.c, o.bulk.c)], [gap], mu2), key=lambda r: r[1])


def observe(o, mu2: float) -> Observed:
    """The :class:`Observed` of the draw ``o`` (a :class:`~derive.vocabulary.draw.finite_size.DrawOutlier`) at
    ``mu2``."""
    on_top, eigenvalue, overlap = o.at(mu2)
    own = signal_eigenpair(o, mu2)
    return Observed(bool(on_top), float(eigenvalue), float(overlap), 0.0 if own is None else own[1],
                    float(o.expected_top), float(o.mu2_critical))
