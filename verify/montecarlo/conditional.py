"""Each trial's conditional prediction: the model's outliers given the trial's own tokens
(:mod:`derive.vocabulary.draw.outliers`), as the numbers a Monte Carlo comparison puts next to the trial's. Loads
neither SymPy nor SciPy (a ``verify mc`` process from a warm derivation cache)."""
from __future__ import annotations

from derive.vocabulary.draw.outliers import EXACT_BELOW, conditional_outliers, conditional_prediction
from derive.vocabulary.draw.quadrature import quadrature_transforms
from derive.vocabulary.draw.tokenmatrix import TokenMatrix
from verify.montecarlo.draw import balanced_signs

__all__ = ["CONDITIONAL_LAW", "conditional_observables", "conditional_row"]

CONDITIONAL_LAW = "conditional"
"""The law of the predictions conditional on each draw's token matrix: the model's own outliers given the tokens,
exact up to :math:`O(1/d)`."""


def conditional_observables(tokens, weights, V: int, d: int, mu2: float, centered: bool) -> dict:
    """The conditional prediction of one draw given its ``tokens`` (``N x T``) and pooling ``weights``: the signal
    outlier's ``eigenvalue`` and ``overlap`` (NaN and 0 where the draw has none), the raw ``S``'s ``mean_eigenvalue``
    (NaN without it), how many eigenvalues stand ``above`` the bulk's edge besides the signal's, and the mean squared
    overlap with ``u`` of an eigenvector at that edge, ``edge_overlap``
    (:func:`derive.vocabulary.draw.outliers.edge_weight` over ``d``).

    >>> import numpy as np
    >>> o = conditional_observables(np.arange(8)[:, None] % 4, [1.0], 4, 2, 0.0, True)   # no signal: u like any
    >>> o["eigenvalue"], o["edge_overlap"]                                                # direction, 1/d at the edge
    (nan, 0.5)
    """
    o = conditional_prediction(TokenMatrix.from_tokens(tokens, weights, V), balanced_signs(V), d, mu2, centered)
    nan = float("nan")
    return {"eigenvalue": o.signal.eigenvalue if o.signal else nan, "overlap": o.signal.overlap if o.signal else 0.0,
            "mean_eigenvalue": o.mean.eigenvalue if o.mean else nan, "above": o.above,
            "edge_overlap": o.edge_weight / d}


def conditional_row(tokens, weights, V: int, d: int, mu2: float, centered: bool, probes: int | None = None) -> tuple:
    r"""The conditional prediction of one draw given its ``tokens`` (``N x T``) and pooling ``weights``:
    ``(signal eigenvalue, signal overlap, mean-outlier eigenvalue)``, NaN for an outlier the draw does not have (its
    overlap then 0).

    ``probes``: where :func:`derive.vocabulary.draw.outliers.conditional_prediction` would use its Lanczos quadrature, as
    many Rademacher probes of :math:`S_0` instead of its default. The signal outlier's location :math:`t(1 - S_0)` and
    overlap :math:`(1 - S_0 - tS_0')/(\mu_2 tS_1')` are linear in :math:`S_0` at the root ``t`` (which :math:`S_1`,
    exact along ``s``, fixes), and each probe's estimate of :math:`S_0` is unbiased: fewer probes add zero-mean noise
    to each draw's prediction, a Monte Carlo comparison's spread includes it, and its mean is kept.

    >>> import numpy as np
    >>> [round(x, 12) for x in conditional_row(np.arange(8)[:, None] % 4, [1.0], 4, 2, 3.0, False)]   # D = I: 14/3
    [4.666666666667, 0.809523809524, nan]
    """
    A, s = TokenMatrix.from_tokens(tokens, weights, V), balanced_signs(V)
    if probes is None or min(A.shape) <= EXACT_BELOW or A.diagonal_gram():
        o = conditional_prediction(A, s, d, mu2, centered)
    else:
        o = conditional_outliers(quadrature_transforms(A, s, d, centered, probes=probes), mu2, mean=not centered, d=d)
    sig, mean = o.signal, o.mean
    nan = float("nan")
    return (sig.eigenvalue if sig else nan, sig.overlap if sig else 0.0, mean.eigenvalue if mean else nan)
