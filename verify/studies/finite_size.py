r"""Finite-size study: the signal outlier of Monte Carlo against the derived limit over a ladder of ``d``.

At fixed :math:`\delta = d/V`, :math:`\gamma = d/N`, weights and :math:`\mu_2`, each rung ``d`` of a
(typically geometric) ladder runs ``seeds`` trials of the model and compares the top eigenvalue
and its overlap with :func:`derive.gaussian.outliers.outliers_at` (centered or raw). Two errors are reported per
rung, each with its Student-t 95% interval (:func:`verify.stats.mean_ci`): the **bias** (mean of
Monte Carlo minus theory, expected :math:`O(1/d)`) and the **RMS error** of a single trial
(expected :math:`O(d^{-1/2})`, the outlier's Gaussian fluctuation). Their rates are fitted by
least squares in log-log (:func:`verify.stats.finite_size_fit`); the bias gets a rate only when
its interval excludes zero at every rung, since the logarithm of a noise-level mean says nothing.
"""
from __future__ import annotations

import mpmath
import numpy as np

from derive.errors import ParameterError
from derive.numbers import check_count, parse_rational
from derive.report.documents import outliers_document
from derive.model.families import as_family
from derive import Model, spike, weights
from derive.model.schemes import OPTIONS
from verify.montecarlo.draw import draw, ratios, rung
from verify.montecarlo.memory import check_trials
from verify.montecarlo.trials import choose_path, solve
from verify.stats import finite_size_fit, mean_ci

__all__ = ["MAX_LADDER_D", "summary", "ladder", "rung_seeds", "rungs", "scheme_prediction", "fit", "outlier_ladder"]


MAX_LADDER_D = 10**7
"""Largest rung (before ``rung`` turns ``d`` into ``V, N`` and the memory check sees them)."""


def summary(values) -> dict:
    """Mean and Student-t 95% interval of ``values``, as a JSON-ready dict."""
    mean, lo, hi = mean_ci(values)
    return {"mean": mean, "ci95": [lo, hi]}


def ladder(ds, delta=None, gamma=None, T: int = 1, seeds: int = 1, signs=None, extra_per_d: int = 0) -> list[int]:
    """The validated sizes of a ladder: integers >= 2, at least two distinct; with ``delta`` and
    ``gamma``, every rung's trials are checked against the resource limits (:mod:`verify.montecarlo.memory`)
    before the first one runs (``signs``: the family, or its spec; ``extra_per_d``: bytes a study holds per unit of
    ``d`` beside a trial)."""
    out = [check_count(d, "d", low=2) for d in ds]
    if len(set(out)) < 2:
        raise ParameterError("d", "a ladder needs at least two distinct sizes")
    if delta is not None:
        family = as_family(signs)
        for d in out:
            check_count(d, "d", high=MAX_LADDER_D)
            V, N = rung(d, delta, gamma)
            try:
                check_trials(d, V, N, T, seeds, family, extra_per_d * d)
            except ParameterError as exc:
                # V and N follow from d: the user's parameter is d (or seeds)
                raise ParameterError(exc.parameter if exc.parameter == "seeds" else "d", exc.reason) from None
    return out


def rung_seeds(seed0: int, d: int, seeds: int) -> list:
    """Trial seeds of rung ``d``: ``SeedSequence(seed0, spawn_key=(d,)).spawn(seeds)``, so a rung's
    trials do not depend on the other rungs."""
    return np.random.SeedSequence(int(seed0), spawn_key=(int(d),)).spawn(int(seeds))


def rungs(ds, model: Model, seeds: int, seed0: int, path: str, trial, report=None):
    """The trials of each rung of the ladder ``ds`` of ``model`` (its ``delta, gamma``, ``T``, signs and ``mu2``):
    ``(d, V, N, path, [trial(model at d, seed, path), ...])`` a rung, with ``V, N`` from
    :func:`verify.montecarlo.draw.rung`, the solver ``path`` chosen for its sizes, and trial ``j`` seeded
    by ``rung_seeds(seed0, d, seeds)[j]``. ``report(done, total)``, if given, hears of each trial in units of ``d^2``,
    the cost of a trial, so that a progress bar's estimate of the time left holds across rungs."""
    total, done = sum(d * d for d in ds) * seeds, 0
    for d in ds:
        V, N = rung(d, model.delta, model.gamma)
        # the family and the scheme pass as they are: a file is not read again at each rung
        sized = model.replace(d=d, V=V, N=N)
        chosen = choose_path(path, False, d, V, N)
        results = []
        for child in rung_seeds(seed0, d, seeds):
            results.append(trial(sized, child, chosen))
            done += d * d
            if report is not None:
                report(done, total)
        yield d, V, N, chosen, results


def scheme_prediction(m: Model):
    """The weights of the model's scheme (floats) and the Gaussian-equivalent spike prediction ``(eigenvalue,
    overlap)`` they give (:func:`derive.spike`); ``ParameterError`` on ``mu2`` if the prediction has no signal
    outlier."""
    with mpmath.workdps(30):
        o = spike(m, law="gaussian-equivalent")
    if not o.sample.outlier:
        raise ParameterError("mu2", "the prediction has no signal outlier here: nothing to compare")
    return weights(m).floats(), (float(o.sample.eigenvalue), float(o.sample.overlap)), outliers_document(o, 15)


def fit(rows: list[dict], get) -> dict:
    """:func:`verify.stats.finite_size_fit` of ``get(row)`` over the rows, as a JSON-ready dict."""
    try:
        f = finite_size_fit([r["d"] for r in rows], [get(r) for r in rows])
    except ParameterError as exc:
        # an error of exactly zero (or not finite) has no rate: reported, not a refusal of the user's input
        # (which named the fit's internal argument, "errors")
        return {"rate": None, "rate_ci95": [None, None], "prefactor": None, "no_fit": exc.reason}
    return {"rate": f.rate, "rate_ci95": list(f.rate_ci95), "prefactor": f.prefactor}


def outlier_ladder(ds, delta, gamma, T: int, signs: str, scheme: str, mu2, *, centered: bool = True, seeds: int = 8,
                   seed0: int = 0, path: str = "auto", report=None, **options) -> dict:
    """The finite-size study of the module docstring; trial ``j`` of rung ``d`` uses
    ``rung_seeds(seed0, d, seeds)[j]``. ``report(done, total)``, if given, hears of each trial (:func:`rungs`)."""
    ds = ladder(ds)
    delta, gamma = ratios(delta, gamma)
    # the family read once (a file: opened once), then handed down
    family = as_family(signs)
    ds = ladder(ds, delta, gamma, T, seeds, family)
    model = Model(delta=delta, gamma=gamma, T=T, signs=family, weights=scheme, mu2=mu2, centered=centered, **options)
    w, predicted, theory = scheme_prediction(model)

    def trial(model, seed, chosen):
        return solve(draw(model, seed, weights=w), 1, centered, chosen)

    rows = []
    for d, V, N, chosen, results in rungs(ds, model, seeds, seed0, path, trial, report):
        row = {"d": d, "V": V, "N": N, "path": chosen}
        for i, name in enumerate(("eigenvalue", "overlap")):
            err = np.array([(r.top_eigenvalues[0], r.overlaps[0])[i] for r in results]) - predicted[i]
            bias = summary(err)
            row[name] = {"bias": bias, "bias_resolved": bool(bias["ci95"][0] > 0 or bias["ci95"][1] < 0),
                         "rms": float(np.sqrt(np.mean(err ** 2)))}
        rows.append(row)
    fits = {}
    for name in ("eigenvalue", "overlap"):
        fits[f"{name}_rms"] = fit(rows, lambda r: r[name]["rms"])
        if all(r[name]["bias_resolved"] for r in rows):
            fits[f"{name}_bias"] = fit(rows, lambda r: r[name]["bias"]["mean"])
    values = model.weights.values
    return {"parameters": {"delta": str(delta), "gamma": str(gamma), "T": T, "signs": signs, "scheme": scheme,
                           "mu2": str(mu2), "centered": centered, "seeds": int(seeds), "seed0": int(seed0),
                           **{o.name: None if o.name not in values else str(values[o.name])
                              for o in sorted(OPTIONS, key=lambda o: o.name)}},
            "weights": w, "predicted": {"eigenvalue": predicted[0], "overlap": predicted[1]},
            "theory": theory, "rows": rows, "fits": fits}
