"""The figures of the ledger, ``verify mc`` and the sweep summaries, drawn from the numbers they computed (matplotlib,
Agg backend)."""
from __future__ import annotations

from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import matplotlib.patheffects  # noqa: E402
import matplotlib.ticker  # noqa: E402
import numpy as np  # noqa: E402

from derive.model import schemes as _schemes  # noqa: E402

__all__ = ["SCHEME_COLORS", "save", "spectra_figure", "phase_figure", "overlap_figure", "weights_figure",
           "accuracy_figure", "mc_figure", "LAW_STYLES", "law_curves_figure"]

SCHEME_COLORS = {s.name: s.color for s in _schemes.CATALOGUE}
"""Each weight scheme's colour (:mod:`derive.model.schemes`)."""


def save(fig, folder: str, name: str) -> str:
    """Write ``fig`` as ``folder/name`` (PNG, folders made as needed, whole or not at all), close it, return the
    path; a write error is a ``ParameterError`` naming ``figures``."""
    from derive.files import replaced

    path = Path(folder) / name
    try:
        with replaced(path, "figures") as f:
            fig.savefig(f, format="png", dpi=130, bbox_inches="tight")
    finally:
        plt.close(fig)
    return str(path)


def spectra_figure(folder, panels: list[dict], title: str = "") -> str:
    """(a) Eigenvalue histograms of ``S_c`` with the derived bulk density and predicted outliers; ``title`` names the
    parameters the panels share."""
    fig, axes = plt.subplots(1, len(panels), figsize=(4.2 * len(panels), 3.3), sharey=False)
    for ax, p in zip(np.atleast_1d(axes), panels):
        ax.hist(p["eigenvalues"], bins=80, density=True, color="0.75", label="Monte Carlo")
        ax.plot(p["x"], p["density"], color="k", lw=1.2, label=r"$\kappa(\mathrm{MP}_\delta\boxtimes\mathrm{MP}_\gamma)$")
        if p.get("outlier") is not None:
            ax.axvline(p["outlier"], color="tab:red", ls="--", lw=1, label="predicted outlier")
        ax.set_title(f"{p['scheme']} pooling (d={p['d']}, V={p['V']}, N={p['N']}, mu2={p['mu2']})", fontsize=9)
        ax.set_xlabel("eigenvalue")
    np.atleast_1d(axes)[0].legend(fontsize=7)
    if title:
        fig.suptitle(title, fontsize=9, y=1.02)
    return save(fig, folder, "spectra.png")


def phase_figure(folder, mu2_grid, gamma_grid, overlap, pop_curve, sample_curve, title: str,
                 name: str = "phase_diagram.png") -> str:
    """(b) Monte Carlo overlap over ``(gamma, mu2)`` with both theoretical transition curves."""
    fig, ax = plt.subplots(figsize=(5.2, 4))
    mesh = ax.pcolormesh(gamma_grid, mu2_grid, overlap, shading="nearest", vmin=0, vmax=1, cmap="viridis")
    fig.colorbar(mesh, ax=ax, label=r"$|\hat u^\top u|^2$ (Monte Carlo)")
    g = np.linspace(min(gamma_grid), max(gamma_grid), 200)
    pop, sample = [pop_curve(x) for x in g], [sample_curve(x) for x in g]
    # the population level does not depend on gamma: its threshold is one value, named
    flat = max(pop) - min(pop) <= 1e-12 * max(1.0, abs(max(pop)))
    # white edged in black: seen on the dark cells and on the blank strip beyond the grid alike
    ax.plot(g, pop, color="w", ls="--", lw=1.5, path_effects=[matplotlib.patheffects.withStroke(linewidth=3, foreground="k")],
            label="population threshold (N = oo)" + (f", $\\mu_2$ = {pop[0]:.3g}" if flat else ""))
    ax.plot(g, sample, color="tab:red", label="sample threshold")
    ax.set_xlabel(r"$\gamma = d/N$")
    ax.set_ylabel(r"$\mu_2$")
    # the cells whole, and both thresholds in view even where they lie beyond the grid (below it, often; at 0 when
    # an outlier exists at every mu2, a strip below 0 shows the line)
    mu2_grid = np.sort(np.asarray(mu2_grid, dtype=float))
    half = (mu2_grid[-1] - mu2_grid[0]) / max(1, len(mu2_grid) - 1) / 2
    pad = 0.03 * (mu2_grid[-1] - mu2_grid[0] + 2 * half)
    ax.set_ylim(min(mu2_grid[0] - half, min(pop + sample) - pad), max(mu2_grid[-1] + half, max(pop + sample) + pad))
    ax.set_title(title, fontsize=9)
    ax.legend(fontsize=7, loc="upper left")
    return save(fig, folder, name)


def overlap_figure(folder, curves: dict, points: dict, title: str) -> str:
    """(c) Overlap against ``mu2``: theory curves per scheme, Monte Carlo means with 95% intervals."""
    fig, ax = plt.subplots(figsize=(5.2, 3.6))
    for name, (x, y) in curves.items():
        ax.plot(x, y, color=SCHEME_COLORS[name], label=f"{name} (theory)")
    for name, (x, mean, lo, hi) in points.items():
        ax.errorbar(x, mean, yerr=[np.asarray(mean) - lo, np.asarray(hi) - mean], fmt="o", ms=3,
                    color=SCHEME_COLORS[name], capsize=2)
    ax.set_xlabel(r"$\mu_2$")
    ax.set_ylabel(r"$|\hat u^\top u|^2$")
    ax.set_title(title, fontsize=9)
    ax.legend(fontsize=7)
    return save(fig, folder, "overlap_vs_mu2.png")


def weights_figure(folder, weights: dict, title: str) -> str:
    """(d) The weights of each scheme against the position ``t``."""
    fig, ax = plt.subplots(figsize=(5.2, 3.2))
    for name, w in weights.items():
        ax.plot(np.arange(1, len(w) + 1), w, "o-", color=SCHEME_COLORS[name], label=name)
    ax.set_xlabel("position t")
    ax.set_ylabel(r"$w_t$ (sum 1)")
    ax.set_title(title, fontsize=9)
    ax.legend(fontsize=7)
    return save(fig, folder, "weights.png")


def accuracy_figure(folder, families: dict, title: str) -> str:
    """(e) Ridge classification test accuracy against ``mu2`` with 95% intervals, one panel per sign family
    (``families``: family -> ``(mu2 grid, {scheme: (mean, lo, hi)}, alpha/kappa order worst to best)``)."""
    fig, axes = plt.subplots(1, len(families), figsize=(4.6 * len(families), 3.4), sharey=True)
    for ax, (family, (mu2_grid, acc, order)) in zip(np.atleast_1d(axes), families.items()):
        for name, (mean, lo, hi) in acc.items():
            ax.errorbar(mu2_grid, mean, yerr=[np.asarray(mean) - lo, np.asarray(hi) - mean], fmt="o-", ms=3,
                        color=SCHEME_COLORS[name], capsize=2, label=name)
        ax.set_xlabel(r"$\mu_2$")
        ax.set_title(f"{family}: alpha/kappa order {' < '.join(order)}", fontsize=9)
        ax.legend(fontsize=7)
    np.atleast_1d(axes)[0].set_ylabel("test accuracy")
    fig.suptitle(title, fontsize=9, y=1.02)
    return save(fig, folder, "accuracy.png")


def mc_figure(path, tops, overlaps, theory: dict, caption: str) -> str:
    """``verify mc --plot``: (left) the top eigenvalues of each seed against the derived signal outlier, the other
    outliers and the right edge of the bulk; (right) the squared overlap of the top eigenvector with ``u`` per seed,
    their mean with its 95% interval, and the derived overlap. ``caption`` names the parameters."""
    from verify.stats import mean_ci

    tops, overlaps = np.asarray(tops, dtype=float), np.asarray(overlaps, dtype=float)
    seeds = np.arange(tops.shape[0])
    fig, (left, right) = plt.subplots(1, 2, figsize=(9.5, 3.6))
    # room between the panels for the right one's y-label and tick labels
    fig.subplots_adjust(wspace=0.32)
    for j in range(tops.shape[1]):
        left.plot(seeds, tops[:, j], "o", ms=3, color="k" if j == 0 else "0.6",
                  label="top eigenvalue" if j == 0 else ("next ones" if j == 1 else None))
    sample = theory.get("sample", {})
    if sample.get("eigenvalue") is not None:
        left.axhline(float(sample["eigenvalue"]), color="tab:red", ls="--", lw=1, label="derived signal outlier")
    for other in theory.get("other_outliers", []):
        if other.get("level", "sample") == "sample" and other.get("eigenvalue") is not None:
            left.axhline(float(other["eigenvalue"]), color="tab:purple", ls="-.", lw=1, label="derived other outlier")
    edge = theory.get("bulk", {}).get("right_edge")
    if edge not in (None, "inf"):
        left.axhline(float(edge), color="tab:blue", ls=":", lw=1, label="right edge of the bulk")
    left.set_xlabel("seed")
    left.set_ylabel("eigenvalue of S")
    left.legend(fontsize=7)
    right.plot(seeds, overlaps[:, 0], "o", ms=3, color="k", label=r"$|\hat u^\top u|^2$ per seed")
    if len(seeds) > 1:
        mean, lo, hi = mean_ci(overlaps[:, 0])
        right.errorbar([seeds.mean()], [mean], yerr=[[mean - lo], [hi - mean]], fmt="s", color="tab:green", capsize=3,
                       label="mean, 95% interval")
    if sample.get("overlap") is not None:
        right.axhline(float(sample["overlap"]), color="tab:red", ls="--", lw=1, label="derived overlap")
    right.set_xlabel("seed")
    right.set_ylabel("squared overlap with u")
    for ax in (left, right):
        ax.xaxis.set_major_locator(matplotlib.ticker.MaxNLocator(integer=True))
    right.legend(fontsize=7)
    fig.suptitle(f"{caption}; theory: {theory.get('law', '')} law", fontsize=8)
    target = Path(path)
    return save(fig, str(target.parent), target.name)


LAW_STYLES = {
    "gaussian": dict(color="k", lw=1.1, label="Gaussian-equivalent law"),
    "edge": dict(color="0.45", ls=":", lw=1, label="Gaussian-equivalent bulk's right edge"),
    "limit": dict(fmt="D", ms=4, color="tab:red", capsize=2, mfc="none", label="finite-vocabulary limit (model's own)"),
    "mc": dict(fmt="o", ms=3, color="tab:blue", capsize=2, label="Monte Carlo mean, 95% interval"),
}
"""How :func:`law_curves_figure` draws each law and the Monte Carlo."""

CURVE_LABELS = {"overlap": r"$|\hat u^\top u|^2$", "top_eigenvalue": "top eigenvalue of S"}


def law_curves_figure(folder, panels: list[dict], quantities: list[str], title: str, name: str,
                      columns: int = 5) -> str:
    """Quantities (``overlap``, ``top_eigenvalue``; a row of panels each) against ``mu2``, one column per panel of
    ``panels`` (at most ``columns`` a row, then a further row): the Gaussian-equivalent law as a curve (and, for the
    top eigenvalue, its bulk's right edge, dotted), the model's finite-vocabulary limit at the grid's points with
    its stated errors as bars, and the Monte Carlo means with their 95% intervals. A panel is
    ``{"title", "rows": {quantity: {"gaussian": (x, y), "edge": (x, y) | None, "limit": (x, y, err) | None,
    "mc": (x, mean, lo, hi)}}}``; NaN values and infinite interval ends are not drawn."""
    ncol = min(columns, len(panels))
    blocks = -(-len(panels) // ncol)
    fig, axes = plt.subplots(blocks * len(quantities), ncol, figsize=(3.6 * ncol, 2.9 * blocks * len(quantities)),
                             squeeze=False)
    fig.subplots_adjust(wspace=0.35, hspace=0.55)
    for j, panel in enumerate(panels):
        for r, q in enumerate(quantities):
            ax = axes[(j // ncol) * len(quantities) + r, j % ncol]
            row = panel["rows"][q]
            ax.plot(*row["gaussian"], **LAW_STYLES["gaussian"])
            if row.get("edge") is not None:
                ax.plot(*row["edge"], **LAW_STYLES["edge"])
            if row.get("limit") is not None:
                x, y, err = row["limit"]
                ax.errorbar(x, y, yerr=err, **LAW_STYLES["limit"])
            x, mean, lo, hi = (np.asarray(v, dtype=float) for v in row["mc"])
            finite = np.isfinite(lo) & np.isfinite(hi)
            below, above = np.where(finite, mean - lo, 0.0), np.where(finite, hi - mean, 0.0)
            ax.errorbar(x, mean, yerr=[below, above], **LAW_STYLES["mc"])
            ax.set_xlabel(r"$\mu_2$")
            ax.set_ylabel(CURVE_LABELS[q])
            ax.set_title(panel["title"], fontsize=8)
    for k in range(len(panels), blocks * ncol):
        for r in range(len(quantities)):
            axes[(k // ncol) * len(quantities) + r, k % ncol].set_visible(False)
    handles, labels = axes[0, 0].get_legend_handles_labels()
    for ax in axes.flat:
        for h, lab in zip(*ax.get_legend_handles_labels()):
            if lab not in labels:
                handles.append(h)
                labels.append(lab)
    fig.legend(handles, labels, loc="upper center", ncol=2 if ncol == 1 else len(labels), fontsize=7,
               bbox_to_anchor=(0.5, 0.0))
    fig.suptitle(title, fontsize=9)
    return save(fig, folder, name)
