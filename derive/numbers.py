"""Exact reading of numeric inputs and fixed-digit writing of reals.

Inputs are read as exact rationals (``1/2``, ``0.25`` read as the decimal ``1/4``,
``3``, ``1e-3``), never through a binary float. Reported reals are decimal strings
correct to the requested number of significant digits.
"""
from __future__ import annotations

import re
from fractions import Fraction

import mpmath
import sympy as sp

from derive.errors import ParameterError

_DECIMAL = re.compile(r"^[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?$")
_RATIO = re.compile(r"^[+-]?\d+/\d+$")

MAX_DIGITS = 1000


def parse_rational(text, name: str) -> sp.Rational:
    """Read ``text`` as an exact rational; ``name`` is the parameter it belongs to.

    >>> parse_rational("0.25", "delta"), parse_rational("1/3", "gamma"), parse_rational("2e-3", "mu2")
    (1/4, 1/3, 1/500)
    """
    if isinstance(text, sp.Rational):
        return text
    if isinstance(text, int):
        return sp.Integer(text)
    if isinstance(text, Fraction):
        return sp.Rational(text.numerator, text.denominator)
    s = str(text).strip()
    if _RATIO.match(s):
        num, den = s.split("/")
        if int(den) == 0:
            raise ParameterError(name, f"division by zero in {s!r}")
        return sp.Rational(int(num), int(den))
    if _DECIMAL.match(s):
        return sp.Rational(Fraction(s))
    raise ParameterError(name, f"not a finite number: {s!r} (use an integer, a decimal or p/q)")


def check_range(value, name: str, *, low=None, high=None, low_open=False, high_open=False):
    """Return ``value`` if it lies in the stated interval, else raise :class:`ParameterError`.

    >>> check_range(sp.Rational(1, 2), "delta", low=0, low_open=True)
    1/2
    """
    if low is not None and (value < low or (low_open and value == low)):
        raise ParameterError(name, f"must be {'>' if low_open else '>='} {low}, got {value}")
    if high is not None and (value > high or (high_open and value == high)):
        raise ParameterError(name, f"must be {'<' if high_open else '<='} {high}, got {value}")
    return value


def check_digits(digits) -> int:
    """Validate a requested number of significant digits.

    >>> check_digits(30)
    30
    """
    try:
        p = int(digits)
    except (TypeError, ValueError):
        raise ParameterError("digits", f"not an integer: {digits!r}") from None
    if not 1 <= p <= MAX_DIGITS:
        raise ParameterError("digits", f"must be between 1 and {MAX_DIGITS}, got {p}")
    return p


def format_real(x, digits: int) -> str:
    """``x`` (an mpmath or SymPy real) as a decimal string with ``digits`` significant digits.

    >>> format_real(mpmath.mpf(1) / 3, 5), format_real(sp.Rational(1, 80000), 3), format_real(0, 4)
    ('0.33333', '1.25e-5', '0')
    >>> format_real(sp.Rational(761, 2240), 30)   # exact input keeps all 30 digits
    '0.339732142857142857142857142857'

    """
    with mpmath.workdps(digits + 10):
        # The conversion and the printing both happen at the working precision of this block:
        # outside it mpmath would round to its default 15 digits.
        if isinstance(x, sp.Basic):
            x = mpmath.mpf(str(sp.N(x, digits + 10)))
        x = mpmath.mpf(x)
        if not mpmath.isfinite(x):
            raise ArithmeticError(f"non-finite real {x} reached the output")
        if x == 0:
            return "0"
        return mpmath.nstr(x, digits, min_fixed=-4, max_fixed=digits + 1, strip_zeros=True)


def format_exact(x) -> str | None:
    """An exact rational as ``p/q`` (or ``p``); ``None`` if ``x`` is not rational.

    >>> format_exact(sp.Rational(3, 4)), format_exact(sp.sqrt(2))
    ('3/4', None)
    """
    x = sp.nsimplify(x) if isinstance(x, float) else sp.sympify(x)
    return str(x) if x.is_Rational else None
