r"""Sign laws: what every sign family is.

A sign family is a law of :math:`\xi \in \{\pm1\}^T` with :math:`E\xi = 0` and positional correlation
:math:`R = E\xi\xi^\top` (:math:`R_{tt} = 1`). :class:`SignFamily` is what the rest of the project asks of one: its
exact ``R(T)``, :math:`w^\top R w`, a sampler ``sample(rng, N, T)`` of exactly that law, the block of positions that
share one sign (closed-form optimal weights) and its costs. The families with a name live in the catalogue
:mod:`derive.model.families`, one class each, with the one reader of a spec (``parse_signs``) and the wrapper of a
user's own family (``UserFamily``). Reading a spec and checking that it fits ``T`` need no SymPy.
"""
from __future__ import annotations

from functools import lru_cache

from derive.errors import ParameterError
from derive.numbers import check_count, real_number

__all__ = ["MAX_T", "Length", "check_T", "check_R", "SignFamily"]

MAX_T = 100_000


class Length(int):
    """A sequence length checked where it entered (:func:`check_T`, a :class:`~derive.Model`): trusted below."""

    __slots__ = ()


def check_T(T) -> Length:
    """Validate a sequence length (a :class:`Length` already checked passes as it is).

    >>> check_T(8)
    8
    """
    if isinstance(T, Length):
        return T
    return Length(check_count(T, "T", low=1, high=MAX_T))


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


class SignFamily:
    """A sign family of the catalogue (:mod:`derive.model.families`) with its parameter, or a user's
    (:class:`UserFamily`). Families compare by their kind and spec.

    Each class of the catalogue sets ``kind`` (its name in a spec), ``syntax`` (how a spec is written, ``markov:r``),
    ``summary`` (one line of help), ``notation`` (the same in the notation's mathematics), and implements
    :meth:`parse` and :meth:`sample`; ``R`` comes from the class's symbolic entry :meth:`entry` unless it overrides
    :meth:`R`.
    """

    kind: str = ""
    syntax: str = ""
    summary: str = ""
    notation: str = ""
    """What the family is in the notation (``docs/notation.md``, the formula sheet): a phrase, mathematics between
    dollars; empty for one listed by its syntax alone."""
    max_T: int = MAX_T
    """The longest sequence the family's ``R`` and sampler are offered for."""
    toeplitz: bool = False
    """Whether ``R_ts`` depends on ``|t - s|`` only (then :func:`derive.model.families.toeplitz_total` sums its entry in
    closed form)."""

    __slots__ = ("spec", "param")

    def __init__(self, spec: str, param=None):
        object.__setattr__(self, "spec", spec)
        object.__setattr__(self, "param", param)

    def __setattr__(self, name, value):
        raise AttributeError("a sign family is immutable")

    def _key(self):
        return type(self).__name__, self.spec, self.param

    def __eq__(self, other):
        return isinstance(other, SignFamily) and self._key() == other._key()

    def __hash__(self):
        return hash(self._key())

    def __repr__(self):
        return f"{type(self).__name__}({self.spec!r})"

    @property
    def name(self) -> str:
        """The family as a user names it: its spec (``markov:1/2``)."""
        return self.spec

    @property
    def memo_key(self) -> str | None:
        """What names the family in a cache key (its spec), or ``None`` when no string does (a file may change, a
        user object has no spec): results for it are not kept between runs."""
        return self.spec

    @classmethod
    def parse(cls, spec: str, arg: str) -> "SignFamily":
        """The family of ``spec`` (``arg`` is its part after the colon)."""
        raise NotImplementedError

    @classmethod
    def entry(cls):
        r"""The symbolic entry :math:`R_{ts}` in ``t, s, T`` and the parameter :meth:`parameter` (SymPy)."""
        raise ParameterError("signs", f"{cls.kind!r} has no symbolic entry")

    @classmethod
    def parameter(cls):
        """The SymPy symbol of the family's parameter in :meth:`entry` (``None`` without one)."""
        return None

    def check(self, T) -> int:
        """``T`` validated for this family (a ``prefix:L`` needs ``L <= T``, a file its own size), without building
        ``R``.

        >>> from derive.model.families import parse_signs
        >>> parse_signs("prefix:2").check(3)
        3
        """
        return check_T(T)

    def R(self, T: int):
        """The exact ``T x T`` correlation matrix (SymPy), from :meth:`entry`.

        >>> from derive.model.families import parse_signs
        >>> parse_signs("prefix:2").R(3)
        Matrix([
        [1, 1, 0],
        [1, 1, 0],
        [0, 0, 1]])
        """
        import sympy as sp

        T = self.check(T)
        entry = _entry_function(type(self))
        size = sp.Integer(T)
        param = sp.Rational(self.param.numerator, self.param.denominator) if self.param is not None else sp.Integer(0)
        # R_ts = R_st for every family: half the entries are evaluated
        values = {}
        for i in range(T):
            for j in range(i, T):
                values[i, j] = values[j, i] = sp.sympify(entry(sp.Integer(i + 1), sp.Integer(j + 1), size, param))
        return sp.Matrix(T, T, lambda i, j: values[i, j])

    def quadratic_form(self, w):
        r""":math:`w^\top R w`, exact when ``w`` is, the length of ``w`` checked for this family; a family with a
        closed form overrides :meth:`_quadratic_form` (``O(T)`` sums instead of forming ``R``).

        >>> import sympy as sp
        >>> from derive.model.families import parse_signs
        >>> w = [sp.Rational(1, 2), sp.Rational(1, 4), sp.Rational(1, 4)]
        >>> [parse_signs(f).quadratic_form(w) for f in ("iid", "prefix:2", "markov:1/2")]
        [3/8, 5/8, 5/8]
        """
        w = list(w)
        return self._quadratic_form(w, self.check(len(w)))

    def _quadratic_form(self, w: list, T: int):
        """:meth:`quadratic_form` of weights whose length ``T`` was checked for this family (by the caller, as a
        :class:`~derive.Model` checks its ``T``): not checked again."""
        import sympy as sp

        v = sp.Matrix(w)
        return (v.T * self.R(T) * v)[0, 0]

    def block(self, T: int) -> list | None:
        """The positions ``B`` if ``R = 1_B 1_B^T`` on ``B`` and the identity elsewhere (``[]`` for ``R = I``), else
        ``None``; read off ``R`` up to ``T = 64`` unless the family knows it in closed form."""
        if T > 64:
            return None
        R = self.R(T)
        B = [i for i in range(T) if any(R[i, j] != 0 for j in range(T) if j != i)]
        for i in range(T):
            for j in range(T):
                if R[i, j] != (1 if (i == j or (i in B and j in B)) else 0):
                    return None
        return B

    @classmethod
    def block_form(cls):
        r"""``R`` in blocks of symbolic sizes where it is :math:`1_B 1_B^\top` on one block ``B`` of positions and the
        identity elsewhere, for every ``T`` and parameter: ``(R, sizes, shared)``, a SymPy ``BlockMatrix``, the sizes of
        its diagonal blocks (in ``T`` and :meth:`parameter`) and the index of ``B`` among them; ``None`` (the default)
        for a family without that form. The optimality results of :mod:`derive.model.optimality` are derived on it."""
        return None

    def top_eigenvalue(self, T: int):
        """The top eigenvalue of ``R(T)`` in closed form, or ``None`` (the default) where the family knows none."""
        return None

    @classmethod
    def tabulated(cls, T: int) -> tuple[str, ...]:
        """The arguments (after the colon) of an exact table of the family at length ``T``, over which claim C7
        compares causal attention with mean pooling: every parameter where there are finitely many, else a grid;
        ``()`` (the default) for a family no table covers."""
        return ()

    def sample(self, rng, n: int, T: int):
        """``n`` sign vectors of length ``T`` (an ``(n, T)`` int8 array of ``+-1``) with this law, drawn from the
        :class:`numpy.random.Generator` ``rng``."""
        raise NotImplementedError

    def sampler_bytes(self, T: int) -> int:
        """Memory the sampler holds beside its ``n x T`` signs (a Cholesky factor, say)."""
        return 0

    @classmethod
    def examples(cls, T: int) -> tuple[str, ...]:
        """The arguments (after the colon) that property tests draw for length ``T``, simplest first; ``()`` for a
        family that needs a user's data."""
        return ()


@lru_cache(maxsize=None)
def _entry_function(cls):
    """The symbolic entry of a family compiled to a function of SymPy ``(t, s, T, parameter)``: exact
    SymPy arithmetic, and thousands of times faster than ``subs`` (``T = 1000`` took many minutes)."""
    import sympy as sp

    from derive.symbols import T as T_, s as s_, t as t_

    param = cls.parameter() or sp.Dummy("unused")
    entry = cls.entry()
    # the printer writes pi and 1/2 as floats: exact constants go in as arguments instead
    constants = sorted(entry.atoms(sp.NumberSymbol) | {q for q in entry.atoms(sp.Rational) if not q.is_Integer}, key=str)
    stand_ins = [sp.Dummy() for _ in constants]
    f = sp.lambdify((t_, s_, T_, param, *stand_ins), entry.xreplace(dict(zip(constants, stand_ins))), modules="sympy")
    return lambda t, s, T, p: f(t, s, T, p, *constants)
