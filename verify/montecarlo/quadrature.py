r"""The spectral law of one sampled token matrix :math:`D = \frac VN AA^\top` by stochastic Lanczos quadrature, and
the law of ``S`` conditional on it: a reference for the cavity solver at ``V`` of order :math:`10^5` to :math:`10^6`.

*Quadrature.* For a probe ``b`` of i.i.d. :math:`\pm1` entries, :math:`E\,b^\top f(D)\,b = \operatorname{tr}f(D)`.
``k`` Lanczos steps on ``D`` from :math:`b/\|b\|` give a Jacobi matrix :math:`J_k`, and
:math:`\frac1V b^\top f(D)\,b \approx e_1^\top f(J_k)\,e_1 = \sum_j \tau_j f(\theta_j)`: the Gauss rule of the spectral
measure of ``D`` seen from ``b``, exact for polynomials of degree below ``2k`` (Golub and Meurant 2010; Ubaru, Chen
and Saad 2017). For :math:`f = 1/(x - \zeta)` its error falls like :math:`\rho^{-2k}`, :math:`\rho` the Bernstein
ellipse of :math:`[0, \|D\|]` through :math:`\zeta`; it is measured as the change from ``k/2`` to ``k`` steps
(:meth:`Quadrature.truncated`). Lanczos runs without reorthogonalization: in floating point the Gauss rule of the
computed :math:`J_k` stays accurate (Greenbaum 1989; Knizhnerman 1996), its ghost nodes carrying the weight of the
eigenvalues they copy.

*The conditional law.* Given ``D``, :math:`S = \frac1V ZDZ^\top` has the deterministic equivalent of Silverstein's
equation with population the spectrum of ``D``: :math:`m(z) = -1/t`, ``t`` the root of :math:`t(1 - S_0(t)) = z`,
:math:`S_0(t) = \frac1\delta(1 + \zeta g^A_D(\zeta))`, :math:`\zeta = t/\delta`
(:mod:`derive.vocabulary.limit.cavity` for the limit), found by Newton's method continued from :math:`z + i(1 + |z|)`
down to ``z``.

*Errors of a draw's estimate.* The probes' spread (Hutchinson: variance :math:`\frac{2}{V^2}\sum_{i\ne j}
(\operatorname{Re}f(D)_{ij})^2` per probe), the token graph's own fluctuation about the limit,
:math:`O(V^{-1/2})`, and its finite-size bias, :math:`O(1/V)`; the first two are in the spread of estimates over
draws (:func:`verify.stats.mean_ci`), the third in a ladder of ``V``.
"""
from __future__ import annotations

from dataclasses import dataclass

import numba
import numpy as np
from scipy.linalg import eigh_tridiagonal

from derive.errors import ParameterError
from derive.model.spec import parse_signs
from verify.montecarlo.draw import sample_sequences, streams

__all__ = ["token_draw", "Quadrature", "lanczos_quadrature", "conditional_stieltjes"]


def token_draw(V: int, N: int, weights, seed: int) -> tuple[np.ndarray, np.ndarray]:
    r"""One draw of the model's sequences as ``(tokens, w)``: the ``N x T'`` tokens at the ``T'`` nonzero weights
    ``w`` (i.i.d. signs; the class signs do not enter the bulk). Column ``n`` of ``A`` is
    :math:`\sum_t w_t \mathbf e_{\text{tokens}[n, t]}` (:func:`verify.montecarlo.draw.mixing_matrix`)."""
    w = np.array([float(x) for x in weights if float(x) != 0.0])
    rng, = streams(seed, 1)
    _, tokens = sample_sequences(rng, parse_signs("iid"), V, N, len(w))
    return np.ascontiguousarray(tokens), w


@numba.njit(cache=True)
def _lanczos_step(tokens, w, scale, Q, previous, beta, W, Y):
    r""":math:`W = DQ - \alpha Q - \beta Q_{\text{prev}}` for :math:`D = \text{scale}\cdot AA^\top` applied through
    the tokens (``Y = A^T Q`` first); returns :math:`\alpha` and the norms of the columns of ``W``."""
    N, T = tokens.shape
    V, R = Q.shape
    Y[:] = 0.0
    for n in range(N):
        for t in range(T):
            v = tokens[n, t]
            for r in range(R):
                Y[n, r] += w[t] * Q[v, r]
    W[:] = 0.0
    for n in range(N):
        for t in range(T):
            v = tokens[n, t]
            for r in range(R):
                W[v, r] += scale * w[t] * Y[n, r]
    alpha = np.zeros(R)
    for v in range(V):
        for r in range(R):
            alpha[r] += Q[v, r] * W[v, r]
    norms = np.zeros(R)
    for v in range(V):
        for r in range(R):
            x = W[v, r] - alpha[r] * Q[v, r] - beta[r] * previous[v, r]
            W[v, r] = x
            norms[r] += x * x
    return alpha, np.sqrt(norms)


@dataclass(frozen=True)
class Quadrature:
    """The Jacobi matrices of ``probes`` Lanczos runs (``alphas``, ``betas``: ``(steps, probes)``) and the Gauss rules
    they give (``nodes``, ``weights``: ``(probes, steps)``; each probe's weights sum to 1)."""

    alphas: np.ndarray
    betas: np.ndarray
    nodes: np.ndarray
    weights: np.ndarray

    @classmethod
    def of(cls, alphas, betas) -> "Quadrature":
        k, probes = alphas.shape
        nodes, weights = np.empty((probes, k)), np.empty((probes, k))
        for r in range(probes):
            theta, vectors = eigh_tridiagonal(alphas[:, r], betas[:k - 1, r])
            nodes[r], weights[r] = theta, vectors[0] ** 2
        return cls(alphas, betas, nodes, weights)

    def truncated(self, steps: int) -> "Quadrature":
        """The rule of the first ``steps`` Lanczos steps."""
        return Quadrature.of(self.alphas[:steps], self.betas[:steps])

    def resolvent(self, zeta: complex) -> tuple[complex, complex]:
        r""":math:`g(\zeta) = \frac1V\operatorname{tr}(D - \zeta)^{-1}` and :math:`g'(\zeta)`, the mean over probes."""
        inverse = 1.0 / (self.nodes - zeta)
        return complex(np.mean(np.sum(self.weights * inverse, axis=1))), \
            complex(np.mean(np.sum(self.weights * inverse**2, axis=1)))


def lanczos_quadrature(draw, scale: float, probes: int, steps: int, seed: int) -> Quadrature:
    r"""``steps`` Lanczos steps of :math:`D = \text{scale}\cdot AA^\top` from ``probes`` Rademacher probes at once,
    ``draw = (tokens, w)`` of :func:`token_draw` (``D`` applied through the tokens, never formed)."""
    if probes < 1 or steps < 2:
        raise ParameterError("steps", f"need probes >= 1 and steps >= 2, got {probes}, {steps}")
    tokens, w = draw
    V = int(tokens.max()) + 1 if tokens.size else 0
    rng, = streams(seed, 1)
    Q = rng.choice(np.array([-1.0, 1.0]), size=(V, probes)) / np.sqrt(V)
    previous, W = np.zeros_like(Q), np.empty_like(Q)
    Y = np.empty((tokens.shape[0], probes))
    alphas, betas = np.empty((steps, probes)), np.empty((steps, probes))
    beta = np.zeros(probes)
    for j in range(steps):
        alpha, beta = _lanczos_step(tokens, w, float(scale), Q, previous, beta, W, Y)
        if np.any(beta <= 1e-12 * np.abs(alpha).max()):
            raise ArithmeticError("Lanczos broke down: an invariant subspace from a probe (V too small?)")
        alphas[j], betas[j] = alpha, beta
        previous, Q, W = Q, W / beta, previous
    return Quadrature.of(alphas, betas)


def conditional_stieltjes(z: complex, resolvent, delta: float) -> complex:
    r"""The Stieltjes transform :math:`m(z) = -1/t` of the law of ``S`` given ``D``, whose resolvent is
    ``resolvent(zeta) -> (g, g')``, at ``z`` in the closed upper half-plane: Newton's method on
    :math:`t(1 - S_0(t)) = z` along :math:`z + i\eta`, :math:`\eta` from :math:`1 + |z|` down to
    :math:`\operatorname{Im} z` in 24 geometric stages (to :math:`10^{-3}(1 + |z|)`, then 0, if ``z`` is real), from
    :math:`t = z + i\eta_0`."""
    z = complex(z)
    if z.imag < 0:
        raise ParameterError("z", f"must lie in the closed upper half-plane, got {z}")
    top = 1.0 + abs(z)
    lowest = z.imag if z.imag > 0 else 1e-3 * top
    etas = [top * (lowest / top) ** (k / 24) for k in range(25)] + ([0.0] if z.imag == 0 else [])
    targets = [complex(z.real, eta) for eta in etas]
    t = targets[0]
    for target in targets:
        for _ in range(100):
            zeta = t / delta
            g, dg = resolvent(zeta)
            S0 = (1.0 + zeta * g) / delta
            S1 = (g + zeta * dg) / delta**2
            step = (t * (1.0 - S0) - target) / (1.0 - S0 - t * S1)
            new = t - step
            t = new if new.imag > 0 else complex(new.real, t.imag / 2)
            if abs(step) <= 1e-13 * abs(t):
                break
        else:
            raise ArithmeticError(f"Newton's method did not converge at z = {target}")
    return -1.0 / t
