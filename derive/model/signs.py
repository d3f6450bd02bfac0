"""The model's parameters and the sign-correlation families.

Every family gives its positional correlation ``R = E[xi xi^T]`` as an exact SymPy
matrix, built from one symbolic entry ``R_{ts}`` per family. Nothing here is random: the
samplers of ``xi in {+1,-1}^T`` with exactly that ``R`` are in :mod:`verify.montecarlo.signs`.
Reading a spec and checking that it fits ``T`` need no SymPy (a Monte Carlo run imports it only
for ``R`` itself); the parameter of a family is an exact :class:`fractions.Fraction`.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from fractions import Fraction
from functools import lru_cache

from derive.errors import ParameterError
from derive.numbers import check_count, check_range, exact_sum, parse_fraction, real_number

__all__ = ["FAMILIES", "MAX_T", "check_T", "check_R", "correlation_entry", "toeplitz_total", "SignFamily", "family"]

FAMILIES = ("iid", "prefix", "suffix", "markov", "gauss")
"""The families with a symbolic entry (a user matrix is ``file:PATH``)."""


@lru_cache(maxsize=None)
def _entries() -> dict:
    """The symbolic entry of each family and the symbol of its parameter."""
    import sympy as sp

    from derive.symbols import L as L_, T as T_, r as r_, rho as rho_, s as s_, t as t_

    entries = {
        "iid": sp.KroneckerDelta(t_, s_),
        "prefix": sp.Piecewise((1, sp.And(t_ <= L_, s_ <= L_)), (sp.KroneckerDelta(t_, s_), True)),
        "suffix": sp.Piecewise(
            (1, sp.And(t_ > T_ - L_, s_ > T_ - L_)), (sp.KroneckerDelta(t_, s_), True)
        ),
        "markov": r_ ** sp.Abs(t_ - s_),
        "gauss": 2 / sp.pi * sp.asin(rho_ ** sp.Abs(t_ - s_)),
    }
    return entries, {"prefix": L_, "suffix": L_, "markov": r_, "gauss": rho_}


MAX_T = 100_000


def check_T(T) -> int:
    """Validate a sequence length.

    >>> check_T(8)
    8
    """
    return check_count(T, "T", low=1, high=MAX_T)


def check_R(R, T: int | None = None):
    """``R`` as a square SymPy matrix of finite reals (``T x T`` if ``T`` is given).

    >>> check_R([[1, 0], [0, 1]], 2)
    Matrix([
    [1, 0],
    [0, 1]])
    """
    import sympy as sp

    try:
        M = R if isinstance(R, sp.MatrixBase) else sp.Matrix(R)
    except (TypeError, ValueError, AttributeError, NotImplementedError, sp.SympifyError):
        raise ParameterError("R", f"not a matrix: {type(R).__name__}") from None
    n = M.rows if T is None else T
    if M.shape != (n, n) or n == 0:
        raise ParameterError("R", f"must be a nonempty square {n} x {n} matrix, got {M.rows} x {M.cols}")
    return sp.Matrix(n, n, [real_number(x, "R") for x in M])


def correlation_entry(kind: str):
    r"""The symbolic entry :math:`R_{ts}` of a family, in ``t, s`` and its parameter.

    >>> correlation_entry("markov")
    r**Abs(s - t)
    """
    if not isinstance(kind, str) or kind not in FAMILIES:
        raise ParameterError("signs", f"unknown family {kind!r}")
    return _entries()[0][kind]


@lru_cache(maxsize=None)
def _entry_function(kind: str):
    """The symbolic entry of a family compiled to a function of SymPy ``(t, s, T, parameter)``: exact
    SymPy arithmetic, and thousands of times faster than ``subs`` (``T = 1000`` took many minutes)."""
    import sympy as sp

    from derive.symbols import T as T_, s as s_, t as t_

    param = _entries()[1].get(kind, sp.Dummy("unused"))
    entry = correlation_entry(kind)
    # the printer writes pi and 1/2 as floats: exact constants go in as arguments instead
    constants = sorted(entry.atoms(sp.NumberSymbol) | {q for q in entry.atoms(sp.Rational) if not q.is_Integer}, key=str)
    stand_ins = [sp.Dummy() for _ in constants]
    f = sp.lambdify((t_, s_, T_, param, *stand_ins), entry.xreplace(dict(zip(constants, stand_ins))), modules="sympy")
    return lambda t, s, T, p: f(t, s, T, p, *constants)


@lru_cache(maxsize=None)
def toeplitz_total(kind: str):
    r"""The sum of all entries of ``R`` for a family whose entry depends on ``|t - s|`` only, in ``T`` and
    the family's parameter: :math:`\sum_{t,s=1}^T R_{ts} = T R_{11} + 2\sum_{k=1}^{T-1} (T-k) R_{1,1+k}`,
    summed by SymPy (``alpha`` of the mean weights is this over ``T^2``).

    >>> import sympy as sp
    >>> from derive.symbols import T, r
    >>> toeplitz_total("iid"), toeplitz_total("markov").subs({T: 3, r: sp.Rational(1, 2)})
    (T, 11/2)
    """
    import sympy as sp

    from derive.symbols import T as T_, s as s_, t as t_

    if kind not in ("iid", "markov", "gauss"):
        raise ParameterError("signs", f"{kind!r} is not a family whose R depends on |t - s| only")
    k = sp.Dummy("k", integer=True, positive=True)
    entry = correlation_entry(kind)
    return T_ * entry.subs({t_: 1, s_: 1}) + 2 * sp.summation((T_ - k) * entry.subs({t_: 1, s_: 1 + k}), (k, 1, T_ - 1))


@dataclass(frozen=True)
class SignFamily:
    """A sign-correlation family with its parameter (``L``, ``r``, ``rho``) or a user matrix."""

    spec: str
    kind: str
    param: Fraction | None = None
    matrix: object | None = field(default=None, compare=False)
    mixture: tuple | None = field(default=None, compare=False)

    def check(self, T) -> int:
        """``T`` validated for this family (a ``prefix:L`` or ``suffix:L`` needs ``L <= T``, a file its own
        size), without building ``R``.

        >>> family("prefix:2").check(3)
        3
        """
        T = check_T(T)
        if self.kind == "file" and self.matrix.shape[0] != T:
            raise ParameterError("T", f"the matrix in {self.spec} is {self.matrix.shape[0]}x{self.matrix.shape[0]}, not {T}x{T}")
        if self.kind in ("prefix", "suffix") and self.param > T:
            raise ParameterError("signs", f"{self.spec}: L = {self.param} exceeds T = {T}")
        return T

    def quadratic_form(self, w):
        r""":math:`w^\top R w` without forming ``R``: ``O(T)`` sums for ``iid``, ``prefix:L``, ``suffix:L``
        and ``markov:r`` (a recursion over the positions), :func:`toeplitz_total` for equal weights, the
        lags of ``R`` otherwise; exact when ``w`` is.

        >>> import sympy as sp
        >>> w = [sp.Rational(1, 2), sp.Rational(1, 4), sp.Rational(1, 4)]
        >>> [family(f).quadratic_form(w) for f in ("iid", "prefix:2", "markov:1/2")]
        [3/8, 5/8, 5/8]
        """
        import sympy as sp

        from derive.symbols import T as T_

        w = list(w)
        T = self.check(len(w))
        if self.kind == "file":
            v = sp.Matrix(w)
            return (v.T * self.matrix * v)[0, 0]
        if self.kind == "iid":
            return exact_sum(w, 2)
        if self.kind in ("prefix", "suffix"):
            L = int(self.param)
            block, rest = (w[:L], w[L:]) if self.kind == "prefix" else (w[T - L:], w[:T - L])
            return exact_sum(block) ** 2 + exact_sum(rest, 2)
        param = sp.Rational(self.param.numerator, self.param.denominator)
        if all(x == w[0] for x in w):
            total = toeplitz_total(self.kind).subs({T_: T, _entries()[1][self.kind]: param})
            return w[0] ** 2 * total.doit()
        if self.kind == "markov":
            # g_t = sum_{s<t} r^{t-s} w_s = r (g_{t-1} + w_{t-1}): alpha = sum_t w_t^2 + 2 sum_t w_t g_t
            exact = all(isinstance(x, sp.Rational) for x in w)
            r, ws = (self.param, [Fraction(int(x.p), int(x.q)) for x in w]) if exact else (param, w)
            g = total = 0
            for t in range(T):
                if t:
                    g = r * (g + ws[t - 1])
                total += ws[t] * ws[t] + 2 * ws[t] * g
            return sp.Rational(total.numerator, total.denominator) if exact else sp.sympify(total)
        entry = _entry_function(self.kind)
        size = sp.Integer(T)
        lags = [sp.sympify(entry(sp.Integer(1), sp.Integer(1 + k), size, param)) for k in range(T)]
        return sp.Add(*[lags[k] * (1 if k == 0 else 2) * exact_sum(w[i] * w[i + k] for i in range(T - k))
                        for k in range(T)])

    def R(self, T: int):
        """The exact ``T x T`` correlation matrix of this family (SymPy).

        >>> family("prefix:2").R(3)
        Matrix([
        [1, 1, 0],
        [1, 1, 0],
        [0, 0, 1]])
        """
        import sympy as sp

        T = self.check(T)
        if self.kind == "file":
            return self.matrix
        entry = _entry_function(self.kind)
        size = sp.Integer(T)
        param = sp.Rational(self.param.numerator, self.param.denominator) if self.param is not None else sp.Integer(0)
        # R_ts = R_st for every family: half the entries are evaluated
        values = {}
        for i in range(T):
            for j in range(i, T):
                values[i, j] = values[j, i] = sp.sympify(entry(sp.Integer(i + 1), sp.Integer(j + 1), size, param))
        return sp.Matrix(T, T, lambda i, j: values[i, j])


def family(spec: str) -> SignFamily:
    """Read the spec of a family with a closed form: ``iid``, ``prefix:L``, ``suffix:L``, ``markov:r``,
    ``gauss:rho`` (a user's ``file:PATH`` is read by :func:`derive.model.spec.parse_signs`).

    ``gauss:rho`` is the sign of a Gaussian vector with ``Sigma_ts = rho^|t-s|``, so
    ``R = (2/pi) arcsin(Sigma)``.

    >>> family("markov:1/2").param
    Fraction(1, 2)
    """
    if not isinstance(spec, str) or not spec.strip():
        raise ParameterError("signs", f"empty or malformed spec {spec!r}")
    spec = spec.strip()
    kind, _, arg = spec.partition(":")
    if kind == "iid":
        if arg:
            raise ParameterError("signs", f"'iid' takes no argument, got {spec!r}")
        return SignFamily(spec, "iid")
    if kind in ("prefix", "suffix"):
        L = parse_fraction(arg, "signs") if arg else None
        if L is None or L.denominator != 1 or L < 1:
            raise ParameterError("signs", f"{kind}:L needs an integer L >= 1, got {spec!r}")
        return SignFamily(spec, kind, L)
    if kind == "markov":
        r = check_range(parse_fraction(arg, "signs"), "signs", low=-1, high=1)
        return SignFamily(spec, kind, r)
    if kind == "gauss":
        rho = check_range(parse_fraction(arg, "signs"), "signs", low=-1, high=1, low_open=True, high_open=True)
        return SignFamily(spec, kind, rho)
    if kind == "file":
        raise ParameterError("signs", f"{spec!r}: a file is read by derive.model.spec.parse_signs")
    raise ParameterError("signs", f"unknown family {kind!r} in {spec!r} (iid, prefix:L, suffix:L, markov:r, gauss:rho, file:PATH)")
