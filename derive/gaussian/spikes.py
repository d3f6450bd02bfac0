r"""Outliers of the sample covariance of pooled vectors: population and sample level.

The population covariance (see :mod:`derive.model.expectations`) is a bulk
:math:`H = \kappa\,\mathrm{MP}_\delta` plus independent rank-one terms of strength
:math:`\theta`: the signal :math:`\theta_s = \alpha(\mu_2+\delta)` along :math:`\mu + Zs/V`
and, for the raw ``S`` only, the mean :math:`\theta_m = W^2\delta` along :math:`Z1/V`.

*Population level* (``N = oo``). For :math:`B + \theta v v^T` with ``v`` independent of ``B``,
:math:`\det(B + \theta v v^T - z) = \det(B - z)(1 + \theta\, v^T (B - z)^{-1} v)` and
:math:`v^T (B-z)^{-1} v \to m_H(z)`, so the outlier :math:`\ell` solves
:math:`1 + \theta\, m_H(\ell) = 0`, and the residue of the resolvent gives
:math:`|\langle \hat v, v\rangle|^2 = 1/(\theta^2 m_H'(\ell))`.

*Sample level* (``d/N -> gamma``, Gaussian-equivalent vectors with that covariance). The
sample outlier is :math:`\psi(\ell) = \ell\,(1 - \gamma - \gamma \ell\, m_H(\ell))`
(Baik-Silverstein), which at :math:`m_H(\ell) = -1/\theta` is rational in :math:`\theta`;
it exists where :math:`\psi' > 0`, and the sample eigenvector keeps the fraction
:math:`\ell\,\psi'(\ell)/\psi(\ell)` of the population eigenvector.
"""
from __future__ import annotations

from functools import lru_cache

import sympy as sp

from derive.model import expectations as ex
from derive.symbols import Formula, named
from derive.gaussian.freeprob import scaled_mp_polynomial
from derive.symbols import alpha, delta, gamma, kappa, m, mu2, theta, z

__all__ = ["population_bulk_polynomial", "population_outlier_location", "population_overlap",
           "population_threshold", "sample_outlier_location", "sample_overlap_factor",
           "sample_threshold_polynomial", "successive_thresholds", "population_right_edge", "signal_overlap",
           "population_mu2_critical", "critical_mu2", "formulas"]



@lru_cache(maxsize=None)
def population_bulk_polynomial() -> sp.Expr:
    r"""The Stieltjes equation :math:`P_H(m, z) = 0` of the population bulk :math:`H = \kappa\,\mathrm{MP}_\delta`.

    >>> sp.expand(population_bulk_polynomial().subs({delta: 0}) - (m * (z - kappa) + 1))
    0
    """
    return scaled_mp_polynomial(m, z, delta, kappa)


@lru_cache(maxsize=None)
def population_outlier_location() -> sp.Expr:
    r"""The population outlier :math:`\ell(\theta)`: the root of :math:`P_H(-1/\theta, \ell) = 0`.

    >>> sp.factor(population_outlier_location())
    theta*(delta*kappa - kappa - theta)/(delta*kappa - theta)
    """
    P = population_bulk_polynomial()
    roots = sp.solve(sp.numer(sp.together(P.subs(m, -1 / theta))), z)
    if len(roots) != 1:
        raise ArithmeticError(f"expected one outlier root, got {roots}")
    return sp.factor(roots[0])


def _stieltjes_derivative() -> sp.Expr:
    P = population_bulk_polynomial()
    return -sp.diff(P, z) / sp.diff(P, m)


@lru_cache(maxsize=None)
def population_overlap() -> sp.Expr:
    r"""Squared cosine of the population outlier eigenvector with its spike direction.

    :math:`\zeta(\theta) = 1/(\theta^2 m_H'(\ell))` with ``m_H'`` from implicit differentiation.

    >>> population_overlap().subs({delta: 0})
    1
    """
    at = {m: -1 / theta, z: population_outlier_location()}
    # a rational function: factor cancels it (simplify before it changed nothing and took ten times as long)
    return sp.factor(1 / (theta**2 * _stieltjes_derivative().subs(at)))


@lru_cache(maxsize=None)
def population_threshold() -> sp.Expr:
    r"""The spike strength :math:`\theta_c` at which the population overlap vanishes.

    :math:`\theta_c` is the largest root of the numerator of :math:`\zeta(\theta)`; there
    :math:`\ell(\theta_c)` is the right edge :math:`\kappa(1+\sqrt\delta)^2` of the bulk.

    >>> population_threshold()
    kappa*(sqrt(delta) + delta)
    """
    num = sp.numer(sp.together(population_overlap()))
    roots = sp.solve(num, theta)
    positive = [r for r in roots if sp.simplify(r.subs({delta: sp.Rational(1, 3), kappa: 1})) > 0]
    if len(positive) != 1:
        raise ArithmeticError(f"expected one positive threshold, got {roots}")
    return sp.factor(positive[0])


@lru_cache(maxsize=None)
def sample_outlier_location() -> sp.Expr:
    r"""The sample outlier :math:`\psi(\ell(\theta)) = \ell(1 - \gamma + \gamma \ell/\theta)`.

    At ``gamma = 0`` it is the population outlier; at ``delta = 0`` it is the classical
    BBP location :math:`(\theta+\kappa)(\theta+\gamma\kappa)/\theta`.

    >>> sp.simplify(sample_outlier_location().subs(delta, 0) - (theta + kappa) * (theta + gamma * kappa) / theta)
    0
    """
    ell = population_outlier_location()
    return sp.factor(ell * (1 - gamma - gamma * ell * (-1 / theta)))


@lru_cache(maxsize=None)
def sample_overlap_factor() -> sp.Expr:
    r"""The fraction :math:`\ell\,\psi'(\ell)/\psi(\ell)` of the population eigenvector kept by the sample one.

    Obtained by the chain rule in :math:`\theta`; at ``delta = 0``, ``kappa = 1`` it is Paul's
    :math:`(1 - \gamma/\theta^2)/(1 + \gamma/\theta)`.

    >>> paul = (1 - gamma / theta**2) / (1 + gamma / theta)
    >>> sp.simplify(sample_overlap_factor().subs({delta: 0, kappa: 1}) - paul)
    0
    """
    ell = population_outlier_location()
    psi = sample_outlier_location()
    return sp.factor(ell * sp.diff(psi, theta) / sp.diff(ell, theta) / psi)


@lru_cache(maxsize=None)
def sample_threshold_polynomial() -> sp.Poly:
    r"""The polynomial in :math:`\theta` whose largest real root is the sample threshold.

    The sample outlier leaves the bulk where :math:`d\psi/d\theta` changes sign; the sample
    bulk's right edge is :math:`\psi` there.

    >>> sp.solve(sample_threshold_polynomial().as_expr().subs({delta: 0, kappa: 1}), theta)
    [sqrt(gamma)]
    """
    num = sp.numer(sp.together(sp.diff(sample_outlier_location(), theta)))
    return sp.Poly(sp.expand(num), theta)


@lru_cache(maxsize=None)
def successive_thresholds() -> dict:
    r"""A proof that the sample threshold exceeds the population threshold for every :math:`\delta, \gamma, \kappa > 0`.

    In :math:`x = \theta - \delta\kappa` the threshold polynomial :math:`P` has coefficients
    :math:`(-1, 0, +, +)`: one sign change, so (Descartes) exactly one positive root :math:`x^*`, with
    :math:`P > 0` on :math:`[0, x^*)` and :math:`P < 0` beyond. The population threshold sits at
    :math:`x_c = \theta_c - \delta\kappa > 0` and :math:`P(x_c) > 0`, hence :math:`x_c < x^*`. Returns the
    coefficients in ``x``, :math:`x_c`, :math:`P(x_c)` (factored) and whether SymPy proves each sign
    from the assumptions of the symbols (``proved``).

    >>> r = successive_thresholds(); r["P_at_population_threshold"], r["proved"]
    (gamma*kappa**3*(delta**(3/2) + sqrt(delta) + 2*delta), True)
    """
    x = sp.Dummy("x")
    P = sample_threshold_polynomial().as_expr()
    coeffs = sp.Poly(sp.expand(P.subs(theta, x + delta * kappa)), x).all_coeffs()
    signs = [sp.sign(c) if c.is_number else (1 if c.is_positive else -1 if c.is_negative else 0) for c in coeffs]
    nonzero = [c for c in signs if c != 0]
    changes = sum(a != b for a, b in zip(nonzero, nonzero[1:]))
    x_c = sp.simplify(population_threshold() - delta * kappa)
    at = sp.factor(P.subs(theta, population_threshold()))
    proved = bool(0 not in signs[2:] and changes == 1 and signs[0] == -1 and x_c.is_positive and at.is_positive)
    return {"coefficients_in_x": coeffs, "sign_changes": changes, "x_population": x_c,
            "P_at_population_threshold": at, "proved": proved}


@lru_cache(maxsize=None)
def population_right_edge() -> sp.Expr:
    r"""The right edge of the population bulk: the outlier location at the threshold, :math:`\ell(\theta_c)`.

    >>> population_right_edge()
    kappa*(2*sqrt(delta) + delta + 1)
    """
    return sp.factor(sp.simplify(population_outlier_location().subs(theta, population_threshold())))


@lru_cache(maxsize=None)
def signal_overlap(level: str) -> sp.Expr:
    r"""The limit of :math:`|\hat u^\top u|^2` for the signal's outlier at a ``level`` (``"population"`` or
    ``"sample"``), where it exists (:math:`\theta_s` above that level's threshold; 0 below), as one expression in
    :math:`\theta = \theta_s` and :math:`\mu_2`: the squared cosine with the spike direction (:math:`\zeta`, times
    :math:`\eta` at the sample level) times that direction's squared cosine with ``u``.

    >>> signal_overlap("population")
    mu2*(delta**2*kappa**2 - delta*kappa**2 - 2*delta*kappa*theta + theta**2)/((delta + mu2)*(delta*kappa - theta)**2)
    """
    if level not in ("population", "sample"):
        raise ValueError(f"level must be 'population' or 'sample', got {level!r}")
    cos2 = ex.population_covariance_terms()["signal_cosine2"]
    factor = sample_overlap_factor() if level == "sample" else 1
    return sp.factor(population_overlap() * factor * cos2)


@lru_cache(maxsize=None)
def population_mu2_critical() -> sp.Expr:
    r"""The smallest :math:`\mu_2` at which the population outlier exists, where it is positive: :math:`\mu_2(\theta_c)`
    (:func:`critical_mu2` at the population threshold); the critical :math:`\mu_2` is its maximum with 0.

    >>> population_mu2_critical()
    -delta + kappa*(sqrt(delta) + delta)/alpha
    """
    return critical_mu2().subs(theta, population_threshold())


@lru_cache(maxsize=None)
def critical_mu2() -> sp.Expr:
    r"""The signal strength :math:`\mu_2` at which the signal term reaches strength :math:`\theta`:
    the root in :math:`\mu_2` of :math:`\theta_s(\mu_2) = \theta` with :math:`\theta_s` from
    :func:`derive.model.expectations.population_covariance_terms`.

    >>> critical_mu2()
    -delta + theta/alpha
    """
    roots = sp.solve(sp.Eq(ex.population_covariance_terms()["signal_strength"], theta), mu2)
    if len(roots) != 1:
        raise ArithmeticError(f"expected one root in mu2, got {roots}")
    return sp.expand(roots[0])


def formulas() -> list[Formula]:
    src = "derive/gaussian/spikes.py"
    assume = ("bulk $H = \\kappa\\,\\mathrm{MP}_\\delta$ plus a rank-one term of strength $\\theta$ along a direction "
              "independent of the bulk")
    overlap_assume = ("the signal term: strength $\\theta = \\theta_s = \\alpha(\\mu_2 + \\delta)$ along $\\mu + Zs/V$, of "
                      "squared cosine $\\mu_2/(\\mu_2 + \\delta)$ with $u$, on the bulk $\\kappa\\,\\mathrm{MP}_\\delta$")
    sample = assume + "; sample level for Gaussian-equivalent pooled vectors, $d/N \\to \\gamma$"
    ell, zeta, psi, eta, Q, P_H, mu2_of = (named(n, t, sp.Function) for n, t in (
        ("ell", r"\ell"), ("zeta", r"\zeta"), ("psi", r"\psi"), ("eta", r"\eta"), ("Q", "Q"), ("P_H", "P_H"),
        ("mu2_of", r"\mu_2")))
    return [
        Formula("Stieltjes polynomial of the population bulk", population_bulk_polynomial(),
                "$P_H(m_H(z), z) = 0$ for the Stieltjes transform $m_H$ of $H = \\kappa\\,\\mathrm{MP}_\\delta$",
                f"{src}:population_bulk_polynomial", P_H(m, z), claim="C2-C4"),
        Formula("population outlier", population_outlier_location(), assume + "; $\\theta > \\theta_c$",
                f"{src}:population_outlier_location", ell(theta), claim="C2-C4",
                quantities=(("population.eigenvalue", None),)),
        Formula("squared cosine of the population outlier eigenvector with the spike direction", population_overlap(),
                assume + "; $\\theta > \\theta_c$", f"{src}:population_overlap", zeta(theta), claim="C2-C4"),
        Formula("squared overlap of the population outlier's eigenvector with $u$", signal_overlap("population"),
                overlap_assume + "; $\\zeta(\\theta)\\cos^2\\varphi_s$ at $\\theta = \\theta_s > \\theta_c$ (the outlier "
                "exists); 0 for $\\theta_s \\le \\theta_c$", f"{src}:signal_overlap",
                named("overlap_population", r"|\hat u^\top u|^2_{N = \infty}"), claim="C2-C4",
                quantities=(("population.overlap", None),)),
        Formula("population threshold", population_threshold(), assume, f"{src}:population_threshold",
                named("theta_c", r"\theta_c"), claim="C2-C4", quantities=(("population.theta_critical", None),)),
        Formula("smallest signal strength of the population outlier", sp.Max(0, population_mu2_critical()),
                "signal term of strength $\\alpha(\\mu_2 + \\delta)$ reaching $\\theta_c$; 0 where "
                "$\\alpha\\delta \\ge \\theta_c$ (the outlier exists at $\\mu_2 = 0$)", f"{src}:critical_mu2",
                named("mu2_c", r"\mu_{2,c}"), claim="C2-C4", quantities=(("population.mu2_critical", None),)),
        Formula("smallest $\\rho = \\alpha\\mu_2/\\kappa$ of the population outlier",
                sp.Max(0, sp.expand(alpha * population_mu2_critical() / kappa)),
                "the paper's $\\rho$ at $\\mu_{2,c}$; claim C3 states $\\delta + \\sqrt\\delta$, without the class-mean "
                "term $\\alpha\\delta/\\kappa$", f"{src}:critical_mu2", named("rho_c", r"\rho_c"), claim="C2-C4",
                quantities=(("population.rho_critical", None),)),
        Formula("right edge of the population bulk", population_right_edge(), assume, f"{src}:population_right_edge",
                named("lambda_H", r"\lambda_+(H)"), claim="C2-C4", quantities=(("bulk.population_right_edge", None),)),
        Formula("sample outlier", sample_outlier_location(), sample + "; $\\theta > \\theta_c^{(N)}$",
                f"{src}:sample_outlier_location", psi(ell(theta)), claim="C2-C4",
                quantities=(("sample.eigenvalue", None),)),
        Formula("fraction of the population eigenvector kept by the sample one", sample_overlap_factor(),
                sample + "; $\\eta = \\ell\\,\\psi'(\\ell)/\\psi(\\ell)$; the sample outlier's squared cosine with the "
                "spike direction is $\\zeta(\\theta)\\,\\eta(\\theta)$, with $u$ the entry below",
                f"{src}:sample_overlap_factor", eta(theta), claim="C2-C4"),
        Formula("squared overlap of the sample outlier's eigenvector with $u$", signal_overlap("sample"),
                sample.replace(assume, overlap_assume) + "; $\\zeta(\\theta)\\,\\eta(\\theta)\\cos^2\\varphi_s$ at "
                "$\\theta = \\theta_s > \\theta_c^{(N)}$ (the outlier exists); 0 for $\\theta_s \\le \\theta_c^{(N)}$",
                f"{src}:signal_overlap", named("overlap_sample", r"|\hat u^\top u|^2_{d/N \to \gamma}"), claim="C2-C4",
                quantities=(("sample.overlap", None),)),
        Formula("sample threshold polynomial", sample_threshold_polynomial().as_expr(),
                sample + "; the sample threshold $\\theta_c^{(N)}$ is its largest real root",
                f"{src}:sample_threshold_polynomial", Q(theta), claim="C2-C4"),
        Formula("signal strength at which the signal term reaches strength $\\theta$", critical_mu2(),
                "signal term of strength $\\alpha(\\mu_2 + \\delta)$; the critical $\\mu_2$ of a level is "
                "$\\max(0, \\mu_2(\\theta_c))$", f"{src}:critical_mu2", mu2_of(theta), claim="C2-C4"),
    ]
