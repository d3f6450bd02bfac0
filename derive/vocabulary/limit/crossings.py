r"""Where a function crosses a level, in mpmath: a bracket next to a pole (:func:`near`) or out towards infinity
(:func:`beyond`), and the crossing inside a bracket (:func:`crossing`).

The functions of Silverstein's equation (:mod:`derive.vocabulary.limit.silverstein`) and of the signal outlier
(:mod:`derive.vocabulary.limit.signal`) have poles at the atoms of their population, at the ends of the intervals
searched, which is what these are made for; the float64 search of the gaps is :mod:`derive.vocabulary.limit.gaps`.
"""
from __future__ import annotations

import mpmath

__all__ = ["near", "beyond", "crossing"]


def near(f, pole, inner, value, above: bool):
    """A point between ``inner`` and ``pole`` where ``f`` (monotone, infinite at the pole) is beyond ``value``:
    above it if ``above``, else below. The distance to the pole is halved until it is."""
    step = inner - pole
    for _ in range(mpmath.mp.prec):
        step /= 8
        point = pole + step
        if (mpmath.re(f(point)) > value) == above:
            return point
    raise ArithmeticError(f"no point beyond {value} found near {pole}")


def beyond(f, start, value):
    """A point past ``start`` where ``f`` (increasing to a limit above ``value``) exceeds ``value``."""
    point = 2 * start
    while f(point) <= value:
        point *= 2
    return point


def crossing(f, a, b, value, pole=None):
    r"""The crossing of ``f = value`` in ``[a, b]`` for an ``f`` that crosses it once there: the Anderson–Björck
    bracketing method (the functions here have poles at the ends of their intervals, where Newton's steps
    overshoot), until the bracket is below the working precision relative to ``t``. Given the ``pole`` beside the
    bracket nearest to the crossing, the method runs in :math:`u = 1/(t - \mathrm{pole})`, in which
    :math:`C \approx A + K/(t - c)^2` is a quadratic near the atom (and ``C'`` a cubic): in ``t`` a crossing
    :math:`10^{-12}` from an atom took 350 evaluations, the bracket shrinking by a few per cent a step, and a ``derive
    spike`` at one nonzero weight 40 s instead of 8.

    >>> with mpmath.workdps(30):
    ...     print(mpmath.nstr(crossing(lambda t: 1 / (t - 1) ** 2, "1.5", 3, 1, pole=1), 25))
    2.0
    """
    a, b = mpmath.mpf(a), mpmath.mpf(b)
    tol = mpmath.mpf(2) ** (-mpmath.mp.prec + 6) * max(abs(a), abs(b), 1)
    if pole is None:
        to_t = from_t = lambda v: v  # noqa: E731
    else:
        pole = mpmath.mpf(pole)
        to_t = lambda u: pole + 1 / u  # noqa: E731
        from_t = lambda t: 1 / (t - pole)  # noqa: E731
    g = lambda v: mpmath.re(f(to_t(v))) - value  # noqa: E731
    lo, hi = from_t(a), from_t(b)
    glo, ghi = g(lo), g(hi)
    for _ in range(8 * mpmath.mp.prec):
        if abs(to_t(hi) - to_t(lo)) <= tol or ghi == 0:
            break
        z = hi - ghi * (hi - lo) / (ghi - glo)
        if z == hi:
            break  # the secant step no longer moves at the working precision
        gz = g(z)
        if gz * ghi < 0:
            lo, glo = hi, ghi
        else:
            m = 1 - gz / ghi
            glo *= m if m > 0 else mpmath.mpf(1) / 2
        hi, ghi = z, gz
    x = to_t(hi)
    if not min(a, b) <= x <= max(a, b):
        raise ArithmeticError("the root left its bracket")
    return x
