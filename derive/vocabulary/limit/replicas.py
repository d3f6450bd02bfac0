r"""Estimates from independent replicas of the quenched populations (:mod:`derive.vocabulary.limit.outlier`): each
replica's value at :math:`\eta` and at :math:`\eta/4`, their mean and error, and how many replicas an error target
asks for."""
from __future__ import annotations

import numpy as np

from derive.vocabulary.limit.curve import spread

__all__ = ["estimate", "replicas_needed"]


def estimate(pairs) -> tuple[float, float]:
    r"""From each replica's ``(coarse, fine)`` values (at :math:`\eta` and :math:`\eta/4`): the mean of the fine ones,
    and its error, three standard errors plus the mean change from coarse to fine (what the smoothing still holds:
    :math:`O(\eta^2)` where the law of ``D`` is smooth on the scale :math:`\eta t`, more next to a cluster of it)."""
    v = np.asarray(pairs, dtype=float)
    mean, error = spread(v[:, 1])
    return mean, error + abs(float(np.mean(v[:, 0] - v[:, 1])))


def replicas_needed(found: list, error: float | None, most: int) -> int:
    r"""The replicas at which the error of :func:`estimate` would meet the targets (:func:`limit_spike`), from the
    spread of those ``found``: three standard errors fall as the square root of their number, the smoothing part (the
    change from :math:`\eta` to :math:`\eta/4`) not at all, so three standard errors must fall below the target less
    that part. A quantity asks for none where more than ``most`` would be needed, or where the smoothing part alone
    misses its target.

    >>> replicas_needed([{"ell": (v + 2e-4, v)} for v in (0.0, 1e-3, 2.5e-3, 1e-3)], 1e-3, 100)   # 4 (1.546 / 0.8)^2 = 14.9
    15
    """
    if error is None:
        return len(found)
    n = len(found)
    needed = n
    for name, goal in (("ell", error), ("overlap", error), ("mu2c", 10 * error)):
        if not all(name in f for f in found):
            continue
        v = np.asarray([f[name] for f in found], dtype=float)
        _, e = spread(v[:, 1])
        smooth = abs(float(np.mean(v[:, 0] - v[:, 1])))
        if e + smooth > goal and smooth < goal:
            want = int(np.ceil(n * (e / (goal - smooth)) ** 2))
            if want <= most:
                needed = max(needed, want)
    return needed
