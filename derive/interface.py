r"""The results of the model as numbers and objects: one function per question, each taking a
:class:`~derive.model.spec.Model`.

* :func:`weights`: the pooling weights of the model's scheme with :math:`\alpha = w^\top Rw`,
  :math:`\kappa = \|w\|^2`, :math:`W = \sum_t w_t` (exact);
* :func:`bulk`: the limiting spectral law of ``S``, the model's own (finite vocabulary) or its Gaussian equivalent;
* :func:`spike`: the outliers of ``S`` (or :math:`S_c`): eigenvalues, overlaps, thresholds, at the current mpmath
  precision, with the law they are for.

>>> import mpmath
>>> m = Model(delta="1/2", gamma="1/4", T=8, weights="mean", signs="prefix:3", mu2="3/2", centered=True)
>>> with mpmath.workdps(20):
...     o = spike(m, law="gaussian-equivalent")
...     print(o.law, mpmath.nstr(o.sample.eigenvalue, 10), mpmath.nstr(o.sample.overlap, 10))
gaussian-equivalent 0.6319444444 0.6185897436
"""
from __future__ import annotations

from dataclasses import replace
from functools import partial

import mpmath

from derive.errors import ParameterError
from derive.model.scalars import exact_own_law, pooling_scalars
from derive.model.spec import Model
from derive.numbers import check_digits

__all__ = ["LAWS", "MAX_WORKING_DIGITS", "weights", "pooling_scalars", "exact_own_law", "bulk", "spike", "finite_size",
           "at_dimensions", "model_law", "random_weights", "vocabulary_sample", "agreeing"]

MAX_WORKING_DIGITS = 4000
"""Highest working precision :func:`agreeing` tries before a result is declared undecided (a point closer to a
threshold than about ``10^-3000`` relative)."""

LAWS = ("finite-vocabulary", "gaussian-equivalent")
"""The laws a result can be for: the model's own (a finite vocabulary, tokens reused a Poisson number of times),
or the Gaussian equivalent of its pooled vectors (the paper's)."""


def _model(m) -> Model:
    if not isinstance(m, Model):
        raise ParameterError("model", f"must be a derive.Model, got {type(m).__name__}")
    return m


def weights(m: Model, digits: int = 30):
    r"""The pooling of the model's weight scheme: :class:`~derive.model.pooling.Pooling` with the weights
    (normalized to sum 1; exact rationals where they exist, else to ``digits``), :math:`\alpha` (``None`` without
    ``signs``), :math:`\kappa`, :math:`W`.

    >>> p = weights(Model(T=3, weights="causal", mask="strict", signs="iid")); p.weights, p.alpha, p.kappa
    ((3/4, 1/4, 0), 5/8, 5/8)
    """
    from derive.model.pooling import model_pooling

    return model_pooling(_model(m).need("T", "weights"), check_digits(digits))


def random_weights(m: Model) -> bool:
    """Whether the weights of ``m`` vary from sequence to sequence (the ``softmax`` scheme's strict mask at ``tau > 0``):
    then the Gaussian-equivalent law is that of :mod:`derive.gaussian.random_weights`, and the model's own law (finite
    vocabulary), derived for fixed weights, is not available."""
    law = _model(m).weights.law(m.need("T").T) if m.weights is not None else None
    return law is not None and law.random


def _refuse_own_law(m: Model, what: str) -> None:
    if random_weights(m):
        raise ParameterError("law", f"the model's own law (finite vocabulary) is derived for weights shared by every "
                                    f"sequence; the {m.weights.name} scheme's vary from sequence to sequence: "
                                    f"law='gaussian-equivalent' gives {what} for Gaussian pooled vectors with each "
                                    f"sequence's own weights")


def model_law(m: Model) -> bool:
    """Whether ``m`` describes its pooling by weights (so the model's own law applies), not by scalars alone."""
    return _model(m).weights is not None


def bulk(m: Model, law: str = "finite-vocabulary"):
    r"""The limiting spectral law of ``S`` at the model's ``delta, gamma``: the model's own
    (:class:`~derive.vocabulary.limit.law.VocabularyLaw`, ``law="finite-vocabulary"``, needs the weights) or its Gaussian
    equivalent :math:`\kappa(\mathrm{MP}_\delta\boxtimes\mathrm{MP}_\gamma)` (:class:`~derive.gaussian.bulk.BulkLaw`,
    ``law="gaussian-equivalent"``, needs ``kappa`` or the weights).

    >>> L = bulk(Model(delta=1, gamma=1, T=1, weights="mean"))
    >>> with mpmath.workdps(15):
    ...     print(L.law, mpmath.nstr(L.atom_at_zero, 10))
    finite-vocabulary 0.3678794412
    """
    m = _model(m).need("delta", "gamma")
    if law == "finite-vocabulary":
        from derive.vocabulary.limit.law import vocabulary_law

        _refuse_own_law(m, "the bulk")
        return vocabulary_law(m.delta, m.gamma, weights(m.need("weights")).weights)
    if law == "gaussian-equivalent":
        from derive.gaussian.bulk import law as gaussian_law

        if random_weights(m):
            from derive.gaussian.random_weights import pooling_law

            return pooling_law(m.delta, m.gamma, weights(m.need("signs")))
        return gaussian_law(m.delta, m.gamma, _scalars(m)["kappa"])
    raise ParameterError("law", f"must be one of {', '.join(LAWS)}, got {law!r}")


def _scalars(m: Model) -> dict:
    """``alpha`` (``None`` without signs), ``kappa``, ``sum_w`` of the model: given, or from its weights
    (:func:`pooling_scalars` at the current precision)."""
    from fractions import Fraction

    if m.weights is None:
        return {"alpha": m.alpha, "kappa": m.need("kappa").kappa, "sum_w": 1 if m.sum_w is None else m.sum_w}
    p = pooling_scalars(m, mpmath.mp.dps)
    # alpha needs the sign family; the bulk does not (spike refuses a missing one)
    return {name: None if p[key] is None else Fraction(p[key]) for name, key in
            (("alpha", "alpha"), ("kappa", "kappa"), ("sum_w", "W"))}


def agreeing(evaluate, key, digits: int, parameter: str = "mu2"):
    """``evaluate()`` at rising working precisions ``P = digits + 15, 2P, 4P, ...`` until two successive ones give
    the same ``key(value)`` (its reals written to ``digits``), in the manner of :func:`mpmath.autoprec`: near a
    threshold an overlap cancels as many digits as the distance to it has, and an outlier's existence is decided by
    the sign of a difference as small as that distance. ``evaluate`` may raise :class:`ZeroDivisionError` (exactly
    on a threshold at that precision: undecided there, so the precision rises). Without agreement by
    :data:`MAX_WORKING_DIGITS` the result is refused (``parameter``: too close to a threshold to be decided), never
    returned.

    >>> print(agreeing(lambda: mpmath.mpf(1) / 3, lambda x: mpmath.nstr(x, 5), 5))
    0.333333333333333
    """
    def attempt(working):
        with mpmath.workdps(working):
            try:
                value = evaluate()
            except ZeroDivisionError:
                return None, object()
        return value, key(value)

    working = digits + 15
    _, previous = attempt(working)
    while working <= MAX_WORKING_DIGITS:
        working = 2 * working
        value, current = attempt(working)
        if current == previous:
            return value
        previous = current
    raise ParameterError(parameter, f"within about 1e-{MAX_WORKING_DIGITS // 2} (relative) of a threshold: whether "
                                    f"the outlier exists is not decided at {MAX_WORKING_DIGITS} digits of working "
                                    f"precision")


def _outliers_key(o, digits: int) -> tuple:
    """Every reported real of an :class:`~derive.gaussian.outliers.Outliers` written to ``digits`` (what two working
    precisions must agree on)."""
    from derive.numbers import format_real

    real = lambda x: None if x is None else format_real(x, digits)  # noqa: E731
    levels = tuple((lev.outlier, real(lev.eigenvalue), real(lev.overlap), real(lev.mu2_critical))
                   for lev in (o.population, o.sample))
    return (levels, real(o.right_edge), real(o.population_right_edge),
            tuple((x.cause, x.level, real(x.eigenvalue)) for x in o.other_outliers))


def spike(m: Model, law: str | None = None, draws: int | None = None, seed: int | None = None, error=None):
    r"""The outliers of ``S`` (:math:`S_c` if ``m.centered``) at the model's ``delta, gamma, mu2``, at the current
    precision: :class:`~derive.gaussian.outliers.Outliers` (``population``, ``sample``, the bulk's edges, the other
    outliers, and ``law``); with the model's dimension ``d``, also ``finite_size``, the expectation at that ``d`` over
    ``draws`` token matrices sampled from ``seed`` (:func:`finite_size`), computed when first asked for. ``error`` (a
    real > 0, default :data:`derive.vocabulary.limit.outlier.ERROR`) is the error sought where the model's own sample
    level is estimated (:func:`vocabulary_sample`): a smaller one takes longer.

    ``law=None`` answers for the model's own ``S`` where the weights are given (``gamma > 0``), else for the
    Gaussian-equivalent pooled vectors; ``"gaussian-equivalent"`` asks for the latter. The Gaussian equivalent and the
    population level are evaluated at rising working precisions until two agree on every real to the current
    precision (:func:`agreeing`), so they are right to ``mpmath.mp.dps`` digits even next to a threshold. The population level is exact
    in the limit ``d/V -> delta`` either way. The model's own sample level is exact at one nonzero weight; at more it
    is estimated from quenched cavity populations (``sample.errors``; seconds, kept between runs), and the raw ``S``'s
    sample-level outlier of the vocabulary mean, not derived for the model's own ``S`` there, is its Gaussian
    equivalent's.
    """
    from derive.gaussian.outliers import outliers_at

    m = _model(m).need("delta", "gamma", "mu2")
    if m.weights is not None and random_weights(m):
        return _random_spike(m, law)
    s = _scalars(m)
    if s["alpha"] is None:
        raise ParameterError("signs", "is required: alpha = w^T R w needs the sign family")
    digits = mpmath.mp.dps
    o = agreeing(lambda: outliers_at(m.delta, m.gamma, s["alpha"], s["kappa"], m.mu2, sum_w=s["sum_w"],
                                     centered=m.centered), lambda o: _outliers_key(o, digits), digits)
    at_d = {} if m.d is None else {"at_d": partial(finite_size, m, draws, seed)}
    if law == "gaussian-equivalent" or (law is None and not _own_outlier(m)):
        return replace(o, **at_d)
    if law not in (None, "finite-vocabulary"):
        raise ParameterError("law", f"must be one of {', '.join(LAWS)}, got {law!r}")
    if not _own_outlier(m):
        raise ParameterError("gamma", "the model's own sample level needs the weights and gamma > 0; "
                                      "law='gaussian-equivalent' gives the Gaussian equivalent")
    exact = bulk(m).exact
    return replace(o, sample=vocabulary_sample(m, error), right_edge=mpmath.inf, law="finite-vocabulary",
                   other_outliers=tuple(x for x in o.other_outliers if x.level == "population" or not exact), **at_d)


def _random_spike(m: Model, law):
    """:func:`spike` for weights that vary from sequence to sequence (:func:`derive.gaussian.random_weights.outliers`):
    the Gaussian-equivalent law with each sequence's own weights, the only one derived for them."""
    from derive.gaussian.random_weights import outliers

    if law == "finite-vocabulary":
        _refuse_own_law(m, "the outliers")
    if law not in (None, "gaussian-equivalent"):
        raise ParameterError("law", f"must be one of {', '.join(LAWS)}, got {law!r}")
    if m.d is not None:
        raise ParameterError("d", "the expectation at dimension d samples token matrices pooled with fixed weights; the "
                                  f"{m.weights.name} scheme's vary from sequence to sequence (verify mc runs them)")
    if m.gamma == 0:
        raise ParameterError("gamma", "must be > 0 for weights that vary from sequence to sequence")
    return outliers(m.delta, m.gamma, weights(m.need("signs")), m.mu2, m.centered)


def finite_size(m: Model, draws: int | None = None, seed: int | None = None, method: str | None = None):
    r"""What a user measures at the model's dimension ``m.d`` (``V, N`` from ``delta, gamma``), each mean with an error
    that covers its truth: the probability that the signal's eigenvalue is the top one, the top eigenvalue and the
    squared overlap of its eigenvector, the signal eigenvector's overlap, the top of the bulk and the threshold
    (:class:`~derive.vocabulary.draw.user_d.AtDimension`; :mod:`derive.vocabulary.draw.user_d`), over ``draws`` draws
    from ``seed`` (defaults: the method's, and :data:`~derive.resources.SEED`), by ``method``
    (:data:`~derive.vocabulary.draw.user_d.METHODS`; default: chosen by ``d`` and the weights). Needs the weights and
    signs.

    >>> r = finite_size(Model(d=200, delta="1/2", gamma="1/2", T=2, weights="mean", signs="iid", mu2=4), draws=8)
    >>> r.V, r.N, r.draws, r.seed, r.method, round(r.outlier_probability.mean, 4)
    (400, 400, 8, 0, 'sampled token matrices', 1.0)
    """
    from derive.resources import SEED
    from derive.vocabulary.draw.user_d import at_dimension

    m = _model(m).need("d")
    if m.weights is None or m.signs is None:
        raise ParameterError("d", "the expectation at dimension d samples token matrices: it needs the weights and "
                                  "the signs (--T, --weights, --signs)")
    return _at_dimension(m.need("mu2"), draws, SEED if seed is None else seed, method)


def _at_dimension(m: Model, draws: int | None, seed: int, method: str | None):
    """:func:`~derive.vocabulary.draw.user_d.at_dimension`, kept between runs (:func:`derive.cache.memo`, whose key
    changes with every source of ``derive``; the draws are seeded, so the stored result is the one computed) unless a
    file or a user's object gave the weights or the signs (no string names them)."""
    from derive.vocabulary.draw.user_d import at_dimension, restored, stored

    from derive.cache import memo, model_key
    from derive.vocabulary.draw.sampling import model_sizes

    V, N = model_sizes(m)

    def valid(v):
        try:
            return restored(v).d == m.d
        except (TypeError, KeyError):
            return False

    key = model_key(m, ("weights", "T", "signs", "d", "mu2", "centered"), V=V, N=N, draws=draws, seed=seed,
                    method=method)
    return restored(memo("at-dimension", key, lambda: stored(at_dimension(m, draws, seed, method)), valid))


def at_dimensions(m: Model, draws: int | None = None, seed: int | None = None) -> list:
    r"""What a user measures at each of :data:`~derive.vocabulary.draw.user_d.VOICE_DIMENSIONS` (``V, N`` from the
    model's ``delta, gamma``), beside the limit (``derive spike`` without ``--d``): a list of ``(d, AtDimension or
    None, reason or None)``, each entry :func:`finite_size` of the model at that ``d`` with the voice's method and
    draws (:func:`~derive.vocabulary.draw.user_d.voice_method`) from ``seed``, or ``None`` with the reason where that
    ``d`` is out of reach (never a guess).

    >>> rows = at_dimensions(Model(delta=1, gamma=1, T=1, weights="mean", signs="iid", mu2=6), draws=2)
    >>> [(d, r.method, why) for d, r, why in rows]  # doctest: +NORMALIZE_WHITESPACE
    [(1000, 'token counts', None), (10000, 'token counts', None), (100000, 'token counts', None),
     (1000000, 'token counts', None)]
    """
    from derive.resources import SEED
    from derive.vocabulary.draw.user_d import VOICE_DIMENSIONS, voice_method

    m = _model(m).need("delta", "gamma", "T", "weights", "signs", "mu2")
    rows = []
    for d in VOICE_DIMENSIONS:
        try:
            at = m.replace(d=d, delta=m.delta, gamma=m.gamma)
            method, n = voice_method(at, draws)
            rows.append((d, finite_size(at, n, seed, method), None))
        except ParameterError as e:
            # the reason a d is out of reach (its sizes, its method, the voice's bound), never a value in its place
            rows.append((d, None, e.reason))
    return rows


def _own_outlier(m: Model) -> bool:
    return m.weights is not None and m.gamma > 0


def vocabulary_sample(m: Model, error=None):
    """The sample level of the model's own ``S``. At one nonzero weight: the signal outlier of the exact law, the
    windows of ``mu2`` in which it stands in a gap of the (unbounded) support, and the mass of the law above it. At
    more: :func:`derive.vocabulary.limit.outlier.limit_spike` (the token matrix's transforms along the class signs from
    quenched cavity populations), with the ``errors`` of its estimates and no windows; ``error`` is the error sought
    for the eigenvalue and the overlap (``mu2_critical``: ten times it; default
    :data:`derive.vocabulary.limit.outlier.ERROR`), which the errors stated may exceed where the limit depends on the
    smoothing of the real axis (next to a cluster of the law of ``D``)."""
    from derive.gaussian.outliers import Level

    if not exact_own_law(m):
        return _limit_sample(m, error)
    from derive.vocabulary.limit.signal import signal_outlier, signal_windows

    # the signal's root is searched out to the atom 8 mu2/gamma (derive.vocabulary.limit.signal.signal_outlier)
    bulk(m).check_work(8 * m.mu2 / m.gamma, "mu2")
    law = bulk(m).diagonal()
    s = signal_outlier(law, m.mu2)
    windows = tuple(signal_windows(law))
    return Level(s.outlier, s.eigenvalue, s.overlap, windows[0][0] if windows else None, None, windows=windows,
                 mass_above=s.mass_above)


_LIMIT_FIELDS = ("outlier", "eigenvalue", "eigenvalue_error", "overlap", "overlap_error", "mu2_critical",
                 "mu2_critical_error", "mass_above")


def _limit_sample(m: Model, error=None):
    """:func:`derive.vocabulary.limit.outlier.limit_spike` for the model (seconds of quenched populations) at the error sought
    ``error``, kept between runs (:func:`derive.cache.memo`, whose key changes with every source of ``derive``; the
    populations are seeded by the inputs, so the stored result is the one computed)."""
    from derive.cache import memo, model_key, shaped
    from derive.gaussian.outliers import Level
    from derive.numbers import check_range, parse_fraction
    from derive.resources import check_limit_work
    from derive.resources import LIMIT_ERROR

    m.need("signs")
    given = parse_fraction(error, "error") if isinstance(error, str) else error
    sought = LIMIT_ERROR if error is None else float(check_range(given, "error", low=0, low_open=True))

    def compute():
        from derive.vocabulary.limit.outlier import limit_spike

        p = weights(m)
        # refused before any work where the estimate is beyond what the command waits for; a kept answer is served
        check_limit_work(sum(1 for x in p.weights if x != 0), float(m.delta / m.gamma),
                         float(m.mu2 * p.alpha / p.kappa))
        r = limit_spike(m.delta, m.gamma, p.weights, p.R, m.mu2, error=sought)
        return {name: getattr(r, name) for name in _LIMIT_FIELDS} | {
            "mu2_critical_drift": [list(pair) for pair in r.mu2_critical_drift]}

    stored = {name: (float, None) for name in _LIMIT_FIELDS} | {"outlier": bool, "mu2_critical_drift": [[float]]}
    r = memo("limit-spike", model_key(m, ("weights", "T", "signs", "delta", "gamma", "mu2"), error=repr(sought)),
             compute, lambda v: shaped(v, stored))
    real = lambda name: None if r[name] is None else mpmath.mpf(r[name])  # noqa: E731
    return Level(r["outlier"], real("eigenvalue"), real("overlap"), real("mu2_critical"), None,
                 mass_above=real("mass_above"),
                 errors=tuple((name, real(f"{name}_error")) for name in ("eigenvalue", "overlap", "mu2_critical")),
                 mu2_critical_reason=None if r["mu2_critical"] is not None else critical_reason(r["mu2_critical_drift"],
                                                                                                float(m.mu2)))


def critical_reason(drift, mu2: float | None = None) -> str | None:
    """Why the limit's ``mu2_critical`` is not given, from its climb with the resolution (``(eta, value)`` pairs:
    :attr:`derive.vocabulary.limit.outlier.LimitSpike.mu2_critical_drift`); ``None`` without a climb to show (no gap
    was found). Where ``mu2`` lies in the range the threshold moves through, whether the outlier exists there depends
    on the resolution too, and the reason says so.

    >>> critical_reason([[1e-3, 0.13], [2.5e-4, 0.14], [6.25e-5, 0.16]]).split("(")[1].split(")")[0]
    'mu2 0.13, 0.14, 0.16 at eta = 0.001, 0.00025, 6.25e-05'
    >>> critical_reason([[1e-3, 0.13], [2.5e-4, 0.14], [6.25e-5, 0.16]], 0.15).split(". ")[-1]
    'mu2 = 0.15 lies in that range: whether the outlier exists at it depends on the resolution too'
    """
    if not drift:
        return None
    climb = ", ".join(f"{v:.4g}" for _, v in drift)
    etas = ", ".join(f"{eta:.3g}" for eta, _ in drift)
    return (f"not defined in the limit: the lower end of the gap above the main bulk moves with the resolution eta "
            f"(mu2 {climb} at eta = {etas}) by more than the threshold is sought to: clusters of ever rarer tokens "
            "(at more than one nonzero weight the limit law of the token matrix has unbounded support) fill that gap as "
            "eta falls. The threshold a user meets is the one at their d (--d D, or at_dimension)"
            + (f". mu2 = {mu2:.4g} lies in that range: whether the outlier exists at it depends on the resolution too"
               if mu2 is not None and min(v for _, v in drift) <= mu2 <= max(v for _, v in drift) else ""))
