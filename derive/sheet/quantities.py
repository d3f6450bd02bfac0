r"""The derived quantities a user may check a closed form against (``verify formula``).

Each :class:`Quantity` is a function of the model's scalars (``delta, gamma, alpha, kappa, mu2, W`` and
``x, T, t, tau, L`` where they apply), known three ways:

- its *definition*, the SymPy object the derivation produced: an explicit expression, or, where the
  quantity is a root of a polynomial (a threshold, an edge), that polynomial in the placeholder :data:`y`
  and which root it is;
- its *value* at a point, from the numeric API (:mod:`derive.gaussian.outliers`, :func:`derive.gaussian.bulk.law`,
  :func:`derive.model.pooling.pooling`), at the current mpmath precision;
- its *domain*: the ranges of its parameters and, for the last one, bounds that depend on the others
  (``x`` inside the support, ``t <= T``). Where the derivation's value has two forms (an overlap is its formula where
  the outlier exists and 0 below; ``mu2_critical`` is 0 where the outlier exists at ``mu2 = 0``), the domain has two
  parts: the *region* where the definition holds (:attr:`Quantity.parameters`, :attr:`Quantity.region`) and the rest
  (:class:`Outside`: its parameters and its value), so that a user's form is checked on both sides of the threshold.

:func:`prove_equal` tries to prove a user's expression equal to the definition; it returns a proof text
or ``None`` (``None`` means "not proved", never "different").
"""
from __future__ import annotations

from dataclasses import dataclass, field
from functools import lru_cache
from typing import Callable

import mpmath
import sympy as sp
from sympy.core.function import AppliedUndef

from derive.model import expectations as ex
from derive.gaussian import spikes
from derive.sheet.meanings import QUANTITIES, QUANTITY_MEANINGS
from derive.errors import ParameterError
from derive.symbols import L, T, W, alpha, delta, gamma, kappa, mu2, t, tau, theta, x

__all__ = ["y", "Bound", "Outside", "Quantity", "QUANTITIES", "SHEET_NAMES", "SHEET_FUNCTIONS", "quantity", "is_zero",
           "prove_equal"]

y = sp.Symbol("y", real=True)
"""The placeholder for the quantity itself in an implicit definition :math:`P(y) = 0`."""

_POSITIVE = (sp.Rational(1, 1000), sp.Integer(4))
_NONNEG = (sp.Integer(0), sp.Integer(4))


@dataclass(frozen=True)
class Bound:
    """The range of one parameter: ``[low, high]`` (open at an end where ``low_open``/``high_open``),
    integer-valued if ``integer``. ``depends`` computes ``(low, high)`` from the values drawn before it
    (by symbol) and the options (by name); ``None`` for a static range. ``text`` says in words what a dependent
    range is (``"mu2 > mu2_critical: the sample outlier exists"``): what a refusal of ``--where`` names."""

    low: sp.Expr
    high: sp.Expr
    low_open: bool = False
    high_open: bool = False
    integer: bool = False
    depends: Callable[[dict], tuple] | None = None
    text: str | None = None

    def describe(self, name: str) -> str:
        """The range in words: ``"delta in [1/1000, 4]"``, or the ``text`` of a dependent range."""
        if self.depends is not None and self.text:
            return self.text
        kind = ", an integer" if self.integer else ""
        return (f"{name} in {'(' if self.low_open else '['}{self.low}, {self.high}{')' if self.high_open else ']'}"
                f"{kind}")


@dataclass(frozen=True)
class Outside:
    """The part of a quantity's domain where its definition does not hold: ``text`` says which (``"mu2 <=
    mu2_critical: no outlier"``), ``parameters`` are its ranges (as :attr:`Quantity.parameters`) and ``value`` the
    derived value there (an expression in the parameters: ``0``)."""

    text: str
    parameters: dict
    value: sp.Expr


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
    region: str | None = None
    """Where the definition holds, when that is a proper part of the domain (the rest is :attr:`outside`)."""
    outside: Outside | None = None
    whole: sp.Expr | None = None
    """A closed form valid on the whole domain, both parts (``max(0, .)`` of the definition), where one exists."""

    def parts(self) -> list[tuple[str, dict]]:
        """The parts of the domain with their ranges: ``[("region", parameters)]``, then ``("outside", ...)``."""
        return [("region", self.parameters)] + ([("outside", self.outside.parameters)] if self.outside else [])

    def describe(self) -> str:
        """The domain in words, from the ranges of its parameters (each part's, where it has two)."""
        def ranges(parameters):
            return ", ".join(b.describe(s.name) for s, b in parameters.items())
        if self.outside is None:
            return ranges(self.parameters)
        return f"{ranges(self.parameters)}; or {ranges(self.outside.parameters)}"

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
        ['cos2_s', 'lambda_H', 'rho', 'sigma2_H', 'theta', 'theta_c', 'theta_s']
        """
        own = _OWN_NAMES.get(self.name, {})
        out = {}
        for name, (expression, meaning) in (SHEET_NAMES | own).items():
            if expression.free_symbols <= set(self.parameters) and name not in self.symbols:
                out[name] = (sp.Symbol(name, **_ASSUMPTIONS.get(name, {"real": True})), expression, meaning)
        return out

    @property
    def functions(self) -> dict:
        """The formula sheet's functions of the strength ``theta`` that a user's expression may call where the
        quantity defines ``theta`` and their other parameters (``zeta(theta)``, ``eta(theta)``, ``ell(theta)``,
        ``psi(ell(theta))``): name -> ``(function, expression in theta, meaning)``. A bare name (``zeta``) is the
        function at ``theta``."""
        aliases = self.aliases
        if "theta" not in aliases or "theta" in _OWN_NAMES.get(self.name, {}):
            return {}  # theta is not the signal's strength here (population.mu2_critical's is the threshold's)
        out = {}
        for name, (make, meaning) in SHEET_FUNCTIONS.items():
            expression = make()
            if expression.free_symbols - {theta} <= set(self.parameters):
                out[name] = (sp.Function(name), expression, meaning)
        return out

    def unknown_name(self, name: str) -> str | None:
        """Why ``name``, a name of the sheet, is not one this quantity takes (the parameters its meaning needs), or
        ``None`` if it is not a sheet name."""
        table = SHEET_NAMES | _OWN_NAMES.get(self.name, {})
        if name in table:
            expression, meaning = table[name]
            missing = sorted(s.name for s in expression.free_symbols - set(self.parameters))
            hint = _NOT_HERE.get((self.name, name), "")
            return (f"{name!r} is the sheet's {meaning}; it needs {', '.join(missing)}, which {self.name} does not "
                    f"take (its parameters: {', '.join(self.symbols)}){hint}")
        if name in SHEET_FUNCTIONS:
            return (f"{name!r} is the sheet's {SHEET_FUNCTIONS[name][1]}: a function of the signal's strength theta, "
                    f"which {self.name} does not define (its parameters: {', '.join(self.symbols)})")
        return None

    @property
    def names(self) -> dict:
        """Every name a user's expression may use: the parameters and the sheet's :attr:`aliases`."""
        return self.symbols | {name: symbol for name, (symbol, _, _) in self.aliases.items()}

    def unaliased(self, expr: sp.Expr) -> sp.Expr:
        """``expr`` with each sheet function of :attr:`functions` and each sheet name of :attr:`aliases` replaced
        by what it stands for.

        >>> quantity("signal.strength").unaliased(sp.Symbol("theta", positive=True) + 1)
        alpha*(delta + mu2) + 1
        >>> quantity("population.overlap").unaliased(sp.Function("zeta")(sp.Symbol("theta", positive=True)) * 0 + 1)
        1
        """
        for name, (function, expression, _) in self.functions.items():
            expr = expr.replace(lambda e, f=function: isinstance(e, AppliedUndef) and e.func == f,
                                lambda e, x=expression, n=name: _applied(n, x, e.args))
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
    "rho": (alpha * mu2 / kappa, "rho = alpha mu2/kappa, the paper's signal-to-noise ratio (C3)"),
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
                "lambda_H": {"positive": True}, "s": {"integer": True, "positive": True}, "rho": {"nonnegative": True}}

_NOT_HERE = {
    ("population.mu2_critical", "rho"): "; the threshold in rho, C3's form, is population.rho_critical",
    ("sample.mu2_critical", "rho"): "; the threshold in rho is sample.rho_critical",
}
"""What to use instead, where a sheet name is refused by a quantity that is what the name would need."""


def _sheet_functions() -> dict:
    # psi first: it is written of ell(theta), which must still be the sheet's ell when psi is read
    return {
        "psi": (lambda: spikes.sample_outlier_location(), "psi(ell(theta)), the sample outlier"),
        "zeta": (lambda: spikes.population_overlap(),
                 "zeta(theta), the squared cosine of the population outlier's eigenvector with the spike direction"),
        "eta": (lambda: spikes.sample_overlap_factor(),
                "eta(theta), the fraction of the population eigenvector kept by the sample one"),
        "ell": (lambda: spikes.population_outlier_location(), "ell(theta), the population outlier"),
    }


SHEET_FUNCTIONS = _sheet_functions()
"""The formula sheet's functions of a strength ``theta`` (``derive formulas``: ``zeta(theta)``, ``eta(theta)``,
``ell(theta)``, ``psi(ell(theta))``), each as ``(expression in theta, meaning)``; a quantity accepts those whose other
symbols are its parameters (:attr:`Quantity.functions`)."""


def _applied(name: str, expression: sp.Expr, args: tuple) -> sp.Expr:
    """A sheet function applied to its argument: ``zeta(a)`` is :math:`\\zeta` at ``theta = a``; ``psi`` is written of
    ``ell(a)``, as the sheet writes the sample outlier, and stands for the sample outlier at ``theta = a``."""
    if len(args) != 1:
        raise ParameterError("expr", f"{name} takes one argument, the strength theta: {name}(theta)")
    (arg,) = args
    if name == "psi":
        if not (isinstance(arg, AppliedUndef) and arg.func.__name__ == "ell" and len(arg.args) == 1):
            raise ParameterError("expr", "psi is the sample outlier as the sheet writes it, psi(ell(theta))")
        (arg,) = arg.args
    return expression.xreplace({theta: arg})


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


def _above_mu2(threshold, name: str, level: str):
    """``mu2`` from where the signal term exceeds ``threshold(p)`` (``name``) to 16 above it: where the ``level``
    outlier exists."""
    def bounds(p):
        lo = max(mpmath.mpf(0), threshold(p) / _mp(p[alpha]) - _mp(p[delta]))
        return lo, lo + 16
    return Bound(sp.Integer(0), sp.Integer(16), low_open=True, depends=bounds,
                 text=f"mu2_critical < mu2 <= mu2_critical + 16, mu2_critical = max(0, {name}/alpha - delta): the "
                      f"{level} outlier exists")


def _below_mu2(threshold, name: str, level: str):
    """``mu2`` from 0 to where the signal term reaches ``threshold(p)``: no ``level`` outlier (``alpha`` is drawn
    below ``threshold/delta``, so that this range is not empty)."""
    def bounds(p):
        return mpmath.mpf(0), threshold(p) / _mp(p[alpha]) - _mp(p[delta])
    return Bound(sp.Integer(0), sp.Integer(16), depends=bounds,
                 text=f"0 <= mu2 <= mu2_critical = {name}/alpha - delta: no {level} outlier")


def _below_alpha(threshold, name: str):
    """``alpha`` small enough that the outlier does not exist at ``mu2 = 0`` (so that ``mu2_critical > 0``)."""
    def bounds(p):
        return mpmath.mpf(0), min(mpmath.mpf(8), threshold(p) / _mp(p[delta]))
    return Bound(sp.Integer(0), sp.Integer(8), low_open=True, high_open=True, depends=bounds,
                 text=f"0 < alpha < min(8, {name}/delta) (alpha delta < {name}: no outlier at mu2 = 0)")


def _above_alpha(threshold, name: str):
    """``alpha`` large enough that the outlier exists at ``mu2 = 0`` (``mu2_critical = 0``), up to 8 beyond."""
    def bounds(p):
        lo = threshold(p) / _mp(p[delta])
        return lo, lo + 8
    return Bound(sp.Integer(0), sp.Integer(8), depends=bounds,
                 text=f"alpha >= {name}/delta (alpha delta >= {name}: the outlier exists at mu2 = 0)")


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
    any_alpha = Bound(sp.Integer(0), sp.Integer(8), low_open=True)
    pop_params = {delta: ratios[delta], kappa: ratios[kappa], alpha: any_alpha,
                  mu2: _above_mu2(_pop, "theta_c", "population")}
    sample_params = {delta: ratios[delta], gamma: ratios[gamma], kappa: ratios[kappa], alpha: any_alpha,
                     mu2: _above_mu2(_sample, "theta_c^N", "sample")}
    pop_exists = "alpha (mu2 + delta) > theta_c = kappa (delta + sqrt(delta)): the population outlier exists"
    sample_exists = "alpha (mu2 + delta) > theta_c^N (largest root of the sample threshold polynomial): the sample outlier exists"
    # the overlaps are 0 where there is no outlier: the rest of the domain, checked beside the region
    no_pop = Outside("mu2 <= mu2_critical: no population outlier",
                     {delta: ratios[delta], kappa: ratios[kappa], alpha: _below_alpha(_pop, "theta_c"),
                      mu2: _below_mu2(_pop, "theta_c", "population")}, sp.Integer(0))
    no_sample = Outside("mu2 <= mu2_critical: no sample outlier",
                        {delta: ratios[delta], gamma: ratios[gamma], kappa: ratios[kappa],
                         alpha: _below_alpha(_sample, "theta_c^N"), mu2: _below_mu2(_sample, "theta_c^N", "sample")},
                        sp.Integer(0))
    overlap_domain = "delta, kappa > 0, 0 < alpha <= 8, mu2 >= 0"
    pop_region = "mu2 > mu2_critical: the population outlier exists"
    sample_region = "mu2 > mu2_critical: the sample outlier exists"
    # mu2_critical is 0 where the outlier exists at mu2 = 0
    at_zero = "alpha delta >= {}: the outlier exists at mu2 = 0"
    below = "alpha delta < {}: no outlier at mu2 = 0"
    pop_mu2_c = spikes.critical_mu2().subs(theta, theta_c)
    pop_rho_c = sp.expand(alpha * pop_mu2_c / kappa)
    sample_at = {"population": {delta: ratios[delta], kappa: ratios[kappa]},
                 "sample": {delta: ratios[delta], gamma: ratios[gamma], kappa: ratios[kappa]}}

    def critical(level, threshold, symbol):
        inside = {**sample_at[level], alpha: _below_alpha(threshold, symbol)}
        outside = Outside(at_zero.format(symbol), {**sample_at[level], alpha: _above_alpha(threshold, symbol)},
                          sp.Integer(0))
        return inside, outside, below.format(symbol)

    def rho_value(threshold):
        return lambda p: _mp(p[alpha]) * o.critical_mu2(threshold(p), p[alpha], p[delta]) / _mp(p[kappa])

    pm = pr = critical("population", _pop, "theta_c")
    sm = sr = critical("sample", _sample, "theta_c^N")
    pop_law = "population level (N = oo), exact in the limit d/V -> delta"
    sample_law = "gaussian-equivalent (sample level, d/N -> gamma)"
    block = {T: Bound(sp.Integer(1), sp.Integer(64), integer=True),
             L: Bound(sp.Integer(1), sp.Integer(64), integer=True, depends=lambda p: (1, p[T]), text="1 <= L <= T")}
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
                 overlap_domain, pop_law, definition=spikes.population_overlap().subs(at_signal) * cos2,
                 region=pop_region, outside=no_pop),
        Quantity("population.mu2_critical", QUANTITY_MEANINGS["population.mu2_critical"], pm[0],
                 lambda p: o.critical_mu2(_pop(p), p[alpha], p[delta]), "delta, kappa > 0, 0 < alpha <= 8", pop_law,
                 definition=pop_mu2_c, region=pm[2], outside=pm[1], whole=sp.Max(0, pop_mu2_c)),
        Quantity("population.rho_critical", QUANTITY_MEANINGS["population.rho_critical"], pr[0], rho_value(_pop),
                 "delta, kappa > 0, 0 < alpha <= 8", pop_law, definition=pop_rho_c, region=pr[2], outside=pr[1],
                 whole=sp.Max(0, pop_rho_c)),
        Quantity("sample.theta_critical", QUANTITY_MEANINGS["sample.theta_critical"],
                 {delta: ratios[delta], gamma: ratios[gamma], kappa: ratios[kappa]}, _sample,
                 "delta, gamma, kappa > 0", sample_law, polynomial=sample_poly.subs(theta, y),
                 branch="the only root with y > delta kappa (one sign change of the polynomial in y - delta kappa)"),
        Quantity("sample.eigenvalue", QUANTITY_MEANINGS["sample.eigenvalue"], sample_params,
                 lambda p: o.sample_outlier(_signal(p), p[delta], p[gamma], p[kappa]), sample_exists, sample_law,
                 definition=spikes.sample_outlier_location().subs(at_signal)),
        Quantity("sample.overlap", QUANTITY_MEANINGS["sample.overlap"], sample_params,
                 lambda p: o.sample_overlap(_signal(p), p[delta], p[gamma], p[kappa]) * o.signal_cosine2(p[mu2], p[delta]),
                 "delta, gamma, kappa > 0, 0 < alpha <= 8, mu2 >= 0", sample_law,
                 definition=(spikes.population_overlap() * spikes.sample_overlap_factor()).subs(at_signal) * cos2,
                 region=sample_region, outside=no_sample),
        Quantity("sample.mu2_critical", QUANTITY_MEANINGS["sample.mu2_critical"], sm[0],
                 lambda p: o.critical_mu2(_sample(p), p[alpha], p[delta]), "delta, gamma, kappa > 0, 0 < alpha <= 8",
                 sample_law, polynomial=sample_poly.subs(theta, alpha * (y + delta)),
                 branch="the only root with alpha (y + delta) > delta kappa", region=sm[2], outside=sm[1]),
        Quantity("sample.rho_critical", QUANTITY_MEANINGS["sample.rho_critical"], sr[0], rho_value(_sample),
                 "delta, gamma, kappa > 0, 0 < alpha <= 8", sample_law,
                 polynomial=sample_poly.subs(theta, kappa * y + alpha * delta),
                 branch="the only root with kappa y + alpha delta > delta kappa", region=sr[2], outside=sr[1]),
        Quantity("bulk.right_edge", QUANTITY_MEANINGS["bulk.right_edge"],
                 {delta: ratios[delta], gamma: ratios[gamma], kappa: ratios[kappa]},
                 lambda p: law(p[delta], p[gamma], p[kappa]).edges()[-1][1], "delta, gamma, kappa > 0", sample_law,
                 polynomial=edge_polynomial(bulk_polynomial()).subs(z, y), branch="the largest real root"),
        Quantity("bulk.population_right_edge", QUANTITY_MEANINGS["bulk.population_right_edge"],
                 {delta: ratios[delta], kappa: ratios[kappa]}, lambda p: o.population_right_edge(p[delta], p[kappa]),
                 "delta, kappa > 0", pop_law, definition=spikes.population_right_edge()),
        Quantity("bulk.density", QUANTITY_MEANINGS["bulk.density"],
                 {delta: ratios[delta], gamma: ratios[gamma], kappa: ratios[kappa],
                  x: Bound(sp.Integer(0), sp.Integer(100), low_open=True, high_open=True, depends=_support_x,
                           text="x inside the last interval of the support of the bulk")},
                 lambda p: law(p[delta], p[gamma], p[kappa]).density(p[x]),
                 "x inside the last interval of the support", sample_law,
                 branch="Im m(x + i0)/pi on the Stieltjes branch of the bulk cubic"),
        Quantity("bulk.atom_at_zero", QUANTITY_MEANINGS["bulk.atom_at_zero"], {delta: ratios[delta], gamma: ratios[gamma]},
                 lambda p: _mp(law(p[delta], p[gamma], 1).atom_at_zero), "delta, gamma > 0", sample_law,
                 definition=atom_at_zero(bulk_polynomial())),
        Quantity("weights.causal", QUANTITY_MEANINGS["weights.causal"],
                 {T: Bound(sp.Integer(1), sp.Integer(64), integer=True,
                           depends=lambda p: (2 if p["mask"] == "strict" else 1, 64),
                           text="1 <= T <= 64 (T >= 2 for the strict mask: no key before the first position)"),
                  t: Bound(sp.Integer(1), sp.Integer(64), integer=True, depends=lambda p: (1, p[T]), text="1 <= t <= T"),
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
        Quantity("alpha_over_kappa.optimal.suffix", QUANTITY_MEANINGS["alpha_over_kappa.optimal.suffix"], block,
                 _pooling_quotient("optimal", "suffix"), "1 <= L <= T <= 64", "exact",
                 definition=optimal_block_quotient("suffix").xreplace(to_block)),
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


def is_zero(expr: sp.Expr) -> str | None:
    """A short text saying how SymPy showed ``expr == 0``, or ``None``."""
    if expr == 0:
        return "0 as SymPy writes it (the same expression)"
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


def prove_equal(q: Quantity, expr: sp.Expr, *, fixed: dict | None = None, options: dict | None = None,
                part: str = "region") -> str | None:
    r"""A proof that ``expr`` equals the quantity ``q`` on a ``part`` of its domain (with the parameters of
    ``fixed`` set), as a text; ``None`` when SymPy cannot show it (which is no evidence of a difference). ``part``
    is ``"region"`` (where the definition holds: the whole domain unless :attr:`Quantity.outside` splits it),
    ``"outside"`` (the rest: against :attr:`Outside.value`) or ``"whole"`` (against :attr:`Quantity.whole`, the
    closed form valid on both parts, where one exists).

    An explicit definition is proved by showing the difference is identically zero. An implicit one
    (``q.polynomial``) by showing that ``expr`` is a root of the polynomial identically; which root it is
    the caller must still check at a point (:attr:`Quantity.branch`).

    >>> from derive.symbols import alpha, delta, kappa
    >>> prove_equal(quantity("bulk.population_right_edge"), kappa * (1 + sp.sqrt(delta))**2)
    'expr - definition: cancel(together(.)) = 0 after delta = sqrt_delta**2 (a rational identity)'
    >>> prove_equal(quantity("population.mu2_critical"), sp.Max(0, kappa * (delta + sp.sqrt(delta)) / alpha - delta),
    ...             part="whole")
    'expr - max(0, definition): 0 as SymPy writes it (the same expression)'
    """
    fixed = fixed or {}
    if part == "outside":
        how = is_zero((expr - q.outside.value).subs(fixed)) if q.outside is not None else None
        return None if how is None else f"expr - {q.outside.value}: {how}"
    if part == "whole":
        how = is_zero((expr - q.whole).subs(fixed)) if q.whole is not None else None
        return None if how is None else f"expr - max(0, definition): {how}"
    definition, polynomial = q.defined(options or {})
    if definition is not None:
        how = is_zero((expr - definition).subs(fixed))
        return None if how is None else f"expr - definition: {how}"
    if polynomial is not None:
        on_curve = sp.numer(sp.together(polynomial.subs(y, expr).subs(fixed)))
        how = is_zero(on_curve)
        return None if how is None else f"P(expr) = 0 identically: {how}; branch: {q.branch}"
    return None
