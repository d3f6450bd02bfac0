r"""What the finite vocabulary does to the bulk law (claim C1), from the model itself.

With ``E = mu s^T + Z`` and ``D = (V/N) A A^T`` (``A`` the ``V x N`` matrix of pooled
one-hot vectors), ``S = (1/V) E D E^T``. ``D`` depends on the tokens only and ``Z`` is
Gaussian and independent of it, so the bulk of ``S`` is the free multiplicative
convolution (in ``V``-space) of the free Poisson law of ``Z^T Z / V`` (every free cumulant
``delta``) with the spectral law of ``D``, then rescaled to ``d``-space by ``V/d``.

The claimed law ``kappa (MP_delta boxtimes MP_gamma)`` is what one gets when ``D`` is
replaced by its Gaussian equivalent, a Wishart matrix of ratio ``V/N = gamma/delta``. But
each token is seen ``O(1)`` times (``N T / V`` on average), so ``D`` is a sparse random
matrix: for ``T = 1`` it is diagonal with entries ``n_v V/N``, ``n_v ~ Poisson(N/V)``.
Both laws are computed here as exact moment sequences.
"""
from __future__ import annotations

from functools import lru_cache

import sympy as sp
from sympy.stats import E as expect, Poisson

from derive.gaussian import freeprob as fp
from derive.errors import ParameterError
from derive.symbols import Formula, named
from derive.numbers import check_count
from derive.symbols import delta, gamma

__all__ = ["moments_from_free_cumulants", "token_count_moments", "wishart_moments", "bulk_moments", "d_space_moments",
           "fourth_moment_excess", "formulas"]



def moments_from_free_cumulants(cumulants: list, n: int) -> list:
    r"""Moments ``m_0..m_n`` from free cumulants ``k_1..k_n``: :math:`m_n = \sum_{\pi\in NC(n)} \prod_{B\in\pi} k_{|B|}`.

    >>> moments_from_free_cumulants([1, 1, 1], 3)   # free Poisson of rate 1: Catalan numbers
    [1, 1, 2, 5]
    """
    n = check_count(n, "n", high=fp.MAX_PARTITION_ORDER)
    if isinstance(cumulants, (str, bytes)) or not hasattr(cumulants, "__len__") or len(cumulants) < n:
        raise ParameterError("cumulants", f"must be a sequence of at least n = {n} free cumulants, got {cumulants!r}")
    cumulants = [_positive_or_symbolic(k, "cumulants", positive=False) for k in list(cumulants)[:n]]
    return [sp.Integer(1)] + [sp.factor(sum(sp.Mul(*[cumulants[len(B) - 1] for B in pi])
                                            for pi in fp.noncrossing_partitions(k))) for k in range(1, n + 1)]


def _positive_or_symbolic(x, name: str, positive: bool = True) -> sp.Expr:
    """A finite SymPy expression; a number must be real (and positive if ``positive``)."""
    x = fp.finite_expression(x, name)
    if x.is_number and not (x.is_extended_real and (x.is_positive or not positive)):
        raise ParameterError(name, f"must be {'positive' if positive else 'real'}, got {x}")
    return x


def token_count_moments(lam, n: int) -> list:
    r"""Moments of :math:`n_v/\lambda` with :math:`n_v \sim \mathrm{Poisson}(\lambda)`: the law of ``D`` at ``T = 1``.

    A token is drawn by each of the ``N`` sequences with probability ``1/V``, so its count is
    Binomial(N, 1/V) -> Poisson(N/V).

    >>> token_count_moments(sp.Integer(2), 4)
    [1, 1, 3/2, 11/4, 47/8]
    """
    lam = _positive_or_symbolic(lam, "lam")
    n = check_count(n, "n", high=fp.MAX_PARTITION_ORDER)
    X = Poisson("n_v", lam)
    return [sp.simplify(expect(X**k) / lam**k) for k in range(n + 1)]


def wishart_moments(ratio, n: int) -> list:
    r"""Moments of the Gaussian equivalent of ``D``: Marchenko-Pastur of ratio ``V/N`` (free cumulants ``ratio^{k-1}``).

    >>> wishart_moments(sp.Rational(1, 2), 4)
    [1, 1, 3/2, 11/4, 45/8]
    """
    ratio = _positive_or_symbolic(ratio, "ratio")
    n = check_count(n, "n", high=fp.MAX_PARTITION_ORDER)
    return moments_from_free_cumulants([ratio ** (k - 1) for k in range(1, n + 1)], n)


def bulk_moments(kind: str, n: int = 4) -> tuple:
    r"""Moments ``m_1..m_n`` of the ``d``-space bulk of ``S`` at ``kappa = 1``, in ``delta, gamma``.

    ``kind = "claimed"``: ``D`` Gaussian-equivalent (the law of C1); ``kind = "T=1"``: the exact
    token-count law. :math:`m_k^{(d)} = m_k^{(V)}/\delta` (``V/d`` zero eigenvalues removed).

    >>> [sp.simplify(a - b) for a, b in zip(bulk_moments("T=1"), bulk_moments("claimed"))]
    [0, 0, 0, delta*gamma**2]
    """
    if not isinstance(kind, str) or kind not in ("claimed", "T=1"):
        raise ParameterError("kind", f"must be 'claimed' or 'T=1', got {kind!r}")
    return _bulk_moments(kind, check_count(n, "n", low=1, high=fp.MAX_PARTITION_ORDER))


@lru_cache(maxsize=None)
def _bulk_moments(kind: str, n: int) -> tuple:
    lam = delta / gamma
    law_D = {"claimed": wishart_moments(1 / lam, n), "T=1": token_count_moments(lam, n)}[kind]
    return tuple(sp.factor(m) for m in d_space_moments(law_D, n))


def d_space_moments(law_D, n: int) -> tuple:
    r"""Moments ``m_1..m_n`` of the ``d``-space bulk of :math:`S = \frac1V ZDZ^\top` from the moments
    ``m_0..m_n`` of the law of ``D`` (SymPy expressions), in ``delta``: the ``V``-space law is the free Poisson law
    of rate ``delta`` (every free cumulant ``delta``) :math:`\boxtimes` that of ``D``, and
    :math:`m_k^{(d)} = m_k^{(V)}/\delta` (``V/d`` zero eigenvalues removed).

    >>> d_space_moments([1, 1, 2], 2)   # D with the moments of MP_1
    (1, 2*delta + 1)
    """
    n = check_count(n, "n", low=1, high=fp.MAX_PARTITION_ORDER)
    free_poisson = moments_from_free_cumulants([delta] * n, n)
    v_space = fp.free_multiplicative_moments(free_poisson, law_D)
    return tuple(sp.expand(v_space[k] / delta) for k in range(1, n + 1))


def fourth_moment_excess() -> sp.Expr:
    r"""The excess of the true fourth bulk moment over the claimed one at ``T = 1``, ``kappa = 1``.

    >>> fourth_moment_excess()
    delta*gamma**2
    """
    return sp.factor(bulk_moments("T=1")[3] - bulk_moments("claimed")[3])


def formulas() -> list[Formula]:
    src = "derive/vocabulary/limit/tokenreuse.py"
    return [
        Formula("fourth moment of the claimed bulk law", bulk_moments("claimed")[3], "$\\kappa = 1$",
                f"{src}:bulk_moments", named("m4_claimed", r"m_4^{\mathrm{claimed}}"), claim="C1"),
        Formula("fourth moment of the bulk at $T = 1$", bulk_moments("T=1")[3],
                "$T = 1$, $\\kappa = 1$; token counts Poisson($\\delta/\\gamma$)", f"{src}:bulk_moments",
                named("m4_T1", r"m_4^{(T = 1)}"), claim="C1"),
        Formula("fourth-moment excess over the claimed law at $T = 1$", fourth_moment_excess(), "$T = 1$, $\\kappa = 1$",
                f"{src}:fourth_moment_excess", named("m4_excess", r"m_4^{(T = 1)} - m_4^{\mathrm{claimed}}"), claim="C1"),
    ]
