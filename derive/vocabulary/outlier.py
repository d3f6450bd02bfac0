r"""The model's signal outlier in the limit for any weights and sign family: the equations of
:mod:`derive.vocabulary.signal` with the token matrix's two transforms from the quenched cavity populations of
:mod:`derive.vocabulary.signfield`.

*The equations* (:func:`derive.vocabulary.signal.outlier_equations`): with :math:`\zeta = t/\delta`,
:math:`S_0(t) = \frac1\delta(1 + \zeta g_D(\zeta))`, :math:`S_1(t) = \frac1\delta(1 + \zeta h_D(\zeta))`, the outlier is
at a root of :math:`S_1(t) = -1/\mu_2` where :math:`x'(t) > 0`, :math:`x(t) = t(1 - S_0(t))`, at :math:`\ell = x(t)`,
with squared overlap :math:`x'(t)/(\mu_2\,t\,S_1'(t))`.

*The real axis.* At :math:`T' \ge 2` nonzero weights the law of ``D`` has unbounded support with an exponentially thin
tail (tokens seen many times), so a real ``t`` beyond the bulk's main edge lies, strictly, inside the support of the
limit law. The transforms are evaluated at :math:`\zeta = t(1 + i\eta)/\delta` with a small relative :math:`\eta`
(:class:`Settings`) and their real parts taken: the principal value, which differs from it by :math:`O(\eta^2)` where
the law is smooth on the scale :math:`\eta t`. What the thin tail means at dimension ``d`` is stated separately:
the mass of the law above the outlier (``bulk_mass_above``, :mod:`derive.vocabulary.tokentop`; ``d`` times it is the
expected number of bulk eigenvalues above the outlier).

*The search* (one quenched population is a deterministic function of ``t``). :math:`S_1` increases on every interval
free of the law's atoms (:math:`S_1' = \delta^{-2}\int\tau\,d\mu_s(\tau)/(\tau-\zeta)^2 > 0`) and jumps from
:math:`+\infty` to :math:`-\infty` across a cluster of the law (a token seen many times, as at ``T = 1``). A scan on a
geometric grid from above the population-level outlier :math:`t = \alpha(\delta + \mu_2)` downward, on a small
population, finds the sign changes of :math:`S_1 + 1/\mu_2` (splitting an interval where :math:`S_1` rises as ``t``
falls: a cluster lies inside it), down to the main bulk (where the cavity iteration no longer converges or the
imaginary part of :math:`S_0` is not the one :math:`\eta` explains). Roots are refined from the top; the largest with
:math:`x' > 0` (in a gap) is the outlier; a root inside a cluster (:math:`x' \le 0`) is not. The chosen bracket is then
solved on each replica of full size (safeguarded Newton).

*Errors.* The replicas are independent quenched populations: the estimate is their mean, the error three standard
errors of the mean (as :mod:`derive.vocabulary.cavity`). ``mu2_critical`` is :math:`-1/S_1(t_e)` at the lower end
:math:`t_e` of the lowest gap above the main bulk (:math:`x'(t_e) = 0`), or 0 where :math:`S_1(t_e) \ge 0` (``s`` is
then nearly an eigenvector of ``D`` beyond the bulk, and the signal has an outlier at every strength).
"""
from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field

import numpy as np

from derive.errors import ParameterError
from derive.vocabulary import signfield

__all__ = ["Settings", "DEFAULT", "Point", "Curve", "LimitSpike", "limit_spike"]


@dataclass(frozen=True)
class Settings:
    """Tokens per replica, root tokens per average (:func:`derive.vocabulary.signfield.quenched`), replicas, the
    relative imaginary part ``eta`` on the real axis (``edge_eta`` where the lower end of a gap is sought), the scan's
    population, step and floor (the scan stops at ``scan_floor`` times its start, or in the bulk)."""

    population: int = 1 << 15
    roots: int = 1 << 17
    replicas: int = 4
    eta: float = 1e-3
    edge_eta: float = 1e-3
    scan_population: int = 1 << 13
    scan_step: float = 0.025
    scan_floor: float = 1e-3


DEFAULT = Settings()


@dataclass(frozen=True)
class Point:
    r"""The transforms at a real ``t`` (real parts), the imaginary part of :math:`S_0`, whether the solves converged,
    and the mass of the law of ``D`` above :math:`t/\delta`."""

    t: float
    S0: float
    dS0: float
    S1: float
    dS1: float
    im_S0: float
    converged: bool
    eta: float
    above: float

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
        from derive.vocabulary.signal import numeric

        return float(numeric()(self.t, mu2, self.S0, self.dS0, self.dS1)[1])


class Curve:
    """One quenched population as a function of real ``t`` (cached), its roots tilted towards the weighted degree
    ``level`` (:meth:`derive.vocabulary.signfield.Quenched.solve`): the same roots at every ``t``, so that the curve is
    smooth in ``t``."""

    def __init__(self, q: signfield.Quenched, delta: float, eta: float, level: float):
        self.q, self.delta, self.eta, self.level = q, delta, eta, level
        self._cache: dict = {}
        self._solved: dict = {}

    def __call__(self, t: float) -> Point:
        t = float(t)
        if t not in self._cache:
            d = self.delta
            zeta = t * (1 + 1j * self.eta) / d
            near = min(self._solved, key=lambda u: abs(u - t), default=None)
            r = self.q.solve(zeta, self._solved[near] if near is not None else None, self.level)
            self._solved[t] = r
            S0 = (1 + zeta * r.g) / d
            self._cache[t] = Point(t, S0.real, ((r.g + zeta * r.dg) / d**2).real, ((1 + zeta * r.h) / d).real,
                                   ((r.h + zeta * r.dh) / d**2).real, S0.imag, r.converged, self.eta, r.above)
        return self._cache[t]


@dataclass(frozen=True)
class LimitSpike:
    """The signal outlier in the limit: whether it exists, its location and squared overlap with their errors, the
    root ``t``, ``mu2_critical`` with its error, the mass of the law above the outlier (``d`` times it: the expected
    number of bulk eigenvalues above it at dimension ``d``; :mod:`derive.vocabulary.tokentop`), and each replica's
    ``(eigenvalue, overlap)``."""

    outlier: bool
    eigenvalue: float | None
    eigenvalue_error: float | None
    overlap: float
    overlap_error: float | None
    t: float | None
    mu2_critical: float | None
    mu2_critical_error: float | None
    mass_above: float | None
    replicas: tuple = field(default=())


def _spread(values) -> tuple[float, float]:
    """The mean and three standard errors of the mean."""
    v = np.asarray(values, dtype=float)
    if v.size < 2:
        return float(v.mean()), float("inf")
    return float(v.mean()), float(3 * v.std(ddof=1) / np.sqrt(v.size))


def _refine(curve: Curve, target: float, a: float, b: float, rtol: float = 1e-9) -> Point:
    """The root of :math:`S_1 = ` ``target`` in ``[a, b]`` with :math:`S_1(a) < ` target :math:`< S_1(b)`: Newton's
    step where it stays inside the bracket, bisection otherwise, until a step or the bracket is below ``rtol``
    relative; the bracket keeps the sign pattern, so it closes on a root (never on a cluster, where :math:`S_1` falls
    through the target)."""
    tv = b
    p = curve(tv)
    for _ in range(60):
        f = p.S1 - target
        if f < 0:
            a = tv
        else:
            b = tv
        newton = tv - f / p.dS1 if p.dS1 > 0 else None
        if b - a <= rtol * b or (newton is not None and abs(newton - tv) <= rtol * tv):
            break
        tv = newton if newton is not None and a < newton < b else 0.5 * (a + b)
        p = curve(tv)
    return p


def _brackets(curve: Curve, target: float, hi: Point, lo: Point) -> list:
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
    return _brackets(curve, target, hi, mid) + _brackets(curve, target, mid, lo)


def _scan(curve: Curve, t_hi: float, step: float, floor: float) -> list[Point]:
    """Points from ``t_hi`` down by the factor ``1 - step``, until three in a row are inside the bulk (or ``t`` has
    fallen to ``floor`` times ``t_hi``)."""
    points, run, tv = [], 0, t_hi
    while tv > t_hi * floor:
        p = curve(tv)
        points.append(p)
        run = run + 1 if p.inside else 0
        if run >= 3:
            break
        tv *= 1 - step
    return points


def _edge(curve: Curve, below: float, above: float, rtol: float = 1e-5) -> Point:
    """The lower end of a gap, :math:`x'(t_e) = 0`, between ``below`` (moved down until it is not in the gap) and
    ``above`` (moved up until it is): regula falsi (Illinois) on :math:`x'` where both ends are regular, bisection
    otherwise, until the bracket is below ``rtol`` relative."""
    def in_gap(p: Point) -> bool:
        return not p.inside and p.dx > 0

    a, b = curve(below), curve(above)
    for _ in range(20):
        if not in_gap(a):
            break
        a = curve(a.t * 0.95)
    for _ in range(20):
        if in_gap(b):
            break
        b = curve(b.t * 1.05)
    fa, fb, side = a.dx, b.dx, 0
    for _ in range(60):
        if b.t - a.t <= rtol * b.t:
            break
        if not a.inside and fa < 0 < fb:
            tv = (a.t * fb - b.t * fa) / (fb - fa)
        else:
            tv = 0.5 * (a.t + b.t)
        p = curve(tv)
        if in_gap(p):
            b, fb = p, p.dx
            fa, side = (fa / 2 if side == 1 else fa), 1
        else:
            a, fa = p, p.dx
            fb, side = (fb / 2 if side == -1 else fb), -1
    return b


def _lowest_gap(points: list[Point]) -> tuple[Point, Point] | None:
    """Going up from the bottom of the scan, the first pair (a point inside the bulk or with :math:`x' \\le 0`, the next
    one up in a gap)."""
    up = points[::-1]
    for lower, upper in zip(up, up[1:]):
        if (lower.inside or lower.dx <= 0) and not upper.inside and upper.dx > 0:
            return lower, upper
    return None


def limit_spike(delta, gamma, weights, R, mu2, settings: Settings = DEFAULT, threads: int = 2) -> LimitSpike:
    r"""The model's signal outlier in the limit (see the module) for the pooling ``weights`` (``T`` reals, zeros
    allowed) and the sign correlation ``R`` (``T x T``), at ``delta, gamma > 0`` and ``mu2 >= 0`` (reals; exact ones
    are converted). Deterministic: the populations seed themselves from the inputs.

    >>> r = limit_spike(0.25, 1, [1.0], [[1.0]], 3, Settings(population=1 << 12, replicas=2))
    >>> round(r.eigenvalue, 2), round(r.overlap, 2)   # the exact law: 5.8571, 0.4590
    (5.86, 0.46)
    """
    from threadpoolctl import threadpool_limits

    delta, gamma, mu2 = _positive(delta, "delta"), _positive(gamma, "gamma"), float(mu2)
    if not np.isfinite(mu2) or mu2 < 0:
        raise ParameterError("mu2", f"must be a finite real >= 0, got {mu2}")
    try:
        w = np.array([float(v) for v in weights])
        Rf = np.array([[float(v) for v in row] for row in (R.tolist() if hasattr(R, "tolist") else R)])
    except (TypeError, ValueError):
        raise ParameterError("weights", "the weights and R must be real numbers") from None
    if w.ndim != 1 or not np.all(np.isfinite(w)) or not np.any(w != 0):
        raise ParameterError("weights", "must be finite reals, not all zero")
    if Rf.shape != (w.size, w.size) or not np.all(np.isfinite(Rf)):
        raise ParameterError("signs", f"R must be a finite {w.size} x {w.size} matrix")
    keep = w != 0
    alpha = float(w @ Rf @ w)
    with threadpool_limits(1):  # the vectors are small: BLAS threads only contend (a 30-fold slowdown measured)
        return _limit_spike(delta, gamma, w[keep], Rf[np.ix_(keep, keep)], mu2, alpha, settings, threads)


def _positive(value, name: str) -> float:
    v = float(value)
    if not (np.isfinite(v) and v > 0):
        raise ParameterError(name, f"must be a finite real > 0, got {value}")
    return v


def _limit_spike(delta, gamma, weights, R, mu2, alpha, settings, threads) -> LimitSpike:
    if not mu2 > 0:
        return LimitSpike(False, None, None, 0.0, None, None, None, None, None)
    w = np.asarray(weights, dtype=float)
    key = f"{delta!r}|{gamma!r}|{tuple(w.tolist())!r}|{tuple(np.asarray(R, float).ravel().tolist())!r}"
    s = settings
    target = -1 / mu2
    t_pop = max(alpha, 1e-3) * (delta + mu2)  # the population-level outlier (D = kappa I + (alpha - kappa) s s^T / V)
    scan = Curve(signfield.quenched(w, R, delta, gamma, s.scan_population, signfield.replica_seed(key + "|scan", 0),
                                    s.roots // 4), delta, s.eta, t_pop / delta)
    t_hi = 2 * t_pop
    while scan(t_hi).S1 <= target or scan(t_hi).inside:
        t_hi *= 2
    points = _scan(scan, t_hi, s.scan_step, s.scan_floor)
    chosen = None
    for hi, lo in zip(points, points[1:]):
        if hi.inside or lo.inside:
            continue
        for a, b in _brackets(scan, target, hi, lo):
            if _refine(scan, target, a, b).dx > 0:
                chosen = (a, b)
                break
        if chosen:
            break
    gap = _lowest_gap(points)

    def solve(r: int) -> dict:
        q = signfield.quenched(w, R, delta, gamma, s.population, signfield.replica_seed(key, r), s.roots)
        out = {}
        if chosen is not None:
            a, b = chosen
            curve = Curve(q, delta, s.eta, b / delta)
            for _ in range(4):
                if curve(a).S1 < target < curve(b).S1:
                    break
                a, b = a * (1 - s.scan_step), b * (1 + s.scan_step)
            out["root"] = _refine(curve, target, a, b)
        if gap is not None:
            e = _edge(Curve(q, delta, s.edge_eta, gap[1].t / delta), gap[0].t, gap[1].t)
            out["mu2c"] = 0.0 if e.S1 >= 0 else -1 / e.S1
        return out

    with ThreadPoolExecutor(max(1, threads)) as pool:
        found = list(pool.map(solve, range(s.replicas)))
    mu2c = [f["mu2c"] for f in found if "mu2c" in f]
    mu2_critical, mu2_critical_error = _spread(mu2c) if len(mu2c) == len(found) else (None, None)
    if chosen is None:
        return LimitSpike(False, None, None, 0.0, None, None, mu2_critical, mu2_critical_error, None)
    roots = [f["root"] for f in found]
    if min(p.dx for p in roots) <= 0:
        raise ParameterError("mu2", "too close to the edge of a gap for the populations to agree whether the outlier "
                                    "exists")
    ell, ell_err = _spread([p.x for p in roots])
    ov, ov_err = _spread([p.overlap(mu2) for p in roots])
    return LimitSpike(True, ell, ell_err, ov, ov_err, float(np.mean([p.t for p in roots])), mu2_critical,
                      mu2_critical_error, float(np.mean([p.above for p in roots])) / delta,
                      tuple((p.x, p.overlap(mu2)) for p in roots))
