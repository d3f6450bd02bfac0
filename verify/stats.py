r"""Confidence intervals over seeds and finite-size fits.

Intervals are Student-t: for ``K`` independent trials with mean :math:`\bar x` and sample standard
deviation :math:`s` (``ddof=1``), the interval at level :math:`1-a` is
:math:`\bar x \pm t_{K-1,\,1-a/2}\, s/\sqrt K` (:func:`student_t_quantile`), exact for Gaussian trials and
asymptotically right for any finite-variance ones. One trial carries no estimate of the spread:
its interval is :math:`(-\infty, +\infty)`, deliberately, so that no comparison can pass on it.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import functools

import mpmath
import numpy as np

from derive.errors import ParameterError

__all__ = ["student_t_quantile", "mean_ci", "FiniteSizeFit", "finite_size_fit"]


@functools.lru_cache(maxsize=256)
def student_t_quantile(p: float, nu: int) -> float:
    r"""The quantile :math:`t_{\nu,p}` of Student's t law with ``nu`` degrees of freedom, for ``1/2 < p < 1``.

    :math:`P(|T| \le t) = I_y(\tfrac12, \tfrac\nu2)` with :math:`y = t^2/(\nu + t^2)` (the regularized
    incomplete beta function), increasing in :math:`t`: ``t`` is found by bisection on :math:`\log t` (mpmath at
    30 digits, 90 halvings of :math:`[10^{-9}, 10^{13}]`, below ``1e-15`` relative). mpmath is already loaded
    by every command; ``scipy.stats``, whose import alone takes most of a second, is not.

    >>> round(student_t_quantile(0.975, 1), 10), round(student_t_quantile(0.975, 10), 10)  # tables: 12.7062, 2.2281
    (12.7062047362, 2.228138852)
    """
    if not 0.5 < p < 1 or isinstance(nu, bool) or not isinstance(nu, (int, np.integer)) or nu < 1:
        raise ParameterError("level", f"needs 1/2 < p < 1 and an integer nu >= 1, got p = {p!r}, nu = {nu!r}")
    with mpmath.workdps(30):
        target, a, b = 2 * mpmath.mpf(p) - 1, mpmath.mpf(1) / 2, mpmath.mpf(int(nu)) / 2
        lo, hi = mpmath.log(mpmath.mpf("1e-9")), mpmath.log(mpmath.mpf("1e13"))
        for _ in range(90):
            mid = (lo + hi) / 2
            t2 = mpmath.exp(2 * mid)
            if mpmath.betainc(a, b, 0, t2 / (int(nu) + t2), regularized=True) < target:
                lo = mid
            else:
                hi = mid
        return float(mpmath.exp((lo + hi) / 2))


def _finite_vector(values, name: str) -> np.ndarray:
    try:
        if isinstance(values, (str, bytes)):
            raise TypeError
        x = np.asarray(values, dtype=float)
    except (TypeError, ValueError, OverflowError):
        raise ParameterError(name, f"must be a sequence of reals, got {values!r}") from None
    if x.ndim != 1 or len(x) == 0:
        raise ParameterError(name, f"must be a non-empty one-dimensional sequence, got shape {x.shape}")
    if not np.all(np.isfinite(x)):
        raise ParameterError(name, "contains NaN or infinity")
    return x


def _check_level(level) -> float:
    try:
        x = float(level) if not isinstance(level, (bool, str, bytes)) else math.nan
    except (TypeError, ValueError, OverflowError):
        x = math.nan
    if not 0 < x < 1:  # NaN fails too
        raise ParameterError("level", f"must lie in (0, 1), got {level!r}")
    return x


def mean_ci(values, level: float = 0.95) -> tuple[float, float, float]:
    """``(mean, low, high)``: the mean of ``values`` (one per seed) and its Student-t interval at ``level``.

    ``(mean, -inf, inf)`` for a single value.

    >>> [round(x, 4) for x in mean_ci([1.0, 2.0, 3.0])]
    [2.0, -0.4841, 4.4841]
    >>> mean_ci([5.0])
    (5.0, -inf, inf)
    """
    x = _finite_vector(values, "values")
    level = _check_level(level)
    mean = float(x.mean())
    if len(x) < 2:
        return mean, -math.inf, math.inf
    half = student_t_quantile(0.5 + level / 2, len(x) - 1) * float(x.std(ddof=1)) / math.sqrt(len(x))
    return mean, mean - half, mean + half


@dataclass(frozen=True)
class FiniteSizeFit:
    r"""Least-squares fit of :math:`\log|e| = \log C - r \log d` over a ladder of ``d``.

    ``rate`` is :math:`r` and ``rate_se`` its standard error (residual variance with ``n - 2``
    degrees of freedom; infinite with two points, which fit exactly and say nothing about the
    spread); ``rate_ci95`` the Student-t interval :math:`r \pm t_{n-2,0.975}\,\mathrm{se}`;
    ``prefactor`` is :math:`C`; ``residuals`` the log-scale residuals.
    """

    rate: float
    rate_se: float
    rate_ci95: tuple[float, float]
    prefactor: float
    residuals: np.ndarray


def finite_size_fit(ds, errors) -> FiniteSizeFit:
    r"""Fit :math:`|e(d)| \approx C\, d^{-r}` to errors ``errors`` measured at sizes ``ds``
    (typically a geometric ladder ``d_0, 2 d_0, 4 d_0, ...``) by least squares in log-log.

    A growing quantity (a run time) gives a negative rate: its growth exponent is ``-rate``.

    >>> fit = finite_size_fit([100, 200, 400, 800], [3 / 100 ** 0.5, 3 / 200 ** 0.5, 3 / 400 ** 0.5, 3 / 800 ** 0.5])
    >>> round(fit.rate, 12), round(fit.prefactor, 10), round(fit.rate_se, 10)
    (0.5, 3.0, 0.0)
    """
    d = _finite_vector(ds, "d")
    e = np.abs(_finite_vector(errors, "errors"))
    if len(d) != len(e):
        raise ParameterError("errors", f"needs one error per d: {len(e)} errors for {len(d)} sizes")
    if len(d) < 2 or len(np.unique(d)) < 2:
        raise ParameterError("d", "needs at least two distinct sizes")
    if np.any(d <= 0):
        raise ParameterError("d", "sizes must be positive")
    if np.any(e == 0):
        raise ParameterError("errors", "an error of exactly zero has no logarithm")
    x, y = np.log(d), np.log(e)
    X = np.column_stack([np.ones_like(x), -x])
    coef, *_ = np.linalg.lstsq(X, y, rcond=None)
    residuals = y - X @ coef
    n = len(d)
    if n > 2:
        sigma2 = float(residuals @ residuals) / (n - 2)
        se = math.sqrt(sigma2 / float(((x - x.mean()) ** 2).sum()))
        half = student_t_quantile(0.975, n - 2) * se
    else:
        se = half = math.inf
    rate = float(coef[1])
    return FiniteSizeFit(rate, se, (rate - half, rate + half), float(math.exp(coef[0])), residuals)
