"""Trial cases of the Monte Carlo tests written as plain dicts (sizes, family, float weights, ``mu2``, run options),
turned into what :func:`verify.run_trial` takes: a :class:`derive.Model` and the rest as keywords."""
from derive import Model

MODEL_KEYS = ("d", "V", "N", "T", "signs", "mu2", "centered")


def trial(case: dict) -> dict:
    """``case`` as keyword arguments of :func:`verify.montecarlo.trials.run_trial` (and ``run_trials``, ``draw``):
    ``model`` made of the model's keys, the rest (``weights``, ``k``, ``path``, ...) as given."""
    case = dict(case)
    return {"model": Model(**{key: case.pop(key) for key in MODEL_KEYS if key in case}), **case}


def model(d, V, N, T, signs, mu2=0, centered=False) -> Model:
    """The model of a trial, by position as the tests write it."""
    return Model(d=d, V=V, N=N, T=T, signs=signs, mu2=mu2, centered=centered)
