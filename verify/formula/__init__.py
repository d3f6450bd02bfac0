r"""Check a user's closed form against a derived quantity: prove it, or find a counterexample, or say it agrees.

:func:`check_formula` is ``verify formula`` as a function, :func:`assert_formula` the same for a
researcher's own test suite. The steps, one module each beside this one:

1. **Reading** (:mod:`verify.formula.parse`): the expression, read safely and its work bounded, and the constraints
   ``where`` on the domain.
2. **Proof.** :func:`derive.sheet.quantities.prove_equal`: the difference with the definition is identically
   zero (or the expression is identically a root of the defining polynomial, and the right root at a point).
3. **Search** (:mod:`verify.formula.search`). Hypothesis draws points of the domain where the quantity exists,
   evaluates both sides with guard digits, and looks for a point where they differ by more than
   :func:`~verify.formula.search.tolerance` (at least 30 digits, whatever ``digits`` the values are shown with);
   Hypothesis then shrinks it to a simple rational point.
4. **Monte Carlo** (:mod:`verify.formula.montecarlo`, ``mc=True``), for the sample outlier's eigenvalue and overlap:
   the model simulated at that point, with the interval it gives and the smallest relative error it resolves. It
   informs; the verdict is decided by 2-3.

The verdicts: ``equal`` (proved), ``agrees`` (no counterexample in ``examples`` points, not proved),
``counterexample`` (a point where the two differ, with both values).
"""
from __future__ import annotations

from dataclasses import dataclass, replace

import mpmath
import sympy as sp

from derive.errors import ParameterError
from derive.numbers import Displayed, check_count, check_digits, format_real
from derive.sheet.quantities import Quantity, prove_equal, quantity
from derive.sheet.userexpr import EXPRESSION_SECONDS, OutOfTime, time_budget
from verify.formula.montecarlo import MC_QUANTITIES, monte_carlo
from verify.formula.parse import clauses, constrained, parse_where, read_expression, where_with
from verify.formula.search import (DENOMINATORS, domain_points, evaluator, find_counterexample, have_hypothesis,
                                   simplest, tolerance)

__all__ = ["FormulaCheck", "check_formula", "separate", "assert_formula", "parse_where", "domain_points", "tolerance",
           "MC_QUANTITIES", "DENOMINATORS"]


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
    user = read_expression(q, expr, fixed)
    # the sheet's names (theta, ...) stand for expressions in the parameters
    written, user = user, q.unaliased(user)
    tol = tolerance(digits)
    values = evaluator(q, user, options, digits)
    hypothesis = have_hypothesis()
    if hypothesis:
        points = domain_points(q, fixed=fixed, bounds=bounds, options=options)
        simplest_point = simplest(points, seed)  # refuses constraints no point satisfies before a proof uses them
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
        found, evaluated = find_counterexample(points, values, tol, examples, seed)
        # the values shown are at the counterexample, or else at the simplest point of the domain (``checked_at``)
        at = found if found is not None else simplest_point
        expected, got = values(at)
    except OutOfTime:
        raise ParameterError("expr", f"evaluating {str(user)[:60]!r} at one point took more than {EXPRESSION_SECONDS} s "
                                     "of CPU time (a value too large or too small for its functions?)") from None
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


def _outcome(where: dict, c: FormulaCheck) -> dict:
    return {"where": clauses(where), "verdict": c.verdict, "point": c.point, "expected": c.expected, "got": c.got}


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
    taken = constrained(where)
    defaults = {name: values[0] for name, values in q.options.items()}
    rerun = lambda conditions: check_formula(q.name, expr, where=where_with(where, clauses(conditions)),  # noqa: E731
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
