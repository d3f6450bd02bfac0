"""The registry of derived results, from which the formula sheet and ``derive formulas`` are made.

Each module that derives something exposes ``formulas() -> list[Formula]``; the
expressions in those records are the very SymPy objects the module evaluates. An entry is a
complete equation: a left-hand side named as the literature names it (``lhs``) and the derived
right-hand side (``expr``), or an equation the derivation produced as a whole.
"""
from __future__ import annotations

import importlib
from dataclasses import dataclass

import sympy as sp

__all__ = ["MODULES", "CLAIMS", "NAMES", "named", "Formula", "all_formulas"]

MODULES = [
    "derive.model.expectations",
    "derive.model.attention",
    "derive.model.optimality",
    "derive.gaussian.freeprob",
    "derive.gaussian.spikes",
    "derive.vocabulary.tokenreuse",
    "derive.vocabulary.silverstein",
    "derive.vocabulary.tokengraph",
]

CLAIMS = {
    "model": "The model: moments of the pooled one-hot vectors",
    "C1": "C1. The bulk law",
    "C2-C4": "C2 to C4. Outliers: population and sample thresholds, eigenvalues, overlaps",
    "C5": "C5. Optimal weights",
    "C6": "C6. Causal attention in the limit",
    "C7": "C7. Causal attention against mean pooling",
}
"""The sections of the formula sheet, one per claim of the paper (``model`` for what all claims use)."""


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


@dataclass(frozen=True)
class Formula:
    """One derived result: ``lhs = expr`` (``expr`` alone when it is already an equation), its assumptions
    (text, mathematics between dollars), where it is derived, and the claim it belongs to."""

    name: str
    expr: sp.Basic
    assumptions: str
    source: str
    lhs: sp.Basic | None = None
    claim: str = "model"

    @property
    def equation(self) -> sp.Equality:
        """The complete equation."""
        if isinstance(self.expr, sp.Equality):
            return self.expr
        if self.lhs is None:
            raise ValueError(f"{self.name}: an entry needs a left-hand side")
        return sp.Eq(self.lhs, self.expr, evaluate=False)

    def as_dict(self) -> dict:
        from derive.sheet.latex import equation_latex
        return {
            "name": self.name,
            "sympy": str(self.expr),
            "lhs": None if self.lhs is None else str(self.lhs),
            "latex": equation_latex(self),
            "assumptions": self.assumptions,
            "source": self.source,
            "claim": self.claim,
        }


def all_formulas() -> list[Formula]:
    """Every registered result, in module order."""
    return [f for path in MODULES for f in importlib.import_module(path).formulas()]
