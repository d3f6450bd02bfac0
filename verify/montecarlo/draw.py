r"""The draw of one trial of the paper's model (docs/notation.md): validated parameters, table, sequences, mixing
matrix.

One trial draws

* a table :math:`E = [e_1 \dots e_V] \in \mathbb R^{d\times V}`, :math:`e_v = s_v\mu + z_v`, with
  :math:`s = (+1,\dots,+1,-1,\dots,-1)` (exactly ``V/2`` of each; which tokens carry which sign is
  immaterial because the tokens are exchangeable), :math:`\mu = \sqrt{\mu_2}\,\mathbf e_1` (the first
  basis vector; every result is rotation invariant) and :math:`z_v \sim N(0, I_d)` i.i.d.;
* ``N`` sign vectors :math:`\xi_n \in \{\pm1\}^T` from the family
  (:func:`verify.montecarlo.signs.sample_signs`), and tokens :math:`v_{n,t}` uniform in the class
  :math:`\{v : s_v = \xi_{n,t}\}`, independent across positions given :math:`\xi_n`;
* the pooled vectors :math:`c_n = \sum_t w_t e_{v_{n,t}} = E a_n`, where the columns
  :math:`a_n = \sum_t w_t \mathbf e_{v_{n,t}}` of the sparse ``V x N`` matrix :math:`A` hold the
  weights at the drawn tokens (a token drawn twice in a sequence carries the sum of its weights). A scheme
  whose attention is computed from the tokens (``softmax``: scores :math:`\tau\langle x_t, x_s\rangle/\sqrt d`
  at the trial's own ``d``) gives each sequence its own weights, from the drawn table
  (:func:`verify.montecarlo.attention.sequence_attention_weights`), unless weights are given.

Randomness: a trial's seed (an integer or a :class:`numpy.random.SeedSequence`) is split into three
independent streams, for the table, the sequences and the eigensolver's starting vector, so the
table depends on ``(seed, d, V, mu2)`` only.
"""
from __future__ import annotations

import functools
import math
import numbers
from dataclasses import dataclass
from fractions import Fraction

import numpy as np

from derive.errors import ParameterError
from derive.model.signs import SignFamily
from derive.numbers import check_count, parse_fraction
# the class signs, the sizes at a dimension and the tokens given the signs are derive's: the finite-size expectation
# samples the same law
from derive.vocabulary.draw.sampling import class_signs as balanced_signs, sample_tokens, sizes
from verify.montecarlo.signs import sample_signs

__all__ = ["trial_model", "trial_weights", "attends", "given_weights", "Draw", "draw", "balanced_signs",
           "sample_table", "sample_sequences", "mixing_matrix", "pooled", "ratios", "rung", "streams"]

# ----------------------------------------------------------------------------------------------
# validation


def positive_int(value, name: str) -> int:
    """A Python or NumPy integer ``>= 1`` (:func:`derive.numbers.check_count`); the library API takes no
    text or floats for sizes, which only the command line reads."""
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise ParameterError(name, f"must be a positive integer, got {value!r}")
    return check_count(int(value), name, low=1)


def _real(value, name: str) -> float:
    if isinstance(value, (bool, str)):
        raise ParameterError(name, f"must be a real number, got {value!r}")
    try:
        x = float(value)
    except (TypeError, ValueError):
        raise ParameterError(name, f"must be a real number, got {value!r}") from None
    if not math.isfinite(x):
        raise ParameterError(name, f"must be finite, got {value!r}")
    return x


def trial_model(model, mu2=None) -> "derive.Model":
    """``model`` (a :class:`derive.Model`; with ``mu2`` instead of its own if given) after checking that it has what a
    trial draws from: the sizes ``d, V, N``, ``T``, the sign family and ``mu2`` (``ParameterError`` naming the first
    one missing).

    >>> from derive import Model
    >>> trial_model(Model(d=4, V=6, N=10, T=2, signs="iid", mu2=1)).N
    10
    """
    from derive.model.spec import Model as DeriveModel

    if not isinstance(model, DeriveModel):
        raise ParameterError("model", f"must be a derive.Model, got {type(model).__name__}")
    if mu2 is not None:
        model = model.replace(mu2=mu2)
    return model.need("d", "V", "N", "T", "signs", "mu2")


def trial_weights(model, weights=None) -> np.ndarray:
    """The pooling weights of a trial of ``model`` as float64: ``weights`` (``T`` finite reals, not all zero) where
    given, else the model's weight scheme resolved (:func:`derive.weights`, normalized to sum 1).

    >>> from derive import Model
    >>> trial_weights(Model(T=2, weights="mean")), trial_weights(Model(T=2), [0.5, 0.5])
    (array([0.5, 0.5]), array([0.5, 0.5]))
    """
    if weights is None:
        from derive.interface import weights as pooling

        return np.array(pooling(model.need("T", "weights")).floats())
    T = model.need("T").T
    if isinstance(weights, (str, bytes)):
        raise ParameterError("weights", f"must be a sequence of {T} reals, got {weights!r}")
    try:
        w = np.array([_real(x, "weights") for x in weights], dtype=np.float64)
    except TypeError:
        raise ParameterError("weights", f"must be a sequence of {T} reals, got {weights!r}") from None
    if w.shape != (T,):
        raise ParameterError("weights", f"needs T = {T} entries, got {len(w)}")
    if not np.any(w):
        raise ParameterError("weights", "are all zero")
    return w


def attends(model) -> bool:
    """Whether a trial of ``model`` pools each sequence with the attention computed from its own tokens (a scheme with
    ``scores``: ``softmax``), not with weights shared by every sequence."""
    return getattr(model.weights, "scores", None) is not None


def given_weights(model, weights=None):
    """What a trial hands :func:`draw`: ``None`` where the draw computes each sequence's weights (:func:`attends`,
    no ``weights`` given), else :func:`trial_weights`."""
    return None if weights is None and attends(model) else trial_weights(model, weights)


def _seed_sequence(seed) -> np.random.SeedSequence:
    if isinstance(seed, np.random.SeedSequence):
        return seed
    if isinstance(seed, bool) or not isinstance(seed, numbers.Integral) or seed < 0:
        raise ParameterError("seed", f"must be a non-negative integer or a SeedSequence, got {seed!r}")
    return np.random.SeedSequence(int(seed))


def streams(seed, n: int) -> list[np.random.Generator]:
    """``n`` independent generators derived from ``seed``.

    The children are built from the seed's entropy and spawn key rather than by
    ``SeedSequence.spawn``, which advances a counter inside the object: a second call with the same
    ``SeedSequence`` must give the same streams.
    """
    ss = _seed_sequence(seed)
    return [
        np.random.default_rng(np.random.SeedSequence(ss.entropy, spawn_key=ss.spawn_key + (i,), pool_size=ss.pool_size))
        for i in range(n)
    ]


# ----------------------------------------------------------------------------------------------
# sampling


TABLE_BLOCK_BYTES = 1 << 18
"""Bytes of the rows drawn at a time into a table of another type than float64 (:func:`sample_table`): a block stays
in the core's cache between the generator and the rounding."""


def sample_table(rng: np.random.Generator, d: int, V: int, mu2: float, out: np.ndarray | None = None) -> np.ndarray:
    r"""The table :math:`E = \mu s^T + Z` (``d x V``, C-contiguous float64), :math:`\mu = \sqrt{\mu_2}\,\mathbf e_1`,
    ``s`` from :func:`balanced_signs`, ``Z`` standard Gaussian.

    ``out``: a C-contiguous ``d x V`` float64 or float32 array to draw into (a sweep's worker keeps one for all its
    cells: a fresh table of ``10^4 x 2 10^4`` spends seconds in page faults before the first number is drawn). The
    numbers are those of a float64 table, drawn in row order, rounded in a float32 ``out``.

    >>> rng = lambda: np.random.default_rng(3)
    >>> out = np.empty((3, 4), dtype=np.float32)
    >>> bool((sample_table(rng(), 3, 4, 1.0, out) == sample_table(rng(), 3, 4, 1.0).astype(np.float32)).all())
    True
    """
    signal = math.sqrt(mu2) * balanced_signs(V)
    if out is not None and (out.shape != (d, V) or out.dtype not in (np.float64, np.float32)
                            or not out.flags.c_contiguous):
        raise ParameterError("out", f"must be a C-contiguous {d} x {V} float64 or float32 array")
    if out is None or out.dtype == np.float64:
        E = rng.standard_normal((d, V)) if out is None else rng.standard_normal(out=out)
        E[0] += signal
        return E
    rows = max(1, TABLE_BLOCK_BYTES // (8 * V))
    block = np.empty((rows, V))
    for i in range(0, d, rows):
        n = min(rows, d - i)
        rng.standard_normal(out=block[:n])
        if i == 0:
            block[0] += signal  # in float64, then rounded: the float64 table's entries, rounded
        out[i:i + n] = block[:n]
    return out


def sample_sequences(rng: np.random.Generator, family: SignFamily, V: int, N: int, T: int):
    r"""``N`` sign vectors and their tokens: ``(xi, tokens)``, both ``(N, T)`` arrays.

    ``xi`` (int8) has the family's law (:func:`verify.montecarlo.signs.sample_signs`); ``tokens[n, t]`` (int64) is
    uniform over the class :math:`\{v : s_v = \xi_{n,t}\}` of :func:`balanced_signs`, independently across ``(n, t)``
    given ``xi`` (:func:`derive.vocabulary.draw.sampling.sample_tokens`).
    """
    xi = sample_signs(family, rng, N, T)
    return xi, sample_tokens(rng, xi, V)


def mixing_matrix(tokens: np.ndarray, weights, V: int):
    r"""The sparse ``V x N`` matrix :math:`A` with columns :math:`a_n = \sum_t w_t \mathbf e_{v_{n,t}}`,
    so that the pooled vectors are :math:`C = E A`; repeated tokens of a sequence are summed.
    ``weights``: ``T`` weights shared by all sequences, or an ``N x T`` array of per-sequence
    (data-dependent) weights.

    >>> mixing_matrix(np.array([[0, 0], [1, 0]]), [0.25, 0.5], 2).toarray()
    array([[0.75, 0.5 ],
           [0.  , 0.25]])
    """
    import scipy.sparse as sps

    N, T = tokens.shape
    values = np.array(np.broadcast_to(np.asarray(weights, dtype=np.float64), (N, T))).ravel()
    A = sps.csc_matrix((values, tokens.ravel(), np.arange(0, N * T + 1, T)), shape=(V, N))
    A.sum_duplicates()
    return A


def pooled(E: np.ndarray, A) -> np.ndarray:
    """The pooled vectors :math:`C = E A` as a dense ``d x N`` array."""
    return np.ascontiguousarray((A.T @ np.ascontiguousarray(E.T)).T)



@dataclass(frozen=True)
class Draw:
    """The random inputs of one trial: table, class signs, sequence signs, tokens and their ``weights``
    (``T``, or ``N x T`` per sequence), and the eigensolver's starting vector; ``A`` (:func:`mixing_matrix`)
    is made from the tokens when first asked for (the matrix-free solvers read the tokens themselves)."""

    E: np.ndarray
    s: np.ndarray
    xi: np.ndarray
    tokens: np.ndarray
    weights: np.ndarray
    v0: np.ndarray

    @functools.cached_property
    def A(self):
        """The sparse ``V x N`` mixing matrix (:func:`mixing_matrix`)."""
        return mixing_matrix(self.tokens, self.weights, self.E.shape[1])


def draw(model, seed, table: np.ndarray | None = None, weights=None) -> Draw:
    """Everything random in one trial of ``model`` (a :class:`derive.Model` with its sizes, sign family and ``mu2``),
    from ``seed`` (see the module docstring), pooled with ``weights`` (:func:`trial_weights`; without them, a scheme
    that :func:`attends` pools each sequence with its attention on the drawn table); the table drawn into ``table`` if
    given (:func:`sample_table`'s ``out``)."""
    model = trial_model(model)
    w = given_weights(model, weights)
    table_rng, seq_rng, start_rng = streams(seed, 3)
    E = sample_table(table_rng, model.d, model.V, float(model.mu2), table)
    s = balanced_signs(model.V)
    xi, tokens = sample_sequences(seq_rng, model.signs, model.V, model.N, model.T)
    if w is None:
        from verify.montecarlo.attention import sequence_attention_weights

        scheme = model.weights
        w = sequence_attention_weights(E, tokens, float(scheme.tau), scheme.mask, scaling=scheme.scores)
    return Draw(E, s, xi, tokens, w, start_rng.standard_normal(model.d))


def _positive(delta, gamma) -> tuple[Fraction, Fraction]:
    out = []
    for name, value in (("delta", delta), ("gamma", gamma)):
        q = parse_fraction(value, name)
        if q <= 0:
            raise ParameterError(name, f"must be > 0, got {value}")
        out.append(q)
    return out[0], out[1]


def ratios(delta, gamma):
    """``delta`` and ``gamma`` as exact positive SymPy rationals (``ParameterError`` naming a bad one)."""
    import sympy as sp

    return tuple(sp.Rational(q.numerator, q.denominator) for q in _positive(delta, gamma))


def rung(d: int, delta, gamma) -> tuple[int, int]:
    """``(V, N)`` for dimension ``d``: ``V`` the even integer nearest ``d/delta``, ``N`` the integer
    nearest ``d/gamma``, halves rounded up (exact arithmetic; :func:`derive.vocabulary.draw.sampling.sizes`, the rule of
    ``derive spike --d`` too); the rule of every study, sweep and ledger check.

    >>> rung(30, "1/2", "1/3"), rung(5, "2", "2")
    ((60, 90), (2, 3))
    """
    return sizes(d, *_positive(delta, gamma))
