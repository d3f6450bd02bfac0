r"""A draw's token matrix as a sparse operator, in NumPy alone (a ``verify mc`` process loads no SciPy).

``A`` (``V x N``): :math:`A_{vn}` the sum of the weights of the positions of sequence ``n`` that hold token ``v``, so
that the pooled vectors are :math:`EA` and :math:`D = \frac VN AA^\top` (:mod:`derive.vocabulary.draw.spectrum`). It is
kept as its nonzero entries sorted by row, and for products as :class:`PaddedColumns`: an ``L x N`` table of each
column's rows and values (``L`` the most entries of a column, at most ``T``), whose products run NumPy's loops along
``N``. The Lanczos quadrature of a ``verify mc`` trial applies :math:`AA^\top` to some 300 vectors, and the solver's
mixing (:class:`verify.montecarlo.lanczos.Mixing`) applies it once a step; ``notes/benchmarks.md`` times the process.
"""
from __future__ import annotations

import hashlib
from dataclasses import dataclass
from functools import cached_property

import numpy as np

from derive.errors import ParameterError

__all__ = ["PaddedColumns", "TokenMatrix"]


@dataclass(frozen=True)
class PaddedColumns:
    r"""A ``V x N`` sparse matrix :math:`A` as the rows and values of its columns' entries, ``rows[l, n]`` and
    ``values[l, n]`` for ``l < L`` (``L x N``; a column with fewer entries padded with value 0, any row), and its
    products with blocks of vectors one vector at a time: each is a gather or a ``np.bincount`` over the ``L N`` slots,
    whose loops run along ``N`` (in the ``N x L`` layout the inner loops run over the ``L`` slots of one column, four
    times slower at ``L = 8``).

    >>> P = PaddedColumns(np.array([[0, 1], [1, 0]]), np.array([[0.5, 2.0], [1.0, 0.0]]), 2)   # A = [[.5, 0], [1, 2]]
    >>> P.transpose_times(np.array([1.0, 10.0])).ravel(), P.times(np.array([1.0, 10.0])).ravel()
    (array([10.5, 20. ]), array([ 0.5, 21. ]))
    >>> P.gram_times(np.array([1.0, 0.0])).ravel()   # A A^T e_0
    array([0.25, 0.5 ])
    """

    rows: np.ndarray
    values: np.ndarray
    V: int

    @property
    def N(self) -> int:
        return self.rows.shape[1]

    @cached_property
    def _flat(self) -> np.ndarray:
        return np.ascontiguousarray(self.rows, dtype=np.intp).ravel()

    def _columns(self, X, n: int) -> np.ndarray:
        """``X`` (``n`` rows, a vector is one column) as float64 columns, each contiguous: ``m x n``."""
        return np.ascontiguousarray(np.asarray(X, dtype=float).reshape(n, -1).T)

    def transpose_times(self, Y) -> np.ndarray:
        """:math:`A^\\top Y` for ``Y`` with ``V`` rows: ``N x m``."""
        cols = self._columns(Y, self.V)
        rows = self._flat.reshape(self.rows.shape)
        return np.stack([np.einsum("ln,ln->n", self.values, y[rows]) for y in cols], axis=1)

    def times(self, X) -> np.ndarray:
        """:math:`AX` for ``X`` with ``N`` rows: ``V x m``."""
        return np.stack([self._scatter(x) for x in self._columns(X, self.N)], axis=1)

    def gram_times(self, Y) -> np.ndarray:
        """:math:`AA^\\top Y` for ``Y`` with ``V`` rows, one vector at a time: ``V x m``."""
        rows = self._flat.reshape(self.rows.shape)
        return np.stack([self._scatter(np.einsum("ln,ln->n", self.values, y[rows])) for y in self._columns(Y, self.V)],
                        axis=1)

    def _scatter(self, x: np.ndarray) -> np.ndarray:
        """:math:`Ax` for one vector ``x`` (``N``)."""
        return np.bincount(self._flat, weights=(self.values * x).ravel(), minlength=self.V)


@dataclass(frozen=True)
class TokenMatrix:
    """The nonzero entries ``(rows, cols, vals)`` of a ``V x N`` token matrix, sorted by row then column, duplicates
    summed (:meth:`of`, :meth:`from_tokens`).

    >>> A = TokenMatrix.from_tokens(np.array([[0, 0], [1, 0]]), [0.25, 0.5], 2)
    >>> A.dense()
    array([[0.75, 0.5 ],
           [0.  , 0.25]])
    >>> A.times(np.ones(2)).ravel(), A.transpose_times(np.ones(2)).ravel()
    (array([1.25, 0.25]), array([0.75, 0.75]))
    """

    V: int
    N: int
    rows: np.ndarray
    cols: np.ndarray
    vals: np.ndarray

    @classmethod
    def entries(cls, V: int, N: int, rows, cols, vals) -> "TokenMatrix":
        """From entries in any order, repeated ones summed and zeros dropped."""
        rows, cols, vals = (np.asarray(x).ravel() for x in (rows, cols, vals))
        order = np.lexsort((cols, rows))
        rows, cols, vals = rows[order].astype(np.int64), cols[order].astype(np.int64), vals[order].astype(float)
        if len(rows):
            first = np.concatenate([[True], (rows[1:] != rows[:-1]) | (cols[1:] != cols[:-1])])
            starts = np.flatnonzero(first)
            rows, cols, vals = rows[starts], cols[starts], np.add.reduceat(vals, starts)
        keep = vals != 0
        return cls(int(V), int(N), rows[keep], cols[keep], vals[keep])

    @classmethod
    def from_tokens(cls, tokens: np.ndarray, weights, V: int) -> "TokenMatrix":
        """Sequence ``n``'s ``T`` tokens ``tokens[n]`` with the ``T`` weights (or an ``N x T`` array of them)."""
        tokens = np.asarray(tokens)
        N, T = tokens.shape
        values = np.broadcast_to(np.asarray(weights, dtype=float), (N, T))
        return cls.entries(V, N, tokens, np.repeat(np.arange(N), T).reshape(N, T), values)

    @classmethod
    def of(cls, A) -> "TokenMatrix":
        """A token matrix from itself, a SciPy sparse matrix (``tocoo``) or a dense array."""
        if isinstance(A, cls):
            return A
        if hasattr(A, "tocoo"):
            coo = A.tocoo()
            return cls.entries(*coo.shape, coo.row, coo.col, coo.data)
        dense = np.asarray(A, dtype=float)
        if dense.ndim != 2:
            raise ParameterError("A", f"must be a V x N matrix, got shape {dense.shape}")
        rows, cols = np.nonzero(dense)
        return cls.entries(*dense.shape, rows, cols, dense[rows, cols])

    @property
    def shape(self) -> tuple[int, int]:
        return self.V, self.N

    @cached_property
    def _by_col(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        order = np.argsort(self.cols, kind="stable")
        return self.cols[order], self.rows[order], self.vals[order]

    @cached_property
    def padded(self) -> PaddedColumns:
        """The matrix as :class:`PaddedColumns`, padded with row 0 and value 0."""
        cols, rows, vals = self._by_col
        counts = np.bincount(cols, minlength=self.N)
        width = int(counts.max(initial=0)) or 1
        slot = np.arange(len(cols)) - np.repeat(np.cumsum(counts) - counts, counts)
        R, W = np.zeros((width, self.N), dtype=np.intp), np.zeros((width, self.N))
        R[slot, cols], W[slot, cols] = rows, vals
        return PaddedColumns(R, W, self.V)

    def times(self, X) -> np.ndarray:
        """:math:`AX` for ``X`` with ``N`` rows (a vector is one column): ``V x m``."""
        return self.padded.times(X)

    def transpose_times(self, Y) -> np.ndarray:
        """:math:`A^\\top Y` for ``Y`` with ``V`` rows: ``N x m``."""
        return self.padded.transpose_times(Y)

    def gram_times(self, Y) -> np.ndarray:
        """:math:`AA^\\top Y` for ``Y`` with ``V`` rows: ``V x m``."""
        return self.padded.gram_times(Y)

    def drawn(self) -> tuple[np.ndarray, "TokenMatrix"]:
        """The tokens drawn (the rows with an entry, ascending) and the matrix of their rows alone, numbered in that
        order (``len(tokens) x N``).

        >>> tokens, B = TokenMatrix.from_tokens(np.array([[3, 1], [1, 1]]), [1.0, 2.0], 5).drawn()
        >>> tokens.tolist(), B.dense().tolist()
        ([1, 3], [[2.0, 3.0], [1.0, 0.0]])
        """
        tokens, rows = np.unique(self.rows, return_inverse=True)
        return tokens, TokenMatrix(len(tokens), self.N, rows.astype(np.int64), self.cols, self.vals)

    def token_gram(self) -> np.ndarray:
        """:math:`AA^\\top` (``V x V``, dense) from the pairs of entries of each column (:func:`_pair_sums`): no dense
        ``A``, and :math:`\\sum_n L_n^2` products (``L_n`` the entries of column ``n``, at most ``T``).

        >>> A = TokenMatrix.from_tokens(np.array([[0, 1], [1, 1], [2, 0]]), [1.0, 2.0], 3)
        >>> bool(np.array_equal(A.token_gram(), A.dense() @ A.dense().T))
        True
        """
        cols, rows, vals = self._by_col
        return _pair_sums(cols, rows, vals, self.V)

    def sequence_gram(self) -> np.ndarray:
        """:math:`A^\\top A` (``N x N``, dense) from the pairs of entries of each row: :math:`\\sum_v k_v^2` products
        (:math:`k_v` the sequences that hold token ``v``).

        >>> A = TokenMatrix.from_tokens(np.array([[0, 1], [1, 1], [2, 0]]), [1.0, 2.0], 3)
        >>> bool(np.array_equal(A.sequence_gram(), A.dense().T @ A.dense()))
        True
        """
        return _pair_sums(self.rows, self.cols, self.vals, self.N)

    def dense(self) -> np.ndarray:
        out = np.zeros((self.V, self.N))
        out[self.rows, self.cols] = self.vals
        return out

    def row_sums(self, power: int = 1) -> np.ndarray:
        """:math:`\\sum_n A_{vn}^{power}` for every token."""
        return np.bincount(self.rows, weights=self.vals**power, minlength=self.V)

    def diagonal_gram(self) -> bool:
        """Whether :math:`AA^\\top` is diagonal: no sequence holds two distinct tokens."""
        return bool(np.bincount(self.cols, minlength=self.N).max(initial=0) <= 1)

    def frobenius2_of_gram(self) -> float:
        r""":math:`\|AA^\top\|_F^2 = \sum_{v,v'}(\sum_n A_{vn}A_{v'n})^2`: the diagonal from the row sums of
        :math:`A_{vn}^2`, and every pair of distinct tokens of a sequence (its entries), summed by token pair, twice.

        >>> A = TokenMatrix.from_tokens(np.array([[0, 1], [1, 0], [2, 2]]), [1.0, 2.0], 3)
        >>> A.frobenius2_of_gram(), float(np.sum((A.dense() @ A.dense().T) ** 2))
        (163.0, 163.0)
        """
        R, W = self.padded.rows, self.padded.values
        total = float(np.sum(self.row_sums(2) ** 2))
        i, j = np.triu_indices(R.shape[0], 1)
        real = (W[i] != 0) & (W[j] != 0)
        if not real.any():
            return total
        a, b = R[i][real], R[j][real]
        keys = np.minimum(a, b).astype(np.int64) * self.V + np.maximum(a, b)
        values = (W[i] * W[j])[real]
        order = np.argsort(keys)
        keys, values = keys[order], values[order]
        starts = np.flatnonzero(np.concatenate([[True], keys[1:] != keys[:-1]]))
        return total + 2 * float(np.sum(np.add.reduceat(values, starts) ** 2))

    def digest(self) -> int:
        """A 64-bit number determined by the entries: the seed of anything drawn from them."""
        h = hashlib.sha256()
        for part in (self.rows, self.cols, self.vals):
            h.update(np.ascontiguousarray(part).tobytes())
        return int.from_bytes(h.digest()[:8], "little")


def _pair_sums(groups: np.ndarray, index: np.ndarray, vals: np.ndarray, n: int) -> np.ndarray:
    r"""The dense ``n x n`` matrix :math:`\sum_g a_g a_g^\top` of sparse vectors given by their entries sorted by group:
    entry ``e`` puts ``vals[e]`` at ``index[e]`` of vector ``groups[e]``; each pair of entries of one group adds the
    product of their values at ``(index, index)``, summed by ``np.bincount``."""
    if not len(groups):
        return np.zeros((n, n))
    starts = np.flatnonzero(np.concatenate([[True], groups[1:] != groups[:-1]]))
    size = np.diff(np.append(starts, len(groups)))
    per_entry = np.repeat(size, size)
    first = np.repeat(np.repeat(starts, size), per_entry)
    i = np.repeat(np.arange(len(groups)), per_entry)
    j = first + np.arange(len(i)) - np.repeat(np.cumsum(per_entry) - per_entry, per_entry)
    flat = index[i].astype(np.int64) * n + index[j]
    return np.bincount(flat, weights=vals[i] * vals[j], minlength=n * n).reshape(n, n)
