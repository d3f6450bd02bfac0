r"""What one trial shows of the outliers, and the control variates of its draw.

*Which outlier is which.* The raw ``S`` has two outliers of different causes (``derive.gaussian.outliers``): the
signal's, along :math:`\mu + Zs/V`, and the vocabulary mean's, along :math:`m = Z1/V`, nearly orthogonal
to ``u``. Either may be the top eigenvalue. Among the top ``k`` eigenvectors, the signal outlier is the
one with the largest squared overlap with ``u``, the mean outlier the one with the largest squared
overlap with :math:`m/\|m\|` (the table's own mean direction).

*Control variates.* Statistics of the draw whose expectation is known exactly at finite ``d, V, N``
(:data:`CONTROLS`). Regressing a trial's observation on them removes the part of its spread that they
explain without moving its expectation (:func:`verify.stats.control_variate_mean`); the spread of an
outlier comes mostly from the table's class means and from :math:`u^T S u`, which they capture.
"""
from __future__ import annotations

from functools import lru_cache

import numpy as np
import sympy as sp

from derive.model import expectations as ex
from verify.montecarlo.draw import Draw, balanced_signs

__all__ = ["TABLE_CONTROLS", "CONTROLS", "ROW_CONTROLS", "MEAN_CONTROLS", "table_controls", "controls", "token_operator",
           "population_operator", "row_controls", "mean_controls", "conditional_controls", "outlier_row"]

TABLE_CONTROLS = ("mu_dot_g", "g_norm2", "m_norm2")
"""The controls that concern the table only (the population level has no others)."""

CONTROLS = TABLE_CONTROLS + ("pooled_sign2", "pooled_sign", "S_uu", "cbar_norm2")
r"""Names of the control variates, each with expectation exactly 0:

* ``mu_dot_g`` :math:`2\langle\mu, g\rangle`, ``g = Zs/V`` independent of :math:`\mu`;
* ``g_norm2`` :math:`\|g\|^2 - d/V` and ``m_norm2`` :math:`\|m\|^2 - d/V`, ``m = Z1/V``
  (:math:`g, m \sim N(0, I/V)`, the norms of :func:`derive.model.expectations.population_covariance_terms`);
* ``pooled_sign2`` :math:`\frac1N\sum_n (w^T\xi_n)^2 - \alpha` and ``pooled_sign`` :math:`\frac1N\sum_n w^T\xi_n`
  (:math:`E[\xi\xi^T] = R`, :math:`E\xi = 0`);
* ``S_uu`` :math:`u^T S u - E[u^T S u]` and ``cbar_norm2`` :math:`\|\bar c\|^2 - E\|\bar c\|^2` (the sample mean of
  the pooled vectors; :math:`\bar c \bar c^T = S - S_c`), the expectations from
  :func:`derive.model.expectations.sample_covariance_mean`.
"""


@lru_cache(maxsize=None)
def _mean_of_S():
    """``(a, b)`` of :math:`E[S] = a uu^T + b I` for the raw and the centered ``S``, as float functions."""
    args = (ex.mu2, ex.alpha, ex.kappa, ex.W, ex.V, ex.N)
    return {c: sp.lambdify(args, [e["u"], e["identity"]], modules="math")
            for c, e in ((False, ex.sample_covariance_mean(False)), (True, ex.sample_covariance_mean(True)))}


def table_controls(E: np.ndarray, mu2: float) -> np.ndarray:
    """The controls :data:`TABLE_CONTROLS` of a table ``E = mu s^T + Z`` (``mu = sqrt(mu2) e_1``)."""
    d, V = E.shape
    root = np.sqrt(mu2)
    g = E @ balanced_signs(V) / V
    g[0] -= root  # E s / V = mu + Z s / V
    m = E.mean(axis=1)
    return np.array([2 * root * g[0], g @ g - d / V, m @ m - d / V])


def controls(model, data: Draw, centered: bool, alpha: float) -> np.ndarray:
    """The control variates :data:`CONTROLS` of one draw of ``model`` (a :class:`derive.Model`; ``alpha`` the draw's
    weights' :math:`w^T R w`)."""
    w, N, mu2 = data.weights, model.N, float(model.mu2)
    args = (mu2, alpha, float(w @ w), float(w.sum()), model.V, N)
    (a_raw, b_raw), (a_c, b_c) = _mean_of_S()[False](*args), _mean_of_S()[True](*args)
    a, b = (a_c, b_c) if centered else (a_raw, b_raw)
    pooled_sign = data.xi @ w
    c_u = data.A.T @ data.E[0]  # u^T c_n for every sequence, u = e_1
    s_uu = c_u @ c_u / N - (c_u.mean() ** 2 if centered else 0.0)
    cbar = data.E @ (data.A @ np.ones(N)) / N
    # S - S_c = cbar cbar^T, so E||cbar||^2 is the difference of the two traces
    cbar2 = (a_raw - a_c) + model.d * (b_raw - b_c)
    return np.concatenate([table_controls(data.E, mu2),
                           [np.mean(pooled_sign**2) - alpha, np.mean(pooled_sign), s_uu - (a + b), cbar @ cbar - cbar2]])


ROW_CONTROLS = ("uSu_given_tokens", "Su_norm2_given_row", "uS3u_given_row")
r"""The control variates of :func:`row_controls`, whose expectation is exactly 0 *given the operator* :math:`D` of
:math:`S = \frac1V EDE^\top` (a draw's token matrix, or the population's fixed one), hence also over the draws. With
``u = e_1``, ``e`` the row of ``E`` along ``u`` (:math:`e = z + \sqrt{\mu_2}s`, :math:`z \sim N(0, I_V)`), ``Y`` the
other ``n = d - 1`` rows (i.i.d. standard Gaussian, independent of ``e``), :math:`f = De/V`, :math:`b = Yf` (so
:math:`Su = (e^\top De/V, b)`) and :math:`B = YDY^\top/V`:

* ``uSu_given_tokens`` :math:`(u^\top Su\,V - \operatorname{tr}D - \mu_2 s^\top Ds)/V` (the mean over ``z``);
* ``Su_norm2_given_row`` :math:`\|b\|^2 - n\|f\|^2` (the mean over ``Y`` given ``e``);
* ``uS3u_given_row`` :math:`b^\top Bb - ((n^2 + n) f^\top Df + n\operatorname{tr}(D)\|f\|^2)/V`: with
  :math:`W = Y^\top Y`, :math:`b^\top Bb = f^\top WDWf/V`, and Isserlis' theorem gives
  :math:`E[WMW] = (n^2 + n)M + n\operatorname{tr}(M)I` for a symmetric ``M``.

Given the tokens, an outlier's spread is the table's: the Gaussian fluctuation of the quadratic forms of ``S`` along
``u`` (of which the outlier and its overlap are functions, by the Schur complement on ``u``), which the draw's
conditional prediction does not see. :data:`CONTROLS` capture it less well, because their expectations are over the
tokens too, so part of their spread is the tokens'."""

MEAN_CONTROLS = ("mean_norm2_given_tokens", "mean_S_given_rest")
r"""The control variates of :func:`mean_controls` (the raw ``S``'s vocabulary-mean outlier), exactly 0 in expectation
given the tokens. With :math:`\phi` the unit top eigenvector of the raw ``D`` (along which the mean outlier lies, near
:math:`\mathbf 1/\sqrt V`; any unit vector made of the tokens would do), :math:`r = E\phi` and :math:`P = I -
\phi\phi^\top`: ``E\phi`` and ``EP`` are independent given the tokens (Gaussian columns), and :math:`r \sim
N(\sqrt{\mu_2}(s^\top\phi)u, I_d)`. With :math:`S_r = EPDPE^\top/V`, a function of ``EP``:

* ``mean_norm2_given_tokens`` :math:`\|r\|^2 - d - \mu_2(s^\top\phi)^2`;
* ``mean_S_given_rest`` :math:`(r^\top S_rr - \operatorname{tr}S_r - \mu_2(s^\top\phi)^2u^\top S_ru)/V` (the mean over
  ``r`` given ``EP``)."""


def token_operator(A, centered: bool) -> tuple:
    r"""A draw's :math:`D = \frac VN AA^\top` (``centered``: :math:`\frac VN A(I - \mathbf 1\mathbf 1^\top/N)A^\top`)
    of its sparse ``V x N`` token matrix ``A``, as ``(x -> Dx, tr D)``: :math:`S = \frac1V EDE^\top` exactly.

    >>> import scipy.sparse as sps
    >>> apply, trace = token_operator(sps.csc_matrix(np.array([[1.0, 0.0], [1.0, 1.0]])), True)
    >>> apply(np.array([1.0, 0.0])).tolist(), trace   # D = [[1/2, 0], [0, 0]]
    ([0.5, 0.0], 0.5)
    """
    V, N = A.shape
    squares = float(A.multiply(A).sum())
    if not centered:
        return (lambda x: (V / N) * (A @ (A.T @ x))), (V / N) * squares

    def apply(x):
        y = A.T @ x
        return (V / N) * (A @ (y - y.mean()))
    return apply, (V / N) * (squares - float(np.sum(np.asarray(A.sum(axis=1)) ** 2)) / N)


def population_operator(V: int, alpha: float, kappa: float, W: float) -> tuple:
    r"""The population's :math:`D = VM`, :math:`M = E[aa^\top] = c_I I + c_{11}\mathbf 1\mathbf 1^\top + c_{ss}ss^\top`
    (:func:`verify.montecarlo.population.table_covariance`: :math:`EME^\top = \frac1V EDE^\top`), as
    ``(x -> Dx, tr D)``."""
    from verify.montecarlo.population import coefficients

    c_I, c_11, c_ss = coefficients(alpha, kappa, W, V)
    s = balanced_signs(V)
    return (lambda x: V * (c_I * x + c_11 * x.sum() + c_ss * (s @ x) * s)), V * V * (c_I + c_11 + c_ss)


def row_controls(E: np.ndarray, mu2: float, operator) -> np.ndarray:
    """The control variates :data:`ROW_CONTROLS` of a table ``E`` (``mu = sqrt(mu2) e_1``) and an ``operator``
    ``(x -> Dx, tr D)`` (:func:`token_operator`, :func:`population_operator`)."""
    apply, trace = operator
    d, V = E.shape
    s = balanced_signs(V)
    n = d - 1
    e, Y = E[0], E[1:]
    De = apply(e)
    f = De / V
    b = Y @ f
    Ytb = Y.T @ b
    ff = float(f @ f)
    return np.array([(e @ De - trace - mu2 * float(s @ apply(s))) / V, b @ b - n * ff,
                     (Ytb @ apply(Ytb) - (n * n + n) * float(f @ apply(f)) - n * trace * ff) / V])


def mean_controls(data: Draw, mu2: float, iterations: int = 30) -> np.ndarray:
    r"""The control variates :data:`MEAN_CONTROLS` of one draw; :math:`\phi` by ``iterations`` steps of the power
    method from :math:`\mathbf 1` (the mean eigenvalue of the raw ``D`` stands far above the rest; were
    :math:`\phi` not converged the controls would keep their mean 0, only explain less)."""
    A, E = data.A, data.E
    apply, _ = token_operator(A, False)
    d, V = E.shape
    N = A.shape[1]
    s = balanced_signs(V)
    phi = np.ones(V) / np.sqrt(V)
    for _ in range(iterations):
        phi = apply(phi)
        phi /= np.linalg.norm(phi)
    r, along = E @ phi, float(s @ phi)
    v = E.T @ r
    v -= phi * (phi @ v)  # P E^T r
    e = E[0] - phi * (phi @ E[0])  # P E^T u
    # tr S_r = ||E P A||_F^2 / N, E P A = E A - r (A^T phi)^T
    C, a = (A.T @ E.T).T, A.T @ phi
    trace = (float(np.sum(C * C)) - 2 * float(r @ (C @ a)) + float(r @ r) * float(a @ a)) / N
    return np.array([r @ r - d - mu2 * along**2,
                     (v @ apply(v) / V - trace - mu2 * along**2 * (e @ apply(e)) / V) / V])


def conditional_controls(data: Draw, centered: bool, mu2: float) -> np.ndarray:
    """The control variates of one draw of the sample level whose mean is 0 given its tokens: :func:`row_controls` of
    its ``D`` and, on the raw ``S``, those of the centered ``D`` too (made of the tokens, they follow the signal outlier
    without the mean's part of ``D``) and :func:`mean_controls`."""
    rows = [row_controls(data.E, mu2, token_operator(data.A, True))]
    if not centered:
        rows += [row_controls(data.E, mu2, token_operator(data.A, False)), mean_controls(data, mu2)]
    return np.concatenate(rows)


def outlier_row(values: np.ndarray, vectors: np.ndarray, mean: np.ndarray) -> tuple:
    """From the top eigenpairs (``values`` descending, unit ``vectors`` as columns, ``u = e_1``) and the table's
    mean direction ``mean``: ``(signal eigenvalue, signal overlap, top eigenvalue, top overlap, mean-outlier
    eigenvalue, whether the signal outlier is the top one, mean overlap)``; the mean overlap is the largest squared
    overlap of the unit mean direction with a top eigenvector: O(1) with a mean outlier, O(1/d) without."""
    overlaps = vectors[0] ** 2
    along_mean = (mean @ vectors) ** 2 / float(mean @ mean)
    i, j = int(np.argmax(overlaps)), int(np.argmax(along_mean))
    return values[i], overlaps[i], values[0], overlaps[0], values[j], i == 0, along_mean[j]
