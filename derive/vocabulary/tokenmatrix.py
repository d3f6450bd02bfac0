r"""A draw's token matrix as a sparse operator, in NumPy alone (a ``verify mc`` process loads no SciPy).

``A`` (``V x N``): :math:`A_{vn}` the sum of the weights of the positions of sequence ``n`` that hold token ``v``, so
that the pooled vectors are :math:`EA` and :math:`D = \frac VN AA^\top` (:mod:`derive.vocabulary.conditional`). It is
kept as its nonzero entries sorted by row; products gather and sum by ``np.add.reduceat``.
"""
from __future__ import annotations

import hashlib
from dataclasses import dataclass
from functools import cached_property

import numpy as np

from derive.errors import ParameterError

__all__ = ["TokenMatrix"]


def _sums(keys: np.ndarray, values: np.ndarray, n: int, m: int) -> np.ndarray:
    """``out[k] = sum of values[i] over keys[i] == k`` (``n`` rows of ``m`` columns), keys sorted."""
    out = np.zeros((n, m))
    if len(keys):
        starts = np.flatnonzero(np.concatenate([[True], keys[1:] != keys[:-1]]))
        out[keys[starts]] = np.add.reduceat(values, starts, axis=0)
    return out


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

    def times(self, X) -> np.ndarray:
        """:math:`AX` for ``X`` with ``N`` rows (a vector is one column): ``V x m``."""
        X = np.asarray(X, dtype=float).reshape(self.N, -1)
        return _sums(self.rows, self.vals[:, None] * X[self.cols], self.V, X.shape[1])

    def transpose_times(self, Y) -> np.ndarray:
        """:math:`A^\\top Y` for ``Y`` with ``V`` rows: ``N x m`` (a sum over each column's entries, a reshape when
        every column has as many)."""
        Y = np.asarray(Y, dtype=float).reshape(self.V, -1)
        cols, rows, vals = self._by_col
        products = vals[:, None] * Y[rows]
        if self._uniform:
            return products.reshape(self.N, -1, Y.shape[1]).sum(axis=1)
        return _sums(cols, products, self.N, Y.shape[1])

    @cached_property
    def _uniform(self) -> bool:
        """Whether every column holds the same number of entries (at least one)."""
        counts = np.bincount(self.cols, minlength=self.N)
        return bool(self.N and counts.min() == counts.max() > 0)

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
        r""":math:`\|AA^\top\|_F^2 = \sum_{v,v'}(\sum_n A_{vn}A_{v'n})^2`: every pair of entries of a sequence, summed
        by token pair."""
        cols, rows, vals = self._by_col
        if not len(cols):
            return 0.0
        starts = np.flatnonzero(np.concatenate([[True], cols[1:] != cols[:-1]]))
        width = int(np.diff(np.concatenate([starts, [len(cols)]])).max())
        slot = np.arange(len(cols)) - np.repeat(starts, np.diff(np.concatenate([starts, [len(cols)]])))
        R = np.full((len(starts), width), -1, dtype=np.int64)
        W = np.zeros((len(starts), width))
        seq = np.repeat(np.arange(len(starts)), np.diff(np.concatenate([starts, [len(cols)]])))
        R[seq, slot], W[seq, slot] = rows, vals
        pair = (R[:, :, None] >= 0) & (R[:, None, :] >= 0)
        keys = (R[:, :, None] * self.V + R[:, None, :])[pair]
        values = (W[:, :, None] * W[:, None, :])[pair]
        _, index = np.unique(keys, return_inverse=True)
        return float(np.sum(np.bincount(index, weights=values) ** 2))

    def digest(self) -> int:
        """A 64-bit number determined by the entries: the seed of anything drawn from them."""
        h = hashlib.sha256()
        for part in (self.rows, self.cols, self.vals):
            h.update(np.ascontiguousarray(part).tobytes())
        return int.from_bytes(h.digest()[:8], "little")
