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

The threshold therefore moves with ``d`` (:func:`threshold_at_dimension`): the signal is the top eigenvalue of a draw
whose largest count is ``M`` once its outlier passes the token's, at :math:`\mu_2 = c_M/(\psi(c_M) - c_M)`
(:func:`token_threshold`), which is :math:`\gamma M - \delta - \gamma + O(1/M)`: the mean threshold grows like
:math:`\gamma\log d/\log\log d` without bound, and the limit's threshold is its value at no finite ``d``.
"""
from __future__ import annotations

import mpmath

from derive.vocabulary.limit.silverstein import GeneralizedMP

__all__ = ["token_eigenvalue", "max_count_cdf", "top_of_bulk", "first_count_above", "signal_on_top_probability",
           "token_threshold", "threshold_at_dimension"]


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


def token_threshold(law: GeneralizedMP, m: int) -> mpmath.mpf:
    r"""The signal strength at which the signal's outlier reaches the eigenvalue of the one token seen ``m`` times (the
    draw's largest count): :math:`\mu_2 = c_m/(\psi(c_m) - c_m)`. At one nonzero weight the outlier is :math:`x(t) =
    t(1 - S_0(t))` at the root of :math:`S_0(t) = -1/\mu_2`; without the cluster of count ``m`` (one token, not a
    share of ``V``) :math:`x(c_m) = \psi(c_m)` (:func:`token_eigenvalue`), so the outlier is at the token's eigenvalue
    where :math:`S_0(c_m) = 1 - \psi(c_m)/c_m = -1/\mu_2`. With :math:`\psi(c) = c + 1 + \delta(1 + 1/\lambda)/c +
    O(c^{-2})` it is :math:`c_m - \delta(1 + 1/\lambda) + O(1/c_m) = \gamma m - \delta - \gamma + O(1/m)`.

    >>> from derive.vocabulary.limit.populations import PoissonPopulation
    >>> L = GeneralizedMP(1, PoissonPopulation(1))
    >>> with mpmath.workdps(15):
    ...     print(mpmath.nstr(token_threshold(L, 6), 6), mpmath.nstr(token_threshold(L, 40), 6), 40 - 1 - 1)
    3.67251 37.9729 38
    """
    c = law.atom(m)
    return c / (token_eigenvalue(law, m) - c)


def threshold_at_dimension(law: GeneralizedMP, d: int, limit=None) -> dict:
    r"""The sample-level threshold at dimension ``d`` (:math:`V = d/\delta`): in a draw whose largest count is ``M``,
    the least :math:`\mu_2` at which the signal's outlier exists and is the top eigenvalue,
    :math:`\max(\mu_{2,c}, \mu_2(M))` (``limit``: the limit's :math:`\mu_{2,c}`, by default the lower end of the
    first window of :func:`derive.vocabulary.limit.signal.signal_windows`; :math:`\mu_2(M)`:
    :func:`token_threshold`), with ``M`` distributed as in :func:`top_of_bulk`. Returns ``limit``, the threshold's ``mean``, ``sd``
    and ``median`` over draws, and ``counts`` (the law of ``M``). Exact up to the Poissonized counts and :math:`O(1/d)`.

    >>> from derive.vocabulary.limit.populations import PoissonPopulation
    >>> L = GeneralizedMP(1, PoissonPopulation(1))
    >>> with mpmath.workdps(15):
    ...     r = threshold_at_dimension(L, 1000)
    >>> round(r["limit"], 4), round(r["mean"], 3), round(r["median"], 4)
    (2.7974, 3.285, 2.7974)
    """
    if limit is None:
        from derive.vocabulary.limit.signal import signal_windows

        windows = signal_windows(law)
        limit = windows[0][0] if windows else mpmath.inf
    limit = mpmath.mpf(limit)
    counts = top_of_bulk(law, d)["counts"]
    values = {m: float(max(limit, token_threshold(law, m))) if m > 0 else float(limit) for m in counts}
    mean = sum(p * values[m] for m, p in counts.items())
    sd = max(0.0, sum(p * values[m] ** 2 for m, p in counts.items()) - mean ** 2) ** 0.5
    below, median = 0.0, None
    for m in sorted(counts):
        below += counts[m]
        if below >= 0.5:
            median = values[m]
            break
    return {"limit": float(limit), "mean": mean, "sd": sd, "median": median, "counts": counts}
