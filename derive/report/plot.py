"""``derive bulk --plot PATH``: the density of a law at the requested points, with the law and its parameters in the
title (matplotlib, Agg backend, loaded only when a plot is asked for)."""
from __future__ import annotations

from pathlib import Path

__all__ = ["model_caption", "bulk_plot"]


def model_caption(m) -> str:
    """The parameters of a :class:`~derive.model.spec.Model` as a figure states them.

    >>> from derive.model.spec import Model
    >>> model_caption(Model(delta="1/2", gamma="1/4", T=8, weights="causal", mask="strict", signs="prefix:3"))
    'delta=1/2, gamma=1/4, T=8, causal weights (strict mask, tau=0), prefix:3'
    """
    parts = [f"{name}={getattr(m, name)}" for name in ("delta", "gamma", "d", "V", "N", "T", "kappa", "alpha", "mu2")
             if getattr(m, name) is not None and not (name in ("d", "V", "N") and m.delta is not None)]
    if m.weights is not None:
        parts.append(m.weights.caption)
    if m.signs is not None:
        parts.append(m.signs.name)
    if m.mu2 is not None or m.centered:
        parts.append("centered S_c" if m.centered else "raw S")
    return ", ".join(parts)


def bulk_plot(doc: dict, points: list, m, path: str) -> str:
    """Draw ``doc`` (a ``derive bulk`` document) at its ``points`` into ``path``: the density (with its error bars for
    a cavity estimate), the atom at zero and the support's edges in the legend, and beside the model's own law its
    Gaussian equivalent for the same ``T`` and weights, which the title names; returns the path."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from derive.files import replaced

    x = [float(p) for p in points]
    y = [float(v) for v in doc["density"]]
    fig, ax = plt.subplots(figsize=(5.6, 3.6))
    ax.plot(x, y, "-" if len(x) > 20 else "o-", color="k", lw=1.2, ms=3,
            label=f"density (atom at 0: {float(doc['atom_at_zero']):.4g})")
    if doc.get("density_error"):
        err = float(doc["density_error"])
        ax.fill_between(x, [v - err for v in y], [v + err for v in y], color="0.8", label=f"cavity error {err:.1g}")
    if doc["law"] == "finite-vocabulary":
        from derive.interface import bulk

        # the paper's law for the same T and weights, beside the model's own
        ge = bulk(m, law="gaussian-equivalent")
        ax.plot(x, ge.density_float(x), "--", color="tab:red", lw=1,
                label=f"its Gaussian equivalent (kappa = {float(ge.kappa):.4g})")
    for a, b in doc["support"][:1]:
        ax.axvline(float(a), color="tab:blue", ls=":", lw=0.8, label="support (first interval)")
        if b != "inf":
            ax.axvline(float(b), color="tab:blue", ls=":", lw=0.8)
    ax.set_xlabel("x")
    ax.set_ylabel("density")
    law = ("the model's own law of S (finite vocabulary) and its Gaussian equivalent" if doc["law"] == "finite-vocabulary"
           else f"{doc['law']} law of S")
    ax.set_title(f"{law}:\n{model_caption(m)}", fontsize=8)
    ax.legend(fontsize=7)
    # whole or not at all, a write error one line naming plot (a full disk had raised OSError as a traceback)
    try:
        with replaced(path, "plot") as f:
            fig.savefig(f, format="png", dpi=130, bbox_inches="tight")
    finally:
        plt.close(fig)
    return str(Path(path))
