r"""One draw's values at the user's ``d``, with the token classes above the signal integrated out where they are
rare, and the parts of their error that sampling does not show.

*The classes above the signal* (``above``). A token class (at one nonzero weight: a count ``k``) whose spike of ``D``
lies above the signal's root, :math:`c_k > t_s`, decides whether the signal's eigenvalue is the top one: if any token
of it is present, that token's eigenvalue is above the signal's. Where such classes are rare (a handful of tokens or
fewer among ``V``), their numbers of tokens are independent Poisson variables with means :math:`\Lambda_k = V p_k`
(Poisson approximation of the multinomial counts; its error is :math:`O(\Lambda q k^2/\lambda)` relative,
:math:`q = \sum p_k`), and the draw's values can be averaged over them exactly instead of sampled (Rao–Blackwell): the
largest class present, ``M``, has :math:`P(M = j) = (1 - e^{-\Lambda_j})\exp(-\sum_{i > j}\Lambda_i)` (classes in
increasing :math:`c`) and none is present with probability :math:`P_0 = \exp(-\sum\Lambda_k)`. Given ``M = j`` the top
eigenpair is the tokens': their pole, of weight :math:`q_j = \bar n_j/V` along ``s`` (:math:`\bar n_j =
\Lambda_j/(1 - e^{-\Lambda_j})` tokens on average given one; the quantities below are linear in :math:`q_j` to first
order), joins :math:`S_1`, whose top root lies :math:`\varepsilon_j = q_jc_j/(\delta(S_1(c_j) + 1/\mu_2))` above
it, at :math:`x(c_j + \varepsilon_j)` with squared overlap :math:`x'/(\mu_2 t(S_1'(t) + q_jc_j/(\delta\varepsilon_j^2)))`
(:math:`O(q_j)`); the top of the bulk is :math:`x(c_j)` and the threshold :math:`-1/\tilde S_1(c_j)`. So

.. math:: E[X] = P_0\,X_\text{draw} + \sum_j P(M = j)\,X_j,

and the same for :math:`X^2` (the spread over draws is that of the draws themselves, not of these averages). Present,
those tokens also add their poles to :math:`S_1`, which moves the signal's root and lowers its overlap by
:math:`O(1/V)` each: the signal's eigenpair is taken with the poles at their expected weights :math:`\Lambda_k/V` along
``s`` (:func:`~derive.vocabulary.draw.observed.with_poles`; first order in them).

*The order of nearby eigenvalues* (``order_error``). Given ``D`` each eigenvalue of ``S`` fluctuates about its
deterministic equivalent by :math:`O(d^{-1/2})`, nearly independently of the others: a token spike at :math:`c` (a
generalized spike of the population :math:`c_v` in ``d`` samples; Bai and Yao 2008) with variance
:math:`\sigma_c^2 = 2c^2x'(c)/d`, the signal with a variance between 0 and :math:`\sigma_s^2 = 2\ell^2x'(t_s)/V` (the
spiked model's variance in its own units, Paul 2007, is :math:`((\delta+\mu_2)/\mu_2)^2` times smaller at ``D = I``;
along ``u`` the table's entries are lighter-tailed than Gaussian, which lowers it further). A token ``j`` at
:math:`x_j = x(c_j)` then stands above the signal's eigenvalue :math:`\ell` with probability
:math:`\pi_j = \Phi((x_j - \ell)/\sqrt{\sigma_{c_j}^2 + \sigma^2})` (their coupling, :math:`O(V^{-1/2})`, is far below
these fluctuations, so the two cross rather than mix), and the signal is on top with probability

.. math:: P = B\prod_j(1 - \pi_j)^{n_j}\exp\Bigl(-\sum_k\Lambda_k\pi_k\Bigr),

``B`` = 1 where the signal stands above the bulk without its token spikes (else 0), ``j`` the draw's token spikes
(``n_j`` tokens each), ``k`` the classes averaged over. The draw's ``on_top`` is the mean of ``P`` at
:math:`\sigma = 0` and :math:`\sigma = \sigma_s` (where the deterministic order gives 0 or 1), ``order_error`` half their
difference; the overlap of the top eigenvector moves with it (times the signal's overlap), and the top eigenvalue by at
most :math:`\sum_j n_j\pi_j|x_j - \ell|` (``eigenvalue_error``). The top of a cluster of ``n`` equal token spikes lies
above :math:`x(c)` by about :math:`\sigma_c\sqrt{2\log n}` (the largest of ``n`` fluctuations), which the draw's value
leaves out: ``top_error``.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from derive.vocabulary.draw.observed import signal_eigenpair, with_poles
from derive.vocabulary.draw.spectrum import functions as conditional_functions

__all__ = ["FIELDS", "DrawValues", "draw_values"]

FIELDS = ("on_top", "eigenvalue", "overlap", "signal_overlap", "top", "mu2_critical")
"""The quantities a user measures, in the order of :class:`DrawValues`."""


@dataclass(frozen=True)
class DrawValues:
    """One draw's expected values (:data:`FIELDS`; ``on_top`` a probability), their expected squares ``squares`` (same
    order), and the error parts sampling does not show: ``order_error`` (probability), ``eigenvalue_error``,
    ``overlap_error`` (from the order of nearby eigenvalues) and ``top_error`` (the top of a cluster of token spikes)."""

    values: tuple
    squares: tuple
    order_error: float
    eigenvalue_error: float
    overlap_error: float
    top_error: float


def _phi_bar(z: float) -> float:
    """:math:`\\Phi(-z)`, the standard normal upper tail."""
    return 0.5 * math.erfc(z / math.sqrt(2))


def _x(o, tv):
    """``(x, x')`` of the draw's bulk at ``tv``."""
    s0, ds0 = o.bulk.S0(tv, 1)
    return tv * (1 - s0), 1 - s0 - tv * ds0


def draw_values(o, mu2: float, d: int, above=(), own=False) -> DrawValues:
    r"""The :class:`DrawValues` of the draw ``o`` (:class:`~derive.vocabulary.draw.finite_size.DrawOutlier`) at
    ``mu2`` and dimension ``d``, the rare classes ``above`` (pairs ``(c_k, Lambda_k)``: spikes of ``D`` above both the
    signal's root and the draw's own top, and the expected numbers of their tokens) averaged over (module docstring).
    ``own``: the draw's :func:`~derive.vocabulary.draw.observed.signal_eigenpair` if known.

    Without ``above`` a draw whose signal is on top has ``on_top`` 1; a class with one expected token above it makes
    the probability :math:`e^{-1}`:

    >>> from derive.vocabulary.draw.finite_size import draw_outlier
    >>> from derive.vocabulary.draw.spectrum import SpectralMeasures
    >>> one = np.array([1.0])
    >>> o = draw_outlier(SpectralMeasures(0.5 * one, one, one, 0 * one, 0.5, 20000), centered=True)
    >>> [round(x, 10) for x in draw_values(o, 3.0, 10000).values[:3]]
    [1.0, 4.6666666667, 0.8095238095]
    >>> v = draw_values(o, 3.0, 10000, above=[(6.0, 1.0)])
    >>> round(v.values[0], 6), round(math.exp(-1), 6), round(v.values[3], 4)  # the token's pole takes a little of u
    (0.367879, 0.367879, 0.8081)
    """
    mu2 = float(mu2)
    V, delta = o.full.V, o.full.delta
    on_top, eigenvalue, overlap = o.at(mu2)
    own = signal_eigenpair(o, mu2) if own is False else own
    signal_overlap = 0.0 if own is None else own[1]
    if own is not None and above and mu2 > 0:
        # the classes averaged over add their poles to S_1 when present: the signal's root and overlap with their
        # expected weights Lambda_k/V along s (linear in them to first order)
        moved = with_poles(o, mu2, own, [(c, lam / V) for c, lam in above])
        if on_top:
            overlap *= moved[1] / own[1]
        signal_overlap = moved[1]
    draw = (float(on_top), float(eigenvalue), float(overlap), signal_overlap, float(o.expected_top),
            float(o.mu2_critical))
    f = conditional_functions()
    rows, lams = [], []
    for c, lam in sorted(above):
        if mu2 > 0:
            q = lam / -math.expm1(-lam) / V  # the class's weight along s: its mean number of tokens given one, over V
            eps = q * c / (delta * (float(o.full.S1(c)) + 1 / mu2))
            tv = c + eps
            s0, ds0 = o.bulk.S0(tv, 1)
            ds1 = float(o.full.S1(tv, 1)[1]) + q * c / (delta * eps**2)
            top_pair = float(f["location"](tv, mu2, s0, ds0, ds1)), float(f["overlap"](tv, mu2, s0, ds0, ds1))
        else:  # no signal: the token's own eigenvalue, no overlap
            top_pair = float(_x(o, c)[0]), 0.0
        rows.append((0.0, *top_pair, signal_overlap, float(_x(o, c)[0]), -1 / float(o.signal.S1(c))))
        lams.append(lam)
    lams = np.array(lams, dtype=float)
    later = np.concatenate([np.cumsum(lams[::-1])[::-1][1:], [0.0]]) if lams.size else lams
    weights = -np.expm1(-lams) * np.exp(-later)
    p0 = float(np.exp(-lams.sum()))
    table = np.array([draw] + rows)
    w = np.concatenate([[p0], weights])
    values = tuple(float(x) for x in w @ table)
    squares = tuple(float(x) for x in w @ table**2)
    values = (values[0], *values[1:3], signal_overlap, *values[4:])
    # the order of the signal and the tokens near it; the top of a cluster of token spikes
    order = eig_err = top_err = 0.0
    token = ~np.isin(o.full.c, o.signal.c)
    if own is not None:
        ell, t_s = own[0], own[2]
        var_s = 2 * ell**2 * max(_x(o, t_s)[1], 0.0) / V
        pairs = [(float(c), p * V, False) for c, p in zip(o.full.c[token], o.full.p[token])]
        pairs += [(c, lam, True) for c, lam in sorted(above)]
        smooth = []
        for var in (0.0, var_s):
            log_p = 0.0
            for c, n, mean in pairs:
                xc, dx = _x(o, c)
                sigma = math.sqrt(2 * c**2 * max(dx, 0.0) / d + var)
                up = _phi_bar((ell - xc) / sigma) if sigma > 0 else float(xc > ell)
                log_p += -n * up if mean else (n * math.log1p(-up) if up < 1 else -math.inf)
                if var:
                    eig_err += n * min(up, 1 - up) * abs(xc - ell)
            smooth.append(math.exp(log_p) if own[2] > o.t_edge else 0.0)
        estimate, order = (smooth[0] + smooth[1]) / 2, abs(smooth[1] - smooth[0]) / 2
        shift = estimate - values[0]
        values = (estimate, values[1], values[2] + shift * signal_overlap, *values[3:])
        squares = (estimate, *squares[1:])
    if token.any():
        i = int(np.argmax(np.where(token, o.full.c, -np.inf)))
        n, c = o.full.p[i] * V, float(o.full.c[i])
        if n >= 2 and not o.edge:
            top_err = math.sqrt(2 * c**2 * max(_x(o, c)[1], 0.0) / d) * math.sqrt(2 * math.log(n))
    return DrawValues(values, squares, order, eig_err, order * signal_overlap, top_err)
