r"""Causal softmax attention at the transformer's scaling: scores :math:`\tau\langle x_t, x_s\rangle/\sqrt d`, and the law
of the random pooling weights it gives as :math:`d \to \infty` (notes/softmax.md).

**The limit.** Tokens :math:`x_t = e_{v_t} = \xi_t\mu + z_t` with distinct tokens in a sequence (a repeat has probability
:math:`O(T^2/V)`). For :math:`s \ne t`,

.. math:: \frac{\langle x_t, x_s\rangle}{\sqrt d} = g_{ts} + \frac{\xi_t\xi_s\mu_2 + \xi_t\langle\mu, z_s\rangle
   + \xi_s\langle\mu, z_t\rangle}{\sqrt d}, \qquad g_{ts} = \frac{\langle z_t, z_s\rangle}{\sqrt d},

and the :math:`g_{ts}`, ``s < t``, converge jointly to i.i.d. :math:`N(0, 1)` (central limit theorem over the ``d``
coordinates: distinct pairs are uncorrelated); the signal's share is :math:`O(d^{-1/2})`. A key's score on itself is
:math:`\tau\|x_t\|^2/\sqrt d = \tau\sqrt d + \tau\sqrt 2\,h_t + O(d^{-1/2})`, :math:`h_t \sim N(0, 1)`.

* **Strict mask** (keys ``s < t``; position 1 has an empty window and no output: the outputs ``t = 2..T`` are
  averaged, the convention of :mod:`derive.model.attention`): row ``t`` is :math:`a_{t\cdot} =
  \mathrm{softmax}(\tau g_{t,1}, \dots, \tau g_{t,t-1})`, the rows independent, and each sequence has its own weights
  :math:`w_s = \frac1{T-1}\sum_{t>s} a_{ts}`. By exchangeability of a row's keys :math:`E[a_{ts}] = 1/(t-1)`, so the
  mean weights are the paper's harmonic weights :math:`(H_{T-1} - H_{s-1})/(T-1)` exactly, at every ``tau``.
* **Inclusive mask** (keys ``s <= t``), ``tau > 0``: the diagonal wins, :math:`1 - a_{tt} \approx (t-1)
  e^{-\tau\sqrt d + 3\tau^2/2}`, so the weights tend to mean pooling :math:`1/T`, deterministic, at the rate
  :math:`e^{-\tau\sqrt d}` (``1e-13`` at ``tau = 1, d = 1000``). At ``tau = 0`` every score vanishes at every ``d``:
  uniform attention, the causal weights :math:`(H_T - H_{s-1})/T` for both masks, exactly.

**The moments.** Every moment of the strict mask's weights reduces to the moments of one row, a softmax of ``k``
i.i.d. :math:`N(0, \tau^2)` scores. With :math:`1/S^n = \Gamma(n)^{-1}\int_0^\infty \lambda^{n-1} e^{-\lambda S}
d\lambda` and :math:`\lambda = e^x`,

.. math:: E\Big[\prod_{i=1}^j a_i^{n_i}\Big] = \frac{1}{\Gamma(n)}\int_{-\infty}^{\infty} \prod_{i=1}^j
   \psi_{n_i}(x)\,\psi_0(x)^{k-j}\,dx, \qquad \psi_m(x) = E\big[e^{m u - e^u}\big],\ u \sim N(x, \tau^2),

(:math:`n = \sum n_i`): one-dimensional integrals of Gaussian smoothings, computed by the trapezoidal rule (both
integrands are analytic in a strip and log-concave, where the rule converges geometrically; :func:`row_moments`), the
error stated by halving both steps. At ``tau = 0`` and for ``k = 1`` they are exact.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction
from functools import lru_cache
from typing import ClassVar

import numpy as np

from derive.errors import ParameterError

__all__ = ["MAX_TAU", "MAX_T", "ROUNDING", "RowMoments", "row_moments", "psi", "SoftmaxLaw", "softmax_law", "limit_weights",
           "inclusive_rate"]

MAX_TAU = Fraction(10)
"""Largest ``tau`` accepted: beyond it a row is nearly one-hot and the moments' integrals reach ``x`` of order
``-2 tau^2``; nothing of interest changes (the weights of a row tend to the argmax's)."""

MAX_T = 128
"""Longest sequence of the softmax scheme: ``alpha`` reads the ``T x T`` matrix ``R`` once, ``E||w||^4`` sums
``T^2`` pairs of rows."""

ROUNDING = 1e-13
"""The float64 rounding floor added to every quadrature error (sums of a few thousand terms of size at most 1)."""


def psi(x, m: int, tau: float, step: float = 0.25, reach: float = 10.8) -> np.ndarray:
    r""":math:`\psi_m(x) = E[e^{m u - e^u}]` for :math:`u \sim N(x, \tau^2)`, at each ``x`` of an array.

    The log-integrand :math:`f(u) = m u - e^u - (u - x)^2/(2\tau^2)` is concave with :math:`-f'' = e^u + 1/\tau^2`:
    it falls by at least :math:`r^2/2` within ``r`` widths :math:`w = (e^{u^*} + 1/\tau^2)^{-1/2}` right of its mode
    :math:`u^*`, and within :math:`r\tau` left of it (where the curvature may fall to :math:`1/\tau^2`). The
    trapezoidal rule runs on :math:`[u^* - r\tau, u^* + r w]`, ``r = reach`` (10.8: a fall of ``e^{-58}``), with
    ``step`` widths. At ``tau = 0`` it is :math:`e^{m x - e^x}`.

    >>> float(psi(np.array([0.0]), 1, 1.0)[0])   # E[e^{u - e^u}], u ~ N(0, 1)
    0.2588561227...
    """
    x = np.asarray(x, dtype=np.float64)
    if tau == 0:
        return np.exp(m * x - np.exp(x))
    u = np.minimum(x, math.log(m)) if m > 0 else np.minimum(x, 0.0)
    for _ in range(100):  # Newton on the concave log-integrand's derivative, from the left of its root
        e = np.exp(u)
        step_u = (m - e - (u - x) / tau ** 2) / (e + 1 / tau ** 2)
        u = u + step_u
        if np.all(np.abs(step_u) < 1e-14 * (1 + np.abs(u))):
            break
    width = 1 / np.sqrt(np.exp(u) + 1 / tau ** 2)
    left = int(math.ceil(reach * tau / (step * float(width.min())))) if len(width) else 0
    t = np.arange(-left, int(math.ceil(reach / step)) + 1) * step
    U = u[:, None] + width[:, None] * t[None, :]
    U = np.where(U >= (u - reach * tau)[:, None], U, -np.inf)  # each x's own left end
    log_integrand = m * U - np.exp(U) - (U - x[:, None]) ** 2 / (2 * tau ** 2)
    with np.errstate(invalid="ignore"):
        values = np.where(np.isfinite(U), np.exp(log_integrand), 0.0)
    return values.sum(axis=1) * step * width / (tau * math.sqrt(2 * math.pi))


@dataclass(frozen=True)
class RowMoments:
    r"""Moments of one row of the strict mask, a softmax :math:`a` of ``k`` i.i.d. :math:`N(0, \tau^2)` scores, for
    ``k = 1..K`` (index ``k - 1``): :math:`m_2 = E[a_1^2]`, :math:`m_4 = E[a_1^4]`, :math:`m_{22} = E[a_1^2 a_2^2]`
    (0 for ``k = 1``); exact :class:`~fractions.Fraction` where ``exact``, else floats within ``error`` (absolute,
    each entry)."""

    tau: Fraction
    m2: tuple
    m4: tuple
    m22: tuple
    error: float
    exact: bool

    def variance(self, k: int):
        """:math:`c_k = m_2(k) - 1/k^2`, the variance of one entry of a row of ``k`` keys."""
        return self.m2[k - 1] - Fraction(1, k * k)

    def fourth(self, k: int):
        r""":math:`E\|a - 1/k\|^4 = k m_4 + k(k-1) m_{22} - 2 m_2 + 1/k^2`."""
        return k * self.m4[k - 1] + k * (k - 1) * self.m22[k - 1] - 2 * self.m2[k - 1] + Fraction(1, k * k)


def _grid_moments(tau: float, K: int, h: float, reach: float = 10.8) -> dict:
    r""":func:`row_moments`'s integrals on the grid of step ``h``: :math:`\psi_m` as the discrete convolution of
    :math:`e^{m u - e^u}` with the :math:`N(0, \tau^2)` density (FFT), then the trapezoidal rule in ``x``."""
    # psi_m(x) ~ exp(m x + m^2 tau^2/2) as x -> -oo (m = 4 needs x below -2 tau^2 - 15) and ~ a Gaussian tail of
    # width tau as x -> +oo; e^{m u - e^u} < e^{-400} beyond u = 6
    x_lo, x_hi = -(reach + 5) * (1 + tau) - 2 * tau * tau - math.log(K), 6.0 + reach * tau
    u = np.arange(x_lo - reach * tau, 6.0 + h, h)
    J = int(math.ceil(reach * tau / h))
    kernel = np.exp(-0.5 * (np.arange(-J, J + 1) * h / tau) ** 2) * h / (tau * math.sqrt(2 * math.pi))
    size = 1 << int(math.ceil(math.log2(len(u) + len(kernel))))
    spectrum = np.fft.rfft(kernel, size)
    x = u[0] + (np.arange(len(u) + len(kernel) - 1) - J) * h  # the full convolution's abscissae
    keep = (x >= x_lo) & (x <= x_hi)
    p0, p2, p4 = (np.fft.irfft(np.fft.rfft(np.exp(m * u - np.exp(u)), size) * spectrum, size)[:len(x)][keep]
                  for m in (0, 2, 4))
    p0 = np.clip(p0, 1e-300, 1.0)
    p2, p4 = np.maximum(p2, 0.0), np.maximum(p4, 0.0)
    logp0 = np.log(p0)
    out = {"m2": [], "m4": [], "m22": []}
    for k in range(1, K + 1):
        rest = np.exp((k - 1) * logp0)
        out["m2"].append(float(np.sum(p2 * rest) * h))
        out["m4"].append(float(np.sum(p4 * rest) * h / 6))
        out["m22"].append(float(np.sum(p2 * p2 * np.exp((k - 2) * logp0)) * h / 6) if k >= 2 else 0.0)
    return out


@lru_cache(maxsize=64)
def row_moments(tau: Fraction, K: int) -> RowMoments:
    r"""The moments of :class:`RowMoments` for rows of ``1..K`` keys at ``tau``: exact at ``tau = 0``
    (:math:`a = 1/k`) and for ``k = 1`` (:math:`a = 1`), else from

    .. math:: m_2 = \int \psi_2\psi_0^{k-1}dx, \quad m_4 = \tfrac16\int\psi_4\psi_0^{k-1}dx,
       \quad m_{22} = \tfrac16\int\psi_2^2\psi_0^{k-2}dx

    by the trapezoidal rule in ``x`` over ``[-15.8 (1 + tau) - 2 tau^2 - log K, 6 + 10.8 tau]``, :math:`\psi_m` on the
    same grid (step ``h = min(0.05, tau/8)``) by the trapezoidal rule of its convolution (:func:`_grid_moments`; both
    integrands are analytic in a strip, where the rule converges geometrically); the error is the largest change
    from the rule with step ``2h`` or with both ranges widened (reach 14 instead of 10.8 Gaussian widths), plus
    :data:`ROUNDING`.

    >>> r = row_moments(Fraction(1), 3); round(r.m2[1], 10), r.error < 1e-12
    (0.318419077, True)
    >>> row_moments(Fraction(0), 3).m2
    (Fraction(1, 1), Fraction(1, 4), Fraction(1, 9))
    """
    if tau == 0:
        return RowMoments(tau, tuple(Fraction(1, k * k) for k in range(1, K + 1)),
                          tuple(Fraction(1, k ** 4) for k in range(1, K + 1)),
                          tuple(Fraction(0) if k == 1 else Fraction(1, k ** 4) for k in range(1, K + 1)), 0.0, True)
    t = float(tau)
    h = min(0.05, t / 8)
    coarse, fine, wide = _grid_moments(t, K, 2 * h), _grid_moments(t, K, h), _grid_moments(t, K, 2 * h, 14.0)
    error = max(abs(a - b) for other in (fine, wide) for name in fine for a, b in zip(coarse[name], other[name]))
    error += ROUNDING
    # a row of one key is a = 1 exactly
    fix = lambda values, first: (first, *values[1:])  # noqa: E731
    return RowMoments(tau, fix(fine["m2"], Fraction(1)), fix(fine["m4"], Fraction(1)), fix(fine["m22"], Fraction(0)),
                      error, False)


def inclusive_rate(tau, d) -> float:
    r"""The first-order attention an inclusive row ``t`` puts off its own token at scores
    :math:`\tau\langle x_t, x_s\rangle/\sqrt d`, per key: :math:`E[e^{\tau g}]\,E[e^{-\tau\sqrt2 h}]\,e^{-\tau\sqrt d}
    = e^{-\tau\sqrt d + 3\tau^2/2}` (``g, h`` standard Gaussians); a row of ``t - 1`` keys moves ``t - 1`` times it.

    >>> f"{inclusive_rate(1, 1000):.1e}"
    '8.3e-14'
    """
    return math.exp(-float(tau) * math.sqrt(float(d)) + 1.5 * float(tau) ** 2)


@dataclass(frozen=True)
class SoftmaxLaw:
    r"""The limit law of the softmax scheme's weights for ``T`` positions: the ``mean`` weights (exact rationals), and,
    over the random weights, :math:`\kappa = E\|w\|^2` and :math:`E\|w\|^4` (``kappa_moments``), with ``error`` (an
    absolute bound on each of them from the quadrature; 0 where exact) and whether the weights are ``random`` (they are
    for the strict mask at ``tau > 0`` and ``T >= 3``). :meth:`alpha` gives :math:`E[w^\top R w]` for a sign family.

    For the strict mask, with :math:`\bar P_s = H_{T-1} - H_{s-1}` (so :math:`\bar w = \bar P/(T-1)`), :math:`c_k =
    m_2(k) - 1/k^2` and the covariance of a row of ``k`` keys :math:`C_k = c_k(k I_k - J_k)/(k-1)`,

    .. math:: (T-1)^2 E[w w^\top] = \bar P\bar P^\top + \sum_{k=2}^{T-1} C_k,\qquad
       \kappa = \|\bar w\|^2 + \sum_k \frac{k c_k}{(T-1)^2},\qquad
       \alpha = \bar w^\top R\bar w + \sum_k \frac{c_k (k^2 - S_k)}{(k-1)(T-1)^2}

    (:math:`S_k` the sum of the entries of ``R``'s leading ``k x k`` block), and :math:`E\|w\|^4` from
    :func:`_fourth_moment`.
    """

    describes: ClassVar[str] = (
        "the d -> oo law of causal softmax attention at scores tau <x_t, x_s>/sqrt(d) (distinct tokens; the scores of "
        "distinct tokens i.i.d. N(0, tau^2), independent of the signs and of the table)")
    """What the law is the law of, and what it assumes (the documents' ``assumptions`` begin with it)."""

    T: int
    tau: Fraction
    mask: str
    mean: tuple
    kappa: object
    kappa_moments: tuple
    error: float
    random: bool
    rows: RowMoments | None

    def alpha(self, family) -> tuple:
        """:math:`(E[w^\\top R w], \\text{error})` for the sign family ``family`` (exact SymPy where the law is exact)."""
        import sympy as sp

        base = family.quadratic_form(list(self.mean))
        if not self.random:
            return base, 0.0
        T, rows = self.T, self.rows
        R = np.array([[float(x) for x in row] for row in family.R(T).tolist()])
        S = np.cumsum(np.cumsum(R, axis=0), axis=1).diagonal()  # S[k-1]: the sum of the leading k x k block
        extra, bound = 0.0, 0.0
        for k in range(2, T):
            coefficient = (k * k - S[k - 1]) / ((k - 1) * (T - 1) ** 2)
            extra += float(rows.variance(k)) * coefficient
            bound += rows.error * abs(coefficient)
        return sp.Float(float(sp.N(base, 20)) + extra, 17), bound + 4 * np.finfo(float).eps * T * T


def _exact(x):
    import sympy as sp

    return sp.Rational(x.numerator, x.denominator) if isinstance(x, Fraction) else x


def _fourth_moment(P: list, rows: RowMoments, shift: float = 0.0):
    r""":math:`E\|P\|^4` for :math:`P = \sum_{t=2}^T a_{t\cdot}` (the strict mask's rows, window ``k = t - 1``), with
    :math:`\bar P = E[P]`, :math:`\varepsilon_t` a row minus its mean, :math:`C_k` its covariance:

    .. math:: E\|P\|^4 = \|\bar P\|^4 + 4\sum_k \bar P^\top C_k \bar P + 2\|\bar P\|^2\sum_k \mathrm{tr}\,C_k
       + \sum_k E\|\varepsilon_k\|^4 + \sum_{k\ne k'} \mathrm{tr}\,C_k\,\mathrm{tr}\,C_{k'}
       + 2\sum_{k\ne k'}\mathrm{tr}(C_k C_{k'}),

    with :math:`\mathrm{tr}(C_k C_{k'}) = c_k c_{k'} k k'/(\max(k, k') - 1)` (the third-order term
    :math:`E[\langle\bar P, \varepsilon\rangle\|\varepsilon\|^2]` vanishes: a row's entries are exchangeable and sum to
    1). Every term is nondecreasing in each :math:`c_k \ge 0` and :math:`E\|\varepsilon_k\|^4 \ge 0`: ``shift`` moves
    them all by the same amount (bounds of the result)."""
    K = len(P)  # rows of k = 1..T-1 keys; P has T entries
    c = [max(0.0, float(rows.variance(k)) + shift) if not rows.exact else rows.variance(k) for k in range(1, K)]
    e4 = [max(0.0, float(rows.fourth(k)) + shift * (k * k + 4)) if not rows.exact else rows.fourth(k)
          for k in range(1, K)]
    norm2 = sum(p * p for p in P)
    total = norm2 * norm2
    trace = [k * c[k - 1] for k in range(1, K)]
    for k in range(2, K):
        prefix = P[:k]
        total += 4 * c[k - 1] * (k * sum(p * p for p in prefix) - sum(prefix) ** 2) / (k - 1)
    total += 2 * norm2 * sum(trace) + sum(e4)
    total += sum(trace) ** 2 - sum(x * x for x in trace)
    cross = 0
    for k in range(2, K):
        for k2 in range(k + 1, K):
            cross += c[k - 1] * c[k2 - 1] * k * k2 / (k2 - 1)
    return total + 4 * cross


@lru_cache(maxsize=64)
def softmax_law(T: int, tau: Fraction, mask: str) -> SoftmaxLaw:
    r"""The :class:`SoftmaxLaw` of ``T`` positions at ``tau`` with ``mask`` (``T >= 2`` for the strict mask).

    >>> law = softmax_law(3, Fraction(0), "strict"); law.mean, law.kappa, law.random
    ((3/4, 1/4, 0), 5/8, False)
    >>> law = softmax_law(4, Fraction(1), "strict"); law.random, round(float(law.kappa), 10), law.error < 1e-12
    (True, 0.4946374676, True)
    """
    from derive.model.attention import causal_weights, mean_weights

    if mask == "inclusive":
        w = tuple(causal_weights(T, 0, "inclusive")) if tau == 0 else tuple(mean_weights(T))
        k = sum(x * x for x in w)
        return SoftmaxLaw(T, tau, mask, w, k, (k, k * k), 0.0, False, None)
    if T < 2:
        raise ParameterError("T", "the strict mask needs T >= 2 (position 1 has no key)")
    w = tuple(causal_weights(T, 0, "strict"))
    rows = row_moments(tau, T - 1)
    n = T - 1
    P = [x * n for x in w]  # H_{T-1} - H_{s-1}, exact
    if tau == 0 or T <= 2:
        k = sum(x * x for x in w)
        return SoftmaxLaw(T, tau, mask, w, k, (k, k * k), 0.0, False, rows)
    Pf = [float(x) for x in P]
    kappa = float(sum(x * x for x in w)) + sum(k * float(rows.variance(k)) for k in range(2, T)) / n ** 2
    kappa_error = rows.error * sum(range(2, T)) / n ** 2
    fourth = _fourth_moment(Pf, rows) / n ** 4
    up, down = (_fourth_moment(Pf, rows, s * rows.error) / n ** 4 for s in (1, -1))
    error = max(kappa_error, (up - down) / 2)
    return SoftmaxLaw(T, tau, mask, w, kappa, (kappa, fourth), error, True, rows)


def limit_weights(rng: np.random.Generator, n: int, T: int, tau: float, mask: str, chunk: int = 4096) -> np.ndarray:
    r"""``n`` draws ``(n, T)`` of the limit law of the weights: the strict mask's rows are softmaxes of i.i.d.
    :math:`N(0, \tau^2)` scores, outputs ``t = 2..T`` averaged; the inclusive mask's weights are deterministic (mean
    pooling for ``tau > 0``, uniform attention at ``tau = 0``).

    >>> w = limit_weights(np.random.default_rng(0), 5, 4, 1.0, "strict"); w.shape, bool(np.allclose(w.sum(axis=1), 1))
    ((5, 4), True)
    """
    if mask == "inclusive" or tau == 0 or T <= 2:
        law = softmax_law(T, Fraction(0) if tau == 0 else Fraction(1), mask)  # deterministic: tau > 0 all alike
        return np.tile(np.array([float(x) for x in law.mean]), (n, 1))
    out = np.empty((n, T))
    keys = np.tril(np.ones((T, T), dtype=bool), -1)[1:]  # rows t = 2..T, keys s < t
    for start in range(0, n, chunk):
        m = min(chunk, n - start)
        scores = np.where(keys, tau * rng.standard_normal((m, T - 1, T)), -np.inf)
        scores -= scores.max(axis=2, keepdims=True)
        a = np.exp(scores)
        a /= a.sum(axis=2, keepdims=True)
        out[start:start + m] = a.mean(axis=1)
    return out
