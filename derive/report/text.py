"""The text forms of the ``derive`` documents (a command's output without ``--json``): a document's fields as
indented ``name: value`` lines (:func:`readable`, also the text form of a command without a table of its own), and the
text form of each ``derive`` command's document, which ends with how to read its numbers (:mod:`derive.report.reading`).

It imports only the standard library and :mod:`derive.report.reading` (the command line imports it with every
command's parser); the catalogue of weight schemes is imported when :func:`weights_text` runs.
"""
from __future__ import annotations

from derive.report.reading import DIGITS, NO_VALUE, estimates, reading

__all__ = ["readable", "weights_text", "bulk_text", "spike_text", "formulas_text", "RANDOM_WEIGHTS_READING"]

RANDOM_WEIGHTS_READING = (
    "law: the Gaussian equivalent with each sequence's own weights (the model's own law is not derived for them: "
    "own_law)",
    "population: the fixed-weight law at alpha = E[w^T R w], kappa = E||w||^2 (exact in the limit), each real to the "
    "digits the quadrature error of alpha and kappa leaves",
    "sample, bulk: *_error is three standard errors over 8 batches of the draws of the weights' limit law (the draws' "
    "error in their means removed by a control variate); each estimate shown to the digits its error leaves",
    "gaussian_equivalent: the paper's formula at the mean scalars, as if every sequence had the same weights; "
    "difference: the random-weight law minus it, in units of the former's stated error")
"""How to read the ``derive spike`` document of a scheme whose weights vary from sequence to sequence
(:mod:`derive.report.randomweights`)."""


def _scalar(v) -> str:
    return "-" if v is None else ("yes" if v is True else "no" if v is False else str(v))


def _flat(v) -> bool:
    return not isinstance(v, (dict, list, tuple))


def readable(doc, indent: int = 0) -> str:
    """A command's JSON document as indented ``name: value`` lines (the output without ``--json`` of a command
    that has no table of its own): lists of numbers on one line, intervals as ``[a, b]``, no JSON or reprs.

    >>> print(readable({"support": [["0", "1.5"]], "atom_at_zero": "0", "sample": {"outlier": True, "eigenvalue": None}}))
    support: [0, 1.5]
    atom_at_zero: 0
    sample:
      outlier: yes
      eigenvalue: -
    """
    pad, lines = " " * indent, []
    items = doc.items() if isinstance(doc, dict) else enumerate(doc)
    for key, v in items:
        label = f"{pad}{key}:" if isinstance(doc, dict) else f"{pad}-"
        if _flat(v):
            lines.append(f"{label} {_scalar(v)}")
        elif all(_flat(x) for x in v if not isinstance(v, dict)) and not isinstance(v, dict):
            lines.append(f"{label} {', '.join(_scalar(x) for x in v)}")
        elif not isinstance(v, dict) and all(isinstance(x, (list, tuple)) and all(map(_flat, x)) for x in v):
            lines.append(f"{label} {', '.join('[' + ', '.join(map(_scalar, x)) + ']' for x in v)}")
        else:
            lines.append(label)
            lines.append(readable(v, indent + 2))
    return "\n".join(lines)


def weights_text(doc: dict) -> str:
    """The text form of ``derive weights``: the weights, ``kappa``, ``alpha`` (or what it needs), the scheme's options
    (each by name, with what its value means where the option says: :attr:`derive.model.schemes.Option.remarks`)."""
    from derive.model.schemes import OPTIONS

    lines = [f"w = [{', '.join(doc['exact'] or doc['weights'])}]", f"kappa = {doc['kappa']}"]
    if doc["alpha"] is None:
        lines += ["alpha: needs --signs (alpha = w^T R w)", "alpha/kappa: needs --signs"]
    else:
        lines += [f"alpha = {doc['alpha']}", f"alpha/kappa = {doc['alpha_over_kappa']}"]
    remarks = {o.name: dict(o.remarks) for o in OPTIONS}
    options = [f"{name} = {doc[name]}" + (f" ({remarks[name][doc[name]]})" if doc[name] in remarks[name] else "")
               for name in sorted(remarks) if doc.get(name) is not None]
    if options:
        lines.append(", ".join(options))
    if doc["note"]:
        lines.append(f"note: {doc['note']}")
    if doc.get("kappa_moments"):  # a scheme with a law of its weights (derive.report.randomweights.weights_fields)
        lines += [f"weights: {doc['weights_are']}", f"kappa_moments (E||w||^2, E||w||^4) = {doc['kappa_moments']}",
                  f"errors: {doc['errors']}"]
    scale = "to unit norm (the note says why)" if "unit norm" in (doc["note"] or "") else "to sum 1"
    return "\n".join(lines + [reading(f"w: normalized {scale}, exact rationals where they exist, else reals", DIGITS)])


def bulk_text(doc: dict) -> str:
    """The law's fields, then its density beside each point, then how to read the numbers.

    >>> print(bulk_text({"law": "gaussian-equivalent", "support": [["0", "4"]], "atom_at_zero": "0", "x": ["1", "2"],
    ...                  "density": ["0.28", "0.18"], "warning": None}))  # doctest: +NORMALIZE_WHITESPACE
    law: gaussian-equivalent
    support: [0, 4]
    atom_at_zero: 0
    warning: -
    x  density
    1  0.28
    2  0.18
    how to read it:
      reals: to --digits significant digits (default 30), each correct to the digits shown
    """
    fields = {k: v for k, v in doc.items() if k not in ("x", "density", "density_error", "gaussian_equivalent")}
    ge = doc.get("gaussian_equivalent")
    width = max(len(x) for x in ["x", *doc["x"]])
    error = doc.get("density_error")
    header = "density" if error is None else f"density (± {error})"
    columns = [doc["density"]] + ([ge["density"]] if ge else [])
    widths = [max(len(v) for v in [header, *doc["density"]])]
    rows = [f"{'x':<{width}}  {header:<{widths[0]}}" + ("  Gaussian equivalent" if ge else "")]
    rows += [f"{x:<{width}}  " + "  ".join(f"{v:<{widths[0]}}" if i == 0 else v for i, v in enumerate(values))
             for x, *values in zip(doc["x"], *columns)]
    if ge:
        rows.append(readable({"gaussian_equivalent": {k: v for k, v in ge.items() if k not in ("x", "density")}}))
    if doc.get("weights_law"):  # random weights per sequence: derive.report.randomweights
        estimated = ("density: the Gaussian equivalent with each sequence's own weights, each value shown only to the "
                     f"digits its error leaves; density_error {error}: three standard errors over 8 batches of the "
                     "weights' draws; Gaussian equivalent: the paper's law at the mean kappa")
        return "\n".join([readable(fields), *rows, reading(DIGITS, estimated)])
    estimated = None if error is None else (
        f"density: a cavity estimate, each value shown only to the digits its error leaves (fewer than --digits may "
        f"ask); density_error {error} is the largest error, three standard errors over independent replicas plus the "
        f"last round's change")
    return "\n".join([readable(fields), *rows, reading(DIGITS, estimated)])


def spike_text(doc: dict) -> str:
    """The document's fields, then how to read its numbers: the digits, the errors of the estimated levels."""
    if doc.get("weights_law"):  # random weights per sequence: derive.report.randomweights
        return "\n".join([readable(doc), reading(DIGITS, NO_VALUE, *RANDOM_WEIGHTS_READING)])
    return "\n".join([readable(doc), reading(
        DIGITS, NO_VALUE, "overlap: the limit of |u_hat^T u|^2, the squared cosine of the outlier's eigenvector with u",
        *(estimates(doc[level], level) for level in ("population", "sample")),
        "bulk_mass_above: the share of the bulk's eigenvalues above the outlier (d times it: how many to expect)"
        if doc["sample"].get("bulk_mass_above") is not None else None,
        "gaussian_equivalent: the paper's law for the same weights and signs (pooled vectors replaced by Gaussian ones "
        "with the same covariance)" if "gaussian_equivalent" in doc else None,
        "difference: the model's sample level minus the Gaussian equivalent's, in units of the model's stated error "
        "(beyond +-1: the two laws differ by more than that error) or, where the model's value is exact, absolute"
        if "difference" in doc else None,
        "finite_size: what a user measures at that d (method: how it was computed): each mean to the digits its error "
        "leaves, error covering its truth (sampling and method), sd the spread over the draws; outlier_probability: the "
        "chance that the signal's eigenvalue is the top one; eigenvalue, overlap: the top eigenvector's (what PCA "
        "returns); signal_overlap: the signal's own eigenvector's, wherever it sits"
        if doc.get("finite_size") is not None else None,
        "at_dimension: the same at d = 1e3, 1e4, 1e5, 1e6 (V, N from delta, gamma; fewer draws than --d, errors "
        "stated; unavailable: why a d is beyond the bounded cost or any method); warning: where they differ from the "
        "limit by more than their errors (--no-dimensions skips them)"
        if doc.get("at_dimension") is not None else None)])


def formulas_text(doc: list) -> str:
    """The text form of ``derive formulas``: each result's claim, name and exact formula."""
    lines = []
    for f in doc:
        equation = f["sympy"] if f["lhs"] is None else f"{f['lhs']} = {f['sympy']}"
        lines += [f"[{f['claim']}] {f['name']}", f"    {equation}"]
    return "\n".join(lines + [reading(
        "[claim] name, then the formula: exact, in SymPy's syntax (harmonic(k) = H_k); --json adds its LaTeX, its "
        "assumptions and where it is derived; --latex writes the formula sheet")])
