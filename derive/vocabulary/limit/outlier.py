r"""The model's signal outlier in the limit for any weights and sign family: the equations of
:mod:`derive.vocabulary.limit.signal` with the token matrix's two transforms from the quenched cavity populations of
:mod:`derive.vocabulary.limit.signfield`.

*The equations* (:func:`derive.vocabulary.limit.signal.outlier_equations`): with :math:`\zeta = t/\delta`,
:math:`S_0(t) = \frac1\delta(1 + \zeta g_D(\zeta))`, :math:`S_1(t) = \frac1\delta(1 + \zeta h_D(\zeta))`, the outlier is
at a root of :math:`S_1(t) = -1/\mu_2` where :math:`x'(t) > 0`, :math:`x(t) = t(1 - S_0(t))`, at :math:`\ell = x(t)`,
with squared overlap :math:`x'(t)/(\mu_2\,t\,S_1'(t))`.

*The real axis.* At :math:`T' \ge 2` nonzero weights the law of ``D`` has unbounded support with an exponentially thin
tail (tokens seen many times), so a real ``t`` beyond the bulk's main edge lies, strictly, inside the support of the
limit law. The transforms are evaluated at :math:`\zeta = t(1 + i\eta)/\delta` with a small relative :math:`\eta`
(:class:`Settings`) and their real parts taken: the principal value, which differs from it by :math:`O(\eta^2)` where
the law is smooth on the scale :math:`\eta t`. What the thin tail means at dimension ``d`` is stated separately:
the mass of the law above the outlier (``bulk_mass_above``, the share of root tokens whose pivot is positive; ``d``
times it is the expected number of bulk eigenvalues above the outlier).

*The search* (one quenched population is a deterministic function of ``t``). :math:`S_1` increases on every interval
free of the law's atoms (:math:`S_1' = \delta^{-2}\int\tau\,d\mu_s(\tau)/(\tau-\zeta)^2 > 0`) and jumps from
:math:`+\infty` to :math:`-\infty` across a cluster of the law (a token seen many times, as at ``T = 1``). A scan on a
geometric grid from above the population-level outlier :math:`t = \alpha(\delta + \mu_2)` downward, on a small
population, finds the sign changes of :math:`S_1 + 1/\mu_2` (splitting an interval where :math:`S_1` rises as ``t``
falls: a cluster lies inside it), down to the main bulk (where the cavity iteration no longer converges or the
imaginary part of :math:`S_0` is not the one :math:`\eta` explains). Roots are refined from the top; the largest with
:math:`x' > 0` (in a gap) is the outlier; a root inside a cluster (:math:`x' \le 0`) is not. The chosen bracket is then
solved on each replica of full size (safeguarded Newton).

*Errors.* The replicas are independent quenched populations, each solved at :math:`\eta` and again at
:math:`\eta/4` (from the first's solutions): the estimate is the mean at :math:`\eta/4`, the error three standard
errors of that mean plus the mean change from :math:`\eta` to :math:`\eta/4`, what the smoothing still holds
(:math:`O(\eta^2)` where the law of ``D`` is smooth on the scale :math:`\eta t`, far more next to a cluster of tokens
used many times, which the error then shows). Replicas are added while that would bring the error to the one sought
within the budget (:func:`limit_spike`). ``mu2_critical`` is :math:`-1/S_1(t_e)` at the lower end :math:`t_e` of the
lowest gap above the main bulk (:math:`x'(t_e) = 0`), or 0 where :math:`S_1(t_e) \ge 0` (``s`` is then nearly an
eigenvector of ``D`` beyond the bulk, and the signal has an outlier at every strength). At more than one nonzero
weight that gap is one at the resolution :math:`\eta` only; where clusters of ever rarer tokens fill it as
:math:`\eta` falls, :math:`t_e` climbs (at ``T = 8``, prefix:3, causal, ``delta = 1/2``, ``gamma = 1/4``:
``mu2_critical`` 0.13, 0.14, 0.16, 0.22 at :math:`\eta` = 1e-3 and a quarter, a sixteenth and a 64th of it, the same on
populations four times larger; notes/finite_vocabulary.md). Where it moves by more than its target over a sixteenth of
:math:`\eta`, the limit's threshold is not defined (``None``, the move in ``mu2_critical_drift``); the threshold a user
meets is the one at their ``d`` (:func:`limit_at_dimension`).

*Rare tokens.* The limit holds every token class, however rare; a class of probability ``p`` appears at dimension
``d`` only where :math:`pd/\delta \gg 1`. Next to a cluster of the law of ``D`` such classes make a large share of
:math:`S_1'` and hence of the overlap (notes/finite_vocabulary.md: a sixth of the overlap at the issue's ``T = 2``
point from tokens of probability below ``1e-4``); ``LimitSpike.rare`` states the eigenvalue and the overlap without
them (:meth:`Point.without_rare`).
"""
from __future__ import annotations

import functools
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field

import numpy as np

from derive.errors import ParameterError
from derive.resources import limit_seconds
from derive.vocabulary.limit import signfield, tokentail
from derive.vocabulary.limit.curve import Curve, Point, brackets, budget, edge, lowest_gap, refine
from derive.vocabulary.limit.replicas import estimate, replicas_needed
from derive.vocabulary.limit.roottokens import RARE, tilt
from derive.vocabulary.limit.settings import DEFAULT, ERROR, FLOORS, Settings

__all__ = ["Settings", "DEFAULT", "ERROR", "FLOORS", "Point", "Curve", "LimitSpike", "limit_spike", "limit_at_dimension"]


DRIFT_STEPS = 3
"""The resolutions of :attr:`LimitSpike.mu2_critical_drift`: ``edge_eta`` divided by 1, 4 and 16."""

@dataclass(frozen=True)
class LimitSpike:
    """The signal outlier in the limit: whether it exists, its location and squared overlap with their errors, the
    root ``t``, ``mu2_critical`` with its error, the mass of the law above the outlier (``d`` times it: the expected
    number of bulk eigenvalues above it at dimension ``d``), each replica's ``(eigenvalue, overlap, t, share)`` (``share``: of the tokens whose spike lies above ``t``), and
    ``rare``:
    for each class bound ``q`` of :data:`derive.vocabulary.limit.roottokens.RARE`, ``(q, eigenvalue, overlap)`` with the
    root tokens rarer than ``q`` left out (:meth:`Point.without_rare`), what a dimension with ``d / delta`` well below
    ``1 / q`` sees of the limit. ``mu2_critical_drift``: at more than one nonzero weight, ``(eta, value)`` of the
    lower end of the gap on the first replica at ``edge_eta`` and at a quarter and a sixteenth of it: where it moves
    by more than the target, ``mu2_critical`` is ``None`` (not defined)."""

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
    rare: tuple = field(default=())
    mu2_critical_drift: tuple = field(default=())


def limit_spike(delta, gamma, weights, R, mu2, settings: Settings | None = None, threads: int = 2,
                error: float | None = ERROR) -> LimitSpike:
    r"""The model's signal outlier in the limit (see the module) for the pooling ``weights`` (``T`` reals, zeros
    allowed) and the sign correlation ``R`` (``T x T``), at ``delta, gamma > 0`` and ``mu2 >= 0`` (reals; exact ones
    are converted). Deterministic: the populations seed themselves from the inputs.

    What does not depend on ``mu2`` is kept for the next call at the same ``delta, gamma, weights, R`` (one such law
    per process, :func:`_law`): the scan and its grid, each replica's population, the lower end of the gap and
    ``mu2_critical``. A sweep's axis of ``mu2`` then pays for them once. A call's numbers do not depend on the calls
    before it beyond the root's tolerance (``settings.root_rtol``): those calls leave only starting points of the same
    solves.

    ``error`` trades time for precision: without ``settings``, a coarser error than :data:`ERROR` takes smaller
    populations (:meth:`Settings.for_error`); replicas are added until three standard errors of the eigenvalue and of the
    overlap are at most ``error`` and that of ``mu2_critical`` at most ``10 * error``, where the replicas' spread says
    that ``settings.max_replicas * max(1, (ERROR / error)**2)`` replicas will do; where they will not, none are added
    (a finer ``error`` raises that budget). The errors stated are those reached. ``error=None`` runs
    ``settings.replicas`` replicas.

    >>> r = limit_spike(0.25, 1, [1.0], [[1.0]], 3, Settings(population=1 << 12, replicas=2), error=None)
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
    error = _error_target(error)
    settings = DEFAULT.for_error(error) if settings is None else settings
    if not mu2 > 0:
        return LimitSpike(False, None, None, 0.0, None, None, None, None, None)
    nonzero, strength = int(keep.sum()), mu2 * alpha / float(w @ w)
    estimate = limit_seconds(nonzero, delta / gamma, strength)
    with threadpool_limits(1), budget.running(estimate, f"{nonzero} nonzero weights, reuse N/V = {delta / gamma:.6g}, "
                                                        f"mu2 alpha/kappa = {strength:.6g}"):
        # the vectors are small: BLAS threads only contend (a 30-fold slowdown measured)
        law = _law(delta, gamma, tuple(w[keep].tolist()), tuple(map(tuple, Rf[np.ix_(keep, keep)].tolist())), alpha,
                   settings, max(1, threads), error)
        return law.spike(mu2)


def limit_at_dimension(delta, gamma, weights, R, mu2, d, settings: Settings | None = None, threads: int = 2,
                       error: float | None = ERROR) -> dict:
    r"""What a user measures at dimension ``d`` (:math:`V = d/\delta` tokens) from the limit's law of token spikes
    (:mod:`derive.vocabulary.limit.tokentail`): each of :data:`derive.vocabulary.draw.values.FIELDS` as ``(mean,
    error, se)``, ``se`` the replicas' standard error. The limit (:func:`limit_spike`, same arguments) is computed or
    reused first; the grid of the token spikes is kept with it for the next ``d``.

    >>> r = limit_at_dimension(1, 1, [1.0], [[1.0]], 6, 10**6, Settings(population=1 << 12, replicas=2), error=None)
    >>> round(r["on_top"][0], 3)   # exp(-d m): the exact law's 0.3246
    0.325
    """
    from threadpoolctl import threadpool_limits

    settings = DEFAULT.for_error(_error_target(error)) if settings is None else settings
    spike = limit_spike(delta, gamma, weights, R, mu2, settings, threads, error)
    try:
        d = float(d)
    except (TypeError, ValueError):
        raise ParameterError("d", f"must be a real >= 1, got {d!r}") from None
    if not (np.isfinite(d) and d >= 1):
        raise ParameterError("d", f"must be a real >= 1, got {d}")
    delta, gamma, mu2 = float(delta), float(gamma), float(mu2)
    w = np.array([float(v) for v in weights])
    Rf = np.array([[float(v) for v in row] for row in (R.tolist() if hasattr(R, "tolist") else R)])
    keep = w != 0
    alpha = float(w @ Rf @ w)
    nonzero, strength = int(keep.sum()), mu2 * alpha / float(w @ w)
    # the grid costs about what the limit did: a few tens of solves on each replica
    estimate = 2 * limit_seconds(nonzero, delta / gamma, strength)
    with threadpool_limits(1), budget.running(estimate, f"the token spikes at d = {d:.6g}, {nonzero} nonzero weights"):
        law = _law(delta, gamma, tuple(w[keep].tolist()), tuple(map(tuple, Rf[np.ix_(keep, keep)].tolist())), alpha,
                   settings, max(1, threads), _error_target(error))
        V = d / delta
        replicas = min(settings.tail_replicas, len(spike.replicas)) if spike.outlier else settings.tail_replicas
        t_signal = float(np.mean([r[2] for r in spike.replicas])) if spike.outlier else law.t0
        grid = law.tail(V, t_signal, replicas)
        if spike.outlier:
            ends = [law.shares(u, replicas) for u in tokentail.window(grid, t_signal, spike.eigenvalue, V)]
    if spike.outlier:
        signal = {"t": [r[2] for r in spike.replicas], "above": [r[3] for r in spike.replicas],
                  "window": list(zip(*ends)),
                  "ell": [r[0] for r in spike.replicas], "overlap": [r[1] for r in spike.replicas],
                  "rare": spike.rare, "ell_error": spike.eigenvalue_error, "overlap_error": spike.overlap_error,
                  "counts": float(tilt(delta / gamma, gamma / delta * law.w**2, t_signal / delta).sum())}
    else:
        signal = None
    return tokentail.at_dimension(grid, signal, d, delta, gamma, mu2,
                                  1.0 if nonzero == 1 else tokentail.SHARE_FACTOR)


def _error_target(error) -> float | None:
    if error is None:
        return None
    try:
        e = float(error)
    except (TypeError, ValueError):
        raise ParameterError("error", f"must be a real > 0, got {error!r}") from None
    if not (np.isfinite(e) and e > 0):
        raise ParameterError("error", f"must be a finite real > 0, got {error!r}")
    return e


def _positive(value, name: str) -> float:
    v = float(value)
    if not (np.isfinite(v) and v > 0):
        raise ParameterError(name, f"must be a finite real > 0, got {value}")
    return v


@functools.lru_cache(maxsize=1)
def _law(delta, gamma, w: tuple, R: tuple, alpha, settings, threads, error) -> "_Law":
    """The :class:`_Law` of the last inputs asked for: a sweep asks for the points of one law's ``mu2`` axis in a row
    (:func:`verify.sweeps.report.model_limits`); one is kept, since its populations and solutions take megabytes."""
    return _Law(delta, gamma, np.array(w), np.array(R), alpha, settings, threads, error)


class _Law:
    r"""What the outliers at every ``mu2`` share at one ``delta, gamma``, weights and ``R``: the scan's population on a
    geometric grid of ``t`` anchored at :math:`t_0 = \alpha\delta` (the population-level outlier at ``mu2 = 0``),
    whatever ``mu2`` asks for it, with its roots tilted towards :math:`t_0/\delta`; each replica's population; and
    for each lower end of a gap the scan finds, ``mu2_critical`` from the replicas (its own number of them: those its
    error target asks for, none beyond the first batch where the change from :math:`\eta` to :math:`\eta/4`, rare
    clusters at the main edge moving the end with the resolution, keeps the target out of the budget's reach). Each
    ``mu2`` then refines its own root on the scan and on the replicas (as many as the eigenvalue's and the overlap's
    error targets ask for), each replica started from its solution at the ``mu2`` asked for before."""

    def __init__(self, delta, gamma, w, R, alpha, settings, threads, error):
        self.delta, self.w, self.R, self.settings, self.threads, self.error = delta, w, R, settings, threads, error
        self.key = f"{delta!r}|{gamma!r}|{tuple(w.tolist())!r}|{tuple(R.ravel().tolist())!r}"
        s = settings
        self.gamma = gamma
        self.t0 = max(alpha, 1e-3) * delta
        self.scan = Curve(signfield.quenched(w, R, delta, gamma, s.scan_population,
                                             signfield.replica_seed(self.key + "|scan", 0), s.scan_roots),
                          delta, s.eta, self.t0 / delta)
        self.most = s.replicas if error is None else max(
            s.replicas, int(np.ceil(s.max_replicas * max(1.0, (ERROR / error) ** 2))))
        self._populations: dict = {}
        self._edges: dict = {}
        self._starts: dict = {}
        self._roots: dict = {}
        self._spikes: dict = {}
        self._tail: dict = {}
        self._tail_pops: dict = {}
        self._tail_start: dict = {}

    def population(self, r: int) -> signfield.Quenched:
        if r not in self._populations:
            s = self.settings
            self._populations[r] = signfield.quenched(self.w, self.R, self.delta, self.gamma, s.population,
                                                      signfield.replica_seed(self.key, r), s.roots_for(self.w.size))
        return self._populations[r]

    def _grid(self, j: int) -> float:
        return self.t0 * (1 - self.settings.scan_step) ** j

    def _points(self, target: float, t_pop: float) -> list[Point]:
        """The scan for ``target``: from the first grid point at or above ``2 t_pop`` (raised by factors of 2 until
        :math:`S_1` there is above the target, outside the bulk) down by the factor ``1 - scan_step``, until three in
        a row are inside the bulk (or ``t`` has fallen to ``scan_floor`` times the start). Below the first point under
        the target no field is solved (the gaps need :math:`x'` alone; :meth:`_spike` solves it where it seeks a root
        there): 50 of the 77 points at issue 42's ``T = 8`` model, a third of the scan's time."""
        s = self.settings
        down = np.log1p(-s.scan_step)
        j = int(np.floor(np.log(2 * t_pop / self.t0) / down))
        double = int(np.ceil(np.log(2) / -down))
        while self.scan(self._grid(j)).S1 <= target or self.scan(self._grid(j)).inside:
            j -= double
        t_hi = self._grid(j)
        points, run, field = [], 0, True
        while self._grid(j) > t_hi * s.scan_floor:
            p = self.scan(self._grid(j), field=field)
            field = field and not p.S1 < target
            points.append(p)
            run = run + 1 if p.inside else 0
            if run >= 3:
                break
            j += 1
        return points

    def _replicated(self, solve) -> list[dict]:
        """``solve(r)`` on the replicas ``0, 1, ...``: ``settings.replicas`` of them, then as many more as the error
        target asks for (:func:`~derive.vocabulary.limit.replicas.replicas_needed`) within the budget."""
        found: list = []
        wanted = self.settings.replicas
        with ThreadPoolExecutor(self.threads) as pool:
            while True:
                found += pool.map(solve, range(len(found), wanted))
                needed = replicas_needed(found, self.error, self.most)
                if needed <= len(found) or len(found) >= self.most:
                    return found
                wanted = min(self.most, max(needed, len(found) + min(self.threads, 2)))

    def _critical(self, gap: tuple[Point, Point]) -> tuple:
        r"""``mu2_critical``, its error and its drift (:attr:`LimitSpike.mu2_critical_drift`) at the lower end of the
        gap bracketed by ``gap``, once per gap. At one nonzero weight the gaps between the law's atoms are the limit's
        own: the replicas' estimate, each replica's edge at ``edge_eta`` and a quarter of it. At more, the limit law of
        ``D`` has unbounded support, and a gap above its main bulk is one at the resolution :math:`\eta`: where
        clusters of ever rarer tokens fill it as :math:`\eta` falls, its lower end climbs. The first replica's at
        ``edge_eta``, a quarter and a sixteenth of it decides: where it moves by more than ``mu2_critical``'s target
        (ten times the error sought), ``mu2_critical`` is ``None`` (not defined); else the replicas' estimate at a
        quarter of ``edge_eta``, each other replica's edge sought there alone, next to the first one's (half the
        solves), the first one's change from ``edge_eta`` standing for the smoothing part: it bounds the bias three to
        fifteen times over (:math:`O(\eta)` to :math:`O(\eta^2)`), more than the replicas' changes differ (1.6e-5 to
        2.4e-5 on three replicas of 2^10 tokens at issue 42's ``T = 4`` model, three standard errors 1.3e-3); its
        error raised by the last step's move (the next resolution's)."""
        key = (gap[0].t, gap[1].t)
        if key not in self._edges:
            s, delta = self.settings, self.delta
            near = s.scan_step / 5

            def ladder(q: signfield.Quenched, steps: int) -> list[Point]:
                curve = Curve(q, delta, s.edge_eta, gap[1].t / delta)
                ends = [edge(curve, gap[0].t, gap[1].t, s.edge_rtol)]
                for _ in range(steps - 1):
                    curve = curve.finer()
                    ends.append(edge(curve, ends[-1].t * (1 - near), ends[-1].t, s.edge_rtol))
                return ends

            def value(end: Point) -> float:
                return 0.0 if end.S1 >= 0 else -1 / end.S1

            if self.w.size == 1:
                drift, resolutions = (), ()
                found = self._replicated(lambda r: {"mu2c": tuple(map(value, ladder(self.population(r), 2)))})
            else:
                first = ladder(self.population(0), DRIFT_STEPS)
                drift = tuple(map(value, first))
                resolutions = tuple((s.edge_eta / 4**k, v) for k, v in enumerate(drift))

                def fine(r: int) -> dict:
                    if r == 0:
                        return {"mu2c": drift[:2]}
                    curve = Curve(self.population(r), delta, s.edge_eta / 4, gap[1].t / delta)
                    v = value(edge(curve, first[1].t * (1 - near), first[1].t * (1 + near), s.edge_rtol))
                    return {"mu2c": (v + drift[0] - drift[1], v)}  # the first replica's smoothing part

                found = None if abs(drift[-1] - drift[0]) > 10 * (self.error or ERROR) else self._replicated(fine)
            if found is None:
                self._edges[key] = (None, None, resolutions)
            else:
                mu2c, error = estimate([f["mu2c"] for f in found])
                self._edges[key] = (mu2c, error + (abs(drift[-1] - drift[-2]) if drift else 0.0), resolutions)
        return self._edges[key]

    def spike(self, mu2: float) -> LimitSpike:
        if mu2 not in self._spikes:
            self._spikes[mu2] = self._spike(mu2)
        return self._spikes[mu2]

    def _spike(self, mu2: float) -> LimitSpike:
        s, delta, scan = self.settings, self.delta, self.scan
        target = -1 / mu2
        # the population-level outlier (D = kappa I + (alpha - kappa) s s^T / V)
        points = self._points(target, self.t0 / delta * (delta + mu2))
        chosen = None
        for hi, lo in zip(points, points[1:]):
            if hi.inside or lo.inside:
                continue
            for a, b in brackets(scan, target, scan(hi.t), scan(lo.t)):
                p = refine(scan, target, a, b, s.root_rtol)
                if p.dx > 0:
                    chosen = (a, b, p.t)
                    break
            if chosen:
                break
        gap = lowest_gap(points)
        mu2_critical, mu2_critical_error, drift = (None, None, ()) if gap is None else self._critical(gap)
        if chosen is None:
            return LimitSpike(False, None, None, 0.0, None, None, mu2_critical, mu2_critical_error, None,
                              mu2_critical_drift=drift)

        def solve(r: int) -> dict:
            a, b, start = chosen
            if r in self._roots:
                # this replica's root at the mu2 before, moved as the scan's root moved: a start a step or two from it
                scan_before, before = self._roots[r]
                start = before * start / scan_before
                a, b = min(a, start - (b - a)), max(b, start + (b - a))
            curve = Curve(self.population(r), delta, s.eta, b / delta, self._starts.get(r))
            coarse = refine(curve, target, a, b, s.root_rtol, start, known=False)
            if not abs(coarse.S1 - target) <= max(1e-6 * abs(target), 10 * s.root_rtol * coarse.t * abs(coarse.dS1)):
                # this population's root left the scan's bracket: widen it until it holds the root again
                for _ in range(4):
                    if curve(a).S1 < target < curve(b).S1:
                        break
                    a, b = a * (1 - s.scan_step), b * (1 + s.scan_step)
                coarse = refine(curve, target, a, b, s.root_rtol, start, known=False)
            fine = refine(curve.finer(), target, coarse.t * (1 - s.scan_step), coarse.t * (1 + s.scan_step),
                          s.root_rtol, coarse.t, known=False)
            # the next mu2 starts from this root's solution (one kept: each holds four arrays of the population)
            self._starts[r] = {coarse.t: curve._solved[coarse.t]}
            self._roots[r] = (chosen[2], coarse.t)
            return dict(ell=(coarse.x, fine.x), overlap=(coarse.overlap(mu2), fine.overlap(mu2)), t=fine.t,
                        dx=min(coarse.dx, fine.dx), above=fine.above,
                        rare=[fine.without_rare(mu2, k) for k in range(len(RARE))])

        found = self._replicated(solve)
        if min(f["dx"] for f in found) <= 0:
            raise ParameterError("mu2", "too close to the edge of a gap for the populations to agree whether the "
                                        "outlier exists")
        ell, ell_err = estimate([f["ell"] for f in found])
        ov, ov_err = estimate([f["overlap"] for f in found])
        rare = tuple((q, *np.mean([f["rare"][k] for f in found], axis=0).tolist()) for k, q in enumerate(RARE))
        return LimitSpike(True, ell, ell_err, ov, ov_err, float(np.mean([f["t"] for f in found])), mu2_critical,
                          mu2_critical_error, float(np.mean([f["above"] for f in found])) / delta,
                          tuple((f["ell"][1], f["overlap"][1], f["t"], f["above"]) for f in found), rare, drift)

    def tail(self, V: float, t_signal: float, replicas: int) -> tokentail.TailGrid:
        r"""The :class:`~derive.vocabulary.limit.tokentail.TailGrid` that ``V`` tokens need, on the first ``replicas``
        replicas: the points :math:`t_0(1 + \text{tail\_step})^j` from the lowest whose share of tokens above is below
        the classes kept at ``V`` (:func:`~derive.vocabulary.limit.tokentail.kept_class`), where the cavity
        iteration converges and ``x`` rises with ``t`` (outside the main bulk), up to where ``V`` times it is below
        :data:`~derive.vocabulary.limit.tokentail.NEGLIGIBLE`, at least past the signal's root ``t_signal``; each point
        solved once per replica and kept for other ``V``."""
        keep = RARE[tokentail.kept_class(V)]
        most = self.settings.tail_points
        j0 = int(np.floor(np.log(t_signal / self.t0) / np.log1p(self.settings.tail_step)))

        def clear(j: int) -> bool:  # replica 0 sets the range: above the classes kept, outside the main bulk
            p = self._tail_point(0, j)
            return p.above < keep and p.converged

        def rising(j: int) -> bool:  # outside the support (Silverstein and Choi); at T = 16 it converges inside too
            return self._tail_point(0, j - 1).x < self._tail_point(0, j).x

        lo = j0
        if clear(lo):
            while lo > j0 - most and clear(lo - 1) and rising(lo):
                lo -= 1
        else:
            while lo < j0 + most and not clear(lo):
                lo += 1
        # the grid starts at the main bulk where the point below is in it, not above a class of tokens
        edge = lo > j0 - most and self._tail_point(0, lo - 1).above < keep
        hi = max(lo, j0 + 1)
        while hi < lo + most and V * self._tail_point(0, hi).above >= tokentail.NEGLIGIBLE:
            hi += 1
        js = range(lo, hi + 1)
        with ThreadPoolExecutor(self.threads) as pool:
            points = list(pool.map(lambda r: [self._tail_point(r, j) for j in js], range(replicas)))
        shares = np.array([[p.above for p in row] for row in points])
        rest = [[[p.without_rare_maps(k) for k in range(len(RARE))] for p in row] for row in points]
        return tokentail.TailGrid(np.array([self._tail_t(j) for j in js]), shares,
                                  np.array([[[m[0] for m in col] for col in row] for row in rest]),
                                  np.array([[[m[1] for m in col] for col in row] for row in rest]), edge)

    def shares(self, t: float, replicas: int) -> list[float]:
        """Each replica's share of tokens whose spike lies above ``t`` (its roots tilted towards it; kept)."""
        def one(r: int) -> float:
            key = (r, float(t))
            if key not in self._tail:
                curve = Curve(self._tail_population(r), self.delta, self.settings.eta, t / self.delta,
                              self._tail_start.get(r))
                self._tail[key] = curve(t, False)
            return self._tail[key].above

        with ThreadPoolExecutor(self.threads) as pool:
            return list(pool.map(one, range(replicas)))

    def _tail_population(self, r: int) -> signfield.Quenched:
        r"""The tail's replica ``r``: a population of its own (:meth:`~derive.vocabulary.limit.settings.Settings.
        tail_population_for` tokens, ``tail_roots`` root tokens), smaller than the limit's at more than two nonzero
        weights. Its shares of tokens above ``t`` are trusted only to a factor of 3 there
        (:data:`~derive.vocabulary.limit.tokentail.SHARE_FACTOR`), and its maps ``x`` and :math:`S_1` enter the top of
        the bulk and the threshold at errors of 1e-2 and more; they stay within their replicas' three standard errors
        of the limit's at the signal's root, where a bias of order :math:`1/P` would show (``tests/test_tokentail.py``;
        at the T = 2, 4, 5, 8 and 16 models of ``notes/benchmarks.md`` the largest difference was 0.7 of them)."""
        if r not in self._tail_pops:
            s = self.settings
            self._tail_pops[r] = signfield.quenched(self.w, self.R, self.delta, self.gamma,
                                                    s.tail_population_for(self.w.size),
                                                    signfield.replica_seed(self.key + "|tail", r), s.tail_roots)
        return self._tail_pops[r]

    def _tail_t(self, j: int) -> float:
        return self.t0 * (1 + self.settings.tail_step) ** j

    def _tail_point(self, r: int, j: int) -> Point:
        """Replica ``r``'s :class:`Point` at the tail's grid point ``j``, its roots tilted towards the middle of its
        band of ``tail_band`` points (kept; each solve starts from the replica's last one)."""
        key = (r, j)
        if key not in self._tail:
            t = self._tail_t(j)
            band = self.settings.tail_band
            level = self._tail_t(band * (j // band) + (band - 1) / 2) / self.delta
            curve = Curve(self._tail_population(r), self.delta, self.settings.eta, level, self._tail_start.get(r),
                          self.settings.tail_tol)
            self._tail[key] = curve(t)
            self._tail_start[r] = {t: curve._solved[t]}
        return self._tail[key]
