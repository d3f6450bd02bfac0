"""The registry of derived results, from which the formula sheet and ``derive formulas`` are made.

Each module that derives something exposes ``formulas() -> list[Formula]``; the
expressions in those records are the very SymPy objects the module evaluates. An entry is a
complete equation: a left-hand side named as the literature names it (``lhs``) and the derived
right-hand side (``expr``), or an equation the derivation produced as a whole.
"""
from __future__ import annotations

import importlib

from derive.symbols import Formula

__all__ = ["MODULES", "CLAIMS", "all_formulas"]

MODULES = [
    "derive.model.expectations",
    "derive.model.attention",
    "derive.model.optimality",
    "derive.gaussian.freeprob",
    "derive.gaussian.spikes",
    "derive.vocabulary.limit.tokenreuse",
    "derive.vocabulary.limit.silverstein",
    "derive.vocabulary.limit.tokengraph",
    "derive.vocabulary.limit.signal",
    "derive.vocabulary.draw.finite_size",
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


def all_formulas() -> list[Formula]:
    """Every registered result, in module order."""
    return [f for path in MODULES for f in importlib.import_module(path).formulas()]
