r"""Summaries and figures of a sweep, made from its results file alone (and the derivations).

The header holds the sweep's parameters, so the theory of every grid point is recomputed here at the realized
``d/V`` and ``d/N``, never read from the Monte Carlo, under two laws, each named in the summary
(:data:`LAWS`):

* ``gaussian-equivalent``: :func:`derive.spike` with ``law="gaussian-equivalent"`` (the paper's law: pooled vectors
  replaced by Gaussian ones with their covariance), exact to the digits shown;
* ``finite-vocabulary``: :func:`derive.spike` of the grid point's :class:`derive.Model`
  (:func:`verify.sweeps.spec.point_model`), the model's own limit (a finite vocabulary, tokens reused a Poisson number
  of times) with its stated errors. At more than one nonzero weight it comes from quenched cavity populations and
  costs seconds to a minute a point, kept between runs in the derivation cache: it is computed at the grid's points
  only (never on a fine curve), once per distinct model, the models of one law (alike but for ``mu2``) in a row in
  one process, which solves what they share once, in ``workers`` processes; ``model_limit=False`` skips it, and the
  summary says so.

Per grid point: the mean and Student-t 95% interval over seeds (:func:`verify.stats.mean_ci`), kept within the range
of the quantity (an overlap's within ``[0, 1]``), of the top eigenvalue, the overlap (the largest of the ``k``
squared overlaps :math:`|\hat u_i^T u|^2`, so that a raw ``S`` whose top outlier is the vocabulary-mean one is read at
its signal eigenvector), the bulk-edge estimate and the classification accuracy; beside them each law's value, its
error, and whether the interval (widened by that error) holds it.

Figures: the overlap and the top eigenvalue against ``mu2`` (the Gaussian equivalent as a curve, the model's limit
at the grid's points with its error bars, the Monte Carlo means with their intervals), when ``mu2`` is an axis; a
phase diagram (mean overlap over ``gamma x mu2``, with the population and sample thresholds
:math:`\mu_2^{crit}(\gamma)` of the Gaussian equivalent) for each value of the other axes, when ``mu2`` and ``gamma``
are axes; and, when ``d`` is an axis, the finite-size error :math:`|\mathrm{mean} - \mathrm{theory}|` against ``d``
under each law, with the rate fitted by :func:`verify.stats.finite_size_fit`.
"""
from __future__ import annotations

import copy
import math
import time
from collections import defaultdict

import numpy as np
import sympy as sp

from derive.errors import ParameterError
from derive.files import check_output_folder
from derive.numbers import format_real, json_reals
from verify.stats import finite_size_fit, mean_ci
from verify.sweeps.spec import Sweep, dimensions, point_model, predicted_outliers, theory
from verify.sweeps.results import check_records, header_sweep, read_results

__all__ = ["MC_DIGITS", "LAWS", "QUANTITIES", "LIMIT_DIGITS", "LIMIT_ERRORS", "error_sought", "halfwidths", "interval",
           "gaussian_theory", "model_limit", "model_limits", "point_summaries", "CURVE_NODES", "curve_figures",
           "phase_figures", "finite_size",
           "finite_size_figure", "summarize"]

MC_DIGITS = 10
"""Significant digits of the summaries' Monte Carlo reals (their own error is far larger)."""

LAWS = {
    "gaussian_equivalent": "derive.spike(model, law='gaussian-equivalent'): the pooled vectors replaced by Gaussian "
                           "ones with their covariance (the paper's law); exact to the digits shown",
    "finite_vocabulary": "derive.spike(model): the model's own limit d, V, N -> oo at the point's d/V, d/N (a finite "
                         "vocabulary, tokens reused a Poisson number of times); exact at one nonzero weight, else from "
                         "quenched cavity populations with the errors stated; computed at the grid's points only, "
                         "once per distinct model, and kept in the derivation cache",
}
"""The laws a summary compares Monte Carlo with, by the key of their entries (each entry also names its ``law``)."""

QUANTITIES = {
    # name: (output it needs, its value in one record's result, the range its values lie in)
    "top_eigenvalue": ("top_eigenvalues", lambda r: r["top_eigenvalues"][0], (0.0, math.inf)),
    "overlap": ("overlaps", lambda r: max(r["overlaps"]), (0.0, 1.0)),
    "bulk_edge": ("bulk_edge", lambda r: r["bulk_edge"], (0.0, math.inf)),
    "accuracy": ("accuracy", lambda r: r["accuracy"], (0.0, 1.0)),
}
"""The quantities a summary reports. Eigenvalues of ``S`` (a sum of squares) are at least 0; overlaps and
accuracies lie in ``[0, 1]``."""

THEORY_QUANTITIES = ("top_eigenvalue", "overlap", "bulk_edge")
"""The quantities the laws give a value for (the accuracy is not derived)."""

LIMIT_DIGITS = 15
"""Working precision of the model's limit (its estimates carry errors far above ``1e-15``)."""

LIMIT_ERRORS = (1e-3, 1e-2)
"""The range of the error the model's limit is sought to in a summary (:func:`error_sought`)."""


def error_sought(widths) -> float:
    r"""The error the model's limit is sought to for a law's points, from the half-widths of their Monte Carlo 95%
    intervals (of the quantities the laws give; ``inf`` for one seed): a tenth of their median, within
    :data:`LIMIT_ERRORS`. Widened by a tenth of its width, a typical interval holds the limit wherever it held it to
    within that, and a figure's error bars stay below its markers. The median, not the narrowest: with a few seeds an
    interval's width is itself a noisy estimate (with two, a pair of close values gives a narrow one by chance), while
    a law's points (its ``mu2`` axis) share their noise's scale. The finer end is the limit's default precision
    (:data:`derive.vocabulary.limit.outlier.ERROR`), the coarser a hundredth of an overlap, at which a law of
    ``examples/sweeps/demo_phase.toml`` takes a seventh of the default's time (``notes/benchmarks.md``).

    >>> error_sought([0.08, 0.3, math.inf]), error_sought([0.02]), error_sought([1e-3, 1e-3, 0.5])
    (0.01, 0.002, 0.001)
    """
    low, high = LIMIT_ERRORS
    middle = float(np.median(widths)) if len(widths) else math.inf
    return float(min(high, max(low, 0.1 * middle)))


def interval(values, low: float = -math.inf, high: float = math.inf) -> dict:
    """The mean of ``values`` (one per seed) and its Student-t 95% interval (:func:`verify.stats.mean_ci`), kept
    within ``[low, high]``, the range every value lies in: the mean lies there too, so the part of the interval
    outside it holds no possible mean, and the coverage is unchanged. One seed: ``(-inf, inf)``, no interval.

    >>> interval([0.9, 1.0, 1.0], 0, 1)["ci95"][1], interval([0.2], 0, 1)["ci95"]
    (1.0, [-inf, inf])
    """
    mean, lo, hi = mean_ci(values, support=(low, high))
    return {"mean": mean, "ci95": [lo, hi]}


def _critical(x, error=None):
    """A threshold ``mu2_critical`` as text: 15 digits, or the digits its error leaves."""
    from derive.report.documents import estimate

    return None if x is None else estimate(x, error, 15)


def _entry(o) -> dict:
    """The values a law gives for the quantities of :data:`THEORY_QUANTITIES` (floats, ``None`` where it says
    nothing) with their ``errors`` (``None``: exact to the digits shown), from the
    :class:`derive.gaussian.outliers.Outliers` ``o`` of :func:`derive.spike`.

    The top eigenvalue is the signal outlier where it is the only predicted one (else ``None``: the top eigenvalue
    may be another outlier's); the bulk edge is the law's right edge, ``None`` where the support is unbounded (the
    model's own law)."""
    import mpmath

    errors = dict(o.sample.errors or ())
    err = lambda name: None if errors.get(name) is None else float(errors[name])  # noqa: E731
    single = predicted_outliers(o) == 1 and o.sample.outlier
    return {
        "law": o.law,
        "top_eigenvalue": float(o.sample.eigenvalue) if single else None,
        "overlap": float(o.sample.overlap),
        "bulk_edge": float(o.right_edge) if mpmath.isfinite(o.right_edge) else None,
        "errors": {"top_eigenvalue": err("eigenvalue") if single else None, "overlap": err("overlap"),
                   "bulk_edge": None},
        "mu2_critical": {"population": _critical(o.population.mu2_critical),
                         "sample": _critical(o.sample.mu2_critical, errors.get("mu2_critical"))},
        "outliers": predicted_outliers(o),
        "bulk_mass_above": None if o.sample.mass_above is None else float(o.sample.mass_above),
    }


def gaussian_theory(params: dict) -> dict:
    """The Gaussian-equivalent law's values at a grid point (:func:`verify.sweeps.spec.theory`)."""
    return _entry(theory(params))


def _ratio_model(params: dict):
    """A grid point's :class:`derive.Model` at its realized ratios ``d/V, d/N``, which the laws (limits
    ``d -> oo``) take: the rungs of a ladder in ``d`` at the same ratios share it."""
    dims = dimensions(params)
    return point_model(params, delta=f"{dims['d']}/{dims['V']}", gamma=f"{dims['d']}/{dims['N']}")


def model_limit(params: dict, error: float | None = None) -> tuple[dict, float]:
    """The model's own limit at a grid point, :func:`derive.spike` of its :class:`derive.Model` at the realized
    ``d/V, d/N`` to the error sought ``error`` (the limit's default where ``None``), and the seconds it took; a point
    whose limit derive cannot decide gets ``unavailable`` (the reason)."""
    import mpmath

    from derive import spike

    start = time.perf_counter()
    try:
        with mpmath.workdps(LIMIT_DIGITS):
            entry = _entry(spike(_ratio_model(params), error=error))
    except ParameterError as exc:
        entry = {"law": "finite-vocabulary", "unavailable": str(exc)}
    return entry, time.perf_counter() - start


def _law_limits(group: list, error: float | None) -> list:
    """:func:`model_limit` at each grid point of ``group`` in turn, in this process: points of one law (models alike
    but for ``mu2``), whose work that does not depend on ``mu2`` the first one does and the others reuse
    (:func:`derive.vocabulary.limit.outlier.limit_spike`)."""
    return [model_limit(p, error) for p in group]


def model_limits(sweep: Sweep, indices, workers: int = 1, report=None, halfwidths: dict | None = None,
                 error: float | None = None) -> tuple[dict, dict]:
    """``({index: entry}, statistics)``: :func:`model_limit` at the grid points ``indices``, once per distinct model
    (points that share it, as the rungs of a ladder in ``d`` at the same ratios do, share the entry), the models of
    one law (alike but for ``mu2``: one token-matrix law) in a row in one process, the laws in ``workers`` processes
    (this one for 1), with ``report(done, total)`` after each model (after each law in processes). Each law's limit
    is sought to ``error``, else to :func:`error_sought` of its points' ``halfwidths`` (``{index: [half-width, ...]}``
    of their Monte Carlo intervals; none given: the limit's default). The statistics: ``points``, ``models``,
    ``laws``, ``workers``, ``errors_sought`` (the distinct ones), ``seconds`` (wall), ``slowest_seconds`` (one model's
    longest; the first model of a law also pays for what its law's models share)."""
    params = {index: sweep.params(sweep.point(index)) for index in indices}
    models, laws, widths = {}, defaultdict(list), defaultdict(list)
    for index, p in params.items():
        model, law = _ratio_model(p), _ratio_model({**p, "mu2": None})
        widths[law] += (halfwidths or {}).get(index, [])
        if model not in models:
            models[model] = p
            laws[law].append((model, p))
    if error is not None:
        sought = dict.fromkeys(laws, error)
    else:
        sought = {law: None if halfwidths is None else error_sought(widths[law]) for law in laws}
    groups = [(group, sought[law]) for law, group in laws.items()]
    # the seconds stated are those of the progress bar: both from here (report's 0 marks the start)
    start = time.perf_counter()
    if report:
        report(0, len(models))
    results = {}
    workers = max(1, min(workers, len(groups)))
    if workers == 1:
        for model, p, e in ((*job, e) for group, e in groups for job in group):
            results[model] = model_limit(p, e)
            if report:
                report(len(results), len(models))
    else:
        from concurrent.futures import as_completed

        from verify.workers import process_pool

        with process_pool(workers) as pool:
            futures = {pool.submit(_law_limits, [p for _, p in group], e): group for group, e in groups}
            for future in as_completed(futures):
                results.update(zip((model for model, _ in futures[future]), future.result()))
                if report:
                    report(len(results), len(models))
    entries = {index: results[_ratio_model(p)][0] for index, p in params.items()}
    stats = {"computed": True, "points": len(entries), "models": len(models), "laws": len(groups), "workers": workers,
             "errors_sought": sorted({e for e in sought.values() if e is not None}),
             "seconds": time.perf_counter() - start,
             "slowest_seconds": max((s for _, s in results.values()), default=0.0)}
    return entries, stats


def _in_interval(stats: dict, value, error) -> bool | None:
    """Whether ``value`` (with its stated ``error``) lies in the Monte Carlo interval ``stats`` widened by that error;
    ``None`` without a value or an interval (one seed)."""
    lo, hi = stats["ci95"]
    if value is None or not math.isfinite(lo):
        return None
    e = error or 0.0
    return lo - e <= value <= hi + e


def _by_point(sweep: Sweep, records: dict) -> dict:
    """``{index: (results, stats)}``: each grid point's results over its seeds and the Monte Carlo ``interval`` of each
    of :data:`QUANTITIES` its sweep's outputs give."""
    by_point = defaultdict(list)
    for key, rec in records.items():
        by_point[key[:-1]].append(rec["result"])
    return {index: (results, {q: interval([value(r) for r in results], *bounds)
                              for q, (output, value, bounds) in QUANTITIES.items() if output in sweep.outputs})
            for index, results in by_point.items()}


def halfwidths(sweep: Sweep, records: dict) -> dict:
    """``{index: [half-width, ...]}``: the half-widths of each grid point's Monte Carlo 95% intervals of the
    quantities the laws give (:data:`THEORY_QUANTITIES`; ``inf`` for one seed), what :func:`error_sought` sizes the
    model's limit to."""
    return {index: [(stats[q]["ci95"][1] - stats[q]["ci95"][0]) / 2 for q in THEORY_QUANTITIES if q in stats]
            for index, (_, stats) in _by_point(sweep, records).items()}


def point_summaries(sweep: Sweep, records: dict, limits: dict | None = None) -> list[dict]:
    """One entry per grid point with at least one finished seed, in grid order (floats): the Monte Carlo ``mean`` and
    ``ci95`` of each quantity, and under ``theory`` each law's entry (``finite_vocabulary`` from ``limits``, ``None``
    where they are not given), with ``in_ci95`` per quantity."""
    by_point = _by_point(sweep, records)
    out = []
    for index, (results, stats) in sorted(by_point.items()):
        point = sweep.point(index)
        params = sweep.params(point)
        # a copy: points that share their realized model share the entry of model_limits
        laws = {"gaussian_equivalent": gaussian_theory(params),
                "finite_vocabulary": None if limits is None else copy.deepcopy(limits[index])}
        for entry in laws.values():
            if entry is not None and "unavailable" not in entry:
                entry["in_ci95"] = {q: _in_interval(stats[q], entry[q], entry["errors"][q])
                                    for q in THEORY_QUANTITIES if q in stats}
        out.append({"index": list(index), "point": point, "dims": dimensions(params), "seeds": len(results),
                    "monte_carlo": stats, "theory": laws})
    return out


def _label(names, values) -> str:
    return ", ".join(f"{n}={v}" for n, v in zip(names, values))


def _slug(names, values) -> str:
    text = "_".join(f"{n}-{v}" for n, v in zip(names, values))
    return "".join(c if c.isalnum() or c in "-_." else "_" for c in text)


CURVE_NODES = 33
"""Values at which a figure's Gaussian-equivalent curves are computed (``gamma`` for the phase diagram's thresholds,
``mu2`` for the overlap and eigenvalue curves); the figure joins them linearly (the curves are smooth between the
thresholds, which are nodes too, and each value costs a :func:`derive.spike`)."""


def _critical_curves(params: dict, gamma: list[float]):
    """``mu2_critical`` at the population and sample level as functions of ``gamma`` over the range of
    ``gamma``, at the point's realized ``delta = d/V``."""
    import mpmath

    from derive import spike

    dims = dimensions(params)
    model = point_model(params, delta=f"{dims['d']}/{dims['V']}").replace(mu2=1)
    nodes = np.linspace(min(gamma), max(gamma), CURVE_NODES)
    levels = ("population", "sample")
    values = {level: [] for level in levels}
    for g in nodes:
        with mpmath.workdps(15):
            o = spike(model.replace(gamma=repr(float(g))), law="gaussian-equivalent")
        for level in levels:
            values[level].append(float(o.level(level).mu2_critical))
    return tuple((lambda g, v=values[level]: float(np.interp(g, nodes, v))) for level in levels)


def _caption(params: dict) -> str:
    """The parameters a sweep figure shares, as :func:`derive.report.plot.model_caption` states them: the weights with
    the options they were computed with.

    >>> _caption({"delta": "1/2", "T": 8, "signs": "prefix:3", "weights": "causal", "mask": "strict", "centered": True})
    'delta=1/2, T=8, causal weights (strict mask, tau=0), prefix:3, centered S_c'
    """
    from derive.report.plot import model_caption

    return model_caption(point_model({**params, "mu2": None}, delta=params["delta"]))


def _gaussian_curves(params: dict, mu2: list[float]) -> dict:
    """The Gaussian equivalent's top eigenvalue (as :func:`_entry` reads it), overlap and right edge of the bulk at
    :data:`CURVE_NODES` values of ``mu2`` over the range of ``mu2`` and at the sample threshold, at the point's
    realized ``d/V, d/N``: ``{"mu2": [...], quantity: [...]}`` (NaN where the law gives no value)."""
    import mpmath

    from derive import spike

    model = _ratio_model({**params, "mu2": "1"})
    lo, hi = min(mu2), max(mu2)
    with mpmath.workdps(15):
        critical = spike(model, law="gaussian-equivalent").sample.mu2_critical
    nodes = set(np.linspace(lo, hi, CURVE_NODES).tolist())
    if critical is not None and lo < float(critical) < hi:
        nodes.add(float(critical))
    curves = {"mu2": sorted(nodes), "top_eigenvalue": [], "overlap": [], "bulk_edge": []}
    for x in curves["mu2"]:
        with mpmath.workdps(15):
            entry = _entry(spike(model.replace(mu2=repr(x)), law="gaussian-equivalent"))
        for q in THEORY_QUANTITIES:
            curves[q].append(math.nan if entry[q] is None else entry[q])
    return curves


CURVE_COLUMNS = 5
"""Panels of a curve figure per row of panels (one panel a value of ``gamma``)."""


def curve_figures(sweep: Sweep, points: list[dict], folder) -> list[str]:
    """The overlap and the top eigenvalue against ``mu2`` under both laws, with the Monte Carlo means and intervals:
    ``sweep_curves[_...].png`` per value of the axes other than ``mu2`` and ``gamma``, a column per value of
    ``gamma``. Only when ``mu2`` is an axis of at least two values."""
    from verify.figures import law_curves_figure

    names = [n for n, _ in sweep.axes]
    axes = dict(sweep.axes)
    quantities = [q for q in ("overlap", "top_eigenvalue") if QUANTITIES[q][0] in sweep.outputs]
    if not quantities or len(axes.get("mu2", ())) < 2:
        return []
    i_mu = names.index("mu2")
    i_g = names.index("gamma") if "gamma" in names else None
    others = [i for i in range(len(names)) if i not in (i_mu, i_g)]
    figures = defaultdict(lambda: defaultdict(list))
    for p in points:
        idx = p["index"]
        figures[tuple(idx[i] for i in others)][None if i_g is None else idx[i_g]].append(p)
    paths = []
    for key, columns in sorted(figures.items()):
        values = [sweep.axes[i][1][j] for i, j in zip(others, key)]
        panels = []
        for column, members in sorted(columns.items(), key=lambda c: -1 if c[0] is None else c[0]):
            members.sort(key=lambda p: p["index"][i_mu])
            params = sweep.params({**members[0]["point"]})
            x = [float(sp.Rational(p["point"]["mu2"])) for p in members]
            curves = _gaussian_curves(params, [float(sp.Rational(v)) for v in axes["mu2"]])
            dims = members[0]["dims"]
            panel = {"title": (f"gamma={params['gamma']}: " if i_g is not None else "")
                     + f"d={dims['d']}, V={dims['V']}, N={dims['N']}", "rows": {}}
            for q in quantities:
                mc = [p["monte_carlo"][q] for p in members]
                limits = [p["theory"]["finite_vocabulary"] for p in members]
                usable = [e is not None and "unavailable" not in e for e in limits]
                panel["rows"][q] = {
                    "gaussian": (curves["mu2"], curves[q]),
                    "edge": (curves["mu2"], curves["bulk_edge"]) if q == "top_eigenvalue" else None,
                    "limit": None if not any(usable) else (
                        [xi for xi, u in zip(x, usable) if u],
                        [math.nan if e[q] is None else e[q] for e, u in zip(limits, usable) if u],
                        [e["errors"][q] or 0.0 for e, u in zip(limits, usable) if u]),
                    "mc": (x, [s["mean"] for s in mc], [s["ci95"][0] for s in mc], [s["ci95"][1] for s in mc])}
            panels.append(panel)
        seeds = sorted({p["seeds"] for c in columns.values() for p in c})
        # the caption names every other axis (delta, T, signs, weights and their options, centered); d is in the panels
        limits = [p["theory"]["finite_vocabulary"] for c in columns.values() for p in c]
        title = (f"{_caption(params)}; "
                 f"{'-'.join(map(str, (seeds[0], seeds[-1]))) if len(seeds) > 1 else seeds[0]} seed(s) per point"
                 + ("; the model's limit not computed" if all(e is None for e in limits) else ""))
        name = f"sweep_curves{'_' + _slug([names[i] for i in others], values) if others else ''}.png"
        paths.append(law_curves_figure(folder, panels, quantities, title, name=name, columns=CURVE_COLUMNS))
    return paths


def phase_figures(sweep: Sweep, points: list[dict], folder) -> list[str]:
    """A phase diagram per value of the axes other than ``mu2`` and ``gamma``: ``sweep_phase[_...].png``."""
    from verify.figures import phase_figure

    names = [n for n, _ in sweep.axes]
    axes = dict(sweep.axes)
    if "overlaps" not in sweep.outputs or len(axes.get("mu2", ())) < 2 or len(axes.get("gamma", ())) < 2:
        return []
    i_mu, i_g = names.index("mu2"), names.index("gamma")
    others = [i for i in range(len(names)) if i not in (i_mu, i_g)]
    panels = defaultdict(lambda: np.full((len(axes["mu2"]), len(axes["gamma"])), np.nan))
    seeds = defaultdict(set)
    for p in points:
        idx = p["index"]
        key = tuple(idx[i] for i in others)
        panels[key][idx[i_mu], idx[i_g]] = p["monte_carlo"]["overlap"]["mean"]
        seeds[key].add(p["seeds"])
    paths = []
    mu2 = [float(sp.Rational(m)) for m in axes["mu2"]]
    gamma = [float(sp.Rational(g)) for g in axes["gamma"]]
    for key, grid in sorted(panels.items()):
        values = [sweep.axes[i][1][j] for i, j in zip(others, key)]
        params = sweep.params({**{names[i]: v for i, v in zip(others, values)},
                               "mu2": axes["mu2"][0], "gamma": axes["gamma"][0]})
        pop, sample = _critical_curves(params, gamma)
        n = sorted(seeds[key])
        title = (f"{_caption(params)}, d={params['d']},\n"
                 f"{'-'.join(map(str, (n[0], n[-1]))) if len(n) > 1 else n[0]} seed(s) per cell; "
                 f"thresholds of the Gaussian-equivalent law")
        name = f"sweep_phase{'_' + _slug([names[i] for i in others], values) if others else ''}.png"
        paths.append(phase_figure(folder, mu2, gamma, grid, pop, sample, title, name=name))
    return paths


def finite_size(sweep: Sweep, points: list[dict]) -> list[dict]:
    """Fits of :math:`|\\mathrm{mean} - \\mathrm{theory}| \\approx C d^{-r}` for every quantity and law with a value
    at every ``d``, per value of the axes other than ``d`` (floats; ``rate`` is ``None`` with a reason when no fit
    exists)."""
    names = [n for n, _ in sweep.axes]
    if "d" not in names or len(dict(sweep.axes)["d"]) < 2:
        return []
    i_d = names.index("d")
    groups = defaultdict(list)
    for p in points:
        groups[tuple(j for i, j in enumerate(p["index"]) if i != i_d)].append(p)
    fits = []
    for key, members in sorted(groups.items()):
        members.sort(key=lambda p: p["dims"]["d"])
        others = {n: v for n, v in members[0]["point"].items() if n != "d"}
        for law in LAWS:
            entries = [m["theory"][law] for m in members]
            if any(e is None or "unavailable" in e for e in entries):
                continue
            for q in members[0]["monte_carlo"]:
                if q not in THEORY_QUANTITIES or any(e[q] is None for e in entries):
                    continue
                ds = [m["dims"]["d"] for m in members]
                errors = [abs(m["monte_carlo"][q]["mean"] - e[q]) for m, e in zip(members, entries)]
                half = [(m["monte_carlo"][q]["ci95"][1] - m["monte_carlo"][q]["ci95"][0]) / 2 for m in members]
                entry = {"point": others, "quantity": q, "law": entries[0]["law"], "d": ds, "error": errors,
                         "ci95_halfwidth": half, "theory_error": [e["errors"][q] for e in entries],
                         "seeds": [m["seeds"] for m in members]}
                try:
                    fit = finite_size_fit(ds, errors)
                    entry.update(rate=fit.rate, rate_se=fit.rate_se, rate_ci95=list(fit.rate_ci95),
                                 prefactor=fit.prefactor)
                except ParameterError as exc:
                    entry.update(rate=None, reason=str(exc))
                fits.append(entry)
    return fits


def finite_size_figure(fits: list[dict], folder) -> str | None:
    """Error against ``d`` (log-log), one panel per quantity and law, with the fitted lines and, dotted, the 95%
    half-width over seeds (errors below it are not resolved from zero): ``sweep_finite_size.png``."""
    from verify import figures

    plt = figures.plt
    panels = sorted({(f["quantity"], f["law"]) for f in fits if f["rate"] is not None})
    if not panels:
        return None
    fig, axes = plt.subplots(1, len(panels), figsize=(4.6 * len(panels), 3.4), squeeze=False)
    fig.subplots_adjust(wspace=0.45)
    for ax, (q, law) in zip(axes[0], panels):
        shown = [f for f in fits if (f["quantity"], f["law"]) == (q, law) and f["rate"] is not None]
        for f in shown:
            ds = np.asarray(f["d"], dtype=float)
            where = _label(f["point"], f["point"].values())
            label = f"{where + ': ' if where else ''}r = {f['rate']:.2f} ± {f['rate_se']:.2f}"
            line, = ax.loglog(ds, f["error"], "o", ms=3, label=label if len(shown) <= 6 else None)
            ax.loglog(ds, f["prefactor"] * ds ** -f["rate"], color=line.get_color(), lw=0.8)
            if all(np.isfinite(f["ci95_halfwidth"])):
                ax.loglog(ds, f["ci95_halfwidth"], ":", color=line.get_color(), lw=0.8,
                          label="95% half-width over seeds" if len(shown) == 1 else None)
        ax.set_xlabel("d")
        ax.set_ylabel(f"|mean − theory| of {q.replace('_', ' ')}")
        ax.set_title(f"theory: {law} law", fontsize=8)
        if len(shown) <= 6:
            ax.legend(fontsize=6)
    return figures.save(fig, folder, "sweep_finite_size.png")


ERROR_DIGITS = 2
"""Significant digits of a stated error (as in ``derive spike``'s documents)."""


def _estimates_as_text(points: list[dict], fits: list[dict]) -> None:
    """Each law's value that carries an error written to the digits that error leaves (at most :data:`MC_DIGITS`),
    and the error to :data:`ERROR_DIGITS`, in place (:func:`derive.report.documents.estimate`)."""
    import mpmath

    from derive.report.documents import estimate

    for p in points:
        for entry in p["theory"].values():
            for q, error in (entry or {}).get("errors", {}).items():
                if error is not None:
                    entry[q] = estimate(mpmath.mpf(entry[q]), mpmath.mpf(error), MC_DIGITS)
                    entry["errors"][q] = format_real(error, ERROR_DIGITS)
    for f in fits:
        f["theory_error"] = [None if e is None else format_real(e, ERROR_DIGITS) for e in f["theory_error"]]


def _spectral(sweep: Sweep) -> bool:
    return any(QUANTITIES[q][0] in sweep.outputs for q in THEORY_QUANTITIES)


def summarize(path, figures_folder=None, model_limit: bool = True, workers: int = 1, report=None,
              limit_error: float | None = None) -> dict:
    """The summary document of a results file; figures go to ``figures_folder`` (none if ``None``). The model's
    limit is computed at every grid point (:func:`model_limits`, in ``workers`` processes, ``report(done, total)``
    after each), each law's to ``limit_error`` or, by default, to a tenth of its Monte Carlo intervals' median
    half-width (:func:`error_sought`), unless ``model_limit`` is false; ``model_limit`` in the document says which, the
    errors sought, and how long it took."""
    if figures_folder is not None:
        check_output_folder(figures_folder, "figures")
    scan = read_results(path)
    sweep = header_sweep(scan.header, str(path))
    check_records(sweep, scan.records, str(path))
    indices = sorted({key[:-1] for key in scan.records})
    if not _spectral(sweep):
        limits, limit_stats = None, {"computed": False, "reason": "the sweep has no spectral outputs"}
    elif not model_limit:
        limits, limit_stats = None, {"computed": False, "reason": "skipped (--skip-model-limit): only the "
                                                                  "Gaussian-equivalent law is shown"}
    else:
        limits, limit_stats = model_limits(sweep, indices, workers, report, halfwidths(sweep, scan.records),
                                           limit_error)
    points = point_summaries(sweep, scan.records, limits)
    fits = finite_size(sweep, points)
    paths = []
    if figures_folder is not None and points:
        paths = curve_figures(sweep, points, figures_folder) + phase_figures(sweep, points, figures_folder)
        drawn = finite_size_figure(fits, figures_folder) if fits else None
        paths += [drawn] if drawn else []
    _estimates_as_text(points, fits)
    points, fits = json_reals(points, MC_DIGITS), json_reals(fits, MC_DIGITS)
    return {
        "results": str(path), "sweep_hash": sweep.hash, "sweep": sweep.spec,
        "tasks": {"total": sweep.task_count(), "done": len(scan.records)},
        "torn_bytes": scan.torn,
        "code_versions": sorted({r.get("code_version", "unknown") for r in scan.records.values()}),
        "created_by": scan.header.get("provenance"),
        "laws": LAWS, "model_limit": json_reals(limit_stats, 4),
        "points": points, "finite_size": fits, "figures": paths,
        "interval": "Student-t 95% over seeds, kept within the quantity's range (an overlap's within [0, 1]; null "
                    "for one seed); in_ci95: the law's value lies in it, widened by the value's stated error",
    }
