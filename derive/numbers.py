"""Exact reading of numeric inputs and fixed-digit writing of reals.

Inputs are read as exact rationals (``1/2``, ``0.25`` read as the decimal ``1/4``,
``3``, ``1e-3``), never through a binary float. Reported reals are decimal strings
correct to the requested number of significant digits.
"""
from __future__ import annotations

import math
import re
import sys
from fractions import Fraction

import mpmath

from derive.errors import ParameterError

__all__ = ["MAX_DIGITS", "MAX_TEXT", "MAX_EXPONENT", "parse_fraction", "parse_rational", "check_count", "real_number",
           "Reals", "real_vector", "exact_sum", "check_range", "Digits", "check_digits", "format_real", "json_reals", "format_exact"]


def _instance(x, module: str, *types: str) -> bool:
    """``isinstance(x, module.type)`` for one of ``types``, without importing ``module``: an object of a
    module that no one imported cannot be one of its types (SymPy and NumPy stay out of a query that
    does not need them)."""
    m = sys.modules.get(module)
    return m is not None and isinstance(x, tuple(getattr(m, t) for t in types))


# ASCII digits only: Python's \d and int() also read '٣' (Arabic-Indic three) as 3
_DECIMAL = re.compile(r"^[+-]?([0-9]+(\.[0-9]*)?|\.[0-9]+)([eE][+-]?[0-9]+)?$", re.ASCII)
_RATIO = re.compile(r"^[+-]?[0-9]+/[0-9]+$", re.ASCII)

MAX_DIGITS = 1000

MAX_TEXT = 200
"""Longest numeric text read: a longer one is a typo or an attack, never a parameter."""

MAX_EXPONENT = 1000
"""Largest decimal exponent read (``1e1000``): beyond it the exact rational alone would be huge."""


def parse_fraction(text, name: str) -> Fraction:
    """Read ``text`` as an exact rational (a :class:`fractions.Fraction`); ``name`` is the parameter it belongs to.

    >>> parse_fraction("0.25", "delta"), parse_fraction("-1/3", "gamma"), parse_fraction("2e-3", "mu2")
    (Fraction(1, 4), Fraction(-1, 3), Fraction(1, 500))
    >>> parse_fraction("\u0663", "delta")
    Traceback (most recent call last):
    ...
    derive.errors.ParameterError: delta: not a finite number: '٣' (use an integer, a decimal or p/q in ASCII digits)
    """
    if isinstance(text, bool) or _instance(text, "numpy", "bool_"):
        # True is an int to Python, never a parameter value to a user
        raise ParameterError(name, f"not a number: {text!r}")
    if isinstance(text, Fraction):
        return _bounded(text, name)
    if isinstance(text, int) or _instance(text, "numpy", "integer"):
        return _bounded(Fraction(int(text)), name)
    if _instance(text, "sympy", "Rational"):
        return _bounded(Fraction(int(text.p), int(text.q)), name)
    s = str(text).strip()
    if len(s) > MAX_TEXT:
        raise ParameterError(name, f"a number of more than {MAX_TEXT} characters: {s[:20]!r}...")
    if _RATIO.match(s):
        num, den = s.split("/")
        if int(den) == 0:
            raise ParameterError(name, f"division by zero in {s!r}")
        return Fraction(int(num), int(den))
    if _DECIMAL.match(s):
        mantissa, _, exponent = s.lower().partition("e")
        if exponent and abs(int(exponent)) > MAX_EXPONENT:
            raise ParameterError(name, f"exponent out of range in {s!r} (at most {MAX_EXPONENT} in magnitude)")
        return Fraction(s)
    raise ParameterError(name, f"not a finite number: {s!r} (use an integer, a decimal or p/q in ASCII digits)")


def _bounded(q: Fraction, name: str) -> Fraction:
    """``q`` when its numerator and denominator are no longer than a typed number's can be (:data:`MAX_TEXT` digits
    and an exponent up to :data:`MAX_EXPONENT`): a much longer integer cannot even be printed (Python refuses to
    convert one of more than 4300 digits to text)."""
    if max(abs(q.numerator), q.denominator).bit_length() > _MAX_BITS:
        raise ParameterError(name, f"an integer of more than {MAX_TEXT + MAX_EXPONENT} digits in its numerator or "
                                   "denominator (the most a typed number has)")
    return q


_MAX_BITS = math.ceil((MAX_TEXT + MAX_EXPONENT) * math.log2(10))


def parse_rational(text, name: str):
    """Read ``text`` as an exact rational (a SymPy ``Rational``, :func:`parse_fraction`); ``name`` is the parameter.

    >>> parse_rational("0.25", "delta"), parse_rational("1/3", "gamma"), parse_rational("2e-3", "mu2")
    (1/4, 1/3, 1/500)
    """
    import sympy as sp

    if isinstance(text, sp.Rational):
        return text
    q = parse_fraction(text, name)
    return sp.Rational(q.numerator, q.denominator)


def check_count(value, name: str, *, low: int = 0, high: int | None = None) -> int:
    """An integer parameter (a size, an order, a count) in ``[low, high]``; ``3.0`` is 3, ``2.5`` is refused.

    >>> check_count("4", "n", low=1)
    4
    """
    q = parse_fraction(value, name)
    if q.denominator != 1:
        raise ParameterError(name, f"not an integer: {value!r}")
    if q < low or (high is not None and q > high):
        bound = f"[{low}, {high}]" if high is not None else f">= {low}"
        raise ParameterError(name, f"must be an integer {bound}, got {q}")
    return int(q)


def real_number(x, name: str):
    """``x`` as a finite real SymPy number (exact where ``x`` is exact: an integer, a fraction, ``sqrt(2)``;
    a float or an mpmath real is read as the binary number it is).

    >>> import sympy as sp
    >>> real_number(0.5, "w"), real_number(sp.sqrt(2), "w")
    (1/2, sqrt(2))
    """
    import sympy as sp

    if isinstance(x, (bool, str, bytes)) or _instance(x, "numpy", "bool_"):
        raise ParameterError(name, f"not a real number: {x!r}")
    if isinstance(x, (int, Fraction, sp.Rational)) or _instance(x, "numpy", "integer"):
        return parse_rational(x, name)
    if isinstance(x, float) or _instance(x, "numpy", "floating"):
        if not math.isfinite(x):
            raise ParameterError(name, f"not a finite number: {x!r}")
        return sp.Rational(Fraction(float(x)))
    if isinstance(x, mpmath.mpf):
        if not mpmath.isfinite(x):
            raise ParameterError(name, f"not a finite number: {x!r}")
        return sp.Float(x, mpmath.mp.dps)
    if isinstance(x, sp.Basic) and x.is_number and x.is_extended_real and x.is_finite:
        return x
    raise ParameterError(name, f"not a finite real number: {x!r}")


class Reals(tuple):
    """Finite real SymPy numbers checked where they entered (:func:`real_vector`, a pooling's weights): the functions
    they reach trust them (a second reading of ``T = 10^5`` weights took tens of seconds)."""

    __slots__ = ()


def real_vector(w, name: str) -> list:
    """A non-empty one-dimensional sequence of finite reals, each read by :func:`real_number` (:class:`Reals`, read
    already, are trusted).

    >>> real_vector([1, 0.5], "weights")
    [1, 1/2]
    """
    if isinstance(w, Reals):
        return list(w)
    if isinstance(w, (str, bytes, dict, set)) or not hasattr(w, "__len__") or not hasattr(w, "__iter__"):
        raise ParameterError(name, f"must be a sequence of reals, got {type(w).__name__}")
    import sympy as sp

    array = _instance(w, "numpy", "ndarray")
    if (array or isinstance(w, sp.MatrixBase)) and len(w.shape) == 2 and 1 in w.shape:
        w = list(w)
    elif array and w.ndim != 1:
        raise ParameterError(name, f"must be one-dimensional, got shape {w.shape}")
    elif isinstance(w, sp.MatrixBase):
        raise ParameterError(name, f"must be one-dimensional, got shape {w.shape}")
    out = [real_number(x, name) for x in w]
    if not out:
        raise ParameterError(name, "is empty")
    return out


def exact_sum(xs, power: int = 1):
    """The sum of the ``power``-th powers of SymPy numbers; in Python integers and fractions when all
    are rational (SymPy's own arithmetic on 10^5 rationals takes seconds).

    >>> import sympy as sp
    >>> exact_sum([sp.Rational(1, 3)] * 3, 2), exact_sum([sp.sqrt(2), 1])
    (1/3, 1 + sqrt(2))
    """
    import sympy as sp

    xs = list(xs)
    if all(isinstance(x, sp.Rational) for x in xs):
        # numerators added per denominator first: weights share few denominators
        by_denominator = {}
        for x in xs:
            q = int(x.q) ** power
            by_denominator[q] = by_denominator.get(q, 0) + int(x.p) ** power
        total = sum((Fraction(p, q) for q, p in by_denominator.items()), Fraction(0))
        return sp.Rational(total.numerator, total.denominator)
    return sp.Add(*[x**power for x in xs])


def check_range(value, name: str, *, low=None, high=None, low_open=False, high_open=False):
    """Return ``value`` if it lies in the stated interval, else raise :class:`ParameterError`; a
    :class:`fractions.Fraction` is checked and returned as it is (without SymPy), any other value as
    :func:`real_number` reads it.

    >>> check_range(Fraction(1, 2), "delta", low=0, low_open=True)
    Fraction(1, 2)
    """
    if not isinstance(value, Fraction):
        value = real_number(value, name)
    if low is not None and (value < low or (low_open and value == low)):
        raise ParameterError(name, f"must be {'>' if low_open else '>='} {low}, got {value}")
    if high is not None and (value > high or (high_open and value == high)):
        raise ParameterError(name, f"must be {'<' if high_open else '<='} {high}, got {value}")
    return value


class Digits(int):
    """A number of significant digits checked where it entered (:func:`check_digits`): the functions it reaches
    trust it, guard digits included (:meth:`guarded`), so ``--digits 1000`` is never refused inside as 1010."""

    __slots__ = ()

    def guarded(self, extra: int = 10) -> "Digits":
        """These digits and ``extra`` guard digits, still trusted.

        >>> check_digits(1000).guarded()
        1010
        """
        return Digits(self + extra)


def check_digits(digits) -> Digits:
    """Validate a requested number of significant digits (a :class:`Digits` already checked passes as it is).

    >>> check_digits(30)
    30
    >>> check_digits([1])
    Traceback (most recent call last):
    ...
    derive.errors.ParameterError: digits: not a finite number: '[1]' (use an integer, a decimal or p/q in ASCII digits)
    """
    if isinstance(digits, Digits):
        return digits
    return Digits(check_count(digits, "digits", low=1, high=MAX_DIGITS))


def format_real(x, digits: int) -> str:
    """``x`` (an mpmath or SymPy real) as a decimal string with ``digits`` significant digits.

    >>> import sympy as sp
    >>> format_real(mpmath.mpf(1) / 3, 5), format_real(sp.Rational(1, 80000), 3), format_real(0, 4)
    ('0.33333', '1.25e-5', '0')
    >>> format_real(sp.Rational(761, 2240), 30)   # exact input keeps all 30 digits
    '0.339732142857142857142857142857'

    A non-finite or non-real ``x`` raises :class:`ParameterError` (parameter ``x``): a NaN must never
    be printed as a number.
    """
    digits = check_digits(digits)
    with mpmath.workdps(digits + 10):
        # The conversion and the printing both happen at the working precision of this block:
        # outside it mpmath would round to its default 15 digits.
        try:
            if _instance(x, "sympy", "Rational"):
                # straight to mpmath: SymPy's evalf and printing cost 50 times more
                x = Fraction(int(x.p), int(x.q))
            elif _instance(x, "sympy", "Basic"):
                x = x.evalf(digits + 10)
                x = mpmath.mpf(str(x)) if x.is_extended_real else mpmath.mpf("nan")
            elif (isinstance(x, bool) or _instance(x, "numpy", "bool_")
                  or not (isinstance(x, (int, float, Fraction, mpmath.mpf)) or _instance(x, "numpy", "integer", "floating"))):
                raise TypeError
            x = mpmath.mpf(x.numerator) / x.denominator if isinstance(x, Fraction) else mpmath.mpf(x)
        except (TypeError, ValueError):
            raise ParameterError("x", f"not a real number: {x!r}") from None
        if not mpmath.isfinite(x):
            raise ParameterError("x", f"non-finite real {x} cannot be printed as a number")
        if x == 0:
            return "0"
        return mpmath.nstr(x, digits, min_fixed=-4, max_fixed=digits + 1, strip_zeros=True)


def json_reals(doc, digits: int):
    """``doc`` (nested dicts, lists, tuples) with every float and mpmath real written by :func:`format_real`
    to ``digits`` significant digits, the project's JSON convention; a non-finite real becomes ``None``,
    a tuple key is joined by ``:``. Other values are kept.

    >>> json_reals({"a": [0.5, float("nan")], (1, 2): mpmath.mpf(1) / 3, "n": 3}, 4)
    {'a': ['0.5', None], '1:2': '0.3333', 'n': 3}
    """
    if isinstance(doc, (float, mpmath.mpf)) or _instance(doc, "numpy", "floating"):
        return format_real(doc, digits) if mpmath.isfinite(doc) else None
    if isinstance(doc, dict):
        return {":".join(map(str, k)) if isinstance(k, tuple) else k: json_reals(v, digits) for k, v in doc.items()}
    if isinstance(doc, (list, tuple)):
        return [json_reals(v, digits) for v in doc]
    return doc


def format_exact(x) -> str | None:
    """An exact rational as ``p/q`` (or ``p``); ``None`` if ``x`` is not rational.

    >>> import sympy as sp
    >>> format_exact(sp.Rational(3, 4)), format_exact(sp.sqrt(2))
    ('3/4', None)
    """
    import sympy as sp

    if isinstance(x, float):
        x = sp.nsimplify(x) if math.isfinite(x) else sp.nan
    elif (isinstance(x, (int, Fraction)) or _instance(x, "numpy", "integer")) and not isinstance(x, bool):
        x = parse_rational(x, "x")
    if not isinstance(x, sp.Basic):
        raise ParameterError("x", f"not a number: {x!r}")
    return str(x) if x.is_Rational else None


DISPLAY_DIGITS = 12
"""Significant digits of the reals a notebook shows (:class:`Displayed`)."""


def _shown(value, latex: bool) -> str:
    """One field's value as a notebook shows it: exact numbers exactly, reals to :data:`DISPLAY_DIGITS` digits,
    SymPy expressions typeset (LaTeX) or as text, sequences of at most eight items in full."""
    import html

    sp = sys.modules.get("sympy")
    if isinstance(value, Displayed):
        return value._display_table(latex)
    if isinstance(value, dict):
        return ", ".join(f"{_shown(k, latex)} = {_shown(v, latex)}" for k, v in value.items())
    if isinstance(value, (list, tuple)):
        items = [_shown(v, latex) for v in value[:8]]
        more = [r"\dots" if latex else "..."] if len(value) > 8 else []
        return ("[" if not latex else r"\left[") + ", ".join(items + more) + ("]" if not latex else r"\right]")
    if isinstance(value, mpmath.mpf):
        text = mpmath.nstr(value, DISPLAY_DIGITS)
    elif isinstance(value, float):
        text = f"{value:.{DISPLAY_DIGITS}g}"
    elif sp is not None and isinstance(value, sp.Basic) and value.is_number and not value.is_Rational:
        text = str(sp.N(value, DISPLAY_DIGITS))
    elif sp is not None and isinstance(value, sp.Basic) and not value.is_Number:
        return sp.latex(value) if latex else html.escape(str(value))
    elif hasattr(value, "spec"):
        text = value.spec
    else:
        text = str(value)
    if latex:
        return r"\text{" + text.replace("_", r"\_") + "}" if not re.fullmatch(r"[-0-9./e+]+", text) else text
    return html.escape(text)


class Displayed:
    """Rich display in a notebook for a result object: ``_repr_html_`` (a table of its fields) and ``_repr_latex_``
    (the same as a LaTeX array), the fields those of ``_DISPLAYED`` (attributes or properties) that are not ``None``,
    under the title ``_display_title()``.

    >>> class Point(Displayed):
    ...     _DISPLAYED = ("x", "law")
    ...     x, law = Fraction(1, 3), "exact"
    >>> print(Point()._repr_latex_())
    $$\\begin{array}{ll}\\textbf{Point} & \\\\ \\text{x} & 1/3 \\\\ \\text{law} & \\text{exact}\\end{array}$$
    """

    __slots__ = ()
    _DISPLAYED: tuple = ()

    def _display_title(self) -> str:
        return type(self).__name__

    def _display_rows(self) -> list:
        rows = []
        for name in self._DISPLAYED:
            value = getattr(self, name, None)
            if value is not None and value != ():
                rows.append((name, value))
        return rows

    def _display_table(self, latex: bool) -> str:
        import html

        rows = self._display_rows()
        if latex:
            body = " \\\\ ".join(r"\text{" + name.replace("_", r"\_") + "} & " + _shown(v, True) for name, v in rows)
            return rf"\begin{{array}}{{ll}}\textbf{{{self._display_title()}}} & \\ {body}\end{{array}}"
        cells = "".join(f"<tr><td style='text-align:left'>{html.escape(name)}</td>"
                        f"<td style='text-align:left'>{_shown(v, False)}</td></tr>" for name, v in rows)
        return f"<table><tr><th colspan='2' style='text-align:left'>{html.escape(self._display_title())}</th></tr>{cells}</table>"

    def _repr_latex_(self) -> str:
        return "$$" + self._display_table(True) + "$$"

    def _repr_html_(self) -> str:
        return self._display_table(False)


__all__ += ["DISPLAY_DIGITS", "Displayed"]
