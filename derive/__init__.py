"""Exact and symbolic results for the random-matrix analysis of attention pooling.

Nothing in this package draws random numbers or imports :mod:`verify`.

The public names of the modules are available here, imported on first use (so that a command that
needs one module does not pay for all of them). Numbers flow as numbers: the mpmath functions
evaluate at the current precision (``with mpmath.workdps(P): ...``)::

    >>> import mpmath, derive
    >>> with mpmath.workdps(20):
    ...     o = derive.outliers_at("1/2", "1/4", "7/32", "1/8", "3/2")
    ...     print(mpmath.nstr(o.sample.overlap, 10), mpmath.nstr(derive.law("1/2", "1/4", "1/8").density("0.3"), 10))
    0.6185897436 0.9876812618

Where two modules export the same name, the earlier one of :data:`MODULES` wins: ``derive.population_overlap``
is the number (:mod:`derive.gaussian.outliers`), ``derive.gaussian.spikes.population_overlap`` the SymPy expression.
"""
from importlib import import_module

MODULES = ("gaussian.outliers", "gaussian.bulk", "model.attention", "model.signs", "model.realizable", "model.optimality",
           "vocabulary.tokenreuse", "gaussian.freeprob", "gaussian.spikes", "model.expectations", "vocabulary.law",
           "gaussian.regime", "vocabulary.silverstein", "vocabulary.tokengraph", "vocabulary.topbulk", "sheet.formulas",
           "sheet.latex", "numbers", "errors")
"""The modules whose public names (their ``__all__``) are re-exported, in order of precedence."""

_exports: dict | None = None


def _table() -> dict:
    global _exports
    if _exports is None:
        table = {}
        for name in MODULES:
            module = import_module(f"derive.{name}")
            for public in module.__all__:
                table.setdefault(public, module)
        _exports = table
    return _exports


def __getattr__(name):
    if name == "__all__":
        return list(_table())
    if name.startswith("__"):
        raise AttributeError(name)
    module = _table().get(name)
    if module is None:
        raise AttributeError(f"module 'derive' has no attribute {name!r}")
    return getattr(module, name)


def __dir__():
    return sorted(set(globals()) | set(_table()))
