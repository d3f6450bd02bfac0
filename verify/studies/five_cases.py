r"""The five cases of issue 14: the model's own law (or outlier) from the project, Monte Carlo of the model, and the
Gaussian equivalent, side by side; with the ``d * KS`` ladders against both laws.

``python -m verify.studies.five_cases`` prints the tables of notes/finite_vocabulary.md (about 20 minutes on this
machine). Centered ``S_c``; the atom is measured as the fraction of eigenvalues below
:data:`verify.studies.vocabulary.ZERO_TOLERANCE` of the largest.
"""
from __future__ import annotations

import mpmath
import numpy as np
import sympy as sp

import derive
from derive import Model
from derive.gaussian import bulk
from derive.vocabulary.limit.signal import signal_outlier
from verify.montecarlo.draw import rung
from verify.montecarlo.trials import run_trials
from verify.stats import mean_ci
from verify.studies.regime import ge_distribution
from verify.studies.vocabulary import ZERO_TOLERANCE, ks_distance

__all__ = ["BULK_CASES", "bulk_case", "spike_case", "main"]

BULK_CASES = (("T = 1, delta = gamma = 1", 1, "mean", None, "1", "1"),
              ("T = 1, delta = 1/4, gamma = 1", 1, "mean", None, "1/4", "1"),
              ("T = 2, delta = gamma = 1", 2, "mean", None, "1", "1"),
              ("causal T = 8 (strict), delta = gamma = 1", 8, "causal", "strict", "1", "1"))
"""``(name, T, scheme, mask, delta, gamma)`` of the first four cases."""


def bulk_case(T, scheme, mask, delta, gamma, sizes, seeds, seed0: int = 0) -> dict:
    """The model's atom and the Gaussian equivalent's, and per ``d``: the measured fraction of zero eigenvalues,
    ``d * KS`` to the model's law and to the Gaussian equivalent, one value per seed."""
    m = Model(delta=delta, gamma=gamma, T=T, weights=scheme, mask=mask)
    p, law = derive.weights(m), derive.bulk(m)
    model = law.distribution()
    ge = ge_distribution(law.delta, law.gamma, p.kappa)
    with mpmath.workdps(15):
        atom = float(law.atom_at_zero)
    ge_law = bulk.law(law.delta, law.gamma, p.kappa)
    out = {"atom_model": atom, "atom_ge": float(ge_law.atom_at_zero), "ge_right_edge": float(ge_law.edges()[-1][1]),
           "model_density_error": model.density_error, "rows": []}
    for d in sizes:
        V, N = rung(d, law.delta, law.gamma)
        r = run_trials(m.replace(d=d, V=V, N=N, signs="iid", mu2=0, centered=True), weights=p.floats(), seeds=seeds,
                       seed0=seed0 + d, k=1, spectrum=True, path="dense", progress=False)
        zeros = [float(np.mean(np.abs(ev) <= ZERO_TOLERANCE * np.max(np.abs(ev)))) for ev in r.spectra]
        out["rows"].append({"d": d, "S": "centered", "zero_fraction": zeros,
                            "top": [float(ev.max()) for ev in r.spectra],
                            "ks_model_times_d": [d * ks_distance(ev, model) for ev in r.spectra],
                            "ks_ge_times_d": [d * ks_distance(ev, ge) for ev in r.spectra],
                            "min_detectable_rel_error": {"atom": 1 / d}})
    return out


def spike_case(delta, gamma, mu2, sizes, seeds, T: int = 1, scheme: str = "mean", mask=None, signs: str = "iid",
               seed0: int = 0) -> dict:
    """The signal outlier: the model's (derived for one nonzero weight, else ``None``: not known), the Gaussian
    equivalent's, and per ``d`` the Monte Carlo top eigenvalue and overlap with 95% intervals."""
    m = Model(delta=delta, gamma=gamma, T=T, weights=scheme, mask=mask, signs=signs, mu2=str(mu2), centered=True)
    p, law = derive.weights(m), derive.bulk(m)
    with mpmath.workdps(15):
        g = derive.spike(m, law="gaussian-equivalent")
        s = signal_outlier(law.diagonal(), sp.Rational(str(mu2))) if law.exact else None
    out = {"model": (float(s.eigenvalue), float(s.overlap)) if s is not None and s.outlier else None,
           "ge": (float(g.sample.eigenvalue), float(g.sample.overlap)), "rows": []}
    for d in sizes:
        V, N = rung(d, law.delta, law.gamma)
        r = run_trials(m.replace(d=d, V=V, N=N), weights=p.floats(), seeds=seeds, seed0=seed0 + d, k=1, path="dense", progress=False)
        ov = mean_ci(r.overlaps[:, 0])
        out["rows"].append({"d": d, "S": "centered", "seeds": seeds, "top": mean_ci(r.top_eigenvalues[:, 0]),
                            "overlap": ov, "min_detectable_rel_error": {"overlap": (ov[2] - ov[1]) / 2}})
    return out


def _f(xs, digits=1):
    return ", ".join(f"{x:.{digits}f}" for x in xs)


def main(sizes=(500, 1000, 2000), seeds: int = 3) -> None:
    """The tables of notes/finite_vocabulary.md."""
    print("| case | d | zero eigenvalues (MC) | model's atom | GE atom | top eigenvalue (MC) | GE right edge | "
          "d*KS, model's law | d*KS, Gaussian equivalent |")
    print("|---|---|---|---|---|---|---|---|---|")
    for name, T, scheme, mask, delta, gamma in BULK_CASES:
        c = bulk_case(T, scheme, mask, delta, gamma, sizes, seeds)
        for r in c["rows"]:
            print(f"| {name} | {r['d']} | {_f(r['zero_fraction'], 4)} | {c['atom_model']:.4f} | {c['atom_ge']:.4f} | "
                  f"{_f(r['top'], 2)} | {c['ge_right_edge']:.3f} | {_f(r['ks_model_times_d'])} | "
                  f"{_f(r['ks_ge_times_d'])} |", flush=True)
    for label, kw in (("case 5, T = 1", {}), ("T = 2 mean", {"T": 2}),
                      ("T = 8 causal strict, prefix:3", {"T": 8, "scheme": "causal", "mask": "strict",
                                                         "signs": "prefix:3"})):
        c = spike_case("1/4", "1", "3", sizes, 16, **kw)
        model = "not derived" if c["model"] is None else f"{c['model'][0]:.4f}, {c['model'][1]:.4f}"
        print(f"\n{label}, delta = 1/4, gamma = 1, mu2 = 3: model {model}; Gaussian equivalent {c['ge'][0]:.4f}, "
              f"{c['ge'][1]:.4f}\n")
        print("| d | seeds | top eigenvalue (MC, 95%) | overlap (MC, 95%) |")
        print("|---|---|---|---|")
        for r in c["rows"]:
            t, o = r["top"], r["overlap"]
            print(f"| {r['d']} | {r['seeds']} | {t[0]:.3f} [{t[1]:.3f}, {t[2]:.3f}] | {o[0]:.3f} [{o[1]:.3f}, "
                  f"{o[2]:.3f}] |", flush=True)


if __name__ == "__main__":
    main()
