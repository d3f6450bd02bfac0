r"""The resolvent of the token matrix along the class signs, :math:`h_D(\zeta) = \lim \frac1V s^\top(D-\zeta)^{-1}s`:
the cavity equations of :mod:`derive.vocabulary.limit.cavity` with a source (Gaussian belief propagation), solved on a
quenched population.

*The field.* Solve :math:`L\phi = b` on the token–sequence tree, :math:`L = \begin{pmatrix}-\zeta & \sqrt sA\\
\sqrt sA^\top & -1\end{pmatrix}` (:math:`s = V/N`), with the source :math:`b = (s_v)_v` on the tokens and 0 on the
sequences: the token part of :math:`\phi` is :math:`(D-\zeta)^{-1}s`. On a tree, eliminating a node's children gives
:math:`\phi_i = G_{ii}(b_i - \sum_j L_{ij}\phi^{(i)}_j)`, :math:`\phi^{(i)}_j` the child's solution on the tree without
``i``. A token at position ``t`` of a sequence has the edge :math:`\sqrt s\,w_t`; with the message of a token multiplied
by its class sign (:math:`H_v = s_v\phi_v`), a sequence entered at ``t`` and left at ``u`` contributes the relative sign
:math:`\xi_t\xi_u` of its two tokens:

.. math:: H \overset{d}{=} X\Bigl(1 + s\sum_t\sum_{j=1}^{K_t} Y_{t,j}\,w_t\sum_{u\ne t}\xi^{(j)}_t\xi^{(j)}_u\,w_u
          H_{u,j}\Bigr),\qquad \frac1V s^\top(D-\zeta)^{-1}s \to E H,

``X, Y`` the variances of :mod:`derive.vocabulary.limit.cavity` (:math:`K_t\sim\mathrm{Poisson}(\lambda)`,
:math:`\lambda = N/V`), :math:`H_{u,j}` the field of the token at position ``u`` of the ``j``-th sequence, jointly
distributed with its :math:`X_u`.

*Only R enters.* Expanded along the tree, :math:`EH` is a sum over paths from the root; a path passes through each
sequence once, entering at one position and leaving at another. The sequences' sign vectors are independent of each
other and of the tree's shape (a token's class does not change its Poisson numbers of sequences, and every family is
symmetric under a global flip, so given :math:`\xi_t` the products :math:`\xi_t\xi_u` keep their law), and ``X, Y``
involve the weights only. So the signs along a path average to a product of :math:`R_{tu} = E\xi_t\xi_u`:

.. math:: h_D = E\bar H,\qquad \bar H = X\Bigl(1 + s\sum_t\sum_{j\le K_t} Y_{t,j}\,F_{t,j}\Bigr),\quad
          F_t = w_t\sum_{u\ne t}R_{tu}w_u\bar H_u ;

the law of the family beyond ``R`` does not enter. ``iid`` signs give :math:`\bar H = X`, :math:`h_D = g_D`; so does one
nonzero weight (no partner ``u``).

*Why a quenched population.* The equation for :math:`\bar H` is affine, and its mean propagates with the multiplier
:math:`m(\zeta)\approx g_D\sum_t Y_t w_t\sum_{u\ne t}R_{tu}w_u`; where :math:`|m| \ge 1` (strongly correlated signs,
``zeta`` inside the bulk or left of the token matrix's own outlier along ``s``, where ``s`` is nearly an eigenvector
of ``D`` with eigenvalue about :math:`\alpha = w^\top Rw`) the sum over paths diverges and iterating the equation
(population dynamics) blows up, while :math:`h_D` is its analytic continuation, finite. So the population is
*quenched*: ``P`` tokens, each with stratified Poisson numbers of child sequences per position (as
:func:`derive.vocabulary.limit.cavity._stratified_counts`), each sequence with ``T'`` random partner tokens, fixed once.
On it ``X`` is the fixed point of the cavity map (iterated with Anderson mixing, :func:`_fixed_point`; at real
``zeta`` a small imaginary part ``eta`` keeps it off the quenched structure's own poles), and :math:`\bar H` the
solution of the sparse linear system :math:`(I - \mathcal L)\bar H = X` (GMRES), which is the analytic continuation
wherever 1 is not an eigenvalue of :math:`\mathcal L`. The derivatives in ``zeta`` solve the linear systems of the
differentiated equations, :math:`\partial X = X^2(1 + s\sum w^2\sum\partial Y)`,
:math:`\partial Y_t = Y_t^2s\sum_{u\ne t}w_u^2\partial X_u`,
:math:`\partial\bar H = \partial X\,\bar H/X + Xs\sum(\partial Y\,F + Y\,\partial F)`. The quenched population is a
random directed graph of ``P`` tokens, tree-like up to distances of order :math:`\log P`: its averages are the tree's
up to a sampling error of order :math:`P^{-1/2}`, estimated by independent replicas. The averages are taken over
root tokens whose children are drawn from the population (:mod:`derive.vocabulary.limit.roottokens`).

*Determinism.* A replica's population is drawn from a seed made of the parameters and the replica's index only.
"""
from __future__ import annotations

import zlib
from dataclasses import dataclass, field

import numba
import numpy as np

from derive.cache import keep_fresh
from derive.errors import ParameterError
from derive.vocabulary.limit import KERNEL_FILES
from derive.vocabulary.limit.linalg import anderson_step, anderson_work, gmres, real_times
from derive.vocabulary.limit.roottokens import _poisson_cdf, rarity_classes, root_averages, root_counts, tilt

__all__ = ["Quenched", "Transforms", "quenched", "transforms", "replica_seed"]

_TOL = 1e-10
_J, _L = 0, 1  # the two linear maps: the Jacobian of the cavity map (for dX), the field's (for H)


@dataclass(frozen=True)
class Transforms:
    r"""The averages of one quenched population at ``zeta``: :math:`g_D, g_D', h_D, h_D'`, whether every solve
    converged (the cavity fixed point and the linear systems to :math:`10^{-10}`), the fraction ``above`` of tokens
    whose pivot :math:`\operatorname{Re}(1/X)` is positive (the mass of the law of ``D`` above
    :math:`\operatorname{Re}\zeta`), the population's ``X`` and the solutions ``dX, H, dH`` of the linear systems
    (``H, dH`` ``None`` where the field is ``X`` or was not asked for; a later solve starts from them), and per class
    of root tokens of :data:`~derive.vocabulary.limit.roottokens.RARE` the row ``(mass, g, dg, h, dh)`` of its share of
    the averages."""

    zeta: complex
    g: complex
    dg: complex
    h: complex
    dh: complex
    converged: bool
    above: float = 0.0
    X: np.ndarray = field(default=None, repr=False, compare=False)
    dX: np.ndarray = field(default=None, repr=False, compare=False)
    H: np.ndarray = field(default=None, repr=False, compare=False)
    dH: np.ndarray = field(default=None, repr=False, compare=False)
    classes: np.ndarray = field(default=None, repr=False, compare=False)


@numba.njit(cache=True, nogil=True)
def _sequences(X, partners, w2, s):
    r""":math:`Y_t = 1/(-1 - s\sum_{u\ne t}w_u^2X_u)` of every sequence node seen from each position."""
    P, n = partners.shape
    Y = np.empty((P, n), dtype=np.complex128)
    for c in range(P):
        total = 0j
        for u in range(n):
            total += real_times(w2[u], X[partners[c, u]])
        for t in range(n):
            a = -1.0 - real_times(s, total - real_times(w2[t], X[partners[c, t]]))
            Y[c, t] = 1.0 / a
    return Y


@numba.njit(cache=True, nogil=True)
def _cavity_map(X, partners, ptr, node, pos, w2, s, zeta, out):
    """One application of the cavity map to ``X``, into ``out``; the largest relative change."""
    Y = _sequences(X, partners, w2, s)
    change = 0.0
    for i in range(X.shape[0]):
        acc = 0j
        for e in range(ptr[i], ptr[i + 1]):
            acc += real_times(w2[pos[e]], Y[node[e], pos[e]])
        new = 1.0 / (-zeta - real_times(s, acc))
        d = abs(new - X[i]) / (1.0 + abs(new))
        if d > change:
            change = d
        out[i] = new
    return change


_DEPTH = 6
"""Iterates remembered by the Anderson mixing of :func:`_fixed_point`."""


@numba.njit(cache=True, nogil=True)
def _fixed_point(X, partners, ptr, node, pos, w2, s, zeta, tol, max_iterations):
    r"""Iterate the cavity map :math:`F` in place until the largest relative change is below ``tol``; whether it was
    reached. The iterates are Anderson-mixed (:func:`derive.vocabulary.limit.linalg.anderson_step`, the last
    :data:`_DEPTH` residuals). Near an edge of the bulk the plain iteration contracts by a factor within 1% of 1 on some
    populations (2560 iterations measured, against about 100 mixed); the fixed point is the same, since a mixed step is
    kept only where it stays in the closed upper half-plane that the map preserves (else the plain step is taken and the
    history restarts), and convergence is judged, as before, on one plain application of the map."""
    F = np.empty(X.shape[0], dtype=np.complex128)
    work = anderson_work(X.shape[0], _DEPTH)
    state = np.zeros(2, dtype=np.int64)
    for iteration in range(max_iterations):
        if _cavity_map(X, partners, ptr, node, pos, w2, s, zeta, F) < tol:
            X[:] = F
            return True
        anderson_step(X, F, work, state, iteration == 0, True)
    return False


@numba.njit(cache=True, nogil=True)
def _edge_coefficients(kind, X, Y, partners, ptr, node, pos, w2, s):
    r"""Per child sequence ``e`` of token ``i`` (at position ``t`` of sequence node ``c``), the factor of the linear map
    of ``kind`` (:func:`_operator`): :math:`X_i^2s^2w_t^2Y_{ct}^2` for the Jacobian, :math:`X_isY_{ct}` for the field;
    and the token at ``t`` of ``c``. Made once per system, read in order by every application."""
    E = node.shape[0]
    coef = np.empty(E, dtype=np.complex128)
    target = np.empty(E, dtype=np.int64)
    for i in range(X.shape[0]):
        for e in range(ptr[i], ptr[i + 1]):
            c, t = node[e], pos[e]
            y = Y[c, t]
            coef[e] = real_times(w2[t], real_times(s, real_times(s, X[i] * X[i]))) * y * y if kind == _J \
                else real_times(s, X[i]) * y
            target[e] = partners[c, t]
    return coef, target


@numba.njit(cache=True, nogil=True)
def _operator(kind, v, coef, target, partners, ptr, node, pos, w2, C):
    r"""``(I - M) v`` without forming ``M``: the Jacobian of the cavity map (``kind = _J``,
    :math:`M_{ij} = \sum_e X_i^2s^2w_t^2Y_e^2w_u^2` over the child sequences ``e`` of ``i`` (at position ``t``) whose
    partner at ``u != t`` is ``j``) or the field's map (``kind = _L``, :math:`\sum_e X_isY_eC_{tu}`), the factors
    of :func:`_edge_coefficients`. A sequence node's partners are summed once (:math:`\sum_u w_u^2v_u`, or the
    ``T' x T'`` product :math:`Cv` for the field), then each token sums over its children: :math:`O(PT'^2)` for the
    field, :math:`O(PT')` for the Jacobian, and no :math:`O(PT'^2\lambda)` array of entries (64 MB at ``T' = 16``,
    ``P = 2^15``)."""
    P, n = partners.shape
    if kind == _J:
        W = np.empty(P, dtype=np.complex128)
        for c in range(P):
            acc = 0j
            for u in range(n):
                acc += real_times(w2[u], v[partners[c, u]])
            W[c] = acc
    else:
        G = np.empty((P, n), dtype=np.complex128)
        vc = np.empty(n, dtype=np.complex128)
        for c in range(P):
            for u in range(n):
                vc[u] = v[partners[c, u]]
            for t in range(n):
                acc = 0j
                for u in range(n):
                    acc += real_times(C[t, u], vc[u])
                G[c, t] = acc
    out = np.empty(P, dtype=np.complex128)
    for i in range(P):
        acc = 0j
        if kind == _J:
            for e in range(ptr[i], ptr[i + 1]):
                acc += coef[e] * (W[node[e]] - real_times(w2[pos[e]], v[target[e]]))
        else:
            for e in range(ptr[i], ptr[i + 1]):
                acc += coef[e] * G[node[e], pos[e]]
        out[i] = v[i] - acc
    return out


@numba.njit(cache=True, nogil=True)
def _field_rhs(dX, H, X, Y, partners, ptr, node, pos, w2, C, s):
    r""":math:`\partial X\,\bar H/X + Xs\sum_e\partial Y_eF_e`, the source of the system for :math:`\partial\bar H`."""
    P, n = partners.shape
    out = np.empty(P, dtype=np.complex128)
    for i in range(P):
        acc = 0j
        for e in range(ptr[i], ptr[i + 1]):
            c, t = node[e], pos[e]
            dsum = 0j
            f = 0j
            for u in range(n):
                if u != t:
                    dsum += real_times(w2[u], dX[partners[c, u]])
                    f += real_times(C[t, u], H[partners[c, u]])
            y = Y[c, t]
            acc += real_times(s, y * y) * dsum * f
        out[i] = dX[i] * H[i] / X[i] + real_times(s, X[i]) * acc
    return out


@numba.njit(cache=True, nogil=True)
def _sequence_fields(X, dX, H, dH, partners, w2, C, s, field):
    r"""Per sequence node ``c`` seen from position ``t``: :math:`Y`, :math:`\partial Y`, and with ``field``
    :math:`M = YF` and :math:`\partial M = \partial Y\,F + Y\,\partial F` (what a token above it at ``t`` receives),
    side by side in the last axis, so that a root reads one child's numbers from one place. Without ``field`` (``F = 0``:
    iid signs, or the field not asked for) the last axis holds the first two only: the roots' averages, a random read
    per child, then read half the bytes (a fifth of the time of a solve in the search for a gap's edge)."""
    P, n = partners.shape
    out = np.empty((P, n, 4 if field else 2), dtype=np.complex128)
    for c in range(P):
        total = 0j
        dtotal = 0j
        for u in range(n):
            total += real_times(w2[u], X[partners[c, u]])
            dtotal += real_times(w2[u], dX[partners[c, u]])
        for t in range(n):
            p = partners[c, t]
            y = 1.0 / (-1.0 - real_times(s, total - real_times(w2[t], X[p])))
            dy = real_times(s, y * y) * (dtotal - real_times(w2[t], dX[p]))
            out[c, t, 0], out[c, t, 1] = y, dy
            if field:
                f = 0j
                df = 0j
                for u in range(n):
                    if u != t:
                        f += real_times(C[t, u], H[partners[c, u]])
                        df += real_times(C[t, u], dH[partners[c, u]])
                out[c, t, 2], out[c, t, 3] = y * f, dy * f + y * df
    return out


@dataclass(frozen=True)
class Quenched:
    """A quenched population: ``P`` tokens; their child sequences (edges) sorted by token (``ptr``), each with its
    sequence node and position; per sequence node its ``T'`` partner tokens. ``w`` the nonzero weights, ``R`` their
    correlation, ``s = V/N``."""

    w: np.ndarray
    R: np.ndarray
    s: float
    ptr: np.ndarray
    node: np.ndarray
    position: np.ndarray
    partners: np.ndarray
    seed: int = 0
    samples: int = 1 << 16

    @property
    def P(self) -> int:
        return int(self.partners.shape[0])

    def _roots_at(self, lam: float, tilted: np.ndarray):
        """The roots' counts and weights (:func:`root_counts`) for the tilted means ``tilted``, drawn once per
        population and tilt: a curve evaluates every ``t`` at one tilt."""
        cache = self.__dict__.setdefault("roots", {})
        key = tuple(tilted.tolist())
        if key not in cache:
            cache.clear()  # one tilt at a time: the arrays hold samples x T' counts
            K, weight = root_counts(lam, tilted, self.samples, self.seed)
            cache[key] = K, weight, rarity_classes(K, weight, self.w**2)
        return cache[key]

    def solve(self, zeta: complex, start=None, level: float | None = None, tol: float | None = None,
              max_iterations: int = 5000, with_field: bool = True) -> Transforms:
        """:class:`Transforms` at ``zeta`` (``Im zeta >= 0``), the cavity iteration and the linear systems started
        from their solutions at ``start`` (a previous :class:`Transforms`), else from :math:`-1/\\zeta` and 0; the
        roots' counts tilted towards the weighted degree ``level`` (default :math:`\\operatorname{Re}\\zeta`). The roots
        are the same at every ``zeta`` of one ``level`` (common random numbers: the estimates are then smooth in
        ``zeta``). ``with_field=False`` leaves out the field (``h, dh`` NaN: what :math:`x'` alone needs); ``tol``: the
        relative tolerance of the iteration and the linear systems (``None``: :data:`_TOL`)."""
        zeta = complex(zeta)
        tol = _TOL if tol is None else tol
        w2 = self.w**2
        n = self.w.size
        C = (self.R * (1 - np.eye(n))) * np.outer(self.w, self.w)
        args = (self.partners, self.ptr, self.node, self.position, w2)
        X = np.full(self.P, -1 / zeta, dtype=np.complex128) if start is None else start.X.copy()
        ok = _fixed_point(X, *args, self.s, zeta, tol, max_iterations)
        Y = _sequences(X, self.partners, w2, self.s)
        zero = np.zeros(self.P, dtype=np.complex128)

        def solve(kind, rhs, previous):
            if kind not in maps:
                maps[kind] = _edge_coefficients(kind, X, Y, *args, self.s)
            x0 = zero if previous is None else previous
            coef, target = maps[kind]
            return gmres(lambda v: _operator(kind, v, coef, target, *args, C), rhs, x0, tol, 40, 50)

        maps: dict = {}

        dX, ok1 = solve(_J, X * X, None if start is None else start.dX)
        correlated = bool(np.any(C != 0))
        field = with_field and correlated
        if field:
            H, ok2 = solve(_L, X, None if start is None or start.H is None else start.H)
            dH, ok3 = solve(_L, _field_rhs(dX, H, X, Y, *args, C, self.s),
                            None if start is None or start.dH is None else start.dH)
        else:
            H, dH, ok2, ok3 = X, dX, True, True
        lam = 1 / self.s
        fields = _sequence_fields(X, dX, H, dH, self.partners, w2, C, self.s, field)
        K, weight, rarity = self._roots_at(lam, tilt(lam, self.s * w2, zeta.real if level is None else float(level)))
        classes = root_averages(fields, w2, self.s, zeta, K, weight, rarity, self.seed)
        if correlated and not with_field:
            classes[:, 2:4] = np.nan
        means = classes.sum(axis=0)
        return Transforms(zeta, complex(means[0]), complex(means[1]), complex(means[2]), complex(means[3]),
                          bool(ok and ok1 and ok2 and ok3), float(means[4].real), X, dX, H if field else None,
                          dH if field else None, classes[:, [5, 0, 1, 2, 3]])


def _stratified_poisson(rng: np.random.Generator, lam: float, shape) -> np.ndarray:
    r"""Poisson(``lam``) counts at the stratified quantiles :math:`(j + U_j)/P` of each row, shuffled: the population
    carries the Poisson law with no sampling error in the counts (as :func:`derive.vocabulary.limit.cavity._stratified_counts`).
    Its distribution function is the roots' (:func:`~derive.vocabulary.limit.roottokens._poisson_cdf`), not
    scipy.stats', whose import costs a cold limit a second and a half."""
    n, P = shape
    q = (np.arange(P)[None, :] + rng.random((n, P))) / P
    cdf = _poisson_cdf(float(lam))
    K = np.minimum(np.searchsorted(cdf, q, side="left"), cdf.size - 1)
    return rng.permuted(K, axis=1)


def quenched(weights, R, delta, gamma, P: int, seed: int, samples: int = 1 << 16) -> Quenched:
    """A quenched population of ``P`` tokens for the nonzero ``weights`` (floats) with sign correlation ``R`` (their
    ``T' x T'`` block), at ``delta, gamma``; its averages over ``samples`` root tokens."""
    w = np.asarray(weights, dtype=float)
    R = np.asarray(R, dtype=float)
    if w.ndim != 1 or w.size == 0 or np.any(w == 0):
        raise ParameterError("weights", "must be the nonzero weights")
    if R.shape != (w.size, w.size):
        raise ParameterError("signs", f"R must be {w.size} x {w.size} (the nonzero weights' positions)")
    lam = float(delta) / float(gamma)
    rng = np.random.default_rng(seed)
    n = w.size
    K = _stratified_poisson(rng, lam, (n, P))
    ptr = np.concatenate([[0], np.cumsum(K.sum(axis=0))]).astype(np.int64)
    # a token's edges, position by position: (t, K[t, i]) for each token i in order
    position = np.repeat(np.tile(np.arange(n), P), K.T.ravel()).astype(np.int64)
    node = rng.integers(0, P, size=position.size)
    partners = rng.integers(0, P, size=(P, n))
    return Quenched(w, R, 1 / lam, ptr, node, position, partners, seed, samples)


def replica_seed(key: str, replica: int) -> int:
    """The seed of replica ``replica`` of the population described by ``key``."""
    return zlib.crc32(f"{key}|{replica}".encode())


def transforms(zeta, weights, R, delta, gamma, P: int = 1 << 15, replicas: int = 4) -> list[Transforms]:
    """:class:`Transforms` at ``zeta`` on ``replicas`` independent quenched populations of ``P`` tokens."""
    key = f"{float(delta)!r}|{float(gamma)!r}|{tuple(np.asarray(weights, float).tolist())!r}|" \
          f"{tuple(np.asarray(R, float).ravel().tolist())!r}|{P}"
    return [quenched(weights, R, delta, gamma, P, replica_seed(key, r)).solve(complex(zeta)) for r in range(replicas)]


keep_fresh(globals(), *KERNEL_FILES)  # last: every kernel of the module is defined
