r"""Outliers of the sample covariance of pooled vectors: population and sample level.

The population covariance (see :mod:`derive.expectations`) is a bulk
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

import mpmath
import sympy as sp

from derive import expectations as ex
from derive.errors import ParameterError
from derive.formulas import Formula
from derive.freeprob import scaled_mp_polynomial
from derive.numbers import check_digits, check_range, format_real, parse_rational, real_number

m, z = sp.symbols("m z")
theta = sp.Symbol("theta", positive=True)
delta, kappa, mu2, alpha, W = ex.delta, ex.kappa, ex.mu2, ex.alpha, ex.W
gamma = sp.Symbol("gamma", nonnegative=True)
_POS = {delta: sp.Symbol("delta", positive=True), kappa: sp.Symbol("kappa", positive=True)}


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
    return sp.factor(sp.simplify(1 / (theta**2 * _stieltjes_derivative().subs(at))))


@lru_cache(maxsize=None)
def population_threshold() -> sp.Expr:
    r"""The spike strength :math:`\theta_c` at which the population overlap vanishes.

    :math:`\theta_c` is the largest root of the numerator of :math:`\zeta(\theta)`; there
    :math:`\ell(\theta_c)` is the right edge :math:`\kappa(1+\sqrt\delta)^2` of the bulk.

    >>> population_threshold()
    kappa*(sqrt(delta) + delta)
    """
    num = sp.numer(sp.together(population_overlap()))
    roots = sp.solve(num.subs(_POS), theta)
    positive = [r for r in roots if sp.simplify(r.subs({_POS[delta]: sp.Rational(1, 3), _POS[kappa]: 1})) > 0]
    if len(positive) != 1:
        raise ArithmeticError(f"expected one positive threshold, got {roots}")
    return sp.factor(positive[0].subs({v: k for k, v in _POS.items()}))


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
    return sp.factor(sp.simplify(ell * sp.diff(psi, theta) / sp.diff(ell, theta) / psi))


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


def formulas() -> list[Formula]:
    src = "derive/spikes.py"
    assume = "bulk H = kappa MP_delta; spike direction independent of the bulk"
    sample = assume + "; sample level with Gaussian-equivalent pooled vectors, d/N -> gamma"
    return [
        Formula("population bulk Stieltjes equation P_H(m, z)", population_bulk_polynomial(), assume,
                f"{src}:population_bulk_polynomial"),
        Formula("population outlier ell(theta)", population_outlier_location(), assume + "; theta > theta_c",
                f"{src}:population_outlier_location"),
        Formula("population eigenvector overlap with the spike direction", population_overlap(), assume,
                f"{src}:population_overlap"),
        Formula("population threshold theta_c", population_threshold(), assume, f"{src}:population_threshold"),
        Formula("sample outlier psi(ell(theta))", sample_outlier_location(), sample, f"{src}:sample_outlier_location"),
        Formula("sample overlap factor ell psi'/psi", sample_overlap_factor(), sample, f"{src}:sample_overlap_factor"),
        Formula("sample threshold polynomial in theta", sample_threshold_polynomial().as_expr(), sample,
                f"{src}:sample_threshold_polynomial"),
    ]


@lru_cache(maxsize=None)
def _numeric():
    """mpmath functions of the derived expressions, compiled once per process."""
    args = (theta, delta, gamma, kappa)
    compile_ = lambda e: sp.lambdify(args, e, modules="mpmath")  # noqa: E731
    coeffs = [sp.lambdify((delta, gamma, kappa), c, modules="mpmath")
              for c in sample_threshold_polynomial().all_coeffs()]
    return {
        "ell": compile_(population_outlier_location()),
        "zeta": compile_(population_overlap()),
        "theta_c": sp.lambdify((delta, kappa), population_threshold(), modules="mpmath"),
        "psi": compile_(sample_outlier_location()),
        "factor": compile_(sample_overlap_factor()),
        "threshold_coeffs": coeffs,
    }


def sample_threshold(delta_, gamma_, kappa_) -> mpmath.mpf:
    r"""The sample threshold :math:`\theta_c^{(N)}`: the positive root of the threshold polynomial.

    In :math:`x = \theta - \delta\kappa` the polynomial is :math:`-x^3 + \kappa^2(\delta+\gamma+\delta\gamma)x + 2\kappa^3\delta\gamma`,
    which has exactly one positive root (one sign change).

    >>> mpmath.mp.dps = 15; sample_threshold(0, mpmath.mpf(1)/4, 1)   # classical BBP: sqrt(gamma)
    mpf('0.5')
    """
    delta_, gamma_, kappa_ = (_mp_parameter(v, name, low_open)
                              for v, name, low_open in ((delta_, "delta", False), (gamma_, "gamma", False), (kappa_, "kappa", True)))
    f = _numeric()
    coeffs = [c(delta_, gamma_, kappa_) for c in f["threshold_coeffs"]]
    roots = mpmath.polyroots(coeffs, maxsteps=200, extraprec=4 * mpmath.mp.prec)
    tol = mpmath.mpf(10) ** (-(mpmath.mp.dps // 2))
    real = [mpmath.re(r) for r in roots if abs(mpmath.im(r)) <= tol * max(1, abs(r))]
    return max(real)


def _mp_parameter(value, name: str, low_open: bool) -> mpmath.mpf:
    """A parameter as an mpmath real in the current precision, checked ``> 0`` (``>= 0``)."""
    x = check_range(real_number(value, name), name, low=0, low_open=low_open)
    return value if isinstance(value, mpmath.mpf) else mpmath.mpf(sp.N(x, mpmath.mp.dps + 5))


def _exact_or_close(value, name: str, digits: int) -> sp.Rational:
    """A rational input as it is; a real SymPy expression (an ``alpha`` of the ``gauss`` family
    holds arcsines) as a rational within ``10^{-(digits + 20)}`` relative of it."""
    if isinstance(value, sp.Basic) and not value.is_Rational:
        approx = sp.N(value, digits + 20)
        if not (approx.is_real and approx.is_finite and approx.is_Number):
            raise ParameterError(name, f"not a finite real number: {value}")
        return sp.Rational(approx)
    return parse_rational(value, name)


def _validated(values: dict, digits: int) -> dict:
    out = {name: _exact_or_close(v, name, digits) for name, v in values.items()}
    check_range(out["delta"], "delta", low=0, low_open=True)
    check_range(out["gamma"], "gamma", low=0)
    check_range(out["kappa"], "kappa", low=0, low_open=True)
    check_range(out["alpha"], "alpha", low=0)
    check_range(out["mu2"], "mu2", low=0)
    return out


def _level(strength, cos2, p, *, sample: bool):
    """Outlier flag, eigenvalue, overlap of one rank-one term at one level (mpmath numbers)."""
    f = _numeric()
    args = (p["delta"], p["gamma"], p["kappa"])
    threshold = sample_threshold(*args) if sample else f["theta_c"](p["delta"], p["kappa"])
    if strength <= threshold:
        return {"outlier": False, "eigenvalue": None, "overlap": mpmath.mpf(0), "threshold": threshold}
    zeta = f["zeta"](strength, *args)
    if sample:
        eig = f["psi"](strength, *args)
        overlap = zeta * f["factor"](strength, *args) * cos2
    else:
        eig = f["ell"](strength, *args)
        overlap = zeta * cos2
    return {"outlier": True, "eigenvalue": eig, "overlap": overlap, "threshold": threshold}


def spike(delta, gamma, alpha, kappa, mu2, sum_w=1, centered=False, digits=30) -> dict:
    r"""The outliers of ``S`` (or ``S_c``) as derived here: the document of ``derive spike``.

    ``mu2_critical`` is :math:`\max(0, \theta_c/\alpha - \delta)` at each level (``None`` if
    :math:`\alpha = 0`: no signal survives the pooling). Reals are strings with ``digits``
    significant digits.

    >>> spike("1/2", "1/4", "1/2", "1/4", 3, digits=6)["population"]["mu2_critical"]
    '0.103553'
    >>> spike("1/2", "1/4", sp.asin(sp.Rational(1, 3)), 1, 4, digits=6)["population"]["outlier"]
    True
    """
    digits = check_digits(digits)
    p = _validated({"delta": delta, "gamma": gamma, "alpha": alpha, "kappa": kappa, "mu2": mu2, "sum_w": sum_w}, digits)
    fmt = lambda x: None if x is None else format_real(x, digits)  # noqa: E731
    with mpmath.workdps(digits + 15):
        q = {k: mpmath.mpf(v.p) / v.q for k, v in p.items()}
        signal = q["alpha"] * (q["mu2"] + q["delta"])
        cos2 = q["mu2"] / (q["mu2"] + q["delta"])
        doc, other = {}, []
        for name, sample in (("population", False), ("sample", True)):
            lev = _level(signal, cos2, q, sample=sample)
            if q["alpha"] == 0:
                crit = None
            else:
                crit = max(mpmath.mpf(0), lev["threshold"] / q["alpha"] - q["delta"])
            doc[name] = {"outlier": lev["outlier"], "eigenvalue": fmt(lev["eigenvalue"]),
                         "overlap": fmt(lev["overlap"]), "mu2_critical": fmt(crit)}
            if not centered:
                mean = _level(q["sum_w"] ** 2 * q["delta"], mpmath.mpf(0), q, sample=sample)
                if mean["outlier"]:
                    other.append({"cause": "mean of the vocabulary noise Z 1/V (raw S; removed by centering)",
                                  "level": name, "eigenvalue": fmt(mean["eigenvalue"]), "overlap": "0"})
        edge_theta = sample_threshold(q["delta"], q["gamma"], q["kappa"])
        args = (q["delta"], q["gamma"], q["kappa"])
        doc["bulk"] = {"right_edge": fmt(_numeric()["psi"](edge_theta, *args)),
                       "population_right_edge": fmt(q["kappa"] * (1 + mpmath.sqrt(q["delta"])) ** 2)}
        doc["other_outliers"] = [o for o in other if o["level"] == "sample"] + [o for o in other if o["level"] == "population"]
        doc["assumptions"] = ("population level exact in the limit d/V -> delta; sample level for "
                              "Gaussian-equivalent pooled vectors with the same covariance, d/N -> gamma")
    return doc
