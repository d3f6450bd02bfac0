"""``verify attention-gap``: real causal softmax attention against its limit weights, on the same data."""
from derive.numbers import json_reals
from derive.report.reading import reading
from verify.commands.ladder import MC_DIGITS, add_ladder_arguments, fits_lines, ladder_options
from verify.progress import progress

__all__ = ["NAME", "HELP", "add_arguments", "run", "render"]

NAME = "attention-gap"
HELP = ("outlier and overlap of S_c pooled by real causal attention vs by its d -> oo limit weights, over a ladder of d "
        "(--tau defaults to 1 here); --scaling 1/sqrt(d) for the transformer's scores (the softmax scheme's limit)")


def add_arguments(p):
    from verify.studies.attention_gap import SCALINGS

    add_ladder_arguments(p, weights=False)
    p.add_argument("--scaling", default="1/d", choices=SCALINGS,
                   help="the scores' scaling: tau <x_t, x_s>/d (the paper's; default) or /sqrt(d) (the transformer's: "
                        "each sequence's own random weights in the limit)")


def run(args):
    mask = args.mask or "inclusive"
    from verify.studies.attention_gap import attention_gap  # here: every parser is built before one command runs

    with progress("attention-gap") as report:
        return json_reals(attention_gap(**ladder_options(args), tau=args.tau or "1", mask=mask, report=report,
                                        scaling=args.scaling), MC_DIGITS)


def render(doc) -> str:
    lines = [f"{'d':>6} {'w spread':>9} {'eig gap':>10} {'eig rms':>9} {'ov gap':>10} {'ov rms':>9} {'eig err(lim)':>12}"]
    for r in doc["rows"]:
        e, o = r["eigenvalue"], r["overlap"]
        lines.append(f"{r['d']:>6} {float(r['weight_spread']['mean']):>9.2e} {float(e['gap']['mean']):>10.2e} "
                     f"{float(e['gap_rms']):>9.2e} {float(o['gap']['mean']):>10.2e} {float(o['gap_rms']):>9.2e} "
                     f"{float(e['limit_error']['mean']):>12.2e}")
    return "\n".join(lines + ["", "fitted rates (gap ~ C d^-rate):"] + fits_lines(doc["fits"]) + ["", reading(
        "w spread: how far the realized attention weights spread around their limit (mean over seeds)",
        "gap: real attention minus its limit weights on the same draws, the mean over the seeds (3 digits shown; "
        "--json gives its Student-t 95% interval); rms: the root mean square of that difference",
        "eig err(lim): the limit weights' Monte Carlo eigenvalue minus the derived one",
        "eig: the signal outlier's eigenvalue; ov: its squared overlap |u_hat^T u|^2 with u")])
