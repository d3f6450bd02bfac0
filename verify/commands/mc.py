"""``verify mc``: Monte Carlo of the model next to the derived prediction for the same parameters."""
import numpy as np
import sympy as sp

from derive.clikit import MASK_CHOICES, SCHEMES, SIGN_SPECS, listed
from derive.errors import ParameterError
from derive.model import check_T, parse_signs
from derive.numbers import check_count, check_digits, format_real, parse_rational
from derive.resources import MAX_MU2, check_trials
from derive.commands.spike import spike
from verify.montecarlo.trials import PATHS, run_trials
from verify.stats import mean_ci

__all__ = ["NAME", "HELP", "add_arguments", "MAX_MU2", "run"]

NAME = "mc"
HELP = "Monte Carlo of S for given d, V, N, T, signs and weights, with the theory for the same parameters"


def add_arguments(p):
    for name, help_ in (("--d", "embedding dimension"), ("--V", "vocabulary size (even)"),
                        ("--N", "number of sequences"), ("--T", "sequence length")):
        p.add_argument(name, required=True, help=help_)
    p.add_argument("--signs", required=True, metavar=listed(SIGN_SPECS), help="sign family")
    p.add_argument("--weights", required=True, metavar=listed(SCHEMES), help="weight scheme")
    p.add_argument("--tau", default=None, help="causal only: attention temperature (default 0)")
    p.add_argument("--mask", default=None, metavar=listed(MASK_CHOICES), help="causal only (default inclusive)")
    p.add_argument("--mu2", required=True, help="signal strength ||mu||^2")
    p.add_argument("--seeds", default="8", help="number of independent trials (default 8)")
    p.add_argument("--seed0", default="0", help="root seed (default 0)")
    p.add_argument("--k", default="4", help="how many top eigenvalues to report (default 4)")
    p.add_argument("--centered", action="store_true", help="the centered covariance S_c")
    p.add_argument("--path", default="auto", metavar=listed(PATHS),
                   help="eigensolver (default auto; mixed: float32 Lanczos, float64-certified)")
    p.add_argument("--digits", default=30, help="significant digits of the theory's reals")


def run(args):
    from derive import attention

    d, V, N, T = (check_count(getattr(args, n), n, low=1) for n in ("d", "V", "N", "T"))
    if V % 2:
        raise ParameterError("V", f"must be even (balanced classes), got {V}")
    seeds, seed0, k = (check_count(args.seeds, "seeds", low=1), check_count(args.seed0, "seed0"),
                       check_count(args.k, "k", low=1))
    if k >= min(d, N):
        raise ParameterError("k", f"must be below min(d, N) = {min(d, N)}, got {k}")
    mu2 = parse_rational(args.mu2, "mu2")
    if mu2 < 0:
        raise ParameterError("mu2", f"must be >= 0, got {args.mu2}")
    if mu2 > MAX_MU2:
        raise ParameterError("mu2", f"must be <= {MAX_MU2} for a float64 simulation, got {args.mu2}")
    digits = check_digits(args.digits)
    family = parse_signs(args.signs)
    family.check_length(check_T(T))
    check_trials(d, V, N, T, seeds, family.kind)
    # the weights carry guard digits: alpha and kappa feed the theory, which must be right to `digits`
    pool = attention.pooling(args.weights, T, family, tau=args.tau, mask=args.mask, digits=digits + 10)
    w, alpha, kappa, W = pool.weights, pool.alpha, pool.kappa, pool.W
    # exact where they are exact; spike reads an irrational or a Float beyond `digits` itself
    # (nsimplify guessed closed forms from the Floats, and a guess is not a derivation)
    theory = spike(sp.Rational(d, V), sp.Rational(d, N), alpha, kappa, mu2,
                   sum_w=W, centered=args.centered, digits=digits)
    run = run_trials(d, V, N, T, family, [float(x) for x in w], float(mu2), centered=args.centered, k=k,
                     seeds=seeds, seed0=seed0, path=args.path)
    tops, overlaps = run.top_eigenvalues, run.overlaps
    fmt = lambda x: format_real(x, 10) if np.isfinite(x) else None  # noqa: E731
    ev, ov = mean_ci(tops[:, 0]), mean_ci(overlaps[:, 0])
    return {
        "top_eigenvalues": [[fmt(x) for x in row] for row in tops],
        "overlap": {"mean": fmt(ov[0]), "ci95": [fmt(ov[1]), fmt(ov[2])]},
        "top_eigenvalue": {"mean": fmt(ev[0]), "ci95": [fmt(ev[1]), fmt(ev[2])]},
        "overlaps_top_k": [fmt(x) for x in overlaps.mean(axis=0)],
        "theory": theory,
        "weights": [format_real(x, 12) for x in w],
        "interval": "Student-t 95% over seeds (infinite for one seed: reported as null)",
        "path": run.path,
    }
