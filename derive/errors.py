"""The one error type of the project: a bad value of a named parameter."""
import re

__all__ = ["ParameterError"]

_LONG_NUMBER = re.compile(r"[0-9]{41,}")
_LONG_WORD = re.compile(r"\S{121,}")
_LINE_BREAKS = re.compile(r"[\r\n\v\f\x1c-\x1e\x85\u2028\u2029]+")

MAX_REASON = 300
"""Longest reason kept whole; a longer one (a long list echoed back) keeps its start and its end."""


def _shorten(match) -> str:
    digits = match.group(0)
    return f"{digits[:12]}...({len(digits)} digits)"


def _shorten_word(match) -> str:
    word = match.group(0)
    return f"{word[:40]}...({len(word)} characters)"


def _one_short_line(reason: str) -> str:
    reason = _LINE_BREAKS.sub(" ", reason)
    reason = _LONG_WORD.sub(_shorten_word, _LONG_NUMBER.sub(_shorten, reason))
    if len(reason) > MAX_REASON:
        reason = f"{reason[:MAX_REASON - 100]} ... {reason[-95:]}"
    return reason


class ParameterError(ValueError):
    """A parameter has a bad value.

    >>> str(ParameterError("delta", "must be positive, got -1"))
    'delta: must be positive, got -1'

    A huge input echoed back is shortened, so that the error stays one short line: a run of more than 40
    digits, a word of more than 120 characters, a reason of more than :data:`MAX_REASON` characters (its
    middle); line breaks become spaces.

    >>> str(ParameterError("T", "must be at most 100000, got " + "9" * 1000))
    'T: must be at most 100000, got 999999999999...(1000 digits)'
    >>> str(ParameterError("signs", "unknown family " + repr("a" * 100000)))
    "signs: unknown family 'aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa...(100002 characters)"
    """

    def __init__(self, parameter: str, reason: str):
        self.parameter = parameter
        reason = _one_short_line(str(reason))
        self.reason = reason
        super().__init__(f"{parameter}: {reason}")
