"""Numbers and experiments put against the results of :mod:`derive`: Monte Carlo of the model, the claims ledger,
parameter sweeps, and the check of a user's closed form.

The public names are those of :data:`__all__` (the table :data:`PUBLIC` says where each lives), imported on first
use. The wings: :mod:`verify.montecarlo` (the model's draw and its eigensolvers), :mod:`verify.studies` (finite
size, attention gap, classification), :mod:`verify.ledger` (one record per claim), :mod:`verify.sweeps` (parameter
grids on local cores or Dask).
"""
from importlib import import_module

PUBLIC = {
    "verify.montecarlo.trials": ("run_trial", "run_trials", "run_axis", "Trial", "Trials", "AxisTrials"),
    "verify.montecarlo.draw": ("draw", "Draw", "rung"),
    "verify.formula": ("check_formula", "assert_formula", "FormulaCheck"),
    "verify.stats": ("mean_ci", "richardson"),
    "verify.ledger.records": ("run_ledger",),
    "verify.sweeps.spec": ("Sweep",),
    "verify.sweeps.run": ("run_sweep",),
}
"""Each public name, by the module that defines it."""

_WHERE = {name: module for module, names in PUBLIC.items() for name in names}

__all__ = sorted(_WHERE) + ["__version__"]


def __getattr__(name):
    if name == "__version__":
        return import_module("derive").__version__
    if name not in _WHERE:
        raise AttributeError(f"module 'verify' has no attribute {name!r}")
    return getattr(import_module(_WHERE[name]), name)


def __dir__():
    return sorted(set(globals()) | set(__all__))
