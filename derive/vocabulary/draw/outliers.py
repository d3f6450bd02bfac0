r"""The outliers of ``S`` conditional on one draw's token matrix: exact up to :math:`O(1/d)` for that draw.

The draw's ``D`` enters through the transforms :math:`S_0` (over all directions) and :math:`S_1` (along the class signs
``s``) of :mod:`derive.vocabulary.draw.spectrum` (exact), or of :mod:`derive.vocabulary.draw.quadrature` (a large draw).

*The signal outlier* (:func:`conditional_outliers`): a root of :math:`S_1(t) = -1/\mu_2` in a gap of the conditional
bulk (:math:`x'(t) > 0`, :math:`x = t(1 - S_0)`), at :math:`\ell = x(t)` with squared overlap
:math:`x'(t)/(\mu_2 t S_1'(t))` (:func:`derive.vocabulary.limit.signal.plain_equations`). :math:`S_1' > 0` off its poles, so a gap
holds at most one root, there iff :math:`S_1(t_a) \le -1/\mu_2 \le S_1(t_b)` at its ends; no root lies below the
smallest atom (:math:`S_1 > 0` there).

*The raw S's mean outlier.* The raw ``D`` has an isolated top eigenvalue :math:`\tau_*` whose eigenvector is close to
:math:`\mathbf 1/\sqrt V` (the vocabulary's mean :math:`Z\mathbf 1/V`, strength :math:`W^2\delta`). A population atom
of mass :math:`1/V` standing apart is a generalized spike (Bai and Yao 2012): its eigenvalue of ``S`` is
:math:`x(\delta\tau_*)`, with ``x`` made of the population without that atom, where :math:`x'(\delta\tau_*) > 0`;
its eigenvector is asymptotically orthogonal to ``u``.

*Exactness.* Given ``D``, ``Z`` is still Gaussian: the deterministic equivalents of the resolvent's quadratic
forms hold to :math:`O(d^{-1/2})` for each draw with mean error :math:`O(1/d)` (the signal's equations:
:mod:`derive.vocabulary.limit.signal`). Monte Carlo minus this prediction, averaged over draws, is therefore
:math:`O(1/d)` (``tests/test_conditional.py``).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from derive.errors import ParameterError
from derive.vocabulary.draw.quadrature import quadrature_transforms
from derive.vocabulary.draw.spectrum import SpectralMeasures, functions, spectral_measures, x_at, x_gap
from derive.vocabulary.draw.tokenmatrix import TokenMatrix
from derive.vocabulary.limit.gaps import crossing

__all__ = ["EXACT_BELOW", "Outlier", "ConditionalOutliers", "edge_curvature", "edge_weight", "increasing_root",
           "conditional_outliers", "conditional_prediction"]

EXACT_BELOW = 500
"""``method='auto'`` of :func:`conditional_prediction` eigen-decomposes ``D`` (or its Gram matrix) when the smaller
of ``V, N`` is at most this, and uses the Lanczos quadrature above it (a diagonal ``D`` is always exact)."""


@dataclass(frozen=True)
class Outlier:
    """An outlier of the conditional law: its ``eigenvalue``, squared ``overlap`` with ``u``, its root ``t``, the gap
    ``(xa, xb)`` of the conditional bulk that holds it (``xb`` infinite above the bulk; ``None`` for the mean outlier),
    and the quadrature's standard errors of the eigenvalue and the overlap (0 when exact)."""

    eigenvalue: float
    overlap: float
    t: float
    gap: tuple | None
    eigenvalue_error: float = 0.0
    overlap_error: float = 0.0


@dataclass(frozen=True)
class ConditionalOutliers:
    """:func:`conditional_outliers`: ``signal`` (the root with the largest overlap, or ``None``), every root in a gap
    in ``roots`` (ascending), the raw ``S``'s ``mean`` outlier (or ``None``), the conditional bulk's ``right_edge``,
    the ``gaps`` searched (``[(xa, xb), ...]``), the ``method`` (``"exact"``, or ``"quadrature"``: gaps above the
    bulk of ``D`` only), ``above``, how many eigenvalues of ``S`` stand above the bulk's right edge besides the
    signal's (one per spike of ``D``), and ``edge_weight``, :func:`edge_weight` at that edge (at dimension ``d``
    where :func:`conditional_outliers` is given it)."""

    signal: Outlier | None
    roots: tuple
    mean: Outlier | None
    right_edge: float
    gaps: tuple
    method: str
    above: int = 0
    edge_weight: float = 1.0


def edge_curvature(transforms, t: float) -> float:
    r""":math:`C'(t) = -x''(t) = 2S_0'(t) + tS_0''(t)` (``transforms``: :class:`SpectralMeasures` or
    :class:`~derive.vocabulary.draw.quadrature.QuadratureTransforms`): at the bulk's right edge :math:`t_e` (where
    :math:`x' = 0`) the density of the eigenvalues below :math:`E = x(t_e)` is :math:`\frac{\sqrt{2/C'(t_e)}}{\pi t_e^2}\sqrt{E - x}`.

    >>> one = np.array([1.0])
    >>> m = SpectralMeasures(one, one, one, one, 1.0, 100)  # one atom at 1, delta = 1: S_0 = 1/(1 - t)
    >>> round(edge_curvature(m, 2.0), 12)  # 2/(1 - t)^2 + 2t/(1 - t)^3 at t = 2
    -2.0
    """
    _, ds0, dds0 = (float(v) for v in np.ravel(transforms.S0(t, 2)))
    return 2 * ds0 + t * dds0


def edge_weight(transforms, mu2, t_edge: float, d: int | None = None) -> float:
    r"""``d`` times the mean squared overlap with ``u`` of an eigenvector of ``S`` at the bulk's right edge, the
    bulk's edge at :math:`t_e` (in ``t``; a real root of :math:`x'(t) = 0`); with ``d``, of the top eigenvector of the
    bulk at dimension ``d``, at its classical place below the edge.

    *Derivation.* :math:`S = (X + \sqrt{\mu_2}\,ub^\top)(\cdot)^\top` with :math:`X = ZD^{1/2}/\sqrt V` left rotation
    invariant and :math:`b = D^{1/2}s/\sqrt V`. Its resolvent along ``u``, by Woodbury's identity on the rank-two
    perturbation of :math:`XX^\top` (vectors :math:`u` and :math:`Xb`, deterministic equivalents
    :math:`u^\top G u = m`, :math:`u^\top GXb = 0`), is :math:`m_u = m/(1 - \mu_2 z\,m\,\tilde g)` with
    :math:`\tilde g = b^\top(X^\top X - z)^{-1}b`; its pole is the outlier equation, :math:`S_1(t) = -1/\mu_2` in
    :math:`t = -1/m`, and matching the pole and its residue (the squared overlap :math:`x'/(\mu_2 tS_1')`) gives

    .. math:: m_u(z) = \frac{m(z)}{1 + \mu_2 S_1(t)}, \qquad m = -1/t,

    :math:`m_u = m` at :math:`\mu_2 = 0` (``u`` then a direction like any other). ``u``'s spectral density over the
    bulk's is :math:`\operatorname{Im} m_u/\operatorname{Im} m`, which at the edge, where ``t`` is real and
    :math:`g(t) = 1/(1 + \mu_2S_1(t))` is analytic, tends to

    .. math:: \frac{
ho_u}{
ho}\Big|_{\text{edge}} = g(t_e) - t_e\,g'(t_e)
              = \frac{1}{1 + \mu_2S_1} + \frac{\mu_2 t_e S_1'}{(1 + \mu_2S_1)^2},

    and an eigenvector at ``x`` carries on average :math:`
ho_u(x)/(d\,
ho(x))` of ``u`` (a share ``1/d`` of the
    density ratio). It grows without bound as :math:`1 + \mu_2 S_1(t_e) \to 0`, where the outlier leaves the edge.

    One atom (``D = I``, :math:`\delta = 1/2`: Marchenko-Pastur's law, its signal threshold :math:`\mu_2 = \sqrt\delta`):
    1 at :math:`\mu_2 = 0`, about 3.9 at :math:`\mu_2 = 0.3` (Monte Carlo at ``d = 400``, 300 draws: 3.6 +- 0.6):

    >>> m = SpectralMeasures(np.array([0.5]), np.array([1.0]), np.array([1.0]), np.array([0.0]), 0.5, 1000)
    >>> [round(conditional_outliers(m, mu2).edge_weight, 4) for mu2 in (0, 0.3)]
    [1.0, 3.9219]

    At ``d = 400`` the top eigenvector sits below the edge, where the ratio is smaller near the threshold (Monte Carlo
    at ``mu2 = 0.5``, 300 draws: 11.2 +- 1.5, against 17.5 at the edge):

    >>> round(conditional_outliers(m, 0.5, d=400).edge_weight, 1)
    10.3
    """
    if not (np.isfinite(t_edge) and t_edge > 0):  # no bulk (every eigenvalue of D a spike): no edge
        return float("nan")
    if d is None:
        s1, ds1 = (float(x) for x in transforms.S1(t_edge, 1))
        denominator = 1 + float(mu2) * s1
        return 1 / denominator + float(mu2) * t_edge * ds1 / denominator**2 if denominator else float("inf")
    # x(t) ~ E - |x''| (t - t_e)^2/2 at the edge: rho(x) ~ a sqrt(E - x), a = sqrt(2/|x''|)/(pi t_e^2), and the top
    # eigenvalue's classical place, d int_x^E rho = 1/2, is E - (3/(4 a d))^(2/3), at t = t_e + i eta
    curvature = abs(edge_curvature(transforms, t_edge))
    if not (np.isfinite(curvature) and curvature > 0):
        return float("nan")
    a = np.sqrt(2 / curvature) / (np.pi * t_edge**2)
    eta = np.sqrt(2 * (3 / (4 * a * d)) ** (2 / 3) / curvature)
    tv = np.array([t_edge + 1j * eta])
    g = 1 / (1 + float(mu2) * transforms.S1(tv))
    return float(((-g / tv).imag / (-1 / tv).imag)[0])


def increasing_root(f, a: float, b: float) -> float:
    """The root of an increasing ``f`` in ``[a, b]`` with ``f(a) <= 0 <= f(b)`` (``b`` may be infinite, ``f`` then
    tending to a positive limit), to four ulps by regula falsi with the Illinois halving
    (:func:`derive.vocabulary.limit.gaps.crossing`: about 12 evaluations of ``f``, a pass over the atoms each, instead
    of bisection's 55), ``f`` never evaluated at ``a`` or ``b`` (a pole of ``S_1`` may sit there).

    >>> [round(increasing_root(f, 1.0, b), 13) for f, b in ((lambda t: t * t - 2, 4.0), (lambda t: 1 - 4 / t, np.inf))]
    [1.4142135623731, 4.0]
    """
    if not np.isfinite(b):
        b = 2 * a
        while f(b) < 0:
            b *= 2
    return float(crossing(lambda tv: np.array([f(float(x)) for x in tv]) + 1, [a], [b], False)[0])


def conditional_outliers(transforms, mu2, mean: bool = False, d: int | None = None) -> ConditionalOutliers:
    r"""The outliers of :math:`S` given ``D`` (``transforms``: :class:`SpectralMeasures` or
    :class:`~derive.vocabulary.draw.quadrature.QuadratureTransforms`) at signal strength ``mu2``: every root of
    :math:`S_1(t) = -1/\mu_2` in a gap of the bulk (``transforms.bulk()``: the spikes of ``D`` are not part of it), at :math:`\ell = x(t)` of the bulk with
    squared overlap :math:`x'(t)/(\mu_2 tS_1'(t))` (:func:`derive.vocabulary.limit.signal.plain_equations`; with a quadrature from
    each probe's :math:`S_0`, whose spread gives their errors). A spike of ``D`` is a pole of :math:`S_1` inside a gap;
    folding its own direction into the determinant of :mod:`derive.vocabulary.limit.signal` gives the same equation, so
    a spike with weight along ``s`` has a root next to it (its own outlier, nearly orthogonal to ``u``) and can
    share the signal's. ``d``: the dimension of :func:`edge_weight`. ``signal`` is the root with the largest overlap; with ``mean`` (the raw ``S``), ``mean`` is
    the outlier of the raw ``D``'s mean atom: the root next to its pole (below it if the rest of :math:`S_1` is below
    :math:`-1/\mu_2` there, above it otherwise), or :math:`x(c_*)` if it has none (no weight along ``s``).

    One atom of ``D`` (all directions and ``s`` alike) is the population level: with :math:`\delta = 1/2`,
    :math:`\tau = 1`, :math:`\mu_2 = 3` the root of :math:`S_0 = S_1 = -1/\mu_2` is :math:`t = c(1 + \mu_2/\delta) = 7/2`
    and the outlier :math:`(1 + 1/\mu_2)\,t = 14/3`:

    >>> m = SpectralMeasures(np.array([0.5]), np.array([1.0]), np.array([1.0]), np.array([0.0]), 0.5, 1000)
    >>> o = conditional_outliers(m, 3); round(o.signal.eigenvalue, 12), round(o.signal.t, 12), o.method
    (4.666666666667, 3.5, 'exact')
    """
    try:
        mu2 = float(mu2)
    except (TypeError, ValueError):
        raise ParameterError("mu2", f"must be a real number, got {mu2!r}") from None
    if not np.isfinite(mu2) or mu2 < 0:
        raise ParameterError("mu2", f"must be a finite real >= 0, got {mu2!r}")
    f = functions()

    def located(*args):
        return f["location"](*args), f["overlap"](*args)

    bulk = transforms.bulk()
    where = bulk.gaps()
    poles = np.sort(transforms.poles())
    star = transforms.mean_pole() if mean else None
    roots, mean_root = [], None
    for ta, tb in where:
        inner = poles[(poles > ta) & (poles < tb)]
        for a, b in zip(np.concatenate([[ta], inner]), np.concatenate([inner, [tb]])):
            a_ = a if a == ta else a * (1 + 1e-14)
            b_ = b if b == tb else b * (1 - 1e-14)
            if mu2 == 0 or a_ >= b_:
                continue
            if transforms.S1(a_) + 1 / mu2 <= 0 and (not np.isfinite(b_) or transforms.S1(b_) + 1 / mu2 >= 0):
                tr = increasing_root(lambda tv: float(transforms.S1(tv)) + 1 / mu2, a_, b_)
                ds1 = float(transforms.S1(tr, 1)[1])
                each = np.array([located(tr, mu2, s0, ds0, ds1) for s0, ds0 in bulk.S0_probes(tr)])
                se = each.std(axis=0, ddof=1) / np.sqrt(len(each)) if len(each) > 1 else np.zeros(2)
                ell, ov = each.mean(axis=0)
                root = Outlier(float(ell), float(ov), tr, x_gap(bulk, ta, tb), float(se[0]), float(se[1]))
                roots.append(root)
    if star is not None:
        # the mean atom's own root is next to its pole: S_1 increases from the pole's -inf to its +inf, so the root is
        # just below the pole when the rest of S_1 is below -1/mu2 there, just above it otherwise; without weight
        # along s it is x(c_*)
        below = mu2 > 0 and transforms.S1_without_mean(star) < -1 / mu2
        side = [r for r in roots if (r.t < star if below else r.t > star)]
        if side:
            mean_root = max(side, key=lambda r: r.t) if below else min(side, key=lambda r: r.t)
        elif bulk.C(star) < 1:
            each = np.array([star * (1 - s0) for s0, _ in bulk.S0_probes(star)])
            mean_root = Outlier(float(each.mean()), 0.0, star, None,
                                float(each.std(ddof=1) / np.sqrt(len(each))) if len(each) > 1 else 0.0)
    candidates = [r for r in roots if r is not mean_root]
    best = max(candidates, key=lambda r: r.overlap) if candidates else None
    return ConditionalOutliers(best, tuple(roots), mean_root, x_at(bulk, where[-1][0]),
                               tuple(x_gap(bulk, ta, tb) for ta, tb in where), transforms.method,
                               len(poles), edge_weight(transforms, mu2, where[-1][0], d))


def conditional_prediction(A, s, d: int, mu2, centered: bool = False, method: str = "auto") -> ConditionalOutliers:
    r"""The outliers of one draw's ``S`` (``centered``: :math:`S_c`) given its token matrix ``A``, class signs ``s`` and
    dimension ``d``, at signal strength ``mu2``: :func:`conditional_outliers` of :func:`spectral_measures`
    (``method='exact'``) or :func:`quadrature_transforms` (``'quadrature'``); ``'auto'`` is exact for a diagonal
    ``D`` and when :math:`\min(V, N) \le` :data:`EXACT_BELOW`, the quadrature otherwise.

    >>> A = TokenMatrix.entries(4, 8, np.arange(8) % 4, np.arange(8), np.ones(8))   # each token twice
    >>> o = conditional_prediction(A, [1, 1, -1, -1], 2, 3); round(o.signal.eigenvalue, 12)   # D = I, delta = 1/2
    4.666666666667
    """
    if method not in ("auto", "exact", "quadrature"):
        raise ParameterError("method", f"must be auto, exact or quadrature, got {method!r}")
    A = TokenMatrix.of(A)
    if method == "auto":
        method = "exact" if min(A.shape) <= EXACT_BELOW or A.diagonal_gram() else "quadrature"
    measures = (spectral_measures if method == "exact" else quadrature_transforms)(A, s, d, centered)
    return conditional_outliers(measures, mu2, mean=not centered, d=d)
