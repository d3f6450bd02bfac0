"""What the checks of the ledger share: the run's sizes, the reference configuration, the pooling and
theory of its schemes, dense Monte Carlo trials, the Kolmogorov distance to a bulk law, and the
comparison of one Monte Carlo configuration with the derived outliers, with its power.

Evidence holds numbers as Python numbers (the rules read them); ``verify claims`` formats them.
"""
from __future__ import annotations

from functools import lru_cache

import mpmath
import numpy as np
import sympy as sp

from derive import Model, spike as derive_spike, weights as derive_weights
from derive.gaussian import bulk
from derive.numbers import format_real
from verify.comparison import compare_population, compare_sample
from verify.montecarlo.draw import rung
from verify.montecarlo.trials import run_trials

__all__ = ["unbounded_support_note", "QUICK", "FULL", "COMPARISONS", "AGREEMENT_LEVEL", "TARGET", "POINT_TARGET", "THRESHOLD_TARGET", "DELTA", "GAMMA", "T", "SIGNS", "fmt", "bulk_cdf",
           "pool", "scheme_floats", "theory", "model_limit", "trials", "outlier_comparison", "population_comparison",
           "resolves", "resolution_to_full", "margin", "outcome", "OUTCOMES", "rung"]

QUICK = {"d": 600, "seeds": 6, "compare_d": 400, "coarse": 4, "trials": 80, "population_tables": 60, "hist_seeds": 48,
         "classify_d": 200, "classify_seeds": 12, "T_max": 32}
FULL = {"d": 1000, "seeds": 12, "compare_d": 400, "coarse": 4, "trials": 160, "population_tables": 120,
        "hist_seeds": 96, "classify_d": 400, "classify_seeds": 24, "T_max": 64}
"""The two modes. ``d`` and ``seeds``: the size and seeds of C1 and of the figures. ``compare_d``: the fine rung of
every Monte Carlo comparison, ``coarse`` the ratio to its coarse rung; ``trials`` per comparison at the fine rung
(twice as many at the coarse one, where a trial costs about 1/16 and the extrapolation weighs it 1/16 as much; each
comparison of C2 and C4 takes a multiple of it, sized to its target); ``population_tables`` per population-level
comparison; ``hist_seeds`` per spectrum of the histogram ladder (C9); size and seeds of the classification (C8); the
largest ``T`` of the exact comparison of C7. The full run draws twice the quick run's trials and tables at the same
sizes: it resolves every comparison ``sqrt 2`` times as finely (:func:`resolution_to_full`), and the quick run keeps
the margin that makes its decided outcomes the full run's (:func:`margin`; notes/power.md, section 9)."""

COMPARISONS = 72
"""An upper bound on the number of intervals the ledger's decisions read at :data:`AGREEMENT_LEVEL`: Monte Carlo
quantities compared with a prediction (57: C2 24, C3 8, C4 24, C5 1), C2's two fitted thresholds and two thresholds
at dimension d, C9's four histogram rates and C10's six (``tests/test_ledger.py`` counts them)."""

AGREEMENT_LEVEL = 1 - 0.05 / COMPARISONS
"""The level of every comparison: Bonferroni over :data:`COMPARISONS`, so that the ledger as a whole wrongly
rejects a true formula with probability at most 5%."""

TARGET = {"eigenvalue": 0.01, "overlap": 0.03, "absent_overlap": 0.02}
"""The errors the C4 comparisons must be able to detect (with probability :data:`verify.comparison.POWER`) for a
verdict other than inconclusive: relative errors of an outlier's eigenvalue and of its overlap, and (where no
outlier is predicted) an overlap of the top eigenvector that would betray one."""

POINT_TARGET = {"eigenvalue": 0.05, "overlap": 0.15, "absent_overlap": 0.05}
"""The same for the points of C2 and C3 on both sides of a threshold, and for C4's point between the thresholds:
they place an outlier (or its absence) rather than measure it."""

THRESHOLD_TARGET = 0.1
"""The relative error of a threshold that a fitted threshold (C2) must be able to detect."""

# The configuration of issue 3: delta = 1/2, gamma = 1/4, T = 8, signal on prefix:3.
DELTA, GAMMA, T, SIGNS = sp.Rational(1, 2), sp.Rational(1, 4), 8, "prefix:3"


def fmt(x, digits: int = 8) -> str:
    return format_real(x, digits)


@lru_cache(maxsize=None)
def pool(scheme: str, signs: str = SIGNS, T_: int = T):
    """The pooling of a scheme on the ledger's configuration (causal: strict mask, tau = 0), or on ``signs`` at
    ``T_``."""
    return derive_weights(Model(T=T_, weights=scheme, signs=signs, mask="strict" if scheme == "causal" else None))


def scheme_floats(scheme: str, signs: str = SIGNS):
    """Weights of a scheme (sum 1) and their ``alpha``, ``kappa``, as floats (for the Monte Carlo)."""
    p = pool(scheme, signs)
    return np.array(p.floats()), float(p.alpha), float(p.kappa)


def theory(delta, gamma, scheme: str, mu2, centered: bool = True):
    """The derived Gaussian-equivalent :class:`derive.gaussian.outliers.Outliers` of a scheme on the ledger's
    configuration (:func:`pool`) at exact ``delta, gamma`` and ``mu2`` (:func:`derive.spike`, to 30 digits)."""
    m = Model(delta=str(delta), gamma=str(gamma), T=T, weights=scheme, signs=SIGNS, mu2=str(mu2), centered=centered,
              mask="strict" if scheme == "causal" else None)
    with mpmath.workdps(30):
        return derive_spike(m, law="gaussian-equivalent")


def model_limit(delta, gamma, scheme: str, mu2, *, centered: bool, T_: int = T, signs: str = SIGNS, scale=1) -> dict:
    """The model's own signal outlier in the limit (:func:`derive.spike` with ``law=None`` on a :class:`derive.Model`
    with weights: the finite-vocabulary law, with its ``errors``) for a scheme of the ledger's configuration (or of
    ``signs`` at ``T_``), weights times ``scale`` (eigenvalues times its square): the numbers a corrected statement
    quotes beside the Gaussian-equivalent formula's. Seconds from the derivation cache; a minute or so of quenched
    cavity populations where it holds no entry for the point (more than one nonzero weight)."""
    m = Model(delta=str(delta), gamma=str(gamma), T=T_, weights=scheme, signs=signs, mu2=str(mu2), centered=centered,
              mask="strict" if scheme == "causal" else None)
    with mpmath.workdps(15):
        o = derive_spike(m)
    level, c2 = o.sample, float(scale) ** 2
    errors = dict(level.errors or ())

    def real(x, times=1.0):
        return None if x is None else times * float(x)
    return {"law": o.law, "outlier": bool(level.outlier), "eigenvalue": real(level.eigenvalue, c2),
            "eigenvalue_error": real(errors.get("eigenvalue"), c2), "overlap": real(level.overlap),
            "overlap_error": real(errors.get("overlap"))}


def trials(K: int, seed0: int, d, V, N, T_, signs, weights, mu2, centered=False, k=4, spectrum=True):
    """``K`` dense trials: top-``k`` eigenvalues (K x k), squared overlaps with ``u`` (K x k), spectra (K x d;
    ``None`` unless ``spectrum``: LAPACK then computes the top ``k`` only)."""
    model = Model(d=d, V=V, N=N, T=T_, signs=signs, mu2=mu2, centered=centered)
    r = run_trials(model, weights=weights, k=k, seeds=K, seed0=seed0, spectrum=spectrum, path="dense", progress=False)
    return r.top_eigenvalues, r.overlaps, r.spectra


@lru_cache(maxsize=None)
def bulk_cdf(delta, gamma, kappa) -> tuple[np.ndarray, np.ndarray]:
    """The derived bulk law's CDF on 40001 points of its support (trapezoid rule on the float64 density): ``(x, F)``,
    computed once per law (a ladder compares every seed's spectrum with the same one)."""
    law = bulk.law(delta, gamma, kappa)
    with mpmath.workdps(15):
        edges = law.edges()
    lo, hi = float(edges[0][0]), float(edges[-1][1])
    atom = float(law.atom_at_zero)
    x = np.linspace(lo, hi, 40001)
    f = law.density_float(x)
    F = np.concatenate([[0.0], np.cumsum((f[1:] + f[:-1]) / 2 * np.diff(x))])
    F = atom + (1 - atom) * F / F[-1]
    x.flags.writeable = F.flags.writeable = False
    return x, F


def outlier_comparison(cfg: dict, delta, gamma, scheme: str, mu2, *, centered: bool, seed0: int, more: float = 1,
                       scale=1, T_: int = T, signs: str = SIGNS, coarse_trials: int = 2) -> dict:
    """:func:`verify.comparison.compare_sample` for a scheme of the ledger's configuration (or of ``signs`` at
    ``T_``): the fine rung ``cfg["compare_d"]`` with ``more * cfg["trials"]`` trials, the coarse one
    ``d/cfg["coarse"]``, weights times ``scale``, at the ledger's level; against the derived formula (the limit,
    extrapolated from the two rungs) and, under ``"conditional"``, against each draw's conditional prediction (the
    model's own outlier given its tokens); ``coarse_trials``: the coarse rung's trials as a multiple of the fine
    one's."""
    out = compare_sample(cfg["compare_d"], delta, gamma, T_, signs, pool(scheme, signs, T_), mu2, centered=centered,
                         trials=round(more * cfg["trials"]), seed0=seed0, level=AGREEMENT_LEVEL, coarse=cfg["coarse"],
                         scale=scale, conditional=True, coarse_trials=coarse_trials)
    return {"scheme": scheme, "T": T_, "signs": signs, **out}


def population_comparison(cfg: dict, delta, pooling, mu2, *, seed0: int, alternatives=None, more: float = 1) -> dict:
    """:func:`verify.comparison.compare_population` (centered) with the ledger's sizes and level, ``more`` times
    ``cfg["population_tables"]`` tables."""
    return compare_population(cfg["compare_d"], delta, pooling, mu2, tables=round(more * cfg["population_tables"]),
                              seed0=seed0, level=AGREEMENT_LEVEL, coarse=cfg["coarse"], alternatives=alternatives)


def resolves(comparison: dict, target: dict = TARGET) -> bool:
    """Whether every error a comparison can detect is within ``target``: relative errors by the kind of quantity
    (``eigenvalue`` or ``overlap``, read off its name), absolute ones (where 0 is predicted) against
    ``absent_overlap``."""
    rel, absolute = comparison.get("min_detectable_rel_error", {}), comparison.get("min_detectable_abs_error", {})
    return bool(rel or absolute) and all(
        v <= target["overlap" if name.endswith("overlap") else "eigenvalue"] for name, v in rel.items()) and all(
        v <= target["absent_overlap"] for v in absolute.values())


OUTCOMES = ("within", "beyond", "unresolved")
"""What a comparison says of a derived value against a tolerance: the error is within it, beyond it, or the interval
straddles it."""


def resolution_to_full(cfg: dict) -> float:
    r"""How finely a run's comparisons resolve against the full run's: their standard errors scale as
    :math:`(dK)^{-1/2}` (notes/power.md), so the full run's are this fraction of the run's own (1 for the full
    run itself)."""
    return min(1.0, ((cfg["compare_d"] * cfg["trials"]) / (FULL["compare_d"] * FULL["trials"])) ** 0.5)


def margin(half: float, resolution: float) -> float:
    r"""The margin a run coarser than the full one keeps from a tolerance: twice the full run's half-width,
    ``2 * resolution * half``; none for the full run. If both intervals hold the truth, a coarse run's interval inside
    :math:`\pm(\tau - m)` puts the full run's inside :math:`\pm\tau`, and one outside :math:`\pm(\tau + m)` puts the
    full run's outside :math:`\pm\tau`: a coarse run's decided outcome is the full run's."""
    return 2 * resolution * half if resolution < 1 else 0.0


def _quantity_outcome(error: float, ci: list, tolerance: float, resolution: float) -> str:
    lo, hi = ci
    m = margin((hi - lo) / 2, resolution)
    if -tolerance + m <= lo and hi <= tolerance - m:
        return "within"
    if lo > tolerance + m or hi < -tolerance - m:
        return "beyond"
    return "unresolved"


def outcome(comparison: dict, target: dict = TARGET, resolution: float = 1.0) -> str:
    """Equivalence testing of one comparison against the tolerances of ``target`` (relative to the predicted value of
    each quantity, its kind read off its name; absolute, ``absent_overlap``, where 0 is predicted): ``"within"`` if
    every quantity's interval of Monte Carlo minus prediction lies inside the tolerance less :func:`margin`,
    ``"beyond"`` if one lies outside it plus the margin, else ``"unresolved"``. Works for a comparison with the
    derived limit (:func:`verify.comparison.compare`) and with the conditional predictions
    (:func:`verify.comparison.compare_conditional`, quantities without a prediction left out).

    >>> c = {"quantities": {"signal_overlap": {"predicted": 0.5, "extrapolated": 0.51, "ci": [0.506, 0.514]}}}
    >>> outcome(c), outcome(c, resolution=0.5), outcome(c, {"overlap": 0.004, "eigenvalue": 0.01})
    ('within', 'unresolved', 'beyond')
    """
    found = []
    for name, q in comparison.get("quantities", {}).items():
        if "mc_minus_conditional" in q:
            # draws mostly without the outlier: the prediction is its absence
            p = q["conditional"] if q.get("outlier_fraction", 1.0) >= 0.5 else 0.0
            error = q["mc_minus_conditional"]
            ci = q["ci"]
        elif "predicted" in q:
            p, error = q["predicted"], q["extrapolated"] - q["predicted"]
            ci = [q["ci"][0] - q["predicted"], q["ci"][1] - q["predicted"]]
        else:
            continue
        kind = "overlap" if name.endswith("overlap") else "eigenvalue"
        tolerance = target[kind] * abs(p) if p else target["absent_overlap"]
        found.append(_quantity_outcome(error, ci, tolerance, resolution))
    if not found:
        return "unresolved"
    return "beyond" if "beyond" in found else "unresolved" if "unresolved" in found else "within"


@lru_cache(maxsize=None)
def unbounded_support_note() -> str:
    """The qualification of the outlier claims by the model's own bulk at fixed ``T`` (finite vocabulary): its support
    is unbounded, so the signal's outlier stops being the top eigenvalue as ``d`` grows. The numbers are those of the
    exact ``T = 1`` law (:mod:`derive.vocabulary.limit.topbulk`) at the issue's case ``delta = 1/4, gamma = 1, mu2 = 3``."""
    import sympy as sp

    from derive.vocabulary.limit.law import vocabulary_law
    from derive.vocabulary.limit.signal import signal_outlier
    from derive.vocabulary.limit.topbulk import signal_on_top_probability

    law = vocabulary_law("1/4", "1", [sp.Integer(1)]).diagonal()
    with mpmath.workdps(20):
        ell = signal_outlier(law, 3).eigenvalue
        on_top = {d: mpmath.nstr(signal_on_top_probability(law, ell, d), 2) for d in (2000, 10**5, 10**6)}
    return ("At fixed T the model's own bulk (finite vocabulary) has unbounded support: a token seen k times puts an "
            "eigenvalue near gamma k + 1, and the largest count grows like log d / log log d, so the signal's outlier "
            "is the top eigenvalue only with a probability that tends to 0 (exact at T = 1, derive.vocabulary.limit.topbulk: at delta "
            f"= 1/4, gamma = 1, mu2 = 3 the outlier at {mpmath.nstr(ell, 5)} is on top with probability "
            + ", ".join(f"{p} at d = {d}" for d, p in on_top.items())
            + "); u is then recovered by the eigenvector of the eigenvalue nearest the derived location, not by the "
            "top one")
