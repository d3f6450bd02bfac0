r"""The search for a counterexample, on one part of a quantity's domain at a time (the region where its definition
holds, and the rest where the derived value is another form, e.g. 0 below a threshold):

1. **Simple points first** (:func:`simple_points`): each parameter takes the simplest rationals of its range (the
   rational of smallest denominator in it, then ``1, 2, 1/2, 3, ...``), the points ordered by how far down those lists
   they reach; a form wrong at ``delta = kappa = alpha = 1`` is shown there.
2. **Hypothesis** (:func:`domain_points`) draws further points, with denominators up to ``10^12`` (the hard region
   near a threshold), and shrinks the first point where the values differ.

Both sides are evaluated with :data:`GUARD_DIGITS` digits beyond those compared (:func:`evaluator`), and a point where
they differ by more than :func:`tolerance` is evaluated again at twice the working digits before it is reported
(:func:`find_counterexample`): a difference that does not survive is rounding, not a counterexample. The ranges that
depend on other parameters (``mu2`` above a threshold) are computed at :data:`BOUND_DIGITS`, so that a point drawn
above a threshold is above it at every precision the values are compared at.
"""
from __future__ import annotations

import itertools
import math
import random
from fractions import Fraction

import mpmath
import sympy as sp

from derive.sheet.quantities import Quantity, quantity
from derive.sheet.userexpr import EXPRESSION_SECONDS, time_budget

__all__ = ["DENOMINATORS", "COMPARISON_DIGITS", "GUARD_DIGITS", "BOUND_DIGITS", "SIMPLE_CHOICES", "SIMPLE_POINTS",
           "compared_digits", "tolerance", "domain_points", "simple_points", "unmet", "evaluator", "differ",
           "find_counterexample", "have_hypothesis"]

DENOMINATORS = (1, 2, 3, 4, 5, 8, 10, 16, 100, 1000, 10**6, 10**12)
"""Denominators of the points Hypothesis draws, simplest first: it shrinks towards the first ones, and the last
reach within ``1e-12`` of a threshold (the hard region)."""

COMPARISON_DIGITS = 30
"""The fewest digits a comparison is made to, whatever ``digits`` the values are shown with: fewer digits shorten what
is printed and never loosen the check (at ``--digits 1`` the tolerance had been ``10^4``, and a formula off by a
factor of two agreed)."""

GUARD_DIGITS = 20
"""Digits both sides are evaluated with beyond those of the comparison."""

BOUND_DIGITS = 90
"""Digits of a range that depends on the other parameters (``mu2`` above ``theta_c^N/alpha - delta``): beyond every
working precision of a comparison at the default digits and its confirmation, so that a point drawn on one side of a
threshold is on that side when it is evaluated (a bound computed at 15 digits had put a point below the sample
threshold that the search took for one above it, and reported ``-6.7e-18`` against ``0`` as a counterexample)."""

SIMPLE_CHOICES = 3
"""How many of the simplest values of its range each parameter takes in :func:`simple_points`."""

SIMPLE_POINTS = 40
"""Most simple points evaluated on a part of the domain before Hypothesis searches it."""


def compared_digits(digits: int) -> int:
    """The digits a check shown to ``digits`` digits compares to: at least :data:`COMPARISON_DIGITS`.

    >>> compared_digits(1), compared_digits(60)
    (30, 60)
    """
    return max(int(digits), COMPARISON_DIGITS)


def tolerance(digits: int) -> mpmath.mpf:
    r"""The relative difference (to :math:`\max(1, |\text{expected}|)`) above which two values differ in a check
    shown to ``digits`` digits: :math:`10^{5 - P}` with :math:`P` the :func:`compared_digits`.

    The argument: both sides are evaluated with :data:`GUARD_DIGITS` more digits than :math:`P`, so each carries a
    rounding error near :math:`10^{-P-20}` relative to the largest intermediate term; a point that differs is
    evaluated again with twice the digits and is a counterexample only if it still differs there. A rounding error
    of a value of order one cannot reach :math:`10^{5-P}` unless its terms cancel by 25 digits, and then the second
    evaluation, 50 digits finer, shows it. A formula whose error is below the tolerance is not detected.

    >>> tolerance(30), tolerance(1)
    (mpf('1.0e-25'), mpf('1.0e-25'))
    """
    return mpmath.mpf(10) ** (5 - compared_digits(digits))


def _num(v):
    return v if isinstance(v, mpmath.mpf) else mpmath.mpf(sp.N(v, BOUND_DIGITS)) if isinstance(v, sp.Basic) \
        else mpmath.mpf(v)


def _exact_or(v, approx):
    """``v`` exactly where it is a SymPy number, else its value to :data:`BOUND_DIGITS` digits (a boundary that is
    not rational is never equal to a drawn rational, and that many digits tell the two apart at any denominator
    drawn)."""
    if isinstance(v, sp.Basic) and v.is_Rational:
        return v
    if isinstance(v, int):
        return sp.Integer(v)
    return sp.Rational(str(mpmath.nstr(approx, BOUND_DIGITS - 10, min_fixed=-mpmath.inf, max_fixed=mpmath.inf)))


def _range(q_bound, sym, p: dict, user: dict):
    """``(low, low_open, high, high_open)`` of a parameter at the point ``p`` drawn so far, within the user's bounds;
    a range that depends on ``p`` is computed at :data:`BOUND_DIGITS`."""
    b = q_bound
    if b.depends is None:
        lo, hi = b.low, b.high
    else:
        with mpmath.workdps(BOUND_DIGITS):
            lo, hi = b.depends(p)
    lo_open, hi_open = b.low_open, b.high_open
    bound = user.get(sym)
    if bound is not None:
        with mpmath.workdps(BOUND_DIGITS):
            if bound[0] is not None and _num(bound[0]) >= _num(lo):
                lo, lo_open = bound[0], bound[1]
            if bound[2] is not None and _num(bound[2]) <= _num(hi):
                hi, hi_open = bound[2], bound[3]
    return lo, lo_open, hi, hi_open


def _inside(v, lo, lo_open, hi, hi_open) -> bool:
    with mpmath.workdps(BOUND_DIGITS):
        lo_ok = _exact_or(v, _num(v)) > _exact_or(lo, _num(lo)) if lo_open else \
            _exact_or(v, _num(v)) >= _exact_or(lo, _num(lo))
        hi_ok = _exact_or(v, _num(v)) < _exact_or(hi, _num(hi)) if hi_open else \
            _exact_or(v, _num(v)) <= _exact_or(hi, _num(hi))
    return bool(lo_ok and hi_ok)


def _between(draw, st, lo, hi, lo_open, hi_open, integer):
    """A rational in the interval (integer if ``integer``), with a denominator from :data:`DENOMINATORS`."""
    from hypothesis import reject
    if integer:
        lo_i, hi_i = _integer_range(lo, lo_open, hi, hi_open)
        if lo_i > hi_i:
            reject()
        return sp.Integer(draw(st.integers(int(lo_i), int(hi_i))))
    with mpmath.workdps(BOUND_DIGITS):
        lo_m, hi_m = _num(lo), _num(hi)
        lo_x, hi_x = _exact_or(lo, lo_m), _exact_or(hi, hi_m)
        start = draw(st.integers(0, len(DENOMINATORS) - 1))
        for q in DENOMINATORS[start:]:
            k_lo, k_hi = int(mpmath.ceil(lo_m * q)), int(mpmath.floor(hi_m * q))
            if sp.Rational(k_lo, q) < lo_x or (lo_open and sp.Rational(k_lo, q) <= lo_x):
                k_lo += 1
            if sp.Rational(k_hi, q) > hi_x or (hi_open and sp.Rational(k_hi, q) >= hi_x):
                k_hi -= 1
            if k_lo <= k_hi:
                return sp.Rational(draw(st.integers(k_lo, min(k_hi, k_lo + 64 * q))), q)
    reject()


def _integer_range(lo, lo_open, hi, hi_open) -> tuple[int, int]:
    with mpmath.workdps(BOUND_DIGITS):
        lo_m, hi_m = _num(lo), _num(hi)
        lo_i = int(mpmath.ceil(lo_m)) + (1 if lo_open and lo_m == mpmath.ceil(lo_m) else 0)
        hi_i = int(mpmath.floor(hi_m)) - (1 if hi_open and hi_m == mpmath.floor(hi_m) else 0)
    return lo_i, hi_i


def _parameters(q: Quantity, part: str) -> dict:
    if part == "outside":
        return q.outside.parameters
    return q.parameters


def domain_points(q: Quantity, *, fixed: dict | None = None, bounds: dict | None = None, options: dict | None = None,
                  part: str = "region"):
    """The Hypothesis strategy of points (``{symbol: Rational}``) of one ``part`` of ``q``'s domain (``"region"``,
    where its definition holds, or ``"outside"``, the rest: :meth:`derive.sheet.quantities.Quantity.parts`), within
    the user's ``bounds`` and with the ``fixed`` values. A parameter whose range depends on the others is drawn after
    them.

    >>> from hypothesis import find
    >>> find(domain_points(quantity("bulk.population_right_edge")), lambda p: True)
    {delta: 1, kappa: 1}
    """
    from hypothesis import reject, strategies as st
    fixed, bounds = fixed or {}, bounds or {}
    options = {k: v[0] for k, v in q.options.items()} | (options or {})
    parameters = _parameters(q, part)

    @st.composite
    def points(draw):
        p = dict(options)
        for sym, b in parameters.items():
            lo, lo_open, hi, hi_open = _range(b, sym, p, bounds)
            if sym in fixed:
                if not _inside(fixed[sym], lo, lo_open, hi, hi_open):
                    reject()
                p[sym] = fixed[sym]
            else:
                p[sym] = _between(draw, st, lo, hi, lo_open, hi_open, b.integer)
        return {k: v for k, v in p.items() if isinstance(k, sp.Symbol)}

    return points()


def _simple_rationals(height: int = 16) -> list[Fraction]:
    """The rationals of height ``max(|p|, q)`` at most ``height``, simplest first: ``0, 1, -1, 2, -2, 1/2, -1/2, 3,
    ...`` (by height, then denominator, then magnitude, positive first).

    >>> [str(f) for f in _simple_rationals()[:8]]
    ['0', '1', '-1', '2', '-2', '1/2', '-1/2', '3']
    """
    found = {Fraction(p, q) for q in range(1, height + 1) for p in range(-height, height + 1)}
    return sorted(found, key=lambda f: (max(abs(f.numerator), f.denominator), f.denominator, abs(f), f < 0))


_SIMPLE = _simple_rationals()


def _fraction(v) -> Fraction:
    if isinstance(v, sp.Basic) and v.is_Rational:
        return Fraction(int(v.p), int(v.q))
    if isinstance(v, int):
        return Fraction(v)
    with mpmath.workdps(BOUND_DIGITS):
        return Fraction(mpmath.nstr(_num(v), BOUND_DIGITS - 10, min_fixed=-mpmath.inf, max_fixed=mpmath.inf))


def _simplest_in(a: Fraction, b: Fraction) -> Fraction:
    """The rational of smallest denominator (then smallest magnitude) in the closed interval ``[a, b]``."""
    if a <= 0 <= b:
        return Fraction(0)
    if b < 0:
        return -_simplest_in(-b, -a)
    floor = math.floor(a)
    if floor == a:
        return Fraction(floor)
    if floor + 1 <= b:
        return Fraction(floor + 1)
    return floor + 1 / _simplest_in(1 / (b - floor), 1 / (a - floor))


def _simple_values(lo, lo_open, hi, hi_open, integer: bool, count: int) -> list:
    """The ``count`` simplest values of a range: its simplest rational first, then the first of ``0, 1, -1, 2, ...``
    that lie in it."""
    if integer:
        lo_i, hi_i = _integer_range(lo, lo_open, hi, hi_open)
        return [sp.Integer(k) for k in range(lo_i, min(hi_i, lo_i + count - 1) + 1)]
    a, b = _fraction(lo), _fraction(hi)
    if a > b:
        return []
    width = b - a
    nudge = width / 10**12 if width else Fraction(0)
    out = []
    if a < b or not (lo_open or hi_open):
        first = _simplest_in(a + (nudge if lo_open else 0), b - (nudge if hi_open else 0))
        if _inside(sp.Rational(first.numerator, first.denominator), lo, lo_open, hi, hi_open):
            out.append(sp.Rational(first.numerator, first.denominator))
    for f in _SIMPLE:
        if len(out) >= count:
            break
        r = sp.Rational(f.numerator, f.denominator)
        if r not in out and _inside(r, lo, lo_open, hi, hi_open):
            out.append(r)
    return out[:count]


def simple_points(q: Quantity, *, fixed: dict | None = None, bounds: dict | None = None,
                  options: dict | None = None, part: str = "region", choices: int = SIMPLE_CHOICES):
    """The simple points of a part of ``q``'s domain, simplest first: each parameter takes one of the ``choices``
    simplest values of its range given those before it (:func:`_simple_values`), and the points come in order of the
    sum of the ranks taken. What a counterexample is shown at when one exists there.

    >>> [{str(k): str(v) for k, v in p.items()} for p in itertools.islice(simple_points(quantity("population.overlap"),
    ...                                                                               part="outside"), 2)]
    [{'delta': '1', 'kappa': '1', 'alpha': '1', 'mu2': '0'}, {'delta': '1', 'kappa': '1', 'alpha': '1', 'mu2': '1'}]
    """
    fixed, bounds = fixed or {}, bounds or {}
    options = {k: v[0] for k, v in q.options.items()} | (options or {})
    parameters = list(_parameters(q, part).items())
    cache = {}

    def values_at(i, p):
        key = (i, tuple(p.get(s) for s, _ in parameters[:i]))
        if key not in cache:
            sym, b = parameters[i]
            lo, lo_open, hi, hi_open = _range(b, sym, p, bounds)
            if sym in fixed:
                cache[key] = [fixed[sym]] if _inside(fixed[sym], lo, lo_open, hi, hi_open) else []
            else:
                cache[key] = _simple_values(lo, lo_open, hi, hi_open, b.integer, choices)
        return cache[key]

    def walk(i, p, budget):
        if i == len(parameters):
            if budget == 0:
                yield {k: v for k, v in p.items() if isinstance(k, sp.Symbol)}
            return
        for rank, v in enumerate(values_at(i, p)):
            if rank > budget:
                break
            yield from walk(i + 1, {**p, parameters[i][0]: v}, budget - rank)

    for budget in range((choices - 1) * len(parameters) + 1):
        yield from walk(0, dict(options), budget)


def unmet(q: Quantity, *, fixed: dict | None = None, bounds: dict | None = None, options: dict | None = None,
          part: str = "region") -> str | None:
    """Why no point of a part of ``q``'s domain meets the constraints, in the words of the range that cannot be met
    (:meth:`derive.sheet.quantities.Bound.describe`), where the fixed values decide it; ``None`` when they do not
    (a point may exist).

    >>> unmet(quantity("population.mu2_critical"), fixed={sp.Symbol("delta", positive=True): 1,
    ...       sp.Symbol("kappa", positive=True): 1, sp.Symbol("alpha", nonnegative=True): 3})
    'at delta = 1, kappa = 1: alpha = 3 is not in (0, 2): 0 < alpha < min(8, theta_c/delta) (alpha delta < theta_c: no outlier at mu2 = 0)'
    """
    fixed, bounds = fixed or {}, bounds or {}
    p = {k: v[0] for k, v in q.options.items()} | (options or {})
    for sym, b in _parameters(q, part).items():
        try:
            lo, lo_open, hi, hi_open = _range(b, sym, p, bounds)
        except (KeyError, TypeError):
            return None  # the range depends on a parameter that is drawn: a point may exist
        shown = f"{'(' if lo_open else '['}{_shown(lo)}, {_shown(hi)}{')' if hi_open else ']'}"
        at = ", ".join(f"{k} = {v}" for k, v in p.items() if isinstance(k, sp.Symbol))
        context = f"at {at}: " if at and b.depends is not None else ""
        if sym in fixed:
            if not _inside(fixed[sym], lo, lo_open, hi, hi_open):
                return f"{context}{sym.name} = {fixed[sym]} is not in {shown}: {b.describe(sym.name)}"
            p[sym] = fixed[sym]
        elif b.integer and _integer_range(lo, lo_open, hi, hi_open)[0] > _integer_range(lo, lo_open, hi, hi_open)[1]:
            return f"{context}no integer {sym.name} in {shown}: {b.describe(sym.name)}"
        elif not b.integer and (_num(lo) > _num(hi) or (_num(lo) == _num(hi) and (lo_open or hi_open))):
            return f"{context}{sym.name} would have to lie in {shown}: {b.describe(sym.name)}"
        else:
            return None  # a free parameter with a range: later ranges depend on the value drawn
    return None


def _shown(v) -> str:
    if isinstance(v, sp.Basic) and v.is_Rational or isinstance(v, int):
        return str(v)
    v = _num(v)
    return str(int(v)) if v == int(v) else mpmath.nstr(v, 6)


def evaluator(q: Quantity, expr: sp.Expr, options: dict, digits: int):
    """The function ``(point, work=None) -> (expected, got)``: the derived quantity and the user's expression at a
    point, both at ``work`` digits (default :func:`compared_digits` plus :data:`GUARD_DIGITS`); ``got`` is ``None``
    where the expression is undefined, not real or not finite there; its evaluation is under the time budget."""
    args = list(q.parameters)
    f = sp.lambdify(args, expr, modules="mpmath")
    default = compared_digits(digits) + GUARD_DIGITS

    def values(p, work=None):
        with mpmath.workdps(work or default):
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
    values.work = default
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


class NoPoint(Exception):
    """No point of the part searched satisfies the constraints."""


def find_counterexample(q: Quantity, values, tol, examples: int, seed: int, *, fixed=None, bounds=None,
                        options=None, part: str = "region"):
    """``(point or None, values there or None, number of points evaluated)`` on one part of ``q``'s domain: the first
    of the :func:`simple_points` where the values differ (one where the user's value is defined, if there is such a
    simple point), else the simplest point Hypothesis finds (it shrinks the first one it meets). A point that differs at the working digits is evaluated again with twice as many and is a
    counterexample only if it still differs (:func:`tolerance`); the values returned are the finer ones. Raises
    :class:`NoPoint` when no point of the part satisfies the constraints."""
    count = [0]
    kwargs = {"fixed": fixed, "bounds": bounds, "options": options, "part": part}

    def confirmed(p):
        count[0] += 1
        expected, got = values(p)
        if not differ(expected, got, tol):
            return None
        fine = values(p, 2 * values.work)
        return fine if differ(*fine, tol) else None

    simple = list(itertools.islice(simple_points(q, **kwargs), SIMPLE_POINTS))
    undefined = None
    for p in simple:
        found = confirmed(p)
        if found is not None and found[1] is not None:
            return p, found, count[0]
        if found is not None and undefined is None:
            undefined = p, found  # shown if no simple point has the user's value defined and different
    if undefined is not None:
        return (*undefined, count[0])
    if not have_hypothesis():
        if not simple:
            raise NoPoint(part)
        return None, None, count[0]
    from hypothesis import find
    from hypothesis.errors import NoSuchExample, Unsatisfiable
    try:
        point = find(domain_points(q, **kwargs), lambda p: confirmed(p) is not None, settings=_settings(examples),
                     random=random.Random(seed))
    except NoSuchExample:
        return None, None, count[0]
    except Unsatisfiable:
        if simple:
            return None, None, count[0]
        raise NoPoint(part) from None
    return point, values(point, 2 * values.work), count[0]


def first_point(q: Quantity, seed: int, **kwargs) -> dict | None:
    """The simplest point of a part of the domain (``None`` if it has none): the first of the :func:`simple_points`,
    else the one Hypothesis shrinks to."""
    for p in simple_points(q, **kwargs):
        return p
    if not have_hypothesis():
        return None
    from hypothesis import find
    from hypothesis.errors import Unsatisfiable
    try:
        return find(domain_points(q, **kwargs), lambda p: True, settings=_settings(10), random=random.Random(seed))
    except Unsatisfiable:
        return None
