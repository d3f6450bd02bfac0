r"""The token–sequence graph: reuse, and the atom at zero of the model's spectrum (the rank of the token matrix).

The columns :math:`a_n = \sum_t w_t e_{v_{n,t}}` of the ``V x N`` matrix ``A`` have :math:`T'` nonzero entries
(:math:`T'` the number of nonzero weights; a token repeated within a sequence has probability :math:`O(1/V)`),
and token ``v`` appears in a Poisson number of columns, of mean :math:`r' = NT'/V = T'\delta/\gamma`. ``A`` is the
incidence matrix of a sparse random hypergraph: sequences are hyperedges of :math:`T'` tokens. The class signs
do not enter: a token's occurrences and the degrees of its neighbours have the same law in both classes, so the
local structure (a two-type Galton–Watson tree) is that of the uniform hypergraph.

*Rank.* With the generating functions :math:`D(x) = x^{T'}` of the column degrees and :math:`K(x) = e^{r'(x-1)}`
of the row degrees,

.. math:: \frac{\operatorname{rank} A}{N} \to 1 - \max_{\alpha\in[0,1]} \Phi(\alpha), \qquad
          \Phi(\alpha) = D\Bigl(1 - \frac{K'(\alpha)}{r'}\Bigr) + \frac{T'}{r'}\bigl(K(\alpha) + (1-\alpha)K'(\alpha) - 1\bigr)

for any nonzero entries (Coja-Oghlan, Ergür, Gao, Hetterich and Rolvien 2020, proving Lelarge's conjecture).
SymPy factors :math:`\Phi'` (:func:`stationarity`): the interior maxima solve
:math:`\beta = (1 - e^{-r'\beta})^{T'-1}`, :math:`\beta = 1 - \alpha`, the fixed point of the cavity equations of
``D`` at :math:`\zeta \to 0` (a token's cavity field is singular iff none of its sequences is blocked, a sequence
is blocked iff one of its other tokens is singular). At :math:`T' = 1` this is :math:`(1 - e^{-\lambda})/\lambda`
(the tokens seen at least once); at :math:`T' = 2` it counts the tree components of the random graph (Cayley).

*Atom.* :math:`S = EAA^\top E^\top/N` with a Gaussian table has rank :math:`\min(d, \operatorname{rank} A)`, so its
limit law has the atom :math:`\max(0, 1 - \operatorname{rank}A/d) = \max(0, 1 - (1 - \Phi^*)/\gamma)` at zero.
"""
from __future__ import annotations

from functools import lru_cache

import mpmath
import sympy as sp

from derive.errors import ParameterError
from derive.symbols import Formula, named
from derive.numbers import parse_rational, real_vector
from derive.symbols import gamma

__all__ = ["alpha_", "beta", "r_", "T_", "phi", "stationarity", "fixed_point", "atom_expression", "nonzero_weights",
           "reuse", "rank_fraction", "atom_at_zero", "formulas"]

alpha_ = sp.Symbol("alpha_r", nonnegative=True)
r"""The variable :math:`\alpha` of the rank formula."""
beta = sp.Symbol("beta", nonnegative=True)
r""":math:`\beta = 1 - \alpha`."""
r_ = named("r_w", "r'", positive=True)
r""":math:`r' = NT'/V`, the mean number of weighted occurrences of a token (``r_w``)."""
T_ = named("T_w", "T'", integer=True, positive=True)
r""":math:`T'`, the number of nonzero weights (``T_w``)."""
_x = sp.Symbol("x")


@lru_cache(maxsize=None)
def phi() -> sp.Expr:
    r""":math:`\Phi(\alpha)` for column degree :math:`T'` and Poisson(:math:`r'`) row degrees.

    >>> sp.simplify(phi().subs(T_, 1) - (1 - 1/r_ + sp.exp(r_*(alpha_ - 1))*(1/r_ - alpha_)))
    0
    """
    D = _x**T_
    K = sp.exp(r_ * (_x - 1))
    Kp = sp.diff(K, _x)
    return (D.subs(_x, 1 - Kp.subs(_x, alpha_) / r_)
            + T_ / r_ * (K.subs(_x, alpha_) + (1 - alpha_) * Kp.subs(_x, alpha_) - 1))


@lru_cache(maxsize=None)
def stationarity() -> sp.Expr:
    r""":math:`\Phi'(\alpha)` divided by its positive factor :math:`T' K''(\alpha)/r'`, in :math:`\beta = 1-\alpha`:
    zero exactly at the fixed points of :func:`fixed_point`.

    >>> stationarity()
    beta - (1 - exp(-beta*r_w))**(T_w - 1)
    """
    K = sp.exp(r_ * (_x - 1))
    factor = T_ * sp.diff(K, _x, 2).subs(_x, alpha_) / r_
    reduced = sp.simplify(sp.diff(phi(), alpha_) / factor)
    candidate = beta - (1 - sp.exp(-r_ * beta)) ** (T_ - 1)
    assert sp.simplify(reduced.subs(alpha_, 1 - beta) - candidate) == 0
    return candidate


@lru_cache(maxsize=None)
def fixed_point() -> sp.Eq:
    r"""The cavity fixed point at :math:`\zeta\to0`: :math:`\beta = (1-e^{-r'\beta})^{T'-1}`.

    >>> fixed_point()
    Eq(beta, (1 - exp(-beta*r_w))**(T_w - 1))
    """
    return sp.Eq(beta, beta - stationarity())


@lru_cache(maxsize=None)
def atom_expression() -> sp.Expr:
    r"""The atom at zero in terms of :math:`\Phi^* = \max\Phi` (the symbol ``Phi_max``).

    >>> atom_expression()
    Max(0, 1 - (1 - Phi_max)/gamma)
    """
    return sp.Max(0, 1 - (1 - named("Phi_max", r"\Phi^*")) / gamma)


def nonzero_weights(weights) -> int:
    """:math:`T'`, the number of nonzero weights.

    >>> nonzero_weights([sp.Rational(3, 4), sp.Rational(1, 4), 0])
    2
    """
    w = real_vector(weights, "weights")
    count = sum(1 for x in w if x != 0)
    if count == 0:
        raise ParameterError("weights", "are all zero")
    return count


def reuse(delta, gamma, T_value) -> sp.Rational:
    r"""The mean number of times a token is used, :math:`NT/V = T\delta/\gamma`.

    >>> reuse("1", "1/2", 8)
    16
    """
    d, g = (parse_rational(v, n) for v, n in ((delta, "delta"), (gamma, "gamma")))
    for value, name in ((d, "delta"), (g, "gamma")):
        if value <= 0:
            raise ParameterError(name, f"must be > 0, got {value}")
    return d / g * int(T_value)


def rank_fraction(delta, gamma, weights) -> mpmath.mpf:
    r""":math:`\lim \operatorname{rank}A/N = 1 - \max_{[0,1]}\Phi` at the current precision: :math:`\Phi` at the
    ends and at every root of :func:`stationarity` in :math:`(0, 1)`.

    The roots are bracketed on a grid of 2000 cells and refined by the Anderson–Björck method; the function
    :math:`\beta - (1-e^{-r'\beta})^{T'-1}` is convex-then-concave minus linear, with at most two roots in
    :math:`(0, 1]`, which the grid separates unless they are within :math:`5\cdot10^{-4}` of each other (a
    tangency, where both give the same :math:`\Phi`).

    >>> with mpmath.workdps(15):
    ...     print(mpmath.nstr(rank_fraction(1, 1, [1]), 12), mpmath.nstr(1 - mpmath.exp(-1), 12))
    0.632120558829 0.632120558829
    """
    Tp = nonzero_weights(weights)
    r = reuse(delta, gamma, Tp)
    Phi = sp.lambdify(alpha_, phi().subs({T_: Tp, r_: r}), modules="mpmath")
    g = sp.lambdify(beta, stationarity().subs({T_: Tp, r_: r}), modules="mpmath")
    candidates = [mpmath.mpf(0), mpmath.mpf(1)]
    grid = [mpmath.mpf(i) / 2000 for i in range(1, 2001)]
    values = [g(b) for b in grid]
    for b0, b1, v0, v1 in zip(grid, grid[1:], values, values[1:]):
        if v0 == 0:
            candidates.append(1 - b0)
        elif v0 * v1 < 0:
            candidates.append(1 - mpmath.findroot(g, (b0, b1), solver="anderson", verify=False))
    return 1 - max(Phi(a) for a in candidates)


def atom_at_zero(delta, gamma, weights) -> mpmath.mpf:
    r"""The mass at zero of the model's limit law: :math:`\max(0, 1 - (N/d)\operatorname{rank}A/N)`.

    >>> with mpmath.workdps(15):
    ...     print(mpmath.nstr(atom_at_zero(1, 1, [1]), 12), mpmath.nstr(atom_at_zero(1, 1, [1, 1]), 12))
    0.367879441171 0.161902559473
    """
    g = parse_rational(gamma, "gamma")
    fraction = rank_fraction(delta, gamma, weights)
    return max(mpmath.mpf(0), 1 - fraction * g.q / g.p)


def formulas() -> list[Formula]:
    src = "derive/vocabulary/limit/tokengraph.py"
    hyp = (r"$A$: $V \times N$, columns with $T'$ nonzero weights at uniform tokens, $N T'/V \to r'$; "
           "Coja-Oghlan et al. (2020) rank formula")
    return [
        Formula(r"rank functional $\Phi(\alpha)$ of the token matrix", phi(), hyp, f"{src}:phi",
                named("Phi_rank", r"\Phi(\alpha)"), claim="C1"),
        Formula(r"cavity fixed point of the rank at $\zeta \to 0$", fixed_point(), hyp, f"{src}:fixed_point",
                claim="C1"),
        Formula("atom at zero of the model's bulk", atom_expression(),
                hyp + r"; $\operatorname{rank} S = \min(d, \operatorname{rank} A)$", f"{src}:atom_expression",
                named("atom_model", r"\nu_S\{0\}"), claim="C1"),
    ]
