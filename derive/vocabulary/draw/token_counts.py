r"""The model at the user's ``d`` with one nonzero weight, from the token counts alone: the exact reference.

With one nonzero weight (``T = 1``, or weights with a single nonzero entry, normalized to 1) the token matrix is
diagonal, :math:`D = \frac VN w^2\operatorname{diag}(n_v)` with :math:`n_v` the number of sequences whose token at that
position is ``v``; centered, its rank-one downdate by :math:`b = A\mathbf 1 = w\,n`. Its spectral measures need only
the *histogram* of the counts in each class, :math:`H^\pm_k = \#\{v : s_v = \pm1,\ n_v = k\}`: the groups of equal
entries hold :math:`H^+_k + H^-_k` tokens, with :math:`\sum b_v^2 = (wk)^2(H^+_k + H^-_k)`, :math:`\sum s_vb_v =
wk(H^+_k - H^-_k)`, :math:`\sum b_v = wk(H^+_k + H^-_k)` (:func:`derive.vocabulary.draw.spectrum.diagonal_groups`).

*The law of the histogram, exactly.* The class sign at that position is a fair sign (``E[xi] = 0``) independently
across sequences, so :math:`N_+ \sim \mathrm{Bin}(N, 1/2)` sequences fall in class ``+`` (the family matters no
further), and given :math:`N_\pm` each class's counts are a multinomial of :math:`N_\pm` balls in :math:`M = V/2`
equally likely cells (:func:`occupancy_histogram`). Its histogram is drawn without the ``M`` cells:

1. the histogram of ``M`` independent Poisson(:math:`\lambda'`) cells is a multinomial over the count values
   (:math:`O(K)`; the values ``k`` with :math:`Mp_k < 10^{-30}` left out: a draw that would hold one is redrawn, a
   change of the law below :math:`10^{-30}`), :math:`M\lambda' = n - 2\sqrt n`; given their total ``S`` those cells
   are a multinomial of ``S`` balls; a draw with :math:`S > n` is rejected (probability about 2%), which leaves that
   law as it is;
2. the other :math:`r = n - S` balls (:math:`O(\sqrt n)`) are thrown uniformly into cells numbered by their count
   (the first :math:`h_0` cells hold 0 balls, the next :math:`h_1` one, ...: the cells are exchangeable, and the balls'
   cells uniform and independent of the numbering); each cell hit ``m`` times moves from its count ``k`` to ``k + m``.

A multinomial of ``S`` balls plus an independent one of ``n - S`` is a multinomial of ``n``: the histogram is the
model's, exactly, in :math:`O(K + \sqrt n\log n)` instead of :math:`O(V)`.

*Each draw* (:func:`count_draw`) is then :func:`derive.vocabulary.draw.finite_size.draw_outlier` of those measures
and what a user measures in it, :func:`derive.vocabulary.draw.observed.observe`: milliseconds at any ``d`` up to
``1e9``. The same token matrix gives the same measures as :func:`derive.vocabulary.draw.spectrum.spectral_measures` (a
test), so this is the sampled path of :mod:`derive.vocabulary.draw.finite_size` with the ``V`` tokens left out.
"""
from __future__ import annotations

import math

import numpy as np

from derive.errors import ParameterError
from derive.vocabulary.draw.spectrum import SpectralMeasures, diagonal_groups

__all__ = ["one_weight", "occupancy_histogram", "class_histograms", "histogram_of_counts", "count_measures",
           "count_draw"]


def one_weight(weights) -> tuple[int, float] | None:
    """``(position, weight)`` of the single nonzero weight, or ``None`` if there are more (or none).

    >>> one_weight([0.0, 1.0]), one_weight([0.5, 0.5])
    ((1, 1.0), None)
    """
    w = np.asarray(weights, dtype=float)
    nz = np.flatnonzero(w)
    return (int(nz[0]), float(w[nz[0]])) if nz.size == 1 else None


def _poisson_pmf(lam: float, K: int) -> np.ndarray:
    k = np.arange(K + 1)
    if lam == 0:
        return (k == 0).astype(float)
    return np.exp(-lam + k * math.log(lam) - np.array([math.lgamma(j + 1) for j in k]))


def occupancy_histogram(rng: np.random.Generator, n: int, M: int) -> np.ndarray:
    r"""The histogram (``h[k]`` cells holding ``k`` balls) of ``n`` balls thrown uniformly into ``M`` cells, drawn
    exactly without the cells (module docstring), in :math:`O(K + \sqrt n\log n)`.

    >>> h = occupancy_histogram(np.random.default_rng(0), 10**6, 10**6)
    >>> int(h.sum()), int(h @ np.arange(h.size))
    (1000000, 1000000)
    """
    if M < 1 or n < 0:
        raise ParameterError("V", f"needs cells and balls, got M = {M}, n = {n}")
    if n == 0:
        return np.array([M], dtype=np.int64)
    lam = max(n - 2 * math.sqrt(n), 0.0) / M
    # the count values with M p_k above 1e-30; a draw with a cell beyond them (probability below 1e-30) is redrawn
    K = max(10, int(4 * lam) + 10)
    while M * _poisson_pmf(lam, K)[-1] > 1e-30:
        K += 10
    pmf = _poisson_pmf(lam, K)
    values = np.arange(K + 1)
    while True:
        h = rng.multinomial(M, np.append(pmf, 0.0)).astype(np.int64)
        S = int(h[:-1] @ values)
        if not h[-1] and S <= n:
            h = h[:-1]
            break
    r = n - S
    if r:
        cells, mult = np.unique(rng.integers(0, M, size=r), return_counts=True)
        # cells are exchangeable: number them by count (the first h[0] hold 0, ...), the balls' cells being uniform
        labels = np.searchsorted(np.cumsum(h), cells, side="right")
        moved = labels + mult
        h = np.concatenate([h, np.zeros(max(0, int(moved.max()) + 1 - h.size), dtype=np.int64)])
        h -= np.bincount(labels, minlength=h.size)
        h += np.bincount(moved, minlength=h.size)
    return h[: int(np.flatnonzero(h)[-1]) + 1]


def class_histograms(rng: np.random.Generator, V: int, N: int) -> tuple[np.ndarray, np.ndarray]:
    r"""The count histograms of the two classes at one nonzero weight: :math:`N_+ \sim \mathrm{Bin}(N, 1/2)`, then
    :func:`occupancy_histogram` of :math:`N_\pm` balls in ``V/2`` cells each."""
    plus = int(rng.binomial(N, 0.5))
    return occupancy_histogram(rng, plus, V // 2), occupancy_histogram(rng, N - plus, V // 2)


def histogram_of_counts(counts: np.ndarray, s: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The class histograms of given per-token ``counts`` (classes by the signs ``s``): what :func:`class_histograms`
    samples, from a token matrix (the tests hold the two paths to each other)."""
    counts = np.asarray(counts).astype(np.int64)
    return np.bincount(counts[s > 0]), np.bincount(counts[s < 0])


def count_measures(plus: np.ndarray, minus: np.ndarray, weight: float, V: int, N: int, d: int,
                   centered: bool) -> SpectralMeasures:
    r"""The exact :class:`~derive.vocabulary.draw.spectrum.SpectralMeasures` of the diagonal ``D`` whose class
    histograms are ``plus, minus`` (module docstring), at dimension ``d`` (:math:`\delta = d/V`).

    >>> m = count_measures(np.array([1, 1]), np.array([1, 0, 1]), 1.0, 4, 3, 2, False)  # counts 0, 1 | 0, 2
    >>> m.c, m.p, m.q
    (array([0.66666667, 1.33333333]), array([0.25, 0.25]), array([0.25, 0.25]))
    """
    K = max(plus.size, minus.size)
    hp, hm = (np.pad(np.asarray(h, dtype=float), (0, K - h.size)) for h in (plus, minus))
    k = np.arange(K, dtype=float)
    keep = (k > 0) & (hp + hm > 0)
    k, hp, hm = k[keep], hp[keep], hm[keep]
    size = hp + hm
    b = weight * k
    return diagonal_groups((V / N) * weight**2 * k, size, b * b * size, b * (hp - hm), b * size, V, N, d / V, centered)


def count_draw(rng: np.random.Generator, weight: float, V: int, N: int, d: int, centered: bool):
    """One draw of the model at one nonzero weight: the :class:`~derive.vocabulary.draw.finite_size.DrawOutlier` of
    :func:`count_measures` of :func:`class_histograms`."""
    from derive.vocabulary.draw.finite_size import draw_outlier

    plus, minus = class_histograms(rng, V, N)
    return draw_outlier(count_measures(plus, minus, weight, V, N, d, centered), centered)
