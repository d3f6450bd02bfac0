"""``verify mc``: Monte Carlo of the model next to the derived prediction for the same parameters."""
import math
import sys

import numpy as np

from derive.cli.kit import add_max_memory, add_scheme, add_signs, listed, scheme_options
from derive.errors import ParameterError
from derive.numbers import check_count, check_digits, format_real
from derive.resources import MAX_MU2, check_trials, set_max_memory
from verify.montecarlo.trials import PATHS, choose_path, memory_model

__all__ = ["NAME", "HELP", "add_arguments", "MAX_MU2", "pooling_inputs", "run", "render"]

NAME = "mc"
HELP = "Monte Carlo of S for given d, V, N, T, signs and weights, with the theory for the same parameters"


def add_arguments(p):
    for name, help_ in (("--d", "embedding dimension"), ("--V", "vocabulary size (even)"),
                        ("--N", "number of sequences"), ("--T", "sequence length")):
        p.add_argument(name, required=True, help=help_)
    add_signs(p, required=True)
    add_scheme(p, required=True)
    p.add_argument("--mu2", required=True, help="signal strength ||mu||^2")
    p.add_argument("--seeds", default="8", help="number of independent trials (default 8)")
    p.add_argument("--seed0", default="0", help="root seed (default 0)")
    p.add_argument("--k", default="4", help="how many top eigenvalues to report (default 4)")
    p.add_argument("--centered", action="store_true", help="the centered covariance S_c")
    p.add_argument("--path", default="auto", metavar=listed(PATHS),
                   help="eigensolver (default auto: dense when small, else mixed; mixed: float32 Lanczos, float64-certified)")
    p.add_argument("--digits", default=30, help="significant digits of the theory's reals")
    add_max_memory(p)
    p.add_argument("--plot", default=None, metavar="PATH",
                   help="also draw the top eigenvalues and overlaps of each seed against the theory (PNG)")


def pooling_inputs(model, digits: int) -> dict:
    """What the command needs of the model's pooling (:func:`derive.interface.weights`): the weights as floats (the
    Monte Carlo) and as 12-digit text (the report), and ``alpha``, ``kappa``, ``W`` as exact ``p/q`` text, an
    irrational one as the rational :func:`derive.cli.documents.spike` reads it. Kept between runs by
    :func:`derive.cache.memo` unless a file gave the weights or ``R``, so a repeated query needs no SymPy."""
    def compute():
        from derive.interface import weights
        from derive.model.spec import exact_or_close

        # the weights carry guard digits: alpha and kappa feed the theory, which must be right to `digits`
        pool = weights(model, digits + 10)
        exact = {name: str(exact_or_close(getattr(pool, name), name, digits)) for name in ("alpha", "kappa", "W")}
        return {"weights": [float(x) for x in pool.weights], "weights_text": [format_real(x, 12) for x in pool.weights],
                **exact}

    scheme, family = model.weights.memo_key, model.signs.memo_key
    if scheme is None or family is None:
        return compute()
    from derive.cache import memo

    return memo("pooling", {**scheme, "T": model.T, "signs": family, "digits": digits}, compute)


def conditional_summary(model, weights, run, fmt) -> dict:
    """Each seed's conditional prediction of the signal outlier (:func:`verify.montecarlo.conditional.conditional_row`, from the
    trial's own token matrix) and Monte Carlo minus it over the seeds: the seed's signal outlier is its top-``k``
    eigenpair most aligned with ``u``; an eigenvalue difference only where the draw has the outlier, an overlap
    difference everywhere (the prediction is 0 without it)."""
    from verify.montecarlo.conditional import CONDITIONAL_LAW, conditional_row
    from verify.montecarlo.draw import drawn_tokens
    from verify.stats import mean_ci

    centered, w = model.centered, np.asarray(weights, dtype=float)
    rows = np.array([conditional_row(drawn_tokens(model, seed), w, model.V, model.d, float(model.mu2), centered)
                     for seed in run.seeds])
    best = np.argmax(run.overlaps, axis=1)
    picked = np.arange(len(best))
    signal_ev, signal_ov = run.top_eigenvalues[picked, best], run.overlaps[picked, best]

    def summary(diff):
        diff = diff[np.isfinite(diff)]
        if not len(diff):
            return {"mean": None, "ci95": [None, None], "seeds": 0}
        mean, lo, hi = mean_ci(diff)
        return {"mean": fmt(mean), "ci95": [fmt(lo), fmt(hi)], "seeds": int(len(diff))}

    return {"law": CONDITIONAL_LAW, "S": "centered" if centered else "raw",
            "per_seed": [{"eigenvalue": fmt(e), "overlap": fmt(o)} for e, o, _ in rows],
            "mc_minus_conditional": {"eigenvalue": summary(signal_ev - rows[:, 0]),
                                     "overlap": summary(signal_ov - rows[:, 1])},
            "mc_signal": {"eigenvalue": [fmt(x) for x in signal_ev], "overlap": [fmt(x) for x in signal_ov]},
            "note": "Monte Carlo's signal outlier is the top-k eigenpair most aligned with u; the prediction is exact "
                    "up to O(1/d) given the draw's token matrix"}


def run(args):
    from derive.cli.documents import spike
    from derive.cli.provenance import provenance
    from derive.gaussian.regime import gaussian_equivalent_warning
    from derive.model.spec import Model
    from verify.montecarlo.trials import run_trials
    from verify.stats import mean_ci

    set_max_memory(args.max_memory)
    if args.plot:
        from derive.files import check_output_target

        check_output_target(args.plot, "plot")
    options = scheme_options(args)
    model = Model(d=args.d, V=args.V, N=args.N, T=args.T, signs=args.signs, weights=args.weights, mu2=args.mu2,
                  centered=args.centered, **options)
    d, V, N, T, mu2 = model.d, model.V, model.N, model.T, model.mu2
    seeds, seed0, k = (check_count(args.seeds, "seeds", low=1), check_count(args.seed0, "seed0"),
                       check_count(args.k, "k", low=1))
    if k >= min(d, N):
        raise ParameterError("k", f"must be below min(d, N) = {min(d, N)}, got {k}")
    if mu2 > MAX_MU2:
        raise ParameterError("mu2", f"must be <= {MAX_MU2} for a float64 simulation, got {args.mu2}")
    digits = check_digits(args.digits)
    # the memory of the solver that will run (the dense model overstates a matrix-free trial several times over)
    check_trials(d, V, N, T, seeds, model.signs, solver=memory_model(choose_path(args.path, False, d, V, N)))
    pool = pooling_inputs(model, digits)
    theory = spike(model.delta, model.gamma, pool["alpha"], pool["kappa"], mu2, sum_w=pool["W"],
                   centered=model.centered, digits=digits)
    if theory["warning"] is not None:
        # the model's limit costs seconds of quenched populations (derive spike --T, kept between runs); each draw's
        # own prediction, exact up to O(1/d), is in "conditional"
        theory["warning"] = gaussian_equivalent_warning(
            model.delta, model.gamma, hint=f"each draw's own prediction is under \"conditional\"; the model's limit: "
                                           f"derive spike --delta {model.delta} --gamma {model.gamma} --T {T} "
                                           f"--weights {args.weights} --signs {args.signs} --mu2 {args.mu2}"
                                           + "".join(f" --{name} {value}" for name, value in options.items()
                                                     if value is not None)
                                           + (" --centered" if model.centered else ""))
    # a few trials in a fresh process run faster on BLAS than after loading numba (choose_engine)
    run = run_trials(model, weights=pool["weights"], k=k, seeds=seeds, seed0=seed0, path=args.path, engine="auto")
    tops, overlaps = run.top_eigenvalues, run.overlaps
    fmt = lambda x: format_real(x, 10) if math.isfinite(x) else None  # noqa: E731
    ev, ov = mean_ci(tops[:, 0]), mean_ci(overlaps[:, 0])
    given = {name: getattr(args, name) for name in ("d", "V", "N", "T", "signs", "weights", *options, "mu2",
                                                    "centered", "seeds", "seed0", "k", "path")
             if getattr(args, name) is not None}
    realized = {"d": d, "V": V, "N": N, "T": T, "signs": model.signs.name, "weights": pool["weights_text"],
                "mu2": str(mu2), "centered": model.centered, "seeds": seeds, "seed0": seed0, "k": k,
                "path": run.path, "delta": str(model.delta), "gamma": str(model.gamma),
                "reuse": str(model.delta / model.gamma * T)}
    realized.update({name: str(value) for name, value in model.weights.values.items()})
    made = provenance()
    if args.plot:
        from derive.cli.plot import model_caption
        from verify.figures import mc_figure

        mc_figure(args.plot, tops, overlaps, theory, f"Monte Carlo: {model_caption(model)}, d={d}, V={V}, N={N}, "
                                                   f"{seeds} seeds")
        print(f"wrote {args.plot}: each seed's top eigenvalues and overlap against the theory", file=sys.stderr)
    return {
        "top_eigenvalues": [[fmt(x) for x in row] for row in tops],
        "overlap": {"mean": fmt(ov[0]), "ci95": [fmt(ov[1]), fmt(ov[2])]},
        "top_eigenvalue": {"mean": fmt(ev[0]), "ci95": [fmt(ev[1]), fmt(ev[2])]},
        "overlaps_top_k": [fmt(x) for x in overlaps.mean(axis=0)],
        "theory": theory,
        "conditional": conditional_summary(model, pool["weights"], run, fmt),
        "inputs": {"given": given, "realized": realized},
        "weights": pool["weights_text"],
        "interval": "Student-t 95% over seeds (infinite for one seed: reported as null)",
        "path": run.path,
        # INTERFACE.md's keys; the whole provenance follows as the document's last key (derive.cli.kit.run_cli)
        "version": made["version"] or "unknown (not installed)",
        "commit": made["commit"],
    }


def render(doc) -> str:
    """The document's fields, then how to read its numbers: Monte Carlo's digits and intervals, the theory's digits,
    and what the conditional comparison is."""
    from derive.cli.kit import readable
    from derive.cli.reading import CI95, DIGITS, MONTE_CARLO, NO_VALUE, reading

    return "\n".join([readable(doc), reading(
        MONTE_CARLO, CI95, "top_eigenvalues: one row per seed, largest first; overlap: |u_hat^T u|^2 of the top "
                           "eigenvector, overlaps_top_k: of each of the top k",
        f"theory: the derived limit ({doc['theory'].get('law')} law); its {DIGITS}",
        "conditional: each draw's own prediction given its token matrix (exact up to O(1/d)); mc_minus_conditional: "
        "Monte Carlo minus it, whose ci95 should hold 0 up to O(1/d)", NO_VALUE)])
