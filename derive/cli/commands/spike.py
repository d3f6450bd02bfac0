"""``derive spike``: the signal outlier (claims C2-C4) and every further outlier, as derived: for the model's own
``S`` with ``--T --weights --signs`` (finite vocabulary), else for Gaussian-equivalent pooled vectors."""
from __future__ import annotations

import sys

import mpmath

from derive.cache import memo
from derive.errors import ParameterError
from derive.cli.kit import MASK_CHOICES, SCHEMES, SIGN_SPECS, listed
from derive.numbers import check_digits, check_range, format_real, parse_fraction
from derive.gaussian.regime import gaussian_equivalent_warning

__all__ = ["NAME", "HELP", "ASSUMPTIONS", "MODEL_ASSUMPTIONS", "MAX_WORKING_DIGITS", "add_arguments", "exact_or_close",
           "spike", "model_spike", "document",
           "run"]

NAME = "spike"
HELP = "outlier eigenvalues, overlaps and thresholds of S (population and sample level)"

ASSUMPTIONS = ("population level exact in the limit d/V -> delta; sample level for "
               "Gaussian-equivalent pooled vectors with the same covariance, d/N -> gamma")

MODEL_ASSUMPTIONS = ("population level exact in the limit d/V -> delta; sample level for the model's own pooled "
                     "vectors (finite vocabulary, Poisson token reuse), exact for one nonzero weight; for more, the "
                     "token matrix's transforms from quenched cavity populations (the errors stated), on the real "
                     "axis smoothed on the scale 1e-3 t")


def add_arguments(p):
    p.add_argument("--delta", required=True, help="d/V")
    p.add_argument("--gamma", required=True, help="d/N (0 for the population level only)")
    p.add_argument("--alpha", default=None, help="w^T R w (Gaussian-equivalent law, without --T)")
    p.add_argument("--kappa", default=None, help="||w||^2 (Gaussian-equivalent law, without --T)")
    p.add_argument("--mu2", required=True, help="signal strength ||mu||^2")
    p.add_argument("--sum-w", default=None, help="W = sum_t w_t (raw S only; default 1; without --T)")
    p.add_argument("--centered", action="store_true", help="the centered covariance S_c")
    p.add_argument("--T", default=None, help="sequence length: the model's own S, with --weights and --signs")
    p.add_argument("--weights", default=None, metavar=listed(SCHEMES), help="with --T: the weight scheme")
    p.add_argument("--signs", default=None, metavar=listed(SIGN_SPECS), help="with --T: the sign family")
    p.add_argument("--tau", default=None, help="with --weights causal: attention temperature tau >= 0 (default 0)")
    p.add_argument("--mask", default=None, metavar=listed(MASK_CHOICES),
                   help="with --weights causal: inclusive (keys s <= t, default) or strict (s < t)")
    p.add_argument("--digits", default=30, help="significant digits of every real (default 30)")


def exact_or_close(value, name: str, digits: int):
    """A rational input as an exact :class:`fractions.Fraction`; a real SymPy expression (an ``alpha`` of the
    ``gauss`` family holds arcsines) as a rational within ``10^{-(digits + 20)}`` relative of it. SymPy is
    touched only when the input is SymPy's: a query from the command line does not import it."""
    sp = sys.modules.get("sympy")
    if sp is not None and isinstance(value, sp.Basic) and not value.is_Rational:
        approx = sp.N(value, digits + 20)
        if not (approx.is_real and approx.is_finite and approx.is_Number):
            raise ParameterError(name, f"not a finite real number: {value}")
        value = sp.Rational(approx)
    return parse_fraction(value, name)


def _validated(values: dict, digits: int) -> dict:
    from derive.resources import KAPPA_RANGE, RATIO_RANGE

    out = {name: exact_or_close(v, name, digits) for name, v in values.items()}
    check_range(out["delta"], "delta", low=0, low_open=True)
    check_range(out["gamma"], "gamma", low=0)
    check_range(out["kappa"], "kappa", low=0, low_open=True)
    check_range(out["alpha"], "alpha", low=0)
    check_range(out["mu2"], "mu2", low=0)
    # the bulk law's documented ranges (gamma = 0 is the population level alone); beyond them mpmath's
    # evaluation of the outlier functions does not converge (delta = 1e200)
    for name, (low, high) in (("delta", RATIO_RANGE), ("gamma", RATIO_RANGE), ("kappa", KAPPA_RANGE)):
        if (out[name] or name != "gamma") and not low <= out[name] <= high:
            raise ParameterError(name, f"{out[name]} is outside [{low}, {high}], the documented range of {name}")
    return out


MAX_WORKING_DIGITS = 4000
"""Highest working precision tried before a result is declared undecided (a point closer to a
threshold than about ``10^-3000`` relative)."""


def _agreeing(evaluate, digits: int):
    """``evaluate(P)`` (a document of reals to ``digits``) at rising working precisions ``P`` until two
    successive ones agree: near a threshold the overlap cancels as many digits as the distance to it
    has, and the outlier's existence is decided by the sign of a difference as small as that distance.
    Without agreement by :data:`MAX_WORKING_DIGITS` the result is refused (``mu2``: too close to a
    threshold to be decided), never reported."""
    working = digits + 15
    previous = evaluate(working)
    while working <= MAX_WORKING_DIGITS:
        working = 2 * working
        current = evaluate(working)
        if current == previous:
            return current
        previous = current
    raise ParameterError("mu2", f"within about 1e-{MAX_WORKING_DIGITS // 2} (relative) of a threshold: whether the "
                                f"outlier exists is not decided at {MAX_WORKING_DIGITS} digits of working precision")


def spike(delta, gamma, alpha, kappa, mu2, sum_w=1, centered=False, digits=30) -> dict:
    r"""The document of ``derive spike``: :func:`derive.gaussian.outliers.outliers_at` at exact inputs, with every
    real a string of ``digits`` significant digits.

    >>> spike("1/2", "1/4", "1/2", "1/4", 3, digits=6)["population"]["mu2_critical"]
    '0.103553'
    >>> import sympy as sp
    >>> spike("1/2", "1/4", sp.asin(sp.Rational(1, 3)), 1, 4, digits=6)["population"]["outlier"]
    True
    """
    from derive.gaussian.outliers import outliers_at

    digits = check_digits(digits)
    if not isinstance(centered, bool):
        raise ParameterError("centered", f"must be True or False, got {centered!r}")
    p = _validated({"delta": delta, "gamma": gamma, "alpha": alpha, "kappa": kappa, "mu2": mu2, "sum_w": sum_w}, digits)

    def evaluate(working: int):
        with mpmath.workdps(working):
            try:
                o = outliers_at(p["delta"], p["gamma"], p["alpha"], p["kappa"], p["mu2"], sum_w=p["sum_w"],
                                centered=centered)
            except ZeroDivisionError:
                # on a threshold to this precision (the overlap's factor divides by psi'(l) = 0): undecided
                # here, and a fresh object agrees with nothing, so the precision rises
                return object()
        return document(o, digits)

    doc = _agreeing(evaluate, digits)
    doc["law"] = "gaussian-equivalent"
    doc["warning"] = gaussian_equivalent_warning(p["delta"], p["gamma"]) if p["gamma"] > 0 else None
    return doc


def model_spike(delta, gamma, T, weights, signs, mu2, centered=False, tau=None, mask=None, digits=30) -> dict:
    r"""The document of ``derive spike --T``: the outliers of the model's own ``S`` (or ``S_c``).

    The population level (``N = oo``) is the project's (:func:`spike`, with :math:`\alpha, \kappa, W` of the
    weights); the sample level is the finite-vocabulary law's: the signal outlier of
    :meth:`derive.vocabulary.silverstein.GeneralizedMP.spike`, the windows of ``mu2`` in which it stands in a gap of the
    (unbounded) support, and the mass of the law above it (``d`` times it: the bulk eigenvalues expected above
    the outlier at dimension ``d``). At one nonzero weight ``W^2 = kappa`` and the raw ``S`` has no mean outlier. For
    more nonzero weights, :func:`derive.vocabulary.outlier.limit_spike` (estimates with ``*_error``; the raw ``S``'s
    sample-level mean outlier is the Gaussian equivalent's, marked so).

    >>> doc = model_spike("1/4", "1", 1, "mean", "iid", 3, centered=True, digits=8)
    >>> doc["law"], doc["sample"]["eigenvalue"], doc["sample"]["overlap"], doc["bulk"]["right_edge"]
    ('finite-vocabulary', '5.8571217', '0.45899455', 'inf')
    """
    from derive.model.attention import pooling
    from derive.model.signs import check_T
    from derive.numbers import parse_rational
    from derive.vocabulary.law import vocabulary_law

    digits = check_digits(digits)
    p = pooling(weights, check_T(T), signs, tau=tau, mask=mask, digits=digits)
    law = vocabulary_law(delta, gamma, p.weights)
    m = check_range(parse_rational(mu2, "mu2"), "mu2", low=0)
    doc = spike(law.delta, law.gamma, p.alpha, p.kappa, m, sum_w=p.W, centered=centered, digits=digits)
    # the windows of mu2 take seconds (a root search in every gap of the support): derived once per question
    key = {"delta": str(law.delta), "gamma": str(law.gamma), "weights": [str(w) for w in p.weights], "mu2": str(m),
           "digits": digits}
    if law.exact:
        doc["sample"] = memo("model-spike-sample", key, lambda: _model_sample(law.diagonal(), m, digits))
        doc["other_outliers"] = [x for x in doc["other_outliers"] if x["level"] == "population"]
    else:
        key["R"] = [str(x) for x in p.R]
        doc["sample"] = memo("model-spike-limit", key, lambda: _limit_sample(law, p, m, digits))
        # the raw S's mean outlier at sample level is the Gaussian equivalent's (not derived for the model's own S)
        for x in doc["other_outliers"]:
            if x["level"] == "sample":
                x["law"] = "gaussian-equivalent"
    doc["bulk"]["right_edge"] = "inf"
    doc["assumptions"] = MODEL_ASSUMPTIONS
    doc["law"] = law.law
    doc["warning"] = None
    return doc


def _model_sample(L, m, digits: int) -> dict:
    """The sample level of :func:`model_spike` from the exact law ``L`` (:class:`derive.vocabulary.silverstein.GeneralizedMP`)."""
    with mpmath.workdps(digits + 15):
        s = L.spike(m)
        windows = L.spike_windows()
        fmt = lambda v: "inf" if v == mpmath.inf else format_real(v, digits)  # noqa: E731
        return {"outlier": s.outlier, "eigenvalue": None if s.eigenvalue is None else fmt(s.eigenvalue),
                "overlap": fmt(s.overlap), "mu2_critical": fmt(windows[0][0]) if windows else None,
                "mu2_windows": [[fmt(a), fmt(b)] for a, b in windows],
                "bulk_mass_above": None if s.mass_above is None else fmt(s.mass_above)}


def _limit_sample(law, p, m, digits: int) -> dict:
    """The sample level of :func:`model_spike` for more than one nonzero weight
    (:func:`derive.vocabulary.outlier.limit_spike`): each estimate to the digits its error leaves."""
    from derive.cli.commands.bulk import _estimate
    from derive.vocabulary.outlier import limit_spike

    r = limit_spike(law.delta, law.gamma, p.weights, p.R, m)
    est = lambda v, e: None if v is None else _estimate(mpmath.mpf(v), mpmath.mpf(e), digits)  # noqa: E731
    err = lambda e: None if e is None else format_real(e, 2)  # noqa: E731
    return {"outlier": r.outlier, "eigenvalue": est(r.eigenvalue, r.eigenvalue_error),
            "overlap": est(r.overlap, r.overlap_error) if r.outlier else "0",
            "mu2_critical": est(r.mu2_critical, r.mu2_critical_error), "mu2_windows": None,
            "bulk_mass_above": None if r.mass_above is None else format_real(r.mass_above, 2),
            "eigenvalue_error": err(r.eigenvalue_error), "overlap_error": err(r.overlap_error),
            "mu2_critical_error": err(r.mu2_critical_error)}


def document(o, digits: int) -> dict:
    """An :class:`derive.gaussian.outliers.Outliers` as the JSON document of ``derive spike`` (reals to ``digits``)."""
    fmt = lambda x: None if x is None else format_real(x, digits)  # noqa: E731
    doc = {name: {"outlier": lev.outlier, "eigenvalue": fmt(lev.eigenvalue), "overlap": fmt(lev.overlap),
                  "mu2_critical": fmt(lev.mu2_critical)}
           for name, lev in (("population", o.population), ("sample", o.sample))}
    doc["bulk"] = {"right_edge": fmt(o.right_edge), "population_right_edge": fmt(o.population_right_edge)}
    doc["other_outliers"] = [{"cause": x.cause, "level": x.level, "eigenvalue": fmt(x.eigenvalue), "overlap": "0"}
                             for x in o.other_outliers]
    doc["assumptions"] = ASSUMPTIONS
    return doc


def run(args):
    if args.T is not None:
        for name in ("alpha", "kappa", "sum_w"):
            if getattr(args, name) is not None:
                raise ParameterError(name.replace("_", "-"), "follows from --weights for the model's own S: omit it")
        if args.weights is None or args.signs is None:
            raise ParameterError("weights" if args.weights is None else "signs", "is required with --T")
        return model_spike(args.delta, args.gamma, args.T, args.weights, args.signs, args.mu2, centered=args.centered,
                           tau=args.tau, mask=args.mask, digits=args.digits)
    for name in ("weights", "signs", "tau", "mask"):
        if getattr(args, name) is not None:
            raise ParameterError(name, "belongs to the model's own S: give --T with it")
    for name in ("alpha", "kappa"):
        if getattr(args, name) is None:
            raise ParameterError(name, "is required for the Gaussian-equivalent law (or give --T, --weights, --signs)")
    return spike(args.delta, args.gamma, args.alpha, args.kappa, args.mu2,
                 sum_w=args.sum_w if args.sum_w is not None else "1", centered=args.centered, digits=args.digits)
