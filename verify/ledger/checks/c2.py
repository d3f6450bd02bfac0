"""C2: two successive transitions."""
from __future__ import annotations

import mpmath
import numpy as np
import sympy as sp

from derive.outliers import sample_threshold
from verify.ledger.checks.common import DELTA, compare, fmt, scheme_floats, theory
from verify.montecarlo.draw import rung
from verify.montecarlo.population import population_covariance

__all__ = ["check_c2"]


def check_c2(cfg: dict) -> dict:
    """C2: two successive transitions; a point between them shows a population outlier and no sample one."""
    grid = [sp.Rational(p, q) for p, q in ((1, 4), (1, 2), (1, 1), (2, 1), (4, 1))]
    successive = 0
    with mpmath.workdps(30):
        for dl in grid:
            for gm in grid:
                pop = mpmath.mpf(dl.p) / dl.q + mpmath.sqrt(mpmath.mpf(dl.p) / dl.q)
                successive += sample_threshold(dl, gm, 1) > pop
    delta, gamma = DELTA, sp.Integer(1)
    runs = [compare(cfg, delta, gamma, "mean", mu2, seed0=200 + i) for i, mu2 in enumerate((0.05, 0.45, 4.0))]
    # the population outlier at the middle point, from exact covariances of sampled tables
    w, a, k = scheme_floats("mean")
    d = cfg["d"]
    V, _ = rung(d, delta, gamma)
    th = theory(delta, gamma, "mean", "0.45")
    rng = np.random.default_rng(2024)
    pop_top = [np.linalg.eigvalsh(population_covariance(rng, d, V, a, k, 0.0, 0.45))[-1] for _ in range(cfg["tables"])]
    pop_edge = float(th.population_right_edge)
    pop_seen = bool(min(pop_top) > pop_edge + 0.5 * (float(th.population.eigenvalue) - pop_edge))
    evidence = {"grid_points_successive": f"{successive}/{len(grid) ** 2}",
                "between_thresholds": {"mu2": 0.45, "population_outlier_predicted": th.population.outlier,
                                       "population_eigenvalue_predicted": fmt(th.population.eigenvalue, 10),
                                       "population_top_mc": [fmt(x) for x in pop_top],
                                       "population_edge": fmt(pop_edge, 10),
                                       "sample_outlier_predicted": th.sample.outlier},
                "runs": runs}
    derived = ("population threshold alpha*(mu2+delta) > kappa*(delta+sqrt(delta)); sample threshold the positive "
               "root of the cubic in claim C4's record; the sample threshold is strictly larger for every "
               "delta, gamma > 0, so the transitions are successive")
    ok = successive == len(grid) ** 2 and pop_seen and all(r["agree"] for r in runs)
    return {"verdict": "confirmed" if ok else "inconclusive", "derived": derived, "evidence": evidence}
