import numpy as np
import pytest
import sympy as sp
from hypothesis import given

from verify.montecarlo.signs import sample_signs
from derive.errors import ParameterError
from derive.model.families import CATALOGUE
from derive.model.spec import parse_signs
from tests.strategies import families


def test_prefix_R_is_block_of_ones_plus_identity():
    R = parse_signs("prefix:2").R(4)
    assert R == sp.Matrix([[1, 1, 0, 0], [1, 1, 0, 0], [0, 0, 1, 0], [0, 0, 0, 1]])


def test_suffix_R_puts_the_block_last():
    R = parse_signs("suffix:2").R(3)
    assert R == sp.Matrix([[1, 0, 0], [0, 1, 1], [0, 1, 1]])


def test_markov_R_is_geometric():
    R = parse_signs("markov:1/3").R(3)
    assert R[0, 2] == sp.Rational(1, 9) and R[0, 1] == sp.Rational(1, 3)


def test_gauss_R_is_arcsine_law():
    # Sheppard's formula at rho = 1/2: (2/pi) asin(1/2) = 1/3 exactly.
    assert parse_signs("gauss:1/2").R(2)[0, 1] == sp.Rational(1, 3)


@given(families())
def test_R_is_symmetric_unit_diagonal(fam_T):
    fam, T = fam_T
    R = fam.R(T)
    assert R == R.T and all(R[i, i] == 1 for i in range(T))


@pytest.mark.parametrize("spec", [f"{cls.kind}:{arg}" if arg else cls.kind for cls in CATALOGUE
                                  for arg in cls.examples(5)[-2:]])
def test_sampler_reproduces_R_within_its_confidence_interval(spec):
    # Each entry of the empirical R is a mean of n bounded (+-1) terms: its standard error is
    # at most 1/sqrt(n); 5 standard errors over 25 entries gives a false alarm below 1e-5.
    T, n = 5, 200_000
    fam = parse_signs(spec)
    xi = sample_signs(fam, np.random.default_rng(1), n, T).astype(float)
    R = np.array(fam.R(T), dtype=float)
    assert set(np.unique(xi)) <= {-1.0, 1.0}
    assert np.abs(xi.T @ xi / n - R).max() < 5 / np.sqrt(n)
    assert np.abs(xi.mean(axis=0)).max() < 5 / np.sqrt(n)


@pytest.mark.parametrize("spec, parameter", [
    ("", "signs"), ("prefix", "signs"), ("prefix:0", "signs"), ("prefix:1.5", "signs"),
    ("markov:2", "signs"), ("gauss:1", "signs"), ("nope", "signs"), ("iid:3", "signs"),
])
def test_bad_specs_name_the_parameter(spec, parameter):
    with pytest.raises(ParameterError) as err:
        parse_signs(spec)
    assert err.value.parameter == parameter


def test_block_longer_than_T_is_rejected():
    with pytest.raises(ParameterError, match="exceeds T"):
        parse_signs("prefix:5").R(3)


@pytest.mark.parametrize("bad", ["1.5", "0", "-2", "x", True])
def test_T_must_be_a_positive_integer(bad):
    from derive.model.signs import check_T

    with pytest.raises(ParameterError) as err:
        check_T(bad)
    assert err.value.parameter == "T"
