r"""Summaries and figures of a sweep, made from its results file alone.

The header holds the sweep's parameters, so the theory of every grid point
(:func:`verify.sweep.theory`, at the realized ``d/V`` and ``d/N``) is recomputed here, never read from
the Monte Carlo. Per grid point: the mean and Student-t 95% interval over seeds
(:func:`verify.stats.mean_ci`) of the top eigenvalue, the overlap (the largest of the ``k`` squared
overlaps :math:`|\hat u_i^T u|^2`, so that a raw ``S`` whose top outlier is the vocabulary-mean one is
read at its signal eigenvector), the bulk-edge estimate and the classification accuracy.

Figures: a phase diagram (mean overlap over ``gamma x mu2``, with the population and sample
thresholds :math:`\mu_2^{crit}(\gamma)` of :func:`derive.gaussian.outliers.outliers_at`) for each value of the other
axes, when ``mu2`` and ``gamma`` are axes; and, when ``d`` is an axis, the finite-size error
:math:`|\mathrm{mean} - \mathrm{theory}|` against ``d`` with the rate fitted by
:func:`verify.stats.finite_size_fit`.
"""
from __future__ import annotations

from collections import defaultdict

import numpy as np
import sympy as sp

from derive.errors import ParameterError
from derive.files import check_output_folder
from derive.numbers import format_real, json_reals
from verify.stats import finite_size_fit, mean_ci
from verify.sweeps.spec import Sweep, dimensions, point_model, predicted_outliers, theory
from verify.sweeps.results import check_records, header_sweep, read_results

__all__ = ["MC_DIGITS", "QUANTITIES", "point_summaries", "CURVE_NODES", "phase_figures", "finite_size",
           "finite_size_figure", "summarize"]

MC_DIGITS = 10
"""Significant digits of the summaries' Monte Carlo reals (their own error is far larger)."""

QUANTITIES = {
    # name: (output it needs, its value in one record's result)
    "top_eigenvalue": ("top_eigenvalues", lambda r: r["top_eigenvalues"][0]),
    "overlap": ("overlaps", lambda r: max(r["overlaps"])),
    "bulk_edge": ("bulk_edge", lambda r: r["bulk_edge"]),
    "accuracy": ("accuracy", lambda r: r["accuracy"]),
}


def _theory_values(params: dict) -> dict:
    """The theory the quantities are measured against, as floats (``None`` where it says nothing)."""
    o = theory(params)
    single = predicted_outliers(o) == 1 and o.sample.outlier
    crit = lambda x: None if x is None else format_real(x, 15)  # noqa: E731
    return {
        "top_eigenvalue": float(o.sample.eigenvalue) if single else None,
        "overlap": float(o.sample.overlap),
        "bulk_edge": float(o.right_edge),
        "accuracy": None,
        "mu2_critical": {"population": crit(o.population.mu2_critical), "sample": crit(o.sample.mu2_critical)},
        "outliers": predicted_outliers(o),
    }


def _stats(values) -> dict:
    mean, lo, hi = mean_ci(values)
    return {"mean": mean, "ci95": [lo, hi]}


def point_summaries(sweep: Sweep, records: dict) -> list[dict]:
    """One entry per grid point with at least one finished seed, in grid order (floats)."""
    by_point = defaultdict(list)
    for key, rec in records.items():
        by_point[key[:-1]].append(rec["result"])
    out = []
    for index in sorted(by_point):
        results, point = by_point[index], sweep.point(index)
        params = sweep.params(point)
        th = _theory_values(params)
        stats = {q: _stats([value(r) for r in results]) for q, (output, value) in QUANTITIES.items()
                 if output in sweep.outputs}
        out.append({"index": list(index), "point": point, "dims": dimensions(params), "seeds": len(results),
                    "monte_carlo": stats, "theory": th})
    return out


def _label(names, values) -> str:
    return ", ".join(f"{n}={v}" for n, v in zip(names, values))


def _slug(names, values) -> str:
    text = "_".join(f"{n}-{v}" for n, v in zip(names, values))
    return "".join(c if c.isalnum() or c in "-_." else "_" for c in text)


CURVE_NODES = 33
"""Values of ``gamma`` at which the phase diagram's threshold curves are computed; the figure joins
them linearly (the thresholds are smooth in ``gamma``, and each value costs a :func:`derive.gaussian.outliers.outliers_at`)."""


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
    """The parameters a sweep figure shares, as :func:`derive.cli.plot.model_caption` states them: the weights with
    the causal mask and ``tau`` they were computed with.

    >>> _caption({"delta": "1/2", "T": 8, "signs": "prefix:3", "weights": "causal", "mask": "strict", "centered": True})
    'delta=1/2, T=8, causal weights (strict mask, tau=0), prefix:3, centered S_c'
    """
    from derive.cli.plot import model_caption

    return model_caption(point_model({**params, "mu2": None}, delta=params["delta"]))


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
                 f"{'-'.join(map(str, (n[0], n[-1]))) if len(n) > 1 else n[0]} seed(s) per cell")
        name = f"sweep_phase{'_' + _slug([names[i] for i in others], values) if others else ''}.png"
        paths.append(phase_figure(folder, mu2, gamma, grid, pop, sample, title, name=name))
    return paths


def finite_size(sweep: Sweep, points: list[dict]) -> list[dict]:
    """Fits of :math:`|\\mathrm{mean} - \\mathrm{theory}| \\approx C d^{-r}` for every quantity with a theory,
    per value of the axes other than ``d`` (floats; ``rate`` is ``None`` with a reason when no fit exists)."""
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
        for q, stats in members[0]["monte_carlo"].items():
            if members[0]["theory"][q] is None or any(m["theory"][q] is None for m in members):
                continue
            ds = [m["dims"]["d"] for m in members]
            errors = [abs(m["monte_carlo"][q]["mean"] - m["theory"][q]) for m in members]
            half = [(m["monte_carlo"][q]["ci95"][1] - m["monte_carlo"][q]["ci95"][0]) / 2 for m in members]
            entry = {"point": others, "quantity": q, "d": ds, "error": errors, "ci95_halfwidth": half,
                     "seeds": [m["seeds"] for m in members]}
            try:
                fit = finite_size_fit(ds, errors)
                entry.update(rate=fit.rate, rate_se=fit.rate_se, rate_ci95=list(fit.rate_ci95), prefactor=fit.prefactor)
            except ParameterError as exc:
                entry.update(rate=None, reason=str(exc))
            fits.append(entry)
    return fits


def finite_size_figure(fits: list[dict], folder) -> str | None:
    """Error against ``d`` (log-log), one panel per quantity, with the fitted lines and, dotted, the 95%
    half-width over seeds (errors below it are not resolved from zero): ``sweep_finite_size.png``."""
    from verify import figures

    plt = figures.plt
    quantities = sorted({f["quantity"] for f in fits if f["rate"] is not None})
    if not quantities:
        return None
    fig, axes = plt.subplots(1, len(quantities), figsize=(4.6 * len(quantities), 3.4), squeeze=False)
    fig.subplots_adjust(wspace=0.45)
    for ax, q in zip(axes[0], quantities):
        shown = [f for f in fits if f["quantity"] == q and f["rate"] is not None]
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
        if len(shown) <= 6:
            ax.legend(fontsize=6)
    return figures.save(fig, folder, "sweep_finite_size.png")


def summarize(path, figures_folder=None) -> dict:
    """The summary document of a results file; figures go to ``figures_folder`` (none if ``None``)."""
    if figures_folder is not None:
        check_output_folder(figures_folder, "figures")
    scan = read_results(path)
    sweep = header_sweep(scan.header, str(path))
    check_records(sweep, scan.records, str(path))
    points = point_summaries(sweep, scan.records)
    fits = finite_size(sweep, points)
    paths = []
    if figures_folder is not None and points:
        paths = phase_figures(sweep, points, figures_folder)
        drawn = finite_size_figure(fits, figures_folder) if fits else None
        paths += [drawn] if drawn else []
    points, fits = json_reals(points, MC_DIGITS), json_reals(fits, MC_DIGITS)
    return {
        "results": str(path), "sweep_hash": sweep.hash, "sweep": sweep.spec,
        "tasks": {"total": len(sweep.tasks()), "done": len(scan.records)},
        "torn_bytes": scan.torn,
        "code_versions": sorted({r.get("code_version", "unknown") for r in scan.records.values()}),
        "created_by": scan.header.get("provenance"),
        "points": points, "finite_size": fits, "figures": paths,
        "interval": "Student-t 95% over seeds (null for one seed)",
    }
