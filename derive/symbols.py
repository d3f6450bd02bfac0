"""The model's symbols, each declared once with one set of assumptions.

Every module of :mod:`derive` builds its expressions from these, so that an expression derived in
one module can be substituted into another (SymPy treats two symbols of the same name but different
assumptions as different symbols).
"""
from __future__ import annotations

from dataclasses import dataclass

import sympy as sp
from sympy.printing.latex import LatexPrinter

__all__ = ["NAMES", "named", "SheetPrinter", "Formula", "delta", "gamma", "kappa", "alpha", "W", "mu2", "theta", "m", "z", "x", "V", "d", "N",
           "t", "s", "u", "T", "L", "tau", "r", "rho"]

delta = sp.Symbol("delta", positive=True)
"""``d/V``, the embedding dimension over the vocabulary size."""
gamma = sp.Symbol("gamma", positive=True)
"""``d/N``, the embedding dimension over the number of sequences (the population level is ``gamma -> 0``)."""
kappa = sp.Symbol("kappa", positive=True)
r""":math:`\kappa(w) = \|w\|^2`, the noise scale of the pooled vectors."""
alpha = sp.Symbol("alpha", nonnegative=True)
r""":math:`\alpha(w) = w^\top R w`, the signal after pooling (``R`` is positive semidefinite)."""
W = sp.Symbol("W", real=True)
r""":math:`W = \sum_t w_t`, the weight of the vocabulary-mean spike of the raw ``S``."""
mu2 = sp.Symbol("mu2", nonnegative=True)
r""":math:`\mu_2 = \|\mu\|^2`, the signal strength."""
theta = sp.Symbol("theta", positive=True)
"""The strength of a rank-one term of the population covariance."""
m, z = sp.symbols("m z")
"""A Stieltjes transform and its complex argument."""
x = sp.Symbol("x", real=True)
"""A point of the real line (where a density is evaluated)."""
V, d, N = sp.symbols("V d N", positive=True)
"""Vocabulary size, embedding dimension, number of sequences."""
t, s, u = sp.symbols("t s u", integer=True, positive=True)
"""Positions in a sequence."""
T = sp.Symbol("T", integer=True, positive=True)
"""The sequence length."""
L = sp.Symbol("L", integer=True, positive=True)
"""The block length of the ``prefix:L`` and ``suffix:L`` families."""
tau = sp.Symbol("tau", nonnegative=True)
"""The attention temperature."""
r = sp.Symbol("r", real=True)
"""The correlation of the ``markov:r`` family."""
rho = sp.Symbol("rho", real=True)
"""The Gaussian correlation of the ``gauss:rho`` family."""


NAMES: dict = {}
"""The typeset name of each symbol made by :func:`named` (the formula sheet prints these)."""


def named(plain: str, tex: str, cls=sp.Symbol, **assumptions):
    r"""A symbol (or, with ``cls=sp.Function``, an undefined function) called ``plain`` that the formula sheet
    prints as ``tex``, the literature's name (``named("lambda_plus", r"\lambda_+")``), with SymPy ``assumptions``.

    >>> named("theta_c", r"\theta_c")
    theta_c
    """
    obj = cls(plain, **assumptions)
    NAMES[plain] = tex
    return obj


class SheetPrinter(LatexPrinter):
    """SymPy's LaTeX printer with the names of the literature (:data:`derive.symbols.NAMES`)."""

    def _print_Symbol(self, expr, style="plain"):
        return NAMES.get(expr.name) or super()._print_Symbol(expr, style)

    def _print_harmonic(self, expr):
        if len(expr.args) != 1:
            return super()._print_harmonic(expr)
        return rf"H_{{{self._print(expr.args[0])}}}"

    def _print_Indexed(self, expr):
        return rf"{self._print(expr.base.label)}_{{{','.join(self._print(i) for i in expr.indices)}}}"

    def _print_AppliedUndef(self, expr):
        return rf"{self._print(sp.Symbol(expr.func.__name__))}({', '.join(self._print(a) for a in expr.args)})"


@dataclass(frozen=True)
class Formula:
    """One derived result: ``lhs = expr`` (``expr`` alone when it is already an equation), its assumptions
    (text, mathematics between dollars), where it is derived, the claim it belongs to, and the quantities of
    ``verify formula`` it is."""

    name: str
    expr: sp.Basic
    assumptions: str
    source: str
    lhs: sp.Basic | None = None
    claim: str = "model"
    quantities: tuple = ()
    """The quantities of ``verify formula`` this entry is, as ``(name, where)`` pairs (``where`` the conditions it
    holds under, as ``--where`` writes them, or ``None``): its expression, as ``derive formulas --json`` prints it,
    verifies as ``equal`` for each (``tests/test_formula_check.py``)."""

    def _repr_latex_(self) -> str:
        """The equation as a notebook typesets it, with the literature's names (:data:`NAMES`)."""
        printer = SheetPrinter()
        return f"$${printer.doprint(self.equation.lhs)} = {printer.doprint(self.equation.rhs)}$$"

    def _repr_html_(self) -> str:
        import html

        return (f"<p><b>{html.escape(self.name)}</b> ({html.escape(self.claim)})</p><p>{self._repr_latex_()}</p>"
                f"<p><i>Assumptions:</i> {html.escape(self.assumptions)}</p>")

    @property
    def equation(self) -> sp.Equality:
        """The complete equation."""
        if isinstance(self.expr, sp.Equality):
            return self.expr
        if self.lhs is None:
            raise ValueError(f"{self.name}: an entry needs a left-hand side")
        return sp.Eq(self.lhs, self.expr, evaluate=False)
