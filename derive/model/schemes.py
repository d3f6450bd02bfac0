r"""The catalogue of weight schemes: one class per way of choosing the pooling weights ``w``, each with how it is
written and read, its options (the causal scheme's ``tau`` and ``mask``), its weights for ``T`` positions and a sign
family, what they cost, and its colour in figures.

Adding a scheme is one class here (and its tests): the command lines' ``--weights`` choices and the options with
their help, :class:`derive.Model`'s keywords, the documents' option fields and their text form, the notation's list,
the Hypothesis strategies and the fuzz tests' values, figure captions and colours and cache keys are made from
:data:`CATALOGUE` (notes/architecture.md counts the files).

>>> [s.name for s in CATALOGUE]
['mean', 'causal', 'softmax', 'optimal', 'given']
>>> parse_scheme("causal", mask="strict")
Causal(tau=Fraction(0, 1), mask='strict')
"""
from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from typing import Callable

from derive.errors import ParameterError
from derive.numbers import check_range, parse_fraction

__all__ = ["Option", "Scheme", "Mean", "Causal", "Softmax", "Optimal", "Given", "CATALOGUE", "OPTIONS", "parse_scheme",
           "scheme_syntaxes", "MASKS", "MASK_HELP", "MASK_REMARKS"]

MASKS = ("inclusive", "strict")
"""The masks of causal attention: keys ``s <= t`` or ``s < t``."""

MASK_HELP = ("inclusive (keys s <= t; the default) or strict (keys s < t). The paper's harmonic weights "
             "w_t ~ H_{T-1} - H_{t-1} (C6) are the strict mask's, at any tau; the inclusive mask gives "
             "H_T - H_{t-1} at tau = 0")
"""The help of ``--mask``: the default, and which mask the paper's harmonic form holds for."""

MASK_REMARKS = (("inclusive", "the default; the paper's harmonic form H_{T-1} - H_{t-1} is the strict mask's"),
                ("strict", "the paper's harmonic form H_{T-1} - H_{t-1}"))
"""What each mask is, beside it in a text form."""


@dataclass(frozen=True)
class Option:
    """An option of a weight scheme: its ``name`` (a keyword of :class:`derive.Model`, ``--name`` on the command
    line), how a value is read (``read(value) -> value``, raising :class:`ParameterError` naming it), its default,
    its help, and its valid values where they are a fixed set."""

    name: str
    read: Callable
    default: object
    help: str
    choices: tuple | None = None
    examples: tuple = ()
    """Values that property tests draw, simplest first (the ``choices`` where there are)."""
    refused: tuple = ()
    """Texts the command lines refuse for it besides those that are no value of its kind at all (out of its range, near
    misses of its choices): the fuzz tests draw them."""
    remarks: tuple = ()
    """``(value, remark)`` pairs: what a value means where a text form prints it beside the value."""

    def text(self, value) -> str | None:
        """The value as a cache key or a document writes it."""
        return None if value is None else str(value)


def _tau(value) -> Fraction:
    return check_range(parse_fraction(value, "tau"), "tau", low=0)


def _mask(value) -> str:
    if value not in MASKS:
        raise ParameterError("mask", f"must be one of {', '.join(MASKS)}, got {value!r}")
    return value


class Scheme:
    """A weight scheme with its options, checked. Each class of the catalogue sets ``name``, ``syntax`` (how a
    spec is written), ``summary``, ``notation``, ``color`` and ``options`` and implements :meth:`weights`; schemes
    compare by value and are hashable."""

    name: str = ""
    syntax: tuple = ()
    summary: str = ""
    notation: str = ""
    """What the scheme is in the notation (``docs/notation.md``, the formula sheet): a phrase, mathematics between
    dollars; empty for one listed by its syntax alone."""
    color: str = "tab:gray"
    options: tuple = ()
    drawn: bool = True
    """Whether property tests draw this scheme by its name (not one that needs a user's data)."""
    scores: str | None = None
    """For attention computed from the tokens at a finite ``d`` (``softmax``): the scale of its scores,
    ``"1/sqrt(d)"``; a Monte Carlo trial then pools each sequence with its own attention weights
    (:attr:`tau`, :attr:`mask`). ``None``: the weights are the same for every sequence."""

    __slots__ = ("values",)

    def __init__(self, **given):
        for o in OPTIONS:
            if o.name in given and o not in self.options:
                _refuse(o.name, self.name)
        values = {o.name: o.default if given.get(o.name) is None else o.read(given[o.name]) for o in self.options}
        object.__setattr__(self, "values", values)

    def __setattr__(self, name, value):
        raise AttributeError("a weight scheme is immutable")

    def _key(self):
        return (type(self).__name__, tuple(sorted(self.values.items())))

    def __eq__(self, other):
        return isinstance(other, Scheme) and self._key() == other._key()

    def __hash__(self):
        return hash(self._key())

    def __repr__(self):
        return f"{type(self).__name__}({', '.join(f'{k}={v!r}' for k, v in self.values.items())})"

    @property
    def spec(self) -> str:
        """The scheme as the command line writes it (``mean``, ``causal``; options apart)."""
        return self.name

    @property
    def caption(self) -> str:
        """The weights as a figure's caption names them: the spec, then each option's value.

        >>> parse_scheme("1/2,1/2").caption
        '1/2,1/2 weights'
        """
        return f"{self.spec} weights" + "".join(f", {k}={v}" for k, v in self.values.items())

    @property
    def memo_key(self) -> dict | None:
        """Everything the weights depend on besides ``T`` and the signs, as text (a cache key), or ``None`` when the
        scheme is not named by text (weights read from a file that may change)."""
        return {"scheme": self.spec, **{o.name: o.text(self.values[o.name]) for o in self.options}}

    @classmethod
    def parse(cls, spec: str, T, parameter: str) -> "Scheme | None":
        """The scheme of ``spec`` if it is written in this class's syntax, else ``None``."""
        return cls() if spec == cls.name else None

    def check(self, T: int, family, digits: int) -> None:
        """Refuse what the weights cannot be computed for, before any work (a limit named)."""

    def weights(self, T: int, family, digits: int) -> tuple[list, str | None]:
        """The weights for ``T`` positions (SymPy numbers, exact where they can be; not yet normalized) and a note
        when they are not unique."""
        raise NotImplementedError

    def normalize(self, w: list, note: str | None) -> tuple[list, str | None]:
        """The weights scaled as every law reads them, to sum 1 (a zero sum is refused), and the note."""
        from derive.model.attention import normalized

        return normalized(w, "weights"), note

    def trial_bytes(self, d: int, N: int, T: int) -> int:
        """Bytes a Monte Carlo trial of ``d, N, T`` holds for this scheme's weights beyond the trial's own (0: the ``T``
        weights are shared)."""
        return 0

    def law(self, T: int):
        """The law of the weights of a scheme computed from the tokens (``softmax``: their ``d -> oo`` law, whose
        ``random`` says whether they still vary from sequence to sequence there, with their ``mean``,
        ``kappa_moments``, ``error``, ``alpha(family)`` and ``describes``, what the law is and assumes, which the
        documents state); ``None`` for fixed weights."""
        return None


class Mean(Scheme):
    """Mean pooling, :math:`w_t = 1/T`."""

    name, syntax, summary, color = "mean", ("mean",), "mean pooling, w_t = 1/T", "tab:blue"
    notation = "$w_t = 1/T$"
    __slots__ = ()

    def weights(self, T, family, digits):
        from derive.model.attention import mean_weights

        return mean_weights(T), None


TAU = Option("tau", _tau, Fraction(0), "attention temperature tau >= 0 (default 0)",
             examples=tuple(Fraction(k, 4) for k in range(17)), refused=("-1", "701", "1e9", "-1e-9"))
"""The attention temperature, shared by the causal and softmax schemes."""

MASK = Option("mask", _mask, "inclusive", MASK_HELP, MASKS, MASKS, refused=("both", "", "STRICT", "inclusive ", "none"),
              remarks=MASK_REMARKS)
"""The causal mask, shared by the causal and softmax schemes."""


class _Attention(Scheme):
    """A scheme of causal attention: options ``tau`` and ``mask``."""

    options = (TAU, MASK)
    __slots__ = ()

    @property
    def tau(self) -> Fraction:
        return self.values["tau"]

    @property
    def mask(self) -> str:
        return self.values["mask"]

    @property
    def caption(self):
        # the mask first: it names the form of the weights, tau only scales them
        return f"{self.spec} weights ({self.mask} mask, tau={self.tau})"


class Causal(_Attention):
    """The ``d -> oo`` limit of parameter-free causal self-attention (:func:`derive.model.attention.causal_weights`):
    scores ``tau <x_t, x_s>/d``, a softmax over the causal window (``mask``), outputs averaged."""

    name, syntax, color = "causal", ("causal",), "tab:orange"
    summary = "the d -> oo limit of causal self-attention (--tau, --mask)"
    notation = "the $d \\to \\infty$ limit of causal self-attention"
    __slots__ = ()

    def check(self, T, family, digits):
        from derive.resources import check_exact_causal_T

        check_exact_causal_T(T)

    def weights(self, T, family, digits):
        from derive.model.attention import causal_weights

        return causal_weights(T, self.tau, self.mask, digits), None


class Softmax(_Attention):
    """Causal softmax attention at the transformer's scaling, scores ``tau <x_t, x_s>/sqrt(d)``
    (:mod:`derive.model.softmax`): as ``d -> oo`` the strict mask gives every sequence its own random weights (their
    mean is the harmonic weights), the inclusive mask mean pooling (``tau > 0``). ``weights`` are the mean weights;
    :meth:`law` the law of a sequence's weights."""

    name, syntax, color = "softmax", ("softmax",), "tab:red"
    summary = "causal softmax attention with scores tau <x_t, x_s>/sqrt(d): random weights per sequence (--tau, --mask)"
    notation = ("causal softmax attention at the transformer's scores $\\tau \\langle x_t, x_s \\rangle/\\sqrt{d}$: "
                "each sequence its own random weights, $w$ their mean")
    scores = "1/sqrt(d)"
    __slots__ = ()

    def check(self, T, family, digits):
        from derive.model.softmax import MAX_T, MAX_TAU

        if self.tau > MAX_TAU:
            raise ParameterError("tau", f"the softmax scheme's law is computed for tau <= {MAX_TAU}, got {self.tau}")
        if T > MAX_T:
            raise ParameterError("T", f"the softmax scheme's law is computed for T <= {MAX_T}, got {T}")
        if self.mask == "strict" and T < 2:
            raise ParameterError("T", "the strict mask needs T >= 2 (position 1 has no key)")

    def weights(self, T, family, digits):
        return list(self.law(T).mean), None

    def trial_bytes(self, d, N, T):
        """The ``N x T`` attention weights and three chunks of the sequences' tokens, each at most ``2^22`` floats
        (:func:`verify.montecarlo.attention.sequence_attention_weights`)."""
        return 8 * N * T + 3 * 8 * min(512 * T * d, 1 << 22)

    def law(self, T):
        from derive.model.softmax import softmax_law

        return softmax_law(T, self.tau, self.mask)


class Optimal(Scheme):
    """The top eigenvector of ``R``, the maximizer of :math:`\\alpha/\\kappa` (claim C5)."""

    name, syntax, summary, color = "optimal", ("optimal",), "the top eigenvector of R (needs the signs)", "tab:green"
    notation = "the top eigenvector of $R$"
    __slots__ = ()

    def check(self, T, family, digits):
        if family is None:
            raise ParameterError("signs", "the optimal scheme needs --signs (it is the top eigenvector of R)")

    def weights(self, T, family, digits):
        from derive.model.attention import optimal_weights

        return optimal_weights(family, T, digits)

    def normalize(self, w, note):
        """To sum 1; a top eigenvector that sums to zero (an anti-correlated family's, such as ``markov:-1/10``'s) to
        unit norm instead, said in the note: ``alpha/kappa``, the outlier's overlap and threshold do not depend on the
        scale, and no scale makes such weights sum to 1."""
        import sympy as sp

        from derive.model.attention import kappa, normalized, vanishes
        from derive.numbers import exact_sum

        if not vanishes(exact_sum(w)):
            return normalized(w, "weights"), note
        said = ("R's top eigenvector sums to zero, so it is scaled to unit norm (|w|^2 = 1, W = 0) instead of to sum 1; "
                "alpha/kappa, the overlaps and the thresholds do not depend on the scale")
        norm = sp.sqrt(kappa(w))
        return [x / norm for x in w], said if note is None else f"{note}; {said}"


class Given(Scheme):
    """Weights a user gives: ``T`` rationals (``1/2,1/3,1/6`` on the command line, a sequence in Python) or a
    ``.npy``/``.csv`` file (``file:PATH``, read once, exactly)."""

    name, syntax, summary, color = "given", ("file:PATH", "w1,...,wT"), "the user's weights", "tab:purple"
    notation = "the user's weights, from a file or typed"
    drawn = False
    __slots__ = ("exact", "path")

    def __init__(self, exact: tuple, path: str | None = None):
        super().__init__()
        object.__setattr__(self, "exact", exact)
        object.__setattr__(self, "path", path)

    def _key(self):
        return type(self).__name__, self.exact, self.path

    def __repr__(self):
        return f"Given({self.spec!r})"

    @property
    def spec(self):
        return f"file:{self.path}" if self.path is not None else ",".join(str(w) for w in self.exact)

    @property
    def memo_key(self):
        return None if self.path is not None else {"scheme": self.spec}

    @classmethod
    def parse(cls, spec, T, parameter):
        if spec.startswith("file:") and spec != "file:":
            path = spec[len("file:"):]
            return cls(load_weights_file(path, T), path)
        if spec[:1].isdigit() or spec[:1] in "-+.":
            return cls(exact_weights(spec.split(","), parameter))
        return None

    @classmethod
    def of(cls, weights, parameter: str = "weights", T: int | None = None) -> "Given":
        """Weights given as a sequence of reals (read exactly).

        >>> Given.of([1, "1/2"]).exact
        (Fraction(1, 1), Fraction(1, 2))
        """
        if isinstance(weights, (bytes, dict)) or not hasattr(weights, "__iter__"):
            raise ParameterError(parameter, f"a scheme name or a sequence of reals, got {weights!r}")
        return cls(exact_weights(weights, parameter, T))

    def check(self, T, family, digits):
        if len(self.exact) != T:
            raise ParameterError("weights", f"{len(self.exact)} weights for T = {T}")

    def weights(self, T, family, digits):
        import sympy as sp

        return [sp.Rational(x.numerator, x.denominator) for x in self.exact], None


CATALOGUE = (Mean, Causal, Softmax, Optimal, Given)
"""The weight schemes, in the order ``--help`` lists them."""

OPTIONS = tuple({o.name: o for s in CATALOGUE for o in s.options}.values())
"""Every scheme option, once (the keywords of :class:`derive.Model` and the command lines' options)."""


def _refuse(option: str, scheme: str):
    owners = [s.name for s in CATALOGUE if any(o.name == option for o in s.options)]
    raise ParameterError(option, f"only the {' or '.join(owners)} scheme takes --{option}, not {scheme!r}")


def scheme_syntaxes() -> tuple[str, ...]:
    """How each scheme is written (``--help`` and errors list them).

    >>> scheme_syntaxes()
    ('mean', 'causal', 'softmax', 'optimal', 'file:PATH', 'w1,...,wT')
    """
    return tuple(form for s in CATALOGUE for form in s.syntax)


def exact_weights(weights, parameter: str = "weights", T: int | None = None) -> tuple:
    """A nonzero vector of reals read exactly (:class:`fractions.Fraction`), ``parameter`` named in an error.

    >>> exact_weights(["1/2", "0.25"])
    (Fraction(1, 2), Fraction(1, 4))
    """
    from itertools import islice

    from derive.model.signs import MAX_T

    if isinstance(weights, (set, frozenset, dict)) or not hasattr(weights, "__iter__"):
        raise ParameterError(parameter, f"must be a sequence (ordered, one entry per position), got "
                                        f"{type(weights).__name__}")
    # an endless iterator (itertools.count()) is read no further than T, or the longest sequence there is
    most = MAX_T if T is None else T
    values = tuple(parse_fraction(w, parameter) for w in islice(weights, most + 1))
    if len(values) > most:
        raise ParameterError(parameter, f"more than {most} entries (" + ("the longest sequence supported)" if T is None
                                                                        else f"T = {T})"))
    if not values or not any(values):
        raise ParameterError(parameter, "are all zero" if values else "are empty")
    return values


def load_weights_file(path, T) -> tuple:
    """User weights from a ``.npy`` or ``.csv`` file (one vector of length ``T``), read exactly.

    >>> import tempfile, os
    >>> f = os.path.join(tempfile.mkdtemp(), "w.csv"); _ = open(f, "w").write("1,2,0.5\\n")
    >>> load_weights_file(f, 3)
    (Fraction(1, 1), Fraction(2, 1), Fraction(1, 2))
    """
    from derive.model.realizable import read_rational_array
    from derive.model.signs import check_T

    if T is None:
        raise ParameterError("T", "is needed to read weights from a file")
    n = check_T(T)
    arr = read_rational_array(path, "weights", 1, n)
    if arr.ndim != 1:
        if sorted(arr.shape)[:-1] != [1] * (arr.ndim - 1):
            raise ParameterError("weights", f"{path}: expected one vector, got shape {arr.shape}")
        arr = arr.reshape(-1)
    if len(arr) != n:
        raise ParameterError("weights", f"{path}: {len(arr)} weights for T = {n}")
    if all(x == 0 for x in arr):
        raise ParameterError("weights", f"{path}: all weights are zero")
    return tuple(Fraction(int(w.p), int(w.q)) for w in arr)


def parse_scheme(weights, T=None, parameter: str = "weights", **options) -> Scheme:
    """A scheme from its spec (in a form of :func:`scheme_syntaxes`: ``causal``, ``1/2,1/3,1/6``, ...) and its
    options (keywords named as in :data:`OPTIONS`; ``None`` for the default), or from explicit weights (a sequence of
    rationals); ``parameter`` is the name an error gives the spec (``scheme`` where ``derive weights`` was given
    ``--scheme``, the older name of ``--weights``).

    >>> parse_scheme("causal", tau="1/2").tau, parse_scheme([1, "1/2"]).exact, parse_scheme("1/2,1/4").spec
    (Fraction(1, 2), (Fraction(1, 1), Fraction(1, 2)), '1/2,1/4')
    """
    unknown = [name for name in options if name not in {o.name for o in OPTIONS}]
    if unknown:
        raise ParameterError(unknown[0], f"is not an option of any weight scheme ({', '.join(o.name for o in OPTIONS)})")
    given = {name: value for name, value in options.items() if value is not None}
    if isinstance(weights, Scheme):
        if given:
            raise ParameterError(next(iter(given)), "belongs in the Scheme already given")
        return weights
    if isinstance(weights, str):
        spec = weights.strip()
        for cls in CATALOGUE:
            scheme = cls.parse(spec, T, parameter)
            if scheme is not None:
                break
        else:
            raise ParameterError(parameter, f"unknown scheme {weights!r} ({', '.join(scheme_syntaxes())})")
    else:
        scheme = Given.of(weights, parameter, T)
    if isinstance(scheme, Given):
        for o in OPTIONS:
            if o.name in given:
                _refuse(o.name, scheme.name)
        return scheme
    return type(scheme)(**given)
