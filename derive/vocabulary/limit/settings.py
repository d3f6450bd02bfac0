r"""The settings of the model's limit (:mod:`derive.vocabulary.limit.outlier`): the sizes of its quenched populations,
its replicas, the imaginary parts on the real axis, the scan, the token spikes' grid, and the tolerances; and how a
coarser error sought scales them down (:meth:`Settings.for_error`)."""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass

import numpy as np

from derive.resources import LIMIT_ERROR

__all__ = ["Settings", "FLOORS", "DEFAULT", "ERROR"]

ERROR = LIMIT_ERROR
"""The default target error (:data:`derive.resources.LIMIT_ERROR`)."""


@dataclass(frozen=True)
class Settings:
    """Tokens per replica; root tokens per average at 16 nonzero weights (:func:`derive.vocabulary.limit.signfield.quenched`;
    :meth:`roots_for` gives more at fewer weights); replicas of the first batch and the most an error target may add
    (``max_replicas`` at :data:`ERROR`, growing as the square of a finer target); the relative imaginary part ``eta``
    on the real axis (``edge_eta`` where the lower end of a gap is sought); the scan's population, root tokens, step
    and floor (the scan stops at ``scan_floor`` times its start, or in the bulk); the token spikes' grid at dimension ``d``
    (:meth:`derive.vocabulary.limit.outlier._Law.tail`): its relative step, the most points it may take on either side
    of the signal, its own populations' tokens at two nonzero weights and the least at more (:meth:`tail_population_for`)
    and root tokens (tilted towards the middle of each band of ``tail_band`` points, drawn once per band: the share of
    tokens above ``t`` is a mean of indicators, and the maps without the rare classes are the population's), the
    solves' tolerance (the grid's maps enter errors of 1e-2 and more: at 1e-6 against 1e-10 they moved by 1e-7
    relative at ``T = 8``, a fifth faster) and replicas; the relative tolerances of the outlier's root and of a gap's
    lower end (:meth:`for_error`)."""

    population: int = 1 << 13
    roots: int = 1 << 16
    replicas: int = 8
    max_replicas: int = 16
    eta: float = 1e-3
    edge_eta: float = 1e-3
    scan_population: int = 1 << 12
    scan_roots: int = 1 << 14
    scan_step: float = 0.025
    scan_floor: float = 1e-3
    tail_step: float = 0.03
    tail_points: int = 200
    tail_population: int = 1 << 13
    tail_least: int = 1 << 11
    tail_roots: int = 1 << 14
    tail_band: int = 4
    tail_tol: float = 1e-6
    tail_replicas: int = 4
    root_rtol: float = 1e-9
    edge_rtol: float = 2e-4

    def for_error(self, error: float | None) -> "Settings":
        r"""The settings for the error sought ``error``: these at :data:`ERROR` or finer (replicas are added there,
        :func:`limit_spike`); at a coarser ``e`` the populations and root tokens divided by :math:`(e/\text{ERROR})^2`
        rounded down to a power of two (three standard errors of ``replicas`` replicas grow as its square root: at
        ``e = 1e-2`` the demo sweep's law gives 1.5e-3 against 3e-4), kept at or above :data:`FLOORS` (a quenched
        population of ``P`` tokens is biased by :math:`O(1/P)`: 3e-4 at ``2^10`` there, against 2^13's), and the root
        sought to ``1e-3 e`` relative (it moves the eigenvalue by :math:`t x'` times that, about a thousandth of ``e``,
        the overlap by as little away from the edge of the gap), and the lower end of a gap to ``edge_rtol`` times
        :math:`e/\text{ERROR}` (``mu2_critical``'s target, ``10 e``, grows as much).

        >>> s = DEFAULT.for_error(1e-2); s.population, s.roots, s.root_rtol
        (1024, 8192, 1e-05)
        >>> DEFAULT.for_error(1e-4) == DEFAULT.for_error(None) == DEFAULT
        True
        """
        if error is None or error <= ERROR:
            return self
        shift = int(np.floor(2 * np.log2(error / ERROR)))
        return dataclasses.replace(self, root_rtol=max(self.root_rtol, 1e-3 * error),
                                   edge_rtol=self.edge_rtol * error / ERROR, **{
            name: max(floor, getattr(self, name) >> shift) for name, floor in FLOORS.items()})

    def roots_for(self, nonzero: int) -> int:
        """Root tokens per average at ``nonzero`` nonzero weights: ``roots`` times 16 over ``nonzero`` rounded up to a
        power of two. A root's children number about ``nonzero`` times the reuse, so the roots cost the same at every
        ``T'``; at few weights they are most of the error where the outlier sits next to a cluster of the law of
        ``D`` (the issue's ``T = 2`` case: 3 standard errors of the overlap 0.03 at 2^16 roots, 0.006 at 2^20)."""
        return self.roots << max(0, 4 - int(np.ceil(np.log2(max(nonzero, 1)))))

    def tail_population_for(self, nonzero: int) -> int:
        r"""Tokens of each population of the token spikes' grid at ``nonzero`` nonzero weights: ``tail_population``
        divided by :math:`(T'/2)^2`, ``T'`` rounded up to a power of two, as a solve's work, :math:`PT'^2` (the field's
        map), grows, and never below ``tail_least``. At two weights the replicas' spread is what the top of the bulk's
        and the threshold's errors are made of (``T = 2``, causal, ``d = 2000``: 0.24 and 0.65 at 2^13 tokens, 0.62 and
        0.94 at 2^11); at four and more their errors are the grid's and the shares' factor of 3, the same at 2^11 as at
        2^12 and 2^13 (``T = 4``: 0.0082 and 0.09), for a quarter of the time.

        >>> [DEFAULT.tail_population_for(n) for n in (1, 2, 3, 4, 16)]
        [8192, 8192, 2048, 2048, 2048]
        """
        shift = 2 * max(0, int(np.ceil(np.log2(max(nonzero, 1)))) - 1)
        return max(self.tail_least, self.tail_population >> shift)


FLOORS = {"population": 1 << 10, "roots": 1 << 13, "scan_population": 1 << 10, "scan_roots": 1 << 12}
"""The least tokens and root tokens a coarser error sought takes (:meth:`Settings.for_error`)."""

DEFAULT = Settings()
