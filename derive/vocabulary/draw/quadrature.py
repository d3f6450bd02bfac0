r"""The transforms of a draw too large to eigen-decompose, by Lanczos quadrature, in NumPy alone: the Gauss rules of a
symmetric operator (:func:`gauss_rules`) and the transforms :math:`S_0, S_1` of the draw's ``D`` estimated from them
(:class:`QuadratureTransforms`; the exact ones: :mod:`derive.vocabulary.draw.spectrum`).
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

import numpy as np

from derive.vocabulary.draw.spectrum import atom_sums, check_draw, functions
from derive.vocabulary.draw.tokenmatrix import TokenMatrix
from derive.vocabulary.limit.gaps import right_edge

__all__ = ["PROBES", "STEPS", "AGAIN", "gauss_rules", "QuadratureTransforms", "quadrature_transforms"]

PROBES = 8
"""The Rademacher probes of the stochastic Lanczos quadrature of :math:`S_0` (:func:`quadrature_transforms`)."""

STEPS = 30
"""Lanczos steps per starting vector (:func:`quadrature_transforms`)."""


AGAIN = 0.5**0.5
"""A second Gram-Schmidt pass of the quadrature's Lanczos runs when the first leaves less than this fraction of the
norm (Kahan and Parlett's "twice is enough", the solver's :data:`verify.montecarlo.orthogonalize.REORTHOGONALIZE_AGAIN`)."""


def gauss_rules(apply, X: np.ndarray, steps: int, vectors: bool = False):
    r"""The Gauss quadrature rule of ``D`` at each column of ``X`` (Golub and Welsch 1969; Golub and Meurant,
    *Matrices, Moments and Quadrature*): ``steps`` Lanczos steps with full reorthogonalization give the Jacobi matrix,
    whose eigenvalues are the nodes and whose eigenvectors' squared first components times :math:`\|x\|^2` the weights;
    a column whose Krylov space is exhausted stops there (its rule is then exact). Returns ``[(nodes, weights), ...]``,
    with ``vectors`` also the Ritz vectors (``V x nodes``) of each.

    A diagonal matrix's rule at a vector with every component 1 has its diagonal as nodes, each of weight 1:

    >>> [(nodes, weights)] = gauss_rules(lambda q: np.array([[1.0], [2.0], [4.0]]) * q, np.ones((3, 1)), 3)
    >>> nodes.round(12).tolist(), weights.round(12).tolist()
    ([1.0, 2.0, 4.0], [1.0, 1.0, 1.0])
    """
    V, m = X.shape
    steps = min(steps, V)
    norms = np.linalg.norm(X, axis=0)
    Q = np.zeros((m, steps, V))  # column i's basis in Q[i, :j]
    alpha, beta = np.zeros((steps, m)), np.zeros((steps, m))
    length = np.full(m, steps)
    q, previous, scale = X / norms, np.zeros_like(X), 0.0
    for j in range(steps):
        Q[:, j] = q.T
        w = apply(q)
        alpha[j] = np.sum(q * w, axis=0)
        w = w - alpha[j] * q - (beta[j - 1] * previous if j else 0)
        before = np.linalg.norm(w, axis=0)
        basis = Q[:, : j + 1]
        for _ in range(2):  # twice only when the first pass cancels much of w ("twice is enough")
            w -= np.matmul(np.matmul(basis, w.T[:, :, None]).transpose(0, 2, 1), basis)[:, 0].T
            beta[j] = np.linalg.norm(w, axis=0)
            if np.all(beta[j] >= AGAIN * before):
                break
            before = beta[j]
        scale = max(scale, float(np.max(np.abs(alpha[: j + 1]))))
        stop = (beta[j] <= 1e-10 * scale) & (length == steps)
        length[stop] = j + 1
        previous, q = q, w / np.where(beta[j] > 1e-10 * scale, beta[j], np.inf)
    rules = []
    for i in range(m):
        n = length[i]
        nodes, Y = np.linalg.eigh(np.diag(alpha[:n, i]) + np.diag(beta[: n - 1, i], 1) + np.diag(beta[: n - 1, i], -1))
        rule = (nodes, norms[i] ** 2 * Y[0] ** 2)
        rules.append(rule + ((Q[i, :n].T @ Y),) if vectors else rule)
    return rules


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
        out = atom_sums(self.signs[0], self.signs[1], tv, self.delta, order)
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
        return [(right_edge(self.C, float(top)), np.inf)]


def quadrature_transforms(A, s, d: int, centered: bool = False, probes: int = PROBES,
                          steps: int = STEPS) -> QuadratureTransforms:
    r"""The :class:`QuadratureTransforms` of a draw: ``probes + 2`` Lanczos runs of ``steps`` products with the sparse
    ``D`` (each two products with ``A``) and their reorthogonalization, :math:`O(\text{steps}^2 V\,\text{probes})`.

    The raw ``D``'s mean eigenvector is the Ritz vector :math:`\phi_*` of the heaviest node of the rule at
    :math:`\mathbf 1/\sqrt V` when that node holds more than half the weight; the probes then run on :math:`PDP`,
    :math:`P = I - \phi_*\phi_*^\top`, whose traces :math:`\operatorname{tr}PDP = \operatorname{tr}D - \phi_*^\top
    D\phi_*` and :math:`\operatorname{tr}(PDP)^2 = \operatorname{tr}D^2 - 2\|D\phi_*\|^2 + (\phi_*^\top D\phi_*)^2`
    are exact, and the atom :math:`\delta\phi_*^\top D\phi_*` (mass :math:`1/V`) is added back.

    >>> from derive.vocabulary.draw.spectrum import spectral_measures
    >>> rng = np.random.default_rng(1)
    >>> A = TokenMatrix.from_tokens(rng.integers(0, 60, size=(90, 3)), [0.5, 0.3, 0.2], 60)
    >>> s = np.repeat([1.0, -1.0], 30)
    >>> q, m = quadrature_transforms(A, s, 30, steps=20), spectral_measures(A, s, 30)
    >>> se = q.S0_probes(5.0)[:, 0].std(ddof=1) / 4   # above the spectrum (top atom 3.49)
    >>> bool(abs(q.S1(5.0) - m.S1(5.0)) < 1e-12), bool(abs(q.S0(5.0) - m.S0(5.0)) < 3 * se), bool(se < 0.01)
    (True, True, True)
    """
    A, V, N, s = check_draw(A, s, d)
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
