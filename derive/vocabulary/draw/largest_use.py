r"""A control variate for the threshold at dimension ``d`` from sampled token matrices: each draw's largest weighted use
of a token, :math:`Y = \max_v \sum_n A_{vn}^2` (the largest diagonal entry of :math:`AA^\top`), which sets the
draw's heaviest token spike and with it most of the draw's threshold (a correlation of 0.90 at issue 42's ``T = 5``
point, ``d = 1000``; notes/finite_vocabulary.md).

Its mean needs no eigenvalue: it is estimated from many more draws of the token matrix alone
(:func:`use_mean`, milliseconds a draw against seconds for an eigen-decomposition), independent of the sampled ones.
The regression estimator (two-phase sampling; Cochran, *Sampling Techniques*, 1977, section 12.6)
:math:`\bar X - \hat\beta(\bar Y - \hat\mu_Y)` then has the variance of the residuals :math:`X - \hat\beta Y` over
the ``n`` draws plus :math:`\hat\beta^2` times that of :math:`\hat\mu_Y` (:func:`controlled_mean`); its bias from
:math:`\hat\beta` is :math:`O(1/n)` of the variance, below the standard error.
"""
from __future__ import annotations

import math

import numpy as np

from derive.errors import ParameterError
from derive.vocabulary.draw.tokenmatrix import TokenMatrix

__all__ = ["USE_DRAWS", "USE_TOKENS", "use_draws", "largest_use", "use_mean", "controlled_mean"]

USE_DRAWS = 512
"""Draws of the token matrix alone behind :func:`use_mean`: with the slope of about 0.3 measured, their standard error
adds a few percent to the controlled estimate's at 32 sampled draws."""

USE_TOKENS = 1 << 25
"""Most tokens those draws may hold (about 3 CPU-s): a long sequence takes fewer draws (:func:`use_draws`)."""


def use_draws(N: int, T: int) -> int:
    """The draws of :func:`use_mean` for ``N`` sequences of ``T`` tokens: :data:`USE_DRAWS`, fewer where they would hold
    more than :data:`USE_TOKENS` tokens, at least 2 (a cost bounded before it starts; with fewer draws the control's
    own error is larger, and :func:`controlled_mean` counts it).

    >>> use_draws(4000, 5), use_draws(10, 10**6)
    (512, 3)
    """
    return max(2, min(USE_DRAWS, USE_TOKENS // max(1, N * T)))


def largest_use(A: TokenMatrix) -> float:
    r""":math:`\max_v \sum_n A_{vn}^2`, the largest weighted use of a token in the draw.

    >>> largest_use(TokenMatrix.from_tokens(np.array([[0, 1], [0, 0]]), [0.5, 0.25], 2))   # token 0: 0.25 + 0.5625
    0.8125
    """
    return float(np.max(A.row_sums(2), initial=0.0))


def use_mean(sample, children) -> tuple[float, float]:
    """The mean of :func:`largest_use` over the token matrices ``sample(child)`` of the seeds ``children`` (at least
    two), and its standard error."""
    Y = np.array([largest_use(sample(c)) for c in children])
    if Y.size < 2:
        raise ParameterError("draws", f"the mean of the largest use needs at least 2 draws, got {Y.size}")
    return float(Y.mean()), float(Y.std(ddof=1) / math.sqrt(Y.size))


def controlled_mean(X, Y, mean_y: float, se_y: float) -> tuple[float, float, float]:
    r"""The regression estimate of the mean of ``X`` (one value a draw) with the control ``Y`` (the same draws) whose
    mean ``mean_y`` is known to the standard error ``se_y``: ``(mean, error, se)``, the error three standard errors.
    Without spread in ``Y`` the control does nothing (slope 0).

    >>> X, Y = [1.0, 2.0, 3.0, 4.0], [0.1, 0.2, 0.3, 0.5]
    >>> m, e, se = controlled_mean(X, Y, 0.25, 0.0)    # slope 0.65 / 0.0875 = 7.43: 2.5 - 7.43 (0.275 - 0.25)
    >>> round(m, 3), round(se, 3)
    (2.314, 0.146)
    """
    X, Y = np.asarray(X, dtype=float), np.asarray(Y, dtype=float)
    n = X.size
    if n < 3 or Y.size != n:
        raise ParameterError("draws", f"a controlled mean needs at least 3 draws with a control each, got {n}")
    var_y = float(Y.var(ddof=1))
    beta = float(np.cov(X, Y, ddof=1)[0, 1] / var_y) if var_y > 0 else 0.0
    residual = X - beta * Y
    # n - 2: the slope is fitted on the same draws
    se = math.sqrt(float(np.sum((residual - residual.mean()) ** 2)) / (n - 2) / n + beta**2 * se_y**2)
    return float(X.mean() - beta * (Y.mean() - mean_y)), 3 * se, se
