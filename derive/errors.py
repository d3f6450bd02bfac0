"""The one error type of the project: a bad value of a named parameter."""
import re

__all__ = ["ParameterError"]

_LONG_NUMBER = re.compile(r"[0-9]{41,}")


def _shorten(match) -> str:
    digits = match.group(0)
    return f"{digits[:12]}...({len(digits)} digits)"


class ParameterError(ValueError):
    """A parameter has a bad value.

    >>> str(ParameterError("delta", "must be positive, got -1"))
    'delta: must be positive, got -1'

    A run of more than 40 digits in the reason (a huge input echoed back) is shortened, so that the
    error stays one short line:

    >>> str(ParameterError("T", "must be at most 100000, got " + "9" * 1000))
    'T: must be at most 100000, got 999999999999...(1000 digits)'
    """

    def __init__(self, parameter: str, reason: str):
        self.parameter = parameter
        reason = _LONG_NUMBER.sub(_shorten, str(reason))
        self.reason = reason
        super().__init__(f"{parameter}: {reason}")
