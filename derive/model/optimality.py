r"""Claims C5 (optimal weights) and C7 (causal attention against mean pooling).

The figure of merit of a weight vector is the Rayleigh quotient
:math:`\alpha/\kappa = w^\top R w / \|w\|^2`. C5 is the Rayleigh-Ritz bound; its closed forms
for the families whose ``R`` has a block form (:meth:`~derive.model.signs.SignFamily.block_form`) come from SymPy
block matrices with symbolic sizes. C7 is settled by exact rational arithmetic on every family's table
(:meth:`~derive.model.signs.SignFamily.tabulated`: every block length, a grid of correlations), with each family's
exact :math:`w^\top R w`.

What is particular to a family is asked of its class (its block form, its table, its top eigenvalue); nothing here
names one, so a family added to the catalogue takes part where its class answers.
"""
from __future__ import annotations

from fractions import Fraction
from functools import lru_cache

import mpmath
import sympy as sp

from derive.model.attention import alpha, causal_weights, kappa, mean_weights
from derive.errors import ParameterError
from derive.symbols import Formula, named
from derive.model.families import CATALOGUE
from derive.model.signs import check_R
from derive.symbols import T as T_
from derive.numbers import check_count, check_digits, exact_sum, real_vector

__all__ = ["lam", "c", "i_", "lam_max", "rayleigh_quotient", "rayleigh_gap", "top_eigenvalue",
           "mean_block_quotient", "optimal_block_quotient", "compare_causal_vs_mean", "summarize",
           "winning_block_lengths", "formulas"]

lam = sp.IndexedBase("lamda", real=True)  # "lambda" is a Python keyword: its str would not parse
c = sp.IndexedBase("c", real=True)
i_ = sp.Symbol("i", integer=True, positive=True)
lam_max = named("lambda_max", r"\lambda_{\max}", real=True)


def rayleigh_quotient(w, R: sp.Matrix) -> sp.Expr:
    r""":math:`\alpha(w)/\kappa(w) = w^\top R w / w^\top w`.

    >>> rayleigh_quotient([1, 0], sp.Matrix([[1, 1], [1, 1]]))
    1
    """
    w = real_vector(w, "weights")
    return sp.nsimplify(alpha(w, R) / kappa(w)) if all(x.is_Rational for x in w) else alpha(w, R) / kappa(w)


def rayleigh_gap() -> sp.Eq:
    r"""C5 in spectral coordinates: with :math:`R = Q\Lambda Q^\top` and :math:`c = Q^\top w`,

    .. math:: \lambda_{max} - \frac{\sum_i \lambda_i c_i^2}{\sum_i c_i^2}
       = \frac{\sum_i (\lambda_{max} - \lambda_i)\, c_i^2}{\sum_i c_i^2} \;\ge 0,

    zero iff ``c`` vanishes off the top eigenspace, i.e. iff ``w`` is a top eigenvector.
    The two sides agree identically (SymPy, for any number ``T`` of terms).

    >>> gap = rayleigh_gap(); sp.simplify((gap.lhs - gap.rhs).subs(T_, 3).doit())
    0
    """
    num = sp.Sum(lam[i_] * c[i_] ** 2, (i_, 1, T_))
    den = sp.Sum(c[i_] ** 2, (i_, 1, T_))
    return sp.Eq(lam_max - num / den, sp.Sum((lam_max - lam[i_]) * c[i_] ** 2, (i_, 1, T_)) / den)


def top_eigenvalue(R: sp.Matrix, digits: int = 30) -> mpmath.mpf:
    r""":math:`\lambda_{max}(R)` by ``mpmath.eigsy`` at ``digits + 10`` digits.

    >>> mpmath.nstr(top_eigenvalue(sp.Matrix([[1, sp.Rational(1, 2)], [sp.Rational(1, 2), 1]])), 10)
    '1.5'
    """
    digits = check_digits(digits)
    R = check_R(R)
    if R != R.T:
        raise ParameterError("R", "is not symmetric")
    with mpmath.workdps(digits + 10):
        M = mpmath.matrix([[mpmath.mpf(sp.N(x, digits + 10)) for x in R.row(i)] for i in range(R.rows)])
        return max(mpmath.eigsy(M, eigvals_only=True))


def _names(kinds: list) -> str:
    """``a, b and c``."""
    return " and ".join(filter(None, [", ".join(kinds[:-1]), kinds[-1]])) if kinds else "none"


def _block_family(kind) -> type:
    """The family of the catalogue named ``kind`` whose ``R`` has a block form."""
    able = {cls.kind: cls for cls in CATALOGUE if cls.block_form() is not None}
    if not isinstance(kind, str) or kind not in able:
        raise ParameterError("signs", f"no block form for {kind!r} ({', '.join(able)})")
    return able[kind]


@lru_cache(maxsize=None)
def _block_quotient(family: type, weights_per_block) -> sp.Expr:
    R, sizes, _ = family.block_form()
    w = sp.BlockMatrix([[weights_per_block[k] * sp.OneMatrix(n, 1)] for k, n in enumerate(sizes)])
    a = sp.block_collapse(w.T * R * w)[0, 0]
    k = sp.block_collapse(w.T * w)[0, 0]
    return sp.factor(sp.simplify(a / k))


def mean_block_quotient(kind: str) -> sp.Expr:
    r""":math:`\alpha/\kappa` of mean pooling for a family whose ``R`` has a block form (``prefix:L``, ``suffix:L``),
    symbolic in ``T, L``:

    .. math:: \frac{\alpha}{\kappa}\Big|_{w = 1/T} = \frac{L^2 + T - L}{T}.

    >>> mean_block_quotient("prefix")
    (L**2 - L + T)/T
    """
    family = _block_family(kind)
    return _block_quotient(family, (1 / T_,) * len(family.block_form()[1]))


def optimal_block_quotient(kind: str) -> sp.Expr:
    r""":math:`\alpha/\kappa` of the top eigenvector :math:`1_B/L` of a family whose ``R`` has a block form
    (``prefix:L``, ``suffix:L``): :math:`L`.

    >>> optimal_block_quotient("suffix")
    L
    """
    family = _block_family(kind)
    _, sizes, shared = family.block_form()
    return _block_quotient(family, tuple(1 / n if i == shared else 0 for i, n in enumerate(sizes)))


@lru_cache(maxsize=None)
def _weights(scheme: str, n: int) -> tuple:
    return tuple(mean_weights(n) if scheme == "mean" else causal_weights(n, 0, scheme))


def _schemes(n: int):
    # the strict mask has no output at T = 1
    return ["mean", "inclusive"] + (["strict"] if n >= 2 else [])


def _verdict(diff) -> str:
    return "causal" if diff > 0 else "mean" if diff < 0 else "tie"


def compare_causal_vs_mean(family_kind: str, T_max: int = 64) -> list[dict]:
    r"""C7, exactly: :math:`\alpha/\kappa` of causal attention (``tau = 0``, both masks; the strict
    weights hold for every ``tau``) against mean pooling.

    For every ``T <= T_max``, on each argument of the family's table at that ``T``
    (:meth:`~derive.model.signs.SignFamily.tabulated`: every ``L`` of ``prefix:L`` and ``suffix:L``, the grid of
    ``r`` of ``markov:r`` from ``T = 2``). One row per (family, T, mask) with exact ``p/q`` strings, the optimum
    :math:`\lambda_{max}` where the family knows it exactly (the block families) and ``winner`` in
    ``causal | mean | tie``.

    >>> rows = compare_causal_vs_mean("prefix", 3)
    >>> [(r["family"], r["T"], r["mask"], r["causal"], r["mean"], r["winner"]) for r in rows if r["T"] == 3 and r["mask"] == "strict"]
    [('prefix:1', 3, 'strict', '1', '1', 'tie'), ('prefix:2', 3, 'strict', '8/5', '5/3', 'mean'), ('prefix:3', 3, 'strict', '8/5', '3', 'mean')]
    """
    # every family with a table has one at T = 2, the shortest sequence with a correlation
    able = {cls.kind: cls for cls in CATALOGUE if cls.tabulated(2)}
    if not isinstance(family_kind, str) or family_kind not in able:
        raise ParameterError("signs", f"C7 is tabulated for {_names(list(able))}, not {family_kind!r}")
    cls = able[family_kind]
    T_max = check_count(T_max, "T_max", low=1)
    rows = []
    for n in range(1, T_max + 1):
        for arg in cls.tabulated(n):
            family = cls.parse(f"{cls.kind}:{arg}", arg)
            q = {sch: _fraction(family.quadratic_form(_weights(sch, n)) / exact_sum(_weights(sch, n), 2))
                 for sch in _schemes(n)}
            optimum = family.top_eigenvalue(n)
            for mask in _schemes(n)[1:]:
                rows.append(_row(family.spec, n, mask, q[mask], q["mean"], optimum))
    return rows


def _fraction(x: sp.Rational) -> Fraction:
    return Fraction(int(x.p), int(x.q))


def _row(family, n, mask, causal, mean, optimum):
    return {"family": family, "T": n, "mask": mask, "tau": "0" if mask == "inclusive" else "any",
            "causal": str(causal), "mean": str(mean), "optimal": None if optimum is None else str(optimum),
            "causal_minus_mean": str(causal - mean), "winner": _verdict(causal - mean)}


def _rows(rows) -> list[dict]:
    """Rows of :func:`compare_causal_vs_mean` (each a dict with its keys), checked."""
    keys = {"family", "T", "mask", "winner"}
    if isinstance(rows, (str, bytes, dict)) or not hasattr(rows, "__iter__"):
        raise ParameterError("rows", f"must be rows of compare_causal_vs_mean, got {type(rows).__name__}")
    rows = list(rows)
    for row in rows:
        if not isinstance(row, dict) or not keys <= set(row) or row["winner"] not in ("causal", "mean", "tie") \
                or not isinstance(row["family"], str):
            raise ParameterError("rows", f"not a row of compare_causal_vs_mean: {row!r}")
    return rows


def summarize(rows: list[dict]) -> dict:
    """Per mask, the rows where causal attention wins, loses and ties, as ``[family, T]`` lists.

    >>> summarize(compare_causal_vs_mean("suffix", 2))["inclusive"]["mean"]
    [['suffix:2', 2]]
    """
    out = {}
    for row in _rows(rows):
        out.setdefault(row["mask"], {"causal": [], "mean": [], "tie": []})[row["winner"]].append([row["family"], row["T"]])
    return out


def winning_block_lengths(rows: list[dict]) -> dict:
    """For block-family rows: per mask and ``T``, the range ``[L_min, L_max]`` of block lengths where
    causal attention beats mean pooling (``None`` if nowhere); the winners must form one range.

    >>> winning_block_lengths(compare_causal_vs_mean("prefix", 8))["strict"][8]
    [2, 5]
    """
    blocks = {cls.kind for cls in CATALOGUE if cls.block_form() is not None}
    wins = {}
    for row in _rows(rows):
        if row["family"].partition(":")[0] not in blocks:
            raise ParameterError("rows", f"not a block-family row: {row['family']!r}")
        L = int(row["family"].split(":")[1])
        wins.setdefault(row["mask"], {}).setdefault(row["T"], [])
        if row["winner"] == "causal":
            wins[row["mask"]][row["T"]].append(L)
    out = {}
    for mask, per_T in wins.items():
        out[mask] = {}
        for n, Ls in per_T.items():
            if Ls and Ls != list(range(Ls[0], Ls[-1] + 1)):
                raise ArithmeticError(f"causal wins on a non-contiguous set of L at T = {n}: {Ls}")
            out[mask][n] = [Ls[0], Ls[-1]] if Ls else None
    return out


def formulas() -> list[Formula]:
    src = "derive/model/optimality.py"
    out = [Formula("gap of the Rayleigh quotient to the top eigenvalue", rayleigh_gap(),
                   "$R$ symmetric with eigenvalues $\\lambda_i \\le \\lambda_{\\max}$, $c = Q^\\top w \\ne 0$",
                   f"{src}:rayleigh_gap", claim="C5")]
    schemes = (("mean pooling", mean_block_quotient, r"w = \mathbf{1}/T", "mean"),
               ("the top eigenvector of $R$", optimal_block_quotient, r"w = \mathbf{1}_B/L", "top"))
    blocks = [cls for cls in CATALOGUE if cls.block_form() is not None]
    for what, quotient, weights, plain in schemes:
        # mirror images (prefix:L and suffix:L) whose quotients agree make one entry
        groups = {}
        for cls in blocks:
            groups.setdefault(quotient(cls.kind), []).append(cls)
        for value, group in groups.items():
            kind = group[0].kind
            families = " and ".join(f"{cls.kind}:${sp.latex(cls.parameter())}$" for cls in group)
            out.append(Formula(f"$\\alpha/\\kappa$ of {what} on {families}", value,
                               f"$1 \\le L \\le T$, {families} ($L = 1$: $R = I$)", f"{src}:{quotient.__name__}",
                               named(f"rho_{plain}_{kind}", rf"\frac{{\alpha}}{{\kappa}}\Big|_{{{weights}}}"),
                               claim="C5"))
    return out
