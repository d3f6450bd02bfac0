r"""The Monte Carlo check of ``verify formula --mc``: the model simulated at the point a check found or looked at,
for the quantities a simulation measures directly (the top eigenpair of the centered ``S``). It informs; the
verdict is the proof's or the search's."""
from __future__ import annotations

import math

from derive.numbers import format_real
from derive.sheet.quantities import Quantity

__all__ = ["MC_QUANTITIES", "SPREAD", "realizing_weights", "monte_carlo"]

MC_QUANTITIES = ("sample.eigenvalue", "sample.overlap")
"""The quantities a Monte Carlo of the model measures directly (the top eigenpair of the centered ``S``)."""

SPREAD = 7
"""Positions outside the block that carry weight: spread weights keep each token's reuse ``N T / V`` large, where
the Gaussian-equivalent law that the outlier formulas are for is close to the model's own."""


def realizing_weights(rho: float) -> tuple[str, list[float]] | None:
    r"""A sign family and weights with :math:`w^\top R w / \|w\|^2 = \rho` (``None`` for :math:`\rho < 1`):
    ``prefix:L`` with weight ``a`` on the block and ``b = 1`` on the :data:`SPREAD` other positions gives
    :math:`(L^2a^2 + (T-L)b^2)/(La^2 + (T-L)b^2)`, which runs over ``[1, L)``; :math:`\rho = L` needs all the
    weight on the block, :math:`\rho = 1` is ``iid`` with equal weights.

    >>> realizing_weights(1), realizing_weights(0.5)
    (('iid', [1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0]), None)
    """
    if rho < 1:
        return None
    if rho == 1:
        return "iid", [1.0] * (SPREAD + 1)
    L = math.ceil(rho)
    if rho == L:
        return f"prefix:{L}", [1.0] * L
    a = math.sqrt(SPREAD * (rho - 1) / (L * (L - rho)))
    return f"prefix:{L}", [a] * L + [1.0] * SPREAD


def monte_carlo(q: Quantity, point: dict, values: tuple, digits: int, *, d: int, seeds: int, seed0: int) -> dict:
    """The model simulated at ``point`` (centered ``S``): the measured mean and its Student-t interval (within the
    range of the quantity: an overlap's in ``[0, 1]``, an eigenvalue of the positive semi-definite ``S`` at least 0),
    whether each value lies in it, and the smallest relative error the interval resolves."""
    import numpy as np

    from derive.symbols import alpha, delta, gamma, kappa, mu2
    from verify.montecarlo.trials import run_trials
    from verify.stats import mean_ci

    where = {str(k): str(v) for k, v in point.items()}
    if q.name not in MC_QUANTITIES:
        return {"skipped": f"Monte Carlo measures {' and '.join(MC_QUANTITIES)} only", "point": where}
    rho = float(point[alpha] / point[kappa])
    realized = realizing_weights(rho)
    if realized is None:
        return {"skipped": f"alpha/kappa = {rho:.4g} < 1 has no prefix-family realization", "point": where}
    signs, w = realized
    w = np.array(w) * math.sqrt(float(point[kappa]) / float(np.dot(w, w)))
    V = 2 * max(1, round(d / float(point[delta]) / 2))
    N = max(d + 1, round(d / float(point[gamma])))
    if d * (V + N) > 2.5e8:
        return {"skipped": f"d = {d} at delta = {point[delta]}, gamma = {point[gamma]} needs V = {V}, N = {N}: too large",
                "point": where}
    from derive import Model

    model = Model(d=d, V=V, N=N, T=len(w), signs=signs, mu2=point[mu2], centered=True)
    run = run_trials(model, weights=list(w), k=2, seeds=seeds, seed0=seed0)
    if q.name == "sample.eigenvalue":
        measured, support = run.top_eigenvalues[:, 0], (0.0, math.inf)
    else:
        measured, support = run.overlaps[:, 0], (0.0, 1.0)
    mean, lo, hi = mean_ci(measured, support=support)
    _, low, high = mean_ci(measured)  # the power is that of the interval before it is cut to the quantity's range
    expected, got = values
    fmt = lambda v: format_real(v, 10)  # noqa: E731
    inside = lambda v: v is not None and lo <= float(v) <= hi  # noqa: E731
    return {"point": where, "d": d, "V": V, "N": N, "T": len(w), "reuse": fmt(N * len(w) / V), "signs": signs,
            "weights": [fmt(v) for v in w],
            "S": "centered", "seeds": seeds, "seed0": seed0, "mean": fmt(mean), "ci95": [fmt(lo), fmt(hi)],
            "expected_in_ci": inside(expected), "got_in_ci": inside(got),
            "min_detectable_rel_error": {q.name: format_real((high - low) / 2 / abs(float(expected)), 3)},
            "note": "Student-t 95% over seeds; the finite-size bias (O(d^-1/2) for overlaps) is not in the interval; the "
                    "derived values are the Gaussian-equivalent law, close to the model's own when the reuse N T / V is "
                    "large and the weights spread"}
