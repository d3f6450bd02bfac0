r"""The model's own limiting spectral law (finite vocabulary, token reuse), and when its Gaussian equivalent will do.

The noise part of ``S`` is :math:`\frac1V Z D Z^\top` with :math:`D = \frac VN AA^\top` sparse, so the bulk is the
generalized Marchenko–Pastur law with population :math:`\nu_D` (notes/finite_vocabulary.md):

* one nonzero weight (``T = 1`` among others): ``D`` is diagonal, :math:`\nu_D` the law of :math:`w_t^2 n/\lambda`,
  :math:`n \sim \mathrm{Poisson}(\lambda)`, :math:`\lambda = N/V = \delta/\gamma`, and the law is exact to any
  precision (:mod:`derive.vocabulary.limit.silverstein`);
* more nonzero weights: the density from the cavity equations of ``D`` (:mod:`derive.vocabulary.limit.cavity`), an estimate with an
  error bar (about three digits), deterministic (the solver seeds itself from its input);
* the atom at zero exactly for every ``T`` and weights (:mod:`derive.vocabulary.limit.tokengraph`).

The class signs do not enter the bulk (:mod:`derive.vocabulary.limit.tokengraph`); the weights do, beyond :math:`\kappa`.
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

import mpmath
import sympy as sp

from derive.vocabulary.limit import tokengraph
from derive.errors import ParameterError
from derive.numbers import Displayed, Reals, check_range, parse_rational, real_vector
from derive.vocabulary.limit.populations import PoissonPopulation
from derive.vocabulary.limit.silverstein import GeneralizedMP

__all__ = ["VocabularyLaw", "Distribution", "vocabulary_law"]


@dataclass(frozen=True)
class VocabularyLaw(Displayed):
    """The model's own limiting spectral law at ``delta, gamma`` and pooling weights (normalized to sum 1)."""

    _DISPLAYED = ("law", "delta", "gamma", "weights", "kappa", "reuse", "exact", "atom_at_zero")

    delta: sp.Rational
    gamma: sp.Rational
    weights: tuple

    @property
    def law(self) -> str:
        return "finite-vocabulary"

    @property
    def T(self) -> int:
        return len(self.weights)

    @property
    def kappa(self) -> sp.Expr:
        """:math:`\\kappa = \\|w\\|^2`."""
        return sp.simplify(sum(w**2 for w in self.weights))

    @property
    def reuse(self) -> sp.Rational:
        """The mean number of uses of a token, :math:`NT/V`."""
        return tokengraph.reuse(self.delta, self.gamma, self.T)

    @property
    def exact(self) -> bool:
        """Whether the density is exact to any precision (one nonzero weight: ``D`` diagonal)."""
        return tokengraph.nonzero_weights(self.weights) == 1

    @property
    def atom_at_zero(self) -> mpmath.mpf:
        """The mass at zero at the current precision (:func:`derive.vocabulary.limit.tokengraph.atom_at_zero`)."""
        return tokengraph.atom_at_zero(self.delta, self.gamma, self.weights)

    def check_work(self, reach=0, name: str = "x") -> None:
        """Refuse, before it starts, an answer of the exact law whose series would take longer than
        :data:`derive.resources.MAX_SERIES_SECONDS` at the current precision (and its guard digits): a large reuse, many
        digits, or an answer out at the atom ``reach`` (named ``name``). Nothing to check for more nonzero weights."""
        if self.exact:
            from derive.resources import check_series_work

            check_series_work(self.delta / self.gamma, mpmath.mp.dps + 10, float(reach), name)

    def diagonal(self) -> GeneralizedMP:
        """The exact law for one nonzero weight ``w``: population :math:`w^2 n/\\lambda`."""
        if not self.exact:
            raise ParameterError("weights", "the exact law needs one nonzero weight (D diagonal)")
        w2 = next(w for w in self.weights if w != 0) ** 2
        return _diagonal(self.delta, self.delta / self.gamma, sp.Rational(w2))

    @property
    def support(self) -> list:
        """The support of the absolutely continuous part at the current precision, as intervals ``(a, b)`` with
        ``b = inf`` for the last (:meth:`support_summary`)."""
        return self.support_summary()[0]

    def support_summary(self) -> tuple[list, int | None]:
        r"""The support of the absolutely continuous part at the current precision, as intervals ``(a, b)`` with
        ``b = inf`` for the last, and the index ``K`` past which it is summarized: the clusters of the tokens
        seen more than ``K`` times (one interval each, total mass below :math:`10^{-\text{dps}}`) lie in the last
        interval. For more than one nonzero weight the support is not derived: ``[(0, inf)]`` holds it
        (``K = None``)."""
        if not self.exact:
            return [(mpmath.mpf(0), mpmath.inf)], None
        self.check_work()
        L = self.diagonal()
        gaps = [g for g in (L.gap(k) for k in range(1, L.negligible_index() + 1)) if g is not None]
        starts = [L.left_edge()] + [g.xb for g in gaps]
        ends = [g.xa for g in gaps] + [mpmath.inf]
        return list(zip(starts, ends)), gaps[-1].k if gaps else 0

    def density(self, x) -> mpmath.mpf:
        """The density at ``x`` (:meth:`densities`, without its error)."""
        return self.densities([x])[0][0]

    def densities(self, xs) -> list:
        """The density at each point of ``xs`` (a sequence of finite reals: text such as ``"0.5"`` is one point
        only inside a list) and its error: exact at the current precision (error ``None``) for one nonzero weight, else
        the cavity estimate and its error bar (:func:`derive.vocabulary.limit.cavity.densities`)."""
        from derive.resources import check_points

        # a NaN had walked the gaps for ever (no cluster lies beyond it), and "0.5" was read character by character
        xs = [_text_point(x) for x in xs] if isinstance(xs, (list, tuple)) else xs
        points = real_vector(xs, "x")
        check_points(len(points), "x")
        if self.exact:
            L = self.diagonal()
            lam, w2 = self.delta / self.gamma, L.population.kappa
            self.check_work(max(0, max(points)) * lam / w2, "x")
            with mpmath.workdps(mpmath.mp.dps + 10):
                at = [mpmath.mpf(p.p) / p.q if p.is_Rational else mpmath.mpf(sp.N(p, mpmath.mp.dps)) for p in points]
            return [(L.density(x), None) for x in at]
        from derive.vocabulary.limit import cavity

        points = [float(x) for x in points]
        found = cavity.densities(points, [float(w) for w in self.weights], float(self.delta), float(self.gamma))
        return [(mpmath.mpf(e.density), mpmath.mpf(e.error)) for e in found]


    def distribution(self, nodes: int = 96, upper=None, settings=None) -> "Distribution":
        r"""The distribution function, tabulated once in float64. One nonzero weight: the exact one
        (:meth:`derive.vocabulary.limit.floatview.FloatView.cdf`, error 0). More: the atom plus the cavity density
        (:func:`derive.vocabulary.limit.cavity.densities` with ``settings``) integrated by the trapezoid rule on ``nodes`` points
        :math:`x_j = u_j^2 x_{\max}` in :math:`u` (:math:`2ux_{\max}\rho` is bounded at a hard edge) and on 18
        more below the first, logarithmic down to :math:`10^{-9}` of it, in :math:`\log x` (weights small at some
        positions make ``D`` nearly singular: a mass of order 0.1 can lie below :math:`10^{-3}`);
        :math:`x_{\max}` = ``upper`` or twice the right edge of the Gaussian equivalent. The a.c. part is scaled
        to its mass :math:`1 - \mu\{0\}` (the tail beyond :math:`x_{\max}` and the quadrature error spread over the
        range); ``density_error`` is the largest error of the density over the largest density, ``cdf_error`` a
        bound of the error of the distribution function that the density's error bars carry: their integral by the
        same rule, relative to the a.c. mass, doubled for the normalization, times :math:`1 - \mu\{0\}`."""
        import numpy as np

        if self.exact:
            return Distribution(None, None, self.diagonal(), 0.0, 0.0)
        from derive.gaussian import bulk
        from derive.vocabulary.limit import cavity

        with mpmath.workdps(15):
            atom = float(self.atom_at_zero)
            if upper is None:
                upper = 2 * float(bulk.law(self.delta, self.gamma, self.kappa).edges()[-1][1])
        u = np.arange(1, nodes + 1) / nodes
        low = upper * u[0] ** 2 * np.logspace(-9, 0, 19)
        x = np.concatenate([low[:-1], upper * u**2])
        found = cavity.densities(x, [float(w) for w in self.weights], float(self.delta), float(self.gamma),
                                 settings or cavity.DEFAULT)
        rho = np.array([e.density for e in found])
        F = _integrated(x, rho, len(low), u, upper)
        F_err = _integrated(x, np.array([e.error for e in found]), len(low), u, upper)
        table = (np.concatenate([[0.0], x]), atom + (1 - atom) * F / F[-1])
        return Distribution(table, atom, None, max(e.error for e in found) / rho.max(),
                            2 * (1 - atom) * float(F_err[-1] / F[-1]))


def _integrated(x, f, n, u, upper):
    r"""The integral of ``f`` from 0 to each node of :meth:`VocabularyLaw.distribution`: :math:`\int xf\,d\log x`
    on the ``n`` logarithmic nodes (the first one's share taken as :math:`x_0 f_0`), then :math:`\int 2ux_{\max}f\,du`;
    a leading 0 at ``x = 0``."""
    import numpy as np

    g = x[:n] * f[:n]
    low = g[0] + np.concatenate([[0.0], np.cumsum((g[1:] + g[:-1]) / 2 * np.diff(np.log(x[:n])))])
    gu = 2 * upper * u * f[n - 1:]
    return np.concatenate([[0.0], low, low[-1] + np.cumsum((gu[1:] + gu[:-1]) / 2 * np.diff(u))])


@dataclass(frozen=True)
class Distribution:
    """A tabulated distribution function with an atom at zero (or the exact one of a diagonal ``D``); call it on a
    float64 array."""

    table: tuple | None
    atom: float | None
    exact: GeneralizedMP | None
    density_error: float
    cdf_error: float

    def __call__(self, xs):
        import numpy as np

        xs = np.asarray(xs, dtype=float)
        if self.exact is not None:
            from derive.vocabulary.limit.floatview import float_view

            return float_view(self.exact).cdf(xs)
        x, F = self.table
        return np.where(xs >= 0, np.interp(xs, x, F, right=1.0), 0.0)


def _text_point(x):
    """A point given as text (``"0.5"``, ``"1/3"``) read exactly; anything else as it is (:func:`real_vector` reads it)."""
    return parse_rational(x, "x") if isinstance(x, str) else x


@lru_cache(maxsize=None)
def _diagonal(delta, lam, w2) -> GeneralizedMP:
    return GeneralizedMP(delta, PoissonPopulation(lam, w2))


def vocabulary_law(delta, gamma, weights) -> VocabularyLaw:
    r"""The model's own law at exact ``delta, gamma > 0`` and ``weights`` (any reals, not all zero; normalized here
    to sum 1 as the pooling schemes are, the law depending only on their ratios through :math:`w/\sum w`; a pooling's
    :class:`~derive.numbers.Reals` are taken as their scheme scaled them).

    >>> L = vocabulary_law("1", "1", [1])
    >>> with mpmath.workdps(15):
    ...     print(L.reuse, L.kappa, mpmath.nstr(L.atom_at_zero, 10), mpmath.nstr(L.density("1/2"), 10))
    1 1 0.3678794412 0.3041942063
    """
    d, g = (check_range(parse_rational(v, n), n, low=0, low_open=True) for v, n in ((delta, "delta"), (gamma, "gamma")))
    from derive.model.attention import normalized

    # a pooling's weights (Reals) come scaled by their scheme already: to sum 1, or to unit norm where they sum to zero
    w = real_vector(weights, "weights") if isinstance(weights, Reals) else normalized(weights, "weights")
    tokengraph.nonzero_weights(w)
    return VocabularyLaw(sp.Rational(d), sp.Rational(g), tuple(w))
