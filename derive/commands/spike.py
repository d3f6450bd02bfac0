"""``derive spike``: the signal outlier (claims C2-C4) and every further outlier, as derived."""
from __future__ import annotations

import sys

import mpmath

from derive.errors import ParameterError
from derive.numbers import check_digits, check_range, format_real, parse_fraction

__all__ = ["NAME", "HELP", "ASSUMPTIONS", "MAX_WORKING_DIGITS", "add_arguments", "exact_or_close", "spike", "document",
           "run"]

NAME = "spike"
HELP = "outlier eigenvalues, overlaps and thresholds of S (population and sample level)"

ASSUMPTIONS = ("population level exact in the limit d/V -> delta; sample level for "
               "Gaussian-equivalent pooled vectors with the same covariance, d/N -> gamma")


def add_arguments(p):
    p.add_argument("--delta", required=True, help="d/V")
    p.add_argument("--gamma", required=True, help="d/N (0 for the population level only)")
    p.add_argument("--alpha", required=True, help="w^T R w")
    p.add_argument("--kappa", required=True, help="||w||^2")
    p.add_argument("--mu2", required=True, help="signal strength ||mu||^2")
    p.add_argument("--sum-w", default="1", help="W = sum_t w_t (raw S only; default 1)")
    p.add_argument("--centered", action="store_true", help="the centered covariance S_c")
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
    r"""The document of ``derive spike``: :func:`derive.outliers.outliers_at` at exact inputs, with every
    real a string of ``digits`` significant digits.

    >>> spike("1/2", "1/4", "1/2", "1/4", 3, digits=6)["population"]["mu2_critical"]
    '0.103553'
    >>> import sympy as sp
    >>> spike("1/2", "1/4", sp.asin(sp.Rational(1, 3)), 1, 4, digits=6)["population"]["outlier"]
    True
    """
    from derive.outliers import outliers_at

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

    return _agreeing(evaluate, digits)


def document(o, digits: int) -> dict:
    """An :class:`derive.outliers.Outliers` as the JSON document of ``derive spike`` (reals to ``digits``)."""
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
    return spike(args.delta, args.gamma, args.alpha, args.kappa, args.mu2,
                 sum_w=args.sum_w, centered=args.centered, digits=args.digits)
