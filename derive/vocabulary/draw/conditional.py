r"""The model's outliers and bulk conditional on one draw's token matrix: exact up to :math:`O(1/d)` for that draw.

*Setting.* Given the ``V x N`` token matrix ``A`` of a draw (:math:`A_{vn}` the sum of the weights of the positions of
sequence ``n`` that hold token ``v``) and :math:`D = \frac VN AA^\top` (centered :math:`S_c`:
:math:`D = \frac VN A(I - \mathbf 1\mathbf 1^\top/N)A^\top`), :math:`S = \frac1V EDE^\top` with
:math:`E = Z + \sqrt{\mu_2}\,us^\top` and ``Z`` Gaussian, independent of ``A``. With :math:`D = \sum_i \tau_i
\phi_i\phi_i^\top`, :math:`c_i = \delta\tau_i` (:math:`\delta = d/V` of the draw), the two transforms of
:mod:`derive.vocabulary.limit.signal` are sums of one atom's term :func:`derive.vocabulary.limit.silverstein.summand`,

.. math:: S_0(t) = \sum_i p_i\,\frac{c_i}{\delta(c_i - t)},\quad p_i = \frac1V;\qquad
          S_1(t) = \sum_i q_i\,\frac{c_i}{\delta(c_i - t)},\quad q_i = \frac{(s^\top\phi_i)^2}V,

the first the spectral measure of ``D`` over all directions (the *population* of Silverstein's equation, whose
generalized Marchenko–Pastur law is the conditional bulk, :func:`conditional_bulk`), the second its spectral
measure at :math:`s/\sqrt V` (:class:`SpectralMeasures`).

*The signal outlier* (:func:`conditional_outliers`): a root of :math:`S_1(t) = -1/\mu_2` in a gap of the conditional
bulk (:math:`x'(t) > 0`, :math:`x = t(1 - S_0)`), at :math:`\ell = x(t)` with squared overlap
:math:`x'(t)/(\mu_2 t S_1'(t))` (:func:`derive.vocabulary.limit.signal.plain_equations`). :math:`S_1' > 0` off its poles, so a gap
holds at most one root, there iff :math:`S_1(t_a) \le -1/\mu_2 \le S_1(t_b)` at its ends; no root lies below the
smallest atom (:math:`S_1 > 0` there).

*The gaps.* :math:`C(t) = 1 - x'(t) = S_0 + tS_0' = \frac1\delta\sum_i p_i c_i^2/(c_i - t)^2` is convex between two
atoms, so each interval :math:`(c_i, c_{i+1})` holds at most one gap, :math:`\{C < 1\}`. Two atoms alone bound ``C``
below by :math:`a_i/(t-c_i)^2 + a_{i+1}/(c_{i+1}-t)^2` (:math:`a_i = p_ic_i^2/\delta`), whose minimum is
:math:`(a_i^{1/3} + a_{i+1}^{1/3})^3/L^2` on an interval of length ``L``: only intervals longer than
:math:`(a_i^{1/3} + a_{i+1}^{1/3})^{3/2}` can hold a gap, and only those are searched (a few at the top of the
spectrum; inside the bulk of ``D`` the atoms are :math:`O(1/V)` apart with masses :math:`1/V`).

*The raw S's mean outlier.* The raw ``D`` has an isolated top eigenvalue :math:`\tau_*` whose eigenvector is close to
:math:`\mathbf 1/\sqrt V` (the vocabulary's mean :math:`Z\mathbf 1/V`, strength :math:`W^2\delta`). A population atom
of mass :math:`1/V` standing apart is a generalized spike (Bai and Yao 2012): its eigenvalue of ``S`` is
:math:`x(\delta\tau_*)`, with ``x`` made of the population without that atom, where :math:`x'(\delta\tau_*) > 0`;
its eigenvector is asymptotically orthogonal to ``u``.

*Exactness.* Given ``D``, ``Z`` is still Gaussian: the deterministic equivalents of the resolvent's quadratic
forms hold to :math:`O(d^{-1/2})` for each draw with mean error :math:`O(1/d)` (the signal's equations:
:mod:`derive.vocabulary.limit.signal`). Monte Carlo minus this prediction, averaged over draws, is therefore
:math:`O(1/d)` (``tests/test_conditional.py``).
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property, lru_cache

import numpy as np

from derive.cache import mpmath_functions
from derive.errors import ParameterError
from derive.vocabulary.limit.gaps import convex_gaps, crossing
from derive.vocabulary.draw.tokenmatrix import TokenMatrix

__all__ = ["NULL", "MERGE", "PROBES", "STEPS", "EXACT_BELOW", "functions", "token_matrix", "SpectralMeasures", "spectral_measures",
           "QuadratureTransforms", "quadrature_transforms", "Outlier", "ConditionalOutliers", "conditional_outliers",
           "edge_curvature", "edge_weight",
           "conditional_prediction", "ConditionalBulk", "conditional_bulk"]

NULL = 1e-10
"""Eigenvalues of ``D`` below this fraction of the largest are its null space (rounding-level numbers of either sign;
an atom at zero adds nothing to :math:`S_0` or :math:`S_1`)."""

MERGE = 1e-10
"""Eigenvalues of ``D`` closer than this fraction of the largest are one atom (repeated eigenvalues, which the token
graph's small components make common, come out of LAPACK that close)."""

PROBES = 8
"""The Rademacher probes of the stochastic Lanczos quadrature of :math:`S_0` (:func:`quadrature_transforms`)."""

STEPS = 30
"""Lanczos steps per starting vector (:func:`quadrature_transforms`)."""

EXACT_BELOW = 500
"""``method='auto'`` of :func:`conditional_prediction` eigen-decomposes ``D`` (or its Gram matrix) when the smaller
of ``V, N`` is at most this, and uses the Lanczos quadrature above it (a diagonal ``D`` is always exact)."""


_NAMES = ("term", "location", "overlap")


def _expressions() -> dict:
    """The SymPy expressions of :func:`functions` (only when the derivation cache does not hold them)."""
    import sympy as sp

    from derive.symbols import delta
    from derive.vocabulary.limit.signal import plain_equations
    from derive.vocabulary.limit.silverstein import c, summand, t

    arguments, (location, overlap) = plain_equations()
    return {"term": [((c, t, delta), sp.diff(summand(), t, k)) for k in range(3)],
            "location": (arguments, location), "overlap": (arguments, overlap)}


@lru_cache(maxsize=None)
def functions() -> dict:
    r"""The numeric functions of this module, printed once from their SymPy expressions and kept in the derivation
    cache (:func:`derive.cache.mpmath_functions`; their source is plain arithmetic, so they take NumPy arrays too):
    ``term``, one atom's term :func:`derive.vocabulary.limit.silverstein.summand` of :math:`S_j` and its first two
    ``t``-derivatives, of ``(c, t, delta)``; ``location`` and ``overlap`` of
    :func:`derive.vocabulary.limit.signal.plain_equations`, of :math:`(t, \mu_2, S_0, S_0', S_1')`.

    >>> f = functions(); f["term"][1](np.array([1.0, 2.0]), 3.0, 0.5), f["location"](2.0, 1.0, 0.25, 0.5, 0.5)
    (array([0.5, 4. ]), 1.5)
    """
    return mpmath_functions("conditional", _NAMES, _expressions)


def _sum(cs: np.ndarray, ws: np.ndarray, tv, delta: float, order: int) -> np.ndarray:
    """:math:`\\sum_i w_i\\,\\partial_t^k s_{c_i}(t)` for ``k = 0..order`` at the points ``tv`` (real or complex):
    ``(order + 1,) + shape(tv)``."""
    tv = np.asarray(tv)
    cs = cs.reshape((-1,) + (1,) * tv.ndim)
    ws = ws.reshape(cs.shape)
    return np.array([np.sum(ws * f(cs, tv[None], delta), axis=0) for f in functions()["term"][: order + 1]])


def token_matrix(A, centered: bool = False) -> np.ndarray:
    r"""The dense ``V x V`` matrix :math:`D = \frac VN A A^\top` (``centered``: :math:`\frac VN A(I -
    \mathbf 1\mathbf 1^\top/N)A^\top`) of a ``V x N`` token matrix ``A`` (:meth:`TokenMatrix.of`).

    >>> token_matrix(np.array([[1.0, 0.0], [0.0, 1.0]]), centered=True)
    array([[ 0.5, -0.5],
           [-0.5,  0.5]])
    """
    A = TokenMatrix.of(A)
    V, N = A.shape
    D = (V / N) * A.token_gram()
    if centered:
        b = A.row_sums()
        D -= (V / N**2) * np.outer(b, b)
    return D


# ----------------------------------------------------------------------------------------------
# gaps


def _edge(C, top: float) -> float:
    """The right edge in ``t``: the crossing of ``C = 1`` past the top pole, where ``C`` falls from ``+inf`` to 0."""
    far = 2 * top
    while C(far) >= 1:
        far *= 2
    return float(crossing(C, [top], [far], True)[0])


# ----------------------------------------------------------------------------------------------
# the exact spectral measures


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
        out = _sum(self.c, self.p, tv, self.delta, order)
        return out if order else out[0]

    def S1(self, tv, order: int = 0) -> np.ndarray:
        r""":math:`S_1` (with ``order``, its derivatives too)."""
        out = _sum(self.c, self.q, tv, self.delta, order)
        return out if order else out[0]

    def S0_probes(self, tv) -> np.ndarray:
        """:math:`(S_0, S_0')` at ``tv`` as one exact "probe" (``1 x 2``): no quadrature error."""
        return self.S0(tv, 1)[None, :]

    def C(self, tv) -> np.ndarray:
        r""":math:`C = 1 - x' = S_0 + tS_0' = \frac1\delta\sum_i p_ic_i^2/(c_i - t)^2`."""
        s0, ds0 = self.S0(tv, 1)
        return s0 + np.asarray(tv) * ds0

    def subset(self, keep: np.ndarray) -> "SpectralMeasures":
        """The measures on the atoms ``keep`` (a boolean mask)."""
        return SpectralMeasures(self.c[keep], self.p[keep], self.q[keep], self.r[keep], self.delta, self.V)

    @cached_property
    def spikes(self) -> np.ndarray:
        r"""The atoms that are spikes (indices): single eigenvalues of ``D`` standing apart from the rest, where the
        rest's :math:`C(c_a) < 1` (:math:`x'(c_a) > 0`: a generalized spike, Bai and Yao 2012). A spike is one
        eigenvalue of ``S`` at :math:`x(c_a)` of the rest, not a cluster of the bulk; added in turn until none is
        left (removing a spike only lowers ``C`` elsewhere). A repeated eigenvalue standing apart stays in the bulk,
        where it makes a cluster of that many eigenvalues (a Wishart block of its multiplicity)."""
        single = np.flatnonzero(self.p < 1.5 / self.V)
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
        return float(_sum(self.c[keep], self.q[keep], tv, self.delta, 0)[0])

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
        return list(zip(ta.tolist(), tb.tolist())) + [(_edge(self.C, float(self.c[-1])), np.inf)]


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


def _check(A, s, d) -> tuple[TokenMatrix, int, int, np.ndarray]:
    A = TokenMatrix.of(A)
    V, N = A.shape
    s = np.asarray(s, dtype=float)
    if s.shape != (V,):
        raise ParameterError("s", f"needs V = {V} signs, got shape {s.shape}")
    if isinstance(d, bool) or not isinstance(d, (int, np.integer)) or d < 1:
        raise ParameterError("d", f"must be a positive integer, got {d!r}")
    return A, V, N, s


def spectral_measures(A, s, d: int, centered: bool = False) -> SpectralMeasures:
    r"""The exact :class:`SpectralMeasures` of a draw's token matrix ``A`` (``V x N``, dense or sparse), its class signs
    ``s`` and dimension ``d``.

    * Diagonal :math:`AA^\top` (no sequence holds two distinct tokens; always at one nonzero weight): the raw ``D`` is
      :math:`\frac VN\operatorname{diag}(\sum_n A_{vn}^2)`, and the centered one its rank-one downdate
      :math:`D - \rho bb^\top`, :math:`b = A\mathbf 1`, :math:`\rho = V/N^2`, solved by
      the secular equation (Golub 1973): on an eigenspace ``j`` of ``D`` (value :math:`d_j`) the part orthogonal to
      :math:`b_j` keeps :math:`d_j`, and in each interval below and between the :math:`d_j` with :math:`b_j \ne 0`
      one eigenvalue :math:`\lambda` solves :math:`\rho\sum_j\|b_j\|^2/(d_j - \lambda) = 1`, with eigenvector
      :math:`\propto (D - \lambda)^{-1}b`. Cost: the number of distinct counts, squared.
    * Otherwise the eigendecomposition of the smaller of ``D`` (``V x V``) and the Gram matrix
      :math:`G = \frac VN A_c^\top A_c` (``N x N``, :math:`A_c = A(I - \mathbf 1\mathbf 1^\top/N)` if ``centered``,
      else ``A``): an eigenpair :math:`(\lambda, g)` of ``G`` with :math:`\lambda > 0` is one of ``D`` with
      :math:`\phi = \sqrt{V/N}A_cg/\sqrt\lambda`, so :math:`s^\top\phi = \sqrt{V/N}(A_c^\top s)^\top g/\sqrt\lambda`.
      Cost: :math:`\min(V, N)^3`, the matrix made from the pairs of ``A``'s entries (no dense ``A``).

    At one weight the raw ``D`` is the counts (times :math:`V/N`), each token its own eigenvector:

    >>> A = TokenMatrix.entries(4, 3, [0, 0, 2], [0, 1, 2], [1.0, 1.0, 1.0])   # counts 2, 0, 1, 0
    >>> m = spectral_measures(A, [1, 1, -1, -1], d=2); m.c, m.p, m.q
    (array([0.66666667, 1.33333333]), array([0.25, 0.25]), array([0.25, 0.25]))
    """
    A, V, N, s = _check(A, s, d)
    delta, ones = d / V, np.ones(V)
    if A.diagonal_gram():
        return _diagonal(A, s, V, N, delta, centered)
    if V <= N:
        tau, phi = np.linalg.eigh(token_matrix(A, centered))
        return _grouped(tau, [ones, (phi.T @ s) ** 2, (phi.T @ ones) ** 2], V, delta)
    G = (V / N) * A.sequence_gram()
    Ats, At1 = A.transpose_times(s)[:, 0], A.transpose_times(ones)[:, 0]
    if centered:
        G = G - G.mean(axis=0)[None, :]
        G = G - G.mean(axis=1)[:, None]
        Ats, At1 = Ats - Ats.mean(), At1 - At1.mean()
    lam, g = np.linalg.eigh(G)
    pos = lam > NULL * float(np.max(lam))
    scale = (V / N) / lam[pos]
    return _grouped(lam[pos], [np.ones(int(pos.sum())), scale * (g[:, pos].T @ Ats) ** 2,
                               scale * (g[:, pos].T @ At1) ** 2], V, delta)


def _diagonal(A, s: np.ndarray, V: int, N: int, delta: float, centered: bool) -> SpectralMeasures:
    """:func:`spectral_measures` of a diagonal :math:`AA^\\top` (its docstring)."""
    dv = (V / N) * A.row_sums(2)
    ones = np.ones(V)
    if not centered:
        return _grouped(dv, [ones, s**2, ones], V, delta)
    b = A.row_sums()
    values, index = np.unique(dv, return_inverse=True)
    size, beta, sigma, iota = (np.bincount(index, weights=w, minlength=len(values)) for w in (ones, b * b, s * b, b))
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


# ----------------------------------------------------------------------------------------------
# the Lanczos quadrature (large V)


def _probes(A: TokenMatrix, m: int) -> np.ndarray:
    """``m`` Rademacher vectors seeded from the token matrix itself (:meth:`TokenMatrix.digest`): the same matrix
    gives the same probes (the quadrature is deterministic), different draws independent ones (their errors average
    out over draws)."""
    return np.random.default_rng(A.digest()).choice([-1.0, 1.0], size=(A.V, m))


@dataclass(frozen=True)
class QuadratureTransforms:
    r"""The transforms of a large ``D`` by Lanczos quadrature (:func:`quadrature_transforms`), on the scale
    :math:`c = \delta\tau`: :math:`S_1` from the Gauss rule at :math:`s/\sqrt V` (``signs``: nodes, weights), and
    :math:`S_0` from ``probes`` Gauss rules at Rademacher vectors (stochastic Lanczos quadrature; Ubaru, Chen and Saad
    2017) with a control variate: the quadratic :math:`g` fitted to the summand :math:`f` on the nodes has the exact
    trace ``moments`` (:math:`\operatorname{tr}D^k/V`, :math:`k \le 2`, times :math:`\delta^k`), and the probes
    estimate only :math:`\operatorname{tr}(f - g)(D)/V`. On the raw ``D`` the mean eigenvector is projected out of
    the probes and its ``atom`` added exactly. Only the gaps above the bulk of ``D`` are searched (:meth:`gaps`):
    inside it the nodes of a Gauss rule are not eigenvalues."""

    signs: tuple
    probes: tuple
    moments: tuple
    atom: float | None
    delta: float
    V: int
    method = "quadrature"

    @cached_property
    def _fit(self):
        """The pooled nodes, the weighted least-squares projector onto quadratics, the probes' weights and starts."""
        nodes = np.concatenate([c for c, _ in self.probes])
        root = np.sqrt(np.concatenate([w for _, w in self.probes]) / len(self.probes))
        basis = np.vander(nodes, 3, increasing=True)
        starts = np.cumsum([0] + [len(c) for c, _ in self.probes])[:-1]
        return nodes, basis, np.linalg.pinv(basis * root[:, None]) * root[None, :], \
            np.concatenate([w for _, w in self.probes]), starts

    def _estimates(self, tv: np.ndarray, order: int) -> np.ndarray:
        """:math:`S_0^{(k)}`, ``k <= order``, at the real points ``tv`` (1-d) from each probe: ``(order + 1, probes,
        points)``."""
        nodes, basis, project, weights, starts = self._fit
        out = []
        for f in functions()["term"][: order + 1]:
            F = f(nodes[:, None], tv[None, :], self.delta)
            coef = project @ F
            exact = np.array(self.moments) @ coef
            if self.atom is not None:
                exact = exact + f(self.atom, tv, self.delta) / self.V
            out.append(exact[None, :] + np.add.reduceat(weights[:, None] * (F - basis @ coef), starts, axis=0))
        return np.array(out)

    def S0_probes(self, tv) -> np.ndarray:
        """:math:`(S_0, S_0')` at a real ``tv`` estimated from each probe (``probes x 2``): their mean is the estimate,
        their spread its error."""
        return self._estimates(np.array([float(tv)]), 1)[:, :, 0].T

    def S0(self, tv, order: int = 0) -> np.ndarray:
        tv = np.asarray(tv, dtype=float)
        est = self._estimates(tv.ravel(), order).mean(axis=1).reshape((order + 1,) + tv.shape)
        return est if order else est[0]

    def S1(self, tv, order: int = 0) -> np.ndarray:
        out = _sum(self.signs[0], self.signs[1], tv, self.delta, order)
        return out if order else out[0]

    def C(self, tv) -> np.ndarray:
        s0, ds0 = self.S0(tv, 1)
        return s0 + np.asarray(tv) * ds0

    def bulk(self) -> "QuadratureTransforms":
        """The transforms less the mean atom (a spike): its node is dropped from the rule of :math:`S_1` too, which
        the bulk does not use but whose top node bounds the bulk's spectrum (:meth:`gaps`)."""
        if self.atom is None:
            return self
        nodes, weights = self.signs
        keep = np.abs(nodes - self.atom) > 1e-6 * self.atom
        return QuadratureTransforms((nodes[keep], weights[keep]), self.probes, self.moments, None, self.delta, self.V)

    def poles(self) -> np.ndarray:
        """The nodes of the rule of :math:`S_1`: poles that may fall in a gap (a spike, or a Ritz value not converged)."""
        return self.signs[0]

    def mean_pole(self) -> float | None:
        """The raw ``D``'s mean atom, or ``None``."""
        return self.atom

    def S1_without_mean(self, tv) -> float:
        """:math:`S_1` less the node of the mean atom."""
        return float(self.bulk().S1(tv))

    def gaps(self) -> list[tuple[float, float]]:
        """The gap above the bulk of ``D``, ``[(t_edge, inf)]``, above the largest node of every rule (a Ritz value:
        at most the top eigenvalue, and close to it); the only one searched, since inside the spectrum the nodes of a
        Gauss rule are not eigenvalues. Of :meth:`bulk` only (a mean atom would be a pole of ``C``)."""
        if self.atom is not None:
            raise ValueError("the gaps are those of the bulk: call bulk() first")
        top = max(max(c.max() for c, _ in self.probes), self.signs[0].max(initial=0.0))
        return [(_edge(self.C, float(top)), np.inf)]


def quadrature_transforms(A, s, d: int, centered: bool = False, probes: int = PROBES,
                          steps: int = STEPS) -> QuadratureTransforms:
    r"""The :class:`QuadratureTransforms` of a draw: ``probes + 2`` Lanczos runs of ``steps`` products with the sparse
    ``D`` (each two products with ``A``) and their reorthogonalization, :math:`O(\text{steps}^2 V\,\text{probes})`.

    The raw ``D``'s mean eigenvector is the Ritz vector :math:`\phi_*` of the heaviest node of the rule at
    :math:`\mathbf 1/\sqrt V` when that node holds more than half the weight; the probes then run on :math:`PDP`,
    :math:`P = I - \phi_*\phi_*^\top`, whose traces :math:`\operatorname{tr}PDP = \operatorname{tr}D - \phi_*^\top
    D\phi_*` and :math:`\operatorname{tr}(PDP)^2 = \operatorname{tr}D^2 - 2\|D\phi_*\|^2 + (\phi_*^\top D\phi_*)^2`
    are exact, and the atom :math:`\delta\phi_*^\top D\phi_*` (mass :math:`1/V`) is added back.

    >>> rng = np.random.default_rng(1)
    >>> A = TokenMatrix.from_tokens(rng.integers(0, 60, size=(90, 3)), [0.5, 0.3, 0.2], 60)
    >>> s = np.repeat([1.0, -1.0], 30)
    >>> q, m = quadrature_transforms(A, s, 30, steps=20), spectral_measures(A, s, 30)
    >>> se = q.S0_probes(5.0)[:, 0].std(ddof=1) / 4   # above the spectrum (top atom 3.49)
    >>> bool(abs(q.S1(5.0) - m.S1(5.0)) < 1e-12), bool(abs(q.S0(5.0) - m.S0(5.0)) < 3 * se), bool(se < 0.01)
    (True, True, True)
    """
    A, V, N, s = _check(A, s, d)
    b = A.row_sums()
    rho = V / N**2

    def raw(X):
        return (V / N) * A.gram_times(X)

    def apply(X):
        return raw(X) - rho * np.outer(b, b @ X) if centered else raw(X)

    tr1, tr2 = (V / N) * float(A.row_sums(2).sum()), (V / N) ** 2 * A.frobenius2_of_gram()
    if centered:
        bb = float(b @ b)
        tr1, tr2 = tr1 - rho * bb, tr2 - 2 * rho * float(b @ raw(b)[:, 0]) + rho**2 * bb**2
    delta = d / V
    starts = np.column_stack([s, np.ones(V)]) if not centered else s[:, None]
    from derive.vocabulary.limit.linalg import gauss_rules  # numba: loaded only for a large draw
    runs = gauss_rules(apply, starts, steps, vectors=not centered)
    nodes, weights = runs[0][:2]
    Z, moments, atom, operator = _probes(A, probes), [1.0, delta * tr1 / V, delta**2 * tr2 / V], None, apply
    if not centered:
        nodes1, weights1, ritz = runs[1]
        i = int(np.argmax(weights1))
        if weights1[i] > V / 2:
            phi = ritz[:, i] / np.linalg.norm(ritz[:, i])
            Dphi = apply(phi[:, None])[:, 0]
            t1, t2 = float(phi @ Dphi), float(Dphi @ Dphi)
            atom = delta * t1
            moments = [1 - 1 / V, delta * (tr1 - t1) / V, delta**2 * (tr2 - 2 * t2 + t1**2) / V]
            Z = Z - np.outer(phi, phi @ Z)

            def operator(X):
                Y = apply(X - np.outer(phi, phi @ X))
                return Y - np.outer(phi, phi @ Y)
    rules = tuple((delta * c, w / V) for c, w in gauss_rules(operator, Z, steps))
    return QuadratureTransforms((delta * nodes, weights / V), rules, tuple(moments), atom, delta, V)


# ----------------------------------------------------------------------------------------------
# the outliers


@dataclass(frozen=True)
class Outlier:
    """An outlier of the conditional law: its ``eigenvalue``, squared ``overlap`` with ``u``, its root ``t``, the gap
    ``(xa, xb)`` of the conditional bulk that holds it (``xb`` infinite above the bulk; ``None`` for the mean outlier),
    and the quadrature's standard errors of the eigenvalue and the overlap (0 when exact)."""

    eigenvalue: float
    overlap: float
    t: float
    gap: tuple | None
    eigenvalue_error: float = 0.0
    overlap_error: float = 0.0


@dataclass(frozen=True)
class ConditionalOutliers:
    """:func:`conditional_outliers`: ``signal`` (the root with the largest overlap, or ``None``), every root in a gap
    in ``roots`` (ascending), the raw ``S``'s ``mean`` outlier (or ``None``), the conditional bulk's ``right_edge``,
    the ``gaps`` searched (``[(xa, xb), ...]``), the ``method`` (``"exact"``, or ``"quadrature"``: gaps above the
    bulk of ``D`` only), ``above``, how many eigenvalues of ``S`` stand above the bulk's right edge besides the
    signal's (one per spike of ``D``), and ``edge_weight``, :func:`edge_weight` at that edge (at dimension ``d``
    where :func:`conditional_outliers` is given it)."""

    signal: Outlier | None
    roots: tuple
    mean: Outlier | None
    right_edge: float
    gaps: tuple
    method: str
    above: int = 0
    edge_weight: float = 1.0


def edge_curvature(transforms, t: float) -> float:
    r""":math:`C'(t) = -x''(t) = 2S_0'(t) + tS_0''(t)` (``transforms``: :class:`SpectralMeasures` or
    :class:`QuadratureTransforms`): at the bulk's right edge :math:`t_e` (where :math:`x' = 0`) the density of the
    eigenvalues below :math:`E = x(t_e)` is :math:`\frac{\sqrt{2/C'(t_e)}}{\pi t_e^2}\sqrt{E - x}`.

    >>> one = np.array([1.0])
    >>> m = SpectralMeasures(one, one, one, one, 1.0, 100)  # one atom at 1, delta = 1: S_0 = 1/(1 - t)
    >>> round(edge_curvature(m, 2.0), 12)  # 2/(1 - t)^2 + 2t/(1 - t)^3 at t = 2
    -2.0
    """
    _, ds0, dds0 = (float(v) for v in np.ravel(transforms.S0(t, 2)))
    return 2 * ds0 + t * dds0


def edge_weight(transforms, mu2, t_edge: float, d: int | None = None) -> float:
    r"""``d`` times the mean squared overlap with ``u`` of an eigenvector of ``S`` at the bulk's right edge, the
    bulk's edge at :math:`t_e` (in ``t``; a real root of :math:`x'(t) = 0`); with ``d``, of the top eigenvector of the
    bulk at dimension ``d``, at its classical place below the edge.

    *Derivation.* :math:`S = (X + \sqrt{\mu_2}\,ub^\top)(\cdot)^\top` with :math:`X = ZD^{1/2}/\sqrt V` left rotation
    invariant and :math:`b = D^{1/2}s/\sqrt V`. Its resolvent along ``u``, by Woodbury's identity on the rank-two
    perturbation of :math:`XX^\top` (vectors :math:`u` and :math:`Xb`, deterministic equivalents
    :math:`u^\top G u = m`, :math:`u^\top GXb = 0`), is :math:`m_u = m/(1 - \mu_2 z\,m\,\tilde g)` with
    :math:`\tilde g = b^\top(X^\top X - z)^{-1}b`; its pole is the outlier equation, :math:`S_1(t) = -1/\mu_2` in
    :math:`t = -1/m`, and matching the pole and its residue (the squared overlap :math:`x'/(\mu_2 tS_1')`) gives

    .. math:: m_u(z) = \frac{m(z)}{1 + \mu_2 S_1(t)}, \qquad m = -1/t,

    :math:`m_u = m` at :math:`\mu_2 = 0` (``u`` then a direction like any other). ``u``'s spectral density over the
    bulk's is :math:`\operatorname{Im} m_u/\operatorname{Im} m`, which at the edge, where ``t`` is real and
    :math:`g(t) = 1/(1 + \mu_2S_1(t))` is analytic, tends to

    .. math:: \frac{
ho_u}{
ho}\Big|_{\text{edge}} = g(t_e) - t_e\,g'(t_e)
              = \frac{1}{1 + \mu_2S_1} + \frac{\mu_2 t_e S_1'}{(1 + \mu_2S_1)^2},

    and an eigenvector at ``x`` carries on average :math:`
ho_u(x)/(d\,
ho(x))` of ``u`` (a share ``1/d`` of the
    density ratio). It grows without bound as :math:`1 + \mu_2 S_1(t_e) \to 0`, where the outlier leaves the edge.

    One atom (``D = I``, :math:`\delta = 1/2`: Marchenko-Pastur's law, its signal threshold :math:`\mu_2 = \sqrt\delta`):
    1 at :math:`\mu_2 = 0`, about 3.9 at :math:`\mu_2 = 0.3` (Monte Carlo at ``d = 400``, 300 draws: 3.6 +- 0.6):

    >>> m = SpectralMeasures(np.array([0.5]), np.array([1.0]), np.array([1.0]), np.array([0.0]), 0.5, 1000)
    >>> [round(conditional_outliers(m, mu2).edge_weight, 4) for mu2 in (0, 0.3)]
    [1.0, 3.9219]

    At ``d = 400`` the top eigenvector sits below the edge, where the ratio is smaller near the threshold (Monte Carlo
    at ``mu2 = 0.5``, 300 draws: 11.2 +- 1.5, against 17.5 at the edge):

    >>> round(conditional_outliers(m, 0.5, d=400).edge_weight, 1)
    10.3
    """
    if not (np.isfinite(t_edge) and t_edge > 0):  # no bulk (every eigenvalue of D a spike): no edge
        return float("nan")
    if d is None:
        s1, ds1 = (float(x) for x in transforms.S1(t_edge, 1))
        denominator = 1 + float(mu2) * s1
        return 1 / denominator + float(mu2) * t_edge * ds1 / denominator**2 if denominator else float("inf")
    # x(t) ~ E - |x''| (t - t_e)^2/2 at the edge: rho(x) ~ a sqrt(E - x), a = sqrt(2/|x''|)/(pi t_e^2), and the top
    # eigenvalue's classical place, d int_x^E rho = 1/2, is E - (3/(4 a d))^(2/3), at t = t_e + i eta
    curvature = abs(edge_curvature(transforms, t_edge))
    if not (np.isfinite(curvature) and curvature > 0):
        return float("nan")
    a = np.sqrt(2 / curvature) / (np.pi * t_edge**2)
    eta = np.sqrt(2 * (3 / (4 * a * d)) ** (2 / 3) / curvature)
    tv = np.array([t_edge + 1j * eta])
    g = 1 / (1 + float(mu2) * transforms.S1(tv))
    return float(((-g / tv).imag / (-1 / tv).imag)[0])


def _x(transforms, tv) -> float:
    return float(tv * (1 - transforms.S0(tv)))


def _root(f, a: float, b: float) -> float:
    """The root of an increasing ``f`` in ``[a, b]`` with ``f(a) <= 0 <= f(b)`` (``b`` may be infinite, ``f`` then
    tending to a positive limit), by bisection."""
    if not np.isfinite(b):
        b = 2 * a
        while f(b) < 0:
            b *= 2
    for _ in range(200):  # bisection to the last bit: f costs one pass over the atoms
        mid = (a + b) / 2
        if not a < mid < b:
            break
        a, b = (mid, b) if f(mid) < 0 else (a, mid)
    return float((a + b) / 2)


def conditional_outliers(transforms, mu2, mean: bool = False, d: int | None = None) -> ConditionalOutliers:
    r"""The outliers of :math:`S` given ``D`` (``transforms``: :class:`SpectralMeasures` or
    :class:`QuadratureTransforms`) at signal strength ``mu2``: every root of :math:`S_1(t) = -1/\mu_2` in a gap of
    the bulk (``transforms.bulk()``: the spikes of ``D`` are not part of it), at :math:`\ell = x(t)` of the bulk with
    squared overlap :math:`x'(t)/(\mu_2 tS_1'(t))` (:func:`derive.vocabulary.limit.signal.plain_equations`; with a quadrature from
    each probe's :math:`S_0`, whose spread gives their errors). A spike of ``D`` is a pole of :math:`S_1` inside a gap;
    folding its own direction into the determinant of :mod:`derive.vocabulary.limit.signal` gives the same equation, so a
    spike with weight along ``s`` has a root next to it (its own outlier, nearly orthogonal to ``u``) and can
    share the signal's. ``d``: the dimension of :func:`edge_weight`. ``signal`` is the root with the largest overlap; with ``mean`` (the raw ``S``), ``mean`` is
    the outlier of the raw ``D``'s mean atom: the root next to its pole (below it if the rest of :math:`S_1` is below
    :math:`-1/\mu_2` there, above it otherwise), or :math:`x(c_*)` if it has none (no weight along ``s``).

    One atom of ``D`` (all directions and ``s`` alike) is the population level: with :math:`\delta = 1/2`,
    :math:`\tau = 1`, :math:`\mu_2 = 3` the root of :math:`S_0 = S_1 = -1/\mu_2` is :math:`t = c(1 + \mu_2/\delta) = 7/2`
    and the outlier :math:`(1 + 1/\mu_2)\,t = 14/3`:

    >>> m = SpectralMeasures(np.array([0.5]), np.array([1.0]), np.array([1.0]), np.array([0.0]), 0.5, 1000)
    >>> o = conditional_outliers(m, 3); round(o.signal.eigenvalue, 12), round(o.signal.t, 12), o.method
    (4.666666666667, 3.5, 'exact')
    """
    try:
        mu2 = float(mu2)
    except (TypeError, ValueError):
        raise ParameterError("mu2", f"must be a real number, got {mu2!r}") from None
    if not np.isfinite(mu2) or mu2 < 0:
        raise ParameterError("mu2", f"must be a finite real >= 0, got {mu2!r}")
    f = functions()

    def located(*args):
        return f["location"](*args), f["overlap"](*args)

    bulk = transforms.bulk()
    where = bulk.gaps()
    poles = np.sort(transforms.poles())
    star = transforms.mean_pole() if mean else None
    roots, mean_root = [], None
    for ta, tb in where:
        inner = poles[(poles > ta) & (poles < tb)]
        for a, b in zip(np.concatenate([[ta], inner]), np.concatenate([inner, [tb]])):
            a_ = a if a == ta else a * (1 + 1e-14)
            b_ = b if b == tb else b * (1 - 1e-14)
            if mu2 == 0 or a_ >= b_:
                continue
            if transforms.S1(a_) + 1 / mu2 <= 0 and (not np.isfinite(b_) or transforms.S1(b_) + 1 / mu2 >= 0):
                tr = _root(lambda tv: float(transforms.S1(tv)) + 1 / mu2, a_, b_)
                ds1 = float(transforms.S1(tr, 1)[1])
                each = np.array([located(tr, mu2, s0, ds0, ds1) for s0, ds0 in bulk.S0_probes(tr)])
                se = each.std(axis=0, ddof=1) / np.sqrt(len(each)) if len(each) > 1 else np.zeros(2)
                ell, ov = each.mean(axis=0)
                root = Outlier(float(ell), float(ov), tr, _x_gap(bulk, ta, tb), float(se[0]), float(se[1]))
                roots.append(root)
    if star is not None:
        # the mean atom's own root is next to its pole: S_1 increases from the pole's -inf to its +inf, so the root is
        # just below the pole when the rest of S_1 is below -1/mu2 there, just above it otherwise; without weight
        # along s it is x(c_*)
        below = mu2 > 0 and transforms.S1_without_mean(star) < -1 / mu2
        side = [r for r in roots if (r.t < star if below else r.t > star)]
        if side:
            mean_root = max(side, key=lambda r: r.t) if below else min(side, key=lambda r: r.t)
        elif bulk.C(star) < 1:
            each = np.array([star * (1 - s0) for s0, _ in bulk.S0_probes(star)])
            mean_root = Outlier(float(each.mean()), 0.0, star, None,
                                float(each.std(ddof=1) / np.sqrt(len(each))) if len(each) > 1 else 0.0)
    candidates = [r for r in roots if r is not mean_root]
    best = max(candidates, key=lambda r: r.overlap) if candidates else None
    return ConditionalOutliers(best, tuple(roots), mean_root, _x(bulk, where[-1][0]),
                               tuple(_x_gap(bulk, ta, tb) for ta, tb in where), transforms.method,
                               len(poles), edge_weight(transforms, mu2, where[-1][0], d))


def _x_gap(transforms, ta: float, tb: float) -> tuple:
    return _x(transforms, ta), (_x(transforms, tb) if np.isfinite(tb) else np.inf)


def conditional_prediction(A, s, d: int, mu2, centered: bool = False, method: str = "auto") -> ConditionalOutliers:
    r"""The outliers of one draw's ``S`` (``centered``: :math:`S_c`) given its token matrix ``A``, class signs ``s`` and
    dimension ``d``, at signal strength ``mu2``: :func:`conditional_outliers` of :func:`spectral_measures`
    (``method='exact'``) or :func:`quadrature_transforms` (``'quadrature'``); ``'auto'`` is exact for a diagonal
    ``D`` and when :math:`\min(V, N) \le` :data:`EXACT_BELOW`, the quadrature otherwise.

    >>> A = TokenMatrix.entries(4, 8, np.arange(8) % 4, np.arange(8), np.ones(8))   # each token twice
    >>> o = conditional_prediction(A, [1, 1, -1, -1], 2, 3); round(o.signal.eigenvalue, 12)   # D = I, delta = 1/2
    4.666666666667
    """
    if method not in ("auto", "exact", "quadrature"):
        raise ParameterError("method", f"must be auto, exact or quadrature, got {method!r}")
    A = TokenMatrix.of(A)
    if method == "auto":
        method = "exact" if min(A.shape) <= EXACT_BELOW or A.diagonal_gram() else "quadrature"
    measures = (spectral_measures if method == "exact" else quadrature_transforms)(A, s, d, centered)
    return conditional_outliers(measures, mu2, mean=not centered, d=d)


# ----------------------------------------------------------------------------------------------
# the conditional bulk


@dataclass(frozen=True)
class ConditionalBulk:
    r"""The conditional bulk of one draw: the generalized Marchenko–Pastur law of :math:`\frac1V ZDZ^\top` with ``D``'s
    spectrum as population (Silverstein's equation :math:`z = x(t)`, :mod:`derive.vocabulary.limit.silverstein`), from
    exact :class:`SpectralMeasures`: ``atom_at_zero`` :math:`\max(0, 1 - (1 - p_0)/\delta)`, the support's ``left`` and
    ``right`` edges and its ``gaps``, the density and the distribution function."""

    measures: SpectralMeasures
    atom_at_zero: float
    left: float
    right: float
    gaps: tuple

    def stieltjes_t(self, zs) -> np.ndarray:
        r"""The root :math:`t \in \mathbb C^+` of :math:`x(t) = z` at each ``z`` (real ``z`` at :math:`+i0`): Newton's
        method continued from :math:`z + 4i(1 + |z|)`, where :math:`t \approx z`, the imaginary part divided by 8 a
        level (four steps a level, eight at the last), in blocks of 256 points."""
        zs = np.asarray(zs, dtype=complex).ravel()
        return np.concatenate([self._solve(zs[i:i + 256]) for i in range(0, len(zs), 256)]) if len(zs) else zs

    def _solve(self, zs: np.ndarray) -> np.ndarray:
        m = self.measures
        floor = np.maximum(zs.imag, 1e-13 * (1 + np.abs(zs.real)))
        eta = 4.0 * (1 + np.abs(zs))
        tv = zs.real + 1j * eta
        while True:
            final = bool(np.all(eta <= floor))
            zz = zs.real + 1j * np.maximum(eta, zs.imag)
            for _ in range(8 if final else 4):
                s0, ds0 = m.S0(tv, 1)
                new = tv - (tv * (1 - s0) - zz) / (1 - s0 - tv * ds0)
                tv = np.where(new.imag > 0, new, new.real + 0.5j * tv.imag)
            if final:
                return tv
            eta = np.maximum(eta / 8, floor)

    def density(self, xs) -> np.ndarray:
        r""":math:`\rho(x) = \operatorname{Im}t/(\pi|t|^2)` inside the support, 0 outside."""
        xs = np.asarray(xs, dtype=float)
        inside = (xs > self.left) & (xs < self.right)
        for a, b in self.gaps:
            inside &= ~((xs >= a) & (xs <= b))
        out = np.zeros(xs.shape)
        if inside.any():
            tv = self.stieltjes_t(xs[inside])
            out[inside] = tv.imag / (np.pi * np.abs(tv) ** 2)
        return out

    @property
    def runs(self) -> list[tuple[float, float, float]]:
        r"""The support as ``(a, b, mass)`` runs of clusters between gaps, each with the exact mass
        :math:`\sum p_k/\delta` of its atoms (exact separation, Bai and Silverstein 1999; the first run the rest of
        :math:`1 - \mu\{0\}`)."""
        m = self.measures
        ends = [self.left] + [x for g in self.gaps for x in g] + [self.right]
        edges_t = [t for t in self._gaps_t]
        masses = []
        for lo_t, hi_t in zip([0.0] + [tb for _, tb in edges_t], [ta for ta, _ in edges_t] + [np.inf]):
            masses.append(float(np.sum(m.p[(m.c > lo_t) & (m.c < hi_t)])) / m.delta)
        masses[0] = 1 - self.atom_at_zero - sum(masses[1:])
        return [(a, b, w) for (a, b), w in zip(zip(ends[::2], ends[1::2]), masses)]

    @property
    def _gaps_t(self) -> list:
        return [g for g in self.measures.gaps()[:-1]]

    def cdf(self, xs, nodes: int = 500) -> np.ndarray:
        r"""The distribution function: the atom at zero plus each run's density integrated by the trapezoid rule in
        :math:`s`, :math:`x = a + (b - a)(1 - \cos\theta)/2`, :math:`\theta = \pi s^3/(s^3 + (1-s)^3)` (the integrand is
        smooth at square-root edges, and at a left edge so close to 0 that the density behaves as :math:`x^{-1/2}`
        above it: :meth:`derive.vocabulary.limit.silverstein.GeneralizedMP.cdf_table`'s rule), scaled to the run's exact
        mass."""
        xs = np.asarray(xs, dtype=float)
        out = np.where(xs >= 0, self.atom_at_zero, 0.0)
        s = np.linspace(0, 1, nodes + 1)
        theta = np.pi * s**3 / (s**3 + (1 - s) ** 3)
        dtheta = np.pi * 3 * s**2 * (1 - s) ** 2 / (s**3 + (1 - s) ** 3) ** 2
        for a, b, mass in self.runs:
            x = a + (b - a) * (1 - np.cos(theta)) / 2
            g = np.zeros_like(x)
            g[1:-1] = self.density(x[1:-1]) * (b - a) * np.sin(theta[1:-1]) / 2 * dtheta[1:-1]
            F = np.concatenate([[0.0], np.cumsum((g[1:] + g[:-1]) / 2 * np.diff(s))])
            out = out + np.interp(xs, x, mass * F / F[-1] if F[-1] > 0 else mass * s, left=0.0, right=mass)
        return out


def conditional_bulk(measures: SpectralMeasures) -> ConditionalBulk:
    r"""The :class:`ConditionalBulk` of exact :class:`SpectralMeasures`. The left edge: if
    :math:`C(0^+) = (1 - p_0)/\delta < 1` the atom at zero stands apart and the support starts at :math:`x(t_b)`,
    :math:`t_b` the crossing of :math:`C = 1` below the first atom; otherwise at the maximum of :math:`x(t)` over
    :math:`t < 0`, where :math:`C` (increasing there) is 1.

    At :math:`D = I` the law is Marchenko–Pastur's with ratio :math:`\delta`: edges :math:`(1 \mp \sqrt\delta)^2`.

    >>> L = conditional_bulk(SpectralMeasures(np.array([0.25]), np.array([1.0]), np.array([1.0]), np.array([0.0]), 0.25, 1))
    >>> round(L.left, 10), round(L.right, 10), float(L.cdf(4.0))
    (0.25, 2.25, 1.0)
    """
    m = measures
    mass = float(np.sum(m.p))
    atom = max(0.0, 1 - mass / m.delta)
    if mass / m.delta < 1:
        tb = float(crossing(m.C, [0.0], [float(m.c[0])], False)[0])
    else:
        lo = -1.0
        while m.C(lo) >= 1:
            lo *= 2
        tb = float(crossing(m.C, [lo], [0.0], False)[0])
    gaps = m.gaps()
    return ConditionalBulk(m, atom, _x(m, tb), _x(m, gaps[-1][0]), tuple(_x_gap(m, ta, tb_) for ta, tb_ in gaps[:-1]))
