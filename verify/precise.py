r"""Evaluation of the C1 bulk law :math:`\kappa(\mathrm{MP}_\delta \boxtimes \mathrm{MP}_\gamma)` for verification.

The arbitrary-precision evaluation lives in :mod:`derive.bulk`, because ``derive bulk`` needs
it and ``derive`` never imports ``verify``; it is exposed here under the names verification
code uses. This module adds the vectorized float64 path.

Float64 path: the same formula as :mod:`derive.bulk`,
:math:`\rho = \sqrt{-D(x)}/(2\pi|p_3(x)\,\partial_m P(r, x)|)`, with the discriminant evaluated in
factored form :math:`D(x) = \mathrm{lc}\prod_j (x - e_j)`, each real root :math:`e_j` held as
an unevaluated sum of two floats. :math:`x - e_j` is then exact to rounding even one ulp from
an edge, so :math:`D` keeps full relative accuracy where the naive polynomial would cancel,
and support membership is decided exactly for every float ``x``.
"""
from __future__ import annotations

from functools import lru_cache

import mpmath
import numpy as np
import sympy as sp

from derive import bulk as _bulk
from derive.bulk import real_root
from derive.errors import ParameterError


def bulk_density(delta, gamma, kappa, x, digits: int = 30) -> list:
    r"""The density at each ``x`` (floats are read as the exact binary numbers they are) to ``digits``.

    >>> mpmath.nstr(bulk_density(1, 1, 1, [0.5], 20)[0], 15)  # MP_1 boxtimes MP_1 at 1/2: 1/pi
    '0.318309886183791'
    """
    return _bulk.density(delta, gamma, kappa, x, digits)


def stieltjes_at(delta, gamma, kappa, z, digits: int = 30):
    r"""The Stieltjes transform :math:`m(z)`, :math:`\operatorname{Im} z \ne 0`, on the branch
    with :math:`\operatorname{Im} m\,\operatorname{Im} z > 0`, :math:`m \sim -1/z`.

    >>> mpmath.nstr(stieltjes_at(1, 1, 1, 1j * 10**6, 10), 6)
    '(1.0e-12 + 1.0e-6j)'
    """
    return _bulk.stieltjes(delta, gamma, kappa, z, digits)


def support(delta, gamma, kappa, digits: int = 30) -> dict:
    r"""``{"intervals": [[a, b], ...], "atom_at_zero": mu({0})}``, edges as mpmath reals to ``digits``.

    >>> s = support(2, 2, 1, 15); s["atom_at_zero"], [mpmath.nstr(e, 10) for e in s["intervals"][0]]
    (1/2, ['0.0', '11.09016994'])
    """
    intervals, atom = _bulk.support(delta, gamma, kappa)
    with mpmath.workdps(digits):
        edges = [[mpmath.mpf(str(sp.N(e, digits + 5))) for e in iv] for iv in intervals]
    return {"intervals": edges, "atom_at_zero": atom}


def _split(e) -> tuple[float, float]:
    hi = float(sp.N(e, 40))
    return hi, float(sp.N(e - sp.Rational(hi), 20))


@lru_cache(maxsize=None)
def _float_law(delta, gamma, kappa):
    L = _bulk.law(delta, gamma, kappa)
    D = sp.Poly(sum(c * _bulk.z**k for k, c in enumerate(L.discriminant.numerators)), _bulk.z)
    real, pairs = [], []
    for e in D.all_roots():
        if e.is_real:
            real.append(_split(e))
        elif sp.im(e) > 0:
            v = complex(sp.N(e, 20))
            pairs.append((v.real, v.imag))
    lc = float(sp.Rational(D.LC(), L.discriminant.denominator))
    edges = [(_split(a), _split(b)) for a, b in L.support]
    return L, lc, tuple(real), tuple(pairs), tuple(edges)


def _above(x, edge):
    hi, lo = edge
    return (x - hi) - lo


def bulk_density_float(delta, gamma, kappa, x) -> np.ndarray:
    r"""The density at a float64 array ``x``: error below :math:`10^{-13}\max(1, \rho)`,
    exactly 0 outside the support, ``inf`` at a hard edge.

    >>> bulk_density_float(1, 1, 1, np.array([0.5, 7.0, -1.0, 0.0]))  # 1/pi at 1/2
    array([0.31830989, 0.        , 0.        ,        inf])
    """
    L, lc, real, pairs, edges = _float_law(*_bulk.parameters(delta, gamma, kappa))
    x = np.asarray(x, dtype=float)
    if not np.all(np.isfinite(x)):
        raise ParameterError("x", "not a finite number")
    flat = x.ravel()
    inside = np.zeros(flat.shape, dtype=bool)
    for a, b in edges:
        inside |= (_above(flat, a) > 0) & (_above(flat, b) < 0)
    out = np.zeros(flat.shape)
    xi = flat[inside]
    D = np.full(xi.shape, lc)
    for e in real:
        D *= _above(xi, e)
    for re, im in pairs:
        D *= (xi - re) ** 2 + im**2
    coef = np.array([pc.floats(xi) for pc in L.coefficients])
    root = real_root(coef)
    dP = sum(pc.floats(xi) * root**k for k, pc in enumerate(L.derivative))
    out[inside] = np.sqrt(np.maximum(-D, 0.0)) / (2 * np.pi * np.abs(coef[3] * dP))
    if L.hard_edge:
        out[flat == 0] = np.inf
    return out.reshape(x.shape)
