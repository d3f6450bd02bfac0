"""The registry of derived results, from which the formula sheet and ``derive formulas`` are made.

Each module that derives something exposes ``formulas() -> list[Formula]``; the
expressions in those records are the very SymPy objects the module evaluates.
"""
from __future__ import annotations

import importlib
from dataclasses import dataclass

import sympy as sp

__all__ = ["MODULES", "Formula", "all_formulas"]

MODULES = [
    "derive.expectations",
    "derive.attention",
    "derive.optimality",
    "derive.freeprob",
    "derive.spikes",
    "derive.tokenreuse",
    "derive.silverstein",
    "derive.tokengraph",
]


@dataclass(frozen=True)
class Formula:
    """One derived result: a SymPy object (an expression, an equation or a matrix)."""

    name: str
    expr: sp.Basic
    assumptions: str
    source: str

    def as_dict(self) -> dict:
        return {
            "name": self.name,
            "sympy": str(self.expr),
            "latex": sp.latex(self.expr),
            "assumptions": self.assumptions,
            "source": self.source,
        }


def all_formulas() -> list[Formula]:
    """Every registered result, in module order."""
    return [f for path in MODULES for f in importlib.import_module(path).formulas()]
