"""The ledger's figures, drawn after its checks from their artifacts and from Monte Carlo runs of their own:
what each shows, under which claims ``claims.md`` places it, and the drawing."""
from __future__ import annotations

import numpy as np

from derive import Model
from verify.ledger.checks.common import DELTA, GAMMA, SIGNS, T, scheme_floats, theory
from verify.montecarlo.draw import rung
from verify.montecarlo.trials import run_axis
from verify.stats import mean_ci

__all__ = ["FIGURES", "draw_figures"]


FIGURES = (
    ("spectra.png", ("C1", "C9"), "Eigenvalues of the centered S_c (one draw per scheme, T = 8, prefix:3, delta = 1/2, "
                                  "gamma = 1/4, mu2 = 3/2) against the Gaussian-equivalent density and the predicted "
                                  "outlier"),
    ("phase_diagram.png", ("C2", "C3"), "Monte Carlo overlap over (gamma, mu2) for mean pooling with the population and "
                                        "sample thresholds"),
    ("overlap_vs_mu2.png", ("C4", "C9"), "Overlap of the top eigenvector of S_c with u against mu2: theory curves and "
                                         "Monte Carlo means with 95% intervals"),
    ("weights.png", ("C5", "C6", "C7"), "The weights of mean pooling, causal attention's limit (strict mask, tau = 0) "
                                        "and the optimal scheme on prefix:3, T = 8"),
    ("accuracy.png", ("C8",), "Ridge classification accuracy: prefix:3, where the claimed order holds, and suffix:2, "
                              "where causal attention falls below mean pooling as alpha/kappa says"),
    ("c10_thresholds.png", ("C10",), "The sample-level threshold mu2 (Gaussian-equivalent, centered S_c, T = 8, "
                                     "delta = 1/2, gamma = 1/4) against tau for causal attention at scores "
                                     "tau <x_t, x_s>/d and /sqrt(d), both masks, beside mean pooling's; at 1/sqrt(d) "
                                     "the strict mask's weights are random per sequence (its error bars: three "
                                     "standard errors, smaller than the line)"),
)
"""The ledger's figures (file name, the claims each illustrates, caption), in the order :func:`draw_figures`
draws them; ``claims.md`` shows each under its claims."""


def draw_figures(cfg: dict, results: dict, report=None) -> list[str]:
    """Figures (a)-(e) of the ledger into ``cfg["figures"]``; (a) and (e) reuse the artifacts of the C1 and
    C8 checks in ``results`` (``{id: Result}``). ``report(done, total)``, if given, hears of each Monte Carlo
    cell (``seeds`` trials at ``d`` count ``seeds d^2``)."""
    from verify import figures

    folder, paths = cfg["figures"], []
    artifacts = {k: v for r in results.values() for k, v in r.artifacts.items()}
    schemes = {name: scheme_floats(name) for name in ("mean", "causal", "optimal")}
    setting = f"T={T}, {SIGNS}, $\\delta$={DELTA}, $\\gamma$={GAMMA}, causal: strict mask, $\\tau$=0"
    if "spectra" in artifacts:
        paths.append(figures.spectra_figure(folder, artifacts["spectra"], f"centered $S_c$, one draw each, {setting}; "
                                            "density: the Gaussian-equivalent law"))
    paths.append(figures.weights_figure(folder, {n: v[0] for n, v in schemes.items()},
                                        f"weights on T = {T} ({SIGNS}; causal: strict mask, tau = 0; sum 1)"))
    if "accuracy" in artifacts:
        a = artifacts["accuracy"]
        paths.append(figures.accuracy_figure(
            folder, a["families"], f"ridge classification (C8), T={T}, d={a['d']}, V={a['V']}, N={a['N']} "
                                   f"(N/2 test), {a['seeds']} paired seeds, 95% intervals; causal: strict mask, tau=0"))
    if "c10_thresholds" in artifacts:
        paths.append(_threshold_figure(folder, artifacts["c10_thresholds"]))
    d = cfg["d"]
    V, N = rung(d, DELTA, GAMMA)
    curves, points = {}, {}
    mu_fine = np.linspace(0.02, 3.5, 120)
    mu_mc = [0.25, 0.5, 1.0, 2.0, 3.0]
    gammas = [0.1, 0.25, 0.5, 1.0, 1.5, 2.0]
    mus = [0.1, 0.3, 0.5, 0.75, 1.0, 1.5, 2.0, 3.0]
    dd = max(200, d // 2)
    # a unit of work is one solve along a whole mu2 axis, weighted by d^2
    cell = {"overlap": cfg["seeds"] * d * d, "phase": dd * dd}
    total = len(schemes) * cell["overlap"] + len(gammas) * cell["phase"]
    done = 0

    def tick(kind):
        nonlocal done
        done += cell[kind]
        if report is not None:
            report(done, total)

    for name, (w, a, k) in schemes.items():
        curves[name] = (mu_fine, [float(theory(DELTA, GAMMA, name, repr(float(m))).sample.overlap) for m in mu_fine])
        # each seed is one draw solved along the whole axis: the points of a curve share their draws
        overlaps = run_axis(Model(d=d, V=V, N=N, T=T, signs=SIGNS, centered=True), mu_mc, weights=w, k=4,
                            seeds=cfg["seeds"], seed0=400).overlaps
        stats_ = [mean_ci(overlaps[:, i, 0]) for i in range(len(mu_mc))]
        tick("overlap")
        points[name] = (mu_mc, *(np.array([s_[i] for s_ in stats_]) for i in range(3)))
    paths.append(figures.overlap_figure(folder, curves, points,
                                        f"centered $S_c$, {setting}, d={d}, V={V}, N={N}, {cfg['seeds']} seeds; "
                                        "curves: Gaussian-equivalent theory"))
    w, a, k = schemes["mean"]
    grid = np.zeros((len(mus), len(gammas)))
    for j, g in enumerate(gammas):
        Vg, Ng = rung(dd, DELTA, g)
        grid[:, j] = run_axis(Model(d=dd, V=Vg, N=Ng, T=T, signs=SIGNS, centered=True), mus, weights=w, k=4,
                              seed0=500 + j).overlaps[0, :, 0]
        tick("phase")
    crit = lambda g, level: float(theory(DELTA, repr(float(g)), "mean", 1).level(level).mu2_critical)  # noqa: E731
    paths.append(figures.phase_figure(folder, mus, gammas, grid, lambda g: crit(g, "population"),
                                      lambda g: crit(g, "sample"),
                                      f"mean pooling, centered $S_c$, {SIGNS}, T={T}, $\\delta$={DELTA}, d={dd}, "
                                      "one draw per column; thresholds: Gaussian-equivalent theory"))
    return paths


def _threshold_figure(folder, thresholds: dict) -> str:
    """C10's figure: for each family a panel of the sample threshold against ``tau``, both masks at both scalings, and
    mean pooling's as a line."""
    from fractions import Fraction

    import matplotlib.pyplot as plt

    from verify import figures

    fig, axes = plt.subplots(1, len(thresholds), figsize=(4.6 * len(thresholds), 3.6), squeeze=False)
    styles = {("1/d", "strict"): ("tab:orange", "-", "o"), ("1/d", "inclusive"): ("tab:orange", "--", "s"),
              ("1/sqrt(d)", "strict"): ("tab:red", "-", "o"), ("1/sqrt(d)", "inclusive"): ("tab:red", "--", "s")}
    for ax, (signs, t) in zip(axes[0], thresholds.items()):
        tau = [float(Fraction(x)) for x in t["tau"]]
        for (scaling, mask), (color, line, marker) in styles.items():
            values = t[scaling][mask]
            errors = t["1/sqrt(d) strict error"] if (scaling, mask) == ("1/sqrt(d)", "strict") else None
            ax.errorbar(tau, values, yerr=errors, color=color, ls=line, marker=marker, ms=3.5, lw=1.2,
                        label=f"{mask}, scores /{'d' if scaling == '1/d' else 'sqrt(d)'}")
        ax.axhline(t["mean"], color=figures.SCHEME_COLORS["mean"], lw=1.2, ls=":", label="mean pooling")
        ax.set_title(f"{signs}, T = 8", fontsize=9)
        ax.set_xlabel(r"$\tau$")
        ax.set_ylabel(r"sample threshold $\mu_2^{(N)}$")
    axes[0][0].legend(fontsize=7)
    return figures.save(fig, folder, "c10_thresholds.png")
