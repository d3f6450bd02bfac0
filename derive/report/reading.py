"""What the text form of a document (a command's output without ``--json``) says about its numbers: how many digits
they carry, what their errors and intervals are, so that it can be read without the notes.

Each text form (:mod:`derive.report.text`, and the ``render`` of each ``verify`` command) ends with :func:`reading`
of the lines that apply to its document.
"""
from __future__ import annotations

__all__ = ["DIGITS", "NO_VALUE", "MONTE_CARLO", "CI95", "SPIKE_FIELDS", "keys", "glossary", "estimates", "reading"]

DIGITS = "reals: to --digits significant digits (default 30), each correct to the digits shown"
"""The rounding of every derived real."""

NO_VALUE = "-: no value (no outlier there, or not defined)"

MONTE_CARLO = "Monte Carlo reals: 10 significant digits, far finer than their sampling error"
"""The rounding of Monte Carlo reals (their error is the interval's)."""

CI95 = "ci95: the Student-t 95% interval of the mean over the seeds (- for one seed)"


SPIKE_FIELDS = (
    (("population", "sample"), "population, sample: the signal's outlier at the population level (N = oo) and at the "
                               "sample level (d/N -> gamma, what a user's S has)"),
    (("outlier",), "outlier: whether that outlier exists"),
    (("eigenvalue",), "eigenvalue: the outlier's location (- without it)"),
    (("overlap",), "overlap: the limit of |u_hat^T u|^2, the squared cosine of the outlier's eigenvector with u (0 "
                   "without the outlier)"),
    (("mu2_critical",), "mu2_critical: the smallest mu2 at which the outlier exists, all else fixed (0: it exists even "
                        "at mu2 = 0)"),
    (("mu2_critical_reason",), "mu2_critical_reason: why mu2_critical is - where it is not defined (- where it is "
                               "given)"),
    (("mu2_windows",), "mu2_windows: the intervals of mu2 in which the outlier stands in a gap of the (unbounded) bulk "
                       "(- at more than one nonzero weight, where the gaps are not searched)"),
    (("bulk_mass_above",), "bulk_mass_above: the share of the bulk's eigenvalues above the outlier (d times it: how "
                           "many to expect)"),
    (("bulk", "right_edge", "population_right_edge"),
     "bulk: right_edge, the sample bulk's right edge (inf: the model's own law is unbounded), and "
     "population_right_edge, that of the population bulk kappa (1 + sqrt(delta))^2"),
    (("other_outliers", "cause", "level"), "other_outliers: every further outlier, with its cause, its level "
                                           "(population or sample), eigenvalue and overlap with u (empty: none)"),
    (("assumptions",), "assumptions: what the limit assumes and how each level is computed"),
    (("law",), "law: finite-vocabulary (the model's own S: tokens drawn from a vocabulary of V and reused) or "
               "gaussian-equivalent (the paper's law: pooled vectors replaced by Gaussian ones with the same "
               "covariance)"),
    (("warning",), "warning: where the values are known to be off (-: nowhere known)"),
    (("gaussian_equivalent",), "gaussian_equivalent: the paper's law for the same weights and signs, the same fields"),
    (("difference", "unit"),
     "difference: the model's sample level minus the Gaussian equivalent's (eigenvalue, overlap, mu2_critical), in the "
     "unit stated: the model's stated error (beyond +-1: the two laws differ by more than that error) or, where the "
     "model's value is exact, absolute (inf: an exact value, such as a threshold at mu2 = 0, the other law "
     "misses)"),
    (("mask", "tau"), "mask, tau: the causal scheme's options the weights were computed with (- for a scheme without "
                      "them)"),
    (("finite_size", "method", "draws", "seed", "V", "N"),
     "finite_size: what a user measures at that d (V, N: the sizes from delta and gamma; method: how it was computed, "
     "over draws token matrices from seed)"),
    (("outlier_probability", "outlier_probability_error"),
     "outlier_probability (± outlier_probability_error): the chance that the signal's eigenvalue is the top one"),
    (("signal_overlap", "top_of_bulk", "mean", "sd", "error"),
     "at that d, eigenvalue and overlap are the top eigenvector's (what PCA returns), signal_overlap the signal's own "
     "eigenvector's, wherever it sits, top_of_bulk the mean largest eigenvalue of the bulk; each a mean to the digits "
     "its error leaves, error covering its truth (sampling and method), sd the spread over the draws"),
    (("at_dimension", "unavailable"),
     "at_dimension: the same at d = 1e3, 1e4, 1e5, 1e6 (V, N from delta, gamma; fewer draws than --d, errors stated; "
     "unavailable: why a d is beyond the bounded cost or any method); warning: where they differ from the limit by more "
     "than their errors (--no-dimensions skips them)"),
)
"""What each field of a ``derive spike`` document means, as ``(names, line)``: the line explains the names
(:func:`glossary` keeps the lines of the names a document has)."""


def keys(doc) -> set[str]:
    """Every key of a document, at any depth (inside lists too).

    >>> sorted(keys({"a": [{"b": 1}], "c": {"d": None}}))
    ['a', 'b', 'c', 'd']
    """
    if isinstance(doc, dict):
        return set(doc).union(*(keys(v) for v in doc.values()))
    if isinstance(doc, (list, tuple)):
        return set().union(*(keys(v) for v in doc))
    return set()


def glossary(doc, fields) -> list[str]:
    """The lines of ``fields`` (``(names, line)`` pairs, e.g. :data:`SPIKE_FIELDS`) that explain a key ``doc`` has, in
    the order of ``fields``: a text form explains what it prints and nothing else.

    >>> glossary({"sample": {"outlier": True}}, SPIKE_FIELDS)[1]
    'outlier: whether that outlier exists'
    """
    present = keys(doc)
    return [line for names, line in fields if present & set(names)]


def _digits(text: str) -> int:
    """The significant digits a formatted real shows.

    >>> _digits("2.896"), _digits("0.00551"), _digits("1.2e-5"), _digits("40")
    (4, 3, 2, 2)
    """
    mantissa = text.split("e")[0].lstrip("-").replace(".", "").lstrip("0")
    return max(1, len(mantissa))


def estimates(level: dict, what: str) -> str | None:
    """The line that explains the ``*_error`` fields of ``level`` (a part of a document whose estimates come from
    quenched cavity populations, ``what`` naming it), with each estimate, its error and the digits it is shown to;
    ``None`` where nothing in it is estimated.

    An error of 0 (a value found exactly) is not listed.

    >>> print(estimates({"eigenvalue": "2.896", "eigenvalue_error": "4.3e-4", "mu2_critical": "0",
    ...                  "mu2_critical_error": "0"}, "sample"))
    sample: *_error is the error of an estimate from quenched cavity populations (three standard errors of the mean \
over independent populations); each estimate is shown only to the digits its error leaves, fewer than --digits may \
ask: eigenvalue 2.896 ± 4.3e-4 (4 digits)
    """
    shown = [f"{name} {level[name]} ± {level[key]} ({_digits(level[name])} digit{'s' * (_digits(level[name]) > 1)})"
             for key in level if key.endswith("_error") and level[key] not in (None, "0")
             for name in [key[:-len("_error")]] if level.get(name) is not None]
    if not shown:
        return None
    return (f"{what}: *_error is the error of an estimate from quenched cavity populations (three standard errors of "
            f"the mean over independent populations); each estimate is shown only to the digits its error leaves, "
            f"fewer than --digits may ask: {', '.join(shown)}")


def reading(*lines: str | None) -> str:
    """The closing block of a text form: ``how to read it:`` and the lines that apply (``None`` is left out).

    >>> print(reading(DIGITS, None, NO_VALUE))
    how to read it:
      reals: to --digits significant digits (default 30), each correct to the digits shown
      -: no value (no outlier there, or not defined)
    """
    return "\n".join(["how to read it:"] + [f"  {line}" for line in lines if line])
