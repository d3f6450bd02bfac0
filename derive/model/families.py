r"""The catalogue of sign families: one class per family of the paper, each with how its spec is written and read,
its exact ``R`` (one symbolic entry :math:`R_{ts}`, or a user's file), :math:`w^\top R w` in closed form where it has
one, its sampler of exactly that law and its costs.

:func:`parse_signs` reads a spec (``markov:1/2``) into one of them. A user's own family is any object with a ``name``,
an exact ``R(T)`` (a ``T x T`` list of lists of rationals) and ``sample(rng, N, T)``; :func:`as_family` wraps it in a
:class:`UserFamily`, which certifies its ``R`` (symmetric, unit diagonal, realizable by ``+-1`` variables:
:mod:`derive.model.realizable`) and checks what its sampler returns.

Adding a family is one class here (and its tests): the command lines' choices and help, the notation's list, the
Hypothesis strategies, the catalogue's tests and every check are made from :data:`CATALOGUE`, and the optimality
results (:mod:`derive.model.optimality`) take every family whose class gives a block form or a table
(notes/architecture.md counts the files).

>>> [cls.syntax for cls in CATALOGUE]
['iid', 'prefix:L', 'suffix:L', 'markov:r', 'gauss:rho', 'file:PATH']
"""
from __future__ import annotations

from fractions import Fraction
from functools import lru_cache

from derive.errors import ParameterError
from derive.model.signs import SignFamily, check_T
from derive.numbers import check_range, exact_sum, parse_fraction
from derive.resources import MAX_GAUSS_T

__all__ = ["CATALOGUE", "IID", "Prefix", "Suffix", "Markov", "Gauss", "File", "toeplitz_total", "UserFamily",
           "parse_signs", "as_family", "family_syntaxes"]


def _fair(rng, shape):
    import numpy as np

    return (2 * rng.integers(0, 2, size=shape, dtype=np.int8) - 1).astype(np.int8)


class IID(SignFamily):
    """Independent fair signs: ``R = I``."""

    kind, syntax, summary = "iid", "iid", "independent fair signs, R = I"
    notation = "$R = I$"
    toeplitz = True
    __slots__ = ()

    @classmethod
    def parse(cls, spec, arg):
        if arg:
            raise ParameterError("signs", f"'iid' takes no argument, got {spec!r}")
        return cls(spec)

    @classmethod
    def entry(cls):
        import sympy as sp

        from derive.symbols import s, t

        return sp.KroneckerDelta(t, s)

    def _quadratic_form(self, w, T):
        return exact_sum(w, 2)

    def block(self, T):
        return []

    def sample(self, rng, n, T):
        return _fair(rng, (n, T))

    @classmethod
    def examples(cls, T):
        return ("",)


class _Block(SignFamily):
    """``L`` positions share one fair sign, the others are independent: ``R = 1_B 1_B^T`` on the block ``B``."""

    shared_first: bool = True
    """Whether the block ``B`` is the first ``L`` positions (else the last)."""
    __slots__ = ()

    @classmethod
    def parse(cls, spec, arg):
        L = parse_fraction(arg, "signs") if arg else None
        if L is None or L.denominator != 1 or L < 1:
            raise ParameterError("signs", f"{cls.kind}:L needs an integer L >= 1, got {spec!r}")
        return cls(spec, L)

    @classmethod
    def parameter(cls):
        from derive.symbols import L

        return L

    def check(self, T):
        T = check_T(T)
        if self.param > T:
            raise ParameterError("signs", f"{self.spec}: L = {self.param} exceeds T = {T}")
        return T

    def _positions(self, T: int) -> range:
        raise NotImplementedError

    def _quadratic_form(self, w, T):
        inside = self._positions(T)
        return exact_sum(w[i] for i in inside) ** 2 + exact_sum((w[i] for i in range(T) if i not in inside), 2)

    def block(self, T):
        return [] if self.param == 1 else list(self._positions(T))

    @classmethod
    def block_form(cls):
        import sympy as sp

        from derive.symbols import L, T

        rest = T - L
        shared, other = sp.OneMatrix(L, L), sp.Identity(rest)
        if cls.shared_first:
            return sp.BlockMatrix([[shared, sp.ZeroMatrix(L, rest)], [sp.ZeroMatrix(rest, L), other]]), (L, rest), 0
        return sp.BlockMatrix([[other, sp.ZeroMatrix(rest, L)], [sp.ZeroMatrix(L, rest), shared]]), (rest, L), 1

    def top_eigenvalue(self, T):
        # R = J_L on the block and I elsewhere: eigenvalues L, 0 and 1, and L >= 1
        self.check(T)
        return int(self.param)

    @classmethod
    def examples(cls, T):
        return tuple(str(L) for L in range(1, T + 1))

    @classmethod
    def tabulated(cls, T):
        return cls.examples(T)

    def sample(self, rng, n, T):
        xi = _fair(rng, (n, T))
        inside = self._positions(T)
        xi[:, inside.start:inside.stop] = xi[:, inside.start:inside.start + 1]
        return xi


class Prefix(_Block):
    """The first ``L`` positions share one fair sign (the signal early in the sequence)."""

    kind, syntax, summary = "prefix", "prefix:L", "the first L positions share one fair sign, the rest are independent"
    notation = "the first $L$ positions share one sign"
    __slots__ = ()

    @classmethod
    def entry(cls):
        import sympy as sp

        from derive.symbols import L, s, t

        return sp.Piecewise((1, sp.And(t <= L, s <= L)), (sp.KroneckerDelta(t, s), True))

    def _positions(self, T):
        return range(int(self.param))


class Suffix(_Block):
    """The last ``L`` positions share one fair sign (the signal late in the sequence)."""

    kind, syntax, summary = "suffix", "suffix:L", "the last L positions share one fair sign, the rest are independent"
    notation = "the last $L$ positions share one sign"
    shared_first = False
    __slots__ = ()

    @classmethod
    def entry(cls):
        import sympy as sp

        from derive.symbols import L, T, s, t

        return sp.Piecewise((1, sp.And(t > T - L, s > T - L)), (sp.KroneckerDelta(t, s), True))

    def _positions(self, T):
        return range(T - int(self.param), T)


class _Toeplitz(SignFamily):
    """A family whose ``R_ts`` depends on ``|t - s|`` only, with a parameter in ``[-1, 1]``."""

    toeplitz = True
    __slots__ = ()

    def _quadratic_form(self, w, T):
        import sympy as sp

        from derive.symbols import T as T_

        param = sp.Rational(self.param.numerator, self.param.denominator)
        if all(x == w[0] for x in w):
            return w[0] ** 2 * toeplitz_total(type(self)).subs({T_: T, self.parameter(): param}).doit()
        return self._lag_form(w, param)

    @classmethod
    def examples(cls, T):
        return tuple(f"{k}/10" for k in sorted(range(-9, 10), key=lambda k: (abs(k), k)))

    def _lag_form(self, w, param):
        import sympy as sp

        from derive.model.signs import _entry_function

        T = len(w)
        entry = _entry_function(type(self))
        size = sp.Integer(T)
        lags = [sp.sympify(entry(sp.Integer(1), sp.Integer(1 + k), size, param)) for k in range(T)]
        return sp.Add(*[lags[k] * (1 if k == 0 else 2) * exact_sum(w[i] * w[i + k] for i in range(T - k))
                        for k in range(T)])


class Markov(_Toeplitz):
    """A stationary ``+-1`` Markov chain that keeps its sign with probability ``(1 + r)/2``: ``R_ts = r^|t-s|``."""

    kind, syntax = "markov", "markov:r"
    summary = "a stationary +-1 Markov chain keeping its sign with probability (1+r)/2, R_ts = r^|t-s|"
    notation = "$R_{ts} = r^{|t-s|}$"
    __slots__ = ()

    GRID = tuple(Fraction(k, 10) for k in range(-10, 11))
    """The correlations ``r`` of an exact table: ``-1, -9/10, ..., 1``."""

    @classmethod
    def tabulated(cls, T):
        # at T = 1, R = (1) for every r: nothing to tabulate
        return tuple(str(r) for r in cls.GRID) if T >= 2 else ()

    @classmethod
    def parse(cls, spec, arg):
        return cls(spec, check_range(parse_fraction(arg, "signs"), "signs", low=-1, high=1))

    @classmethod
    def parameter(cls):
        from derive.symbols import r

        return r

    @classmethod
    def entry(cls):
        import sympy as sp

        from derive.symbols import r, s, t

        return r ** sp.Abs(t - s)

    def _lag_form(self, w, param):
        import sympy as sp

        # g_t = sum_{s<t} r^{t-s} w_s = r (g_{t-1} + w_{t-1}): alpha = sum_t w_t^2 + 2 sum_t w_t g_t
        exact = all(isinstance(x, sp.Rational) for x in w)
        r, ws = (self.param, [Fraction(int(x.p), int(x.q)) for x in w]) if exact else (param, w)
        g = total = 0
        for t in range(len(w)):
            if t:
                g = r * (g + ws[t - 1])
            total += ws[t] * ws[t] + 2 * ws[t] * g
        return sp.Rational(total.numerator, total.denominator) if exact else sp.sympify(total)

    def sample(self, rng, n, T):
        import numpy as np

        keep = rng.random((n, T - 1)) < (1 + float(self.param)) / 2
        steps = np.where(keep, 1, -1).astype(np.int8)
        first = _fair(rng, (n, 1))
        return (first * np.cumprod(np.concatenate([np.ones((n, 1), np.int8), steps], axis=1), axis=1)).astype(np.int8)


class Gauss(_Toeplitz):
    """The signs of a Gaussian vector with :math:`\\Sigma_{ts} = \\rho^{|t-s|}`: ``R = (2/pi) arcsin(Sigma)``."""

    kind, syntax = "gauss", "gauss:rho"
    summary = "the signs of a Gaussian vector with Sigma_ts = rho^|t-s|, R = (2/pi) arcsin(Sigma)"
    notation = ("the signs of a Gaussian vector with $\\Sigma_{ts} = \\rho^{|t-s|}$: "
                "$R = \\frac{2}{\\pi}\\arcsin \\Sigma$")
    __slots__ = ()

    max_T = MAX_GAUSS_T

    @classmethod
    def parse(cls, spec, arg):
        rho = check_range(parse_fraction(arg, "signs"), "signs", low=-1, high=1, low_open=True, high_open=True)
        return cls(spec, rho)

    @classmethod
    def parameter(cls):
        from derive.symbols import rho

        return rho

    @classmethod
    def entry(cls):
        import sympy as sp

        from derive.symbols import rho, s, t

        return 2 / sp.pi * sp.asin(rho ** sp.Abs(t - s))

    def sample(self, rng, n, T):
        import numpy as np

        rho = float(self.param)
        idx = np.arange(T)
        sigma = rho ** np.abs(idx[:, None] - idx[None, :])
        g = rng.standard_normal((n, T)) @ np.linalg.cholesky(sigma).T
        return np.where(g >= 0, 1, -1).astype(np.int8)

    def sampler_bytes(self, T):
        return 16 * T * T


class File(SignFamily):
    """A user's ``R`` from a ``.npy`` or ``.csv`` file, read once and certified realizable; sampled as the certified
    mixture of sign patterns."""

    kind, syntax = "file", "file:PATH"
    summary = "a user's R from a .npy or .csv file, certified realizable by +-1 variables"
    notation = "a user's $R$ from a file"
    __slots__ = ("matrix", "mixture")

    def __init__(self, spec, matrix, mixture):
        super().__init__(spec)
        object.__setattr__(self, "matrix", matrix)
        object.__setattr__(self, "mixture", mixture)

    @classmethod
    def parse(cls, spec, arg):
        from derive.model.realizable import load_correlation_file

        return cls(spec, *load_correlation_file(arg))

    @property
    def memo_key(self):
        return None

    def check(self, T):
        T = check_T(T)
        if self.matrix.shape[0] != T:
            raise ParameterError("T", f"the matrix in {self.spec} is {self.matrix.shape[0]}x{self.matrix.shape[0]}, "
                                      f"not {T}x{T}")
        return T

    def R(self, T):
        self.check(T)
        return self.matrix

    def sample(self, rng, n, T):
        patterns, probs = self.mixture
        pick = rng.choice(len(probs), size=n, p=probs)
        flip = _fair(rng, (n, 1))
        return (patterns[pick] * flip).astype("int8")


CATALOGUE = (IID, Prefix, Suffix, Markov, Gauss, File)
"""The families, in the order ``--help`` lists them."""

_BY_KIND = {cls.kind: cls for cls in CATALOGUE}


SAMPLER_CHECK = 2000
"""Sequences a user's sampler is asked for, twice from one seed, before its first use at a ``T``."""

SAMPLER_CHECK_T = 64
"""Longest ``T`` at which a user's sampler's law is compared with its ``R`` entry by entry."""


class UserFamily(SignFamily):
    """A user's sign family: any object with a ``name``, an exact ``R(T)`` and ``sample(rng, N, T)``.

    ``R(T)`` is read exactly and certified once per ``T`` (symmetric, unit diagonal, realizable by ``+-1``
    variables with mean zero: :func:`derive.model.realizable.certified_correlation`); what ``sample`` returns is
    checked on every call (shape ``N x T``, entries ``+-1``). ``R`` is kept as first read: a
    :class:`~derive.Model` reads it when built, so two wrappers of the same object are equal while they read the same ``R``.

    >>> import numpy as np
    >>> class Alternating:
    ...     name = "alternating"
    ...     def R(self, T): return [[(-1) ** (t + s) for s in range(T)] for t in range(T)]
    ...     def sample(self, rng, N, T):
    ...         first = rng.choice([-1, 1], size=(N, 1))
    ...         return first * (-1) ** np.arange(T)
    >>> f = as_family(Alternating()); f, f.R(2), f.block(3)
    (UserFamily('alternating'), Matrix([
    [ 1, -1],
    [-1,  1]]), None)
    """

    kind = "user"
    syntax = "a Python object with name, R(T) and sample(rng, N, T)"
    summary = "a user's sign law"

    __slots__ = ("source", "_R", "_digests", "_sampler_checked")

    def __init__(self, source):
        name = getattr(source, "name", None)
        if not isinstance(name, str) or not name.strip():
            raise ParameterError("signs", f"a user's sign family needs a nonempty string name, got {name!r}")
        for method in ("R", "sample"):
            if not callable(getattr(source, method, None)):
                raise ParameterError("signs", f"the user's family {name!r} has no method {method}(...)")
        super().__init__(name.strip())
        object.__setattr__(self, "source", source)
        object.__setattr__(self, "_R", {})
        object.__setattr__(self, "_digests", {})
        object.__setattr__(self, "_sampler_checked", set())

    def _key(self):
        # the R read so far, not the object alone: a Model built after the user changed the object's R is another
        # model, never served what the old R gave (a Model reads R(T) when it is built)
        return type(self).__name__, self.spec, id(self.source), tuple(sorted(self._digests.items()))

    @property
    def memo_key(self):
        return None

    def check(self, T) -> int:
        T = check_T(T)
        self.R(T)
        return T

    def R(self, T: int):
        T = check_T(T)
        if T not in self._R:
            from derive.model.realizable import certified_correlation

            try:
                given = self.source.R(T)
            except Exception as exc:
                raise ParameterError("signs", f"R({T}) of the user's family {self.spec!r} raised {exc!r}") from None
            self._R[T] = certified_correlation(given, f"R({T}) of {self.spec!r}", T)[0]
            self._digests[T] = hash(tuple(self._R[T]))
        return self._R[T]

    def sample(self, rng, n: int, T: int):
        if T not in self._sampler_checked:
            self._check_sampler(T)
            self._sampler_checked.add(T)
        return self._sample(rng, n, T)

    def _check_sampler(self, T: int):
        r"""Refuse a sampler that ignores its ``rng`` (the same seed must give the same signs, or no result could
        be reproduced) or whose law is not its ``R``: on :data:`SAMPLER_CHECK` sequences an entry of the empirical
        correlation has standard error at most :math:`1/\sqrt n`, so one more than :math:`6/\sqrt n` away from ``R``
        (0.13 at ``n = 2000``; a false alarm below ``10^{-8}`` per entry) is a sampler of another law, as is a mean
        that far from zero. Checked for ``T <=`` :data:`SAMPLER_CHECK_T` (the ``T^2`` entries' cost)."""
        import numpy as np

        n = SAMPLER_CHECK
        first, again = (self._sample(np.random.default_rng(2024), n, T) for _ in range(2))
        if not np.array_equal(first, again):
            raise ParameterError("signs", f"sample(rng, N, T) of the user's family {self.spec!r} ignores its rng: "
                                          "the same seed gave different signs, so no result could be reproduced")
        if T > SAMPLER_CHECK_T:
            return
        x = first.astype(float)
        R = np.array(self.R(T).tolist(), dtype=float)
        tolerance = 6 / np.sqrt(n)
        far = np.abs(x.T @ x / n - R)
        if far.max() > tolerance or np.abs(x.mean(axis=0)).max() > tolerance:
            t, u = np.unravel_index(int(np.argmax(far)), far.shape)
            raise ParameterError("signs", f"sample(rng, N, T) of the user's family {self.spec!r} does not follow its "
                                          f"R({T}): on {n} sequences E[xi_{t + 1} xi_{u + 1}] is {x[:, t] @ x[:, u] / n:.3f}"
                                          f" against R = {R[t, u]:.3f} (or a mean is not zero; tolerance {tolerance:.2f})")

    def _sample(self, rng, n: int, T: int):
        import numpy as np

        try:
            xi = np.asarray(self.source.sample(rng, n, T))
        except Exception as exc:
            raise ParameterError("signs", f"sample(rng, {n}, {T}) of the user's family {self.spec!r} raised "
                                          f"{exc!r}") from None
        if xi.shape != (n, T) or xi.dtype.kind not in "iuf" or not np.isin(xi, (-1, 1)).all():
            raise ParameterError("signs", f"sample(rng, {n}, {T}) of the user's family {self.spec!r} must return an "
                                          f"{n} x {T} array of +-1, got shape {xi.shape} and dtype {xi.dtype}")
        return xi.astype(np.int8)


def family_syntaxes() -> tuple[str, ...]:
    """How each family of the catalogue is written (``--help`` and errors list them).

    >>> family_syntaxes()
    ('iid', 'prefix:L', 'suffix:L', 'markov:r', 'gauss:rho', 'file:PATH')
    """
    return tuple(cls.syntax for cls in _BY_KIND.values())


def parse_signs(spec) -> SignFamily:
    """The family of a spec, in one of the forms of the catalogue (:func:`family_syntaxes`; each class says what its
    family is).

    >>> parse_signs("markov:1/2").param
    Fraction(1, 2)
    """
    if not isinstance(spec, str) or not spec.strip():
        raise ParameterError("signs", f"empty or malformed spec {spec!r}")
    spec = spec.strip()
    kind, _, arg = spec.partition(":")
    catalogue = _BY_KIND
    if kind not in catalogue:
        raise ParameterError("signs", f"unknown family {kind!r} in {spec!r} ({', '.join(family_syntaxes())})")
    return catalogue[kind].parse(spec, arg)


def as_family(signs) -> SignFamily | None:
    """A sign family from what a user gives: ``None``, a spec string (:func:`parse_signs`), a
    :class:`SignFamily`, or a user's object with ``name``, ``R(T)`` and ``sample(rng, N, T)`` (:class:`UserFamily`).

    >>> as_family("iid").kind, as_family(None)
    ('iid', None)
    """
    if signs is None or isinstance(signs, SignFamily):
        return signs
    if isinstance(signs, str):
        return parse_signs(signs)
    if all(hasattr(signs, name) for name in ("name", "R", "sample")):
        return UserFamily(signs)
    raise ParameterError("signs", f"must be a spec ({', '.join(family_syntaxes())}) or an object with name, R(T) and "
                                  f"sample(rng, N, T), got {type(signs).__name__}")


@lru_cache(maxsize=None)
def toeplitz_total(family: type):
    r"""The sum of all entries of ``R`` for a family whose entry depends on ``|t - s|`` only, in ``T`` and
    the family's parameter: :math:`\sum_{t,s=1}^T R_{ts} = T R_{11} + 2\sum_{k=1}^{T-1} (T-k) R_{1,1+k}`,
    summed by SymPy (``alpha`` of the mean weights is this over ``T^2``).

    >>> import sympy as sp
    >>> from derive.symbols import T, r
    >>> toeplitz_total(IID), toeplitz_total(Markov).subs({T: 3, r: sp.Rational(1, 2)})
    (T, 11/2)
    """
    import sympy as sp

    from derive.symbols import T as T_, s as s_, t as t_

    if not getattr(family, "toeplitz", False):
        raise ParameterError("signs", f"{getattr(family, 'kind', family)!r} is not a family whose R depends on "
                                      f"|t - s| only")
    k = sp.Dummy("k", integer=True, positive=True)
    entry = family.entry()
    return T_ * entry.subs({t_: 1, s_: 1}) + 2 * sp.summation((T_ - k) * entry.subs({t_: 1, s_: 1 + k}), (k, 1, T_ - 1))
