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

*The transforms.* In the variable :math:`t = -1/m` of :mod:`derive.vocabulary.limit.silverstein` and
:math:`\zeta = t/\delta`, both the bulk and the signal are read from the resolvent of ``D``:

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

from dataclasses import dataclass
from fractions import Fraction
from functools import lru_cache

import mpmath
import sympy as sp

from derive.symbols import Formula, delta, m, mu2, named
from derive.vocabulary.limit.crossings import beyond, crossing
from derive.vocabulary.limit.silverstein import _GUARD, S0, t, x_of_t

__all__ = ["S1", "zeta", "determinant", "k_of_t", "outlier_equations", "one_weight_equations", "plain_equations",
           "numeric", "Spike", "signal_outlier", "signal_windows", "formulas"]

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
def one_weight_equations() -> dict:
    r""":func:`outlier_equations` where ``D`` is diagonal and independent of the signs (one nonzero weight, or one
    draw's token counts at ``T = 1``): :math:`s^\top(D-\zeta)^{-1}s/V = \operatorname{tr}(D-\zeta)^{-1}/V`, so
    :math:`S_1 = S_0`.

    >>> e = one_weight_equations(); e["equation"], e["location"]
    (Eq(S_0(t), -1/mu2), t*(1 + 1/mu2))
    """
    e = outlier_equations()
    same = {S1: S0}
    location = sp.factor_terms(sp.expand(e["location"].subs(S0, e["equation"].rhs)))
    return {"equation": e["equation"].subs(same), "location": location, "overlap": e["overlap"].subs(same),
            "edge_condition": e["edge_condition"]}


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


@dataclass(frozen=True)
class Spike:
    """The signal outlier of an exact law: whether it exists, its location, squared overlap with ``u``, the index ``k``
    of the gap it sits in and the mass of the law above it (``d`` times that is the expected number of bulk
    eigenvalues above it at dimension ``d``)."""

    outlier: bool
    eigenvalue: mpmath.mpf | None
    overlap: mpmath.mpf
    gap: int | None
    mass_above: mpmath.mpf | None


def _delta(law) -> mpmath.mpf:
    return mpmath.mpf(law.delta.p) / law.delta.q


def signal_outlier(law, mu2) -> Spike:
    r"""The signal outlier of strength ``mu2`` on the exact law ``law`` (a
    :class:`~derive.vocabulary.limit.silverstein.GeneralizedMP`: one nonzero weight, or one draw's counts), by
    :func:`one_weight_equations`: the root of
    :math:`S_0(t) = -1/\mu_2` in an interval :math:`(c_k, c_{k+1})` is an outlier where it lies in that
    interval's gap (:math:`x' > 0`); the largest one is returned.

    The intervals are searched up to the first ``k`` past the mode with :math:`c_k \ge 8\mu_2\kappa`,
    :math:`(\lambda/\delta) P(n \ge J) \le 1/(4\mu_2)` (``J`` the last atom below :math:`c_k/2`) and
    :math:`p_k < \delta/(4\mu_2(\mu_2+1))`. Beyond it no root is an outlier: in a gap of such an interval
    :math:`-S_0(t) \le 1/(2\mu_2) + p_k c_k/(\delta(t - c_k))`, so a root has :math:`t - c_k \le 2\mu_2 p_k c_k/\delta`,
    where :math:`C = 1 - x' \ge -1/\mu_2 + \delta/(4\mu_2^2 p_k) > 1`.
    """
    mu2 = mpmath.mpf(mu2.numerator) / mu2.denominator if isinstance(mu2, Fraction) else mpmath.mpmathify(mu2)
    if mu2 <= 0:
        return Spike(False, None, mpmath.mpf(0), None, None)
    with mpmath.workdps(mpmath.mp.dps + _GUARD):
        target = -1 / mu2

        def S(tv):
            return law.sums(tv, (0,))[0][0]

        best = None
        k, last = 1, law.population.last()
        while (k <= last) if last is not None else not _beyond_outliers(law, k, mu2):
            if last is None and _root_left_of_gap(law, k, target):
                k += 1
                continue
            g = law.gap(k)
            tb = None if g is None else g.tb if mpmath.isfinite(g.tb) else beyond(S, g.ta, target)
            # S_0 increases on (c_k, c_{k+1}): its root lies in the gap iff S_0(ta) <= -1/mu2 <= S_0(tb)
            if g is not None and S(g.ta) <= target <= S(tb):
                ts = crossing(S, g.ta, tb, target)
                (s0, _), (s1, _) = law.sums(ts, (0, 1))
                best = (k, *numeric("mpmath")(ts, mu2, s0, s1, s1))
            k += 1
        if best is None:
            return Spike(False, None, mpmath.mpf(0), None, None)
        k, ell, ov = best
        above = (1 - law.population.cdf(k)) / _delta(law)
    return Spike(True, +ell, +ov, k, +above)

def signal_windows(law) -> list:
    r"""The values of :math:`\mu_2` for which the signal has an outlier in each gap ``k`` (``1 <= k <=``
    :meth:`negligible_index`): :math:`S_0` increases on the gap's interval, so the root of
    :math:`S_0 = -1/\mu_2` lies in the gap :math:`(t_a, t_b)` iff
    :math:`-1/S_0(t_a) < \mu_2 < -1/S_0(t_b)` (``inf`` when :math:`S_0(t_b) \ge 0`). Sorted by their lower
    ends; windows of different gaps may overlap (two outliers) or leave holes (the outlier inside a cluster)."""
    out = []
    with mpmath.workdps(mpmath.mp.dps + _GUARD):
        for k in range(1, law.negligible_index() + 1):
            g = law.gap(k)
            if g is None:
                continue
            sa, sb = (law.sums(tv, (0,))[0][0] for tv in (g.ta, g.tb))
            if sa < 0:
                out.append((-1 / sa, -1 / sb if sb < 0 else mpmath.inf))
    return sorted((+a, +b) for a, b in out)

def _root_left_of_gap(law, k: int, target) -> bool:
    r"""A cheap sufficient test that the root of :math:`S_0 = ` ``target`` in :math:`(c_k, c_{k+1})` lies left
    of the gap: a point ``t'`` left of the minimum of ``C`` (``C' < 0``) with ``C(t') > 1`` (so left of the gap)
    where :math:`S_0(t') >` ``target`` (so right of the root, ``S_0`` increasing). Far out, the root sits within
    about :math:`p_k` of the atom and the gap about :math:`\sqrt{p_k}` from it."""
    extra = max(0, int(-mpmath.log10(law.population.mass(k)))) + 5
    with mpmath.workdps(mpmath.mp.dps + extra):
        lo, hi = law.atom(k), law.atom(k + 1)
        tp = lo + (hi - lo) * mpmath.sqrt(law.population.mass(k)) / 16
        return bool(law.dC(tp) < 0 and law.C(tp) > 1 and law.sums(tp, (0,))[0][0] > target)

def _beyond_outliers(law, k: int, mu2) -> bool:
    """Whether the conditions of :func:`signal_outlier` hold at ``k`` (and hence at every larger ``k``)."""
    P = law.population
    if k <= P.mode_range():
        return False
    ck = law.atom(k)
    J = max(j for j in range(0, k + 1) if law.atom(j) <= ck / 2)
    lam = mpmath.mpf(P.lam.p) / P.lam.q
    kap = mpmath.mpf(P.kappa.p) / P.kappa.q
    return bool(ck >= 8 * mu2 * kap and lam / _delta(law) * P.tail(J - 1) <= 1 / (4 * mu2)
                and P.mass(k) < _delta(law) / (4 * mu2 * (mu2 + 1)))


def formulas() -> list[Formula]:
    e = outlier_equations()
    src = "derive/vocabulary/limit/signal.py:outlier_equations"
    ell = named("ell", r"\ell")
    cos2 = named("cos2_u", r"|\hat u^\top u|^2")
    assumptions = (r"the model's own $S$ (finite vocabulary, any weights), given the token matrix $D$: "
                   r"$S_0, S_1$ from the resolvent of $D$ (all directions; along the class signs); "
                   r"$t$ a root in a gap of the bulk ($x'(t) > 0$)")
    one = one_weight_equations()
    single = r"; one nonzero weight: $D$ diagonal and independent of the signs, so $S_1 = S_0$"
    one_src = "derive/vocabulary/limit/signal.py:one_weight_equations"
    return [
        Formula("the co-resolvent term along the class signs", k_of_t(), assumptions,
                "derive/vocabulary/limit/signal.py:k_of_t", lhs=named("k_t", "k"), claim="C2-C4"),
        Formula("the model's signal outlier, its equation", e["equation"], assumptions, src, claim="C2-C4"),
        Formula("the model's signal outlier, its location", e["location"], assumptions, src, lhs=ell, claim="C2-C4"),
        Formula("the model's signal outlier, its squared overlap", e["overlap"], assumptions, src, lhs=cos2, claim="C2-C4"),
        Formula("signal outlier equation, one nonzero weight", one["equation"], assumptions + single, one_src,
                claim="C2-C4"),
        Formula("signal outlier location, one nonzero weight", one["location"], assumptions + single, one_src,
                lhs=named("ell_1", r"\ell_1"), claim="C2-C4"),
    ]
