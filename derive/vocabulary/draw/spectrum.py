r"""One draw's token matrix ``D`` and its exact spectral measures: the population of the law of ``S`` conditional on
that draw (exact up to :math:`O(1/d)` for it).

*Setting.* Given the ``V x N`` token matrix ``A`` of a draw (:math:`A_{vn}` the sum of the weights of the positions of
sequence ``n`` that hold token ``v``) and :math:`D = \frac VN AA^\top` (centered :math:`S_c`:
:math:`D = \frac VN A(I - \mathbf 1\mathbf 1^\top/N)A^\top`), :math:`S = \frac1V EDE^\top` with
:math:`E = Z + \sqrt{\mu_2}\,us^\top` and ``Z`` Gaussian, independent of ``A``. With :math:`D = \sum_i \tau_i
\phi_i\phi_i^\top`, :math:`c_i = \delta\tau_i` (:math:`\delta = d/V` of the draw), the two transforms of
:mod:`derive.vocabulary.limit.signal` are sums of one atom's term :func:`derive.vocabulary.limit.silverstein.summand`,

.. math:: S_0(t) = \sum_i p_i\,\frac{c_i}{\delta(c_i - t)},\quad p_i = \frac1V;\qquad
          S_1(t) = \sum_i q_i\,\frac{c_i}{\delta(c_i - t)},\quad q_i = \frac{(s^\top\phi_i)^2}V,

the first the spectral measure of ``D`` over all directions (the *population* of Silverstein's equation, whose
generalized Marchenko–Pastur law is the conditional bulk, :func:`derive.vocabulary.draw.bulk.conditional_bulk`), the
second its spectral measure at :math:`s/\sqrt V` (:class:`SpectralMeasures`).

*The gaps.* :math:`C(t) = 1 - x'(t) = S_0 + tS_0' = \frac1\delta\sum_i p_i c_i^2/(c_i - t)^2` is convex between two
atoms, so each interval :math:`(c_i, c_{i+1})` holds at most one gap, :math:`\{C < 1\}`. Two atoms alone bound ``C``
below by :math:`a_i/(t-c_i)^2 + a_{i+1}/(c_{i+1}-t)^2` (:math:`a_i = p_ic_i^2/\delta`), whose minimum is
:math:`(a_i^{1/3} + a_{i+1}^{1/3})^3/L^2` on an interval of length ``L``: only intervals longer than
:math:`(a_i^{1/3} + a_{i+1}^{1/3})^{3/2}` can hold a gap, and only those are searched (a few at the top of the
spectrum; inside the bulk of ``D`` the atoms are :math:`O(1/V)` apart with masses :math:`1/V`).

The outliers given the draw are :mod:`derive.vocabulary.draw.outliers`, its bulk :mod:`derive.vocabulary.draw.bulk`;
the transforms of a draw too large to eigen-decompose, :mod:`derive.vocabulary.draw.quadrature`; the measures of a
diagonal ``D`` from its groups of equal entries (:func:`diagonal_groups`), which a draw's token counts give without the
tokens, :mod:`derive.vocabulary.draw.token_counts`.
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property, lru_cache

import numpy as np

from derive.cache import mpmath_functions
from derive.errors import ParameterError
from derive.vocabulary.draw.tokenmatrix import TokenMatrix
from derive.vocabulary.limit.gaps import convex_gaps, right_edge

__all__ = ["NULL", "MERGE", "functions", "atom_sums", "token_matrix", "drawn_token_matrix", "x_at", "x_gap",
           "SpectralMeasures", "check_draw", "eigen_weights", "spectral_measures", "diagonal_groups"]

NULL = 1e-10
"""Eigenvalues of ``D`` below this fraction of the largest are its null space (rounding-level numbers of either sign;
an atom at zero adds nothing to :math:`S_0` or :math:`S_1`)."""

MERGE = 1e-10
"""Eigenvalues of ``D`` closer than this fraction of the largest are one atom (repeated eigenvalues, which the token
graph's small components make common, come out of LAPACK that close)."""


_NAMES = ("term", "C", "location", "overlap")


def _expressions() -> dict:
    """The SymPy expressions of :func:`functions` (only when the derivation cache does not hold them)."""
    import sympy as sp

    from derive.symbols import delta
    from derive.vocabulary.limit.signal import plain_equations
    from derive.vocabulary.limit.silverstein import c, summand, t

    arguments, (location, overlap) = plain_equations()
    return {"term": [((c, t, delta), sp.diff(summand(), t, k)) for k in range(3)],
            "C": ((c, t, delta), sp.factor(summand() + t * sp.diff(summand(), t))),
            "location": (arguments, location), "overlap": (arguments, overlap)}


@lru_cache(maxsize=None)
def functions() -> dict:
    r"""The numeric functions of the law given a draw, printed once from their SymPy expressions and kept in the derivation
    cache (:func:`derive.cache.mpmath_functions`; their source is plain arithmetic, so they take NumPy arrays too):
    ``term``, one atom's term :func:`derive.vocabulary.limit.silverstein.summand` of :math:`S_j` and its first two
    ``t``-derivatives, of ``(c, t, delta)``; ``C``, one atom's term of :math:`C = S_0 + tS_0'` (the gaps' function, in
    one pass); ``location`` and ``overlap`` of
    :func:`derive.vocabulary.limit.signal.plain_equations`, of :math:`(t, \mu_2, S_0, S_0', S_1')`.

    >>> f = functions(); f["term"][1](np.array([1.0, 2.0]), 3.0, 0.5), f["location"](2.0, 1.0, 0.25, 0.5, 0.5)
    (array([0.5, 4. ]), 1.5)
    >>> f["C"](np.array([1.0, 2.0]), 3.0, 0.5)   # c^2/(delta (c - t)^2)
    array([0.5, 8. ])
    """
    return mpmath_functions("conditional", _NAMES, _expressions)


def atom_sums(cs: np.ndarray, ws: np.ndarray, tv, delta: float, order: int) -> np.ndarray:
    """:math:`\\sum_i w_i\\,\\partial_t^k s_{c_i}(t)` for ``k = 0..order`` at the points ``tv`` (real or complex):
    ``(order + 1,) + shape(tv)``."""
    return np.array([_atom_sum(f, cs, ws, tv, delta) for f in functions()["term"][: order + 1]])


def _atom_sum(f, cs: np.ndarray, ws: np.ndarray, tv, delta: float) -> np.ndarray:
    r""":math:`\sum_i w_if(c_i, t, \delta)` at the points ``tv``: ``shape(tv)``."""
    tv = np.asarray(tv)
    cs = cs.reshape((-1,) + (1,) * tv.ndim)
    return np.sum(ws.reshape(cs.shape) * f(cs, tv[None], delta), axis=0)


def token_matrix(A, centered: bool = False) -> np.ndarray:
    r"""The dense ``V x V`` matrix :math:`D = \frac VN A A^\top` (``centered``: :math:`\frac VN A(I -
    \mathbf 1\mathbf 1^\top/N)A^\top`) of a ``V x N`` token matrix ``A`` (:meth:`TokenMatrix.of`).

    >>> token_matrix(np.array([[1.0, 0.0], [0.0, 1.0]]), centered=True)
    array([[ 0.5, -0.5],
           [-0.5,  0.5]])
    """
    A = TokenMatrix.of(A)
    tokens, D = drawn_token_matrix(A, centered)
    out = np.zeros((A.V, A.V))
    out[np.ix_(tokens, tokens)] = D
    return out


def drawn_token_matrix(A, centered: bool = False) -> tuple[np.ndarray, np.ndarray]:
    r"""The tokens drawn (:meth:`TokenMatrix.drawn`) and :func:`token_matrix` on their rows and columns alone: a token
    never drawn has a zero row in ``A``, so a zero row and column in ``D``, raw or centered (an exact null vector).

    >>> tokens, D = drawn_token_matrix(np.array([[1.0, 0.0], [0.0, 0.0], [0.0, 1.0]]), centered=True)
    >>> tokens.tolist(), D.tolist()
    ([0, 2], [[0.75, -0.75], [-0.75, 0.75]])
    """
    A = TokenMatrix.of(A)
    V, N = A.shape
    tokens, B = A.drawn()
    D = (V / N) * B.token_gram()
    if centered:
        b = B.row_sums()
        D -= (V / N**2) * np.outer(b, b)
    return tokens, D


def x_at(transforms, tv) -> float:
    """:math:`x(t) = t(1 - S_0(t))` of ``transforms`` (:class:`SpectralMeasures` or a quadrature's) at a real ``t``."""
    return float(tv * (1 - transforms.S0(tv)))


def x_gap(transforms, ta: float, tb: float) -> tuple:
    """The gap ``(ta, tb)`` in ``t`` as ``(x(ta), x(tb))``, ``inf`` where ``tb`` is."""
    return x_at(transforms, ta), (x_at(transforms, tb) if np.isfinite(tb) else np.inf)


@dataclass(frozen=True)
class SpectralMeasures:
    r"""The spectral measures of ``D``, exactly: atoms :math:`c_i = \delta\tau_i` (the distinct positive eigenvalues of
    ``D`` times :math:`\delta = d/V`, ascending) with masses ``p`` (all directions: multiplicity/``V``), ``q`` (along
    the class signs: :math:`\|P_i s\|^2/V`, :math:`P_i` the eigenprojection) and ``r`` (the same along
    :math:`\mathbf 1`); the null space holds the rest of each (``1 - sum``).

    >>> m = spectral_measures(np.array([[1.0, 0.0], [0.0, 1.0]]), np.array([1.0, -1.0]), d=1)
    >>> m.c, m.p, m.q, m.delta, m.V
    (array([0.5]), array([1.]), array([1.]), 0.5, 2)
    >>> float(m.S0(2.0)), m.S1(2.0, 1)   # one atom: S = c/(delta (c - t)), S' = c/(delta (c - t)^2)
    (-0.6666666666666666, array([-0.66666667,  0.44444444]))
    """

    c: np.ndarray
    p: np.ndarray
    q: np.ndarray
    r: np.ndarray
    delta: float
    V: int
    method = "exact"

    def S0(self, tv, order: int = 0) -> np.ndarray:
        r""":math:`S_0` (with ``order``, its derivatives too: an array ``(order + 1,) + shape(tv)``)."""
        out = atom_sums(self.c, self.p, tv, self.delta, order)
        return out if order else out[0]

    def S1(self, tv, order: int = 0) -> np.ndarray:
        r""":math:`S_1` (with ``order``, its derivatives too)."""
        out = atom_sums(self.c, self.q, tv, self.delta, order)
        return out if order else out[0]

    def S0_probes(self, tv) -> np.ndarray:
        """:math:`(S_0, S_0')` at ``tv`` as one exact "probe" (``1 x 2``): no quadrature error."""
        return self.S0(tv, 1)[None, :]

    def C(self, tv) -> np.ndarray:
        r""":math:`C = 1 - x' = S_0 + tS_0' = \frac1\delta\sum_i p_ic_i^2/(c_i - t)^2`."""
        return _atom_sum(functions()["C"], self.c, self.p, tv, self.delta)

    def subset(self, keep: np.ndarray) -> "SpectralMeasures":
        """The measures on the atoms ``keep`` (a boolean mask)."""
        return SpectralMeasures(self.c[keep], self.p[keep], self.q[keep], self.r[keep], self.delta, self.V)

    @cached_property
    def spikes(self) -> np.ndarray:
        r"""The atoms that are spikes (indices): single eigenvalues of ``D`` standing apart from the rest, where the
        rest's :math:`C(c_a) < 1` (:math:`x'(c_a) > 0`: a generalized spike, Bai and Yao 2012). A spike is one
        eigenvalue of ``S`` at :math:`x(c_a)` of the rest, not a cluster of the bulk; added in turn until none is
        left (removing a spike only lowers ``C`` elsewhere). A repeated eigenvalue standing apart stays in the bulk,
        where it makes a cluster of that many eigenvalues (a Wishart block of its multiplicity).

        An atom's term from a neighbour that is never a spike, or from one on which it has as large a term, keeps it in
        the bulk for good when that term is above 1 (of two atoms with terms above 1 on each other, neither can leave
        first): only the other single atoms are tried, which inside the bulk of ``D`` leaves few."""
        single = self.p < 1.5 / self.V
        a = self.p * self.c**2
        gap = self.delta * np.diff(self.c) ** 2
        held = 1 + 1e-9  # above 1 by more than the rounding of the sums below
        up, down = a[1:] / gap > held, a[:-1] / gap > held  # atom k's term from k + 1; atom k + 1's from k
        stuck = np.zeros(self.c.size, dtype=bool)
        stuck[:-1] = up & (down | ~single[1:])
        stuck[1:] |= down & (up | ~single[:-1])
        single = np.flatnonzero(single & ~stuck)
        spikes = np.zeros(0, dtype=int)
        terms = self.p[None, :] * self.c[None, :] ** 2 / (self.delta * (self.c[None, :] - self.c[single, None]) ** 2
                                                         + (self.c[None, :] == self.c[single, None]))
        terms[np.arange(len(single)), single] = 0.0
        while True:
            found = single[terms.sum(axis=1) - terms[:, spikes].sum(axis=1) < 1]
            if len(found) == len(spikes):
                return spikes
            spikes = found

    def bulk(self) -> "SpectralMeasures":
        """The measures less the spikes: the population of the conditional bulk whose gaps hold the outliers."""
        keep = np.ones(self.c.size, dtype=bool)
        keep[self.spikes] = False
        return self.subset(keep)

    def poles(self) -> np.ndarray:
        """The poles of :math:`S_1` inside the gaps of :meth:`bulk`: the spikes."""
        return self.c[self.spikes]

    def S1_without_mean(self, tv) -> float:
        """:math:`S_1` less the mean atom's term (:meth:`mean_pole`)."""
        keep = np.arange(self.c.size) != int(np.argmax(self.r))
        return float(atom_sums(self.c[keep], self.q[keep], tv, self.delta, 0)[0])

    def mean_pole(self) -> float | None:
        r"""The atom most aligned with :math:`\mathbf 1` if it is a spike (the raw ``D``'s mean eigenvalue), else
        ``None``."""
        i = int(np.argmax(self.r))
        return float(self.c[i]) if i in self.spikes else None

    def gaps(self) -> list[tuple[float, float]]:
        r"""Every gap ``(ta, tb)`` (in ``t``) above the smallest atom, ascending, the last one ``(t_edge, inf)``: the
        intervals that pass the screen of the module docstring, searched by
        :func:`derive.vocabulary.limit.gaps.convex_gaps`."""
        if not self.c.size:  # every eigenvalue a spike (a tiny V): no bulk, C = 0
            return [(0.0, np.inf)]
        a = self.p * self.c**2 / self.delta
        cand = np.flatnonzero(np.diff(self.c) ** 2 > (np.cbrt(a[:-1]) + np.cbrt(a[1:])) ** 3)
        _, ta, tb = convex_gaps(self.C, self.c[cand], self.c[cand + 1])
        return list(zip(ta.tolist(), tb.tolist())) + [(right_edge(self.C, float(self.c[-1])), np.inf)]


def _grouped(tau: np.ndarray, weights: list, V: int, delta: float) -> SpectralMeasures:
    """Merge equal eigenvalues (:data:`MERGE`), drop the null space (:data:`NULL`), scale to atoms; ``weights``: per
    eigenvalue its multiplicity and the squared projections of ``s`` and :math:`\\mathbf 1` on its eigenspace."""
    top = float(np.max(tau)) if tau.size else 0.0
    if top <= 0:
        raise ParameterError("A", "the token matrix is zero")
    keep = (tau > NULL * top) & (weights[0] > 0)
    order = np.argsort(tau[keep])
    tau = tau[keep][order]
    weights = [w[keep][order] for w in weights]
    index = np.cumsum(np.concatenate([[True], np.diff(tau) > MERGE * top])) - 1
    mult, along_s, along_1 = (np.bincount(index, weights=w) for w in weights)
    means = np.bincount(index, weights=tau * weights[0]) / mult
    return SpectralMeasures(delta * means, mult / V, along_s / V, along_1 / V, delta, V)


def check_draw(A, s, d) -> tuple[TokenMatrix, int, int, np.ndarray]:
    """``(A, V, N, s)`` of a draw's token matrix, class signs and dimension, or a ``ParameterError`` naming the bad one."""
    A = TokenMatrix.of(A)
    V, N = A.shape
    s = np.asarray(s, dtype=float)
    if s.shape != (V,):
        raise ParameterError("s", f"needs V = {V} signs, got shape {s.shape}")
    if isinstance(d, bool) or not isinstance(d, (int, np.integer)) or d < 1:
        raise ParameterError("d", f"must be a positive integer, got {d!r}")
    return A, V, N, s


def eigen_weights(M, Y) -> tuple[np.ndarray, np.ndarray]:
    r"""The eigenvalues :math:`\lambda_i` of a real symmetric ``M``, ascending, and the squared projections
    :math:`W_{ji} = (\phi_i^\top y_j)^2` of the columns of ``Y`` on its eigenvectors, by NumPy's ``eigh``: the
    default of :func:`spectral_measures`; :func:`derive.vocabulary.draw.eigenweights.spectral_weights` gives the same
    without the eigenvectors.

    >>> lam, W = eigen_weights(np.array([[2.0, 1.0], [1.0, 2.0]]), np.array([[1.0, 1.0], [1.0, 0.0]]))
    >>> lam.round(12).tolist(), W.round(12).tolist()
    ([1.0, 3.0], [[0.0, 2.0], [0.5, 0.5]])
    """
    lam, phi = np.linalg.eigh(M)
    return lam, ((phi.T @ Y) ** 2).T


def spectral_measures(A, s, d: int, centered: bool = False, weights=eigen_weights) -> SpectralMeasures:
    r"""The exact :class:`SpectralMeasures` of a draw's token matrix ``A`` (``V x N``, dense or sparse), its class signs
    ``s`` and dimension ``d``.

    * Diagonal :math:`AA^\top` (no sequence holds two distinct tokens; always at one nonzero weight): the raw ``D`` is
      :math:`\frac VN\operatorname{diag}(\sum_n A_{vn}^2)`, and the centered one its rank-one downdate
      :math:`D - \rho bb^\top`, :math:`b = A\mathbf 1`, :math:`\rho = V/N^2`, solved by
      the secular equation (Golub 1973): on an eigenspace ``j`` of ``D`` (value :math:`d_j`) the part orthogonal to
      :math:`b_j` keeps :math:`d_j`, and in each interval below and between the :math:`d_j` with :math:`b_j \ne 0`
      one eigenvalue :math:`\lambda` solves :math:`\rho\sum_j\|b_j\|^2/(d_j - \lambda) = 1`, with eigenvector
      :math:`\propto (D - \lambda)^{-1}b`. Cost: the number of distinct counts, squared.
    * Otherwise the eigenvalues of the smaller of ``D`` (``V x V``, its tokens never drawn left out) and the Gram matrix
      :math:`G = \frac VN A_c^\top A_c` (``N x N``, :math:`A_c = A(I - \mathbf 1\mathbf 1^\top/N)` if ``centered``,
      else ``A``): an eigenpair :math:`(\lambda, g)` of ``G`` with :math:`\lambda > 0` is one of ``D`` with
      :math:`\phi = \sqrt{V/N}A_cg/\sqrt\lambda`, so :math:`s^\top\phi = \sqrt{V/N}(A_c^\top s)^\top g/\sqrt\lambda`.
      Cost: :math:`\min(V, N)^3` (``weights``: the eigenvalues and the weights of the two vectors on them,
      :func:`eigen_weights` or :func:`derive.vocabulary.draw.eigenweights.spectral_weights`), the matrix made from
      the pairs of ``A``'s entries (no dense ``A``).

    At one weight the raw ``D`` is the counts (times :math:`V/N`), each token its own eigenvector:

    >>> A = TokenMatrix.entries(4, 3, [0, 0, 2], [0, 1, 2], [1.0, 1.0, 1.0])   # counts 2, 0, 1, 0
    >>> m = spectral_measures(A, [1, 1, -1, -1], d=2); m.c, m.p, m.q
    (array([0.66666667, 1.33333333]), array([0.25, 0.25]), array([0.25, 0.25]))
    """
    A, V, N, s = check_draw(A, s, d)
    delta, ones = d / V, np.ones(V)
    if A.diagonal_gram():
        return _diagonal(A, s, V, N, delta, centered)
    if V <= N:
        used, D = drawn_token_matrix(A, centered)
        tau, (along_s, along_1) = weights(D, np.stack([s[used], ones[used]], axis=1))
        return _grouped(tau, [np.ones(len(used)), along_s, along_1], V, delta)
    G = (V / N) * A.sequence_gram()
    Ats, At1 = A.transpose_times(s)[:, 0], A.transpose_times(ones)[:, 0]
    if centered:
        G = G - G.mean(axis=0)[None, :]
        G = G - G.mean(axis=1)[:, None]
        Ats, At1 = Ats - Ats.mean(), At1 - At1.mean()
    lam, (along_s, along_1) = weights(G, np.stack([Ats, At1], axis=1))
    pos = lam > NULL * float(np.max(lam))
    scale = (V / N) / lam[pos]
    return _grouped(lam[pos], [np.ones(int(pos.sum())), scale * along_s[pos], scale * along_1[pos]], V, delta)


def _diagonal(A, s: np.ndarray, V: int, N: int, delta: float, centered: bool) -> SpectralMeasures:
    """:func:`spectral_measures` of a diagonal :math:`AA^\\top` (its docstring)."""
    dv = (V / N) * A.row_sums(2)
    ones = np.ones(V)
    if not centered:
        return _grouped(dv, [ones, s**2, ones], V, delta)
    b = A.row_sums()
    values, index = np.unique(dv, return_inverse=True)
    size, beta, sigma, iota = (np.bincount(index, weights=w, minlength=len(values)) for w in (ones, b * b, s * b, b))
    return diagonal_groups(values, size, beta, sigma, iota, V, N, delta, centered)


def diagonal_groups(values, size, beta, sigma, iota, V: int, N: int, delta: float, centered: bool) -> SpectralMeasures:
    r"""The :class:`SpectralMeasures` of a diagonal raw ``D`` given by its groups of equal entries (``values``, each held
    by ``size`` tokens; per group :math:`\sum b_v^2`, :math:`\sum s_vb_v`, :math:`\sum b_v` in ``beta, sigma, iota``,
    :math:`b = A\mathbf 1`): the raw ``D`` (every token its own eigenvector), or the centered one by the secular
    equation of :func:`spectral_measures`. A draw's token counts give them without the ``V`` tokens
    (:mod:`derive.vocabulary.draw.token_counts`)."""
    if not centered:
        return _grouped(values, [size, size, size], V, delta)
    moved = beta > 0
    safe = np.where(moved, beta, 1.0)
    # each eigenspace keeps its value on the part orthogonal to b
    kept = [np.where(moved, size - 1, size), np.where(moved, size - sigma**2 / safe, size),
            np.where(moved, size - iota**2 / safe, size)]
    rho = V / N**2
    poles, beta, sigma, iota = values[moved], beta[moved], sigma[moved], iota[moved]
    lo = np.concatenate([[poles[0] - 2 * rho * beta.sum()], poles[:-1]])
    hi = poles.copy()
    for _ in range(200):  # rho sum beta/(d - lambda) increases to +inf on each interval: bisection on it = 1
        mid = (lo + hi) / 2
        below = rho * np.sum(beta[:, None] / (poles[:, None] - mid[None, :]), axis=0) < 1
        lo, hi = np.where(below, mid, lo), np.where(below, hi, mid)
    lam = (lo + hi) / 2
    inv = 1 / (poles[:, None] - lam[None, :])
    norm2 = beta @ inv**2
    new = [np.ones_like(lam), (sigma @ inv) ** 2 / norm2, (iota @ inv) ** 2 / norm2]
    return _grouped(np.concatenate([values, lam]), [np.concatenate(pair) for pair in zip(kept, new)], V, delta)
