"""The Monte Carlo wing: the model's draw, its eigensolvers and real softmax attention.

* :mod:`~verify.montecarlo.signs`: the draw of the sign vectors (each family carries its sampler);
* :mod:`~verify.montecarlo.draw`: a trial of a :class:`derive.Model`: the table, sequences, mixing matrix, pooled
  vectors;
* :mod:`~verify.montecarlo.dense` and :mod:`~verify.montecarlo.lanczos`: the eigensolvers (one file each);
* :mod:`~verify.montecarlo.mu2_axis`: one draw solved for every signal strength ``mu2`` at once (block Lanczos);
* :mod:`~verify.montecarlo.memory`: what one trial holds for each solver, and the limits of a trial and of a run;
* :mod:`~verify.montecarlo.trials`: one trial or many, solved by the chosen path;
* :mod:`~verify.montecarlo.attention`: the data-dependent weights of real causal softmax attention;
* :mod:`~verify.montecarlo.population`: the exact covariance of the pooled vectors given one table.

The names of :mod:`~verify.montecarlo.trials` are imported on first use, so that importing the draw does
not load the solvers.
"""
from importlib import import_module

# the draw is imported now: its function ``draw`` must win over the submodule of the same name
from verify.montecarlo.draw import (Draw, balanced_signs, draw, mixing_matrix, pooled, ratios, rung, sample_sequences,
                                    sample_table, trial_model, trial_weights)
from verify.montecarlo.signs import sample_signs

_TRIALS = ("AUTO_COST_RATIO", "PATHS", "Trial", "Trials", "choose_path", "run_trial", "run_trials", "solve")

__all__ = ["Draw", "balanced_signs", "draw", "mixing_matrix", "pooled", "ratios", "rung", "sample_sequences",
           "sample_table", "sample_signs", "trial_model", "trial_weights", *_TRIALS]


def __getattr__(name):
    if name not in _TRIALS:
        raise AttributeError(f"module 'verify.montecarlo' has no attribute {name!r}")
    return getattr(import_module("verify.montecarlo.trials"), name)
