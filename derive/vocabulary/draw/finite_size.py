r"""The model at the user's dimension ``d``: over sampled token matrices, whether the signal's outlier stands above the
whole bulk, and its eigenvalue, overlap and threshold.

*Why the limit is not enough.* At fixed ``T`` a token used many times is a spike of the token matrix
:math:`D = \frac VN AA^\top` (:mod:`derive.vocabulary.draw.spectrum`): one eigenvalue of the noise part
:math:`B = \frac1V ZDZ^\top` of ``S`` standing above the rest. The most used token of ``V = d/\delta`` is used about
:math:`\log V/\log\log V` times, so the top of the bulk grows with ``d`` (at ``T = 1``:
:mod:`derive.vocabulary.limit.topbulk`) and the smallest :math:`\mu_2` at which the signal's eigenvalue stands above it
creeps up with ``d``, away from the limit's.

*One draw* (:func:`draw_outlier`), from the exact spectral measures of its ``D`` (atoms :math:`c_i`, masses
:math:`p_i` over all directions, :math:`q_i` along the class signs ``s``), whose deterministic equivalents are exact up
to :math:`O(1/d)` given ``D``:

* atoms leave the bulk as the spikes of ``D`` (single eigenvalues standing apart; :attr:`SpectralMeasures.spikes`) and
  as the runs of clusters at its top that hold fewer than :data:`TW_RUN` eigenvalues (at ``T = 1``, the few tokens
  used most, equally often). Such an atom is a *token spike* when its eigenvectors are localized on a few tokens,
  :math:`q_a/p_a = O(1)`: part of the noise, its eigenvalue of ``S`` at :math:`x(c_a)`. It is *aligned* when
  :math:`q_a/p_a = O(V)` (``D``'s own outlier along ``s``, strong sign correlations): it carries the signal. The cut
  is :math:`q_a/p_a = V^{1/2}` (:data:`ALIGNED`); measured, token spikes have :math:`q_a/p_a` of 0.2 to 7 and aligned
  ones about ``0.6 V`` at ``V = 1200``. The raw ``D``'s mean eigenvalue (eigenvector :math:`\approx\mathbf 1/\sqrt V`)
  is neither: the raw ``S``'s mean outlier, left aside as in the limit.
* The *top of the bulk* is :math:`x(t_\text{top})`, :math:`t_\text{top}` the larger of the bulk's right edge
  :math:`t_e` (where :math:`x' = 0`) and the largest token spike; :math:`x(t) = t(1 - S_0(t))` with :math:`S_0` of the
  bulk. At the soft edge its mean is lower by the Tracy–Widom shift :math:`E[\mathrm{TW}_1](Kd)^{-2/3}`
  (:mod:`derive.vocabulary.draw.tracywidom`; ``K`` from the square root of the density there), about 0.02 at
  ``d = 1000``, which Monte Carlo resolves (:attr:`DrawOutlier.expected_top`).
* The *threshold*: the signal's root of :math:`\tilde S_1(t) = -1/\mu_2`, :math:`\tilde S_1` the transform along ``s``
  of the bulk and the aligned spikes (:func:`derive.vocabulary.limit.signal.outlier_equations`), lies above
  :math:`t_\text{top}` iff :math:`\mu_2 > \mu_{2,c}`, where (:func:`threshold`)

  .. math:: \mu_{2,c} = -\frac1{\tilde S_1(t_\text{top})}

  (:math:`\tilde S_1` increases from :math:`\tilde S_1(t_\text{top}) < 0` to 0 above :math:`t_\text{top}`), or
  :math:`\mu_{2,c} = 0` where an aligned spike lies above :math:`t_\text{top}`.
* The *top eigenpair* at :math:`\mu_2` (:meth:`DrawOutlier.at`): the largest root of the whole
  :math:`S_1(t) = -1/\mu_2` (token spikes included: each a pole of weight :math:`O(1/V)`), at :math:`\ell = x(t)` with
  squared overlap :math:`x'(t)/(\mu_2 tS_1'(t))`. Far above :math:`\mu_{2,c}` it is the signal's outlier, far below a
  token's eigenvector with an overlap :math:`O(\mu_2/V)`; where the signal passes a token spike the two mix over a
  window of :math:`\mu_2` of order :math:`V^{-1/2}`.

*Over draws* (:func:`finite_size`): ``draws`` token matrices sampled from the model (sign vectors of the family,
tokens uniform in their class; :func:`derive.vocabulary.draw.sampling.sample_token_matrix`), seeded by ``seed``: the probability that the signal's
outlier stands above the bulk, the mean and spread of the top eigenvalue (over the draws that have the outlier), of the
squared overlap of the top eigenvector with ``u`` (over all draws), of :math:`\mu_{2,c}` and of the top of the bulk.
Each draw's ``D`` gives its eigenvalues and the weights of ``s`` and :math:`\mathbf 1` on them (the smaller of
:math:`AA^\top` and :math:`A^\top A`, cost :math:`\min(V, N)^3`, without the eigenvectors past :data:`CARRIED_WORK`;
a diagonal ``D``, one nonzero weight, costs :math:`O(V)`), on :data:`THREADS` threads with one BLAS thread each, so
the numbers do not depend on the machine's threads.

*What is exact.* Given ``D``, each draw's numbers are deterministic equivalents, exact up to :math:`O(d^{-1/2})` for
that draw with mean error :math:`O(1/d)`. The threshold of one draw is sharp only in that sense: at finite ``d`` the
transition at a soft edge spreads over the critical window, :math:`O(d^{-1/3})` in :math:`\mu_2` (Baik, Ben Arous and
Péché 2005), where Monte Carlo's top eigenvector gains overlap before :math:`\mu_{2,c}`; ``notes/finite_vocabulary.md``
compares all of it with Monte Carlo of the model.
"""
from __future__ import annotations

import math
import numbers
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from functools import lru_cache

import numpy as np

from derive.cache import mpmath_functions
from derive.errors import ParameterError
from derive.resources import DRAWS, MAX_DRAWS, SEED
from derive.vocabulary.draw.outliers import edge_curvature, increasing_root
from derive.vocabulary.draw.sampling import class_signs, model_sizes, sample_token_matrix
from derive.vocabulary.draw.spectrum import (SpectralMeasures, eigen_weights, functions as conditional_functions,
                                             spectral_measures)
from derive.vocabulary.draw.tracywidom import tracy_widom_moments

__all__ = ["THREADS", "MAX_EXACT", "MAX_WORK", "CARRIED_WORK", "MAX_TOKENS", "TW_RUN", "ALIGNED", "threshold",
           "check_sizes", "DrawOutlier", "draw_outlier", "Spread", "FiniteSize", "SampledDraws", "sample_draws",
           "finite_size", "formulas"]

THREADS = 2
"""Draws computed side by side (each with one BLAS thread; LAPACK releases the GIL)."""

MAX_EXACT = 4000
r"""Largest :math:`\min(V, N)` whose ``D`` is eigen-decomposed (about 13 s a draw on one core of this machine, and
:math:`\min(V, N)^2` doubles of memory a thread)."""

MAX_WORK = 4096 * 1000**3
r"""Most :math:`\text{draws}\cdot\min(V, N)^3` of one call (4096 draws at :math:`\min(V, N) = 1000`, 64 at 4000): about a
quarter of an hour on two cores."""

CARRIED_WORK = 10**9
r"""Fewest :math:`\text{draws}\cdot\min(V, N)^3` of one call whose draws take the eigenvalues and the two vectors'
weights without the eigenvectors (:func:`derive.vocabulary.draw.eigenweights.spectral_weights`) instead of NumPy's
``eigh`` (:func:`derive.vocabulary.draw.spectrum.eigen_weights`): that saves about :math:`9\cdot 10^{-11}n^3` CPU-s a
draw (0.06 s at :math:`n = 870`) and costs the loading of SciPy's LAPACK, about 0.06 CPU-s, once."""

MAX_TOKENS = 10**8
"""Most tokens (``N T``) of one sampled token matrix."""

TW_RUN = 50
"""Fewest eigenvalues (its atoms' mass times ``V``) of a run of clusters at the top of the bulk that stays in the bulk,
whose top is then on the Tracy–Widom scale; a smaller run (at ``T = 1``, the few tokens used most, and equally often)
is a set of token spikes, its eigenvalues at :math:`x(c_a)`, with an error :math:`O(d^{-1/2})` on the top."""

ALIGNED = 0.5
r"""An atom out of the bulk carries the signal when :math:`q_a/p_a > V^{\text{ALIGNED}}` (for a single eigenvector
:math:`\phi_a`, :math:`q_a/p_a = (s^\top\phi_a)^2`; module docstring): :math:`O(1)` for eigenvectors localized on a few
tokens, :math:`O(V)` for one aligned with ``s``."""


def _expressions() -> dict:
    """The SymPy expression of :func:`threshold` (only when the derivation cache does not hold it)."""
    import sympy as sp

    from derive.symbols import mu2
    from derive.vocabulary.limit.signal import S1, outlier_equations

    s1 = sp.Symbol("s1")
    (root,) = sp.solve(outlier_equations()["equation"].subs(S1, s1), mu2)
    return {"threshold": ((s1,), root)}


@lru_cache(maxsize=None)
def _functions() -> dict:
    return mpmath_functions("finite_size", ("threshold",), _expressions)


def threshold(s1) -> float:
    r"""The signal strength at which the root of :math:`S_1(t) = -1/\mu_2` (:func:`derive.vocabulary.limit.signal.outlier_equations`)
    reaches a point where :math:`S_1 = s_1 < 0`: :math:`\mu_2 = -1/s_1`, solved by SymPy from the equation.

    >>> threshold(-0.25)
    4.0
    """
    return float(_functions()["threshold"](float(s1)))


def formulas() -> list:
    from derive.symbols import Formula, named
    from derive.vocabulary.limit.signal import S1, t

    ((s1,), root), = _expressions().values()
    top = named("t_top", r"t_{\mathrm{top}}")
    assumptions = (r"the model's own $S$ at dimension $d$, given the token matrix $D$: $S_1$ along the class signs of "
                   r"the bulk and of the spikes of $D$ aligned with them, $t_{\mathrm{top}}$ the larger of the bulk's "
                   r"right edge and the largest token spike; the signal's outlier is the top eigenvalue of $S$ iff "
                   r"$\mu_2 > \mu_{2,c}$")
    return [Formula("the signal's threshold at dimension d, given D", root.subs(s1, S1.subs(t, top)), assumptions,
                    "derive/vocabulary/draw/finite_size.py:threshold", lhs=named("mu2_c", r"\mu_{2,c}"), claim="C2-C4")]


# ----------------------------------------------------------------------------------------------
# the sizes one call can meet


def check_sizes(d: int, V: int, N: int, T: int, draws: int, diagonal: bool) -> None:
    """Refuse what the machine cannot meet, naming ``d`` or ``draws``: ``draws`` in ``[1, MAX_DRAWS]``, at most
    :data:`MAX_TOKENS` tokens, and, unless ``D`` is diagonal (one nonzero weight), :math:`\\min(V, N)` at most
    :data:`MAX_EXACT` and :math:`\\text{draws}\\cdot\\min(V, N)^3` at most :data:`MAX_WORK`.

    >>> check_sizes(8000, 16000, 2000, 16, 32, False)
    >>> check_sizes(40000, 80000, 10000, 16, 32, False)
    Traceback (most recent call last):
    ...
    derive.errors.ParameterError: d: min(V, N) = 10000 at d = 40000 exceeds 4000, the largest token matrix diagonalized per draw; lower d
    """
    if isinstance(draws, bool) or not isinstance(draws, numbers.Integral) or not 1 <= draws <= MAX_DRAWS:
        raise ParameterError("draws", f"must be an integer from 1 to {MAX_DRAWS}, got {draws!r}")
    if N * T > MAX_TOKENS:
        raise ParameterError("d", f"N T = {N * T} tokens at d = {d} exceed {MAX_TOKENS}; lower d")
    if diagonal:
        return
    n = min(V, N)
    if n > MAX_EXACT:
        raise ParameterError("d", f"min(V, N) = {n} at d = {d} exceeds {MAX_EXACT}, the largest token matrix "
                                  f"diagonalized per draw; lower d")
    if draws * n**3 > MAX_WORK:
        raise ParameterError("draws", f"{draws} draws of min(V, N) = {n} exceed the work limit: at most "
                                      f"{MAX_WORK // n**3} at d = {d}")


# ----------------------------------------------------------------------------------------------
# one draw


@dataclass(frozen=True)
class DrawOutlier:
    r"""One draw's signal outlier against the top of its bulk (:func:`draw_outlier`): ``top`` (the top eigenvalue of the
    bulk part, :math:`x(t_\text{top})`), ``t_top``, whether it is the bulk's soft ``edge`` (not a token spike or small
    cluster) and the Tracy–Widom ``scale`` :math:`(Kd)^{-2/3}` there, ``mu2_critical`` and, through :meth:`at`, the top
    eigenpair at any :math:`\mu_2`. ``bulk``: the measures of the bulk (for :math:`S_0` and ``x``); ``signal``: those
    of :math:`\tilde S_1` (the bulk and the aligned spikes); ``full``: those of the whole :math:`S_1` (all but the raw
    ``S``'s mean atom); ``t_last``: the largest pole of :math:`S_1` above the bulk's edge ``t_edge``, or ``t_edge``;
    ``gaps``: those of the bulk (:meth:`SpectralMeasures.gaps`, ascending in ``t``, the last ``(t_edge, inf)``)."""

    top: float
    t_top: float
    t_edge: float
    t_last: float
    edge: bool
    scale: float
    mu2_critical: float
    bulk: SpectralMeasures
    signal: SpectralMeasures
    full: SpectralMeasures
    gaps: tuple

    @property
    def expected_top(self) -> float:
        r"""The mean largest eigenvalue of the bulk part given the draw: at a soft edge :math:`x(t_e) +
        E[\mathrm{TW}_1]\,(Kd)^{-2/3}` (:func:`derive.vocabulary.draw.tracywidom.tracy_widom_moments`), at a token spike
        its eigenvalue."""
        return self.top + tracy_widom_moments()[0] * self.scale if self.edge else self.top

    def at(self, mu2: float) -> tuple[bool, float, float]:
        r"""``(outlier, eigenvalue, overlap)`` at signal strength ``mu2``: whether the signal stands above the bulk
        (:math:`\mu_2 > \mu_{2,c}`), the top eigenvalue of ``S`` (after the raw ``S``'s mean outlier) and the squared
        overlap of its eigenvector with ``u``. The top eigenpair is the largest root of the whole :math:`S_1(t) =
        -1/\mu_2`, above its last pole (there is always one) or above the edge (if :math:`S_1(t_e) < -1/\mu_2`); near a
        token spike it mixes the spike and the signal over a window of :math:`\mu_2` of order :math:`V^{-1/2}` (the
        spike's weight along ``s`` is :math:`O(1/V)`). Without a root the top is the bulk's (:attr:`expected_top`),
        with overlap 0."""
        mu2 = float(mu2)
        S1 = self.full.S1
        if not mu2 > 0 or (self.t_last == self.t_edge and S1(self.t_edge) > -1 / mu2):
            return False, self.expected_top, 0.0
        a = self.t_last if self.t_last == self.t_edge else self.t_last * (1 + 1e-14)
        tr = increasing_root(lambda tv: float(S1(tv)) + 1 / mu2, a, math.inf)
        s0, ds0 = self.bulk.S0(tr, 1)
        ds1 = float(S1(tr, 1)[1])
        f = conditional_functions()
        return mu2 > self.mu2_critical, float(f["location"](tr, mu2, s0, ds0, ds1)), \
            float(f["overlap"](tr, mu2, s0, ds0, ds1))


def _peel(m: SpectralMeasures, noise: np.ndarray) -> tuple[np.ndarray, list]:
    """``noise`` less the runs of clusters at the top of its bulk that hold fewer than :data:`TW_RUN` eigenvalues (a few
    tokens used equally often): those are token spikes, many of one value. Returns it with the gaps of its bulk."""
    while True:
        gaps = m.subset(noise).gaps()
        if len(gaps) == 1:
            return noise, gaps
        run = noise & (m.c > gaps[-2][1])
        if m.V * float(np.sum(m.p[run])) >= TW_RUN:
            return noise, gaps
        noise = noise & ~run


def draw_outlier(measures: SpectralMeasures, centered: bool) -> DrawOutlier:
    r"""The :class:`DrawOutlier` of one draw's exact spectral measures (:func:`derive.vocabulary.draw.spectrum.spectral_measures`;
    ``centered``: of :math:`S_c`, without the raw ``S``'s mean atom): the module docstring's top of the bulk and
    threshold. Atoms leave the bulk as spikes (:attr:`SpectralMeasures.spikes`) or in small runs at its top
    (:data:`TW_RUN`); each is aligned with ``s`` when :math:`q_a/p_a > V^{\text{ALIGNED}}`, else a token spike. At the
    soft edge the density is :math:`\rho \approx \frac K\pi\sqrt{x_e - x}` with :math:`K = \sqrt{2/x''(t_e)}/t_e^2`
    (:math:`x(t) \approx x_e + \frac12x''(t_e)(t - t_e)^2` and :math:`\rho = \operatorname{Im}t/(\pi|t|^2)`), so the
    Tracy–Widom scale is :math:`(Kd)^{-2/3}`, :math:`d = \delta V`.

    At :math:`D = I` (``V = 2d``) the bulk is Marchenko–Pastur's with ratio :math:`\delta = 1/2`, right edge
    :math:`(1 + \sqrt\delta)^2` at :math:`t_e = \delta + \sqrt\delta`, where :math:`S_1 = S_0 = -\sqrt\delta/\delta`:
    the threshold is the spiked model's :math:`\sqrt\delta`, and the Tracy–Widom scale Johnstone's (2001) for ``V``
    samples in dimension ``d``, :math:`(1 + \sqrt\delta)(1 + 1/\sqrt\delta)^{1/3}V^{-2/3}`.

    >>> m = SpectralMeasures(np.array([0.5]), np.array([1.0]), np.array([1.0]), np.array([0.0]), 0.5, 2000)
    >>> o = draw_outlier(m, centered=True)
    >>> round(o.top, 10), round(o.mu2_critical, 10), round(0.5 ** 0.5, 10)
    (2.9142135624, 0.7071067812, 0.7071067812)
    >>> round(o.scale * 2000 ** (2 / 3), 10), round((1 + 0.5**0.5) * (1 + 2**0.5) ** (1 / 3), 10)
    (2.2900901702, 2.2900901702)
    >>> o.at(0.5)[0::2], [round(x, 10) for x in o.at(3.0)[1:]]   # above it: the spiked model's outlier and overlap
    ((False, 0.0), [4.6666666667, 0.8095238095])
    """
    m = measures
    V = m.V
    spikes = m.spikes
    mean = int(np.argmax(m.r)) if not centered and m.c.size else None
    if mean not in spikes:
        mean = None
    noise = np.ones(m.c.size, dtype=bool)
    noise[spikes] = False
    noise, gaps = _peel(m, noise)
    others = np.ones(m.c.size, dtype=bool)
    if mean is not None:
        others[mean] = False
    aligned = ~noise & others & (m.q > m.p * V**ALIGNED)
    token = ~noise & others & ~aligned
    bulk, signal, full = m.subset(noise), m.subset(noise | aligned), m.subset(others)
    if not bulk.c.size:
        raise ParameterError("d", f"V = {V} tokens leave no bulk (every eigenvalue of D stands apart): the per-draw "
                                  f"deterministic equivalents do not apply; raise d (or use verify mc)")
    t_edge = gaps[-1][0]
    t_top = max(t_edge, float(m.c[token].max(initial=0.0)))
    t_last = max(t_edge, float(m.c[~noise & others & (m.q > 0)].max(initial=0.0)))
    K = math.sqrt(2 / -edge_curvature(bulk, t_edge)) / t_edge**2
    above = bool(np.any(m.c[aligned] > t_top))
    critical = 0.0 if above else threshold(signal.S1(t_top))
    return DrawOutlier(float(t_top * (1 - bulk.S0(t_top))), float(t_top), float(t_edge), float(t_last),
                       t_top == t_edge and V * float(np.sum(bulk.p)) >= TW_RUN, float((K * m.delta * V) ** (-2 / 3)),
                       critical, bulk, signal, full, tuple(gaps))


# ----------------------------------------------------------------------------------------------
# over draws


@dataclass(frozen=True)
class Spread:
    """The ``mean`` and standard deviation ``sd`` of a quantity over ``n`` draws, and the mean's standard error ``se``."""

    mean: float
    sd: float
    se: float
    n: int

    @classmethod
    def of(cls, values) -> "Spread | None":
        """Of the values (``None`` for none).

        >>> Spread.of([1.0, 2.0, 3.0])
        Spread(mean=2.0, sd=1.0, se=0.5773502691896258, n=3)
        """
        x = np.asarray(values, dtype=float)
        if not x.size:
            return None
        sd = float(x.std(ddof=1)) if x.size > 1 else 0.0
        return cls(float(x.mean()), sd, sd / math.sqrt(x.size), int(x.size))


@dataclass(frozen=True)
class FiniteSize:
    r""":func:`finite_size`: the sizes ``d, V, N``, ``draws``, ``seed`` and ``mu2``, the ``outlier_probability`` (with
    its standard error ``probability_se``), the :class:`Spread` of the ``eigenvalue`` (the top one, over the draws with
    the outlier; ``None`` if none), of the ``overlap`` (of the top eigenvector, in every draw), of ``mu2_critical`` and
    of ``top_of_bulk`` (each draw's :attr:`DrawOutlier.expected_top`), and the ``rows`` of the draws: ``(expected top,
    mu2_critical) + DrawOutlier.at(mu2)``."""

    d: int
    V: int
    N: int
    draws: int
    seed: int
    mu2: float
    outlier_probability: float
    probability_se: float
    eigenvalue: Spread | None
    overlap: Spread
    mu2_critical: Spread
    top_of_bulk: Spread
    rows: tuple = field(repr=False)


@dataclass(frozen=True)
class SampledDraws:
    """The :class:`DrawOutlier` of each sampled token matrix (:func:`sample_draws`), with the sizes and the seed, and
    each draw's largest weighted use of a token (``uses``: :func:`derive.vocabulary.draw.largest_use.largest_use`);
    :meth:`at` summarizes them at any ``mu2``."""

    d: int
    V: int
    N: int
    seed: int
    outliers: tuple
    uses: tuple = ()

    def at(self, mu2) -> FiniteSize:
        """The :class:`FiniteSize` of these draws at signal strength ``mu2``."""
        rows = tuple((o.expected_top, o.mu2_critical) + o.at(mu2) for o in self.outliers)
        found = [r for r in rows if r[2]]
        p = len(found) / len(rows)
        return FiniteSize(self.d, self.V, self.N, len(rows), self.seed, float(mu2), p,
                          math.sqrt(p * (1 - p) / len(rows)), Spread.of([r[3] for r in found]),
                          Spread.of([r[4] for r in rows]), Spread.of([r[1] for r in rows]),
                          Spread.of([r[0] for r in rows]), rows)


def _one(child, family, weights, V, N, d, centered, eigen) -> tuple[DrawOutlier, float]:
    from derive.vocabulary.draw.largest_use import largest_use

    A = sample_token_matrix(np.random.default_rng(child), family, weights, V, N)
    return draw_outlier(spectral_measures(A, class_signs(V), d, centered, eigen), centered), largest_use(A)


def _check_int(value, name: str, low: int) -> int:
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < low:
        raise ParameterError(name, f"must be an integer >= {low}, got {value!r}")
    return int(value)


def sample_draws(m, draws: int = DRAWS, seed: int = SEED, threads: int = THREADS) -> SampledDraws:
    r"""The :class:`DrawOutlier` of ``draws`` token matrices sampled from the model ``m`` (its sizes: ``d``, and ``V,
    N`` or ``delta, gamma``, :func:`~derive.vocabulary.draw.sampling.model_sizes`; its weights, signs and
    ``centered``): draw ``j`` from ``SeedSequence(seed).spawn(draws)[j]``, so the same seed gives the same draws, on
    any number of ``threads`` (each with one BLAS thread). Each draw's spectral measures by :data:`CARRIED_WORK`'s
    choice of method; the two agree to rounding."""
    from threadpoolctl import threadpool_limits

    from derive.model.scalars import pooling_scalars
    from derive.model.spec import Model

    if not isinstance(m, Model):
        raise ParameterError("model", f"must be a derive.Model, got {type(m).__name__}")
    m = m.need("d", "T", "weights", "signs")
    seed, threads = _check_int(seed, "seed", 0), _check_int(threads, "threads", 1)
    V, N = model_sizes(m)
    w = np.array(pooling_scalars(m)["weights"])
    check_sizes(m.d, V, N, m.T, draws, int(np.count_nonzero(w)) == 1)
    children = np.random.SeedSequence(seed).spawn(int(draws))
    eigen = eigen_weights
    if draws * min(V, N) ** 3 > CARRIED_WORK:
        # imported before the limit below, which then reaches the BLAS it loads
        from derive.vocabulary.draw.eigenweights import spectral_weights as eigen
    args = (m.signs, w, V, N, m.d, m.centered, eigen)
    with threadpool_limits(limits=1):
        if threads == 1 or draws == 1:
            done = [_one(c, *args) for c in children]
        else:
            with ThreadPoolExecutor(min(threads, int(draws))) as pool:
                done = list(pool.map(lambda c: _one(c, *args), children))
    return SampledDraws(m.d, V, N, seed, tuple(o for o, _ in done), tuple(u for _, u in done))


def finite_size(m, draws: int = DRAWS, seed: int = SEED, threads: int = THREADS) -> FiniteSize:
    r"""The expectation at the model's dimension ``m.d`` over ``draws`` sampled token matrices (module docstring,
    :func:`sample_draws`) at its ``mu2``, for ``S`` or :math:`S_c` (``m.centered``).

    At one nonzero weight ``D`` is diagonal: the top of the bulk is the eigenvalue of the most used token
    (:func:`derive.vocabulary.limit.topbulk.top_of_bulk` gives its law).

    >>> from derive.model.spec import Model
    >>> m = Model(d=200, delta="1/2", gamma="1/2", T=1, weights="mean", signs="iid", mu2=6)
    >>> r = finite_size(m, draws=4)
    >>> r.V, r.N, r.draws, r.outlier_probability, r.eigenvalue.n
    (400, 400, 4, 1.0, 4)
    >>> finite_size(m, draws=4, threads=1) == r
    True
    """
    return sample_draws(m.need("mu2"), draws, seed, threads).at(m.mu2)
