"""``verify mc``: Monte Carlo of the model next to the derived prediction for the same parameters."""
import dataclasses
import math
import sys

import numpy as np

from derive.cli.kit import add_law, add_scheme, add_signs, listed, scheme_options
from derive.errors import ParameterError
from derive.interface import LAWS
from derive.numbers import check_digits, format_real
from derive.resources import limit_wait
from verify.commands.options import add_max_memory
from verify.montecarlo.memory import MAX_MU2, set_max_memory
from verify.montecarlo.trials import PATHS

__all__ = ["NAME", "HELP", "add_arguments", "MAX_MU2", "run", "render"]

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
    add_law(p, default="finite-vocabulary", more=". The theory beside the simulation; the verdict judges each draw "
                                                  "against its own conditional prediction either way")
    add_max_memory(p)
    p.add_argument("--plot", default=None, metavar="PATH",
                   help="also draw the top eigenvalues and overlaps of each seed against the theory (PNG)")


def model_theory(model, digits: int) -> dict:
    """The ``derive spike`` document of the model's own ``S`` in the limit (``law: finite-vocabulary``, with its
    Gaussian equivalent beside it), for the model's ``delta``, ``gamma``, weights, signs, ``mu2`` and matrix; kept
    between runs (:func:`derive.cache.memo`: the quenched populations of ``T >= 2`` take seconds) unless a file or a
    user's object gave the weights or the signs."""
    from derive import Model

    limit = Model(delta=model.delta, gamma=model.gamma, T=model.T, signs=model.signs, weights=model.weights,
                  mu2=model.mu2, centered=model.centered)

    def compute():
        from derive.report.randomweights import spike_document

        return spike_document(limit, digits)

    from derive.cache import memo, model_key

    return memo("mc-theory", model_key(limit, ("weights", "T", "signs", "delta", "gamma", "mu2", "centered"),
                                       digits=digits), compute)


THEORY_WAIT = 60
"""Most CPU-seconds the model's own limit may be estimated to take for ``verify mc``'s theory
(:func:`derive.resources.limit_wait`): a simulation of seconds does not wait ten minutes for its comparison; beyond,
the run is refused naming ``--law gaussian-equivalent`` and ``derive spike``, which computes and keeps it."""

LEVEL, POWER = 0.95, 0.8
"""The level of the verdicts' intervals and the power their smallest detectable difference is stated at."""


def judged(diff: np.ndarray, scale: float, d: int) -> dict:
    r"""Monte Carlo minus its conditional prediction over the seeds (``diff``, NaN where it does not apply): its mean,
    Student-t interval at :data:`LEVEL`, and a verdict. Given the draw's tokens the prediction is exact up to
    :math:`O(1/d)` (the deterministic equivalents of :mod:`derive.vocabulary.draw.outliers`), so a difference within
    ``scale/d`` of zero (``scale`` the quantity's own size) is not a departure at one ``d``: ``agrees`` when the
    interval holds 0, ``departs`` when it stays more than ``scale/d`` away from it, ``inconclusive`` between the two
    or with fewer than two seeds. ``min_detectable``: the smallest difference the run detects with probability
    :data:`POWER` (:func:`verify.stats.min_detectable`).

    >>> judged(np.array([0.01, -0.01, 0.02, 0.0]), 1.0, 1000)["verdict"], judged(np.array([0.5, 0.51, 0.49]), 1, 1000)["verdict"]
    ('agrees', 'departs')
    """
    from verify.stats import Estimate, mean_se, min_detectable

    diff = diff[np.isfinite(diff)]
    if len(diff) < 2:
        return {"mean": None, "ci95": [None, None], "seeds": int(len(diff)), "verdict": "inconclusive",
                "min_detectable": None}
    est = Estimate(*mean_se(diff), len(diff) - 1)
    half = est.half_width(LEVEL)
    lo, hi = est.value - half, est.value + half
    verdict = "agrees" if lo <= 0 <= hi else "departs" if min(abs(lo), abs(hi)) > abs(scale) / d else "inconclusive"
    return {"mean": est.value, "ci95": [lo, hi], "seeds": int(len(diff)), "verdict": verdict,
            "min_detectable": min_detectable(est, LEVEL, POWER)}


def conditional_summary(model, run, fmt) -> dict:
    """Each seed's conditional prediction (:func:`verify.montecarlo.conditional.conditional_observables`, from the
    trial's own token matrix: the run's ``observed``) against the trial, and the verdicts. Where the draw has the
    signal's outlier, its eigenvalue and overlap against the trial's top-``k`` eigenpair most aligned with ``u`` (the
    outlier is the one the prediction locates); where it has none, no eigenvector is singled out by its alignment (the
    best-aligned of ``k`` is positive by construction): the overlap of the top eigenvector of the bulk (below the
    predicted spikes) against the prediction's mean squared overlap of an eigenvector at the bulk's edge."""
    from verify.montecarlo.conditional import CONDITIONAL_LAW
    from verify.montecarlo.draw import attends

    centered, d, k = model.centered, model.d, run.top_eigenvalues.shape[1]
    rows = run.observed
    has = np.array([np.isfinite(r["eigenvalue"]) for r in rows])
    picked = np.arange(len(rows))
    best = np.argmax(run.overlaps, axis=1)
    signal_ev = np.where(has, run.top_eigenvalues[picked, best], np.nan)
    signal_ov = np.where(has, run.overlaps[picked, best], np.nan)
    top = np.array([r["above"] if not h and r["above"] < k else -1 for r, h in zip(rows, has)])
    edge_ov = np.where(top >= 0, run.overlaps[picked, np.maximum(top, 0)], np.nan)
    predicted = {name: np.array([r[name] for r in rows], dtype=float) for name in ("eigenvalue", "overlap", "edge_overlap")}
    predicted["overlap"] = np.where(has, predicted["overlap"], np.nan)
    predicted["edge_overlap"] = np.where(top >= 0, predicted["edge_overlap"], np.nan)
    scale = {"eigenvalue": float(np.nanmean(predicted["eigenvalue"])) if has.any() else 1.0, "overlap": 1.0,
             "edge_overlap": 1.0}
    measured = {"eigenvalue": signal_ev, "overlap": signal_ov, "edge_overlap": edge_ov}
    # the conditional law takes the token matrix as independent of the table; attention weights computed from the table
    # depend on it at O(d^-1/2), so a difference below scale/sqrt(d) is not a departure there
    horizon = math.sqrt(d) if attends(model) else d
    verdicts = {name: judged(measured[name] - predicted[name], scale[name], horizon) for name in measured}
    def shown(j):
        return {"mean": fmt(j["mean"]) if j["mean"] is not None else None,
                "ci95": [fmt(x) if x is not None else None for x in j["ci95"]], "seeds": j["seeds"]}

    doc = {"law": CONDITIONAL_LAW, "S": "centered" if centered else "raw",
           "per_seed": [{"eigenvalue": fmt(r["eigenvalue"]), "overlap": fmt(r["overlap"]) if h else "0",
                         "edge_overlap": None if h else fmt(r["edge_overlap"]), "above": r["above"]}
                        for r, h in zip(rows, has)],
           "mc_minus_conditional": {name: shown(v) for name, v in verdicts.items()},
           "mc_signal": {"eigenvalue": [fmt(x) for x in signal_ev], "overlap": [fmt(x) for x in signal_ov],
                         "edge_overlap": [fmt(x) for x in edge_ov]},
           "note": "with the signal's outlier in the draw: Monte Carlo's is the top-k eigenpair most aligned with u; "
                   "without it: the top eigenvector below the predicted spikes, against the mean squared overlap "
                   "with u of an eigenvector at the bulk's edge (edge_overlap). The prediction is exact up to O(1/d) "
                   "given the draw's token matrix" + (
                       "; here the token matrix holds each sequence's realized attention weights, which depend on the "
                       "table at O(d^-1/2) (the conditional law takes them as independent of it): exact up to "
                       "O(d^-1/2)" if attends(model) else "")}
    return doc, verdicts


def verdict(verdicts: dict, fmt, exact_to: str = "O(1/d)") -> dict:
    """The document's ``verdict``: Monte Carlo against the model's law through the conditional predictions
    (:func:`judged`): ``eigenvalue`` and ``overlap`` of the signal's outlier in the draws that have it; where none
    has it, ``overlap`` is the top of the bulk's against its predicted edge overlap (and ``eigenvalue`` is
    ``inconclusive``: there is no outlier to locate); ``top_of_bulk`` judges that comparison wherever draws have no
    outlier; ``min_detectable`` the smallest difference each comparison would detect."""
    signal = verdicts["overlap"]["seeds"] > 0
    overlap = verdicts["overlap"] if signal else verdicts["edge_overlap"]
    out = {"eigenvalue": verdicts["eigenvalue"]["verdict"], "overlap": overlap["verdict"],
           "top_of_bulk": verdicts["edge_overlap"]["verdict"] if verdicts["edge_overlap"]["seeds"] else None,
           "min_detectable": {"eigenvalue": verdicts["eigenvalue"]["min_detectable"],
                              "overlap": overlap["min_detectable"]},
           "against": f"the conditional predictions (the model's own law given each draw's tokens, exact up to {exact_to})",
           "level": LEVEL, "power": POWER}
    out["min_detectable"] = {k: None if v is None else fmt(v) for k, v in out["min_detectable"].items()}
    return out


def theory_at_d(model, digits: int) -> dict:
    """The model's own law at the run's ``d, V, N`` (``theory_at_d``): ``derive spike --d``'s ``finite_size`` with the
    default voice's method (:func:`derive.vocabulary.draw.user_d.voice_method`: token counts in seconds at one nonzero
    weight, a few token matrices where they fit its bound, else the token spikes of the limit), ``"unavailable": null``; else every field null and
    ``unavailable`` the reason (weights that vary from sequence to sequence, a ``d`` below 10, sizes beyond the bound)."""
    from derive.interface import finite_size, random_weights
    from derive.report.documents import at_dimension_document
    from derive.vocabulary.draw.user_d import voice_method

    from derive.cli.commands.spike import DIMENSIONS, dimensions_off

    if random_weights(model):
        return at_dimension_document([(model.d, None, "the expectation at d is derived for weights shared by every "
                                                      "sequence; these vary from sequence to sequence")], digits)[0]
    if dimensions_off():
        return at_dimension_document([(model.d, None, f"skipped ({DIMENSIONS}=off)")], digits)[0]
    try:
        method, n = voice_method(model)
        row = (model.d, finite_size(model, n, None, method), None)
    except ParameterError as e:
        # the reason this d is out of reach, never a value in its place
        row = (model.d, None, e.reason)
    return at_dimension_document([row], digits)[0]


def verdict_at_d(at_d: dict, theory: dict, ev, ov, index: int, fmt) -> dict:
    """Monte Carlo against the model's law at its own ``d`` (``theory_at_d``): the top eigenvalue's and the top
    eigenvector's overlap (``index``: how many outliers of the limit stand above them, the raw ``S``'s mean outlier,
    skipped) ``agrees`` where the run's 95% interval meets the theory's mean +- its error (which covers the truth),
    ``departs`` where it does not, ``inconclusive`` without an interval (one seed) or without the theory at ``d``. And
    ``limit``: where the limit (``theory.sample``) lies outside the run's interval, why (it is for ``d -> oo``) and what
    to expect at this ``d`` instead; ``None`` where it lies inside."""
    def judge(name, mc):
        if at_d["unavailable"] is not None or at_d[name] is None or mc[1] is None:
            return "inconclusive"
        mean, error = float(at_d[name]["mean"]), float(at_d[name]["error"])
        return "agrees" if mc[1] - error <= mean <= mc[2] + error else "departs"

    out = {"eigenvalue": judge("eigenvalue", ev), "overlap": judge("overlap", ov),
           "against": "theory_at_d: the model's own law at this d, V, N, its mean over draws +- an error that covers "
                      "its truth, against Monte Carlo's 95% interval",
           "index": index, "limit": None}
    outside = []
    for name, mc, limit in (("eigenvalue", ev, theory["sample"].get("eigenvalue")),
                            ("overlap", ov, theory["sample"].get("overlap"))):
        if limit is None or mc[1] is None or mc[1] <= float(limit) <= mc[2]:
            continue
        expect = (f"at d = {at_d['d']} (V = {at_d['V']}, N = {at_d['N']}) the model's law gives "
                  f"{at_d[name]['mean']} +- {at_d[name]['error']} (theory_at_d)" if at_d["unavailable"] is None
                  else f"the theory at this d is unavailable ({at_d['unavailable']})")
        outside.append(f"the limit's {name} {float(limit):.6g} lies outside this run's ci95 [{fmt(mc[1])}, {fmt(mc[2])}]: the "
                       f"limit is for d -> oo; {expect}")
    out["limit"] = "; ".join(outside) or None
    return out


def _above(theory: dict, at_d: dict) -> int:
    """How many outliers of the limit's sample level other than the signal's (the raw ``S``'s mean outlier) stand
    above the top eigenvalue a user measures at ``d``: Monte Carlo's eigenpair at that index is the one compared."""
    if at_d["unavailable"] is not None:
        return 0
    top = float(at_d["eigenvalue"]["mean"]) + float(at_d["eigenvalue"]["error"])
    return sum(1 for x in theory.get("other_outliers", [])
               if x.get("level") == "sample" and x.get("eigenvalue") is not None and float(x["eigenvalue"]) > top)


def run(args):
    from derive.report.provenance import provenance
    from derive.model.spec import Model
    from verify.montecarlo.conditional import conditional_observables
    from verify.montecarlo.trials import run_request, trials_request
    from verify.stats import mean_ci

    set_max_memory(args.max_memory)
    if args.plot:
        from derive.files import check_output_target

        check_output_target(args.plot, "plot")
    options = scheme_options(args)
    model = Model(d=args.d, V=args.V, N=args.N, T=args.T, signs=args.signs, weights=args.weights, mu2=args.mu2,
                  centered=args.centered, **options)
    d, V, N, T, mu2 = model.d, model.V, model.N, model.T, model.mu2
    # the run checked once, here (k, seeds, the trial's memory on the solver that will run): run_request trusts it;
    # a few trials in a fresh process run faster on BLAS than after loading numba (choose_engine)
    request = trials_request(model, k=args.k, seeds=args.seeds, seed0=args.seed0, path=args.path, engine="auto",
                             text=True)
    seeds, seed0, k = request.seeds, request.seed0, request.k
    if mu2 > MAX_MU2:
        raise ParameterError("mu2", f"must be <= {MAX_MU2} for a float64 simulation, got {args.mu2}")
    digits = check_digits(args.digits)
    if args.law not in LAWS:
        raise ParameterError("law", f"must be one of {', '.join(LAWS)}, got {args.law!r}")
    from derive.interface import pooling_scalars, random_weights

    pool = pooling_scalars(model, digits)
    from verify.montecarlo.draw import attends

    if args.law == "finite-vocabulary" or random_weights(model):
        # weights that vary from sequence to sequence in the limit have one law derived: the Gaussian equivalent with
        # each sequence's weights (the model's own law saying it is not derived), whichever law was asked; attention
        # whose limit weights are shared by every sequence has the laws of those weights
        with limit_wait(THEORY_WAIT, "CPU-s verify mc waits for its theory", reuse="N"):
            theory = model_theory(model, digits)
    else:
        from derive.report.documents import spike_document

        # the door's model, its pooling the exact scalars computed (or kept) above: a repeated query needs no SymPy
        theory = spike_document(model.gaussian_equivalent(pool["alpha"], pool["kappa"], pool["W"]), digits)
        if theory["warning"] is not None:
            from derive.gaussian.regime import gaussian_equivalent_warning

            theory["warning"] = gaussian_equivalent_warning(
                model, hint="each draw's own prediction is under \"conditional\"; without --law the theory is the "
                            "model's own limit")
    if not attends(model):
        # the model's weights, computed above for the theory (a scheme that attends pools each sequence with its own
        # attention weights, computed in each draw)
        request = dataclasses.replace(request, weights=np.array(pool["weights"]))
    # each draw's conditional prediction is made from its tokens while the trial holds them (not drawn again)
    run = run_request(request, observe=lambda data, _: conditional_observables(
        data.tokens, data.weights, V, d, float(mu2), model.centered))
    tops, overlaps = run.top_eigenvalues, run.overlaps
    fmt = lambda x: format_real(x, 10) if math.isfinite(x) else None  # noqa: E731
    # each interval within the range its quantity cannot leave: S is positive semi-definite, an overlap lies in [0, 1]
    ev, ov = mean_ci(tops[:, 0], support=(0, math.inf)), mean_ci(overlaps[:, 0], support=(0, 1))
    given = {name: getattr(args, name) for name in ("d", "V", "N", "T", "signs", "weights", *options, "mu2",
                                                    "centered", "seeds", "seed0", "k", "path", "law")
             if getattr(args, name) is not None}
    realized = {"d": d, "V": V, "N": N, "T": T, "signs": model.signs.name, "weights": pool["weights_text"],
                "mu2": str(mu2), "centered": model.centered, "seeds": seeds, "seed0": seed0, "k": k,
                "path": run.path, "delta": str(model.delta), "gamma": str(model.gamma),
                "reuse": str(model.delta / model.gamma * T)}
    realized.update({name: str(value) for name, value in model.weights.values.items()})
    conditional, judgements = conditional_summary(model, run, fmt)
    at_d = theory_at_d(model, digits)
    index = min(_above(theory, at_d), k - 1)
    # the top after the limit's other outliers (the raw S's mean outlier) is what theory_at_d describes
    ev_d = ev if index == 0 else mean_ci(tops[:, index], support=(0, math.inf))
    ov_d = ov if index == 0 else mean_ci(overlaps[:, index], support=(0, 1))
    ev_d, ov_d = (tuple(None if x is None or not math.isfinite(x) else x for x in c) for c in (ev_d, ov_d))
    made = provenance()
    if args.plot:
        from derive.report.plot import model_caption
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
        "conditional": conditional,
        "verdict": verdict(judgements, fmt, "O(d^-1/2)" if attends(model) else "O(1/d)"),
        "theory_at_d": at_d,
        "verdict_at_d": verdict_at_d(at_d, theory, ev_d, ov_d, index, fmt),
        "inputs": {"given": given, "realized": realized},
        "weights": pool["weights_text"],
        "interval": "Student-t 95% over seeds (infinite for one seed: reported as null)",
        "path": run.path,
        # INTERFACE.md's keys; the whole provenance follows as the document's last key (derive.cli.kit.run_cli)
        "version": made["version"] or "unknown (not installed)",
        "commit": made["commit"],
    }


MC_FIELDS = (
    (("top_eigenvalues",), "top_eigenvalues: the top k eigenvalues of S (S_c with --centered), one row per seed, largest "
                           "first"),
    (("top_eigenvalue", "overlap", "overlaps_top_k"),
     "top_eigenvalue, overlap: the mean over the seeds of the top eigenvalue and of |u_hat^T u|^2 of the top "
     "eigenvector (mean, ci95); overlaps_top_k: the mean overlap of each of the top k eigenvectors"),
    (("conditional", "S"), "conditional: each draw's own prediction given its token matrix (law: conditional; S: raw or "
                           "centered), exact up to O(1/d)"),
    (("per_seed", "edge_overlap", "above"),
     "per_seed: for each seed the prediction's eigenvalue and overlap (- and 0 where the draw has no outlier), "
     "edge_overlap (draws without it: the mean squared overlap with u of the bulk's top eigenvector) and above: how "
     "many eigenvalues the prediction puts above the bulk's edge besides the signal's (spikes of tokens used many "
     "times, the raw S's mean outlier; they may sit below the signal's)"),
    (("mc_signal",), "mc_signal: Monte Carlo per seed: the eigenvalue and overlap of the top-k eigenpair most aligned "
                     "with u (draws with the outlier), edge_overlap: that of the eigenvector below the above predicted "
                     "ones (draws without)"),
    (("mc_minus_conditional", "seeds"), "mc_minus_conditional: Monte Carlo minus the prediction, mean and ci95 over the "
                                        "seeds it is over, whose ci95 should hold 0 up to O(1/d)"),
    (("note",), "note: how the two are paired"),
    (("verdict", "against"),
     "verdict: Monte Carlo against the prediction (against: what is compared): agrees (the interval of the difference "
     "holds 0), departs (it stays away from 0 by more than the prediction leaves out), inconclusive (between the two, "
     "or fewer than two draws); top_of_bulk: that of draws without the outlier (- if all have it)"),
    (("min_detectable", "level", "power"),
     "min_detectable: the smallest difference each comparison detects with probability power at level"),
    (("inputs", "given", "realized"),
     "inputs: every parameter given (as typed) and realized (as used: delta = d/V, gamma = d/N, reuse = N T / V the "
     "mean number of uses of a token, path the eigensolver chosen)"),
    (("weights", "interval", "path"), "weights: the weights simulated; interval: how the intervals are made; path: the "
                                      "eigensolver that ran"),
    (("theory_at_d", "verdict_at_d", "limit", "index", "method", "outlier_probability", "sd", "signal_overlap"),
     "theory_at_d: what the model's law gives at this run's d, V, N (method: how; each a mean over draws +- an error "
     "covering its truth, sd their spread; outlier_probability: the chance the signal's eigenvalue is the top one, "
     "signal_overlap: the signal eigenvector's overlap wherever it sits; unavailable: why not); verdict_at_d: Monte Carlo's top eigenvalue and overlap against it (index: which eigenvalue "
     "is the signal's); its limit: why the limit (for d -> oo) lies outside this run's interval, where it does"),
    (("version", "commit"), "version, commit: the package and the git commit that ran"),
)
"""What each field of ``verify mc``'s own part of its document means (:func:`derive.report.reading.glossary`); its
``theory`` is read as ``derive spike``'s (:data:`derive.report.reading.SPIKE_FIELDS`)."""


def render(doc) -> str:
    """The document's fields, then how to read each: Monte Carlo's digits and intervals, its own fields, and its
    theory's fields as ``derive spike`` explains them."""
    from derive.report.text import readable
    from derive.report.reading import (CI95, DIGITS, MONTE_CARLO, NO_VALUE, SPIKE_FIELDS, estimates, glossary,
                                       reading)

    theory = doc["theory"]
    own = {k: v for k, v in doc.items() if k != "theory"}
    return "\n".join([readable(doc), reading(
        MONTE_CARLO, CI95, NO_VALUE, *glossary(own, MC_FIELDS),
        f"theory: the derived limit ({theory.get('law')} law), its fields as derive spike prints them; its {DIGITS}",
        *(f"theory {line}" for line in glossary(theory, SPIKE_FIELDS)),
        *(estimates(theory[level], f"theory {level}") for level in ("population", "sample") if level in theory))])
