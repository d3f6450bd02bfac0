"""What the text form of a document (a command's output without ``--json``) says about its numbers: how many digits
they carry, what their errors and intervals are, so that it can be read without the notes.

Each text form (:mod:`derive.report.text`, and the ``render`` of each ``verify`` command) ends with :func:`reading`
of the lines that apply to its document.
"""
from __future__ import annotations

__all__ = ["DIGITS", "NO_VALUE", "MONTE_CARLO", "CI95", "estimates", "reading"]

DIGITS = "reals: to --digits significant digits (default 30), each correct to the digits shown"
"""The rounding of every derived real."""

NO_VALUE = "-: no value (no outlier there, or not defined)"

MONTE_CARLO = "Monte Carlo reals: 10 significant digits, far finer than their sampling error"
"""The rounding of Monte Carlo reals (their error is the interval's)."""

CI95 = "ci95: the Student-t 95% interval of the mean over the seeds (- for one seed)"


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
