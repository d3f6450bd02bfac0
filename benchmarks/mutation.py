"""The mutation check: semantic mutants of the core formulas and weights, each of which the default test suite must
kill, and the quick ledger must notice when the mutant touches a claim it confirms.

Every mutant is one textual change of one line of ``derive/`` (a formula made 1% or 5% wrong, a term dropped, a
parameter off). The check copies the checkout to a temporary folder and, for each mutant in turn:

1. applies it and runs ``pytest -x`` there on the tests expected to kill it, then (if it survives them) on the whole
   default suite; the failing test is then run on the unmutated copy, where it must pass (otherwise the kill is not
   the mutant's);
2. runs the quick ledger's checks of the claims confirmed at baseline (with the claims they need) and compares their
   verdicts with the baseline's. Monte Carlo observations do not depend on the formulas, so they are cached between
   runs (in ``.mutation-cache/``), keyed on their arguments, on the source of the code that draws and observes, and
   on the derived expression that the control variates subtract.

Run from the checkout's root: ``python -m benchmarks mutation`` (about 15 minutes on 2 cores); it writes
``notes/mutation.md``. Not part of CI.
"""
from __future__ import annotations

import hashlib
import json
import os
import pickle
import re
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

__all__ = ["Mutant", "scaled", "MUTANTS", "run", "ledger_verdicts", "markdown"]


POWER_TEST = "tests/test_mc_properties.py::test_a_five_percent_error_in_an_outlier_or_its_overlap_would_be_seen"
QUADRATURE_TEST = "tests/test_spikes.py::test_the_numeric_outliers_follow_from_the_population_stieltjes_transform"
POPULATION_TEST = "tests/test_spikes.py::test_population_outliers_against_the_exact_covariance_of_sampled_tables"
EDGE_TEST = "tests/test_spikes.py::test_population_outlier_meets_the_bulk_edge_at_the_threshold"
CAVITY_TEST = "tests/test_cavity.py::test_resolvent_lies_within_the_bounds_of_the_exact_moments"
FIELD_TEST = "tests/test_signfield.py::test_the_field_agrees_with_sampled_token_matrices_and_catches_a_one_percent_coupling_error"
SLOPE_TEST = "tests/test_signfield.py::test_the_derivatives_are_the_transforms_derivatives"


@dataclass(frozen=True)
class Mutant:
    """One semantic mutant: in ``path``, the one occurrence of ``old`` becomes ``new``; ``first`` are the test files
    or tests expected to kill it (run before the rest of the suite); ``touches`` the claims whose check compares it."""

    name: str
    what: str
    path: str
    old: str
    new: str
    first: tuple[str, ...]
    touches: tuple[str, ...]


def scaled(name: str, what: str, path: str, expression: str, factor: str, first: tuple, touches: tuple) -> Mutant:
    """The mutant that multiplies the one occurrence of ``expression`` in ``path`` by ``factor`` (a Python literal):
    a formula made ``factor`` times too large, in one line of :data:`MUTANTS`."""
    return Mutant(name, what, path, expression, f"{factor} * {expression}", first, touches)


MUTANTS = [
    scaled("sample overlap x0.95", "the sample-level overlap of every outlier 5% low", "derive/gaussian/outliers.py",
           'zeta * f["factor"](strength, delta, gamma, kappa) * cos2', "0.95", (POWER_TEST, QUADRATURE_TEST),
           ("C2", "C4", "C9")),
    scaled("sample overlap x1.05", "the sample-level overlap 5% high", "derive/gaussian/outliers.py",
           'zeta * f["factor"](strength, delta, gamma, kappa) * cos2', "1.05", (POWER_TEST, QUADRATURE_TEST),
           ("C2", "C4", "C9")),
    Mutant("population overlap x0.95", "the population-level overlap 5% low", "derive/gaussian/outliers.py",
           'return True, f["ell"](strength, delta, kappa), zeta * cos2, threshold',
           'return True, f["ell"](strength, delta, kappa), 0.95 * zeta * cos2, threshold',
           (QUADRATURE_TEST, POPULATION_TEST), ("C2", "C3", "C9")),
    Mutant("sample outlier x1.01", "the sample outlier's eigenvalue 1% high", "derive/gaussian/outliers.py",
           'return True, f["psi"](strength, delta, gamma, kappa),',
           'return True, 1.01 * f["psi"](strength, delta, gamma, kappa),',
           (POWER_TEST, QUADRATURE_TEST), ("C2", "C4", "C9")),
    Mutant("population outlier x1.01", "the population outlier ell(theta) 1% high (and all that is built on it)",
           "derive/gaussian/spikes.py", "    return sp.factor(roots[0])", "    return sp.factor(roots[0] * sp.Rational(101, 100))",
           (EDGE_TEST, QUADRATURE_TEST), ("C2", "C3", "C4", "C9")),
    Mutant("population edge x1.01", "the population bulk's right edge ell(theta_c) 1% high", "derive/gaussian/spikes.py",
           "    return sp.factor(sp.simplify(population_outlier_location().subs(theta, population_threshold())))",
           "    return sp.factor(sp.simplify(population_outlier_location().subs(theta, population_threshold())) * "
           "sp.Rational(101, 100))", (EDGE_TEST, "tests/test_edges.py::test_the_outlier_is_born_continuously_at_its_threshold"),
           ("C2", "C3", "C9")),
    Mutant("mean spike W^2 -> W", "the vocabulary-mean spike W delta instead of W^2 delta", "derive/model/expectations.py",
           '"mean_strength": sp.factor((spec["one"] * V * m_norm2).subs(limit)),',
           '"mean_strength": sp.factor((spec["one"] * V * m_norm2).subs(limit).subs(W**2, W)),',
           (POPULATION_TEST, POWER_TEST), ("C4", "C9")),
    Mutant("cos^2 with delta/2", "the signal direction's cos^2 mu2/(mu2 + delta/2)", "derive/model/expectations.py",
           '"signal_cosine2": sp.factor((mu2 / signal_norm2).subs(limit)),',
           '"signal_cosine2": sp.factor((mu2 / (mu2 + g_norm2 / 2)).subs(limit)),',
           (POWER_TEST, POPULATION_TEST, "tests/test_expectations.py"), ("C2", "C3", "C4", "C9")),
    Mutant("signal strength without the class mean", "the spike alpha mu2 (the paper's) instead of alpha (mu2 + delta)",
           "derive/model/expectations.py", '"signal_strength": sp.factor((spec["s"] * V * signal_norm2).subs(limit)),',
           '"signal_strength": sp.factor((spec["s"] * V * mu2).subs(limit)),',
           (POWER_TEST, POPULATION_TEST, "tests/test_expectations.py"), ("C2", "C3", "C4", "C9")),
    Mutant("population threshold x1.05", "the population threshold theta_c 5% high", "derive/gaussian/spikes.py",
           "    return sp.factor(positive[0])", "    return sp.factor(positive[0] * sp.Rational(21, 20))",
           (EDGE_TEST,), ("C2", "C3", "C9")),
    Mutant("sample threshold x1.05", "the sample threshold 5% high", "derive/gaussian/outliers.py",
           "    return _sample_threshold(*args, mpmath.mp.prec)",
           '    return _sample_threshold(*args, mpmath.mp.prec) * mpmath.mpf("1.05")',
           ("tests/test_spikes.py::test_delta_zero_is_bbp_with_pauls_overlap", "tests/test_edges.py"), ("C2", "C9")),
    Mutant("bulk cubic coefficient", "the m^2 coefficient of the bulk cubic off by 0.05 delta kappa z", "derive/gaussian/freeprob.py",
           "    return scale(free_multiplicative_convolution(marchenko_pastur(delta), marchenko_pastur(gamma)), kappa)",
           "    return sp.expand(scale(free_multiplicative_convolution(marchenko_pastur(delta), marchenko_pastur(gamma)), "
           "kappa)) + sp.Rational(1, 20) * delta * kappa * z * m**2",
           ("tests/test_bulk.py::test_mp1_boxtimes_mp1_is_the_fuss_catalan_density", "tests/test_bulk.py"), ("C1", "C9")),
    Mutant("bulk atom x1.05", "the atom at zero 5% heavy", "derive/gaussian/freeprob.py",
           "    return sp.Max(*[1 + p for p in poles if p.is_negative])",
           "    return sp.Max(*[1 + p for p in poles if p.is_negative]) * sp.Rational(21, 20)",
           ("tests/test_bulk.py::test_mass_with_atoms_and_hard_edges", "tests/test_freeprob.py"), ("C1",)),
    Mutant("causal weights + 5% uniform", "the limit weights of causal attention mixed with a little mean pooling",
           "derive/model/attention.py", "        w = [f(k, n) for k in range(1, n + 1)]",
           "        w = [f(k, n) + Fraction(1, 20 * n) for k in range(1, n + 1)]",
           ("tests/test_attention.py",), ("C6", "C7")),
    Mutant("optimal weights off the block", "the optimal weights of a block family put mass outside the block",
           "derive/model/attention.py",
           "        w = [sp.Rational(1, len(B)) if i in members else sp.Integer(0) for i in range(n)]",
           "        w = [sp.Rational(1, len(B)) if i in members else sp.Rational(1, 10 * n) for i in range(n)]",
           ("tests/test_optimality.py", "tests/test_attention.py"), ("C5",)),
    Mutant("alpha x1.05", "alpha = w^T R w 5% high for the block families (the closed form every pooling uses)",
           "derive/model/families.py",
           "        return exact_sum(w[i] for i in inside) ** 2 + exact_sum((w[i] for i in range(T) if i not in inside), 2)",
           "        return (exact_sum(w[i] for i in inside) ** 2 + exact_sum((w[i] for i in range(T) if i not in inside), 2)"
           ") * 21 / 20",
           ("tests/test_model.py", "tests/test_attention.py", "tests/test_optimality.py"), ("C2", "C3", "C4", "C5", "C9")),
    Mutant("markov R with r^2", "the exact R of markov:r built with r^2", "derive/model/families.py",
           "        return r ** sp.Abs(t - s)", "        return r ** (2 * sp.Abs(t - s))",
           ("tests/test_model.py",), ("C7",)),
    Mutant("T = 1 token law", "the token counts Poisson(1.1 lambda) instead of Poisson(lambda)", "derive/vocabulary/limit/tokenreuse.py",
           '    X = Poisson("n_v", lam)', '    X = Poisson("n_v", lam * sp.Rational(11, 10))',
           ("tests/test_tokenreuse.py",), ("C1",)),
    scaled("cavity coupling x1.01", "the cavity field of a sequence's other positions 1% strong (T' >= 2)",
           "derive/vocabulary/limit/cavity.py", "s * (total - w2[u] * xs[u])", "1.01", (CAVITY_TEST,), ("C1",)),
    scaled("cavity coupling x1.03", "the cavity field of a sequence's other positions 3% strong (T' >= 2)",
           "derive/vocabulary/limit/cavity.py", "s * (total - w2[u] * xs[u])", "1.03", (CAVITY_TEST,), ("C1",)),
    scaled("sign field coupling x1.01", "the field along the class signs 1% strong (the model's limit outlier, T' >= 2)",
           "derive/vocabulary/limit/signfield.py", "(self.R * (1 - np.eye(n)))", "1.01", (FIELD_TEST,), ()),
    scaled("sign field coupling x1.02", "the field along the class signs 2% strong (the model's limit outlier, T' >= 2)",
           "derive/vocabulary/limit/signfield.py", "(self.R * (1 - np.eye(n)))", "1.02", (FIELD_TEST,), ()),
    scaled("sign field slope chain x1.01", "the chain term dX H / X of the field's derivative 1% strong (the limit "
           "outlier's overlap, T' >= 2)", "derive/vocabulary/limit/signfield.py", "dX[i] * H[i] / X[i]", "1.01",
           (SLOPE_TEST,), ()),
]

SILVERSTEIN, LIMIT, DRAW = "derive/vocabulary/limit/silverstein.py", "derive/vocabulary/limit", "derive/vocabulary/draw"
T1_LAW = ("tests/test_silverstein.py",)
SIGNAL = ("tests/test_silverstein.py::test_the_signal_outlier_is_x_at_the_root_of_its_equation",
          "tests/test_outlier.py::test_one_nonzero_weight_gives_the_exact_law", "tests/test_cli_vocabulary.py")

VOCABULARY_MUTANTS = [
    # every formula site of derive/vocabulary, made 1% wrong (issue 37: each must have a test that notices)
    scaled("summand x1.01", "one atom's term c/(delta (c - t)) of S_0 1% high", SILVERSTEIN, "c / (delta * (c - t))",
           "sp.Rational(101, 100)", T1_LAW, ()),
    Mutant("x(t) x1.01", "Silverstein's x(t) = t (1 - S_0) 1% high", SILVERSTEIN, "        return tv * (1 - s0)",
           "        return 1.01 * tv * (1 - s0)", T1_LAW, ()),
    scaled("exact density x1.01", "the density Im t/(pi |t|^2) of the exact law 1% high", SILVERSTEIN,
           "mpmath.im(tv) / (mpmath.pi * abs(tv) ** 2)", "1.01", T1_LAW, ()),
    scaled("exact atom at zero x1.01", "the exact law's atom at zero 1% heavy", SILVERSTEIN,
           "1 - (1 - self.population.mass(0)) / self._delta()", "1.01", T1_LAW, ()),
    scaled("cluster mass x1.01", "the mass of separated clusters sum p_k/delta 1% high", SILVERSTEIN,
           "mpmath.fsum(self.population.mass(j) for j in range(k_lo, k_hi + 1)) / self._delta()", "1.01", T1_LAW, ()),
    scaled("Poisson mass x1.01", "the Poisson population's masses 1% high", f"{LIMIT}/populations.py",
           "mpmath.exp(-lam + j * mpmath.log(lam) - mpmath.loggamma(j + 1))", "1.01", T1_LAW, ()),
    scaled("Poisson atoms x1.01", "the Poisson population's atoms kappa j/lambda 1% high", f"{LIMIT}/populations.py",
           "mpmath.mpf(self.kappa.p) / self.kappa.q * j * self.lam.q / self.lam.p", "1.01", T1_LAW, ()),
    scaled("rank fraction x1.01", "the rank of the token matrix over N 1% high (the atom at zero, every T)",
           f"{LIMIT}/tokengraph.py", "1 - max(Phi(a) for a in candidates)", "1.01", ("tests/test_tokengraph.py",), ()),
    scaled("reuse x1.01", "the reuse N T/V 1% high", f"{LIMIT}/tokengraph.py", "d / g * int(T_value)",
           "sp.Rational(101, 100)", ("tests/test_tokengraph.py", "tests/test_cli_vocabulary.py"), ()),
    scaled("token count moments x1.01", "the moments of n/lambda, n Poisson, 1% high", f"{LIMIT}/tokenreuse.py",
           "sp.simplify(expect(X**k) / lam**k)", "sp.Rational(101, 100)", ("tests/test_tokenreuse.py",), ()),
    scaled("d-space moments x1.01", "the moments of S from those of D 1% high", f"{LIMIT}/tokenreuse.py",
           "sp.expand(v_space[k] / delta)", "sp.Rational(101, 100)", ("tests/test_tokenreuse.py", "tests/test_walks.py"), ()),
    scaled("walk moments x1.01", "the moments of D counted on the walks of the token tree 1% high",
           f"{LIMIT}/walks.py", "tokenreuse.d_space_moments(list(law), n)", "sp.Rational(101, 100)",
           ("tests/test_walks.py",), ()),
    Mutant("Stieltjes bounds x1.01", "the Gauss-Radau bounds of the Stieltjes transform 1% wide", f"{LIMIT}/walks.py",
           "    return float(gauss), float(_jacobi_fraction(m[0], -a, radau, beta[:r]))",
           "    return 1.01 * float(gauss), 1.01 * float(_jacobi_fraction(m[0], -a, radau, beta[:r]))",
           ("tests/test_walks.py", "tests/test_cavity.py"), ()),
    scaled("token eigenvalue x1.01", "the eigenvalue of a token seen k times 1% high", f"{LIMIT}/topbulk.py",
           "ck * (1 - s / law._delta())", "1.01", ("tests/test_topbulk.py",), ()),
    scaled("largest count law x1.01", "P(largest count <= m) 1% high", f"{LIMIT}/topbulk.py",
           "law.population.cdf(m) ** V", "1.01", ("tests/test_topbulk.py",), ()),
    scaled("signal on top x1.01", "the probability that the signal outlier tops the spectrum 1% high",
           f"{LIMIT}/topbulk.py", "law.population.cdf(k - 1) ** V", "1.01", ("tests/test_topbulk.py",), ()),
    scaled("cavity density x1.01", "the cavity's density Im t/(pi |t|^2) 1% high (T' >= 2)", f"{LIMIT}/cavity.py",
           "max(t.imag, 0.0) / (np.pi * abs(t) ** 2)", "1.01", ("tests/test_cavity.py",), ()),
    scaled("conditional token matrix x1.01", "one draw's D = (V/N) A A^T 1% large", f"{DRAW}/spectrum.py",
           "(V / N) * A.token_gram()", "1.01", ("tests/test_conditional.py",), ()),
    Mutant("conditional location x1.01", "the conditional outlier's location 1% high", f"{DRAW}/spectrum.py",
           '"location": (arguments, location), "overlap": (arguments, overlap)}',
           '"location": (arguments, sp.Rational(101, 100) * location), "overlap": (arguments, overlap)}',
           ("tests/test_conditional.py",), ("C2", "C4")),
    Mutant("conditional overlap x1.01", "the conditional outlier's squared overlap 1% high", f"{DRAW}/spectrum.py",
           '"location": (arguments, location), "overlap": (arguments, overlap)}',
           '"location": (arguments, location), "overlap": (arguments, sp.Rational(101, 100) * overlap)}',
           ("tests/test_conditional.py",), ("C2", "C4")),
    scaled("signal mass above x1.01", "the exact law's mass above the signal outlier (bulk_mass_above) 1% high",
           f"{LIMIT}/signal.py", "(1 - law.population.cdf(k)) / _delta(law)", "1.01",
           ("tests/test_silverstein.py::test_the_mass_above_the_outlier_is_the_integral_of_the_density",), ()),
    scaled("signal location x1.01", "the model's signal outlier, its location at one nonzero weight 1% high",
           f"{LIMIT}/signal.py", "sp.factor_terms(sp.expand(e[\"location\"].subs(S0, e[\"equation\"].rhs)))",
           "sp.Rational(101, 100)", SIGNAL, ()),
    scaled("signal overlap x1.01", "the model's signal outlier, its squared overlap 1% high", f"{LIMIT}/signal.py",
           "sp.factor_terms(sp.simplify(along_u / norm2))", "sp.Rational(101, 100)", SIGNAL, ("C2", "C4")),
    Mutant("outlier location x1.01", "the model's signal outlier's location x(t) 1% high, every weight (the equations "
           "signal_outlier and limit_spike evaluate)", f"{LIMIT}/signal.py",
           '"location": x, "overlap": overlap, "edge_condition"',
           '"location": sp.Rational(101, 100) * x, "overlap": overlap, "edge_condition"',
           ("tests/test_silverstein.py::test_the_signal_outlier_is_x_at_the_root_of_its_equation",) + SIGNAL[1:],
           ("C2", "C4")),
    scaled("limit mass above x1.01", "the quenched populations' mass above the outlier 1% high (T' >= 2)",
           f"{LIMIT}/outlier.py", 'float(np.mean([f["above"] for f in found])) / delta', "1.01",
           ("tests/test_outlier.py::test_one_nonzero_weight_gives_the_exact_law",), ()),
    Mutant("float view density x1.01", "the float64 view's density 1% high", f"{LIMIT}/floatview.py",
           "out[inside] = tv.imag / (np.pi * np.abs(tv) ** 2)", "out[inside] = 1.01 * tv.imag / (np.pi * np.abs(tv) ** 2)",
           T1_LAW, ()),
]

REFERENCE_MUTANTS = [
    # the references the notes lean on, made 1% wrong
    scaled("large-instance S0 x1.01", "the deterministic equivalent's S_0 = (1 + zeta g)/delta of the law given D 1% high",
           "verify/montecarlo/quadrature.py", "(1.0 + zeta * g) / delta", "1.01", ("tests/test_quadrature.py",), ()),
    scaled("large-instance S0 x1.10", "the same, 10% high (the issue's mutant)", "verify/montecarlo/quadrature.py",
           "(1.0 + zeta * g) / delta", "1.10", ("tests/test_quadrature.py",), ()),
    scaled("Lanczos quadrature x1.01", "the stochastic Lanczos quadrature's resolvent 1% high",
           "verify/montecarlo/quadrature.py", "complex(np.mean(np.sum(self.weights * inverse, axis=1)))", "1.01",
           ("tests/test_quadrature.py",), ()),
    scaled("table covariance x1.01", "the exact covariance of the pooled vectors given a table 1% high (its I term)",
           "verify/montecarlo/population.py", "c_I * E @ E.T", "1.01",
           ("tests/test_expectations.py::test_the_table_covariance_of_the_population_reference_is_the_enumerated_one",
            POPULATION_TEST), ()),
]

MUTANTS = MUTANTS + VOCABULARY_MUTANTS + REFERENCE_MUTANTS


# ---------------------------------------------------------------------------------------------------------------
# the ledger with cached Monte Carlo observations (run inside the mutated copy)

def _cached(function, folder: Path, salt: str):
    def wrapper(*args, **kwargs):
        key = hashlib.sha256(pickle.dumps((function.__name__, args, sorted(kwargs.items()), salt))).hexdigest()
        path = folder / f"{key}.pickle"
        if path.exists():
            return pickle.loads(path.read_bytes())
        value = function(*args, **kwargs)
        path.write_bytes(pickle.dumps(value))
        return value
    return wrapper


def ledger_verdicts(claim_ids, cache: Path) -> dict:
    """The quick ledger's verdicts of ``claim_ids`` (and of the claims they need), with the Monte Carlo observations
    cached in ``cache``. The cache key holds the source of the code that draws and observes and the derived
    expectations the control variates subtract, so a mutant of either recomputes."""
    import verify.comparison as comparison
    from derive.model import expectations
    from verify.threads import limit_blas_threads

    # the thread policy of the verify command line: on a busy 2-core machine two BLAS threads per solve made the
    # quick ledger's dense solves 15 times slower
    limit_blas_threads(1)
    root = Path(comparison.__file__).parent
    drawing = sorted((root / "montecarlo").glob("*.py")) + [root / "comparison.py"]
    salt = hashlib.sha256(b"".join(p.read_bytes() for p in drawing)).hexdigest() + str(
        [expectations.sample_covariance_mean(c) for c in (False, True)])
    cache.mkdir(parents=True, exist_ok=True)
    comparison.observe_sample = _cached(comparison.observe_sample, cache, salt)
    comparison.observe_population = _cached(comparison.observe_population, cache, salt)
    from verify.ledger.checks import common

    common.trials = _cached(common.trials, cache, salt)
    from verify.ledger.claims import CLAIMS
    from verify.ledger.records import run_ledger

    wanted, order = set(claim_ids), []
    for claim in reversed(CLAIMS):
        if claim.id in wanted:
            wanted.update(claim.needs)
    order = [c for c in CLAIMS if c.id in wanted]
    results = run_ledger(order, dict(common.QUICK, figures=""))
    return {k: {"verdict": r.record["verdict"], "reason": r.record.get("reason", "")} for k, r in results.items()}


# ---------------------------------------------------------------------------------------------------------------
# the driver (run in the checkout)

def _copy(source: Path, target: Path) -> None:
    files = subprocess.run(["git", "ls-files", "-co", "--exclude-standard"], cwd=source, capture_output=True,
                           text=True, check=True).stdout.split()
    for name in files:
        if (source / name).is_file():
            (target / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source / name, target / name)


def _pytest(copy: Path, nodes, timeout: int) -> tuple[bool, str, float]:
    """``(passed, first failing test, seconds)`` of ``pytest -x nodes`` in ``copy`` (the default suite if ``nodes`` is
    empty)."""
    # a few designed killers run in this process; the whole suite on one worker per core (pyproject's -n auto)
    args = [*nodes, "-n", "0"] if nodes else ["tests", "derive", "verify"]
    start = time.time()
    # no shrinking: the first failing example is enough to call a mutant killed
    env = dict(os.environ, ATTENTION_RMT_HYPOTHESIS_PROFILE="mutation")
    done = subprocess.run([sys.executable, "-m", "pytest", "-x", "-q", "-p", "no:cacheprovider", *args], cwd=copy,
                          capture_output=True, text=True, timeout=timeout, env=env)
    failed = re.findall(r"^FAILED (\S+)", done.stdout, re.M) or re.findall(r"^ERROR (\S+)", done.stdout, re.M)
    return done.returncode == 0, (failed[0] if failed else ""), time.time() - start


def _ledger(copy: Path, claims, cache: Path, timeout: int) -> dict:
    code = ("import json, sys; from pathlib import Path; from benchmarks.mutation import ledger_verdicts; "
            "print(json.dumps(ledger_verdicts(sys.argv[1].split(','), Path(sys.argv[2]))))")
    done = subprocess.run([sys.executable, "-c", code, ",".join(claims), str(cache)], cwd=copy, capture_output=True,
                          text=True, timeout=timeout)
    if done.returncode:
        return {c: {"verdict": "error", "reason": done.stderr.strip().splitlines()[-1:]} for c in claims}
    return json.loads(done.stdout.strip().splitlines()[-1])


def run(mutants=MUTANTS, log=print) -> dict:
    """Run the mutation check; returns the baseline verdicts and one row per mutant."""
    source = Path.cwd()
    start = time.time()
    cache = source / ".mutation-cache"  # Monte Carlo observations, valid across runs (see ledger_verdicts)
    with tempfile.TemporaryDirectory(prefix="mutation-") as tmp:
        copy = Path(tmp) / "repo"
        _copy(source, copy)
        log("baseline ledger ...")
        baseline = _ledger(copy, ["C2", "C3", "C4", "C5", "C6", "C7", "C8", "C9"], cache, 3600)
        confirmed = sorted(k for k, v in baseline.items() if v["verdict"] == "confirmed")
        rows = []
        for mutant in mutants:
            path = copy / mutant.path
            original = path.read_text()
            if original.count(mutant.old) != 1:
                raise SystemExit(f"mutant {mutant.name!r}: {mutant.old!r} occurs {original.count(mutant.old)} times")
            path.write_text(original.replace(mutant.old, mutant.new))
            try:
                # the designed killers alone first (pytest would merge them into the suite's own order), then the suite
                passed, failing, seconds = _pytest(copy, mutant.first, 3600)
                if passed:
                    passed, failing, more = _pytest(copy, (), 3600)
                    seconds += more
                watched = sorted(set(mutant.touches) & set(confirmed))
                verdicts = _ledger(copy, watched, cache, 3600) if watched else {}
            finally:
                path.write_text(original)
            genuine = bool(failing) and _pytest(copy, [failing], 1800)[0]
            row = {"name": mutant.name, "what": mutant.what, "path": mutant.path, "killed": not passed and genuine,
                   "by": failing, "seconds": round(seconds), "confirmed_touched": watched,
                   "verdicts": {k: verdicts.get(k, {}).get("verdict") for k in watched}}
            row["ledger_noticed"] = all(row["verdicts"][k] != "confirmed" for k in watched)
            rows.append(row)
            log(f"{mutant.name}: {'killed by ' + failing if row['killed'] else 'SURVIVED'} ({row['seconds']} s); "
                f"ledger {row['verdicts'] or '-'}")
    return {"baseline": baseline, "confirmed": confirmed, "rows": rows, "seconds": round(time.time() - start)}


def markdown(result: dict) -> str:
    """``notes/mutation.md`` from :func:`run`'s result."""
    rows = result["rows"]
    killed = sum(r["killed"] for r in rows)
    noticed = [r for r in rows if r["confirmed_touched"]]
    out = ["# Mutation check", "", "Generated by `python -m benchmarks mutation`; do not edit by hand.", "",
           f"{killed} of {len(rows)} mutants killed by the default test suite; of the {len(noticed)} that touch a claim "
           f"the quick ledger confirms, {sum(r['ledger_noticed'] for r in noticed)} change that claim's verdict. "
           f"Run: {result['seconds']} s on this machine.", "",
           "Quick ledger at baseline: " + ", ".join(f"{k} {v['verdict']}" for k, v in result["baseline"].items()) + ".",
           "", "| mutant | what | file | killed by | s | confirmed claims it touches: verdict |", "|---|---|---|---|---|---|"]
    for r in rows:
        verdicts = ", ".join(f"{k}: {v}" for k, v in r["verdicts"].items()) or "none touched"
        by = f"`{r['by']}`" if r["killed"] else "**survived**"
        out.append(f"| {r['name']} | {r['what']} | `{r['path']}` | {by} | {r['seconds']} | {verdicts} |")
    return "\n".join(out) + "\n"
