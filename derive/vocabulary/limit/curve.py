r"""The model's limit as a function of real ``t`` along one quenched population, and the searches along it: a
:class:`Point` of the transforms at ``t``, the :class:`Curve` that solves the populations at each ``t`` (each solve
started from the nearest one before), the root of the outlier equation between two points, the edges of a gap, and
the CPU budget every solve is charged to (:mod:`derive.vocabulary.limit.outlier` assembles the outlier from them)."""
from __future__ import annotations

import contextlib
import time
from dataclasses import dataclass, field

import numpy as np

from derive.errors import ParameterError
from derive.vocabulary.limit import signfield
from derive.vocabulary.limit.roottokens import RARE

__all__ = ["Point", "Curve", "spread", "refine", "brackets", "edge", "lowest_gap", "budget"]


@dataclass(frozen=True)
class Point:
    r"""The transforms at a real ``t`` (real parts), the imaginary part of :math:`S_0`, whether the solves converged,
    the mass of the law of ``D`` above :math:`t/\delta`, and per class of root tokens of
    :data:`derive.vocabulary.limit.roottokens.RARE` its share ``(S0, dS0, S1, dS1)`` of the transforms."""

    t: float
    S0: float
    dS0: float
    S1: float
    dS1: float
    im_S0: float
    converged: bool
    eta: float
    above: float
    classes: tuple = field(default=(), compare=False, repr=False)

    @property
    def x(self) -> float:
        return self.t * (1 - self.S0)

    @property
    def dx(self) -> float:
        return 1 - self.S0 - self.t * self.dS0

    @property
    def inside(self) -> bool:
        r"""Inside the bulk's support: the cavity iteration did not converge, or :math:`\operatorname{Im}S_0` is more
        than ten times the :math:`\eta t S_0'` that the imaginary part of ``t`` alone explains in a gap."""
        return not self.converged or self.im_S0 > 10 * self.eta * self.t * abs(self.dS0) + 1e-12

    def overlap(self, mu2: float) -> float:
        from derive.vocabulary.limit.signal import numeric

        return float(numeric()(self.t, mu2, self.S0, self.dS0, self.dS1)[1])

    def without_rare_maps(self, k: int) -> tuple[float, float]:
        r"""``x`` and :math:`S_1` with the root tokens rarer than ``RARE[k]`` left out of the transforms."""
        rare = np.sum(self.classes[k + 1:], axis=0)
        return float(self.t * (1 - (self.S0 - rare[0]))), float(self.S1 - rare[2])

    def without_rare(self, mu2: float, k: int) -> tuple[float, float]:
        r"""The eigenvalue and the overlap with the root tokens rarer than ``RARE[k]`` left out of the transforms,
        the root moved by one Newton step of :math:`S_1 = -1/\mu_2` (:math:`S_0` moved along its slope): what the
        limit owes to tokens a dimension :math:`d \ll \delta/` ``RARE[k]`` does not hold."""
        from derive.vocabulary.limit.signal import numeric

        rare = np.sum(self.classes[k + 1:], axis=0)
        S0, dS0, S1, dS1 = np.array([self.S0, self.dS0, self.S1, self.dS1]) - rare
        step = -(S1 + 1 / mu2) / dS1
        t, S0 = self.t + step, S0 + dS0 * step
        return float(t * (1 - S0)), float(numeric()(t, mu2, S0, dS0, dS1)[1])


class Curve:
    """One quenched population as a function of real ``t`` (cached), its roots tilted towards the weighted degree
    ``level`` (:meth:`derive.vocabulary.limit.signfield.Quenched.solve`): the same roots at every ``t``, so that the
    curve is smooth in ``t``. Each solve starts from the solutions at the nearest ``t`` solved before; ``tol``: the
    solves' relative tolerance (:meth:`~derive.vocabulary.limit.signfield.Quenched.solve`'s default if ``None``)."""

    def __init__(self, q: signfield.Quenched, delta: float, eta: float, level: float, solved: dict | None = None,
                 tol: float | None = None):
        self.q, self.delta, self.eta, self.level, self.tol = q, delta, eta, level, tol
        self._cache: dict = {}
        # solutions to start from, by t: the solutions do not depend on the level (only the roots' averages do)
        self._solved: dict = dict(solved or {})

    def finer(self, factor: float = 4.0) -> "Curve":
        """The same population and roots at ``eta / factor``, each solve started from this curve's nearest solution."""
        other = Curve(self.q, self.delta, self.eta / factor, self.level)
        other._solved = dict(self._solved)
        return other

    def __call__(self, t: float, field: bool = True) -> Point:
        """The :class:`Point` at ``t``; ``field=False`` leaves out the field (``S1, dS1`` NaN), which the gaps' search
        does not need."""
        t = float(t)
        known = self._cache.get(t)
        if known is None or (field and np.isnan(known.S1)):
            d = self.delta
            zeta = t * (1 + 1j * self.eta) / d
            budget.spend()
            near = min(self._solved, key=lambda u: abs(u - t), default=None)
            r = self.q.solve(zeta, self._solved[near] if near is not None else None, self.level, self.tol,
                             with_field=field)
            self._solved[t] = r
            S0 = (1 + zeta * r.g) / d
            shares = tuple((((mass + zeta * g) / d).real, ((g + zeta * dg) / d**2).real,
                            ((mass + zeta * h) / d).real, ((h + zeta * dh) / d**2).real)
                           for mass, g, dg, h, dh in r.classes)
            self._cache[t] = Point(t, S0.real, ((r.g + zeta * r.dg) / d**2).real, ((1 + zeta * r.h) / d).real,
                                   ((r.h + zeta * r.dh) / d**2).real, S0.imag, r.converged, self.eta, r.above, shares)
        return self._cache[t]


def spread(values) -> tuple[float, float]:
    """The mean and three standard errors of the mean."""
    v = np.asarray(values, dtype=float)
    if v.size < 2:
        return float(v.mean()), float("inf")
    return float(v.mean()), float(3 * v.std(ddof=1) / np.sqrt(v.size))


def refine(curve: Curve, target: float, a: float, b: float, rtol: float = 1e-9, start: float | None = None,
           known: bool = True) -> Point:
    """The root of :math:`S_1 = ` ``target`` in ``[a, b]`` with :math:`S_1(a) < ` target :math:`< S_1(b)`: Newton's
    step where it stays inside the bracket, bisection otherwise, until a step or the bracket is below ``rtol``
    relative; the bracket keeps the sign pattern, so it closes on a root (never on a cluster, where :math:`S_1` falls
    through the target). Newton starts from ``start`` where it lies inside the bracket (another population's root),
    else from ``b``. ``known=False``: the bracket is another population's, its sign pattern not checked on this one;
    an end is trusted once a point of this curve confirms it, and until then Newton may step past it, by at most the
    bracket's width (a root just outside it costs a step or two, not a bisection onto the wrong end)."""
    tv = start if start is not None and a < start < b else b
    low_known = high_known = known
    reach = b - a
    p = curve(tv)
    for _ in range(60):
        f = p.S1 - target
        if f < 0:
            a, low_known = tv, True
            if not high_known and b <= a:
                b = a + reach
        else:
            b, high_known = tv, True
            if not low_known and a >= b:
                a = b - reach
        newton = tv - f / p.dS1 if p.dS1 > 0 else None
        if b - a <= rtol * b or (newton is not None and abs(newton - tv) <= rtol * tv):
            break
        if newton is not None and not high_known and newton >= b:
            tv = b = min(newton, b + reach)
        elif newton is not None and not low_known and newton <= a:
            tv = a = max(newton, a - reach)
        else:
            tv = newton if newton is not None and a < newton < b else 0.5 * (a + b)
        p = curve(tv)
    return p


def brackets(curve: Curve, target: float, hi: Point, lo: Point) -> list:
    """The brackets ``(a, b)`` of the roots of :math:`S_1 = ` ``target`` between two scanned points (``lo.t < hi.t``),
    the higher first. :math:`S_1` rising as ``t`` falls means a cluster inside: the interval is split, down to the width
    ``10 eta t`` at which the cluster's pole is resolved (inside it the real part of a pole smoothed by ``eta`` is not
    monotone)."""
    if lo.S1 <= hi.S1:
        return [(lo.t, hi.t)] if lo.S1 < target < hi.S1 else []
    if hi.t - lo.t < 10 * curve.eta * hi.t:
        return []
    mid = curve(0.5 * (lo.t + hi.t))
    if mid.inside:
        return []
    return brackets(curve, target, hi, mid) + brackets(curve, target, mid, lo)


def edge(curve: Curve, below: float, above: float, rtol: float = 2e-4) -> Point:
    """The lower end of a gap, :math:`x'(t_e) = 0`, between ``below`` (moved down until it is not in the gap) and
    ``above`` (moved up until it is): regula falsi (Illinois) on :math:`x'` where both ends are regular, bisection
    otherwise, until the bracket is below ``rtol`` relative. The search needs :math:`x'` only (no field); the returned
    point has the field."""
    def in_gap(p: Point) -> bool:
        return not p.inside and p.dx > 0

    a, b = curve(below, False), curve(above, False)
    for _ in range(20):
        if not in_gap(a):
            break
        a = curve(a.t * 0.95, False)
    for _ in range(20):
        if in_gap(b):
            break
        b = curve(b.t * 1.05, False)
    fa, fb, side = a.dx, b.dx, 0
    for _ in range(60):
        if b.t - a.t <= rtol * b.t:
            break
        if not a.inside and fa < 0 < fb:
            tv = (a.t * fb - b.t * fa) / (fb - fa)
        else:
            tv = 0.5 * (a.t + b.t)
        p = curve(tv, False)
        if in_gap(p):
            b, fb = p, p.dx
            fa, side = (fa / 2 if side == 1 else fa), 1
        else:
            a, fa = p, p.dx
            fb, side = (fb / 2 if side == -1 else fb), -1
    return curve(b.t)


def lowest_gap(points: list[Point]) -> tuple[Point, Point] | None:
    """Going up from the bottom of the scan, the first pair (a point inside the bulk or with :math:`x' \\le 0`, the next
    one up in a gap)."""
    up = points[::-1]
    for lower, upper in zip(up, up[1:]):
        if (lower.inside or lower.dx <= 0) and not upper.inside and upper.dx > 0:
            return lower, upper
    return None


class _Budget:
    """The CPU time the limit may spend: :func:`derive.resources.limit_cpu_budget` of its estimate
    (:func:`derive.resources.limit_seconds`), checked before each solve of the populations (every thread's time
    counts). Where the estimate misses the work (it was measured at a few points), past the budget the answer is
    refused, never awaited."""

    def __init__(self):
        self.deadline, self.what = None, ""

    @contextlib.contextmanager
    def running(self, estimate: float, what: str):
        from derive.resources import limit_cpu_budget

        seconds = limit_cpu_budget(estimate)
        self.deadline, self.what = time.process_time() + seconds, f"{what}: {seconds:.0f}"
        try:
            yield
        finally:
            self.deadline = None

    def spend(self) -> None:
        if self.deadline is not None and time.process_time() > self.deadline:
            raise ParameterError("law", f"the model's own limit did not finish within its budget of CPU-seconds ({self.what}); "
                                        "the paper's law answers at once (--law gaussian-equivalent)")


budget = _Budget()
