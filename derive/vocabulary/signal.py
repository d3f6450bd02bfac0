r"""The signal outlier of the model's own ``S`` for any weights: its equations, derived once from the
Benaych-Georges–Nadakuditi determinant, in two transforms of the token matrix.

*Setting.* With :math:`E = Z + \sqrt{\mu_2}\,u s^\top` (``Z`` the ``d x V`` Gaussian noise of the table, ``s`` the class
signs) and :math:`D = \frac VN AA^\top` (``A`` the ``V x N`` matrix of pooled one-hot vectors; :math:`A(I - 11^\top/N)A^\top`
for the centered :math:`S_c`),

.. math:: S = \frac1V E D E^\top = B + U C U^\top,\qquad B = \frac1V ZDZ^\top,\quad
          U = \bigl[\sqrt{\mu_2}\,u,\ \tfrac1V ZDs\bigr],\quad C = \begin{pmatrix} s^\top Ds/V & 1\\ 1 & 0\end{pmatrix}.

Given ``D``, ``Z`` is still Gaussian, so an eigenvalue :math:`\ell` of ``S`` off the spectrum of ``B`` solves
:math:`\det(C^{-1} + U^\top G(\ell)U) = 0`, :math:`G = (B - \ell)^{-1}`, and its deterministic equivalents (exact up to
:math:`O(1/d)` for each ``D``) are: :math:`u^\top Gu \to m(\ell)`, the Stieltjes transform of the bulk (``u`` is
independent of ``Z``); :math:`u^\top G ZDs/V \to 0` (odd in ``Z``); and, by the co-resolvent of
:math:`D^{1/2}Z^\top ZD^{1/2}/V`, :math:`(ZDs/V)^\top G (ZDs/V) \to k(0) - k(m)` with

.. math:: k(m) = \frac1V s^\top D(I + \delta m D)^{-1} s .

*The transforms.* In the variable :math:`t = -1/m` of :mod:`derive.vocabulary.silverstein` and :math:`\zeta = t/\delta`,
both the bulk and the signal are read from the resolvent of ``D``:

.. math:: S_0(t) = \frac1\delta\Bigl(1 + \zeta\,\frac1V\operatorname{tr}(D-\zeta)^{-1}\Bigr),\qquad
          S_1(t) = \frac1\delta\Bigl(1 + \zeta\,\frac1V s^\top(D-\zeta)^{-1}s\Bigr),

so that :math:`z = x(t) = t(1 - S_0(t))` is Silverstein's equation and :math:`k = -t\,S_1(t)`
(:func:`k_of_t`). ``S_0`` is the spectral measure of ``D`` averaged over all directions, ``S_1`` along the class
signs. Where ``D`` is diagonal and independent of the signs (one nonzero weight) the two are equal.

*The result* (:func:`outlier_equations`): the outlier is at a root of :math:`S_1(t) = -1/\mu_2` where
:math:`x'(t) > 0`, at :math:`\ell = x(t)`, and the squared overlap of its eigenvector with ``u`` is
:math:`x'(t)/(\mu_2\,t\,S_1'(t))`.
"""
from __future__ import annotations

from functools import lru_cache

import sympy as sp

from derive.symbols import Formula, delta, m, mu2, named
from derive.vocabulary.silverstein import S0, t, x_of_t

__all__ = ["S1", "zeta", "determinant", "k_of_t", "outlier_equations", "plain_equations", "numeric", "formulas"]

S1 = sp.Function("S_1")(t)
"""The transform of ``D`` along the class signs, :math:`S_1(t)`: an unknown function until a token matrix is given."""
zeta = named("zeta", r"\zeta")
r"""The argument :math:`\zeta = t/\delta` of the resolvent of ``D``."""
_k, _k0 = named("k", "k"), named("k_0", "k_0")
_g, _h = named("g_D", "g_D"), named("h_D", "h_D")
_tau = sp.Symbol("tau_D", positive=True)


@lru_cache(maxsize=None)
def determinant() -> sp.Expr:
    r""":math:`\det(C^{-1} + U^\top GU)` with the deterministic equivalents of ``U^T G U``, in ``m`` and
    :math:`k = k(m)` (the value ``k(0)`` of ``C`` cancels).

    >>> determinant()
    -k*m*mu2 - 1
    """
    C = sp.Matrix([[_k0, 1], [1, 0]])
    UGU = sp.diag(mu2 * m, _k0 - _k)
    return sp.expand((C.inv() + UGU).det())


@lru_cache(maxsize=None)
def k_of_t() -> sp.Expr:
    r""":math:`k` in the variable ``t``: one eigenvalue :math:`\tau` of ``D`` contributes
    :math:`\tau/(1 + \delta m\tau)` to :math:`k(m)` and :math:`\frac1\delta(1 + \zeta/(\tau - \zeta))` to :math:`S_1`
    (with its weight along ``s``); the first is :math:`-t` times the second, so :math:`k = -t S_1(t)`.

    >>> k_of_t()
    -t*S_1(t)
    """
    to_k = _tau / (1 + delta * m * _tau)
    to_S1 = (1 + zeta / (_tau - zeta)) / delta
    ratio = sp.simplify((to_k / to_S1).subs(zeta, t / delta).subs(m, -1 / t))
    assert ratio == -t
    return ratio * S1


@lru_cache(maxsize=None)
def outlier_equations() -> dict:
    r"""The outlier's equation, location and squared overlap in ``t``.

    The eigenvector is :math:`x = -GUy` with ``y`` in the null space of
    :math:`K(\ell) = C^{-1} + U^\top G(\ell) U`; :math:`\|x\|^2 = y^\top K'(\ell) y` (:math:`dG/d\ell = G^2`) and
    :math:`u^\top x = -\sqrt{\mu_2}\,m\,y_1`; :math:`d/d\ell = (1/x'(t))\,d/dt`.

    >>> e = outlier_equations(); e["equation"], e["overlap"]
    (Eq(S_1(t), -1/mu2), (-t*Derivative(S_0(t), t) - S_0(t) + 1)/(mu2*t*Derivative(S_1(t), t)))
    """
    in_t = {m: -1 / t, _k: k_of_t()}
    det = sp.expand(determinant().subs(in_t))
    (root,) = sp.solve(det, S1)
    K = sp.Matrix([[mu2 * m, 1], [1, -_k]]).subs(in_t)
    assert sp.simplify(K.det() - det) == 0
    on_root = {S1: root}
    (y,) = K.subs(on_root).nullspace()
    x = x_of_t()
    dx = sp.diff(x, t)
    # S_1' is kept as it is while S_1 takes its value at the root
    slope = sp.Dummy("slope")
    dK = K.diff(t).subs(sp.Derivative(S1, t), slope).subs(on_root).subs(slope, sp.Derivative(S1, t))
    norm2 = (y.T * dK * y)[0] / dx
    along_u = mu2 * (m * y[0]).subs(m, -1 / t) ** 2
    overlap = sp.factor_terms(sp.simplify(along_u / norm2))
    return {"equation": sp.Eq(S1, root), "location": x, "overlap": overlap, "edge_condition": sp.Eq(dx, 0)}


@lru_cache(maxsize=None)
def plain_equations() -> tuple:
    r"""``(arguments, [location, overlap])`` of :func:`outlier_equations` with :math:`S_0, S_0', S_1'` as the plain
    symbols ``s0, ds0, ds1``: arguments :math:`(t, \mu_2, S_0, S_0', S_1')`.

    >>> plain_equations()[1]
    [t*(1 - s0), (-ds0*t - s0 + 1)/(ds1*mu2*t)]
    """
    s0, ds0, ds1 = sp.symbols("s0 ds0 ds1")
    e = outlier_equations()
    plain = {sp.Derivative(S0, t): ds0, sp.Derivative(S1, t): ds1}
    return (t, mu2, s0, ds0, ds1), [e[k].subs(plain).subs(S0, s0) for k in ("location", "overlap")]


@lru_cache(maxsize=None)
def numeric(modules: str = "numpy"):
    r"""The location and the squared overlap as one function of
    :math:`(t, \mu_2, S_0, S_0', S_1')` (``modules``: ``"numpy"`` or ``"mpmath"``), made from
    :func:`plain_equations`.

    >>> f = numeric(); f(2.0, 1.0, 0.25, 0.5, 0.5)
    [1.5, -0.25]
    """
    return sp.lambdify(*plain_equations(), modules=modules)


def formulas() -> list[Formula]:
    e = outlier_equations()
    src = "derive/vocabulary/signal.py:outlier_equations"
    ell = named("ell", r"\ell")
    cos2 = named("cos2_u", r"|\hat u^\top u|^2")
    assumptions = (r"the model's own $S$ (finite vocabulary, any weights), given the token matrix $D$: "
                   r"$S_0, S_1$ from the resolvent of $D$ (all directions; along the class signs); "
                   r"$t$ a root in a gap of the bulk ($x'(t) > 0$)")
    return [
        Formula("the co-resolvent term along the class signs", k_of_t(), assumptions, src, lhs=named("k_t", "k"), claim="C2-C4"),
        Formula("the model's signal outlier, its equation", e["equation"], assumptions, src, claim="C2-C4"),
        Formula("the model's signal outlier, its location", e["location"], assumptions, src, lhs=ell, claim="C2-C4"),
        Formula("the model's signal outlier, its squared overlap", e["overlap"], assumptions, src, lhs=cos2, claim="C2-C4"),
    ]
