from fractions import Fraction

import numpy as np
import pytest
import sympy as sp
from hypothesis import given, settings
from hypothesis import strategies as st

from verify.montecarlo.signs import sample_signs
from derive.errors import ParameterError
from derive.model.spec import parse_signs
from derive.model.realizable import is_positive_semidefinite, load_correlation_file, realizing_mixture
from tests.strategies import families, odd_equicorrelated_unrealizable


def equicorrelated(T, a):
    return sp.Matrix(T, T, lambda i, j: 1 if i == j else a)


def rationalized(R):
    # what a .npy file of the float matrix would be read as
    return R.applyfunc(lambda x: sp.Rational(Fraction(repr(float(x)))))


def mixture_matrix(x, p):
    return sum((sp.Rational(q.numerator, q.denominator) * sp.Matrix(row.tolist()) * sp.Matrix(row.tolist()).T
                for row, q in zip(x, p)), sp.zeros(x.shape[1]))


@settings(max_examples=25)
@given(st.integers(1, 8).flatmap(lambda n: families(T=n)))
def test_every_family_is_certified_realizable_exactly(fam_T):
    fam, T = fam_T
    R = fam.R(T)
    R = R if fam.kind != "gauss" else rationalized(R)
    x, p = realizing_mixture(R)
    assert all(q > 0 for q in p) and sum(p) == 1
    assert mixture_matrix(x, p) == R


@settings(max_examples=15)
@given(odd_equicorrelated_unrealizable())
def test_psd_but_unrealizable_equicorrelated_matrices_are_rejected(case):
    T, a = case
    R = equicorrelated(T, a)
    assert is_positive_semidefinite(R)
    with pytest.raises(ParameterError, match="cut inequality") as err:
        realizing_mixture(R)
    assert err.value.parameter == "signs"


def test_triangle_inequality_is_the_certificate_for_minus_one_half():
    # xi_1 + xi_2 + xi_3 is odd, so E[(sum xi)^2] = 3 + 2 * sum R_ij >= 1: sum R_ij >= -1
    with pytest.raises(ParameterError, match=r">= -1 .*R gives -3/2"):
        realizing_mixture(equicorrelated(3, sp.Rational(-1, 2)))


def test_boundary_of_the_odd_constraint_is_realizable():
    # a = -1/T: uniform over the patterns with (T+1)/2 signs of one kind
    R = equicorrelated(5, sp.Rational(-1, 5))
    assert mixture_matrix(*realizing_mixture(R)) == R


def test_psd_test_on_classical_cases():
    assert is_positive_semidefinite(equicorrelated(4, sp.Rational(-1, 3)))
    assert not is_positive_semidefinite(equicorrelated(4, sp.Rational(-34, 100)))
    # a zero diagonal entry with a nonzero row: the 2x2 minor [[0, b], [b, 1]] is negative
    assert not is_positive_semidefinite(sp.Matrix([[1, 0, 1], [0, 0, -1], [1, -1, 1]]))


def test_files_round_trip_and_sampler_reproduces_R(tmp_path):
    R = np.array(parse_signs("markov:1/2").R(4), dtype=float)
    np.save(tmp_path / "R.npy", R)
    np.savetxt(tmp_path / "R.csv", R, delimiter=",")
    for name in ("R.npy", "R.csv"):
        fam = parse_signs(f"file:{tmp_path / name}")
        assert fam.R(4) == parse_signs("markov:1/2").R(4)
    # entries are means of n signs: standard error <= 1/sqrt(n), 5 of them over 16 entries
    n = 50_000
    xi = sample_signs(fam, np.random.default_rng(3), n, 4).astype(float)
    assert np.abs(xi.T @ xi / n - R).max() < 5 / np.sqrt(n)
    assert np.abs(xi.mean(axis=0)).max() < 5 / np.sqrt(n)


def _write(tmp_path, name, content):
    path = tmp_path / name
    if isinstance(content, np.ndarray):
        np.save(path, content)
    else:
        path.write_text(content)
    return str(path)


@pytest.mark.parametrize("name, content, reason", [
    ("R.csv", "1,0\n0,1,0\n", "unreadable"),
    ("R.csv", "1,0,0\n0,1,0\n", "square"),
    ("R.csv", "1,nan\nnan,1\n", "finite"),
    ("R.npy", np.array([[1.0, np.nan], [np.nan, 1.0]]), "NaN"),
    ("R.npy", np.array([["a", "b"], ["c", "d"]]), "not real numbers"),
    ("R.csv", "1,0.5\n0.4,1\n", "not symmetric"),
    ("R.csv", "2,0\n0,1\n", "diagonal"),
    ("R.csv", "1,-0.6,-0.6\n-0.6,1,-0.6\n-0.6,-0.6,1\n", "not positive semidefinite"),
    ("R.csv", "1,-0.45,-0.45\n-0.45,1,-0.45\n-0.45,-0.45,1\n", "cut inequality"),
    ("R.npy", np.eye(13), "T = 13 > 12"),
    ("R.txt", "1\n", "only .npy and .csv"),
])
def test_bad_files_name_signs(tmp_path, name, content, reason):
    path = _write(tmp_path, name, content)
    with pytest.raises(ParameterError, match=reason) as err:
        load_correlation_file(path)
    assert err.value.parameter == "signs"


def test_missing_file(tmp_path):
    with pytest.raises(ParameterError, match="no such file"):
        load_correlation_file(str(tmp_path / "absent.npy"))
