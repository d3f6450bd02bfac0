"""Hypothesis strategies for valid inputs, shared by every property test."""
from __future__ import annotations

import sympy as sp
from hypothesis import strategies as st

from derive.model import parse_signs

lengths = st.integers(min_value=1, max_value=24)


@st.composite
def sign_specs(draw, T: int | None = None):
    """A family spec valid for length ``T`` (drawn if not given); returns ``(spec, T)``."""
    T = draw(lengths) if T is None else T
    kind = draw(st.sampled_from(["iid", "prefix", "suffix", "markov", "gauss"]))
    if kind == "iid":
        return "iid", T
    if kind in ("prefix", "suffix"):
        return f"{kind}:{draw(st.integers(1, T))}", T
    num = draw(st.integers(-9, 9))
    return f"{kind}:{num}/10", T


@st.composite
def families(draw, T: int | None = None):
    """A :class:`derive.model.SignFamily` with its length: ``(family, T)``."""
    spec, T = draw(sign_specs(T))
    return parse_signs(spec), T


def rationals(low, high, max_denominator: int = 1000, *, open_low=False):
    """Exact rationals in ``[low, high]`` (``(low, high]`` with ``open_low``)."""
    return st.fractions(min_value=low, max_value=high, max_denominator=max_denominator).filter(
        lambda q: not (open_low and q == low)
    ).map(lambda q: sp.Rational(q.numerator, q.denominator))


ratios = rationals(0, 4, 200, open_low=True)
"""Dimension ratios ``delta = d/V`` or ``gamma = d/N`` in ``(0, 4]``."""


@st.composite
def weights(draw, T: int):
    """Nonzero real weight vectors of length ``T`` (exact rationals)."""
    w = draw(st.lists(rationals(-2, 2, 50), min_size=T, max_size=T))
    if all(x == 0 for x in w):
        w[draw(st.integers(0, T - 1))] = sp.Integer(1)
    return w

scales = rationals(sp.Rational(1, 10), 4, 100)
"""Noise scales ``kappa = ||w||^2`` of the bulk law in ``[1/10, 4]``."""


@st.composite
def causal_cases(draw, T_max: int = 200):
    """``(T, tau, mask)`` for the causal limit: ``T <= T_max``, ``tau`` in ``[0, 10]`` (``T >= 2`` if strict)."""
    mask = draw(st.sampled_from(["inclusive", "strict"]))
    T = draw(st.integers(2 if mask == "strict" else 1, T_max))
    return T, draw(rationals(0, 10, 20)), mask


@st.composite
def odd_equicorrelated_unrealizable(draw):
    """``(T, a)``: odd ``T`` and ``a`` in ``[-1/(T-1), -1/T)``, where ``(1-a) I + a J`` is PSD but no
    +-1 vector realizes it (``|sum_t xi_t| >= 1`` forces ``a >= -1/T``)."""
    T = draw(st.sampled_from([3, 5, 7]))
    a = draw(rationals(sp.Rational(-1, T - 1), sp.Rational(-1, T), 1000).filter(lambda q: q != sp.Rational(-1, T)))
    return T, a


@st.composite
def mc_cases(draw, T_max: int = 6):
    """A small Monte Carlo configuration: ``(spec, T, delta, gamma, mu2_factor)`` with ``2 <= T <=
    T_max``, ratios from a grid where the outlier is well separated at ``d`` in the hundreds, and
    ``mu2`` to be taken as ``mu2_factor`` times the sample threshold."""
    spec, T = draw(sign_specs(draw(st.integers(2, T_max))))
    delta = draw(st.sampled_from([sp.Rational(1, 4), sp.Rational(1, 2), sp.Integer(1)]))
    gamma = draw(st.sampled_from([sp.Rational(1, 8), sp.Rational(1, 4), sp.Rational(1, 2)]))
    return spec, T, delta, gamma, draw(st.sampled_from([2, 3, 4]))
