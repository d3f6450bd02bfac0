r"""The threshold at dimension ``d`` with the draw's largest token count as a control variate (one nonzero weight).

A draw's threshold :math:`X` (where the signal's eigenvalue reaches the top of its own bulk) is, up to
:math:`O(d^{-1/2})`, a function of its largest drawn count ``M`` (below :math:`k_0`, the first count averaged over,
:mod:`derive.vocabulary.draw.rare_counts`): :math:`g(M) = \max(\mu_{2,c}, c_M/(\psi(c_M) - c_M))`
(:func:`derive.vocabulary.limit.topbulk.token_threshold`). So

.. math:: \hat\mu_{2,c}(d) = \overline{X - g(M)} + E\,g(M)

is unbiased up to the law of ``M``, and its sampling error is that of the residuals, several times smaller than the
draws' own (0.09 against 0.77 per draw at ``d = 2000``, ``delta = gamma = 1``). With Poissonized numbers of tokens per
count, :math:`P(M \le m) = \exp(-\sum_{m < k < k_0}\Lambda_k)` (:func:`derive.vocabulary.draw.rare_counts.count_mean`).
Written as :math:`E\,g(M) = g(m_0) + \sum_{m \ge m_0}(g(m + 1) - g(m))\,P(M > m)`, the error of that approximation is
at most :math:`\sum_m |g(m + 1) - g(m)|` times the bound of :func:`~derive.vocabulary.draw.rare_counts.poisson_error`
at ``m + 1``: it bounds the events "no count at or above ``m + 1``"; the event here is on the counts from ``m + 1``
to :math:`k_0 - 1` only, fewer tokens for the conditioning on the total to move.
"""
from __future__ import annotations

import math

import mpmath
import numpy as np

from derive.vocabulary.draw.rare_counts import count_mean, poisson_error

__all__ = ["SPAN", "controlled_threshold"]


SPAN = 60
"""Most counts the law of the largest one may spread over for the control variate (each needs its token's threshold,
a sum over the law of the counts): beyond, at a reuse ``N/V`` of about 20 and more, the plain mean is kept."""


def controlled_threshold(X, M, law, V: int, N: int, k0: int | None) -> tuple[float, float, float] | None:
    r"""The mean threshold at dimension ``d`` from each draw's threshold ``X`` and largest drawn count ``M`` (module
    docstring), on the limit law ``law`` at one nonzero weight
    (:class:`~derive.vocabulary.limit.silverstein.GeneralizedMP`), ``V`` tokens, ``N`` sequences, the counts from
    ``k0`` on averaged over (``None``: none): ``(mean, error, se)``, the ``error`` three standard errors ``se`` of the
    residuals plus the bound of the Poisson approximation of the law of ``M`` (the spread over the draws stays
    theirs); ``None`` where that law spreads over more than :data:`SPAN` counts or the limit has no outlier.

    >>> from derive.vocabulary.limit.populations import PoissonPopulation
    >>> from derive.vocabulary.limit.silverstein import GeneralizedMP
    >>> L = GeneralizedMP(1, PoissonPopulation(1))
    >>> e = controlled_threshold([3.0, 3.8], [5, 6], L, 2000, 2000, 9)  # residuals 0.203, 0.128; E g(M) 3.58
    >>> round(e[0], 2), round(e[2], 3)
    (3.74, 0.038)
    """
    from derive.vocabulary.limit.signal import signal_windows
    from derive.vocabulary.limit.topbulk import token_threshold

    X, M = np.asarray(X, dtype=float), np.asarray(M, dtype=int)
    top = k0 - 1 if k0 is not None else int(M.max()) + 40
    lams = {k: count_mean(V, N, k) for k in range(1, top + 1)}
    # P(M <= m) for m = 0..top: no token at any count from m + 1 to top
    above = np.concatenate([np.cumsum([lams[k] for k in range(top, 0, -1)])[::-1], [0.0]])
    cdf = np.exp(-above)
    lo = min(int(M.min()), int(np.searchsorted(cdf, 1e-12)))
    if top - lo > SPAN:
        return None
    with mpmath.workdps(15):
        windows = signal_windows(law)
        if not windows:  # the limit has no outlier: no threshold to control
            return None
        limit = float(windows[0][0])
        # no token drawn (m = 0): the top is the bulk's own edge
        g = {m: max(limit, float(token_threshold(law, m))) if m > 0 else limit for m in range(lo, top + 1)}
    mean_g = g[lo] * cdf[lo] + sum(g[m] * (cdf[m] - cdf[m - 1]) for m in range(lo + 1, top + 1))
    bias = sum(abs(g[m + 1] - g[m]) * poisson_error(V, N, m + 1) for m in range(lo, top))
    residual = X - np.array([g[int(m)] for m in M])
    n = len(X)
    se = float(residual.std(ddof=1) / math.sqrt(n))
    return float(residual.mean() + mean_g), float(3 * se + bias), se
