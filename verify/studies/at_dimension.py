r"""``derive spike --d`` against Monte Carlo of the model: the expectation at the user's ``d`` over sampled token
matrices (:mod:`derive.vocabulary.draw.finite_size`) beside the same quantities measured on independent trials.

Monte Carlo solves each trial on an axis of :math:`\mu_2` (:func:`verify.montecarlo.trials.run_axis`: one draw, every
:math:`\mu_2`, centered :math:`S_c`), so that the top of the bulk is the top eigenvalue at :math:`\mu_2 = 0` of the same
draw. Per :math:`\mu_2` it compares

* the mean top eigenvalue and the mean squared overlap of the top eigenvector with ``u``
  (:meth:`derive.vocabulary.draw.finite_size.DrawOutlier.at`);
* the fraction of draws whose top eigenvector has squared overlap above :data:`TAU`, and per draw the smallest
  :math:`\mu_2` at which it does (the overlap threshold, interpolated on the axis; derived: by bisection on each
  draw's overlap), beside the derived :math:`\mu_{2,c}` (where the signal's eigenvalue reaches the top of the bulk)
  and the derived ``outlier_probability``.

``python -m verify.studies.at_dimension`` prints the tables of notes/finite_vocabulary.md.
"""
from __future__ import annotations

import argparse

import numpy as np

from verify.stats import mean_se

__all__ = ["TAU", "CASES", "model", "monte_carlo", "same_draws", "overlap_threshold", "mc_overlap_threshold", "compare", "table",
           "main"]

TAU = 0.05
"""The squared overlap above which a top eigenvector counts as the signal's in the threshold comparison: far above the
:math:`O(1/d)` of a bulk eigenvector, far below the overlaps just above the thresholds (0.1 to 0.3)."""

CASES = {
    "issue": dict(T=16, weights="causal", mask="strict", signs="iid", delta="1/2", gamma="4",
                  mu2s=(2.5, 3.0, 3.5, 4.0, 5.0, 6.0, 8.0)),
    "prefix": dict(T=8, weights="mean", signs="prefix:3", delta="1/2", gamma="2", mu2s=(0.8, 1.0, 1.2, 1.5, 2.0, 3.0)),
    "T1": dict(T=1, weights="mean", signs="iid", delta="1/2", gamma="1", mu2s=(2.0, 2.5, 3.0, 3.5, 4.0, 6.0)),
}
"""The points of the comparison: the issue's (``T = 16`` strict causal, ``N T / V = 2``), ``T = 8`` mean pooling on
``prefix:3`` (``N T / V = 2``) and ``T = 1``; each with its axis of :math:`\\mu_2` through the thresholds."""


def model(case: dict, d: int, mu2=0):
    """The centered :class:`derive.Model` of a case at dimension ``d``."""
    import derive

    extra = {"mask": case["mask"]} if "mask" in case else {}
    return derive.Model(d=d, delta=case["delta"], gamma=case["gamma"], T=case["T"], weights=case["weights"],
                        signs=case["signs"], mu2=str(mu2), centered=True, **extra)


def monte_carlo(case: dict, d: int, seeds: int, seed0: int = 1) -> dict:
    """``seeds`` trials of the case at ``d`` on its axis (and at :math:`\\mu_2 = 0`): ``top0`` (``K``), ``top`` and
    ``overlap`` (``K x len(mu2s)``) of the top eigenpair of :math:`S_c`, and each trial's ``tokens``."""
    from derive.vocabulary.draw.sampling import sizes
    from verify.montecarlo.draw import trial_weights
    from verify.montecarlo.trials import run_axis

    m = model(case, d)
    V, N = sizes(d, m.delta, m.gamma)
    m = m.replace(d=d, V=V, N=N)
    # each trial's tokens kept while it holds them, not drawn again from its seed
    r = run_axis(m, [0.0] + list(case["mu2s"]), k=2, seeds=seeds, seed0=seed0, observe=lambda data, _: data.tokens)
    return {"top0": r.top_eigenvalues[:, 0, 0], "top": r.top_eigenvalues[:, 1:, 0], "overlap": r.overlaps[:, 1:, 0],
            "tokens": list(r.observed), "weights": trial_weights(m), "V": V}


def same_draws(case: dict, d: int, mc: dict) -> list:
    """The :class:`derive.vocabulary.draw.finite_size.DrawOutlier` of each Monte Carlo trial's own token matrix."""
    from derive.vocabulary.draw.finite_size import draw_outlier
    from derive.vocabulary.draw.sampling import class_signs
    from derive.vocabulary.draw.spectrum import spectral_measures
    from derive.vocabulary.draw.tokenmatrix import TokenMatrix

    V = mc["V"]
    return [draw_outlier(spectral_measures(TokenMatrix.from_tokens(t, mc["weights"], V), class_signs(V), d, True), True)
            for t in mc["tokens"]]


def overlap_threshold(o, tau: float = TAU, high: float = 1e4) -> float:
    """The smallest :math:`\\mu_2` at which the draw's signal stands above the bulk with squared overlap at least
    ``tau`` (:class:`derive.vocabulary.draw.finite_size.DrawOutlier`; the overlap increases with :math:`\\mu_2` above
    the threshold), by bisection; ``mu2_critical`` at ``tau = 0``."""
    if tau <= 0:
        return o.mu2_critical
    lo, hi = 0.0, max(2 * o.mu2_critical, 1.0)
    while o.at(hi)[2] < tau:
        lo, hi = hi, 2 * hi
        if hi > high:
            return np.inf
    for _ in range(60):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if o.at(mid)[2] < tau else (lo, mid)
    return (lo + hi) / 2


def mc_overlap_threshold(mu2s, overlaps, tau: float = TAU) -> float:
    """The first :math:`\\mu_2` of the axis at which ``overlaps`` reaches ``tau``, by linear interpolation from the
    point before (``nan`` if never, the first point if already there)."""
    above = np.flatnonzero(np.asarray(overlaps) >= tau)
    if not above.size:
        return float("nan")
    i = int(above[0])
    if i == 0:
        return float(mu2s[0])
    a, b = overlaps[i - 1], overlaps[i]
    return float(mu2s[i - 1] + (mu2s[i] - mu2s[i - 1]) * (tau - a) / (b - a))


def compare(case: dict, d: int, seeds: int, draws: int, seed0: int = 1, seed: int = 0) -> dict:
    """Monte Carlo (``seeds`` trials) and the derived expectation (``draws`` token matrices) of one case at ``d``: the
    top of the bulk, the overlap thresholds, and per :math:`\\mu_2` the rows of the module docstring, each ``(mean,
    standard error)``."""
    from derive.vocabulary.draw.finite_size import sample_draws

    mc = monte_carlo(case, d, seeds, seed0)
    own = same_draws(case, d, mc)
    sampled = sample_draws(model(case, d), draws, seed)
    mu2s = np.array(case["mu2s"])
    rows = []
    for i, mu2 in enumerate(mu2s):
        r = sampled.at(mu2)
        top = [row[3] for row in r.rows]
        given = np.array([o.at(mu2)[1:] for o in own])
        rows.append({"mu2": float(mu2), "mc_top": mean_se(mc["top"][:, i]), "mc_overlap": mean_se(mc["overlap"][:, i]),
                     "mc_above_tau": mean_se(mc["overlap"][:, i] >= TAU), "top": mean_se(top),
                     "overlap": (r.overlap.mean, r.overlap.se), "probability": (r.outlier_probability, r.probability_se),
                     "above_tau": mean_se([row[4] >= TAU for row in r.rows]),
                     "mc_minus_own_top": mean_se(mc["top"][:, i] - given[:, 0]),
                     "mc_minus_own_overlap": mean_se(mc["overlap"][:, i] - given[:, 1])})
    mc_thresholds = np.array([mc_overlap_threshold(mu2s, ov) for ov in mc["overlap"]])
    return {"d": d, "V": sampled.V, "N": sampled.N, "seeds": seeds, "draws": draws,
            "mc_top0": mean_se(mc["top0"]), "top0": mean_se([o.expected_top for o in sampled.outliers]),
            "mc_minus_own_top0": mean_se(mc["top0"] - np.array([o.expected_top for o in own])),
            "mc_minus_own_edge": mean_se(mc["top0"] - np.array([o.top for o in own])),
            "edge_top0": mean_se([o.top for o in sampled.outliers]),
            "mc_threshold": mean_se(mc_thresholds[np.isfinite(mc_thresholds)]),
            "mc_threshold_found": int(np.isfinite(mc_thresholds).sum()),
            "threshold": mean_se([overlap_threshold(o) for o in sampled.outliers]),
            "mu2_critical": mean_se([o.mu2_critical for o in sampled.outliers]), "rows": rows}


def _cell(pair, digits: int = 3) -> str:
    return f"{pair[0]:.{digits}f} ± {pair[1]:.{digits}f}"


def table(name: str, c: dict) -> str:
    """Markdown of one :func:`compare`."""
    lines = [f"**{name}**, d = {c['d']} (V = {c['V']}, N = {c['N']}), {c['seeds']} Monte Carlo trials, {c['draws']} "
             f"sampled token matrices (± one standard error)", "",
             f"Top of the bulk: Monte Carlo {_cell(c['mc_top0'], 4)}; derived {_cell(c['top0'], 4)} (the soft edge "
             f"itself: {_cell(c['edge_top0'], 4)}); Monte Carlo minus the derived top of each trial's own token matrix "
             f"{_cell(c['mc_minus_own_top0'], 4)} (minus its soft edge: {_cell(c['mc_minus_own_edge'], 4)}). Overlap threshold (squared overlap {TAU}): Monte Carlo "
             f"{_cell(c['mc_threshold'])} ({c['mc_threshold_found']} trials reach it); derived {_cell(c['threshold'])}; "
             f"derived mu2_critical {_cell(c['mu2_critical'])}.", "",
             "| mu2 | top eigenvalue MC | derived | top overlap MC | derived | P(overlap > 0.05) MC | derived | "
             "outlier_probability |", "|---|---|---|---|---|---|---|---|"]
    for r in c["rows"]:
        lines.append(f"| {r['mu2']:g} | {_cell(r['mc_top'], 4)} | {_cell(r['top'], 4)} | {_cell(r['mc_overlap'])} | "
                     f"{_cell(r['overlap'])} | {_cell(r['mc_above_tau'], 2)} | {_cell(r['above_tau'], 2)} | "
                     f"{_cell(r['probability'], 2)} |")
    return "\n".join(lines)


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--case", action="append", choices=sorted(CASES), help="default: all")
    p.add_argument("--d", type=int, action="append", help="default: 1000")
    p.add_argument("--seeds", type=int, default=64)
    p.add_argument("--draws", type=int, default=256)
    args = p.parse_args(argv)
    for name in args.case or sorted(CASES):
        for d in args.d or [1000]:
            print(table(name, compare(CASES[name], d, args.seeds, args.draws)), flush=True)
            print(flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
