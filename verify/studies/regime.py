r"""Where the Gaussian equivalent will do: the Kolmogorov distance between the model's own law and
:math:`\kappa(\mathrm{MP}_\delta\boxtimes\mathrm{MP}_\gamma)` over :math:`(\delta, \gamma, T, \text{weights})`, against
the resolution of a Monte Carlo at ``d = 2000``, and the figures of notes/finite_vocabulary.md.

Both laws are known (:mod:`derive.vocabulary.limit.law`, :mod:`derive.gaussian.bulk`), so the map is computed from theory; the
resolution is what one draw at ``d = 2000`` shows of its own law: ``d * KS`` of about 10 (measured at ``T = 1, 2, 8``,
notes/finite_vocabulary.md), so :data:`RESOLUTION` = 0.005.
"""
from __future__ import annotations

import numpy as np
import sympy as sp

from derive import Model, weights
from derive.gaussian import bulk
from derive.vocabulary.limit.floatview import float_view
from derive.vocabulary.limit.law import vocabulary_law

__all__ = ["RESOLUTION", "MAP_GRID", "ge_distribution", "distance", "regime_map", "regime_figure", "map_table", "t1_figure", "main"]

RESOLUTION = 0.005
"""The Kolmogorov distance a Monte Carlo at ``d = 2000`` resolves: one draw's distance to its own limit law is
about ``10/d`` there."""


def ge_distribution(delta, gamma, kappa):
    r"""The distribution function of the Gaussian-equivalent law in float64: its atom, and its density integrated by the
    trapezoid rule in :math:`\theta` on each support interval, :math:`x = a + (b-a)(1-\cos\theta)/2` (bounded at
    square-root edges), or in :math:`u`, :math:`x = bu^3`, on an interval starting at a hard edge at 0
    (:math:`x^{-2/3}` or :math:`x^{-1/2}`); each interval scaled to its share of :math:`1 - \mu\{0\}`."""
    L = bulk.law(delta, gamma, kappa)
    atom = float(L.atom_at_zero)
    pieces = []
    for a, b in ((float(a), float(b)) for a, b in L.edges()):
        s = np.linspace(0, 1, 20001)
        if a == 0:
            x = b * s**3
            g = np.zeros_like(s)
            g[1:] = L.density_float(x[1:]) * 3 * b * s[1:] ** 2
        else:
            theta = np.pi * s
            x = a + (b - a) * (1 - np.cos(theta)) / 2
            g = L.density_float(x) * (b - a) * np.sin(theta) / 2 * np.pi
        pieces.append((x, np.concatenate([[0.0], np.cumsum((g[1:] + g[:-1]) / 2 * np.diff(s))])))
    total = sum(F[-1] for _, F in pieces)

    def cdf(xs):
        xs = np.asarray(xs, dtype=float)
        out = np.where(xs >= 0, atom, 0.0)
        for x, F in pieces:
            out = out + (1 - atom) * np.interp(xs, x, F / total, left=0.0, right=F[-1] / total)
        return out

    return cdf


def distance(delta, gamma, weights, nodes: int = 64) -> dict:
    """The Kolmogorov distance between the model's law and its Gaussian equivalent at exact ``delta, gamma`` and
    ``weights``, over a grid that resolves both (logarithmic near 0, fine up to twice the Gaussian edge)."""
    law = vocabulary_law(delta, gamma, weights)
    model = law.distribution(nodes=nodes)
    ge = ge_distribution(law.delta, law.gamma, law.kappa)
    edge = float(bulk.law(law.delta, law.gamma, law.kappa).edges()[-1][1])
    x = np.unique(np.concatenate([[0.0], np.logspace(-9, 0, 200) * edge, np.linspace(0, 3 * edge, 6001)]))
    gap = np.abs(model(x) - ge(x))
    return {"ks": float(gap.max()), "at": float(x[np.argmax(gap)]), "model_error": model.density_error,
            "atom": float(model(np.array([0.0]))[0]), "ge_atom": float(ge(np.array([0.0]))[0])}


def regime_map(deltas, lams, cases) -> list[dict]:
    """Rows ``{delta, gamma, lam, T, weights, ks, gaussian_ok}`` for ``delta`` in ``deltas``, ``lam = delta/gamma`` in
    ``lams`` and ``(T, scheme, mask)`` in ``cases``."""
    rows = []
    for T, scheme, mask in cases:
        w = weights(Model(T=T, weights=scheme, mask=mask)).weights
        for d in deltas:
            for lam in lams:
                g = sp.Rational(d) / sp.Rational(lam)
                r = distance(d, g, w)
                rows.append({"delta": str(d), "gamma": str(g), "lam": str(lam), "T": T,
                             "weights": scheme + (f" {mask}" if mask else ""), "ks": r["ks"],
                             "gaussian_ok": r["ks"] <= RESOLUTION})
    return rows


def regime_figure(folder, rows) -> str:
    """The map: ``log10 KS`` against ``N/V = delta/gamma``, one line per ``(T, weights, delta)``, the resolution dashed."""
    from verify.figures import plt, save

    fig, ax = plt.subplots(figsize=(7, 4.5))
    keys = sorted({(r["T"], r["weights"], r["delta"]) for r in rows}, key=lambda k: (k[0], k[1], float(sp.Rational(k[2]))))
    for T, weights, d in keys:
        sel = [r for r in rows if (r["T"], r["weights"], r["delta"]) == (T, weights, d)]
        lam = [float(sp.Rational(r["lam"])) for r in sel]
        ks = [max(r["ks"], 1e-6) for r in sel]
        ax.loglog(lam, ks, marker="o", ms=3, label=f"T={T} {weights}, $\\delta$={d}")
    ax.axhline(RESOLUTION, ls="--", color="k", lw=1, label="Monte Carlo resolution, d = 2000")
    ax.set_xlabel("uses of a token per position, N/V = $\\delta/\\gamma$")
    ax.set_ylabel("KS(model's law, Gaussian equivalent)")
    ax.set_title("where the Gaussian equivalent is within Monte Carlo resolution")
    ax.legend(fontsize=6, ncol=2)
    return save(fig, folder, "regime_map.png")


def t1_figure(folder, eigenvalues, delta, gamma) -> str:
    """The ``T = 1`` spectrum of one draw against the model's law (atom and density) and the Gaussian equivalent."""
    from verify.figures import plt, save

    law = vocabulary_law(delta, gamma, [1])
    model = law.diagonal()
    ge = bulk.law(law.delta, law.gamma, 1)
    ev = np.asarray(eigenvalues)
    zeros = np.mean(np.abs(ev) <= 1e-9 * ev.max())
    x = np.linspace(1e-3, 1.05 * ev.max(), 2000)
    fig, ax = plt.subplots(figsize=(7, 4.2))
    ax.hist(ev[np.abs(ev) > 1e-9 * ev.max()], bins=120, density=True, weights=None, color="0.8",
            label=f"eigenvalues of $S_c$ (d = {len(ev)}); {100 * zeros:.1f}% at zero")
    # the histogram is of the nonzero eigenvalues: each law's density is divided by its own nonzero mass
    ax.plot(x, float_view(model).density(x) / (1 - float(law.atom_at_zero)), color="C3", lw=1.4,
            label=f"model's law (atom {float(law.atom_at_zero):.3f} at 0)")
    ax.plot(x, np.nan_to_num(ge.density_float(x)) / (1 - float(ge.atom_at_zero)), color="C0", lw=1.2, ls="--",
            label=f"Gaussian equivalent (atom {float(ge.atom_at_zero):.3f}, edge {float(ge.edges()[-1][1]):.2f})")
    ax.set_yscale("log")
    ax.set_ylim(1e-4, None)
    ax.set_xlabel("eigenvalue")
    ax.set_ylabel("density of the nonzero part")
    ax.set_title(f"T = 1, $\\delta$ = {delta}, $\\gamma$ = {gamma}: the finite vocabulary against its Gaussian equivalent")
    ax.legend(fontsize=7)
    return save(fig, folder, "t1_spectrum.png")


MAP_GRID = {"lams": ["1/4", "1/2", "1", "2", "4", "8", "16", "32"],
            "parts": [([(1, "mean", None)], ["1/4", "1", "4"]), ([(2, "mean", None)], ["1"]),
                      ([(8, "causal", "strict")], ["1"]), ([(8, "mean", None)], ["1"])]}
"""The grid of notes/finite_vocabulary.md: ``N/V`` from 1/4 to 32; ``T = 1`` (exact) at three ``delta``, the cavity
cases at ``delta = 1`` (about 40 minutes on this machine)."""


def map_table(rows) -> str:
    """The map as markdown: one row per ``(T, weights, delta)``, one column per ``N/V``; a cross where the distance
    exceeds :data:`RESOLUTION`."""
    lams = list(dict.fromkeys(r["lam"] for r in rows))
    lines = ["| T, weights | delta | " + " | ".join(f"N/V = {lam}" for lam in lams) + " |",
             "|---|---|" + "---|" * len(lams)]
    for key in dict.fromkeys((r["T"], r["weights"], r["delta"]) for r in rows):
        cells = {r["lam"]: f"{r['ks']:.4f}{'' if r['gaussian_ok'] else ' ✗'}" for r in rows
                 if (r["T"], r["weights"], r["delta"]) == key}
        lines.append(f"| {key[0]}, {key[1]} | {key[2]} | " + " | ".join(cells.get(lam, "") for lam in lams) + " |")
    return "\n".join(lines)


def main(folder: str = "notes/figures", d: int = 2000) -> None:
    """The map (table and figure) and the ``T = 1`` spectrum figure (one draw at ``d``, ``delta = gamma = 1``)."""
    from verify.montecarlo.draw import rung
    from verify.montecarlo.trials import run_trials

    rows = [r for cases, deltas in MAP_GRID["parts"] for r in regime_map(deltas, MAP_GRID["lams"], cases)]
    print(map_table(rows))
    print(regime_figure(folder, rows))
    V, N = rung(d, 1, 1)
    model = Model(d=d, V=V, N=N, T=1, signs="iid", weights="mean", mu2=0, centered=True)
    r = run_trials(model, seeds=1, seed0=1, spectrum=True, path="dense", progress=False)
    print(t1_figure(folder, r.spectra[0], 1, 1))


if __name__ == "__main__":
    main()
