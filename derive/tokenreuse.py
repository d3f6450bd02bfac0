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

from derive import freeprob as fp
from derive.formulas import Formula

delta, gamma = sp.symbols("delta gamma", positive=True)


def moments_from_free_cumulants(cumulants: list, n: int) -> list:
    r"""Moments ``m_0..m_n`` from free cumulants ``k_1..k_n``: :math:`m_n = \sum_{\pi\in NC(n)} \prod_{B\in\pi} k_{|B|}`.

    >>> moments_from_free_cumulants([1, 1, 1], 3)   # free Poisson of rate 1: Catalan numbers
    [1, 1, 2, 5]
    """
    return [sp.Integer(1)] + [sp.factor(sum(sp.Mul(*[cumulants[len(B) - 1] for B in pi])
                                            for pi in fp.noncrossing_partitions(k))) for k in range(1, n + 1)]


def token_count_moments(lam, n: int) -> list:
    r"""Moments of :math:`n_v/\lambda` with :math:`n_v \sim \mathrm{Poisson}(\lambda)`: the law of ``D`` at ``T = 1``.

    A token is drawn by each of the ``N`` sequences with probability ``1/V``, so its count is
    Binomial(N, 1/V) -> Poisson(N/V).

    >>> token_count_moments(sp.Integer(2), 4)
    [1, 1, 3/2, 11/4, 47/8]
    """
    X = Poisson("n_v", lam)
    return [sp.simplify(expect(X**k) / lam**k) for k in range(n + 1)]


def wishart_moments(ratio, n: int) -> list:
    r"""Moments of the Gaussian equivalent of ``D``: Marchenko-Pastur of ratio ``V/N`` (free cumulants ``ratio^{k-1}``).

    >>> wishart_moments(sp.Rational(1, 2), 4)
    [1, 1, 3/2, 11/4, 45/8]
    """
    return moments_from_free_cumulants([ratio ** (k - 1) for k in range(1, n + 1)], n)


@lru_cache(maxsize=None)
def bulk_moments(kind: str, n: int = 4) -> tuple:
    r"""Moments ``m_1..m_n`` of the ``d``-space bulk of ``S`` at ``kappa = 1``, in ``delta, gamma``.

    ``kind = "claimed"``: ``D`` Gaussian-equivalent (the law of C1); ``kind = "T=1"``: the exact
    token-count law. :math:`m_k^{(d)} = m_k^{(V)}/\delta` (``V/d`` zero eigenvalues removed).

    >>> [sp.simplify(a - b) for a, b in zip(bulk_moments("T=1"), bulk_moments("claimed"))]
    [0, 0, 0, delta*gamma**2]
    """
    lam = delta / gamma
    law_D = {"claimed": wishart_moments(1 / lam, n), "T=1": token_count_moments(lam, n)}[kind]
    free_poisson = moments_from_free_cumulants([delta] * n, n)
    v_space = fp.free_multiplicative_moments(free_poisson, law_D)
    return tuple(sp.factor(v_space[k] / delta) for k in range(1, n + 1))


def fourth_moment_excess() -> sp.Expr:
    r"""The excess of the true fourth bulk moment over the claimed one at ``T = 1``, ``kappa = 1``.

    >>> fourth_moment_excess()
    delta*gamma**2
    """
    return sp.factor(bulk_moments("T=1")[3] - bulk_moments("claimed")[3])


def formulas() -> list[Formula]:
    src = "derive/tokenreuse.py"
    return [
        Formula("bulk fourth moment, claimed law", bulk_moments("claimed")[3], "kappa = 1", f"{src}:bulk_moments"),
        Formula("bulk fourth moment, exact at T=1", bulk_moments("T=1")[3],
                "T = 1, kappa = 1; token counts Poisson(delta/gamma)", f"{src}:bulk_moments"),
        Formula("fourth-moment excess over the claimed law at T=1", fourth_moment_excess(),
                "T = 1, kappa = 1", f"{src}:fourth_moment_excess"),
    ]
