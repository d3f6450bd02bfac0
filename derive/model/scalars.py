"""The pooling of a model as plain values (its weights as floats, :math:`\\alpha`, :math:`\\kappa`, :math:`W` as exact
text), kept between runs by :func:`derive.cache.memo`, so that a query the cache answers needs no SymPy, and what they
decide without it (:func:`exact_own_law`)."""
from __future__ import annotations

import re

from derive.errors import ParameterError
from derive.model.spec import Model, exact_or_close
from derive.numbers import check_digits

__all__ = ["pooling_scalars", "exact_own_law"]


def pooling_scalars(m: Model, digits: int = 30) -> dict:
    r"""The model's pooling as plain values (:func:`derive.interface.weights`): the weights as floats and as 12-digit text,
    :math:`\alpha` (``None`` without signs), :math:`\kappa` and :math:`W` as exact ``p/q`` text, an irrational one as
    the rational within :math:`10^{-(\mathrm{digits} + 20)}` of it (from weights with guard digits:
    :func:`~derive.model.spec.exact_or_close`). Kept between runs (:func:`derive.cache.memo`) unless a file or a
    user's object gave the weights or the signs: a repeated query needs no SymPy.

    >>> p = pooling_scalars(Model(T=3, weights="causal", mask="strict", signs="iid")); p["weights"], p["alpha"]
    ([0.75, 0.25, 0.0], '5/8')
    """
    from derive.cache import memo, model_key, shaped
    from derive.numbers import format_real

    if not isinstance(m, Model):
        raise ParameterError("model", f"must be a derive.Model, got {type(m).__name__}")
    m = m.need("T", "weights")
    digits = check_digits(digits)

    def compute():
        from derive.model.pooling import model_pooling

        pool = model_pooling(m, digits.guarded())
        exact = {name: None if getattr(pool, name) is None else str(exact_or_close(getattr(pool, name), name, digits))
                 for name in ("alpha", "kappa", "W")}
        return {"weights": [float(x) for x in pool.weights],
                "weights_text": [format_real(x, 12) for x in pool.weights], **exact}

    def valid(v):
        exact = lambda x: isinstance(x, str) and re.fullmatch(r"-?\d+(/\d+)?", x) is not None  # noqa: E731
        return shaped(v, {"weights": [float], "weights_text": [str], "alpha": (exact, None), "kappa": exact,
                          "W": exact}) and len(v["weights"]) == len(v["weights_text"]) == m.T \
            and (v["alpha"] is None) == (m.signs is None)

    return memo("pooling", model_key(m, ("weights", "T", "signs"), digits=digits), compute, valid)


def exact_own_law(m: Model) -> bool:
    """Whether the model's own law is exact to any precision: one nonzero weight (``D`` diagonal); decided from the
    kept weights (:func:`pooling_scalars`), so a repeated query needs no SymPy.

    >>> exact_own_law(Model(T=3, weights="causal", mask="strict")), exact_own_law(Model(T=1, weights="mean"))
    (False, True)
    """
    return sum(1 for w in pooling_scalars(m)["weights"] if w != 0) == 1

