"""The one error type of the project: a bad value of a named parameter."""

__all__ = ["ParameterError"]


class ParameterError(ValueError):
    """A parameter has a bad value.

    >>> str(ParameterError("delta", "must be positive, got -1"))
    'delta: must be positive, got -1'
    """

    def __init__(self, parameter: str, reason: str):
        self.parameter = parameter
        self.reason = reason
        super().__init__(f"{parameter}: {reason}")
