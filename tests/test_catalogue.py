"""The catalogues of sign families and weight schemes, and a user's own parts carried through every layer.

A user's family equal to ``markov:1/2`` (its exact ``R`` typed from the definition ``R_ts = r^|t-s|`` and a sampler
written here, drawing the same random numbers in the same order as a stationary chain that keeps its sign with
probability ``(1 + r)/2``) must give the same weights, ``alpha``, spectra and Monte Carlo as the catalogue's
``markov:1/2`` through ``derive.weights``, ``derive.bulk``, ``derive.spike`` and ``verify.run_trials``. Any
difference is a place where the catalogue's family is branched on instead of asked.
"""
from __future__ import annotations

import json
from fractions import Fraction

import numpy as np
import pytest

import derive
import verify
from derive.cli import main as derive_main
from derive.errors import ParameterError
from derive.model import families, schemes
from verify.cli import main as verify_main


class Chain:
    """A stationary +-1 Markov chain keeping its sign with probability (1 + r)/2, as a user would write it."""

    def __init__(self, r=Fraction(1, 2), name="my-markov"):
        self.r, self.name = r, name

    def R(self, T):
        return [[self.r ** abs(t - s) for s in range(T)] for t in range(T)]

    def sample(self, rng, N, T):
        keep = rng.random((N, T - 1)) < (1 + float(self.r)) / 2
        first = 2 * rng.integers(0, 2, size=(N, 1), dtype=np.int8) - 1
        steps = np.where(keep, 1, -1)
        return first * np.cumprod(np.concatenate([np.ones((N, 1), dtype=int), steps], axis=1), axis=1)


@pytest.mark.parametrize("weights", ["mean", "optimal", ["1/2", "1/4", "1/8", "1/8"]])
def test_a_users_family_equal_to_markov_gives_the_same_weights_and_alpha(weights):
    ours, theirs = (derive.weights(derive.Model(T=4, weights=weights, signs=s)) for s in ("markov:1/2", Chain()))
    assert (ours.weights, ours.alpha, ours.kappa, ours.W) == (theirs.weights, theirs.alpha, theirs.kappa, theirs.W)


def test_a_users_family_equal_to_markov_gives_the_same_laws():
    import mpmath

    models = [derive.Model(delta="1/2", gamma="1/2", T=2, weights="mean", signs=s, mu2=3, centered=True)
              for s in ("markov:1/2", Chain())]
    with mpmath.workdps(20):
        bulks = [derive.bulk(m).densities(["1/2", "3/2"]) for m in models]
        spikes = [derive.spike(m) for m in models]
        gaussian = [derive.spike(m, law="gaussian-equivalent") for m in models]
    assert bulks[0] == bulks[1]
    assert spikes[0].sample == spikes[1].sample and spikes[0].population == spikes[1].population
    assert gaussian[0] == gaussian[1]


def test_a_users_family_equal_to_markov_gives_the_same_monte_carlo():
    runs = [verify.run_trials(derive.Model(d=40, V=80, N=120, T=4, weights="mean", signs=s, mu2=2), seeds=2, k=3,
                              spectrum=True)
            for s in ("markov:1/2", Chain())]
    assert np.array_equal(runs[0].spectra, runs[1].spectra)
    assert np.array_equal(runs[0].overlaps, runs[1].overlaps)


def test_a_users_family_is_shown_by_name_and_checked():
    m = derive.Model(T=3, weights=["1/2", "1/3", "1/6"], signs=Chain(name="chain"))
    assert repr(m) == "Model(T='3', signs='chain', weights='1/2,1/3,1/6')"

    class Odd(Chain):
        def R(self, T):  # pairwise correlations -1/2: PSD, but no +-1 law has them
            return [[1 if t == s else Fraction(-1, 2) for s in range(T)] for t in range(T)]

    with pytest.raises(ParameterError, match="signs"):
        derive.Model(T=3, weights="mean", signs=Odd())
    with pytest.raises(ParameterError, match="signs"):
        derive.Model(T=3, signs=object())

    class BadSampler(Chain):
        def sample(self, rng, N, T):
            return np.zeros((N, T))

    with pytest.raises(ParameterError, match="sample"):
        verify.run_trials(derive.Model(d=20, V=40, N=40, T=3, weights="mean", signs=BadSampler(), mu2=1), seeds=1)


def test_weights_typed_on_the_command_line(capsys):
    assert derive_main(["weights", "--weights", "1/2,1/3,1/6", "--T", "3", "--signs", "iid", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["exact"] == ["1/2", "1/3", "1/6"] and doc["alpha"].startswith("0.3888888")
    assert derive_main(["weights", "--weights", "2,1,1", "--T", "3", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["exact"] == ["1/2", "1/4", "1/4"]
    assert derive_main(["weights", "--weights", "1,2", "--T", "3", "--json"]) == 2
    assert "weights" in capsys.readouterr().err
    assert derive_main(["weights", "--weights", "1,1", "--T", "2", "--tau", "1"]) == 2
    assert "--tau" in capsys.readouterr().err
    assert verify_main(["mc", "--d", "20", "--V", "40", "--N", "40", "--T", "2", "--signs", "iid", "--weights",
                        "3/4,1/4", "--mu2", "1", "--seeds", "2", "--law", "gaussian-equivalent", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["inputs"]["realized"]["weights"] == ["0.75", "0.25"]


def test_the_command_lines_list_every_entry_of_the_catalogues(capsys):
    with pytest.raises(SystemExit):
        derive_main(["spike", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    for cls in families.CATALOGUE:
        assert cls.syntax in text
    for scheme in schemes.CATALOGUE:
        assert all(form in text for form in scheme.syntax)
    for option in schemes.OPTIONS:
        assert f"--{option.name}" in text


def test_every_entry_has_what_the_tools_ask_of_it():
    from verify.figures import SCHEME_COLORS
    from verify.strategies import FAMILY_KINDS, SCHEMES

    for cls in families.CATALOGUE:
        assert cls.kind and cls.syntax.startswith(cls.kind) and cls.summary
    assert set(FAMILY_KINDS) == {cls.kind for cls in families.CATALOGUE if cls.examples(1)}
    assert set(SCHEMES) == {s.name for s in schemes.CATALOGUE if s.drawn}
    assert set(SCHEME_COLORS) == {s.name for s in schemes.CATALOGUE} and len(set(SCHEME_COLORS.values())) == len(
        SCHEME_COLORS)


@pytest.mark.parametrize("cls", [c for c in families.CATALOGUE if c.examples(4)])
def test_each_sampler_has_its_familys_R(cls):
    """The empirical correlation of 40 000 draws at each example parameter is ``R`` within 4.5 standard errors
    (an entry's standard error is at most ``1/sqrt(n)`` = 0.005, so an error of 0.03 in any entry is seen)."""
    n, T = 40_000, 4
    for arg in cls.examples(T)[:4]:
        family = families.parse_signs(f"{cls.kind}:{arg}" if arg else cls.kind)
        xi = family.sample(np.random.default_rng(5), n, T).astype(float)
        R = np.array(family.R(T), dtype=float)
        assert np.abs(xi.T @ xi / n - R).max() < 4.5 / np.sqrt(n), family.spec
        assert np.abs(xi.mean(axis=0)).max() < 4.5 / np.sqrt(n), family.spec


@pytest.mark.parametrize("cls", [c for c in families.CATALOGUE if c.examples(1)])
def test_what_each_family_knows_in_closed_form_is_what_its_R_gives(cls):
    """At each example parameter: ``w^T R w`` (at mean and at uneven weights), the block form, the top eigenvalue and
    the Toeplitz structure that the class states agree with its ``R``; each argument of its table is a family."""
    import sympy as sp

    from derive.symbols import T as T_

    for T in (1, 2, 5):
        for arg in cls.examples(T)[:5]:
            family = families.parse_signs(f"{cls.kind}:{arg}" if arg else cls.kind)
            R = family.R(T)
            for w in ([sp.Rational(1, T)] * T, [sp.Rational(k, 7) for k in (3, -1, 2, 5, 1)][:T]):
                v = sp.Matrix(w)
                assert abs(sp.N(family.quadratic_form(w) - (v.T * R * v)[0, 0], 30)) < 1e-25
            if family.top_eigenvalue(T) is not None:
                assert family.top_eigenvalue(T) == max(R.eigenvals())
            if cls.toeplitz:
                assert all(R[i, j] == R[0, abs(i - j)] for i in range(T) for j in range(T))
            if cls.block_form() is not None:
                blocks, sizes, shared = cls.block_form()
                at = {T_: T, cls.parameter(): sp.Integer(int(family.param))}
                assert sp.Matrix(blocks.subs(at).as_explicit()) == R
                assert sp.Integer(T) == sum(n.subs(at) for n in sizes)
        for arg in cls.tabulated(T):
            families.parse_signs(f"{cls.kind}:{arg}").check(T)
