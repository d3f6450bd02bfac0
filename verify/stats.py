r"""Confidence intervals over seeds and finite-size fits.

Intervals are Student-t: for ``K`` independent trials with mean :math:`\bar x` and sample standard
deviation ``s``, :math:`\bar x \pm t_{K-1,0.975}\, s/\sqrt K`. One trial gives an infinite interval.
"""
from __future__ import annotations

import math

import numpy as np
from scipy import stats


def mean_ci(values, level: float = 0.95) -> tuple[float, float, float]:
    """``(mean, low, high)`` of the Student-t interval at ``level``.

    >>> [round(x, 4) for x in mean_ci([1.0, 2.0, 3.0])]
    [2.0, -0.4841, 4.4841]
    """
    x = np.asarray(values, dtype=float)
    mean = float(x.mean())
    if len(x) < 2:
        return mean, -math.inf, math.inf
    half = float(stats.t.ppf(0.5 + level / 2, len(x) - 1) * x.std(ddof=1) / math.sqrt(len(x)))
    return mean, mean - half, mean + half
