r"""Check a user's closed form against a derived quantity: prove it, or find a counterexample, or say it agrees.

:func:`check_formula` is ``verify formula`` as a function, :func:`assert_formula` the same for a
researcher's own test suite. The steps:

1. **Proof.** :func:`derive.sheet.quantities.prove_equal`: the difference with the definition is identically
   zero (or the expression is identically a root of the defining polynomial, and the right root at a point).
2. **Search.** Hypothesis draws points of the domain where the quantity exists (:func:`domain_points`),
   evaluates both sides at ``digits + 20`` working digits, and looks for a point where they differ by more
   than :func:`tolerance`; Hypothesis then shrinks it to a simple rational point.
3. **Monte Carlo** (``mc=True``), for the sample outlier's eigenvalue and overlap: the model simulated
   at that point (centered ``S``, weights that realize the point's ``alpha`` and ``kappa``), with the
   interval it gives and the smallest relative error it resolves. It informs; the verdict is decided by 1-2.

The verdicts: ``equal`` (proved), ``agrees`` (no counterexample in ``examples`` points, not proved),
``counterexample`` (a point where the two differ, with both values).
"""
from __future__ import annotations

import math
import random
import re
from dataclasses import dataclass, replace

import mpmath
import sympy as sp

from derive.errors import ParameterError
from derive.numbers import Displayed, check_count, check_digits, format_real, parse_rational
from derive.sheet.quantities import Quantity, prove_equal, quantity
from derive.sheet.userexpr import EXPRESSION_SECONDS, OutOfTime, check_work, parse_user_expression, time_budget

__all__ = ["FormulaCheck", "parse_where", "domain_points", "tolerance", "check_formula", "separate", "assert_formula",
           "MC_QUANTITIES", "DENOMINATORS"]

DENOMINATORS = (1, 2, 3, 4, 5, 8, 10, 16, 100, 1000, 10**6, 10**12)
"""Denominators of the points drawn, simplest first: Hypothesis shrinks towards the first ones, and the last
reach within ``1e-12`` of a threshold (the hard region)."""

MC_QUANTITIES = ("sample.eigenvalue", "sample.overlap")
"""The quantities a Monte Carlo of the model measures directly (the top eigenpair of the centered ``S``)."""

_WHERE = re.compile(r"^\s*([A-Za-z_][A-Za-z0-9_]*)\s*(<=|>=|==|=|<|>)\s*([^,<>=]+?)\s*$")


def tolerance(digits: int) -> mpmath.mpf:
    r"""The relative difference (to :math:`\max(1, |\text{expected}|)`) above which two values differ: both
    sides are evaluated with 20 guard digits, so ``10^{5 - digits}`` is far above their rounding and far
    below any error of a formula (a formula wrong by less than that is not detected).

    >>> tolerance(30)
    mpf('1.0e-25')
    """
    return mpmath.mpf(10) ** (5 - digits)


def parse_where(where, q: Quantity) -> tuple[dict, dict, dict]:
    """``(fixed, bounds, options)`` from ``where``: text ``"delta=1/2, gamma<=1, mask=strict"`` or a dict
    ``{"delta": "1/2", "mask": "strict"}`` (values fix a parameter). ``bounds`` maps a symbol to
    ``[low, low_open, high, high_open]`` (``None`` for no bound).

    >>> fixed, bounds, options = parse_where("delta = 1/2, gamma < 2", quantity("sample.overlap"))
    >>> fixed, bounds, options
    ({delta: 1/2}, {gamma: [None, False, 2, True]}, {})
    """
    symbols = q.symbols
    fixed, bounds = {}, {}
    options = {k: v[0] for k, v in q.options.items()}
    if where is None:
        return fixed, bounds, options
    if isinstance(where, dict):
        clauses = [(str(k), "=", v) for k, v in where.items()]
    elif isinstance(where, str):
        clauses = []
        for part in (p for p in where.split(",") if p.strip()):
            match = _WHERE.match(part)
            if not match:
                raise ParameterError("where", f"cannot read {part.strip()!r} (write name=value, name<value, name>=value, ...)")
            clauses.append(match.groups())
    else:
        raise ParameterError("where", f"must be text or a dict, got {type(where).__name__}")
    given = set()
    for name, op, value in clauses:
        # one value, or one bound on each side, per name: the last of two would silently win
        side = "=" if op in ("=", "==") else ">" if op in (">", ">=") else "<"
        if (name, side) in given or (side == "=" and any(n == name for n, _ in given)) or (name, "=") in given:
            raise ParameterError("where", f"{name} is constrained twice")
        given.add((name, side))
        if name in q.options:
            if side != "=" or str(value).strip() not in q.options[name]:
                raise ParameterError("where", f"{name} must be set with = to one of {', '.join(q.options[name])}")
            options[name] = str(value).strip()
            continue
        if name not in symbols:
            raise ParameterError("where", f"{q.name} has no parameter {name!r} (it has "
                                          f"{', '.join(list(symbols) + list(q.options))})")
        v = parse_rational(value, f"where {name}")
        sym = symbols[name]
        if side == "=":
            _check_in_domain(q, sym, v)
            fixed[sym] = v
            continue
        b = bounds.setdefault(sym, [None, False, None, False])
        if side == ">":
            b[0], b[1] = v, op == ">"
        else:
            b[2], b[3] = v, op == "<"
    return fixed, bounds, options


def _check_in_domain(q: Quantity, sym: sp.Symbol, v) -> None:
    """Refuse a fixed value outside the parameter's range, before a proof substitutes it (``T = 10^9`` in a
    harmonic number would be summed exactly). A range that depends on the other parameters (``mu2`` above its
    threshold) is checked by drawing a point of the domain, before any proof too (:func:`check_formula`)."""
    b = q.parameters[sym]
    if b.depends is not None and not b.integer:
        return
    low_ok = v > b.low if b.low_open else v >= b.low
    high_ok = v < b.high if b.high_open else v <= b.high
    if not (low_ok and high_ok) or (b.integer and not v.is_integer):
        raise ParameterError("where", f"{sym.name} = {v} is outside the domain of {q.name} ({q.domain}; "
                                      f"{sym.name} in {'(' if b.low_open else '['}{b.low}, {b.high}{')' if b.high_open else ']'}"
                                      f"{', an integer' if b.integer else ''})")


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


@dataclass(frozen=True)
class FormulaCheck(Displayed):
    """The result of :func:`check_formula`. ``point`` (exact rationals and options) is where the two values
    ``expected`` (the derived quantity) and ``got`` (the user's expression) differ, ``None`` unless the
    verdict is ``counterexample``; otherwise the two values are those at ``checked_at``, the simplest point of
    the domain. ``mc`` is the Monte Carlo document when one was asked for. ``names`` says what each formula-sheet
    name the expression used stands for (``theta``, ...). After a counterexample, ``conditions`` holds the checks
    under each setting of a condition the user left free (the mask, ``tau = 0``, ``T`` above a point where the
    expression is undefined) and ``separated_by`` says in words which one separates the two forms."""

    _DISPLAYED = ("quantity", "verdict", "separated_by", "expr", "names", "law", "point", "checked_at", "expected", "got",
                  "proof", "note")

    quantity: str
    expr: sp.Expr
    verdict: str
    point: dict | None
    expected: mpmath.mpf | None
    got: mpmath.mpf | None
    examples: int
    proof: str | None
    law: str
    digits: int
    mc: dict | None = None
    note: str | None = None
    checked_at: dict | None = None
    names: dict | None = None
    conditions: tuple = ()
    separated_by: str | None = None

    @property
    def ok(self) -> bool:
        """True for ``equal`` and ``agrees``."""
        return self.verdict != "counterexample"

    def as_dict(self) -> dict:
        """The JSON document of ``verify formula`` (reals as strings of ``digits`` digits)."""
        fmt = lambda v: None if v is None else format_real(v, self.digits)  # noqa: E731
        text = lambda p: None if p is None else {str(k): str(v) for k, v in p.items()}  # noqa: E731
        return {"verdict": self.verdict, "point": text(self.point), "expected": fmt(self.expected), "got": fmt(self.got),
                "checked_at": text(self.checked_at),
                "examples": self.examples, "proof": self.proof, "quantity": self.quantity, "expr": str(self.expr),
                "law": self.law, "tolerance": format_real(tolerance(self.digits), 3), "note": self.note,
                **({"mc": self.mc} if self.mc is not None else {}),
                **({"names": self.names} if self.names else {}),
                **({"separated_by": self.separated_by,
                    "conditions": [{"where": c["where"], "verdict": c["verdict"], "point": text(c["point"]),
                                    "expected": fmt(c["expected"]), "got": fmt(c["got"])} for c in self.conditions]}
                   if self.conditions else {})}


def _evaluator(q: Quantity, expr: sp.Expr, options: dict, work: int):
    args = list(q.parameters)
    f = sp.lambdify(args, expr, modules="mpmath")

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


def _differ(expected, got, tol) -> bool:
    return got is None or abs(got - expected) > tol * max(1, abs(expected))


def check_formula(quantity_name, expr, *, where=None, mc: bool = False, digits: int = 30, examples: int = 200,
                  seed: int = 0, mc_d: int = 1000, mc_seeds: int = 8, conditions: bool = True) -> FormulaCheck:
    r"""Check the closed form ``expr`` (text, or a SymPy expression in :mod:`derive.symbols`) of the derived
    quantity ``quantity_name`` (:data:`derive.sheet.quantities.QUANTITIES`) on its domain, restricted by ``where``.
    The expression may use the formula sheet's names (``theta`` for the strength of the signal term, ...:
    :attr:`derive.sheet.quantities.Quantity.aliases`). With ``conditions``, a counterexample is followed by
    :func:`separate`: which condition (mask, ``tau``, ``T``) separates the two forms.

    >>> check_formula("bulk.population_right_edge", "kappa*(1 + sqrt(delta))**2").verdict
    'equal'
    >>> c = check_formula("population.mu2_critical", "kappa*(delta + sqrt(delta))/alpha")
    >>> c.verdict, {str(k): str(v) for k, v in c.point.items()}, mpmath.nstr(c.expected, 5), mpmath.nstr(c.got, 5)
    ('counterexample', {'delta': '1', 'kappa': '1', 'alpha': '1'}, '1.0', '2.0')
    """
    q = quantity(quantity_name)
    digits = check_digits(digits)
    examples = check_count(examples, "examples", low=1, high=100000)
    seed = check_count(seed, "seed")
    fixed, bounds, options = parse_where(where, q)
    if isinstance(expr, sp.Basic):
        unknown = {s for s in expr.free_symbols if s not in set(q.names.values())}
        if unknown:
            raise ParameterError("expr", f"unknown symbols {sorted(map(str, unknown))} for {q.name} "
                                         f"(it takes {', '.join(q.names)})")
        check_work(expr, "expr", fixed)
        user = expr
    else:
        user = parse_user_expression(expr, q.names, exact=fixed)
    # the sheet's names (theta, ...) stand for expressions in the parameters
    written, user = user, q.unaliased(user)
    tol = tolerance(digits)
    values = _evaluator(q, user, options, digits + 20)
    hypothesis = _have_hypothesis()
    if hypothesis:
        points = domain_points(q, fixed=fixed, bounds=bounds, options=options)
        simplest = _simplest(points, seed)  # refuses constraints no point satisfies before a proof uses them
    try:
        with time_budget(EXPRESSION_SECONDS):
            proof = prove_equal(q, user, fixed=fixed, options=options)
    except OutOfTime:
        proof = None  # no proof is no evidence either way: the search decides
    if not hypothesis:
        if proof is None or q.polynomial is not None:
            raise ParameterError("hypothesis", "not installed, and needed here: pip install 'attention-rmt[hypothesis]'")
        return FormulaCheck(q.name, written, "equal", None, None, None, 0, proof, q.law, digits,
                            note="Hypothesis is not installed: the proof stands, no point was evaluated",
                            names=_used_names(q, written))
    try:
        found, evaluated = _search(points, values, tol, examples, seed)
        # the values shown are at the counterexample, or else at the simplest point of the domain (``checked_at``)
        at = found if found is not None else simplest
        expected, got = values(at)
    except OutOfTime:
        raise ParameterError("expr", f"evaluating {str(user)[:60]!r} at one point took more than {EXPRESSION_SECONDS} s "
                                     "(a value too large or too small for its functions?)") from None
    if found is not None and proof is not None:
        # a proof and a counterexample cannot both stand: the implicit proof's branch is the wrong root here
        proof = None
    if found is None:
        verdict, point = ("equal" if proof else "agrees"), None
        note = None if proof else f"not proved; no counterexample in {evaluated} points of the domain"
    else:
        point = {**found, **options}
        verdict, note = "counterexample", None if got is not None else "the expression is undefined or not real here"
    mc_doc = monte_carlo(q, at, (expected, got), digits, d=mc_d, seeds=mc_seeds, seed0=seed) if mc else None
    check = FormulaCheck(q.name, written, verdict, point, expected, got, evaluated, proof, q.law, digits, mc_doc, note,
                         {**at, **options}, _used_names(q, written))
    if conditions and verdict == "counterexample":
        check = separate(check, q, written, where, digits=digits, examples=examples, seed=seed)
    return check


def _used_names(q: Quantity, written: sp.Expr) -> dict | None:
    """What each formula-sheet name in the user's expression stands for."""
    used = {name: meaning for name, (symbol, _, meaning) in q.aliases.items() if symbol in written.free_symbols}
    return used or None


def _constrained(where) -> set:
    """The names the user's ``where`` constrains."""
    if isinstance(where, dict):
        return set(map(str, where))
    if isinstance(where, str):
        return {m.group(1) for part in where.split(",") if (m := _WHERE.match(part))}
    return set()


def _where_with(where, clause: str):
    """``where`` (text, a dict or ``None``) with one more clause."""
    if isinstance(where, dict):
        where = ", ".join(f"{k}={v}" for k, v in where.items())
    return f"{where}, {clause}" if where and str(where).strip() else clause


def _clauses(where: dict) -> str:
    """Conditions as ``--where`` writes them: ``mask=strict, T>1``."""
    return ", ".join(f"T>{v}" if k == "T>" else f"{k}={v}" for k, v in where.items())


def _outcome(where: dict, c: FormulaCheck) -> dict:
    return {"where": _clauses(where), "verdict": c.verdict, "point": c.point, "expected": c.expected, "got": c.got}


def _setting(where: dict, defaults: dict) -> str:
    words = []
    for name, value in where.items():
        if name == "mask":
            words.append(f"the {value} mask" + (" (the default)" if defaults.get(name) == value else ""))
        elif name == "T>":
            words.append(f"T > {value}")
        else:
            words.append(f"{name} = {value}")
    return " at ".join(words) if words else "the default settings"


def separate(check: FormulaCheck, q: Quantity, expr, where, **kwargs) -> FormulaCheck:
    r"""After a counterexample, the condition that separates the user's form from the derived one: the check run
    again under each value of an option the user left free (the causal ``mask``), and, where it still fails, at
    ``tau = 0`` and for ``T`` above a point where the expression is undefined (a form that is right from ``T = 2``
    on is not blamed on ``T = 1``); ``kwargs`` go to :func:`check_formula`. The returned check keeps its verdict (the
    one of the default settings) and carries the outcomes in ``conditions`` and the words in ``separated_by``; when
    its own point left the expression undefined and one where both are defined and differ exists, it shows that one.

    >>> c = check_formula("weights.causal", "(harmonic(T-1)-harmonic(t-1))/(T-1)", examples=30)
    >>> c.verdict, c.separated_by
    ('counterexample', 'equal for the strict mask; differs for the inclusive mask (the default)')
    """
    taken = _constrained(where)
    defaults = {name: values[0] for name, values in q.options.items()}
    rerun = lambda clauses: check_formula(q.name, expr, where=_where_with(where, _clauses(clauses)),  # noqa: E731
                                          conditions=False, **kwargs)
    settings = [({}, check)]
    free = [name for name in q.options if name not in taken]
    if free:
        name = free[0]
        chosen = (check.point or {}).get(name, defaults[name])
        settings = [({name: v}, check if v == chosen else rerun({name: v})) for v in q.options[name]]
    outcomes = [_outcome(w, c) for w, c in settings]
    holds, fails = [], []
    for w, c in settings:
        if c.ok:
            holds.append(f"{c.verdict} for {_setting(w, defaults)}")
            continue
        refined = None
        tau_at = (c.point or {}).get(q.symbols.get("tau"))
        if tau_at is not None and tau_at != 0 and "tau" not in taken:
            at_zero = rerun({**w, "tau": 0})
            outcomes.append(_outcome({**w, "tau": 0}, at_zero))
            if at_zero.ok:
                refined = f"{at_zero.verdict} for {_setting({**w, 'tau': 0}, defaults)}; differs for tau > 0"
        T0 = (c.point or {}).get(q.symbols.get("T"))
        if refined is None and T0 is not None and c.got is None and "T" not in taken:
            above = rerun({**w, "T>": T0})
            outcomes.append(_outcome({**w, "T>": T0}, above))
            if above.ok:
                refined = f"{above.verdict} for {_setting({**w, 'T>': T0}, defaults)}; undefined at T = {T0}"
            elif above.got is not None and c is check:
                check = replace(check, point=above.point, expected=above.expected, got=above.got,
                                checked_at=above.checked_at,
                                note=f"yours is undefined at T = {T0} too (and differs where both are defined, shown)")
        fails.append(refined or f"differs for {_setting(w, defaults)}")
    if len(outcomes) == 1:
        return check
    return replace(check, conditions=tuple(outcomes), separated_by="; ".join(holds + fails))


def _have_hypothesis() -> bool:
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


def _search(points, values, tol, examples: int, seed: int):
    """``(point or None, number of points evaluated)``: the simplest point Hypothesis finds where the values
    differ (it shrinks the first one it meets)."""
    from hypothesis import find
    from hypothesis.errors import NoSuchExample, Unsatisfiable
    count = [0]

    def differs(p):
        count[0] += 1
        expected, got = values(p)
        return _differ(expected, got, tol)

    try:
        found = find(points, differs, settings=_settings(examples), random=random.Random(seed))
    except NoSuchExample:
        return None, count[0]
    except Unsatisfiable:
        raise ParameterError("where", "no point of the domain satisfies the constraints") from None
    return found, count[0]


def _simplest(points, seed: int) -> dict:
    from hypothesis import find
    from hypothesis.errors import Unsatisfiable
    try:
        return find(points, lambda p: True, settings=_settings(10), random=random.Random(seed))
    except Unsatisfiable:
        raise ParameterError("where", "no point of the domain satisfies the constraints") from None


SPREAD = 7
"""Positions outside the block that carry weight: spread weights keep each token's reuse ``N T / V`` large, where
the Gaussian-equivalent law that the outlier formulas are for is close to the model's own."""


def _realizing_weights(rho: float) -> tuple[str, list[float]] | None:
    r"""A sign family and weights with :math:`w^\top R w / \|w\|^2 = \rho` (``None`` for :math:`\rho < 1`):
    ``prefix:L`` with weight ``a`` on the block and ``b = 1`` on the :data:`SPREAD` other positions gives
    :math:`(L^2a^2 + (T-L)b^2)/(La^2 + (T-L)b^2)`, which runs over ``[1, L)``; :math:`\rho = L` needs all the
    weight on the block, :math:`\rho = 1` is ``iid`` with equal weights.

    >>> _realizing_weights(1), _realizing_weights(0.5)
    (('iid', [1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0]), None)
    """
    if rho < 1:
        return None
    if rho == 1:
        return "iid", [1.0] * (SPREAD + 1)
    L = math.ceil(rho)
    if rho == L:
        return f"prefix:{L}", [1.0] * L
    a = math.sqrt(SPREAD * (rho - 1) / (L * (L - rho)))
    return f"prefix:{L}", [a] * L + [1.0] * SPREAD


def monte_carlo(q: Quantity, point: dict, values: tuple, digits: int, *, d: int, seeds: int, seed0: int) -> dict:
    """The model simulated at ``point`` (centered ``S``): the measured mean and its Student-t interval,
    whether each value lies in it, and the smallest relative error the interval resolves."""
    from verify.montecarlo.trials import run_trials
    from verify.stats import mean_ci
    import numpy as np
    from derive.symbols import alpha, delta, gamma, kappa, mu2

    where = {str(k): str(v) for k, v in point.items()}
    if q.name not in MC_QUANTITIES:
        return {"skipped": f"Monte Carlo measures {' and '.join(MC_QUANTITIES)} only", "point": where}
    rho = float(point[alpha] / point[kappa])
    realized = _realizing_weights(rho)
    if realized is None:
        return {"skipped": f"alpha/kappa = {rho:.4g} < 1 has no prefix-family realization", "point": where}
    signs, w = realized
    w = np.array(w) * math.sqrt(float(point[kappa]) / float(np.dot(w, w)))
    V = 2 * max(1, round(d / float(point[delta]) / 2))
    N = max(d + 1, round(d / float(point[gamma])))
    if d * (V + N) > 2.5e8:
        return {"skipped": f"d = {d} at delta = {point[delta]}, gamma = {point[gamma]} needs V = {V}, N = {N}: too large",
                "point": where}
    from derive import Model

    model = Model(d=d, V=V, N=N, T=len(w), signs=signs, mu2=point[mu2], centered=True)
    run = run_trials(model, weights=list(w), k=2, seeds=seeds, seed0=seed0)
    measured = run.top_eigenvalues[:, 0] if q.name == "sample.eigenvalue" else run.overlaps[:, 0]
    mean, lo, hi = mean_ci(measured)
    expected, got = values
    fmt = lambda v: format_real(v, 10)  # noqa: E731
    inside = lambda v: v is not None and lo <= float(v) <= hi  # noqa: E731
    return {"point": where, "d": d, "V": V, "N": N, "T": len(w), "reuse": fmt(N * len(w) / V), "signs": signs,
            "weights": [fmt(v) for v in w],
            "S": "centered", "seeds": seeds, "seed0": seed0, "mean": fmt(mean), "ci95": [fmt(lo), fmt(hi)],
            "expected_in_ci": inside(expected), "got_in_ci": inside(got),
            "min_detectable_rel_error": {q.name: format_real((hi - lo) / 2 / abs(float(expected)), 3)},
            "note": "Student-t 95% over seeds; the finite-size bias (O(d^-1/2) for overlaps) is not in the interval; the "
                    "derived values are the Gaussian-equivalent law, close to the model's own when the reuse N T / V is "
                    "large and the weights spread"}


def assert_formula(quantity_name, expr, **kwargs) -> FormulaCheck:
    """:func:`check_formula` for a test suite: returns the check when the expression is equal or agrees, raises
    ``AssertionError`` with the counterexample (point and both values) otherwise.

    >>> assert_formula("signal.strength", "alpha*mu2 + alpha*delta").verdict
    'equal'
    """
    check = check_formula(quantity_name, expr, **kwargs)
    if not check.ok:
        doc = check.as_dict()
        raise AssertionError(f"{check.quantity}: {doc['expr']} is not the derived quantity: at {doc['point']} "
                             f"it gives {doc['got']}, the derivation {doc['expected']}")
    return check
