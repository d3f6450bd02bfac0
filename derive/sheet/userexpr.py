"""Reading a user's closed form safely: a SymPy expression in the model's documented symbols.

SymPy's ``parse_expr`` evaluates Python code, so the text is first checked token by token: only numbers,
the arithmetic operators, parentheses, commas and the whitelisted names (the symbols a quantity takes and
the functions of :data:`FUNCTIONS`) may appear; no attribute access, no strings, no brackets, no keywords.
Decimals are read exactly (``0.95`` is ``19/20``), ``^`` is a power, and the size of the text, of its
integers and of its numeric exponents is bounded, so that no expression can make SymPy run without end.
"""
from __future__ import annotations

import io
import tokenize

import sympy as sp
from sympy.parsing.sympy_parser import convert_xor, parse_expr, rationalize, standard_transformations

from derive.errors import ParameterError

__all__ = ["MAX_LENGTH", "MAX_INTEGER_DIGITS", "MAX_EXPONENT", "FUNCTIONS", "parse_user_expression"]

MAX_LENGTH = 2000
"""Longest expression text read (a closed form of this model fits in a few hundred characters)."""

MAX_INTEGER_DIGITS = 60
"""Most digits of one integer literal."""

MAX_EXPONENT = 64
"""Largest magnitude of a numeric exponent (``x**1000000`` would expand into a huge polynomial)."""

FUNCTIONS = {
    "sqrt": sp.sqrt, "exp": sp.exp, "log": sp.log, "Abs": sp.Abs, "Min": sp.Min, "Max": sp.Max,
    "harmonic": sp.harmonic, "H": sp.harmonic, "digamma": sp.digamma, "asin": sp.asin, "acos": sp.acos,
    "atan": sp.atan, "sin": sp.sin, "cos": sp.cos, "pi": sp.pi, "E": sp.E, "Rational": sp.Rational,
}
"""The functions and constants a closed form may use (``H(k)`` is the harmonic number :math:`H_k`)."""

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


def parse_user_expression(text, symbols: dict, parameter: str = "expr") -> sp.Expr:
    r"""The SymPy expression of ``text``, whose names must be keys of ``symbols`` (name -> SymPy symbol) or
    whitelisted functions; anything else raises :class:`ParameterError` naming ``parameter``.

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
    names = {**FUNCTIONS, **symbols}
    try:
        unevaluated = parse_expr(text.strip(), local_dict=dict(names), global_dict=dict(_GLOBALS),
                                 transformations=_TRANSFORMATIONS, evaluate=False)
        _check_size(unevaluated, parameter)
        expr = parse_expr(text.strip(), local_dict=dict(names), global_dict=dict(_GLOBALS),
                          transformations=_TRANSFORMATIONS)
    except ParameterError:
        raise
    except (SyntaxError, TypeError, ValueError, AttributeError, ZeroDivisionError) as exc:
        raise ParameterError(parameter, f"not an expression: {text.strip()[:60]!r} ({type(exc).__name__})") from None
    if not isinstance(expr, sp.Expr) or isinstance(expr, sp.logic.boolalg.Boolean):
        raise ParameterError(parameter, f"not a scalar expression: {text.strip()[:60]!r}")
    if expr.has(sp.zoo, sp.nan, sp.oo, -sp.oo, sp.I):
        raise ParameterError(parameter, f"not a finite real expression: {expr}")
    unknown = {s for s in expr.free_symbols if s not in set(symbols.values())}
    if unknown:
        raise ParameterError(parameter, f"unknown symbols {sorted(map(str, unknown))}")
    return expr
