"""Reading a user's closed form safely: a SymPy expression in the model's documented symbols.

SymPy's ``parse_expr`` evaluates Python code, so the text is first checked token by token: only numbers,
the arithmetic operators, parentheses, commas and the whitelisted names (the symbols a quantity takes and
the functions of :data:`FUNCTIONS`) may appear; no attribute access, no strings, no brackets, no keywords.
Decimals are read exactly (``0.95`` is ``19/20``), ``^`` is a power.

No short expression may make SymPy or mpmath run without end (``H(10**9)``, ``((10**60)**64)**64``,
``sin(exp(exp(40)))``). Before anything is evaluated, the work is bounded on the unevaluated tree
(:func:`check_work`): the size of the text, of its integers and of its numeric exponents; the digits of every exact
number SymPy would compute; the magnitude of the arguments of ``exp``, ``sin``, ``cos`` and the other functions, whose
cost grows with it; the arguments of ``harmonic`` and ``digamma``, which SymPy evaluates exactly at integers (one term
per unit). What these bounds miss (values made tiny by cancellation, then inverted) a time budget catches
(:func:`time_budget`, :data:`EXPRESSION_SECONDS` for each step).
"""
from __future__ import annotations

import io
import math
import signal
import threading
import time
import tokenize
from contextlib import contextmanager

import sympy as sp
from sympy.parsing.sympy_parser import convert_xor, parse_expr, rationalize, standard_transformations

from derive.errors import ParameterError

__all__ = ["MAX_LENGTH", "MAX_DEPTH", "MAX_INTEGER_DIGITS", "MAX_EXPONENT", "MAX_EXACT_DIGITS", "MAX_ARGUMENT_LOG10",
           "MAX_SPECIAL_ARGUMENT", "EXPRESSION_SECONDS", "FUNCTIONS", "OutOfTime", "time_budget",
           "check_work", "parse_user_expression"]

MAX_LENGTH = 2000
"""Longest expression text read (a closed form of this model fits in a few hundred characters)."""

MAX_DEPTH = 100
"""Deepest nesting of an expression (operators, calls and parentheses, counted in its syntax tree): a closed form of
this model nests a few dozen levels; Python's compiler, which SymPy's parser calls, fails beyond a few hundred (2,000
``+`` signs, 600 powers in a chain) with a ``RecursionError``."""

MAX_INTEGER_DIGITS = 60
"""Most digits of one integer literal."""

MAX_EXPONENT = 64
"""Largest magnitude of a numeric exponent (``x**1000000`` would expand into a huge polynomial)."""

MAX_EXACT_DIGITS = 10_000
"""Most digits of a number SymPy computes exactly (``((10**60)**64)**64`` has 245,761; each step multiplies
numbers of this size in one uninterruptible operation)."""

MAX_ARGUMENT_LOG10 = 10_000
"""Largest ``log10`` of the magnitude of a function's argument: ``sin`` and ``exp`` of ``10^10000`` need some 33,000
more bits of precision (20 ms in mpmath), of ``10^100000`` a second and a half, and the cost grows from there."""

MAX_SPECIAL_ARGUMENT = 1000
"""Largest numeric argument of ``harmonic``, ``H`` and ``digamma``: SymPy sums ``H(n)`` exactly, term by term
(``H(10**4)`` takes a second and has 4,300 digits)."""

EXPRESSION_SECONDS = 10
"""Time budget of each step of work on a user's expression (reading it, proving it, evaluating it at one point), in
seconds of this process's CPU time: on a busy machine the same step gets the same verdict, only later."""

FUNCTIONS = {
    "sqrt": sp.sqrt, "exp": sp.exp, "log": sp.log, "Abs": sp.Abs, "Min": sp.Min, "Max": sp.Max,
    "harmonic": sp.harmonic, "H": sp.harmonic, "digamma": sp.digamma, "asin": sp.asin, "acos": sp.acos,
    "atan": sp.atan, "sin": sp.sin, "cos": sp.cos, "pi": sp.pi, "E": sp.E, "Rational": sp.Rational,
}
"""The functions and constants a closed form may use (``H(k)`` is the harmonic number :math:`H_k`)."""

def _rational(*args):
    """``Rational(p)`` or ``Rational(p, q)`` of exact numbers with ``q != 0``, as the parser calls it (the decimal
    ``0.95`` arrives as the text ``'0.95'``, the only text an expression can hold); SymPy's own ``Rational`` gives
    ``zoo`` for ``Rational(1, 0)`` and, with a third argument, a deprecation warning and ``0/0``."""
    if len(args) not in (1, 2):
        raise ParameterError("expr", f"Rational takes one or two numbers, got {len(args)}")
    parts = [sp.Rational(a) if isinstance(a, str) else a for a in args]
    if not all(isinstance(a, sp.Rational) for a in parts):
        raise ParameterError("expr", "Rational takes exact numbers (integers or decimals), not expressions")
    if len(parts) == 2 and parts[1] == 0:
        raise ParameterError("expr", "Rational(p, 0) is not a number")
    return parts[0] if len(parts) == 1 else parts[0] / parts[1]


_HELD = {name: (lambda f: lambda *args, **_: f(*args, evaluate=False))(f) for name, f in FUNCTIONS.items()
         if callable(f) and name != "Rational"}
"""The functions as the unevaluated parse calls them: its ``evaluate=False`` reaches the operators and some
functions only, and ``harmonic(999999999)`` would otherwise be summed before anything is checked."""

_OPERATORS = {"+", "-", "*", "/", "**", "^", "(", ")", ","}
_TRANSFORMATIONS = standard_transformations + (convert_xor, rationalize)
_GLOBALS = {"Integer": sp.Integer, "Float": sp.Float, "Rational": sp.Rational, "Symbol": sp.Symbol, "Add": sp.Add,
            "Mul": sp.Mul, "Pow": sp.Pow}


def _check_tokens(text: str, allowed: set[str], parameter: str) -> None:
    try:
        tokens = list(tokenize.generate_tokens(io.StringIO(text).readline))
    except (tokenize.TokenError, IndentationError, SyntaxError) as exc:
        raise ParameterError(parameter, f"not an expression: {exc}") from None
    for tok in tokens:
        if tok.type in (tokenize.NEWLINE, tokenize.NL, tokenize.ENDMARKER, tokenize.INDENT, tokenize.DEDENT):
            continue
        if tok.type == tokenize.NUMBER:
            if any(c in tok.string.lower() for c in "jx_") or tok.string.lower().startswith(("0b", "0o")):
                raise ParameterError(parameter, f"not a real decimal number: {tok.string!r}")
            mantissa = tok.string.lower().split("e")[0].replace(".", "")
            if len(mantissa) > MAX_INTEGER_DIGITS or ("e" in tok.string.lower()
                                                      and abs(int(tok.string.lower().split("e")[1])) > MAX_EXPONENT):
                raise ParameterError(parameter, f"number too large: {tok.string[:20]!r}")
        elif tok.type == tokenize.NAME:
            if tok.string not in allowed and tok.string not in FUNCTIONS:
                raise ParameterError(parameter, f"unknown name {tok.string!r}; use the symbols {', '.join(sorted(allowed))} "
                                                f"and the functions {', '.join(sorted(FUNCTIONS))}")
        elif tok.type == tokenize.OP:
            if tok.string not in _OPERATORS:
                raise ParameterError(parameter, f"operator {tok.string!r} is not allowed (only + - * / ** ^ and parentheses)")
        else:
            raise ParameterError(parameter, f"unexpected {tok.string!r}")


def _check_size(expr: sp.Basic, parameter: str) -> None:
    """Refuse numeric exponents above :data:`MAX_EXPONENT` in the unevaluated tree; an exponent that is itself
    a power (``x**10**9``) is refused before anything evaluates it."""
    for p in expr.atoms(sp.Pow):
        e = p.exp
        if e.free_symbols:
            continue
        if any(abs(inner.exp) != 1 for inner in e.atoms(sp.Pow) if inner.exp.is_Number):
            raise ParameterError(parameter, f"a numeric exponent may not be a power: {p}")
        if abs(sp.N(e, 15)) > MAX_EXPONENT:
            raise ParameterError(parameter, f"exponent {e} too large (at most {MAX_EXPONENT} in magnitude)")


_LN10 = math.log(10)
_SPECIAL = (sp.harmonic, sp.digamma)


def _log10(n: int) -> float:
    return math.log10(n) if n else 0.0


def _exp10(x: float) -> float:
    return math.inf if x > 300 else 10.0 ** x


class _Work:
    """The bounds of :func:`check_work` on one tree: for every node whose symbols all have exact values, a bound
    of ``|log10|`` of its magnitude and the digits of its exact value; ``None`` for a node that a drawn symbol
    keeps symbolic (mpmath evaluates it at each point, under the time budget)."""

    def __init__(self, exact: dict, parameter: str):
        self.exact, self.parameter = exact, parameter

    def refuse(self, reason: str):
        raise ParameterError(self.parameter, reason)

    def bounds(self, e: sp.Basic) -> tuple[float, float] | None:
        if e.is_Atom and not (e.is_Rational or e.is_Symbol or isinstance(e, sp.NumberSymbol)):
            self.refuse(f"not a finite real expression: {e}")  # zoo from 1/0, oo from Min(), -oo from Max()
        if e.is_Rational:
            return max(_log10(abs(e.p)), _log10(e.q)), _log10(abs(e.p)) + _log10(e.q) + 1
        if e.is_Symbol:
            return self.bounds(sp.Rational(self.exact[e])) if e in self.exact else None
        if isinstance(e, sp.NumberSymbol):
            return 1.0, 1.0
        if isinstance(e, _SPECIAL):
            if len(e.args) != 1:
                self.refuse(f"{type(e).__name__} takes one argument here")
            if e.args[0].has(*_SPECIAL):
                self.refuse(f"{type(e).__name__} of a harmonic number or digamma: nested special functions are not "
                            "evaluated")
        if not e.args:
            self.refuse(f"{type(e).__name__}() takes at least one argument")
        parts = [self.bounds(a) for a in e.args]
        if any(part is None for part in parts):
            return None
        logs, sizes = [m for m, _ in parts], [z for _, z in parts]
        if e.is_Add:
            log10, size = max(logs) + math.log10(len(logs)), sum(sizes)
        elif e.is_Mul:
            log10, size = sum(logs), sum(sizes)
        elif e.is_Pow:
            (base_log10, base_size), (exp_log10, _) = parts
            power = abs(float(e.exp)) if e.exp.is_Number else _exp10(exp_log10)
            log10, size = (base_log10 * power if base_log10 else 0.0), base_size * max(1.0, power)
        else:
            log10, size = self.function(e, logs), sum(sizes) + 1
        if size > MAX_EXACT_DIGITS:
            self.refuse(f"{str(e)[:40]} is an exact number of about {size:.3g} digits (at most {MAX_EXACT_DIGITS})")
        return log10, size

    def function(self, e: sp.Basic, logs: list) -> float:
        """The bound of the magnitude of the function ``e`` from those of its exact arguments, refusing an argument
        whose value would cost too much to compute."""
        name, arg = type(e).__name__, logs[0]
        if isinstance(e, _SPECIAL):
            if arg > math.log10(MAX_SPECIAL_ARGUMENT):
                self.refuse(f"the argument of {name} is about 10^{arg:.3g}; at most {MAX_SPECIAL_ARGUMENT} "
                            "(SymPy sums the exact value term by term)")
            return math.log10(arg * _LN10 + 2) + 1
        if isinstance(e, (sp.Min, sp.Max, sp.Abs)):
            return max(logs)
        if arg > MAX_ARGUMENT_LOG10:
            self.refuse(f"the argument of {name} is about 10^{arg:.3g}, more than 10^{MAX_ARGUMENT_LOG10}: "
                        "its value would take too long to compute")
        if isinstance(e, sp.exp):
            return _exp10(arg) / _LN10
        if isinstance(e, sp.log):
            return math.log10(arg * _LN10 + 2) + 1
        return 1.0


def check_work(expr: sp.Basic, parameter: str = "expr", exact: dict | None = None) -> None:
    """Refuse, before it is evaluated, an unevaluated expression whose evaluation could run without end: an exact
    number of more than :data:`MAX_EXACT_DIGITS` digits, a function of an exact argument beyond
    ``10^MAX_ARGUMENT_LOG10``, ``harmonic`` or ``digamma`` of an exact argument above :data:`MAX_SPECIAL_ARGUMENT`,
    nested special functions.

    Exact means free of symbols, or of symbols that ``exact`` gives values (a proof substitutes the user's fixed
    values). A part that depends on a drawn parameter is evaluated by mpmath at each point, which a value far out
    of range makes fail (the point then has no value) or slow (the time budget stops it).

    >>> from sympy.parsing.sympy_parser import parse_expr
    >>> check_work(parse_expr("sin(exp(exp(40)))", evaluate=False))
    Traceback (most recent call last):
    ...
    derive.errors.ParameterError: expr: the argument of sin is about 10^1.02e+17, more than 10^10000: its value would take too long to compute
    """
    _check_depth(_tree_depth(expr, lambda e: e.args), parameter)
    _Work(exact or {}, parameter).bounds(expr)


def _tree_depth(root, children) -> int:
    """The depth of a tree (a leaf: 1), walked without recursion."""
    deepest, stack = 0, [(root, 1)]
    while stack:
        node, depth = stack.pop()
        deepest = max(deepest, depth)
        if depth <= MAX_DEPTH:
            stack.extend((child, depth + 1) for child in children(node))
    return deepest


def _check_depth(depth: int, parameter: str) -> None:
    if depth > MAX_DEPTH:
        raise ParameterError(parameter, f"nested more than {MAX_DEPTH} levels deep")


def _syntax_depth(text: str, parameter: str) -> None:
    """Refuse text nested beyond :data:`MAX_DEPTH` before SymPy's parser compiles it (the tokens are already known to
    be names, numbers, operators and parentheses: :func:`ast.parse` only reads them)."""
    import ast

    try:
        tree = ast.parse(text, mode="eval")
    except (RecursionError, MemoryError):
        raise ParameterError(parameter, f"nested more than {MAX_DEPTH} levels deep") from None
    except SyntaxError as exc:
        raise ParameterError(parameter, f"not an expression: {text[:60]!r} ({exc.msg})") from None
    _check_depth(_tree_depth(tree, ast.iter_child_nodes), parameter)


class OutOfTime(BaseException):
    """The work in a :func:`time_budget` block outlasted its budget. A ``BaseException``, so that no ``except
    Exception`` inside SymPy or Hypothesis swallows it; the caller turns it into a refusal."""


@contextmanager
def time_budget(seconds: float):
    """Raise :class:`OutOfTime` in the block once it has used ``seconds`` of this process's CPU time (a ``SIGPROF``
    timer, ``ITIMER_PROF``: the clock would make a verdict depend on the machine's load; restored after; only in
    the main thread of a process with that signal: elsewhere the static bounds of :func:`check_work` alone
    apply)."""
    if not hasattr(signal, "setitimer") or threading.current_thread() is not threading.main_thread():
        yield
        return
    armed = [True]

    def expire(signum, frame):
        if armed[0]:
            raise OutOfTime(seconds)

    previous = signal.signal(signal.SIGPROF, expire)
    outer = signal.setitimer(signal.ITIMER_PROF, seconds)
    start = time.process_time()
    try:
        yield
    finally:
        armed[0] = False
        signal.setitimer(signal.ITIMER_PROF, 0)
        signal.signal(signal.SIGPROF, previous)
        if outer[0]:  # a timer of the caller's own, resumed with what is left of it
            signal.setitimer(signal.ITIMER_PROF, max(1e-3, outer[0] - (time.process_time() - start)), outer[1])


def parse_user_expression(text, symbols: dict, parameter: str = "expr", exact: dict | None = None) -> sp.Expr:
    r"""The SymPy expression of ``text``, whose names must be keys of ``symbols`` (name -> SymPy symbol) or
    whitelisted functions; anything else raises :class:`ParameterError` naming ``parameter``, and so does an
    expression whose evaluation could run without end (:func:`check_work`, with the symbols' ``exact`` values if
    some will be substituted) or that takes more than :data:`EXPRESSION_SECONDS` to read.

    >>> from derive.symbols import delta, kappa
    >>> parse_user_expression("kappa*(1 + sqrt(delta))^2 + 0.5", {"delta": delta, "kappa": kappa})
    kappa*(sqrt(delta) + 1)**2 + 1/2
    >>> parse_user_expression("__import__('os')", {"delta": delta})
    Traceback (most recent call last):
    ...
    derive.errors.ParameterError: expr: unknown name '__import__'; use the symbols delta and the functions Abs, E, H, Max, Min, Rational, acos, asin, atan, cos, digamma, exp, harmonic, log, pi, sin, sqrt
    """
    if not isinstance(text, str):
        raise ParameterError(parameter, f"must be text, got {type(text).__name__}")
    if not text.strip():
        raise ParameterError(parameter, "empty expression")
    if len(text) > MAX_LENGTH:
        raise ParameterError(parameter, f"longer than {MAX_LENGTH} characters")
    if "\n" in text.strip() or "\r" in text:
        raise ParameterError(parameter, "must be one line")
    _check_tokens(text.strip(), set(symbols), parameter)
    _syntax_depth(text.strip().replace("^", "**"), parameter)
    names = {**FUNCTIONS, "Rational": _rational, **symbols}
    try:
        unevaluated = parse_expr(text.strip(), local_dict={**names, **_HELD}, global_dict=dict(_GLOBALS),
                                 transformations=_TRANSFORMATIONS, evaluate=False)
        _check_size(unevaluated, parameter)
        check_work(unevaluated, parameter, exact)
        with time_budget(EXPRESSION_SECONDS):
            expr = parse_expr(text.strip(), local_dict=dict(names), global_dict=dict(_GLOBALS),
                              transformations=_TRANSFORMATIONS)
    except ParameterError:
        raise
    except OutOfTime:
        raise ParameterError(parameter, f"reading {text.strip()[:60]!r} took more than {EXPRESSION_SECONDS} s of CPU "
                                        "time") from None
    except (SyntaxError, TypeError, ValueError, AttributeError, ZeroDivisionError, RecursionError) as exc:
        raise ParameterError(parameter, f"not an expression: {text.strip()[:60]!r} ({type(exc).__name__})") from None
    # a Symbol is also a Boolean to SymPy, so only "not an Expr" tells a relation or true/false from a bare symbol
    if not isinstance(expr, sp.Expr):
        raise ParameterError(parameter, f"not a scalar expression: {text.strip()[:60]!r}")
    if expr.has(sp.zoo, sp.nan, sp.oo, -sp.oo, sp.I):
        raise ParameterError(parameter, f"not a finite real expression: {expr}")
    unknown = {s for s in expr.free_symbols if s not in set(symbols.values())}
    if unknown:
        raise ParameterError(parameter, f"unknown symbols {sorted(map(str, unknown))}")
    return expr
