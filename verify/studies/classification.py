r"""Claim C8: ridge-regression classification on pooled vectors.

Task: for ``prefix:L`` (``suffix:L``) sequences the label is the shared sign of the block, :math:`y_n = \xi_{n,1}`
(:math:`\xi_{n,T}`).
Training: :math:`N` sequences, test: :math:`N/2` fresh sequences from the same table. Features are
the pooled vectors :math:`c_n`; the ridge classifier is
:math:`\beta = (C C^T/N + \lambda I)^{-1} C y / N`, prediction :math:`\mathrm{sign}(c^T\beta)`.
The ridge parameter is fixed in advance, :math:`\lambda = \kappa = \|w\|^2` (the noise scale of the
pooled vectors, so the rule is invariant under rescaling of ``w``), not tuned on the test set.
No theoretical accuracy is derived here; the check is the ranking against :math:`\alpha/\kappa`.
"""
from __future__ import annotations

import numpy as np

from derive.errors import ParameterError
from derive import Model
from verify.montecarlo.draw import mixing_matrix, pooled, sample_sequences, sample_table

__all__ = ["ridge_fit", "accuracy", "accuracy_curves"]


def ridge_fit(C: np.ndarray, y: np.ndarray, lam: float) -> np.ndarray:
    """Ridge weights for features ``C`` (``d x n``) and labels ``y`` (``n``), via the smaller Gram side."""
    d, n = C.shape
    if d <= n:
        return np.linalg.solve(C @ C.T / n + lam * np.eye(d), C @ y / n)
    return C @ np.linalg.solve(C.T @ C / n + lam * np.eye(n), y / n)


def accuracy(beta: np.ndarray, C: np.ndarray, y: np.ndarray) -> float:
    """Fraction of correct signs; a zero score counts as an error."""
    return float(np.mean(np.sign(beta @ C) == y))


def accuracy_curves(weights: dict, mu2_grid, d: int, V: int, N: int, T: int, signs: str, seeds: int, seed0: int) -> dict:
    """Test accuracy per scheme and ``mu2``: an array ``seeds x len(mu2_grid)`` for each scheme; ``signs`` is a family
    whose positions share one sign on a block (``prefix:L``, ``suffix:L``, ``L >= 2``: the label is the block's sign).

    Paired design: for a seed and ``mu2`` every scheme sees the same table and the same train and
    test sequences, so differences between schemes are not blurred by sampling noise.
    """
    out = {name: np.zeros((seeds, len(mu2_grid))) for name in weights}
    family = Model(T=T, signs=signs).signs
    block = family.block(T)
    if not block:
        raise ParameterError("signs", f"the label is the sign of a block of positions (prefix:L or suffix:L with "
                                      f"L >= 2), not {signs!r}")
    label = block[0]
    for i, child in enumerate(np.random.SeedSequence(seed0).spawn(seeds)):
        for j, mu2 in enumerate(mu2_grid):
            rng = np.random.default_rng([*child.generate_state(2), j])
            E = sample_table(rng, d, V, mu2)
            xi_train, tok_train = sample_sequences(rng, family, V, N, T)
            xi_test, tok_test = sample_sequences(rng, family, V, N // 2, T)
            for name, w in weights.items():
                kappa = float(np.dot(w, w))
                beta = ridge_fit(pooled(E, mixing_matrix(tok_train, w, V)), xi_train[:, label].astype(float), kappa)
                out[name][i, j] = accuracy(beta, pooled(E, mixing_matrix(tok_test, w, V)), xi_test[:, label].astype(float))
    return out
