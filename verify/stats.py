r"""Confidence intervals over seeds and finite-size fits.

Intervals are Student-t: for ``K`` independent trials with mean :math:`\bar x` and sample standard
deviation :math:`s` (``ddof=1``), the interval at level :math:`1-a` is
:math:`\bar x \pm t_{K-1,\,1-a/2}\, s/\sqrt K` (:func:`student_t_quantile`), exact for Gaussian trials and
asymptotically right for any finite-variance ones. One trial carries no estimate of the spread:
its interval is :math:`(-\infty, +\infty)`, deliberately, so that no comparison can pass on it.
"""
from __future__ import annotations

import functools
import math
from dataclasses import dataclass

import mpmath
import numpy as np

from derive.errors import ParameterError

__all__ = ["student_t_quantile", "mean_se", "mean_ci", "Estimate", "control_variate_mean", "richardson", "min_detectable",
           "x_intercept", "FiniteSizeFit", "finite_size_fit"]


@functools.lru_cache(maxsize=256)
def student_t_quantile(p: float, nu: float) -> float:
    r"""The quantile :math:`t_{\nu,p}` of Student's t law with ``nu > 0`` degrees of freedom (not necessarily an
    integer: Welch-Satterthwaite's are not), for ``1/2 <= p < 1``.

    :math:`P(|T| \le t) = I_y(\tfrac12, \tfrac\nu2)` with :math:`y = t^2/(\nu + t^2)` (the regularized
    incomplete beta function), increasing in :math:`t`: ``t`` is found by bisection on :math:`\log t` (mpmath at
    30 digits, 90 halvings of :math:`[10^{-9}, 10^{13}]`, below ``1e-15`` relative). mpmath is already loaded
    by every command; ``scipy.stats``, whose import alone takes most of a second, is not.

    >>> round(student_t_quantile(0.975, 1), 10), round(student_t_quantile(0.975, 10), 10)  # tables: 12.7062, 2.2281
    (12.7062047362, 2.228138852)
    >>> student_t_quantile(0.5, 3.5), round(student_t_quantile(0.8, 2.5), 10)  # the median; scipy.stats.t.ppf(0.8, 2.5) = 1.01016387472
    (0.0, 1.0101638747)
    """
    if (not 0.5 <= p < 1 or isinstance(nu, bool) or not isinstance(nu, (int, float, np.integer, np.floating))
            or not math.isfinite(nu) or nu <= 0):
        raise ParameterError("level", f"needs 1/2 <= p < 1 and nu > 0, got p = {p!r}, nu = {nu!r}")
    if p == 0.5:
        return 0.0
    with mpmath.workdps(30):
        target, a, b = 2 * mpmath.mpf(p) - 1, mpmath.mpf(1) / 2, mpmath.mpf(nu) / 2
        lo, hi = mpmath.log(mpmath.mpf("1e-9")), mpmath.log(mpmath.mpf("1e13"))
        for _ in range(90):
            mid = (lo + hi) / 2
            t2 = mpmath.exp(2 * mid)
            if mpmath.betainc(a, b, 0, t2 / (nu + t2), regularized=True) < target:
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


def mean_se(values) -> tuple[float, float]:
    r"""The mean of ``values`` and its standard error :math:`s/\sqrt K` (``ddof=1``).

    >>> mean_se([1.0, 2.0, 3.0])  # 1/sqrt(3)
    (2.0, 0.5773502691896258)
    """
    x = np.asarray(values, dtype=float)
    return float(x.mean()), float(x.std(ddof=1) / np.sqrt(x.size))


def mean_ci(values, level: float = 0.95, support: tuple | None = None) -> tuple[float, float, float]:
    """``(mean, low, high)``: the mean of ``values`` (one per seed) and its Student-t interval at ``level``, cut to
    ``support`` (``(low, high)``, the range the quantity cannot leave: ``(0, 1)`` for an overlap) when given. The cut
    keeps the coverage, since the mean lies in the range; a Student-t interval of two seeds of an overlap had reached
    ``[-0.24, 1.27]``.

    ``(mean, -inf, inf)`` for a single value (no interval, whatever the support).

    >>> [round(x, 4) for x in mean_ci([1.0, 2.0, 3.0])]
    [2.0, -0.4841, 4.4841]
    >>> [round(x, 4) for x in mean_ci([0.1, 0.9], support=(0, 1))]
    [0.5, 0.0, 1.0]
    >>> mean_ci([5.0])
    (5.0, -inf, inf)
    """
    x = _finite_vector(values, "values")
    level = _check_level(level)
    mean = float(x.mean())
    if len(x) < 2:
        return mean, -math.inf, math.inf
    half = student_t_quantile(0.5 + level / 2, len(x) - 1) * float(x.std(ddof=1)) / math.sqrt(len(x))
    low, high = mean - half, mean + half
    if support is not None:
        low, high = max(low, float(support[0])), min(high, float(support[1]))
    return mean, low, high


@dataclass(frozen=True)
class Estimate:
    """An estimate of an expectation: its ``value``, standard error ``se`` and the degrees of freedom
    ``df`` of that error (Student-t intervals ``value +- t_df se``)."""

    value: float
    se: float
    df: float

    def half_width(self, level: float) -> float:
        """The half-width of the Student-t interval at ``level``."""
        return student_t_quantile(0.5 + _check_level(level) / 2, self.df) * self.se


def control_variate_mean(values, controls) -> Estimate:
    r"""The mean of ``values`` (one per trial) corrected by control variates of known mean zero.

    With ``controls`` a ``K x p`` array :math:`G` whose columns have expectation exactly 0, the least-squares fit
    :math:`y_j = \beta_0 + G_j \beta + e_j` gives :math:`\hat\beta_0 = \bar y - \bar G \hat\beta`, an estimate of
    :math:`E[y]` whose variance is that of the residual, :math:`\hat\sigma^2 [(X^T X)^{-1}]_{00}` with
    ``K - 1 - p`` degrees of freedom (Glasserman, *Monte Carlo Methods in Financial Engineering*, 4.1).
    ``p = 0`` (or an empty ``controls``) is the plain mean and its standard error.

    >>> y = [1.0, 2.0, 3.0, 4.0]; G = [[-1.5], [-0.5], [0.5], [1.5]]
    >>> e = control_variate_mean(y, G); round(e.value, 12), round(e.se, 12), e.df
    (2.5, 0.0, 2)
    >>> e = control_variate_mean(y, np.zeros((4, 0))); round(e.value, 12), round(e.se ** 2, 12), e.df
    (2.5, 0.416666666667, 3)
    """
    y = _finite_vector(values, "values")
    G = np.asarray(controls, dtype=float).reshape(len(y), -1)
    if not np.all(np.isfinite(G)):
        raise ParameterError("controls", "contains NaN or infinity")
    p = G.shape[1]
    if len(y) < p + 2:
        raise ParameterError("values", f"{len(y)} trials cannot fit {p} control variates and an error: need {p + 2}")
    X = np.column_stack([np.ones(len(y)), G])
    coef, *_ = np.linalg.lstsq(X, y, rcond=None)
    residual = y - X @ coef
    df = len(y) - 1 - p
    sigma2 = float(residual @ residual) / df
    inverse = np.linalg.pinv(X.T @ X)
    return Estimate(float(coef[0]), math.sqrt(max(sigma2 * float(inverse[0, 0]), 0.0)), df)


def richardson(fine: Estimate, coarse: Estimate, ratio: float) -> Estimate:
    r"""Richardson's extrapolation to ``d -> oo`` of an expectation whose finite-size bias is
    :math:`C/d + O(d^{-2})`: from estimates at ``d`` (``fine``) and ``d/ratio`` (``coarse``),
    :math:`(r\,m(d) - m(d/r))/(r - 1)`, whose bias is :math:`O(d^{-2})`, with the independent errors combined
    and Welch-Satterthwaite degrees of freedom.

    >>> e = richardson(Estimate(1.01, 0.01, 10), Estimate(1.04, 0.02, 10), 4); round(e.value, 12), round(e.se, 6)
    (1.0, 0.014907)
    """
    r = float(ratio)
    if not r > 1:
        raise ParameterError("ratio", f"must exceed 1, got {ratio!r}")
    a, b = (r / (r - 1)) * fine.se, coarse.se / (r - 1)
    var = a * a + b * b
    df = var**2 / ((a**4 / fine.df if a else 0.0) + (b**4 / coarse.df if b else 0.0)) if var > 0 else min(fine.df, coarse.df)
    return Estimate((r * fine.value - coarse.value) / (r - 1), math.sqrt(var), df)


def min_detectable(estimate: Estimate, level: float, power: float = 0.8) -> float:
    r"""The smallest error of a predicted value that a comparison :math:`|\hat m - p| \le t_{level}\,se` detects
    with probability ``power``: :math:`(t_{(1+level)/2} + t_{power})\,se` (Student-t with the estimate's
    degrees of freedom). Divide by :math:`|p|` for the relative error.

    >>> round(min_detectable(Estimate(0.0, 1.0, 10**9), 0.95, 0.5), 4)
    1.96
    """
    power = _check_level(power)
    return estimate.half_width(level) + student_t_quantile(power, estimate.df) * estimate.se


def x_intercept(x, estimates) -> Estimate:
    r"""Where the weighted least-squares line through the points ``(x_i, estimates_i.value)`` (weights
    :math:`1/se_i^2`) crosses zero: :math:`x_0 = -b_0/b_1`, with its standard error by the delta method and the
    smallest degrees of freedom of the points.

    >>> e = x_intercept([1, 2, 3], [Estimate(v, 0.1, 20) for v in (1.0, 2.0, 3.0)]); round(e.value, 12), e.df
    (0.0, 20)
    """
    x = _finite_vector(x, "x")
    if len(estimates) != len(x) or len(x) < 2:
        raise ParameterError("estimates", f"needs one estimate per x, at least two: {len(estimates)} for {len(x)}")
    y = np.array([e.value for e in estimates])
    w = np.array([1 / e.se**2 if e.se > 0 else 1e300 for e in estimates])
    X = np.column_stack([np.ones_like(x), x])
    cov = np.linalg.inv(X.T @ (w[:, None] * X))
    b0, b1 = cov @ (X.T @ (w * y))
    if b1 == 0:
        raise ParameterError("estimates", "the line is flat: it has no zero")
    grad = np.array([-1 / b1, b0 / b1**2])
    return Estimate(float(-b0 / b1), math.sqrt(max(float(grad @ cov @ grad), 0.0)), min(e.df for e in estimates))


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
