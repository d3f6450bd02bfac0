r"""What a user measures at their ``d``, with an error that covers the truth of each mean: the method chosen by ``d``
and the weights, and the error budget.

*Methods* (:func:`at_dimension`):

* ``"token counts"`` (one nonzero weight, every ``d`` from 10 to :math:`10^9`): exact draws of the token counts' histogram
  (:mod:`derive.vocabulary.draw.token_counts`), the counts above the signal averaged over (Rao–Blackwell,
  :mod:`derive.vocabulary.draw.rare_counts`); milliseconds a draw at any ``d``;
* ``"sampled token matrices"`` (more nonzero weights, :math:`\min(V, N) \le`
  :data:`~derive.vocabulary.draw.finite_size.MAX_EXACT`): each draw's ``D`` eigen-decomposed
  (:mod:`derive.vocabulary.draw.finite_size`);
* ``"token spikes of the limit"`` (more nonzero weights, any ``d``; chosen beyond
  :data:`~derive.vocabulary.draw.finite_size.MAX_EXACT` and where the voice's bound leaves no room for sampling): the
  limit's law of the tokens standing apart from the bulk, whose largest spike among ``V`` tokens sets what stands on top
  (:mod:`derive.vocabulary.limit.tokentail`); seconds once the limit is known. Its errors are that module's, plus the
  deterministic equivalents' bias below.

*Each draw* gives its deterministic equivalents given ``D`` (exact up to :math:`O(1/d)`) through
:func:`derive.vocabulary.draw.values.draw_values`. *The error* of each mean (:func:`summarize`) is the sum of

* sampling: three standard errors over the draws (a probability no draw showed: at most :math:`-\ln(0.01)/n`, its
  99% bound, where the draws sample it rather than average it);
* the order of nearby eigenvalues (:class:`~derive.vocabulary.draw.values.DrawValues`), averaged over the draws;
* the deterministic equivalents' own bias given ``D``, :math:`b/d`: measured against Monte Carlo at ``d`` = 50 to
  4000 (``notes/finite_vocabulary.md``, "Monte Carlo minus the conditional prediction") as :math:`|b| \le 1.5\ell` for
  an eigenvalue and 2 for an overlap; taken as :data:`EIGENVALUE_BIAS` :math:`\cdot|\ell|/d` and
  :data:`OVERLAP_BIAS`:math:`/d`;
* at one nonzero weight, the Poisson approximation of the counts averaged over
  (:func:`derive.vocabulary.draw.rare_counts.poisson_error`), times the range of the quantity;
* the top of a cluster of token spikes (``top_error``) for the top of the bulk and the top eigenvalue.

``mu2_critical`` is each draw's deterministic threshold (no Monte Carlo quantity): its error is the sampling part alone.
At one nonzero weight the draw's largest count, whose law is known, is its control variate
(:mod:`derive.vocabulary.draw.largest_count`: the error then adds the bound of that law's Poisson approximation),
wherever that error is the smaller: at ``d = 2000``, ``delta = gamma = 1``, 256 draws, 0.03 against 0.14. At more
nonzero weights, with sampled token matrices, the draw's largest weighted use of a token is (its mean from 512 draws of
the token matrix alone: :mod:`derive.vocabulary.draw.largest_use`, about a second at ``d = 1000``): at issue 42's
``T = 5`` point, ``d = 1000``, 24 draws, 0.0079 against 0.015.
Below :data:`CHECKED` the bias bound is extrapolated: the result says so (``warning``).
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from derive.errors import ParameterError
from derive.vocabulary.draw.values import FIELDS

__all__ = ["D_RANGE", "COUNT_DRAWS", "EIGENVALUE_BIAS", "OVERLAP_BIAS", "CHECKED", "METHODS", "VOICE_DIMENSIONS",
           "VOICE_COUNT_DRAWS", "VOICE_SAMPLED_DRAWS", "VOICE_WORK", "VOICE_TOKENS", "Estimate", "AtDimension", "summarize",
           "at_dimension", "voice_method", "stored", "restored"]

D_RANGE = (10, 10**9)
"""The dimensions ``derive spike --d`` answers for (INTERFACE.md)."""

COUNT_DRAWS = 1024
"""Draws of the token counts by default (one nonzero weight): about 20 to 40 CPU-seconds."""

EIGENVALUE_BIAS = 2.25
r"""Bound of the deterministic equivalents' mean bias of an eigenvalue, in units of :math:`|\ell|/d` (measured 1.5)."""

OVERLAP_BIAS = 3.0
"""Bound of their mean bias of a squared overlap, in units of ``1/d`` (measured 2)."""

CHECKED = 50
"""The smallest ``d`` at which the deterministic equivalents have been held to Monte Carlo of the model."""

VOICE_DIMENSIONS = (10**3, 10**4, 10**5, 10**6)
"""The dimensions ``derive spike`` states beside the limit without ``--d`` (``at_dimension``, issue 42's "default
voice"): where a user's PCA runs, and up to where the model's drift at one nonzero weight shows (``T = 1, mu2 = 6``:
the signal on top in 99% of draws at 1e4, 89% at 1e5, 32% at 1e6)."""

VOICE_COUNT_DRAWS = 256
"""Draws of the token counts at each of :data:`VOICE_DIMENSIONS` (one nonzero weight): a quarter of ``--d``'s
:data:`COUNT_DRAWS`, so that the four take about 25 CPU-seconds together (measured 3.5, 5.2, 8.4, 8.0 s at ``T = 1,
delta = gamma = 1, mu2 = 6``) with errors about twice ``--d``'s (0.007, 0.009, 0.004, 0.0006 on the top overlap)."""

VOICE_SAMPLED_DRAWS = 16
"""Token matrices sampled at a dimension of the voice (more nonzero weights), within :data:`VOICE_WORK`."""

VOICE_WORK = 16 * 1000**3
r"""Most :math:`\text{draws}\cdot\min(V, N)^3` the voice samples at one dimension: 16 draws at ``min(V, N) = 1000``,
about 5 CPU-seconds (measured 4.6 s at ``T = 2``, causal, ``delta = gamma = 1``). Beyond it the voice takes the
token spikes of the limit: a default answer is not allowed to cost minutes."""

COUNTS, SAMPLED, SPIKES = "token counts", "sampled token matrices", "token spikes of the limit"
METHODS = (COUNTS, SAMPLED, SPIKES)
"""The methods (module docstring), by the name an :class:`AtDimension` states."""


@dataclass(frozen=True)
class Estimate:
    """A mean over draws with its ``error`` (covering the truth: module docstring), the spread ``sd`` over the draws
    (``None`` where not stated) and the standard error ``se`` of the mean."""

    mean: float
    sd: float | None
    error: float
    se: float


@dataclass(frozen=True)
class AtDimension:
    """What a user measures at dimension ``d`` (:func:`at_dimension`): ``method``, ``draws`` (``None`` where not
    sampled), the sizes ``V, N``, ``seed``, ``mu2``, ``outlier_probability`` (an :class:`Estimate`), the top
    ``eigenvalue`` and the squared ``overlap`` of its eigenvector, the ``signal_overlap`` of the signal's own
    eigenvector, the ``top_of_bulk``, ``mu2_critical``, a ``warning`` (or ``None``) and ``notes`` (the method's
    parameters, e.g. the first count averaged over)."""

    d: int
    V: int
    N: int
    method: str
    draws: int | None
    seed: int
    mu2: float
    outlier_probability: Estimate
    eigenvalue: Estimate
    overlap: Estimate
    signal_overlap: Estimate
    top_of_bulk: Estimate
    mu2_critical: Estimate
    warning: str | None = None
    notes: tuple = ()


def summarize(values: list, d: int, V: int, N: int, method: str, seed: int, mu2: float, poisson: float = 0.0,
              notes: tuple = (), averaged: bool = False, critical: tuple | None = None) -> AtDimension:
    r"""The :class:`AtDimension` of per-draw :class:`~derive.vocabulary.draw.values.DrawValues` (module docstring: the
    error budget). ``poisson``: the bound of the Poisson approximation of the counts averaged over (0 if none);
    ``averaged``: whether the event "the signal on top" is averaged over in each draw rather than sampled;
    ``critical``: the threshold's mean, error and standard error with a control variate (the largest count at one
    nonzero weight, :func:`derive.vocabulary.draw.largest_count.controlled_threshold`; the largest weighted use of a
    token at more, :func:`derive.vocabulary.draw.largest_use.controlled_mean`), taken where its error is the smaller
    (the spread stays the draws').

    >>> from derive.vocabulary.draw.values import DrawValues
    >>> rows = [DrawValues((1.0, 5.0, 0.5, 0.5, 4.0, 2.0), (1.0, 25.0, 0.25, 0.25, 16.0, 4.0), 0, 0, 0, 0)] * 10
    >>> r = summarize(rows, 1000, 1000, 1000, "token counts", 0, 3.0)
    >>> r.outlier_probability.mean, round(r.outlier_probability.error, 4), r.eigenvalue.error, r.overlap.error
    (1.0, 0.4605, 2.3138350929940454, 0.4635170185988091)
    """
    n = len(values)
    X = np.array([v.values for v in values])
    X2 = np.array([v.squares for v in values])
    mean = X.mean(axis=0)
    se = X.std(axis=0, ddof=1) / math.sqrt(n) if n > 1 else np.full(len(FIELDS), np.inf)
    sd = np.sqrt(np.maximum(X2.mean(axis=0) - mean**2, 0.0) * (n / (n - 1) if n > 1 else 1.0))
    parts = {name: float(np.mean([getattr(v, name) for v in values]))
             for name in ("order_error", "eigenvalue_error", "overlap_error", "top_error")}
    i = {name: j for j, name in enumerate(FIELDS)}

    def est(name, method_part, spread=True):
        j = i[name]
        return Estimate(float(mean[j]), float(sd[j]) if spread else None, float(3 * se[j] + method_part), float(se[j]))

    p = float(mean[i["on_top"]])
    unseen = -math.log(0.01) / n if not averaged and p in (0.0, 1.0) else 0.0
    span = float(np.ptp(X[:, i["eigenvalue"]])) + abs(float(mean[i["eigenvalue"]]))
    probability = Estimate(p, None, float(3 * se[i["on_top"]] + parts["order_error"] + poisson + unseen),
                           float(se[i["on_top"]]))
    eigenvalue = est("eigenvalue", parts["eigenvalue_error"] + EIGENVALUE_BIAS * abs(mean[i["eigenvalue"]]) / d
                     + parts["top_error"] + poisson * span + unseen * span)
    overlap = est("overlap", parts["overlap_error"] + OVERLAP_BIAS / d + poisson + unseen)
    signal = est("signal_overlap", OVERLAP_BIAS / d, spread=False)
    top = est("top", EIGENVALUE_BIAS * abs(mean[i["top"]]) / d + parts["top_error"]
              + poisson * (float(np.ptp(X[:, i["top"]])) + abs(float(mean[i["top"]]))), spread=False)
    critical = est("mu2_critical", 0.0) if critical is None or critical[1] >= 3 * se[i["mu2_critical"]] else \
        Estimate(critical[0], float(sd[i["mu2_critical"]]), critical[1], critical[2])
    warning = None
    if d < CHECKED:
        warning = (f"d = {d} is below {CHECKED}, the smallest d at which the per-draw deterministic equivalents were "
                   f"held to Monte Carlo: their O(1/d) bias bound in the errors is extrapolated")
    return AtDimension(d, V, N, method, n, seed, float(mu2), probability, eigenvalue, overlap, signal, top, critical,
                       warning, notes)


def at_dimension(m, draws: int | None = None, seed: int = 0, method: str | None = None) -> AtDimension:
    r"""What a user measures at the model's dimension ``m.d`` (``V, N`` from ``delta, gamma`` unless given), at its
    ``mu2``, for ``S`` or :math:`S_c`, by ``method`` (:data:`METHODS`; ``None``: token counts at one nonzero weight,
    default :data:`COUNT_DRAWS` draws; sampled token matrices at more up to
    :data:`~derive.vocabulary.draw.finite_size.MAX_EXACT`, default :data:`derive.resources.DRAWS`; the token spikes of
    the limit beyond; module docstring).

    >>> from derive.model.spec import Model
    >>> r = at_dimension(Model(d=10**6, delta=1, gamma=1, T=1, weights="mean", signs="iid", mu2=6), draws=16)
    >>> r.method, r.V, round(r.outlier_probability.mean, 2), r.outlier_probability.error < 0.01
    ('token counts', 1000000, 0.32, True)
    """
    from derive.model.scalars import pooling_scalars
    from derive.resources import DRAWS
    from derive.vocabulary.draw import finite_size as fs
    from derive.vocabulary.draw.rare_counts import count_values
    from derive.vocabulary.draw.sampling import model_sizes
    from derive.vocabulary.draw.token_counts import one_weight
    from derive.vocabulary.draw.values import draw_values

    m = m.need("d", "T", "weights", "signs", "mu2")
    if not D_RANGE[0] <= m.d <= D_RANGE[1]:
        raise ParameterError("d", f"must be from {D_RANGE[0]} to {D_RANGE[1]:.0e} for what a user measures at d, "
                                  f"got {m.d}")
    if method is not None and method not in METHODS:
        raise ParameterError("method", f"must be one of {', '.join(METHODS)}, got {method!r}")
    V, N = model_sizes(m)
    w = np.array(pooling_scalars(m)["weights"])  # kept between runs: sampled draws from a warm cache need no SymPy
    mu2 = float(m.mu2)
    single = one_weight(w)
    if single is not None:
        if method not in (None, COUNTS):
            raise ParameterError("method", f"at one nonzero weight the token counts are exact: method {method!r} is "
                                           f"for more")
        n = COUNT_DRAWS if draws is None else draws
        fs.check_sizes(m.d, V, N, 0, n, True)  # (T = 0: a draw of the counts costs O(sqrt N), not the N tokens)
        values, info = count_values(single[1], V, N, m.d, m.centered, mu2, n, seed)
        critical = None
        if info["largest"] and n > 1:
            # the largest count drawn, whose law is known, carries most of a draw's threshold
            from derive.model.pooling import model_pooling
            from derive.vocabulary.draw.largest_count import controlled_threshold
            from derive.vocabulary.limit.law import vocabulary_law

            law = vocabulary_law(m.delta, m.gamma, model_pooling(m).weights).diagonal()
            critical = controlled_threshold([v.values[FIELDS.index("mu2_critical")] for v in values], info["largest"],
                                            law, V, N, info["k0"])
        return summarize(values, m.d, V, N, COUNTS, seed, mu2, info["poisson_error"],
                         (("first count averaged over", info["k0"]),), averaged=info["k0"] is not None,
                         critical=critical)
    if method == COUNTS:
        raise ParameterError("method", "the token counts are the method of one nonzero weight")
    if method == SPIKES or (method is None and min(V, N) > fs.MAX_EXACT):
        return _from_spikes(m, V, N, seed)
    n = DRAWS if draws is None else draws
    if min(V, N) > fs.MAX_EXACT:
        raise ParameterError("d", f"sampled token matrices need min(V, N) <= {fs.MAX_EXACT} (here {min(V, N)}): lower "
                                  f"d, or take the token spikes of the limit")
    sampled = fs.sample_draws(m, n, seed)
    critical = None
    if n >= 3:
        # each draw's largest weighted use of a token carries most of its threshold; its mean from token matrices
        # alone, on seeds after the sampled draws' (independent of them)
        from derive.vocabulary.draw.largest_use import controlled_mean, use_draws, use_mean
        from derive.vocabulary.draw.sampling import sample_token_matrix

        children = np.random.SeedSequence(seed).spawn(n + use_draws(N, m.T))[n:]
        use = use_mean(lambda c: sample_token_matrix(np.random.default_rng(c), m.signs, w, V, N), children)
        critical = controlled_mean([o.mu2_critical for o in sampled.outliers], sampled.uses, *use)
    return summarize([draw_values(o, mu2, m.d) for o in sampled.outliers], m.d, V, N, SAMPLED, seed, mu2,
                     critical=critical)


def _from_spikes(m, V: int, N: int, seed: int) -> AtDimension:
    """:func:`at_dimension` by the token spikes of the limit (:func:`derive.vocabulary.limit.outlier.limit_at_dimension`),
    its errors with the deterministic equivalents' bias added (the same bound as the draws')."""
    from derive.model.pooling import model_pooling
    from derive.resources import check_limit_work
    from derive.vocabulary.limit.outlier import limit_at_dimension

    p = model_pooling(m)
    w = p.floats()
    check_limit_work(sum(1 for x in w if x != 0), float(m.delta / m.gamma), float(m.mu2 * p.alpha / p.kappa))
    r = limit_at_dimension(m.delta, m.gamma, w, p.R, m.mu2, m.d)

    def est(name, bias=0.0):
        mean, error, se = r[name]
        return Estimate(mean, None, error + bias, se)

    d = m.d
    return AtDimension(d, V, N, SPIKES, None, seed, float(m.mu2), est("on_top"),
                       est("eigenvalue", EIGENVALUE_BIAS * abs(r["eigenvalue"][0]) / d),
                       est("overlap", OVERLAP_BIAS / d), est("signal_overlap", OVERLAP_BIAS / d),
                       est("top", EIGENVALUE_BIAS * abs(r["top"][0]) / d), est("mu2_critical"), None,
                       (("token classes kept at their mass: tail probability at least", r["kept"]),))

VOICE_TOKENS = 16 * 10**6
"""Most tokens (``draws x N T``) the voice samples at one dimension (16 draws of a million tokens: about a second to
draw; a long sequence at a small ``d``, ``T = 1e5``, would otherwise spend minutes drawing tokens for an answer given
by default)."""


def voice_method(m, draws: int | None = None) -> tuple[str, int | None]:
    r"""The method of the default voice at the model's ``m.d`` and its draws: token counts at one nonzero weight
    (``draws`` if given, else :data:`VOICE_COUNT_DRAWS`); at more, sampled token matrices (``draws`` or
    :data:`VOICE_SAMPLED_DRAWS`) where they fit the voice's bounds (:data:`VOICE_WORK`, :data:`VOICE_TOKENS`,
    :data:`~derive.vocabulary.draw.finite_size.MAX_EXACT`), else the token spikes of the limit (no draws).

    >>> from derive.model.spec import Model
    >>> voice_method(Model(d=10**6, delta=1, gamma=1, T=1, weights="mean", signs="iid", mu2=6))
    ('token counts', 256)
    >>> voice_method(Model(d=10**4, delta=1, gamma=1, T=2, weights="mean", signs="iid", mu2=6))
    ('token spikes of the limit', None)
    """
    from derive.model.scalars import pooling_scalars
    from derive.vocabulary.draw import finite_size as fs
    from derive.vocabulary.draw.sampling import model_sizes
    from derive.vocabulary.draw.token_counts import one_weight

    V, N = model_sizes(m)
    if one_weight(pooling_scalars(m)["weights"]) is not None:
        return COUNTS, VOICE_COUNT_DRAWS if draws is None else draws
    n = VOICE_SAMPLED_DRAWS if draws is None else draws
    if min(V, N) <= fs.MAX_EXACT and n * N * m.T <= VOICE_TOKENS and n * min(V, N) ** 3 <= VOICE_WORK:
        return SAMPLED, n
    return SPIKES, None


def stored(r: AtDimension) -> dict:
    """An :class:`AtDimension` as JSON (the cache, :func:`derive.cache.memo`): its fields, each estimate a dict."""
    from dataclasses import asdict

    return asdict(r) | {"notes": [list(x) for x in r.notes]}


def restored(v: dict) -> AtDimension:
    """The :class:`AtDimension` of :func:`stored`'s JSON.

    >>> e = Estimate(0.5, None, 0.1, 0.02)
    >>> r = AtDimension(1000, 1000, 1000, "token counts", 4, 0, 6.0, e, e, e, e, e, e, None, (("k", 3),))
    >>> restored(stored(r)) == r
    True
    """
    fields = {name: Estimate(**v[name]) for name in ("outlier_probability", "eigenvalue", "overlap", "signal_overlap",
                                                       "top_of_bulk", "mu2_critical")}
    return AtDimension(**(v | fields | {"notes": tuple(tuple(x) for x in v["notes"])}))
