"""``verify ladder``: the signal outlier of Monte Carlo against the derived limit over a ladder of d."""

from derive.cli.kit import add_scheme, add_signs, listed, scheme_options
from derive.numbers import check_count, json_reals
from derive.report.reading import reading
from verify.commands.options import add_max_memory
from verify.montecarlo.trials import PATHS
from verify.progress import progress

__all__ = ["NAME", "HELP", "MC_DIGITS", "add_ladder_arguments", "ladder_options", "fits_lines", "run",
           "render", "add_arguments"]

NAME = "ladder"
HELP = "finite-size study: Monte Carlo outlier and overlap vs theory over a ladder of d, with fitted rates"

MC_DIGITS = 10
"""Significant digits of Monte Carlo reals (their own error is far larger)."""


def add_ladder_arguments(p, weights: bool = True):
    """The options shared by the ladder studies (``ladder``, ``attention-gap``)."""
    p.add_argument("--d", default="250,500,1000,2000", help="comma-separated ladder of dimensions (default 250,500,1000,2000)")
    p.add_argument("--delta", default="1/2", help="d/V (default 1/2)")
    p.add_argument("--gamma", default="1/4", help="d/N (default 1/4)")
    p.add_argument("--T", default="8", help="sequence length (default 8)")
    add_signs(p, default="prefix:2", help="sign family (default prefix:2)")
    add_scheme(p, default="mean", help="weight scheme (default mean)" if weights else None)
    p.add_argument("--mu2", default="2", help="signal strength ||mu||^2 (default 2)")
    p.add_argument("--seeds", default="8", help="trials per dimension (default 8)")
    p.add_argument("--seed0", default="0", help="root seed (default 0)")
    p.add_argument("--path", default="auto", metavar=listed(PATHS), help="eigensolver (default auto)")
    add_max_memory(p)


def ladder_options(args) -> dict:
    """The validated common options as keyword arguments (the memory limit is set on the way)."""
    from verify.montecarlo.memory import set_max_memory

    set_max_memory(args.max_memory)
    return {"ds": [x.strip() for x in str(args.d).split(",")], "delta": args.delta, "gamma": args.gamma,
            "T": check_count(args.T, "T", low=1), "signs": args.signs, "mu2": args.mu2,
            "seeds": check_count(args.seeds, "seeds", low=2), "seed0": check_count(args.seed0, "seed0"), "path": args.path}


def fits_lines(fits: dict) -> list[str]:
    """One line per fitted rate, with its interval (none from two sizes, which fit exactly)."""
    lines = []
    for name, f in fits.items():
        if f["rate"] is None:
            lines.append(f"  {name}: no rate ({f.get('no_fit')})")
            continue
        lo, hi = f["rate_ci95"]
        ci = "no interval from two sizes" if lo is None else f"95% CI [{float(lo):.2f}, {float(hi):.2f}]"
        lines.append(f"  {name}: rate {float(f['rate']):.2f}  {ci}")
    return lines


def run(args):
    options = ladder_options(args)
    centered = not args.raw
    from verify.studies.finite_size import outlier_ladder  # here: every parser is built before one command runs

    with progress("ladder") as report:
        return json_reals(outlier_ladder(**options, scheme=args.weights, centered=centered, report=report,
                                         **scheme_options(args)), MC_DIGITS)


def render(doc) -> str:
    p = doc["predicted"]
    lines = [f"predicted: eigenvalue {float(p['eigenvalue']):.6f}, overlap {float(p['overlap']):.6f}", "",
             f"{'d':>6} {'eig bias':>10} {'eig rms':>9} {'ov bias':>10} {'ov rms':>9}"]
    for r in doc["rows"]:
        e, o = r["eigenvalue"], r["overlap"]
        lines.append(f"{r['d']:>6} {float(e['bias']['mean']):>10.2e} {float(e['rms']):>9.2e} "
                     f"{float(o['bias']['mean']):>10.2e} {float(o['rms']):>9.2e}")
    return "\n".join(lines + ["", "fitted rates (error ~ C d^-rate):"] + fits_lines(doc["fits"]) + ["", reading(
        "bias: Monte Carlo minus the derived limit, the mean over the seeds at that d (3 digits shown; --json gives "
        "its Student-t 95% interval and 10 digits); rms: the root mean square of that difference over the seeds",
        "eig: the signal outlier's eigenvalue; ov: its squared overlap |u_hat^T u|^2 with u",
        "rate: fitted on log error against log d; its 95% interval from three sizes or more")])


def add_arguments(p):
    add_ladder_arguments(p)
    p.add_argument("--raw", action="store_true", help="the raw S instead of the centered S_c")
