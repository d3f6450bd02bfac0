"""Reading what a user gives ``verify formula``: the closed form (a SymPy expression or its text, read safely by
:func:`derive.sheet.userexpr.parse_user_expression`) and the constraints ``where`` on the domain searched."""
from __future__ import annotations

import re

import sympy as sp
from sympy.core.function import AppliedUndef

from derive.errors import ParameterError
from derive.numbers import parse_rational
from derive.sheet.quantities import Quantity, quantity
from derive.sheet.userexpr import check_work, parse_user_expression

__all__ = ["parse_where", "read_expression", "constrained", "where_with", "clauses"]

_WHERE = re.compile(r"^\s*([A-Za-z_][A-Za-z0-9_]*)\s*(<=|>=|==|=|<|>)\s*([^,<>=]+?)\s*$")


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
        clauses_ = [(str(k), "=", v) for k, v in where.items()]
    elif isinstance(where, str):
        clauses_ = []
        for part in (p for p in where.split(",") if p.strip()):
            match = _WHERE.match(part)
            if not match:
                raise ParameterError("where", f"cannot read {part.strip()!r} (write name=value, name<value, name>=value, ...)")
            clauses_.append(match.groups())
    else:
        raise ParameterError("where", f"must be text or a dict, got {type(where).__name__}")
    given = set()
    for name, op, value in clauses_:
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
    threshold) is checked by drawing a point of the domain, before any proof too
    (:func:`verify.formula.check_formula`)."""
    b = q.parameters[sym]
    if b.depends is not None and not b.integer:
        return
    low_ok = v > b.low if b.low_open else v >= b.low
    high_ok = v < b.high if b.high_open else v <= b.high
    if not (low_ok and high_ok) or (b.integer and not v.is_integer):
        raise ParameterError("where", f"{sym.name} = {v} is outside the domain of {q.name} ({q.domain}; "
                                      f"{sym.name} in {'(' if b.low_open else '['}{b.low}, {b.high}{')' if b.high_open else ']'}"
                                      f"{', an integer' if b.integer else ''})")


def read_expression(q: Quantity, expr, fixed: dict) -> sp.Expr:
    """The user's closed form of ``q``: a SymPy expression in the quantity's symbols, or text read safely; either way
    its work bounded before anything evaluates it (with the ``fixed`` values a proof substitutes). The sheet's
    functions of ``theta`` (``zeta(theta)``, ``eta``, ...) are read where the quantity defines them
    (:attr:`~derive.sheet.quantities.Quantity.functions`); a sheet name the quantity cannot take is refused with the
    reason (``rho`` in ``population.mu2_critical``, which is the critical ``mu2`` itself)."""
    functions = q.functions
    if isinstance(expr, sp.Basic):
        unknown = {s for s in expr.free_symbols if s not in set(q.names.values())}
        if unknown:
            why = [q.unknown_name(str(s)) for s in sorted(unknown, key=str)]
            raise ParameterError("expr", next((w for w in why if w), None) or
                                 f"unknown symbols {sorted(map(str, unknown))} for {q.name} (it takes {', '.join(q.names)})")
        calls = {type(e).__name__ for e in expr.atoms(AppliedUndef)} - set(functions)
        if calls:
            raise ParameterError("expr", f"unknown functions {sorted(calls)} for {q.name}")
        check_work(expr, "expr", fixed)
        return expr
    return parse_user_expression(expr, q.names, exact=fixed, explain=q.unknown_name,
                                 functions={name: (f, "theta") for name, (f, _, _) in functions.items()})


def constrained(where) -> set:
    """The names the user's ``where`` constrains."""
    if isinstance(where, dict):
        return set(map(str, where))
    if isinstance(where, str):
        return {m.group(1) for part in where.split(",") if (m := _WHERE.match(part))}
    return set()


def where_with(where, clause: str):
    """``where`` (text, a dict or ``None``) with one more clause."""
    if isinstance(where, dict):
        where = ", ".join(f"{k}={v}" for k, v in where.items())
    return f"{where}, {clause}" if where and str(where).strip() else clause


def clauses(where: dict) -> str:
    """Conditions as ``--where`` writes them: ``mask=strict, T>1``.

    >>> clauses({"mask": "strict", "T>": 1})
    'mask=strict, T>1'
    """
    return ", ".join(f"T>{v}" if k == "T>" else f"{k}={v}" for k, v in where.items())
