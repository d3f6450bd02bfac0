r"""The JSON documents of the ``derive`` commands (INTERFACE.md), built from a :class:`~derive.model.spec.Model` and
the objects of :mod:`derive.interface`: every real a string of ``digits`` significant digits, correct to them.

A command module reads its options, builds the model once, and hands it here; ``verify mc`` and the studies use the
same documents for their theory.
"""
from __future__ import annotations

import mpmath

from derive.cache import memo, model_key, real_text, shaped
from derive.errors import ParameterError
from derive.model.spec import Model
from derive.numbers import check_digits, format_exact, format_real

__all__ = ["ASSUMPTIONS", "MODEL_ASSUMPTIONS", "spike", "spike_document", "outliers_document", "difference",
           "finite_size_document", "at_dimension_document", "dimension_warning", "weights_document", "bulk_document", "estimate", "attention_options"]

ASSUMPTIONS = ("population level exact in the limit d/V -> delta; sample level for "
               "Gaussian-equivalent pooled vectors with the same covariance, d/N -> gamma")

MODEL_ASSUMPTIONS = ("population level exact in the limit d/V -> delta; sample level for the model's own pooled "
                     "vectors (finite vocabulary, Poisson token reuse), exact for one nonzero weight; for more, the "
                     "token matrix's transforms from quenched cavity populations (the errors stated), evaluated a "
                     "relative 1e-3 off the real axis and their real parts taken (the principal value, to O(1e-6) "
                     "where the law is smooth on that relative scale)")

def spike(delta, gamma, alpha, kappa, mu2, sum_w=1, centered=False, digits=30) -> dict:
    r"""The document of ``derive spike`` without ``--T``: the Gaussian-equivalent outliers at the pooling scalars
    :math:`\alpha, \kappa, W` (:func:`spike_document` of the model they describe).

    >>> spike("1/2", "1/4", "1/2", "1/4", 3, digits=6)["population"]["mu2_critical"]
    '0.103553'
    >>> import sympy as sp
    >>> spike("1/2", "1/4", sp.asin(sp.Rational(1, 3)), 1, 4, digits=6)["population"]["outlier"]
    True
    """
    digits = check_digits(digits)
    return spike_document(Model(delta=delta, gamma=gamma, alpha=alpha, kappa=kappa, mu2=mu2, sum_w=sum_w,
                                centered=centered), digits)


def spike_document(m: Model, digits: int = 30, draws: int | None = None, seed: int | None = None,
                   error=None, law: str | None = None, dimensions: bool = False, method: str | None = None) -> dict:
    r"""The document of ``derive spike`` for the model ``m``: :func:`derive.interface.spike` with every real to
    ``digits``, the working precision raised until two precisions agree on every reported real. The model's own
    sample level (``law: finite-vocabulary``) is derived once per question and kept between runs
    (:func:`derive.cache.memo`): at one nonzero weight its windows of ``mu2`` take a root search in every gap; at more,
    the quenched populations of :func:`derive.vocabulary.limit.outlier.limit_spike` take seconds, and each estimate is
    printed to the digits its error leaves, with the error beside it (``eigenvalue_error``, ...; ``error`` is the error
    sought there: :func:`derive.interface.vocabulary_sample`). With the model's dimension ``d``, ``finite_size`` is
    :func:`finite_size_document` of what a user measures there (:func:`derive.interface.finite_size`: ``draws`` draws
    of the token counts or matrices from ``seed``, by ``method``). Without it, ``dimensions=True`` adds ``at_dimension``
    (:func:`at_dimension_document`: the same at d = 1e3 to 1e6, ``draws`` at each from ``seed``) and its ``warning``
    (:func:`dimension_warning`) where those differ from the limit by more than their errors.
    ``law="gaussian-equivalent"`` gives the Gaussian equivalent of the model's weights alone (no finite-vocabulary
    work: milliseconds).

    >>> doc = spike_document(Model(delta="1/4", gamma=1, T=1, weights="mean", signs="iid", mu2=3, centered=True), 8)
    >>> doc["law"], doc["sample"]["eigenvalue"], doc["sample"]["overlap"], doc["bulk"]["right_edge"]
    ('finite-vocabulary', '5.8571217', '0.45899455', 'inf')
    """
    from derive import interface
    from derive.gaussian.regime import gaussian_equivalent_warning

    digits = check_digits(digits)
    if law not in (None, *interface.LAWS):
        raise ParameterError("law", f"must be one of {', '.join(interface.LAWS)}, got {law!r}")
    if m.d is not None:
        at_d = {"finite_size": finite_size_document(interface.finite_size(m, draws, seed, method), digits)}
        m = m.replace(d=None, V=None, N=None, delta=m.delta, gamma=m.gamma)
    else:
        at_d = {}
    own = interface.model_law(m) and law != "gaussian-equivalent"
    if own and m.need("gamma").gamma == 0:
        raise ParameterError("gamma", "must be > 0, got 0")

    with mpmath.workdps(digits):
        doc = outliers_document(interface.spike(m, law="gaussian-equivalent"), digits)
    paper = {"law": "gaussian-equivalent", **{level: dict(doc[level]) for level in ("population", "sample")}}
    if not own:
        doc["law"] = "gaussian-equivalent"
        # weights given, the paper's law asked for: the warning points back to the model's own law
        weighted = interface.model_law(m)
        hint = ("drop --law for the model's own law",) if weighted else ()
        doc["warning"] = gaussian_equivalent_warning(m, *hint) if m.gamma > 0 else None
        return doc | at_d | (attention_options(m, digits) if weighted else {})
    if interface.exact_own_law(m):
        key = model_key(m, ("weights", "T", "signs", "delta", "gamma", "mu2"), digits=digits)
        doc["sample"] = memo("model-spike-sample", key, lambda: _sample(m, digits), lambda v: shaped(v, _EXACT_SAMPLE))
        doc["other_outliers"] = [x for x in doc["other_outliers"] if x["level"] == "population"]
    else:
        doc["sample"] = _sample(m, digits, error)
        # the raw S's sample-level mean outlier is not derived for the model's own S: its Gaussian equivalent, so named
        for x in doc["other_outliers"]:
            if x["level"] == "sample":
                x["law"] = "gaussian-equivalent"
    doc["bulk"]["right_edge"] = "inf"
    doc["assumptions"] = MODEL_ASSUMPTIONS
    doc["law"] = "finite-vocabulary"
    doc["warning"] = None
    doc["gaussian_equivalent"] = paper
    doc["difference"] = difference(doc["sample"], paper["sample"])
    if dimensions and not at_d:
        at_d = {"at_dimension": at_dimension_document(interface.at_dimensions(m, draws, seed), digits)}
        doc["warning"] = dimension_warning(doc["sample"], at_d["at_dimension"])
    return doc | at_d | attention_options(m, digits)


def finite_size_document(r, digits: int = 30) -> dict:
    """A :class:`derive.vocabulary.draw.user_d.AtDimension` as the ``finite_size`` object of ``derive spike``
    (INTERFACE.md): each mean to the digits its error leaves (:func:`estimate`), each error and spread (``sd``, over the
    draws) to two digits.

    >>> from derive.vocabulary.draw.user_d import AtDimension, Estimate
    >>> e = Estimate(3.2374, 0.4703, 0.18, 0.06)
    >>> doc = finite_size_document(AtDimension(1000, 2000, 250, "token counts", 64, 0, 4.0, e, e, e, e, e, e))
    >>> doc["outlier_probability"], doc["outlier_probability_error"], doc["eigenvalue"], doc["top_of_bulk"]
    ('3.2', '0.18', {'mean': '3.2', 'sd': '0.47', 'error': '0.18'}, {'mean': '3.2', 'error': '0.18'})
    """
    digits = check_digits(digits)
    two = min(2, digits)

    def one(x, spread=True):
        out = {"mean": estimate(x.mean, x.error, digits)}
        if spread:
            out["sd"] = None if x.sd is None else format_real(x.sd, two)
        return out | {"error": format_real(x.error, two)}

    return {"d": r.d, "method": r.method, "draws": r.draws, "V": r.V, "N": r.N, "seed": r.seed,
            "outlier_probability": estimate(r.outlier_probability.mean, r.outlier_probability.error, digits),
            "outlier_probability_error": format_real(r.outlier_probability.error, two),
            "eigenvalue": one(r.eigenvalue), "overlap": one(r.overlap),
            "signal_overlap": one(r.signal_overlap, False), "top_of_bulk": one(r.top_of_bulk, False),
            "mu2_critical": one(r.mu2_critical), "warning": r.warning}


_ESTIMATES = ("eigenvalue", "overlap", "signal_overlap", "top_of_bulk", "mu2_critical")


def at_dimension_document(rows, digits: int = 30) -> list:
    """The ``at_dimension`` list of ``derive spike`` (INTERFACE.md) from :func:`derive.interface.at_dimensions`: each
    entry :func:`finite_size_document` of its ``d`` with ``"unavailable": null``, or, where that ``d`` is beyond the
    voice's bounded cost or any method, the same keys null (``d`` apart) and ``unavailable`` the reason.

    >>> at_dimension_document([(10**4, None, "beyond the bound")])[0]["unavailable"]
    'beyond the bound'
    """
    out = []
    for d, r, reason in rows:
        if r is not None:
            out.append(finite_size_document(r, digits) | {"unavailable": None})
            continue
        # the keys of an available entry, each null: a reader finds every field, and no number stands in for one
        empty = {"d": d, "method": None, "draws": None, "V": None, "N": None, "seed": None,
                 "outlier_probability": None, "outlier_probability_error": None}
        out.append(empty | {name: None for name in _ESTIMATES} | {"warning": None, "unavailable": reason})
    return out


def _limit_claims(sample: dict) -> list:
    """What the limit's sample level says a user measures, as ``(field, value, error)`` against the entries of
    ``at_dimension``: with an outlier, the signal on top (probability 1), the top eigenvalue and overlap those of the
    signal, and the signal's own overlap; without one, probability 0 and no overlap; the threshold either way."""
    real = lambda name: float(sample[name]) if sample.get(name) is not None else None  # noqa: E731
    error = lambda name: real(f"{name}_error") or 0.0  # noqa: E731
    if sample["outlier"]:
        claims = [("outlier_probability", 1.0, 0.0), ("eigenvalue", real("eigenvalue"), error("eigenvalue")),
                  ("overlap", real("overlap"), error("overlap")), ("signal_overlap", real("overlap"), error("overlap"))]
    else:
        claims = [("outlier_probability", 0.0, 0.0), ("overlap", 0.0, 0.0), ("signal_overlap", 0.0, 0.0)]
    if sample.get("mu2_critical") is not None:
        claims.append(("mu2_critical", real("mu2_critical"), error("mu2_critical")))
    return claims


_NAMES = {"outlier_probability": "P(signal on top)", "eigenvalue": "top eigenvalue", "overlap": "top overlap",
          "signal_overlap": "signal overlap", "mu2_critical": "mu2_critical"}


def dimension_warning(sample: dict, entries: list) -> str | None:
    """The ``warning`` of ``derive spike`` where what a user measures at a ``d`` of ``at_dimension`` differs from the
    limit's ``sample`` level by more than the two errors together (:func:`_limit_claims`): at each such ``d`` the values
    to expect, then from which ``d`` on the limit holds, or that it does not by the largest, with the limit's own
    reason where it has one (``bulk_mass_above``: about ``d`` times it bulk eigenvalues above the signal). ``None``
    where every available entry agrees with the limit.

    >>> e = lambda x, err: {"mean": x, "error": err}
    >>> row = lambda d, p, o: {"d": d, "unavailable": None, "outlier_probability": p, "outlier_probability_error": "0.01",
    ...                        "overlap": e(o, "0.01"), "signal_overlap": e("0.6", "0.01")}
    >>> dimension_warning({"outlier": True, "overlap": "0.6"}, [row(1000, "1", "0.7"), row(10**4, "1", "0.6")])
    'at d = 1e3 expect top overlap 0.7 +- 0.01 (limit 0.6); the limit needs d >~ 1e4'
    """
    claims = _limit_claims(sample)
    rows, agrees, last_off = [], [], []
    for entry in entries:
        if entry["unavailable"] is not None:
            continue
        off = []
        for name, value, error in claims:
            if name not in entry or value is None:
                continue
            if name == "outlier_probability":
                mean, err = entry[name], entry["outlier_probability_error"]
            else:
                mean, err = entry[name]["mean"], entry[name]["error"]
            if abs(float(mean) - value) > float(err) + error:
                off.append((name, f"{_NAMES[name]} {mean} +- {err} (limit {value:.4g})"))
        agrees.append(not off)
        last_off = [name for name, _ in off]
        if off:
            rows.append(f"at d = {entry['d']:.0e} expect " + ", ".join(text for _, text in off))
    if not rows:
        return None
    text = "; ".join(rows).replace("e+0", "e")
    if agrees[-1]:
        first = next(i for i in range(len(agrees)) if all(agrees[i:]))
        available = [x for x in entries if x["unavailable"] is None]
        return f"{text}; the limit needs d >~ {available[first]['d']:.0e}".replace("e+0", "e")
    available = [x for x in entries if x["unavailable"] is None]
    last = available[-1]["d"]
    largest = " (the largest computed)" if last != entries[-1]["d"] else ""
    text += f"; by d = {last:.0e}{largest} the limit is not what a user measures".replace("e+0", "e")
    mass = sample.get("bulk_mass_above")
    # the limit's own reason applies where the signal is not on top: tokens' eigenvalues above it
    if mass is not None and float(mass) > 0 and "outlier_probability" in last_off:
        text += (f": the limit law puts a share bulk_mass_above = {float(mass):.2g} of the spectrum above the signal, "
                 f"about d times it eigenvalues ({last * float(mass):.2g} at d = {last:.0e}), so a token's eigenvector "
                 f"rather than the signal's is on top ever more often as d grows").replace("e+0", "e")
    return text


def difference(own: dict, paper: dict) -> dict:
    """The model's sample level minus its Gaussian equivalent's, for every quantity both laws give (``eigenvalue``,
    ``overlap``, ``mu2_critical``), in units of the model's stated error where it has one (``unit: "stated
    error"``), else as a plain difference (the model's value is exact: ``unit: "absolute"``); ``None`` for a value
    that one of the two laws does not have.

    >>> difference({"outlier": True, "eigenvalue": "1.50", "overlap": "0.60", "mu2_critical": "0.025",
    ...             "eigenvalue_error": "0.01", "overlap_error": "0.002", "mu2_critical_error": "0.0013"},
    ...            {"outlier": True, "eigenvalue": "1.45", "overlap": "0.61", "mu2_critical": "0.0181822"})
    {'eigenvalue': '5.0', 'overlap': '-5.0', 'mu2_critical': '5.2', 'unit': 'stated error'}

    A threshold at ``mu2 = 0`` in both laws (a large ``delta``) is exact: its error is 0 and so is the difference.

    >>> difference({"mu2_critical": "0", "mu2_critical_error": "0"}, {"mu2_critical": "0"})["mu2_critical"]
    '0'
    """
    def one(name):
        if own.get(name) is None or paper.get(name) is None:
            return None
        gap = mpmath.mpf(own[name]) - mpmath.mpf(paper[name])
        error = own.get(f"{name}_error")
        if error is not None and mpmath.mpf(error) == 0:
            # an estimate exact where it stands (a threshold at mu2 = 0): any gap is beyond its error
            return "0" if gap == 0 else "inf" if gap > 0 else "-inf"
        return format_real(gap / mpmath.mpf(error) if error else gap, 2 if error else 6)

    with mpmath.workdps(30):
        return {**{name: one(name) for name in _COMPARED},
                "unit": "stated error" if any(own.get(f"{name}_error") for name in _COMPARED) else "absolute"}


_COMPARED = ("eigenvalue", "overlap", "mu2_critical")
"""The quantities of a sample level that both laws give, compared in ``difference``."""


def attention_options(m: Model, digits: int = 30) -> dict:
    """The options of every weight scheme (:data:`derive.model.schemes.OPTIONS`, by name, in the order of their names)
    with what the weights of ``m`` were computed with (``None`` for an option its scheme does not take), named in
    every document that depends on them (INTERFACE.md), the reals to ``digits``.

    >>> causal = attention_options(Model(T=4, weights="causal", mask="strict"))
    >>> causal["mask"], causal["tau"], set(attention_options(Model(T=2, weights=["1/2", "1/2"])).values())
    ('strict', '0', {None})
    """
    from derive.model.schemes import OPTIONS

    values = {} if m.weights is None else m.weights.values
    shown = lambda v: v if isinstance(v, str) else format_real(v, digits)  # noqa: E731
    return {o.name: None if o.name not in values else shown(values[o.name])
            for o in sorted(OPTIONS, key=lambda o: o.name)}


_EXACT_SAMPLE = {"outlier": bool, "eigenvalue": (real_text, None), "overlap": real_text,
                 "mu2_critical": (real_text, None), "mu2_windows": [[real_text]], "bulk_mass_above": (real_text, None)}
"""The fields of the exact sample level :func:`_sample` writes, as :func:`derive.cache.memo` checks a stored one."""


def _sample(m: Model, digits: int, error=None) -> dict:
    """The sample level of the model's own ``S`` (:func:`derive.interface.vocabulary_sample`) to ``digits``, or, where
    it is estimated, to the digits each error leaves (the errors to two)."""
    from derive.interface import vocabulary_sample

    with mpmath.workdps(digits + 15):
        s = vocabulary_sample(m, error)
        if s.errors is None:
            fmt = lambda v: "inf" if v == mpmath.inf else format_real(v, digits)  # noqa: E731
            return {"outlier": s.outlier, "eigenvalue": None if s.eigenvalue is None else fmt(s.eigenvalue),
                    "overlap": fmt(s.overlap), "mu2_critical": None if s.mu2_critical is None else fmt(s.mu2_critical),
                    "mu2_windows": [[fmt(a), fmt(b)] for a, b in s.windows],
                    "bulk_mass_above": None if s.mass_above is None else fmt(s.mass_above)}
        errors = dict(s.errors)
        est = lambda name: None if getattr(s, name) is None else estimate(getattr(s, name), errors[name], digits)  # noqa: E731
        return {"outlier": s.outlier, "eigenvalue": est("eigenvalue"), "overlap": est("overlap") if s.outlier else "0",
                "mu2_critical": est("mu2_critical"), "mu2_critical_reason": s.mu2_critical_reason, "mu2_windows": None,
                "bulk_mass_above": None if s.mass_above is None else format_real(s.mass_above, 2),
                **{f"{name}_error": None if e is None else format_real(e, 2) for name, e in s.errors}}


def outliers_document(o, digits: int) -> dict:
    """An :class:`derive.gaussian.outliers.Outliers` as the JSON document of ``derive spike`` (reals to ``digits``)."""
    fmt = lambda x: None if x is None else format_real(x, digits)  # noqa: E731
    doc = {name: {"outlier": lev.outlier, "eigenvalue": fmt(lev.eigenvalue), "overlap": fmt(lev.overlap),
                  "mu2_critical": fmt(lev.mu2_critical)}
           for name, lev in (("population", o.population), ("sample", o.sample))}
    doc["bulk"] = {"right_edge": fmt(o.right_edge), "population_right_edge": fmt(o.population_right_edge)}
    doc["other_outliers"] = [{"cause": x.cause, "level": x.level, "eigenvalue": fmt(x.eigenvalue), "overlap": "0"}
                             for x in o.other_outliers]
    doc["assumptions"] = ASSUMPTIONS
    return doc


def weights_document(m: Model, digits: int = 30) -> dict:
    """The document of ``derive weights``: the weights (exact where they are rational), ``alpha``, ``kappa``,
    ``alpha/kappa`` and the note of a non-unique optimum.

    >>> weights_document(Model(T=2, weights="mean", signs="iid"), 5)["alpha_over_kappa"]
    '1.0'
    """
    from derive.interface import weights
    from derive.resources import check_output

    digits = check_digits(digits)
    check_output(m.need("T").T, digits)
    p = weights(m, digits)
    w, note, a, k = p.weights, p.note, p.alpha, p.kappa
    exact = [format_exact(x) for x in w]
    # format_real leaves its working precision when converting; hold enough digits around it
    with mpmath.workdps(digits + 10):
        # weights repeat (mean, optimal blocks): each distinct value is formatted once
        formatted = {}

        def real(x):
            if x is None:
                return None
            if x not in formatted:
                formatted[x] = format_real(x, digits)
            return formatted[x]

        return {
            "weights": [real(x) for x in w],
            "exact": exact if all(e is not None for e in exact) else None,
            "alpha": real(a),
            "kappa": real(k),
            "alpha_over_kappa": real(None if a is None else a / k),
            "note": note,
        } | attention_options(m, digits)


def bulk_document(m: Model, points: list, digits: int = 30, law: str | None = None) -> dict:
    """The document of ``derive bulk``: the model's own law (``m`` has weights) with its Gaussian equivalent beside it
    (``"gaussian_equivalent"``, at the weights' ``kappa``), or the Gaussian-equivalent law alone (``m`` has ``kappa``,
    or ``law="gaussian-equivalent"``), with the density at ``points`` (exact rationals), which it names (``x``).

    >>> doc = bulk_document(Model(delta=1, gamma=1, T=1, weights="mean"), [1], 6)
    >>> doc["law"], doc["atom_at_zero"], doc["gaussian_equivalent"]["law"], doc["gaussian_equivalent"]["atom_at_zero"]
    ('finite-vocabulary', '0.367879', 'gaussian-equivalent', '0')
    """
    from derive import interface
    from derive.resources import check_density_work

    digits = check_digits(digits)
    check_density_work(len(points), digits)
    if law not in (None, *interface.LAWS):
        raise ParameterError("law", f"must be one of {', '.join(interface.LAWS)}, got {law!r}")
    if interface.model_law(m) and law != "gaussian-equivalent":
        own = _vocabulary_bulk(interface.bulk(m), points, digits)
        beside = _gaussian_bulk(m, points, digits, "the model's own law is this document's")
        return own | {"gaussian_equivalent": beside} | attention_options(m, digits)
    if interface.model_law(m):
        return _gaussian_bulk(m, points, digits, "drop --law for the model's own law") | attention_options(m, digits)
    return _gaussian_bulk(m, points, digits)


def _gaussian_bulk(m: Model, points: list, digits: int, hint: str | None = None) -> dict:
    """The Gaussian-equivalent law of ``m`` (its ``kappa``, given or of its weights) as a document; its warning ends
    with ``hint`` (where the model's own law is)."""
    from derive import interface
    from derive.gaussian import bulk
    from derive.gaussian.regime import gaussian_equivalent_warning

    with mpmath.workdps(digits):
        law = interface.bulk(m, law="gaussian-equivalent")
    values = bulk.density(law.delta, law.gamma, law.kappa, points, digits)
    # format_real reads its argument in the current precision, which must not cut the digits
    with mpmath.workdps(digits + 10):
        return {
            "law": law.law,
            "support": [[format_real(a, digits), format_real(b, digits)] for a, b in law.support],
            "atom_at_zero": format_real(law.atom_at_zero, digits),
            "x": [format_real(x, digits) for x in points],
            "density": [format_real(v, digits) for v in values],
            "polynomial": str(law.polynomial),
            "warning": gaussian_equivalent_warning(m, *([hint] if hint else [])),
        }


def _vocabulary_bulk(law, points: list, digits: int) -> dict:
    import sympy as sp

    points = [sp.Rational(q.numerator, q.denominator) for q in points]
    with mpmath.workdps(digits + 10):
        values = law.densities(points)  # first: a point too far out among the clusters is refused before any work
        support, K = law.support_summary()
        fmt = lambda v: "inf" if v == mpmath.inf else format_real(v, digits)  # noqa: E731
        if K is None:
            note = ("more than one nonzero weight: the support is not derived, [0, inf) holds it (unbounded token "
                    "counts); the density is a cavity estimate, printed to the digits its error allows")
        else:
            note = (f"the last interval holds one cluster of eigenvalues per token count above {K}, "
                    f"of total mass below 1e-{digits}")
        return {
            "law": law.law,
            "kappa": format_real(law.kappa, digits),
            "reuse": format_real(law.reuse, digits),
            "support": [[fmt(a), fmt(b)] for a, b in support],
            "support_note": note,
            "atom_at_zero": format_real(law.atom_at_zero, digits),
            "x": [format_real(x, digits) for x in points],
            "density": [estimate(v, e, digits) for v, e in values],
            "density_error": None if all(e is None for _, e in values) else format_real(max(e for _, e in values), 2),
        }


def estimate(value, error, digits: int) -> str:
    """``value`` to ``digits`` significant digits, or to the digits its ``error`` leaves (at least one): the last digit
    printed stands at the place of the error's first, so rounding moves the value by at most half the error ("1.6"
    for 1.6 +- 0.2, never "2").

    >>> estimate(mpmath.mpf("0.123456"), mpmath.mpf("1e-3"), 30), estimate(1.6, 0.2, 30), estimate(3.24, 0.75, 30)
    ('0.123', '1.6', '3.2')
    """
    if error is None or value == 0:
        return format_real(value, digits)
    place = lambda x: int(mpmath.floor(mpmath.log10(abs(mpmath.mpf(x)))))  # noqa: E731
    reliable = place(value) - place(error) + 1 if error > 0 else digits
    return format_real(value, max(1, min(digits, reliable)))
