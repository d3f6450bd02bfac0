r"""The search for a counterexample: Hypothesis draws points of the domain where the quantity exists
(:func:`domain_points`), both sides are evaluated with guard digits (:func:`evaluator`), and a point where they differ
by more than :func:`tolerance` is shrunk to a simple rational one (:func:`find_counterexample`)."""
from __future__ import annotations

import math
import random

import mpmath
import sympy as sp

from derive.errors import ParameterError
from derive.sheet.quantities import Quantity, quantity
from derive.sheet.userexpr import EXPRESSION_SECONDS, time_budget

__all__ = ["DENOMINATORS", "COMPARISON_DIGITS", "GUARD_DIGITS", "compared_digits", "tolerance", "domain_points",
           "evaluator", "differ", "find_counterexample", "simplest", "have_hypothesis"]

DENOMINATORS = (1, 2, 3, 4, 5, 8, 10, 16, 100, 1000, 10**6, 10**12)
"""Denominators of the points drawn, simplest first: Hypothesis shrinks towards the first ones, and the last
reach within ``1e-12`` of a threshold (the hard region)."""

COMPARISON_DIGITS = 30
"""The fewest digits a comparison is made to, whatever ``digits`` the values are shown with: fewer digits shorten what
is printed and never loosen the check (at ``--digits 1`` the tolerance had been ``10^4``, and a formula off by a
factor of two agreed)."""

GUARD_DIGITS = 20
"""Digits both sides are evaluated with beyond those of the comparison."""


def compared_digits(digits: int) -> int:
    """The digits a check shown to ``digits`` digits compares to: at least :data:`COMPARISON_DIGITS`.

    >>> compared_digits(1), compared_digits(60)
    (30, 60)
    """
    return max(int(digits), COMPARISON_DIGITS)


def tolerance(digits: int) -> mpmath.mpf:
    r"""The relative difference (to :math:`\max(1, |\text{expected}|)`) above which two values differ in a check
    shown to ``digits`` digits: :math:`10^{5 - P}` with :math:`P` the :func:`compared_digits`. Both sides are
    evaluated with :data:`GUARD_DIGITS` more digits, so this is far above their rounding and far below any error of
    a formula (a formula wrong by less than that is not detected).

    >>> tolerance(30), tolerance(1)
    (mpf('1.0e-25'), mpf('1.0e-25'))
    """
    return mpmath.mpf(10) ** (5 - compared_digits(digits))


def _between(draw, st, lo, hi, lo_open, hi_open, integer, name):
    """A rational in the interval (integer if ``integer``), with a denominator from :data:`DENOMINATORS`."""
    from hypothesis import reject
    if integer:
        lo_i = math.ceil(lo) + (1 if lo_open and lo == math.ceil(lo) else 0)
        hi_i = math.floor(hi) - (1 if hi_open and hi == math.floor(hi) else 0)
        if lo_i > hi_i:
            reject()
        return sp.Integer(draw(st.integers(int(lo_i), int(hi_i))))
    with mpmath.workdps(60):
        lo_m, hi_m = mpmath.mpf(_num(lo)), mpmath.mpf(_num(hi))
        start = draw(st.integers(0, len(DENOMINATORS) - 1))
        for q in DENOMINATORS[start:]:
            k_lo, k_hi = int(mpmath.ceil(lo_m * q)), int(mpmath.floor(hi_m * q))
            if lo_open and sp.Rational(k_lo, q) <= _exact_or(lo, lo_m):
                k_lo += 1
            if hi_open and sp.Rational(k_hi, q) >= _exact_or(hi, hi_m):
                k_hi -= 1
            if k_lo <= k_hi:
                return sp.Rational(draw(st.integers(k_lo, min(k_hi, k_lo + 64 * q))), q)
    reject()


def _num(v):
    return v if isinstance(v, mpmath.mpf) else mpmath.mpf(sp.N(v, 60)) if isinstance(v, sp.Basic) else mpmath.mpf(v)


def _exact_or(v, approx):
    """``v`` exactly where it is a SymPy number, else its 60-digit value (a boundary that is not rational is
    never equal to a drawn rational, and 60 digits tell the two apart at any denominator drawn)."""
    if isinstance(v, sp.Basic) and v.is_Rational:
        return v
    return sp.Rational(str(mpmath.nstr(approx, 60)))


def domain_points(q: Quantity, *, fixed: dict | None = None, bounds: dict | None = None, options: dict | None = None):
    """The Hypothesis strategy of points (``{symbol: Rational}``) where ``q`` exists, within the user's
    ``bounds`` and with the ``fixed`` values. A parameter whose range depends on the others is drawn after them.

    >>> from hypothesis import find
    >>> find(domain_points(quantity("bulk.population_right_edge")), lambda p: True)
    {delta: 1, kappa: 1}
    """
    from hypothesis import reject, strategies as st
    fixed, bounds = fixed or {}, bounds or {}
    options = {k: v[0] for k, v in q.options.items()} | (options or {})

    @st.composite
    def points(draw):
        p = dict(options)
        for sym, b in q.parameters.items():
            lo, hi = (b.low, b.high) if b.depends is None else b.depends(p)
            lo_open, hi_open = b.low_open, b.high_open
            user = bounds.get(sym)
            if user is not None:
                if user[0] is not None and _num(user[0]) >= _num(lo):
                    lo, lo_open = user[0], user[1]
                if user[2] is not None and _num(user[2]) <= _num(hi):
                    hi, hi_open = user[2], user[3]
            if sym in fixed:
                v = fixed[sym]
                ok = (_num(v) > _num(lo) if lo_open else _num(v) >= _num(lo)) and \
                     (_num(v) < _num(hi) if hi_open else _num(v) <= _num(hi))
                if not ok:
                    reject()
                p[sym] = v
            else:
                p[sym] = _between(draw, st, lo, hi, lo_open, hi_open, b.integer, sym.name)
        return {k: v for k, v in p.items() if isinstance(k, sp.Symbol)}

    return points()


def evaluator(q: Quantity, expr: sp.Expr, options: dict, digits: int):
    """The function ``point -> (expected, got)``: the derived quantity and the user's expression at a point, both at
    :func:`compared_digits` plus :data:`GUARD_DIGITS` working digits (``got`` is ``None`` where the expression is
    undefined, not real or not finite there; its evaluation is under the time budget)."""
    args = list(q.parameters)
    f = sp.lambdify(args, expr, modules="mpmath")
    work = compared_digits(digits) + GUARD_DIGITS

    def values(p):
        with mpmath.workdps(work):
            pv = {**p}
            expected = q.value(pv, options) if q.options else q.value(pv)
            try:
                with time_budget(EXPRESSION_SECONDS):
                    got = f(*[mpmath.mpf(v.p) / v.q for v in (p[a] for a in args)])
                got = mpmath.mpmathify(got)
                if isinstance(got, mpmath.mpc):
                    got = got.real if got.imag == 0 else None
                if got is not None and not mpmath.isfinite(got):
                    got = None
            except (ZeroDivisionError, ValueError, OverflowError, TypeError):
                got = None
            return +expected, got
    return values


def differ(expected, got, tol) -> bool:
    """Whether the user's value ``got`` differs from ``expected`` by more than ``tol`` relative to
    ``max(1, |expected|)`` (an undefined ``got`` always does)."""
    return got is None or abs(got - expected) > tol * max(1, abs(expected))


def have_hypothesis() -> bool:
    """Whether Hypothesis (an optional dependency) can be imported."""
    try:
        import hypothesis  # noqa: F401
    except ImportError:
        return False
    return True


def _settings(examples: int):
    from hypothesis import HealthCheck, Phase, settings
    return settings(max_examples=examples, database=None, deadline=None, derandomize=False,
                    phases=[Phase.generate, Phase.shrink],
                    suppress_health_check=list(HealthCheck))


def find_counterexample(points, values, tol, examples: int, seed: int):
    """``(point or None, number of points evaluated)``: the simplest point Hypothesis finds where the values
    differ (it shrinks the first one it meets)."""
    from hypothesis import find
    from hypothesis.errors import NoSuchExample, Unsatisfiable
    count = [0]

    def differs(p):
        count[0] += 1
        expected, got = values(p)
        return differ(expected, got, tol)

    try:
        found = find(points, differs, settings=_settings(examples), random=random.Random(seed))
    except NoSuchExample:
        return None, count[0]
    except Unsatisfiable:
        raise ParameterError("where", "no point of the domain satisfies the constraints") from None
    return found, count[0]


def simplest(points, seed: int) -> dict:
    """The simplest point of ``points`` (the one Hypothesis shrinks to); refuses constraints no point satisfies."""
    from hypothesis import find
    from hypothesis.errors import Unsatisfiable
    try:
        return find(points, lambda p: True, settings=_settings(10), random=random.Random(seed))
    except Unsatisfiable:
        raise ParameterError("where", "no point of the domain satisfies the constraints") from None
