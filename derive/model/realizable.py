r"""User correlation matrices: exact reading and a certified realizability test.

A matrix ``R`` is the correlation ``E[xi xi^T]`` of a random vector ``xi in {+1,-1}^T`` with
``E[xi] = 0`` iff it is a mixture of the rank-one patterns,

.. math:: R = \sum_{x \in \{\pm 1\}^T,\ x_1 = +1} p_x\, x x^\top, \qquad p_x \ge 0,\ \sum_x p_x = 1,

(the cut polytope; flipping the whole pattern by an independent fair sign makes the mean zero
without changing ``x x^T``). Positive semidefiniteness with unit diagonal (the elliptope) is
necessary but not sufficient: three signs with all pairwise correlations ``-1/2`` are PSD
but ``E[(xi_1+xi_2+xi_3)^2] = 0`` is impossible for an odd sum of signs.

The test is a linear program over the ``2^{T-1}`` patterns, solved in floating point by
HiGHS, whose answer is then turned into an exact certificate in rationals: either mixture
weights reproducing ``R`` exactly, or a valid inequality
``sum_{i<j} Y_ij x_i x_j >= m`` (checked on every pattern) that ``R`` violates. Without one
of the two the matrix is refused as uncertified; nothing is guessed.
"""
from __future__ import annotations

import io
import itertools
from fractions import Fraction
from pathlib import Path

import numpy as np
import sympy as sp
from scipy.optimize import linprog

from derive.errors import ParameterError
from derive.files import MAX_BYTES, read_regular_file
from derive.model.signs import check_R
from derive.numbers import check_count, parse_fraction, parse_rational

__all__ = ["MAX_T", "MAX_ENTRIES", "MAX_BYTES", "read_rational_array", "is_positive_semidefinite",
           "cut_patterns", "realizing_mixture", "load_correlation_file", "certified_correlation"]

MAX_T = 12
"""Largest ``T`` for the exact test: the LP has ``2^{T-1}`` columns and every certificate
is checked on all of them."""

_DENOMINATORS = (1, 2, 4, 10, 100, 10**4, 10**6, 10**9)

MAX_ENTRIES = 10**5
"""Most numbers read from one user file (a weight vector of ``T <= 10^5``; ``R`` holds at most ``MAX_T^2``)."""



def _csv_cells(text: str, path, parameter: str, max_entries: int) -> list[list[str]]:
    """The cells of a CSV text (``#`` starts a comment, blank lines are skipped), after checking the shape
    (rows of equal length, at most ``max_entries`` cells) and before converting any cell."""
    rows = []
    count = 0
    for line in text.splitlines():
        line = line.split("#", 1)[0].strip()
        if not line:
            continue
        cells = line.split(",")
        if rows and len(cells) != len(rows[0]):
            raise ParameterError(parameter, f"{path}: unreadable: row {len(rows) + 1} has {len(cells)} cells, "
                                        f"row 1 has {len(rows[0])}")
        count += len(cells)
        if count > max_entries:
            raise ParameterError(parameter, f"{path}: more than {max_entries} numbers")
        rows.append(cells)
    return rows


def _npy_array(data: bytes, path, parameter: str, max_entries: int) -> np.ndarray:
    """The array of a ``.npy`` file's bytes, its header (dtype, shape) checked before the data is read."""
    stream = io.BytesIO(data)
    try:
        version = np.lib.format.read_magic(stream)
        header = {(1, 0): np.lib.format.read_array_header_1_0, (2, 0): np.lib.format.read_array_header_2_0}
        if version not in header:
            raise ValueError(f"format version {version} is not read")
        shape, _, dtype = header[version](stream, max_header_size=10_000)
    except (ValueError, SyntaxError, TypeError, EOFError) as exc:
        raise ParameterError(parameter, f"{path}: not a NumPy array file ({exc})".replace("\n", " ")) from None
    if dtype.kind not in "iuf" or dtype.hasobject:
        raise ParameterError(parameter, f"{path}: entries of type {dtype} are not real numbers")
    if any(n < 0 for n in shape):
        raise ParameterError(parameter, f"{path}: its header's shape {shape} has a negative length")
    size = int(np.prod(shape, dtype=object)) if shape else 1
    if size > max_entries:
        raise ParameterError(parameter, f"{path}: more than {max_entries} numbers (shape {shape})")
    if size * dtype.itemsize > len(data) - stream.tell():
        raise ParameterError(parameter, f"{path}: its data is shorter than its header's shape {shape} (truncated?)")
    stream.seek(0)
    try:
        return np.load(stream, allow_pickle=False)
    except (ValueError, EOFError, OSError) as exc:  # a damage the header checks above did not foresee
        raise ParameterError(parameter, f"{path}: not a readable NumPy array file ({exc})") from None


def read_rational_array(path, parameter: str, ndmin: int, max_entries: int = MAX_ENTRIES) -> np.ndarray:
    """The numbers in a ``.npy`` or ``.csv`` file as an object array of exact rationals.

    Only data is read: a regular file of at most :data:`MAX_BYTES` (:func:`derive.files.read_regular_file`),
    ``numpy.load(allow_pickle=False)`` of it after its header's shape, or the CSV's rows, are checked against
    ``max_entries`` (nothing is converted before). CSV cells are read exactly as written (``0.1`` is
    ``1/10``, ``1/3`` is allowed). Binary floats of a ``.npy`` file are read as the shortest decimal that
    rounds to the same double (Python's ``repr``), i.e. the decimal that was almost surely written;
    integers exactly.

    >>> import tempfile, os
    >>> f = os.path.join(tempfile.mkdtemp(), "w.csv"); _ = open(f, "w").write("0.1, 1/3\\n")
    >>> read_rational_array(f, "weights", 1).tolist()
    [1/10, 1/3]
    """
    if not isinstance(path, (str, Path)):
        raise ParameterError(parameter, f"a file name must be a string, got {type(path).__name__}")
    if ndmin not in (1, 2) or isinstance(ndmin, bool):
        raise ParameterError("ndmin", f"must be 1 or 2, got {ndmin!r}")
    p = Path(str(path))
    if not str(path):
        raise ParameterError(parameter, "empty file name")
    if p.suffix.lower() not in (".npy", ".csv"):
        raise ParameterError(parameter, f"{path}: only .npy and .csv files are read")
    data = read_regular_file(p, parameter, MAX_BYTES)
    if p.suffix.lower() == ".npy":
        raw = _npy_array(data, path, parameter, max_entries)
        if raw.dtype.kind == "f" and not np.isfinite(raw).all():
            raise ParameterError(parameter, f"{path}: NaN or infinite entries")
        raw = np.array(raw, ndmin=ndmin)
        convert = (lambda x: sp.Rational(Fraction(repr(float(x))))) if raw.dtype.kind == "f" else (lambda x: sp.Integer(int(x)))
    else:
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise ParameterError(parameter, f"{path}: not UTF-8 text ({exc.reason} at byte {exc.start})") from None
        rows = _csv_cells(text, path, parameter, max_entries)
        raw = np.array(rows, dtype=object, ndmin=2)
        if ndmin == 1 and raw.shape[0] == 1:
            raw = raw[0]
        convert = lambda x: parse_rational(x, parameter)  # noqa: E731
    if raw.size == 0:
        raise ParameterError(parameter, f"{path}: no numbers")
    out = np.empty(raw.shape, dtype=object)
    for idx, x in np.ndenumerate(raw):
        out[idx] = convert(x)
    return out


def is_positive_semidefinite(R: sp.Matrix) -> bool:
    r"""Exact PSD test of a rational symmetric matrix by symmetric Gaussian elimination.

    A positive pivot is eliminated (its Schur complement is PSD iff the matrix is); a zero
    pivot needs a zero row, a negative one refutes.

    >>> is_positive_semidefinite(sp.Matrix([[1, -1], [-1, 1]])), is_positive_semidefinite(sp.Matrix([[1, 2], [2, 1]]))
    (True, False)
    """
    R = _rational_square(R)
    A = [[Fraction(int(x.p), int(x.q)) for x in R.row(i)] for i in range(R.rows)]
    n = len(A)
    for k in range(n):
        pivot = A[k][k]
        if pivot < 0:
            return False
        if pivot == 0:
            if any(A[k][j] != 0 for j in range(k + 1, n)):
                return False
            continue
        for i in range(k + 1, n):
            f = A[i][k] / pivot
            if f:
                for j in range(k + 1, n):
                    A[i][j] -= f * A[k][j]
    return True


def _rational_square(R) -> sp.Matrix:
    """``R`` as a square matrix of exact rationals, or :class:`ParameterError` naming ``R``."""
    R = check_R(R)
    if not all(x.is_Rational for x in R):
        raise ParameterError("R", "entries must be exact rationals")
    return R


def cut_patterns(T: int) -> np.ndarray:
    """The ``2^{T-1}`` sign patterns with ``x_1 = +1`` (an int8 array, one pattern a row).

    >>> cut_patterns(2).tolist()
    [[1, 1], [1, -1]]
    """
    T = check_count(T, "T", low=1, high=MAX_T)
    rest = itertools.product((1, -1), repeat=T - 1)
    return np.array([(1, *x) for x in rest], dtype=np.int8).reshape(-1, T)


def _pairs(T):
    return [(i, j) for i in range(T) for j in range(i + 1, T)]


def realizing_mixture(R: sp.Matrix) -> tuple[np.ndarray, list[Fraction]]:
    r"""Patterns ``x`` (rows, ``x_1 = +1``) and exact weights ``p_x > 0`` with ``sum_x p_x x x^T = R``.

    ``R`` must be rational, symmetric with unit diagonal and ``T <= 12``. Raises
    :class:`ParameterError` (parameter ``signs``) with a violated cut inequality when ``R``
    is not realizable, or saying that neither certificate could be found.

    >>> x, p = realizing_mixture(sp.Matrix([[1, sp.Rational(1, 2)], [sp.Rational(1, 2), 1]]))
    >>> x.tolist(), [str(q) for q in p]
    ([[1, 1], [1, -1]], ['3/4', '1/4'])
    """
    R = _rational_square(R)
    T = R.rows
    if T > MAX_T:
        raise ParameterError("R", f"T = {T} > {MAX_T}: realizability is only certified for T <= {MAX_T}")
    if R != R.T or any(R[i, i] != 1 for i in range(T)):
        raise ParameterError("R", "must be symmetric with unit diagonal")
    X = cut_patterns(T).astype(np.int64)
    pairs = _pairs(T)
    # columns: patterns; rows: total mass, then x_i x_j for each pair i < j
    A = np.vstack([np.ones(len(X), dtype=np.int64)] + [X[:, i] * X[:, j] for i, j in pairs])
    b = [Fraction(1)] + [Fraction(int(R[i, j].p), int(R[i, j].q)) for i, j in pairs]
    lp = linprog(np.zeros(len(X)), A_eq=A, b_eq=[float(v) for v in b], bounds=(0, None), method="highs-ds")
    if lp.status == 0:
        support = np.flatnonzero(lp.x > 1e-12)
        weights = _exact_weights(A[:, support], b)
        if weights is not None:
            keep = [k for k, q in enumerate(weights) if q > 0]
            return X[support[keep]].astype(np.int8), [weights[k] for k in keep]
    cut = _violated_cut(X, pairs, b)
    if cut is not None:
        Y, m, value = cut
        terms = ", ".join(f"({i + 1},{j + 1}): {y}" for (i, j), y in zip(pairs, Y) if y)
        raise ParameterError("signs", f"R is not the correlation of any +-1 vector: it violates the cut inequality "
                                      f"sum_(i<j) Y_ij R_ij >= {m} with Y = {{{terms}}} (R gives {value})")
    raise ParameterError("signs", f"realizability of R could not be certified either way (LP status {lp.status}: "
                                  f"{lp.message}); refusing rather than guessing")


def _exact_weights(A_S: np.ndarray, b: list[Fraction]) -> list[Fraction] | None:
    # The simplex returns a basic solution, so its support columns are independent and
    # the restricted system has at most one exact solution; free parameters are set to 0.
    M = sp.Matrix(A_S.tolist())
    rhs = sp.Matrix([sp.Rational(q.numerator, q.denominator) for q in b])
    try:
        sol, params = M.gauss_jordan_solve(rhs)
    except ValueError:
        return None
    sol = sol.subs({p: 0 for p in params})
    weights = [Fraction(int(q.p), int(q.q)) for q in sol]
    if any(q < 0 for q in weights):
        return None
    return weights


def _violated_cut(X: np.ndarray, pairs, b: list[Fraction]):
    """``(Y, m, sum Y_ij R_ij)`` for a valid inequality ``sum Y_ij x_i x_j >= m`` that ``R`` breaks, or ``None``."""
    if not pairs:
        return None
    P = np.stack([X[:, i] * X[:, j] for i, j in pairs], axis=1)
    # Farkas: min y0 + <Y, R> subject to y0 + <Y, x x^T> >= 0 on every pattern, in a box
    c = np.array([1.0] + [float(v) for v in b[1:]])
    A_ub = -np.hstack([np.ones((len(X), 1)), P])
    lp = linprog(c, A_ub=A_ub, b_ub=np.zeros(len(X)), bounds=(-1, 1), method="highs-ds")
    if lp.status != 0 or lp.fun > -1e-12:
        return None
    Y_float = lp.x[1:] / np.abs(lp.x[1:]).max()
    for den in _DENOMINATORS:
        Y = [Fraction(y).limit_denominator(den) for y in Y_float]
        # m is recomputed exactly, so the inequality is valid whatever the rounding did
        m = min(sum(y * int(p) for y, p in zip(Y, row)) for row in P)
        value = sum(y * r for y, r in zip(Y, b[1:]))
        if value < m:
            return Y, m, value
    return None


def load_correlation_file(path) -> tuple[sp.Matrix, tuple[np.ndarray, np.ndarray]]:
    """Read, validate and certify a user correlation matrix; return ``(R, (patterns, probabilities))``.

    Every failure raises :class:`ParameterError` naming ``signs``. The sampler draws a
    pattern with its probability and multiplies it by an independent fair sign.

    >>> import tempfile, os
    >>> f = os.path.join(tempfile.mkdtemp(), "R.csv"); _ = open(f, "w").write("1,-0.5\\n-0.5,1\\n")
    >>> R, (x, p) = load_correlation_file(f)
    >>> R[0, 1], x.tolist(), p.tolist()
    (-1/2, [[1, 1], [1, -1]], [0.25, 0.75])
    """
    entries = read_rational_array(path, "signs", 2)
    if entries.ndim != 2 or entries.shape[0] != entries.shape[1]:
        raise ParameterError("signs", f"{path}: R must be a square matrix, got shape {entries.shape}")
    return certified_correlation(entries.tolist(), path)


def certified_correlation(R, source, T: int | None = None) -> tuple[sp.Matrix, tuple[np.ndarray, np.ndarray]]:
    """A user's ``R`` (rows of exact rationals; ``T x T`` if ``T`` is given) certified as the correlation of ``+-1``
    variables with mean zero, with the certifying mixture of sign patterns and their probabilities; else a
    :class:`ParameterError` of ``signs`` naming ``source`` and the reason.

    >>> R, (x, p) = certified_correlation([[1, 0], [0, 1]], "R(2)")
    >>> x.tolist(), p.tolist()
    ([[1, 1], [1, -1]], [0.5, 0.5])
    """
    try:
        rows = [list(row) for row in R]
    except TypeError:
        raise ParameterError("signs", f"{source}: R must be a list of rows, got {type(R).__name__}") from None
    n = len(rows)
    if n == 0 or any(len(row) != n for row in rows) or (T is not None and n != T):
        shape = f"{n} x {', '.join(sorted({str(len(row)) for row in rows})) or 0}"
        raise ParameterError("signs", f"{source}: R must be a square {T or n} x {T or n} matrix, got {shape}")
    if n > MAX_T:
        raise ParameterError("signs", f"{source}: T = {n} > {MAX_T}: realizability by +-1 variables is only certified "
                                      f"for T <= {MAX_T} (the test enumerates 2^(T-1) patterns)")
    R = sp.Matrix([[_rational(x, source) for x in row] for row in rows])
    if R != R.T:
        raise ParameterError("signs", f"{source}: R is not symmetric")
    if any(R[i, i] != 1 for i in range(n)):
        raise ParameterError("signs", f"{source}: the diagonal of R must be exactly 1 (R_tt = E[xi_t^2])")
    if not is_positive_semidefinite(R):
        raise ParameterError("signs", f"{source}: R is not positive semidefinite")
    patterns, weights = realizing_mixture(R)
    probs = np.array([float(q) for q in weights])
    return R, (patterns, probs / probs.sum())


def _rational(x, source) -> sp.Rational:
    try:
        q = parse_fraction(x, "signs")
    except ParameterError:
        raise ParameterError("signs", f"{source}: the entries of R must be exact rationals, got {x!r}") from None
    return sp.Rational(q.numerator, q.denominator)
