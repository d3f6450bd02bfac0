r"""The JSON documents of a weight scheme whose weights vary from sequence to sequence (``softmax``; INTERFACE.md's
``derive weights`` entry, and ``derive spike`` and ``derive bulk`` for it): the Gaussian-equivalent law with each
sequence's own weights (:mod:`derive.gaussian.random_weights`), every estimate printed to the digits its error leaves
with the error beside it. The model's own law (finite vocabulary) is derived for fixed weights only; the documents say
so (``own_law``).

:func:`weights_document`, :func:`spike_document` and :func:`bulk_document` are those of :mod:`derive.report.documents`
for every model, with these documents for a model whose weights are random (the commands and ``verify mc`` call
them).
"""
from __future__ import annotations

import mpmath

from derive.numbers import format_real

__all__ = ["ASSUMPTIONS", "OWN_LAW", "assumptions", "weights_document", "weights_fields", "spike_document", "bulk_document"]

ASSUMPTIONS = ("population level: the covariance's law, exact in the limit d/V -> delta at alpha = E[w^T R w], "
               "kappa = E||w||^2; sample level: Gaussian-equivalent pooled vectors a_n m + sqrt(b_n) Sigma^{1/2} g_n "
               "with each sequence's (a_n, b_n) = (w_n^T xi_n, ||w_n||^2), d/N -> gamma (the bulk MP_delta boxtimes "
               "GMP(gamma, law of b), the outlier from the joint law of (w^T R w, ||w||^2))")
"""The assumptions of the random-weight law beyond the weights' own (:func:`assumptions`)."""

OWN_LAW = ("not derived: the model's own law (finite vocabulary, tokens reused a Poisson number of times) is derived for "
           "weights shared by every sequence; with random weights the token matrix carries each sequence's weights as "
           "random marks of its edges, which the cavity populations do not sample")


def assumptions(law) -> str:
    """The ``assumptions`` of a document of random weights: what the weights' law (``law``, a scheme's
    :meth:`~derive.model.schemes.Scheme.law`) is and assumes, then :data:`ASSUMPTIONS`."""
    return f"weights: {law.describes}, expectations over its draws; {ASSUMPTIONS}"


def _est(value, error, digits):
    from derive.report.documents import estimate

    if value is None:
        return None
    with mpmath.workdps(digits + 10):
        return estimate(mpmath.mpf(value), None if error is None else mpmath.mpf(error), digits)


def _random(m) -> bool:
    from derive import interface

    return m.weights is not None and m.T is not None and interface.random_weights(m)


def weights_document(m, digits: int = 30) -> dict:
    """:func:`derive.report.documents.weights_document` with, for a scheme with a law of its weights, its
    :func:`weights_fields`."""
    from derive import interface
    from derive.report.documents import weights_document as fixed

    doc = fixed(m, digits)
    p = interface.weights(m, digits)
    return doc if p.law is None else doc | weights_fields(p, digits)


def spike_document(m, digits: int = 30, **options) -> dict:
    """:func:`derive.report.documents.spike_document`, or for random weights :func:`_random_spike`."""
    from derive import interface
    from derive.report.documents import spike_document as fixed

    if not _random(m):
        return fixed(m, digits, **options)
    if m.d is not None:
        interface.spike(m)  # refused, naming d
    return _random_spike(m, digits)


def bulk_document(m, points: list, digits: int = 30, law: str | None = None) -> dict:
    """:func:`derive.report.documents.bulk_document`, or for random weights :func:`_random_bulk`."""
    from derive import interface
    from derive.report.documents import bulk_document as fixed

    if not _random(m):
        return fixed(m, points, digits, law)
    if law == "finite-vocabulary":
        interface.bulk(m, law=law)  # refused, naming law
    return _random_bulk(m, points, digits)


def weights_fields(p, digits: int) -> dict:
    """The fields ``derive weights`` adds for a scheme of the kind (:class:`derive.model.pooling.Pooling` ``p``):
    ``alpha`` and ``kappa`` to the digits their quadrature error leaves, ``kappa_moments``
    (:math:`E\\|w\\|^2, E\\|w\\|^4`), the errors, and whether the weights are random."""
    law = p.law
    if law is None:
        return {}
    error = p.errors or {}
    a_err, k_err = error.get("alpha"), error.get("kappa")
    out = {"random_weights": bool(law.random),
           "kappa_moments": [_est(x, law.error or None, digits) for x in law.kappa_moments],
           "errors": None if not law.random else {"alpha": None if a_err is None else format_real(a_err, 2),
                                                  "kappa": format_real(k_err, 2),
                                                  "kappa_moments": format_real(law.error, 2)},
           "weights_are": "the mean weights over sequences" if law.random else "the weights of every sequence"}
    if law.random:
        out["kappa"] = _est(p.kappa, k_err, digits)
        out["alpha"] = _est(p.alpha, a_err, digits) if p.alpha is not None else None
        if p.alpha is not None:
            ratio = mpmath.mpf(float(p.alpha)) / mpmath.mpf(float(p.kappa))
            rel = (a_err or 0) / float(p.alpha) + k_err / float(p.kappa) if float(p.alpha) else None
            out["alpha_over_kappa"] = _est(ratio, None if rel is None else float(ratio) * rel, digits)
    return out


def _relative_error(p) -> float:
    """The relative error of ``alpha`` and ``kappa`` together, times 10 (the population level's sensitivity to them is
    of order one)."""
    e = p.errors or {}
    return 10 * ((e.get("alpha") or 0) / max(float(p.alpha), 1e-300) + (e.get("kappa") or 0) / float(p.kappa))


def _random_spike(m, digits: int) -> dict:
    """The document of ``derive spike`` for a model with random weights: the Gaussian-equivalent law with each
    sequence's own weights (:func:`derive.interface.spike`), the paper's law at the mean scalars beside it
    (``gaussian_equivalent``: the fixed-weight formula at :math:`\\alpha = E[w^\\top Rw], \\kappa = E\\|w\\|^2`), and
    their difference."""
    from derive import interface
    from derive.report.documents import attention_options, outliers_document
    from derive.gaussian.random_weights import BATCHES, DRAWS, SEED

    p = interface.weights(m.need("signs"))
    with mpmath.workdps(digits + 5):
        o = interface.spike(m)
        paper = outliers_document(interface.spike(m.replace(weights=None, tau=None, mask=None, T=None, signs=None,
                                                            alpha=p.alpha, kappa=p.kappa, sum_w=1),
                                                  law="gaussian-equivalent"), min(digits, 12))
    rel = _relative_error(p)
    population = o.population
    pop = {"outlier": population.outlier,
           "eigenvalue": None if population.eigenvalue is None else _est(population.eigenvalue,
                                                                          rel * population.eigenvalue, digits),
           "overlap": _est(population.overlap, rel * population.overlap, digits) if population.outlier else "0",
           "mu2_critical": None if population.mu2_critical is None else _est(
               population.mu2_critical, rel * population.mu2_critical, digits)}
    s, errors = o.sample, dict(o.sample.errors or ())
    sample = {"outlier": s.outlier, "eigenvalue": _est(s.eigenvalue, errors.get("eigenvalue"), digits),
              "overlap": _est(s.overlap, errors.get("overlap"), digits) if s.outlier else "0",
              "mu2_critical": _est(s.mu2_critical, errors.get("mu2_critical") or None, digits),
              **{f"{name}_error": None if e is None else format_real(e, 2) for name, e in errors.items()}}
    law = interface.bulk(m, law="gaussian-equivalent")
    edge, edge_error = law.right_edge
    doc = {"law": "gaussian-equivalent", "weights_law": "random: each sequence its own weights",
           "population": pop, "sample": sample,
           "bulk": {"right_edge": _est(edge, edge_error, digits), "right_edge_error": format_real(edge_error, 2),
                    "population_right_edge": _est(o.population_right_edge, rel * o.population_right_edge, digits)},
           "other_outliers": [{"cause": x.cause, "level": x.level, "eigenvalue": _est(x.eigenvalue, errors.get(
               "eigenvalue") if x.level == "sample" else rel * x.eigenvalue, digits), "overlap": "0"}
               for x in o.other_outliers],
           "assumptions": assumptions(p.law),
           "own_law": OWN_LAW,
           "draws": DRAWS, "batches": BATCHES, "seed": SEED,
           "warning": "the model's own law with random weights is not derived (own_law); this is the Gaussian "
                      "equivalent with each sequence's weights",
           "gaussian_equivalent": {"law": "gaussian-equivalent at the mean scalars (the paper's formula at alpha = "
                                          "E[w^T R w], kappa = E||w||^2, as if every sequence had the same weights)",
                                   **{level: paper[level] for level in ("population", "sample")}}}
    doc["difference"] = _difference(doc["sample"], paper["sample"])
    return doc | attention_options(m, digits)


def _difference(own: dict, paper: dict) -> dict:
    """The random-weight law's sample level minus the mean-scalar formula's, in units of the former's stated error."""
    def one(name):
        if own.get(name) is None or paper.get(name) is None or not own.get(f"{name}_error"):
            return None
        with mpmath.workdps(30):
            gap = mpmath.mpf(own[name]) - mpmath.mpf(paper[name])
            return format_real(gap / mpmath.mpf(own[f"{name}_error"]), 2)

    return {"eigenvalue": one("eigenvalue"), "overlap": one("overlap"), "mu2_critical": one("mu2_critical"),
            "unit": "stated error"}


def _random_bulk(m, points: list, digits: int) -> dict:
    """The document of ``derive bulk`` for a model with random weights: the Gaussian-equivalent law
    :math:`\\mathrm{MP}_\\delta \\boxtimes \\mathrm{GMP}(\\gamma, \\nu)` (:math:`\\nu` the law of a sequence's
    :math:`\\|w\\|^2`) at ``points``, with the paper's law at the mean ``kappa`` beside it."""
    import numpy as np

    from derive import interface
    from derive.report.documents import _gaussian_bulk, attention_options
    from derive.gaussian.random_weights import BATCHES, DRAWS, SEED

    law = interface.bulk(m, law="gaussian-equivalent")
    p = interface.weights(m)
    values, errors = law.density(points) if len(points) else ((), ())
    errors = np.array(errors, dtype=float)
    edge, edge_error = law.right_edge
    fixed = _gaussian_bulk(m.replace(weights=None, tau=None, mask=None, T=None, signs=None, kappa=p.kappa), points,
                           min(digits, 12))
    return {"law": "gaussian-equivalent", "weights_law": "random: each sequence its own weights",
            "support_right_edge": _est(edge, edge_error, digits), "right_edge_error": format_real(edge_error, 2),
            "atom_at_zero": format_real(max(0.0, 1 - 1 / float(m.delta), 1 - 1 / float(m.gamma)), digits),
            "x": [format_real(x, digits) for x in points],
            "density": [_est(max(0.0, v), e or None, digits) for v, e in zip(values, errors)],
            "density_error": format_real(float(errors.max()), 2) if len(errors) else None,
            "stieltjes": "1 - K(e) = gamma (1 - J(et)), z = -(1 - K(e))/(e et), m(z) = -J(et)/z, with "
                         "J(et) = int dMP_delta(s)/(1 + et s), K(e) = E[1/(1 + e ||w||^2)]",
            "kappa_moments": [_est(x, p.law.error or None, digits) for x in p.law.kappa_moments],
            "assumptions": assumptions(p.law), "own_law": OWN_LAW, "draws": DRAWS, "batches": BATCHES, "seed": SEED,
            "gaussian_equivalent": {**fixed, "law": "gaussian-equivalent at the mean kappa (the paper's law, as if "
                                                    "every sequence had the same ||w||^2)"}} | attention_options(m, digits)
