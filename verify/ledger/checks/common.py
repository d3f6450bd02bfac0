"""What the checks of the ledger share: the run's sizes, the reference configuration, the pooling and
theory of its schemes, dense Monte Carlo trials, the Kolmogorov distance to a bulk law, and the
comparison of one Monte Carlo configuration with the derived outlier."""
from __future__ import annotations

from functools import lru_cache

import mpmath
import numpy as np
import sympy as sp

from derive import bulk
from derive.attention import pooling
from derive.numbers import format_real
from derive.outliers import outliers_at
from verify.montecarlo.draw import rung
from verify.montecarlo.trials import run_trials
from verify.stats import mean_ci

__all__ = ["QUICK", "FULL", "AGREEMENT_LEVEL", "DELTA", "GAMMA", "T", "SIGNS", "fmt", "pool", "scheme_floats", "theory",
           "trials", "ks_distance", "compare"]

QUICK = {"d": 600, "seeds": 6, "tables": 3}
FULL = {"d": 2000, "seeds": 12, "tables": 6}

# Every agreement test of the ledger (14 Monte Carlo runs, an eigenvalue and an overlap each) is made
# at the Bonferroni level 1 - 0.05/28, so the ledger as a whole has a false-alarm rate of at most 5%.
AGREEMENT_LEVEL = 1 - 0.05 / 28

# The configuration of issue 3: delta = 1/2, gamma = 1/4, T = 8, signal on prefix:3.
DELTA, GAMMA, T, SIGNS = sp.Rational(1, 2), sp.Rational(1, 4), 8, "prefix:3"


def fmt(x, digits: int = 8) -> str:
    return format_real(x, digits)


@lru_cache(maxsize=None)
def pool(scheme: str):
    """The pooling of a scheme on the ledger's configuration (causal: strict mask, tau = 0)."""
    return pooling(scheme, T, SIGNS, mask="strict" if scheme == "causal" else None)


def scheme_floats(scheme: str):
    """Weights of a scheme (sum 1) and their ``alpha``, ``kappa``, as floats (for the Monte Carlo)."""
    p = pool(scheme)
    return np.array(p.floats()), float(p.alpha), float(p.kappa)


def theory(delta, gamma, scheme: str, mu2, centered: bool = True):
    """The derived :class:`derive.outliers.Outliers` of a scheme at exact ``delta, gamma`` and ``mu2``."""
    p = pool(scheme)
    with mpmath.workdps(30):
        return outliers_at(sp.Rational(delta), sp.Rational(gamma), p.alpha, p.kappa, sp.Rational(str(mu2)),
                        sum_w=p.W, centered=centered)


def trials(K: int, seed0: int, d, V, N, T_, signs, weights, mu2, centered=False, k=4, spectrum=True):
    """``K`` dense trials: top-``k`` eigenvalues (K x k), squared overlaps with ``u`` (K x k), spectra (K x d;
    ``None`` unless ``spectrum``: LAPACK then computes the top ``k`` only)."""
    r = run_trials(d, V, N, T_, signs, weights, mu2, centered=centered, k=k, seeds=K, seed0=seed0,
                   spectrum=spectrum, path="dense", progress=False)
    return r.top_eigenvalues, r.overlaps, r.spectra


def ks_distance(eigenvalues, delta, gamma, kappa, n_outliers: int) -> float:
    """Kolmogorov distance between the ESD (outliers removed) and the derived bulk law's CDF."""
    law = bulk.law(delta, gamma, kappa)
    with mpmath.workdps(15):
        edges = law.edges()
    lo, hi = float(edges[0][0]), float(edges[-1][1])
    atom = float(law.atom_at_zero)
    x = np.linspace(lo, hi, 40001)
    f = law.density_float(x)
    F = np.concatenate([[0.0], np.cumsum((f[1:] + f[:-1]) / 2 * np.diff(x))])
    F = atom + (1 - atom) * F / F[-1]
    e = np.sort(np.asarray(eigenvalues)[n_outliers:])
    n = len(eigenvalues)
    emp_hi = np.arange(1, len(e) + 1) / n
    model = np.interp(e, x, F, left=0.0, right=1.0)
    return float(max(np.max(np.abs(model - emp_hi)), np.max(np.abs(model - (emp_hi - 1 / n)))))


def compare(cfg, delta, gamma, scheme, mu2, centered=True, seed0=0):
    """Monte Carlo of one configuration against ``derive spike``: eigenvalue and overlap of the signal outlier.

    Tolerance: the Student-t half-width over seeds at :data:`AGREEMENT_LEVEL` plus the finite-size bias, which is O(1/d)
    for outlier locations and overlaps; its constant was measured on the ladder d = 500, 1000, 2000
    (notes/spikes.md: about 6/d for the eigenvalue, 20/d for the overlap), allowed here as 8/d and 25/d.
    """
    d = cfg["d"]
    V, N = rung(d, delta, gamma)
    w, a, k = scheme_floats(scheme)
    th = theory(delta, gamma, scheme, mu2, centered)
    tops, overlaps, _ = trials(cfg["seeds"], seed0, d, V, N, T, SIGNS, w, mu2, centered=centered, spectrum=False)
    out = {"scheme": scheme, "delta": str(delta), "gamma": str(gamma), "mu2": str(mu2), "centered": centered,
           "alpha_over_kappa": fmt(a / k, 6), "d": d, "seeds": cfg["seeds"],
           "predicted_outlier": th.sample.outlier, "sample_right_edge": fmt(th.right_edge, 10)}
    ev, ov = mean_ci(tops[:, 0]), mean_ci(overlaps[:, 0])
    out["mc_top_eigenvalue"] = {"mean": fmt(ev[0]), "ci95": [fmt(ev[1]), fmt(ev[2])]}
    out["mc_top_overlap"] = {"mean": fmt(ov[0]), "ci95": [fmt(ov[1]), fmt(ov[2])]}
    ev, ov = mean_ci(tops[:, 0], AGREEMENT_LEVEL), mean_ci(overlaps[:, 0], AGREEMENT_LEVEL)
    if th.sample.outlier:
        pe, po = float(th.sample.eigenvalue), float(th.sample.overlap)
        out["predicted_eigenvalue"], out["predicted_overlap"] = fmt(pe), fmt(po)
        out["agree"] = bool(abs(ev[0] - pe) <= (ev[2] - ev[0]) + 8 / d and abs(ov[0] - po) <= (ov[2] - ov[0]) + 25 / d)
    else:
        # No outlier: the top eigenvalue sticks to the edge within Tracy-Widom fluctuations, O(d^{-2/3}).
        edge = float(th.right_edge)
        out["agree"] = bool(abs(ev[0] - edge) <= (ev[2] - ev[0]) + 4 * edge * d ** (-2 / 3))
    return out
