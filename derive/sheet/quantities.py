r"""The derived quantities a user may check a closed form against (``verify formula``).

Each :class:`Quantity` is a function of the model's scalars (``delta, gamma, alpha, kappa, mu2, W`` and
``x, T, t, tau, L`` where they apply), known three ways:

- its *definition*, the SymPy object the derivation produced: an explicit expression, or, where the
  quantity is a root of a polynomial (a threshold, an edge), that polynomial in the placeholder :data:`y`
  and which root it is;
- its *value* at a point, from the numeric API (:mod:`derive.gaussian.outliers`, :func:`derive.gaussian.bulk.law`,
  :func:`derive.model.pooling.pooling`), at the current mpmath precision;
- its *domain*: the ranges of its parameters and, for the last one, bounds that depend on the others
  (``mu2`` above the threshold where the outlier exists, ``x`` inside the support, ``t <= T``).

:func:`prove_equal` tries to prove a user's expression equal to the definition; it returns a proof text
or ``None`` (``None`` means "not proved", never "different").
"""
from __future__ import annotations

from dataclasses import dataclass, field
from functools import lru_cache
from typing import Callable

import mpmath
import sympy as sp

from derive.model import expectations as ex
from derive.gaussian import spikes
from derive.sheet.meanings import QUANTITIES, QUANTITY_MEANINGS
from derive.errors import ParameterError
from derive.symbols import L, T, W, alpha, delta, gamma, kappa, mu2, t, tau, theta, x

__all__ = ["y", "Bound", "Quantity", "QUANTITIES", "SHEET_NAMES", "quantity", "prove_equal"]

y = sp.Symbol("y", real=True)
"""The placeholder for the quantity itself in an implicit definition :math:`P(y) = 0`."""

_POSITIVE = (sp.Rational(1, 1000), sp.Integer(4))
_NONNEG = (sp.Integer(0), sp.Integer(4))


@dataclass(frozen=True)
class Bound:
    """The range of one parameter: ``[low, high]`` (open at an end where ``low_open``/``high_open``),
    integer-valued if ``integer``. ``depends`` computes ``(low, high)`` from the values drawn before it
    (by symbol) and the options (by name); ``None`` for a static range."""

    low: sp.Expr
    high: sp.Expr
    low_open: bool = False
    high_open: bool = False
    integer: bool = False
    depends: Callable[[dict], tuple] | None = None


@dataclass(frozen=True)
class Quantity:
    """A derived quantity: name, meaning, parameters with their ranges, definition and value."""

    name: str
    description: str
    parameters: dict
    value: Callable[[dict], mpmath.mpf]
    domain: str
    law: str
    definition: sp.Expr | None = None
    polynomial: sp.Expr | None = None
    branch: str | None = None
    options: dict = field(default_factory=dict)

    @property
    def symbols(self) -> dict:
        """The parameters by name."""
        return {s.name: s for s in self.parameters}

    @property
    def aliases(self) -> dict:
        """The formula sheet's names that stand for an expression in this quantity's parameters (``theta``, the
        strength of the signal term, where ``alpha, mu2, delta`` are parameters): name -> ``(symbol, expression,
        meaning)``, from :data:`SHEET_NAMES`.

        >>> sorted(quantity("sample.overlap").aliases)
        ['cos2_s', 'lambda_H', 'sigma2_H', 'theta', 'theta_c', 'theta_s']
        """
        own = _OWN_NAMES.get(self.name, {})
        out = {}
        for name, (expression, meaning) in (SHEET_NAMES | own).items():
            if expression.free_symbols <= set(self.parameters) and name not in self.symbols:
                out[name] = (sp.Symbol(name, **_ASSUMPTIONS.get(name, {"real": True})), expression, meaning)
        return out

    @property
    def names(self) -> dict:
        """Every name a user's expression may use: the parameters and the sheet's :attr:`aliases`."""
        return self.symbols | {name: symbol for name, (symbol, _, _) in self.aliases.items()}

    def unaliased(self, expr: sp.Expr) -> sp.Expr:
        """``expr`` with each sheet name of :attr:`aliases` replaced by what it stands for.

        >>> quantity("signal.strength").unaliased(sp.Symbol("theta", positive=True) + 1)
        alpha*(delta + mu2) + 1
        """
        return expr.xreplace({symbol: expression for symbol, expression, _ in self.aliases.values()})

    def defined(self, options: dict) -> tuple[sp.Expr | None, sp.Expr | None]:
        """``(definition, polynomial)`` for the chosen ``options`` (callables of the options are applied)."""
        pick = lambda e: e(options) if callable(e) else e  # noqa: E731
        return pick(self.definition), pick(self.polynomial)


SHEET_NAMES = {
    "theta": (alpha * (mu2 + delta), "theta_s = alpha (mu2 + delta), the strength of the signal term"),
    "theta_s": (alpha * (mu2 + delta), "the strength of the signal term, alpha (mu2 + delta)"),
    "cos2_s": (mu2 / (mu2 + delta), "the squared cosine of the signal direction with u, mu2/(mu2 + delta)"),
    "theta_m": (W**2 * delta, "the strength of the vocabulary-mean term of the raw S, W^2 delta"),
    "sigma2_H": (kappa, "the scale of the population bulk, kappa"),
    "theta_c": (kappa * (delta + sp.sqrt(delta)), "the population threshold strength, kappa (delta + sqrt(delta))"),
    "lambda_H": (kappa * (1 + sp.sqrt(delta)) ** 2, "the right edge of the population bulk, kappa (1 + sqrt(delta))^2"),
}
"""The names of the formula sheet (``derive formulas``) that a user's closed form may use besides the parameters,
each with the expression in the model's scalars it stands for; a quantity accepts those whose expression is in its
parameters (:attr:`Quantity.aliases`)."""

_OWN_NAMES = {
    "population.mu2_critical": {"theta": (kappa * (delta + sp.sqrt(delta)),
                                          "theta_c, the strength at the population threshold (the sheet's "
                                          "mu2(theta) = theta/alpha - delta at theta = theta_c)")},
    "weights.causal": {"s": (t, "the position, as the sheet's w_s writes it (t here)")},
}
"""Where a sheet name means something else: ``theta`` in ``population.mu2_critical`` is the threshold strength, and the
sheet writes the causal weight ``w_s`` in the position ``s``."""

_ASSUMPTIONS = {"theta": {"positive": True}, "theta_s": {"nonnegative": True}, "cos2_s": {"nonnegative": True},
                "theta_m": {"nonnegative": True}, "sigma2_H": {"positive": True}, "theta_c": {"positive": True},
                "lambda_H": {"positive": True}, "s": {"integer": True, "positive": True}}


def _mp(v) -> mpmath.mpf:
    if isinstance(v, sp.Basic):
        return mpmath.mpf(v.p) / v.q if v.is_Rational else mpmath.mpf(sp.N(v, mpmath.mp.dps + 5))
    return mpmath.mpf(v)


def _signal(p) -> mpmath.mpf:
    from derive.gaussian.outliers import signal_strength
    return signal_strength(p[alpha], p[mu2], p[delta])


def _pop(p):
    from derive.gaussian import outliers as o
    return o.population_threshold(p[delta], p[kappa])


def _sample(p):
    from derive.gaussian import outliers as o
    return o.sample_threshold(p[delta], p[gamma], p[kappa])


def _above_mu2(threshold):
    """``mu2`` from where the signal term exceeds ``threshold(p)`` to 16 above it."""
    def bounds(p):
        lo = max(mpmath.mpf(0), threshold(p) / _mp(p[alpha]) - _mp(p[delta]))
        return lo, lo + 16
    return Bound(sp.Integer(0), sp.Integer(16), low_open=True, depends=bounds)


def _below_alpha(threshold):
    """``alpha`` small enough that the outlier does not exist at ``mu2 = 0`` (so that ``mu2_critical > 0``)."""
    def bounds(p):
        return mpmath.mpf(0), min(mpmath.mpf(8), threshold(p) / _mp(p[delta]))
    return Bound(sp.Integer(0), sp.Integer(8), low_open=True, high_open=True, depends=bounds)


def _support_x(p):
    from derive.gaussian.bulk import law
    edges = law(p[delta], p[gamma], p[kappa]).edges()
    return edges[-1]


def _pooling_quotient(scheme: str, kind: str):
    def value(p):
        from derive.model.pooling import pooling
        q = pooling(scheme, int(p[T]), f"{kind}:{int(p[L])}")
        return _mp(q.alpha / q.kappa)
    return value


@lru_cache(maxsize=None)
def _registry() -> dict:
    from derive.gaussian import outliers as o
    from derive.model.attention import causal_weight, causal_weights
    from derive.gaussian.bulk import law
    from derive.gaussian.freeprob import atom_at_zero, bulk_polynomial, edge_polynomial, z
    from derive.model.optimality import mean_block_quotient, optimal_block_quotient
    from derive.symbols import L as L_, T as T_

    terms = ex.population_covariance_terms()
    strength, cos2 = terms["signal_strength"], terms["signal_cosine2"]
    at_signal = {theta: strength}
    theta_c = spikes.population_threshold()
    sample_poly = spikes.sample_threshold_polynomial().as_expr()
    ratios = {delta: Bound(*_POSITIVE), gamma: Bound(*_POSITIVE), kappa: Bound(*_POSITIVE)}
    pop_params = {delta: ratios[delta], kappa: ratios[kappa], alpha: Bound(sp.Integer(0), sp.Integer(8), low_open=True),
                  mu2: _above_mu2(_pop)}
    sample_params = {delta: ratios[delta], gamma: ratios[gamma], kappa: ratios[kappa],
                     alpha: Bound(sp.Integer(0), sp.Integer(8), low_open=True), mu2: _above_mu2(_sample)}
    pop_exists = "alpha (mu2 + delta) > theta_c = kappa (delta + sqrt(delta)): the population outlier exists"
    sample_exists = "alpha (mu2 + delta) > theta_c^N (largest root of the sample threshold polynomial): the sample outlier exists"
    pop_law = "population level (N = oo), exact in the limit d/V -> delta"
    sample_law = "gaussian-equivalent (sample level, d/N -> gamma)"
    block = {T: Bound(sp.Integer(1), sp.Integer(64), integer=True),
             L: Bound(sp.Integer(1), sp.Integer(64), integer=True, depends=lambda p: (1, p[T]))}
    to_block = {T_: T, L_: L}

    def causal_value(p, options):
        return _mp(causal_weights(int(p[T]), p[tau], options["mask"], digits=mpmath.mp.dps)[int(p[t]) - 1])

    def causal_definition(options):
        from derive.symbols import s
        return causal_weight(options["mask"]).subs(s, t)

    qs = [
        Quantity("signal.strength", QUANTITY_MEANINGS["signal.strength"],
                 {alpha: Bound(*_NONNEG), mu2: Bound(sp.Integer(0), sp.Integer(16)), delta: ratios[delta]},
                 lambda p: o.signal_strength(p[alpha], p[mu2], p[delta]), "alpha >= 0, mu2 >= 0, delta > 0", pop_law,
                 definition=strength),
        Quantity("signal.cosine2", QUANTITY_MEANINGS["signal.cosine2"],
                 {mu2: Bound(sp.Integer(0), sp.Integer(16)), delta: ratios[delta]},
                 lambda p: o.signal_cosine2(p[mu2], p[delta]), "mu2 >= 0, delta > 0", pop_law, definition=cos2),
        Quantity("mean.strength", QUANTITY_MEANINGS["mean.strength"],
                 {W: Bound(sp.Integer(-2), sp.Integer(2)), delta: ratios[delta]},
                 lambda p: o.mean_strength(p[W], p[delta]), "delta > 0", pop_law, definition=terms["mean_strength"]),
        Quantity("population.theta_critical", QUANTITY_MEANINGS["population.theta_critical"],
                 {delta: ratios[delta], kappa: ratios[kappa]}, lambda p: o.population_threshold(p[delta], p[kappa]),
                 "delta, kappa > 0", pop_law, definition=theta_c),
        Quantity("population.eigenvalue", QUANTITY_MEANINGS["population.eigenvalue"], pop_params,
                 lambda p: o.population_outlier(_signal(p), p[delta], p[kappa]), pop_exists, pop_law,
                 definition=spikes.population_outlier_location().subs(at_signal)),
        Quantity("population.overlap", QUANTITY_MEANINGS["population.overlap"], pop_params,
                 lambda p: o.population_overlap(_signal(p), p[delta], p[kappa]) * o.signal_cosine2(p[mu2], p[delta]),
                 pop_exists, pop_law, definition=spikes.population_overlap().subs(at_signal) * cos2),
        Quantity("population.mu2_critical", QUANTITY_MEANINGS["population.mu2_critical"],
                 {delta: ratios[delta], kappa: ratios[kappa], alpha: _below_alpha(_pop)},
                 lambda p: o.critical_mu2(_pop(p), p[alpha], p[delta]),
                 "alpha > 0 and alpha delta < theta_c (no outlier at mu2 = 0)", pop_law,
                 definition=spikes.critical_mu2().subs(theta, theta_c)),
        Quantity("sample.theta_critical", QUANTITY_MEANINGS["sample.theta_critical"],
                 {delta: ratios[delta], gamma: ratios[gamma], kappa: ratios[kappa]}, _sample,
                 "delta, gamma, kappa > 0", sample_law, polynomial=sample_poly.subs(theta, y),
                 branch="the only root with y > delta kappa (one sign change of the polynomial in y - delta kappa)"),
        Quantity("sample.eigenvalue", QUANTITY_MEANINGS["sample.eigenvalue"], sample_params,
                 lambda p: o.sample_outlier(_signal(p), p[delta], p[gamma], p[kappa]), sample_exists, sample_law,
                 definition=spikes.sample_outlier_location().subs(at_signal)),
        Quantity("sample.overlap", QUANTITY_MEANINGS["sample.overlap"], sample_params,
                 lambda p: o.sample_overlap(_signal(p), p[delta], p[gamma], p[kappa]) * o.signal_cosine2(p[mu2], p[delta]),
                 sample_exists, sample_law,
                 definition=(spikes.population_overlap() * spikes.sample_overlap_factor()).subs(at_signal) * cos2),
        Quantity("sample.mu2_critical", QUANTITY_MEANINGS["sample.mu2_critical"],
                 {delta: ratios[delta], gamma: ratios[gamma], kappa: ratios[kappa], alpha: _below_alpha(_sample)},
                 lambda p: o.critical_mu2(_sample(p), p[alpha], p[delta]),
                 "alpha > 0 and alpha delta < theta_c^N (no outlier at mu2 = 0)", sample_law,
                 polynomial=sample_poly.subs(theta, alpha * (y + delta)),
                 branch="the only root with alpha (y + delta) > delta kappa"),
        Quantity("bulk.right_edge", QUANTITY_MEANINGS["bulk.right_edge"],
                 {delta: ratios[delta], gamma: ratios[gamma], kappa: ratios[kappa]},
                 lambda p: law(p[delta], p[gamma], p[kappa]).edges()[-1][1], "delta, gamma, kappa > 0", sample_law,
                 polynomial=edge_polynomial(bulk_polynomial()).subs(z, y), branch="the largest real root"),
        Quantity("bulk.population_right_edge", QUANTITY_MEANINGS["bulk.population_right_edge"],
                 {delta: ratios[delta], kappa: ratios[kappa]}, lambda p: o.population_right_edge(p[delta], p[kappa]),
                 "delta, kappa > 0", pop_law, definition=spikes.population_right_edge()),
        Quantity("bulk.density", QUANTITY_MEANINGS["bulk.density"],
                 {delta: ratios[delta], gamma: ratios[gamma], kappa: ratios[kappa],
                  x: Bound(sp.Integer(0), sp.Integer(100), low_open=True, high_open=True, depends=_support_x)},
                 lambda p: law(p[delta], p[gamma], p[kappa]).density(p[x]),
                 "x inside the last interval of the support", sample_law,
                 branch="Im m(x + i0)/pi on the Stieltjes branch of the bulk cubic"),
        Quantity("bulk.atom_at_zero", QUANTITY_MEANINGS["bulk.atom_at_zero"], {delta: ratios[delta], gamma: ratios[gamma]},
                 lambda p: _mp(law(p[delta], p[gamma], 1).atom_at_zero), "delta, gamma > 0", sample_law,
                 definition=atom_at_zero(bulk_polynomial())),
        Quantity("weights.causal", QUANTITY_MEANINGS["weights.causal"],
                 {T: Bound(sp.Integer(1), sp.Integer(64), integer=True,
                           depends=lambda p: (2 if p["mask"] == "strict" else 1, 64)),
                  t: Bound(sp.Integer(1), sp.Integer(64), integer=True, depends=lambda p: (1, p[T])),
                  tau: Bound(sp.Integer(0), sp.Integer(10))},
                 causal_value, "1 <= t <= T <= 64, 0 <= tau <= 10 (strict mask: T >= 2)",
                 "exact (the limit d -> oo of the model's attention weights)", definition=causal_definition,
                 options={"mask": ("inclusive", "strict")}),
        Quantity("alpha_over_kappa.mean.prefix", QUANTITY_MEANINGS["alpha_over_kappa.mean.prefix"], block,
                 _pooling_quotient("mean", "prefix"), "1 <= L <= T <= 64", "exact",
                 definition=mean_block_quotient("prefix").xreplace(to_block)),
        Quantity("alpha_over_kappa.mean.suffix", QUANTITY_MEANINGS["alpha_over_kappa.mean.suffix"], block,
                 _pooling_quotient("mean", "suffix"), "1 <= L <= T <= 64", "exact",
                 definition=mean_block_quotient("suffix").xreplace(to_block)),
        Quantity("alpha_over_kappa.optimal.prefix", QUANTITY_MEANINGS["alpha_over_kappa.optimal.prefix"], block,
                 _pooling_quotient("optimal", "prefix"), "1 <= L <= T <= 64", "exact",
                 definition=optimal_block_quotient("prefix").xreplace(to_block)),
    ]
    return {q.name: q for q in qs}





def quantity(name) -> Quantity:
    """The quantity called ``name`` (one of :data:`QUANTITIES`).

    >>> q = quantity("sample.overlap"); sorted(q.symbols), q.law
    (['alpha', 'delta', 'gamma', 'kappa', 'mu2'], 'gaussian-equivalent (sample level, d/N -> gamma)')
    """
    if not isinstance(name, str) or name not in QUANTITIES:
        raise ParameterError("quantity", f"must be one of {', '.join(QUANTITIES)}, got {name!r}")
    return _registry()[name]


def _radical_free(expr: sp.Expr) -> tuple[sp.Expr, dict]:
    """``expr`` with every positive parameter ``p`` under a square root replaced by ``q**2`` (``q > 0``), so that
    an expression in square roots of the parameters becomes a rational function of new symbols."""
    subs = {}
    for root in expr.atoms(sp.Pow):
        if root.exp == sp.Rational(1, 2) and root.base.is_Symbol and root.base.is_positive:
            subs[root.base] = sp.Symbol(f"sqrt_{root.base.name}", positive=True) ** 2
    return expr.xreplace(subs), subs


def _is_zero(expr: sp.Expr) -> str | None:
    """A short text saying how SymPy showed ``expr == 0``, or ``None``."""
    flat, subs = _radical_free(expr)
    note = f" after {', '.join(f'{k} = {v}' for k, v in subs.items())}" if subs else ""
    if not flat.has(sp.harmonic, sp.digamma, sp.exp, sp.log, sp.Min, sp.Max, sp.Abs, sp.Piecewise):
        if sp.cancel(sp.together(flat)) == 0:
            return f"cancel(together(.)) = 0{note} (a rational identity)"
    else:
        rewritten = sp.expand_func(flat.rewrite(sp.digamma))
        if sp.simplify(rewritten) == 0:
            return f"simplify(expand_func(rewrite(digamma))) = 0{note}"
    if sp.simplify(flat) == 0:
        return f"simplify(.) = 0{note}"
    return None


def prove_equal(q: Quantity, expr: sp.Expr, *, fixed: dict | None = None, options: dict | None = None) -> str | None:
    r"""A proof that ``expr`` equals the quantity ``q`` on its whole domain (with the parameters of ``fixed``
    set), as a text; ``None`` when SymPy cannot show it (which is no evidence of a difference).

    An explicit definition is proved by showing the difference is identically zero. An implicit one
    (``q.polynomial``) by showing that ``expr`` is a root of the polynomial identically; which root it is
    the caller must still check at a point (:attr:`Quantity.branch`).

    >>> from derive.symbols import delta, kappa
    >>> prove_equal(quantity("bulk.population_right_edge"), kappa * (1 + sp.sqrt(delta))**2)
    'expr - definition: cancel(together(.)) = 0 after delta = sqrt_delta**2 (a rational identity)'
    """
    fixed = fixed or {}
    definition, polynomial = q.defined(options or {})
    if definition is not None:
        how = _is_zero((expr - definition).subs(fixed))
        return None if how is None else f"expr - definition: {how}"
    if polynomial is not None:
        on_curve = sp.numer(sp.together(polynomial.subs(y, expr).subs(fixed)))
        how = _is_zero(on_curve)
        return None if how is None else f"P(expr) = 0 identically: {how}; branch: {q.branch}"
    return None
