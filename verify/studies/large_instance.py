r"""The cavity solver against the model's own law beyond ``T = 1``: against the exact moments, and against the law
conditional on large sampled token matrices; and how many digits the cavity density holds.

``python -m verify.studies.large_instance`` prints the tables of notes/finite_vocabulary.md (about an hour on this
machine; ``--quick`` runs a small version). All at :math:`\delta = \gamma = 1`, weights normalized to sum 1.

* *Moments.* :math:`g_D(-2\kappa)` and :math:`m_S(-4\kappa)` from the cavity (:func:`derive.vocabulary.limit.cavity.resolvent`,
  :func:`derive.vocabulary.limit.cavity.stieltjes`) against the Gauss/Gauss–Radau brackets of the exact moments
  (:mod:`derive.vocabulary.limit.walks`), and the shift a 1% error of the cavity coupling would make.
* *Large instance.* Per draw (``V = N``, a few draws), the law of ``S`` given ``D`` by stochastic Lanczos quadrature
  (:mod:`verify.montecarlo.quadrature`) at :math:`z = x + i\eta`, :math:`\eta \to 0`; the draws' mean and its 99%
  Student-t interval, the quadrature's truncation error (half the steps against all), and the cavity at the same
  points (``stieltjes`` for :math:`\eta > 0`, ``densities`` and its root ``t`` at :math:`\eta = 0`).
* *Digits.* The cavity density's stated error relative to the density, :math:`-\log_{10}(\text{error}/\rho)`, from
  near zero to the tail.
"""
from __future__ import annotations

import argparse
import json
import math
import time

import numpy as np
import sympy as sp

from derive import Model, weights
from derive.vocabulary.limit import cavity, walks
from verify.montecarlo.quadrature import conditional_stieltjes, lanczos_quadrature, token_draw
from verify.stats import mean_ci

__all__ = ["CASES", "case_weights", "moments_row", "reference", "cavity_at", "digits_row", "main"]

CASES = ((2, "mean", None), (2, "causal", None), (4, "mean", None), (4, "causal", None), (8, "mean", None),
         (8, "causal", None), (8, "causal", "strict"))
"""``(T, scheme, mask)``: mean and causal (inclusive mask, and strict at ``T = 8``) pooling."""

X_OVER_KAPPA = (0.01, 0.1, 0.5, 1.0, 2.0, 4.0)
ETA_OVER_KAPPA = (0.1, 0.01, 0.0)
DIGIT_POINTS = (1e-3, 3e-3, 0.01, 0.03, 0.1, 0.3, 1.0, 2.0, 4.0, 8.0)
"""Points :math:`x/\\kappa` of the digits table."""


def case_weights(T, scheme, mask) -> tuple[list, sp.Rational]:
    """The nonzero weights (exact) and :math:`\\kappa = \\sum w^2`."""
    w = [x for x in weights(Model(T=T, weights=scheme, mask=mask)).weights if x != 0]
    return w, sum(x**2 for x in w)


def moments_row(T, scheme, mask, n: int = 10) -> dict:
    """The cavity's ``g_D(-2 kappa)`` and ``m_S(-4 kappa)`` against the brackets of ``n`` (``g_D``) and 8 (``m_S``)
    exact moments."""
    w, kappa = case_weights(T, scheme, mask)
    wf = [float(x) for x in w]
    settings = cavity.Settings(replicas=8)
    out = {"T": T, "scheme": scheme + (f" {mask}" if mask else ""), "kappa": float(kappa)}
    for name, moments, a, solver in (("g_D", walks.token_matrix_moments(w, n, at=(1, 1)), 2 * kappa, cavity.resolvent),
                                     ("m_S", walks.bulk_moments(w, 8, at=(1, 1)), 4 * kappa, cavity.stieltjes)):
        lo, hi = walks.stieltjes_bounds(moments, a)
        found = solver(-float(a), wf, 1, 1, settings)
        out[name] = {"lower": lo, "upper": hi, "cavity": found.value.real, "error": found.error, "bias": found.bias,
                     "outside": max(lo - found.value.real, found.value.real - hi, 0.0)}
    return out


def reference(T, scheme, mask, V: int, draws: int, probes: int, steps: int, points, seed0: int = 0) -> dict:
    """Per point ``z``: the conditional law's :math:`m(z)` per draw, with the full and the half-length quadrature."""
    w, _ = case_weights(T, scheme, mask)
    full, half = {z: [] for z in points}, {z: [] for z in points}
    seconds = 0.0
    for k in range(draws):
        start = time.time()
        quad = lanczos_quadrature(token_draw(V, V, [float(x) for x in w], seed0 + k), 1.0, probes, steps,
                                  10**6 + seed0 + k)
        short = quad.truncated(steps // 2)
        seconds += time.time() - start
        for z in points:
            full[z].append(conditional_stieltjes(z, quad.resolvent, 1.0))
            half[z].append(conditional_stieltjes(z, short.resolvent, 1.0))
    return {"full": full, "half": half, "seconds": seconds, "V": V, "draws": draws, "probes": probes, "steps": steps}


def cavity_at(z: complex, weights) -> tuple[complex, list]:
    """The cavity's :math:`m(z)` and the errors of its two parts: :func:`~derive.vocabulary.limit.cavity.stieltjes` off
    the axis; on it :math:`-1/t` of :func:`~derive.vocabulary.limit.cavity.densities`, whose error is stated for the
    density only (the imaginary part :math:`\\pi\\rho`; NaN for the real part)."""
    if z.imag > 0:
        found = cavity.stieltjes(z, weights, 1, 1, cavity.Settings(replicas=8))
        return found.value, [found.error, found.error]
    e = cavity.densities([z.real], weights, 1, 1)[0]
    return -1 / e.t, [math.nan, math.pi * e.error]


def _interval(values):
    mean, lo, hi = mean_ci(np.asarray(values), 0.99)
    return mean, (hi - lo) / 2


def comparison_rows(T, scheme, mask, ref: dict) -> list[dict]:
    w, kappa = case_weights(T, scheme, mask)
    rows = []
    for z, values in ref["full"].items():
        m, m_err = cavity_at(z, [float(x) for x in w])
        re, re_half = _interval(np.real(values))
        im, im_half = _interval(np.imag(values))
        lanczos = float(np.max(np.abs(np.array(values) - np.array(ref["half"][z]))))
        rows.append({"x": z.real / float(kappa), "eta": z.imag / float(kappa), "cavity": [m.real, m.imag],
                     "cavity_error": m_err, "reference": [re, im], "ci99": [re_half, im_half], "lanczos": lanczos,
                     "difference": [m.real - re, m.imag - im]})
    return rows


def digits_row(T, scheme, mask, points=DIGIT_POINTS) -> list[dict]:
    """The cavity density, its error and digits at ``x = points * kappa``."""
    w, kappa = case_weights(T, scheme, mask)
    xs = [p * float(kappa) for p in points]
    found = cavity.densities(xs, [float(x) for x in w], 1, 1)
    return [{"x": p, "density": e.density, "error": e.error,
             "digits": -math.log10(e.error / e.density) if e.error > 0 else math.inf} for p, e in zip(points, found)]


def _points(kappa):
    return [complex(x * kappa, eta * kappa) for x in X_OVER_KAPPA for eta in ETA_OVER_KAPPA]


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--quick", action="store_true", help="V = 2^15, 3 draws, T = 2 mean only")
    p.add_argument("--V", type=int, default=1 << 18)
    p.add_argument("--draws", type=int, default=6)
    p.add_argument("--probes", type=int, default=8)
    p.add_argument("--steps", type=int, default=240)
    p.add_argument("--parts", default="moments,digits,instance")
    p.add_argument("--json", default="", help="also write the results there")
    args = p.parse_args(argv)
    cases = CASES[:1] if args.quick else CASES
    V, draws = (1 << 15, 3) if args.quick else (args.V, args.draws)
    parts = args.parts.split(",")
    results = {}
    if "moments" in parts:
        print("| T, weights | kappa | g_D(-2 kappa): Gauss, Radau | cavity (error) | m_S(-4 kappa): Gauss, Radau | "
              "cavity (error) |\n|---|---|---|---|---|---|")
        results["moments"] = []
        for case in cases:
            r = moments_row(*case)
            results["moments"].append(r)
            g, m = r["g_D"], r["m_S"]
            print(f"| {r['T']} {r['scheme']} | {r['kappa']:.4f} | {g['lower']:.7f}, {g['upper']:.7f} | "
                  f"{g['cavity']:.7f} ({g['error']:.1e}) | {m['lower']:.7f}, {m['upper']:.7f} | "
                  f"{m['cavity']:.7f} ({m['error']:.1e}) |", flush=True)
    if "digits" in parts:
        results["digits"] = {}
        print("\n| T, weights | " + " | ".join(f"x = {p:g} kappa" for p in DIGIT_POINTS) + " |")
        print("|---|" + "---|" * len(DIGIT_POINTS))
        for case in cases:
            rows = digits_row(*case)
            results["digits"][str(case)] = rows
            print(f"| {case[0]} {case[1]}{' ' + case[2] if case[2] else ''} | " +
                  " | ".join(f"{r['density']:.4g} ± {r['error']:.1e} ({r['digits']:.1f})" for r in rows) + " |",
                  flush=True)
    if "instance" in parts:
        results["instance"] = {}
        for case in cases:
            _, kappa = case_weights(*case)
            ref = reference(*case, V, draws, args.probes, args.steps, _points(float(kappa)))
            rows = comparison_rows(*case, ref)
            results["instance"][str(case)] = {"rows": rows, "seconds": ref["seconds"]}
            print(f"\nT = {case[0]}, {case[1]}{' ' + case[2] if case[2] else ''}: V = N = {V}, {draws} draws, "
                  f"{args.probes} probes, {args.steps} Lanczos steps ({ref['seconds']:.0f} s)\n")
            print("| x/kappa | eta/kappa | cavity m (errors) | large instance m (99% CI) | Lanczos | "
                  "difference / (error + CI) |\n|---|---|---|---|---|---|")
            for r in rows:
                scale = [r["cavity_error"][i] + r["ci99"][i] + r["lanczos"] for i in range(2)]
                print(f"| {r['x']:g} | {r['eta']:g} | {r['cavity'][0]:.5f} + {r['cavity'][1]:.5f}i "
                      f"({r['cavity_error'][0]:.1e}, {r['cavity_error'][1]:.1e}) | {r['reference'][0]:.5f} + {r['reference'][1]:.5f}i "
                      f"(±{r['ci99'][0]:.1e}, ±{r['ci99'][1]:.1e}) | {r['lanczos']:.0e} | "
                      f"{r['difference'][0] / scale[0]:+.2f}, {r['difference'][1] / scale[1]:+.2f} |", flush=True)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(results, f, indent=1, default=str)


if __name__ == "__main__":
    main()
