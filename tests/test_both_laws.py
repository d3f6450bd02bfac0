"""The model's own law and its Gaussian equivalent in one document (``derive spike``/``derive bulk`` with ``--T``):
the Gaussian equivalent held there must be the paper's law computed on its own from the weights' scalars (``derive
spike --alpha --kappa``, ``derive bulk --kappa``), and the difference must be the two values' difference."""
import json
from fractions import Fraction

import pytest

from derive.cli import main


def _doc(argv, capsys):
    assert main([*argv, "--json"]) == 0
    return json.loads(capsys.readouterr().out)


def test_the_spikes_gaussian_equivalent_is_the_papers_law_of_the_same_weights(capsys):
    own = _doc(["spike", "--delta", "1/4", "--gamma", "1", "--T", "1", "--weights", "mean", "--signs", "iid",
                "--mu2", "3", "--centered", "--digits", "12"], capsys)
    paper = _doc(["spike", "--delta", "1/4", "--gamma", "1", "--alpha", "1", "--kappa", "1", "--mu2", "3",
                  "--centered", "--digits", "12"], capsys)
    assert own["law"] == "finite-vocabulary" and own["gaussian_equivalent"]["law"] == "gaussian-equivalent"
    for level in ("population", "sample"):
        assert own["gaussian_equivalent"][level] == paper[level]
    # T = 1: the model's sample level is exact, the difference plain (the outlier 5.8571 against 5.7778)
    assert own["difference"]["unit"] == "absolute"
    gap = Fraction(own["sample"]["eigenvalue"]) - Fraction(paper["sample"]["eigenvalue"])
    assert abs(Fraction(own["difference"]["eigenvalue"]) - gap) <= Fraction(1, 10**5) * abs(gap)


def test_the_bulks_gaussian_equivalent_is_the_papers_law_at_the_weights_kappa(capsys):
    common = ["bulk", "--delta", "1/2", "--gamma", "1/2", "--x", "0.5,1.5", "--digits", "10"]
    own = _doc([*common, "--T", "3", "--weights", "2,1,1"], capsys)       # kappa = (4 + 1 + 1)/16 = 3/8
    paper = _doc([*common, "--kappa", "3/8"], capsys)
    alone = _doc([*common, "--T", "3", "--weights", "2,1,1", "--law", "gaussian-equivalent"], capsys)
    ge = own["gaussian_equivalent"]
    for key in ("law", "support", "atom_at_zero", "x", "density", "polynomial"):
        assert ge[key] == paper[key] == alone[key], key
    assert own["law"] == "finite-vocabulary" and own["density"] != ge["density"]


@pytest.mark.parametrize("argv, parameter", [
    (["--T", "3", "--weights", "mean", "--kappa", "1/3"], "--law gaussian-equivalent"),
    (["--kappa", "1", "--law", "gaussian-equivalent"], "law"),
    (["--T", "3", "--weights", "mean", "--law", "paper"], "law"),
])
def test_the_papers_law_is_named_where_it_is_refused(argv, parameter, capsys):
    assert main(["bulk", "--delta", "1", "--gamma", "1", "--x", "1", *argv]) == 2
    assert parameter in capsys.readouterr().err


@pytest.mark.parametrize("command", ["derive.cli.commands.bulk", "derive.cli.commands.spike", "verify.commands.mc"])
def test_every_command_that_computes_a_law_offers_the_same_laws_with_the_same_help(command):
    import argparse
    import importlib

    from derive.cli.kit import LAW_HELP, listed
    from derive.interface import LAWS

    parser = argparse.ArgumentParser()
    importlib.import_module(command).add_arguments(parser)
    law, = (a for a in parser._actions if "--law" in a.option_strings)
    assert law.metavar == listed(LAWS)
    assert law.help.startswith("; ".join(f"{name}: {LAW_HELP[name]}" for name in LAWS))


SPIKE = ["spike", "--delta", "1/2", "--gamma", "1/2", "--mu2", "3", "--digits", "12"]


def test_the_spikes_papers_law_of_the_models_weights_comes_alone_without_the_models_law(capsys, monkeypatch):
    from derive import interface

    def never(*args, **kwargs):
        raise AssertionError("the model's own law was computed")

    bulk = interface.bulk
    monkeypatch.setattr(interface, "bulk", lambda m, law="finite-vocabulary":
                        bulk(m, law) if law == "gaussian-equivalent" else never())
    monkeypatch.setattr(interface, "vocabulary_sample", never)
    monkeypatch.setattr(interface, "finite_size", never)
    # weights 2,1,1 with iid signs: alpha = kappa = (4 + 1 + 1)/16 = 3/8
    alone = _doc([*SPIKE, "--T", "3", "--weights", "2,1,1", "--signs", "iid", "--law", "gaussian-equivalent"], capsys)
    paper = _doc([*SPIKE, "--alpha", "3/8", "--kappa", "3/8"], capsys)
    assert alone["law"] == "gaussian-equivalent" and "drop --law" in alone["warning"]
    for key in ("population", "sample", "bulk", "other_outliers", "assumptions"):
        assert alone[key] == paper[key], key
    assert not {"gaussian_equivalent", "difference", "finite_size"} & alone.keys()
    assert (alone["mask"], alone["tau"]) == (None, None)


@pytest.mark.parametrize("argv, line", [
    (["--T", "3", "--weights", "mean", "--signs", "iid", "--law", "gaussian-equivalent", "--d", "100"], "d: belongs"),
    (["--T", "3", "--weights", "mean", "--signs", "iid", "--law", "gaussian-equivalent", "--error", "1e-2"],
     "error: belongs"),
    (["--alpha", "1", "--kappa", "1", "--law", "gaussian-equivalent"], "law: belongs"),
    (["--T", "3", "--weights", "mean", "--signs", "iid", "--law", "paper"], "law: must be one of"),
])
def test_the_spikes_law_is_refused_where_it_does_not_apply(argv, line, capsys):
    assert main([*SPIKE, *argv]) == 2
    err = capsys.readouterr().err
    assert len(err.splitlines()) == 1 and err.startswith(f"derive: error: {line}")
