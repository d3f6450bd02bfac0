r"""Where the Gaussian-equivalent laws will do for the paper's model (docs/notation.md), and the warning attached
to their answers.

Light on purpose (exact fractions, no SymPy): ``derive spike`` and ``derive bulk`` attach the warning to every
Gaussian-equivalent answer, and their cold start imports no SymPy. The map behind the rule is computed in
:mod:`verify.studies.regime` from both laws (notes/finite_vocabulary.md).
"""
from __future__ import annotations

from derive.errors import ParameterError

__all__ = ["GAUSSIAN_REUSE", "gaussian_equivalent_warning"]

GAUSSIAN_REUSE = 16
r"""The number of uses of a token per weighted position, :math:`N/V = \delta/\gamma`, from which the model's law is
within the resolution of a Monte Carlo at ``d = 2000`` (Kolmogorov distance 0.005, verify.studies.regime) of its
Gaussian equivalent. At one nonzero weight, the worst case (the effective reuse :math:`\lambda\kappa^2/\sum_t w_t^4`
is at least :math:`\lambda`, with equality there), the distance at ``N/V = 16`` is at most 0.0014 on
``delta = 1/64 .. 64`` (largest at ``delta = 4``), and 0.018 at ``N/V = 4`` (tests/test_regime.py); the map over
``T`` and the weights is in notes/finite_vocabulary.md."""


def gaussian_equivalent_warning(m, hint: str = "pass --T and --weights for the model's law") -> str | None:
    r"""The warning attached to a Gaussian-equivalent answer for the model ``m`` (a :class:`derive.Model`, whose
    ``delta, gamma`` were checked when it was built: read as they are; weights unknown), ending with the ``hint`` of
    where the model's own law is, or ``None``.

    >>> from derive import Model
    >>> gaussian_equivalent_warning(Model(delta=1, gamma="1/32")) is None
    True
    >>> gaussian_equivalent_warning(Model(delta=1, gamma=1))[:40]
    'Gaussian-equivalent pooled vectors: with'
    """
    from derive.model.spec import Model

    if not isinstance(m, Model):
        raise ParameterError("model", f"must be a derive.Model, got {type(m).__name__}")
    lam = m.need("delta", "gamma").delta / m.gamma
    if lam >= GAUSSIAN_REUSE:
        return None
    return (f"Gaussian-equivalent pooled vectors: with N/V = delta/gamma = {lam} < {GAUSSIAN_REUSE} uses of a token per "
            "weighted position the model's own law can differ by more than Monte Carlo resolution at d = 2000 "
            f"(an atom at zero, an unbounded right tail, other outliers); {hint}")
