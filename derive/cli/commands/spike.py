"""``derive spike``: the signal outlier (claims C2-C4) and every further outlier, as derived: for the model's own
``S`` with ``--T --weights --signs`` (finite vocabulary; ``--law gaussian-equivalent`` for the paper's law of those
weights alone), else for Gaussian-equivalent pooled vectors."""
from __future__ import annotations

from derive.cli.kit import add_law, add_scheme, add_signs, scheme_options
from derive.errors import ParameterError
from derive.report.text import spike_text as render

__all__ = ["NAME", "HELP", "DIMENSIONS", "dimensions_off", "add_arguments", "run", "render"]

DIMENSIONS = "ATTENTION_RMT_DIMENSIONS"
"""The environment variable that, set to ``off``, skips ``at_dimension`` as ``--no-dimensions`` does (a test session
or a script that asks for the limit alone many times over)."""

NAME = "spike"
HELP = "outlier eigenvalues, overlaps and thresholds of S (population and sample level)"


def add_arguments(p):
    p.add_argument("--delta", required=True, help="d/V")
    p.add_argument("--gamma", required=True, help="d/N (0 for the population level only)")
    p.add_argument("--alpha", default=None, help="w^T R w (Gaussian-equivalent law, without --T)")
    p.add_argument("--kappa", default=None, help="||w||^2 (Gaussian-equivalent law, without --T)")
    p.add_argument("--mu2", required=True, help="signal strength ||mu||^2")
    p.add_argument("--sum-w", default=None, help="W = sum_t w_t (raw S only; default 1; without --T)")
    p.add_argument("--centered", action="store_true", help="the centered covariance S_c")
    p.add_argument("--T", default=None, help="sequence length: the model's own S, with --weights and --signs")
    add_scheme(p, help="with --T: the weight scheme")
    add_signs(p, help="with --T: the sign family")
    add_law(p, more=". With --T only")
    from derive.resources import DRAWS, MAX_DRAWS, SEED

    p.add_argument("--d", default=None, help="the model's dimension (10 to 1e9): adds finite_size, what a user measures "
                                             "at that d (V, N from delta, gamma; needs --T)")
    from derive.vocabulary.draw.user_d import VOICE_COUNT_DRAWS, VOICE_SAMPLED_DRAWS

    p.add_argument("--draws", default=None, help=f"with --d: draws of the token counts or matrices (default 1024 at one "
                                                 f"nonzero weight, else {DRAWS}; at most {MAX_DRAWS}); without it, at "
                                                 f"each d of at_dimension (default {VOICE_COUNT_DRAWS}, else "
                                                 f"{VOICE_SAMPLED_DRAWS})")
    p.add_argument("--seed", default=None, help=f"the seed of the draws at --d or of at_dimension (default {SEED})")
    p.add_argument("--method", default=None,
                   help="with --d at more than one nonzero weight: 'sampled' (token matrices, up to min(V, N) = 4000) "
                        "or 'spikes' (the token spikes of the limit, seconds once the limit is known); default: sampled "
                        "where it reaches, spikes beyond")
    p.add_argument("--no-dimensions", action="store_true",
                   help=f"with --T and without --d: skip at_dimension, what a user measures at d = 1e3 to 1e6 beside "
                        f"the limit (up to about a minute of CPU cold, kept between runs; also skipped where "
                        f"{DIMENSIONS}=off)")
    p.add_argument("--digits", default=30, help="significant digits of every real (default 30)")
    p.add_argument("--error", default=None,
                   help="with --T at more than one nonzero weight: the error sought for the sample level's eigenvalue "
                        "and overlap (mu2_critical: ten times it; default 1e-3); a smaller one takes longer, a larger "
                        "one less (1e-2: populations 8 times smaller)")


def run(args):
    from derive.report.randomweights import spike_document
    from derive.interface import random_weights
    from derive.model.spec import Model
    from derive.numbers import check_digits

    digits = check_digits(args.digits)
    at_d = _at_d(args)
    if args.T is not None:
        for name in ("alpha", "kappa", "sum_w"):
            if getattr(args, name) is not None:
                raise ParameterError(name.replace("_", "-"), "follows from --weights for the model's own S: omit it")
        if args.weights is None or args.signs is None:
            raise ParameterError("weights" if args.weights is None else "signs", "is required with --T")
        if args.law == "gaussian-equivalent":
            # the paper's law alone is the instant answer: nothing of the model's own law may run
            for name in ("d", "error", "draws", "seed", "method"):
                if getattr(args, name) is not None:
                    raise ParameterError(name, "belongs to the model's own law: drop --law gaussian-equivalent")
        model = Model(d=args.d, delta=args.delta, gamma=args.gamma, T=args.T, weights=args.weights, signs=args.signs,
                      mu2=args.mu2, centered=args.centered, **scheme_options(args))
        dimensions = args.d is None and args.law != "gaussian-equivalent" and not _skipped(args)
        if args.d is None and random_weights(model):
            for name in ("draws", "seed"):
                if getattr(args, name) is not None:
                    raise ParameterError(name, "belongs to at_dimension, which weights that vary from sequence to "
                                               "sequence do not have (the model's own law is not derived for them)")
        return spike_document(model, digits, **at_d, error=_error(args.error), law=args.law, dimensions=dimensions)
    for name in ("weights", "signs", *scheme_options(args), "error", "law", "draws", "seed", "method"):
        if getattr(args, name) is not None:
            raise ParameterError(name, "belongs to the model's own S: give --T with it")
    if args.d is not None:
        raise ParameterError("d", "the expectation at dimension d samples token matrices: give --T, --weights, --signs")
    for name in ("alpha", "kappa"):
        if getattr(args, name) is None:
            raise ParameterError(name, "is required for the Gaussian-equivalent law (or give --T, --weights, --signs)")
    model = Model(delta=args.delta, gamma=args.gamma, alpha=args.alpha, kappa=args.kappa, mu2=args.mu2,
                  sum_w=args.sum_w if args.sum_w is not None else "1", centered=args.centered)
    return spike_document(model, digits)


def _error(text):
    from derive.numbers import check_range, parse_fraction

    return None if text is None else check_range(parse_fraction(text, "error"), "error", low=0, low_open=True)


def _skipped(args) -> bool:
    return args.no_dimensions or dimensions_off()


def dimensions_off() -> bool:
    """Whether :data:`DIMENSIONS` is ``off``: no command computes the law at a dimension it was not asked for
    (``derive spike``'s ``at_dimension``, ``verify mc``'s ``theory_at_d``)."""
    import os

    return os.environ.get(DIMENSIONS, "").strip().lower() == "off"


def _methods() -> dict:
    """``--method``'s names of :data:`derive.vocabulary.draw.user_d.METHODS` at more than one nonzero weight (read
    when asked for: the module is not imported at start-up)."""
    from derive.vocabulary.draw.user_d import SAMPLED, SPIKES

    return {"sampled": SAMPLED, "spikes": SPIKES}


def _at_d(args) -> dict:
    """``draws`` and ``seed`` of the expectation at ``--d`` or, without it, at each ``d`` of ``at_dimension``
    (``--draws`` and ``--seed`` belong to one of the two)."""
    from derive.numbers import check_count
    from derive.resources import MAX_DRAWS, SEED

    if args.method is not None and args.d is None:
        raise ParameterError("method", "chooses how the expectation at --d is computed: give --d")
    if args.d is None and _skipped(args):
        for name in ("draws", "seed"):
            if getattr(args, name) is not None:
                raise ParameterError(name, "belongs to the expectation at dimension d (--d) or to at_dimension, "
                                           "which --no-dimensions skips")
        return {}
    if args.d is not None and args.no_dimensions:
        raise ParameterError("no-dimensions", "skips at_dimension, which --d replaces by finite_size: drop one")
    options = {"draws": None if args.draws is None else check_count(args.draws, "draws", low=1, high=MAX_DRAWS),
               "seed": SEED if args.seed is None else check_count(args.seed, "seed", low=0, high=2**63 - 1)}
    if args.method is not None:
        methods = _methods()
        if args.method not in methods:
            raise ParameterError("method", f"must be one of {', '.join(methods)}, got {args.method!r}")
        if args.method == "spikes" and args.draws is not None:
            raise ParameterError("draws", "the token spikes of the limit draw nothing: drop --draws")
        options["method"] = methods[args.method]
    return options
