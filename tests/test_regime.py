"""The regime map's pieces (verify/studies/regime.py): the Gaussian-equivalent distribution function against the
claimed law's exact moments, the distance between the two laws where it is known exactly, and the reuse from which
``derive bulk/spike`` stop warning (derive.gaussian.regime.GAUSSIAN_REUSE) against the map's resolution."""
import math

import numpy as np
import pytest
import sympy as sp

from derive import Model
from derive.vocabulary.limit import tokenreuse
from derive.gaussian.regime import GAUSSIAN_REUSE, gaussian_equivalent_warning
from verify.studies.regime import RESOLUTION, distance, ge_distribution


@pytest.mark.parametrize("delta,gamma", [("1/2", "1/4"), ("1/2", "4")])
def test_ge_distribution_has_the_claimed_moments(delta, gamma):
    # the first two moments from free cumulants (tokenreuse, an independent derivation) against the integrals of
    # 1 - F; at gamma = 4 the law has an atom at 0 of mass 3/4. The quadrature (20001 nodes a support interval,
    # then 4e5 on [0, 40]) is good to 1e-7; a misplaced atom or an interval scaled 1% off would show 1e-2
    F = ge_distribution(sp.Rational(delta), sp.Rational(gamma), 1)
    x = np.linspace(0, 40, 400001)
    tail = 1 - F(x)
    m1, m2 = np.trapezoid(tail, x), np.trapezoid(2 * x * tail, x)
    exact = [float(m.subs({tokenreuse.delta: sp.Rational(delta), tokenreuse.gamma: sp.Rational(gamma)}))
             for m in tokenreuse.bulk_moments("claimed")[:2]]
    assert abs(m1 - exact[0]) < 1e-5 and abs(m2 - exact[1]) < 1e-5


def test_distance_is_the_missing_atom_at_one_use_per_token():
    # T = 1, delta = gamma = 1: the model's law has the atom e^{-1} (tokens never seen), the Gaussian equivalent none,
    # and the largest gap between the two distribution functions is that jump at 0
    r = distance(1, 1, [1])
    assert r["at"] == 0.0 and abs(r["ks"] - math.exp(-1)) < 1e-9


def test_no_warning_only_where_the_map_finds_the_gaussian_equivalent_within_resolution():
    # one nonzero weight, the worst case; delta = 4 is the largest distance at N/V = 16 on delta = 1/64 .. 64
    # (0.0014; the slow test runs the grid). Below the threshold the warning is needed: at N/V = 4 the distance
    # is 0.018, above RESOLUTION
    assert gaussian_equivalent_warning(Model(delta=4, gamma=sp.Rational(4, GAUSSIAN_REUSE))) is None
    assert distance(4, sp.Rational(4, GAUSSIAN_REUSE), [1])["ks"] <= RESOLUTION
    assert gaussian_equivalent_warning(Model(delta=1, gamma=sp.Rational(1, 4))) is not None
    assert distance(1, sp.Rational(1, 4), [1])["ks"] > RESOLUTION


@pytest.mark.slow
@pytest.mark.parametrize("delta", ["1/64", "1/16", "1/4", "1", "16", "64"])
def test_gaussian_equivalent_within_resolution_from_the_threshold_on(delta):
    assert distance(delta, sp.Rational(delta) / GAUSSIAN_REUSE, [1])["ks"] <= RESOLUTION
