r"""The top of the model's bulk at ``T = 1`` (one nonzero weight) and dimension ``d``: the limit law has unbounded
support, so the largest bulk eigenvalue grows with ``d``, and the signal outlier stops being the top eigenvalue.

The bulk of :math:`S = \frac1V\sum_v \tau_v z_v z_v^\top` comes from the token counts :math:`n_v`
(:math:`\tau_v = n_v/\lambda`, :math:`\lambda = N/V = \delta/\gamma`). A count :math:`k` seen by :math:`O(1)` of the
:math:`V = d/\delta` tokens is a *generalized spike* of the population (Bai and Yao 2012): its eigenvalue sits at
:math:`\psi(c_k)`, :math:`c_k = \delta\tau_k = \gamma k`, with

.. math:: \psi(c) = c\Bigl(1 - \frac1\delta\sum_{j\ne k}\frac{p_j c_j}{c_j - c}\Bigr)
          = c + 1 + \frac{\delta(1 + 1/\lambda)}{c} + O(c^{-2})

(Silverstein's :math:`x(t)` without the spike's own atom). The top of the bulk is :math:`\psi(c_M)`, ``M`` the
largest count among the ``V`` tokens, whose law is :math:`P(M \le m) \approx P(n \le m)^V` (Poissonized counts;
exact counts are multinomial). ``M`` concentrates on one or two integers near the ``m`` with
:math:`V p_m \approx 1`, i.e. :math:`m\log m \sim \log V`: :math:`M \sim \log V/\log\log V` (Anderson 1970), so

.. math:: \lambda_{\max}(S) = \gamma M + 1 + O(1/M) \sim \gamma\,\frac{\log d}{\log\log d}\to\infty .

Consequence for the signal: its outlier :math:`\ell` (:func:`derive.vocabulary.limit.signal.signal_outlier`) sits in a
gap between the clusters of counts :math:`k^*-1` and :math:`k^*`. The top eigenvalue is the signal's iff no token is
seen :math:`k^*` or more times, probability :math:`\exp(-V P(n \ge k^*))\to 0`: as :math:`d\to\infty` the top
eigenvector is a token's (overlap with ``u`` of order :math:`1/d`), and ``u`` is recovered by the eigenvector of
the eigenvalue nearest :math:`\ell`, whose overlap keeps its limit (the gap is free of eigenvalues with probability
tending to one, exact separation).
"""
from __future__ import annotations

import mpmath

from derive.vocabulary.limit.silverstein import GeneralizedMP

__all__ = ["token_eigenvalue", "max_count_cdf", "top_of_bulk", "first_count_above", "signal_on_top_probability"]


def token_eigenvalue(law: GeneralizedMP, k: int) -> mpmath.mpf:
    r"""The eigenvalue of one token seen ``k`` times, :math:`\psi(c_k) = c_k(1 - \frac1\delta\sum_{j\ne k}
    p_jc_j/(c_j - c_k))`, the sum cut where the tail mass is below the working precision (its terms are bounded by
    :math:`p_j c_j/(c_j - c_k) \le (k+1)p_j` beyond ``k``).

    >>> from derive.vocabulary.limit.populations import PoissonPopulation
    >>> L = GeneralizedMP(1, PoissonPopulation(1))
    >>> with mpmath.workdps(15):
    ...     print(mpmath.nstr(token_eigenvalue(L, 6), 6), mpmath.nstr(token_eigenvalue(L, 40), 6))
    7.63376 41.0534
    """
    P = law.population
    K = max(k, law.negligible_index()) + 10
    ck = law.atom(k)
    s = mpmath.fsum(P.mass(j) * law.atom(j) / (law.atom(j) - ck) for j in range(1, K + 1) if j != k)
    return ck * (1 - s / law._delta())


def max_count_cdf(law: GeneralizedMP, m: int, V: int) -> mpmath.mpf:
    r""":math:`P(M \le m) = P(n \le m)^V` for the largest of ``V`` independent Poisson counts.

    >>> from derive.vocabulary.limit.populations import PoissonPopulation
    >>> L = GeneralizedMP(1, PoissonPopulation(1))
    >>> with mpmath.workdps(15):
    ...     print(mpmath.nstr(max_count_cdf(L, 0, 3), 6), mpmath.nstr(mpmath.exp(-3), 6))
    0.0497871 0.0497871
    """
    return law.population.cdf(m) ** V


def top_of_bulk(law: GeneralizedMP, d: int) -> dict:
    r"""The law of the top of the bulk at dimension ``d`` (:math:`V = d/\delta`): the distribution of the largest
    count ``M`` (the integers with probability above :math:`10^{-4}`, the tail beyond :math:`1 - 10^{-6}` lumped
    on the last), its mean, and :math:`E\,\psi(c_M)`.

    >>> from derive.vocabulary.limit.populations import PoissonPopulation
    >>> L = GeneralizedMP(1, PoissonPopulation(1))
    >>> with mpmath.workdps(15):
    ...     r = top_of_bulk(L, 1000)
    >>> [round(r["counts"][m], 3) for m in (4, 5, 6, 7)], round(r["mean_count"], 3), round(r["mean_eigenvalue"], 3)
    ([0.026, 0.526, 0.368, 0.07], 5.514, 7.241)
    """
    V = int(mpmath.nint(d / law._delta()))
    probs, m = {}, 0
    while max_count_cdf(law, m, V) < 1 - mpmath.mpf("1e-6"):
        p = max_count_cdf(law, m, V) - max_count_cdf(law, m - 1, V) if m > 0 else max_count_cdf(law, 0, V)
        if p > 1e-4:
            probs[m] = p
        m += 1
    probs[m] = 1 - max_count_cdf(law, m - 1, V)
    total = mpmath.fsum(probs.values())
    return {"V": V, "counts": {k: float(p / total) for k, p in probs.items()},
            "mean_count": float(mpmath.fsum(k * p for k, p in probs.items()) / total),
            "mean_eigenvalue": float(mpmath.fsum(token_eigenvalue(law, k) * p for k, p in probs.items() if k > 0)
                                     / total)}


def first_count_above(law: GeneralizedMP, x) -> int:
    r"""The smallest count ``k`` whose token eigenvalue :math:`\psi(c_k)` lies above ``x`` (:math:`\psi(c_k)`
    increases with ``k`` beyond the mode).

    >>> from derive.vocabulary.limit.populations import PoissonPopulation
    >>> L = GeneralizedMP("1/4", PoissonPopulation("1/4"))
    >>> with mpmath.workdps(15):
    ...     first_count_above(L, "5.857")
    5
    """
    x = mpmath.mpf(x)
    k = law.population.mode_range()
    while token_eigenvalue(law, k) <= x:
        k += 1
    while k > 1 and token_eigenvalue(law, k - 1) > x:
        k -= 1
    return k


def signal_on_top_probability(law: GeneralizedMP, ell, d: int) -> mpmath.mpf:
    r"""The probability that no token is seen :math:`k^*` or more times (:func:`first_count_above` of ``ell``) among
    :math:`V = d/\delta`: :math:`\exp(-V P(n \ge k^*))` (Poissonized), the probability that the signal's outlier at
    ``ell`` is the top eigenvalue.

    >>> from derive.vocabulary.limit.populations import PoissonPopulation
    >>> L = GeneralizedMP("1/4", PoissonPopulation("1/4"))
    >>> with mpmath.workdps(15):
    ...     print(mpmath.nstr(signal_on_top_probability(L, "5.857", 2000), 4))
    0.9485
    """
    k = first_count_above(law, ell)
    V = int(mpmath.nint(d / law._delta()))
    return law.population.cdf(k - 1) ** V
