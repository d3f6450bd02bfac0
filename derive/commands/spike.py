"""``derive spike``: the signal outlier (claims C2-C4) and every further outlier, as derived."""
from derive.spikes import spike

NAME = "spike"
HELP = "outlier eigenvalues, overlaps and thresholds of S (population and sample level)"


def add_arguments(p):
    p.add_argument("--delta", required=True, help="d/V")
    p.add_argument("--gamma", required=True, help="d/N (0 for the population level only)")
    p.add_argument("--alpha", required=True, help="w^T R w")
    p.add_argument("--kappa", required=True, help="||w||^2")
    p.add_argument("--mu2", required=True, help="signal strength ||mu||^2")
    p.add_argument("--sum-w", default="1", help="W = sum_t w_t (raw S only; default 1)")
    p.add_argument("--centered", action="store_true", help="the centered covariance S_c")
    p.add_argument("--digits", default=30, help="significant digits of every real (default 30)")


def run(args):
    return spike(args.delta, args.gamma, args.alpha, args.kappa, args.mu2,
                 sum_w=args.sum_w, centered=args.centered, digits=args.digits)
