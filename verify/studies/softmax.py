r"""Causal softmax attention at the transformer's scaling (scores :math:`\tau\langle x_t, x_s\rangle/\sqrt d`): the
moments of its real weights at a finite ``d`` against the derived law (:mod:`derive.model.softmax`), with a tolerance
argued from a confidence interval and the known :math:`O(d^{-1/2})` rate.

**The rate.** At a finite ``d`` the scores of distinct tokens differ from the limit's i.i.d. Gaussians by the signal's
share :math:`\tau\xi_t\xi_s\mu_2/\sqrt d` and the Gram matrix's third cumulant (:math:`E[g_{ts}g_{tu}g_{su}] =
d^{-1/2}`): both first order in :math:`d^{-1/2}`. Measured with the exact Gram sampler
(:func:`verify.montecarlo.attention.gram_attention_weights`, ``T = 8``, ``prefix:3``, ``mu2 = 3/2``, 200 000 sequences
at each of ``d = 100, 250, 1000``), :math:`\sqrt d` times the relative deviation of ``kappa`` is about ``-0.01, -0.03,
-0.07, -0.10, -0.12`` at ``tau = 1/2, 1, 2, 4, 8`` (flat in ``d``, as the rate says) and that of ``alpha`` at most
``0.12`` in size. :data:`FINITE_SIZE` allows ``0.15``.

**The test.** Monte Carlo minus the derived value must lie within :math:`z_{0.975}\,\mathrm{SE} + c/\sqrt d` (relative
:math:`c` = :data:`FINITE_SIZE`); an error is detected with probability 0.8 once it exceeds
:math:`(z_{0.975} + z_{0.8})\,\mathrm{SE} + c/\sqrt d`, reported as ``min_detectable`` (relative).
"""
from __future__ import annotations

import math

import numpy as np

__all__ = ["FINITE_SIZE", "Z_LEVEL", "Z_POWER", "weight_moments"]

FINITE_SIZE = 0.15
"""The allowed relative difference at ``d``, times :math:`\\sqrt d` (the measured coefficient is at most 0.125 for
``tau <= 8``; module docstring)."""

Z_LEVEL, Z_POWER = 1.959964, 0.841621
"""The normal quantiles of a two-sided 95% interval and of a power of 0.8."""


def _sequences(rng, family, n: int, T: int, d: int, mu2: float, tau: float, mask: str, method: str):
    """``n`` sequences of distinct tokens: their signs and their attention weights at ``d``, by the exact Gram law
    (``"gram"``) or from ``T x d`` Gaussian tokens (``"embeddings"``, :func:`verify.montecarlo.attention.attention_weights`
    in chunks)."""
    from verify.montecarlo.attention import attention_weights, chunk_size, gram_attention_weights

    xi = family.sample(rng, n, T).astype(np.float64)
    if method == "gram":
        return xi, gram_attention_weights(rng, xi, d, mu2, tau, mask)
    w, step = np.empty((n, T)), chunk_size(T, d)
    for start in range(0, n, step):
        part = xi[start:start + step]
        X = rng.standard_normal((len(part), T, d))
        X[:, :, 0] += math.sqrt(mu2) * part
        w[start:start + step] = attention_weights(X, tau, mask, "1/sqrt(d)")
    return xi, w


def weight_moments(d: int, T: int, tau, mask: str, signs: str, *, mu2=1.5, n: int = 20_000, seed: int = 0,
                   method: str = "gram") -> dict:
    r"""Real softmax attention (scores :math:`1/\sqrt d`) on ``n`` sequences of ``T`` distinct tokens at dimension ``d``
    (signs from ``signs``, signal ``mu2``) against the derived :math:`\alpha = E[(w^\top\xi)^2]` and
    :math:`\kappa = E\|w\|^2` (:func:`derive.weights`): for each, the Monte Carlo mean and standard error, the derived
    value and its quadrature error, the difference, the tolerance (module docstring), whether the difference is
    within it, and the smallest relative error the run detects with probability 0.8 (``min_detectable``)."""
    import derive

    m = derive.Model(T=T, weights="softmax", tau=str(tau), mask=mask, signs=signs)
    p = derive.weights(m)
    xi, w = _sequences(np.random.default_rng(seed), m.signs, n, T, d, float(mu2), float(tau), mask, method)
    measured = {"alpha": np.einsum("nt,nt->n", w, xi) ** 2, "kappa": np.einsum("nt,nt->n", w, w)}
    errors = p.errors or {}
    out = {"d": d, "T": T, "tau": str(tau), "mask": mask, "signs": signs, "mu2": str(mu2), "sequences": n,
           "method": method, "seed": seed}
    for name, values in measured.items():
        derived = float(getattr(p, name))
        mean, se = float(values.mean()), float(values.std(ddof=1) / math.sqrt(n))
        allowance = FINITE_SIZE * abs(derived) / math.sqrt(d)
        tolerance = Z_LEVEL * se + allowance + float(errors.get(name) or 0)
        out[name] = {"monte_carlo": mean, "se": se, "derived": derived, "derived_error": errors.get(name),
                     "difference": mean - derived, "relative_difference": (mean - derived) / derived,
                     "tolerance": tolerance, "within": bool(abs(mean - derived) <= tolerance),
                     "min_detectable": ((Z_LEVEL + Z_POWER) * se + allowance) / abs(derived)}
    return out
