"""``derive weights``: pooling weights of a scheme, normalized to sum 1, with alpha and kappa."""
import mpmath

from derive.cli.kit import MASK_CHOICES, SCHEMES, SIGN_SPECS, listed
from derive.numbers import check_digits, format_exact, format_real
from derive.resources import check_output

__all__ = ["NAME", "HELP", "add_arguments", "run", "render"]

NAME = "weights"
HELP = "pooling weights (mean, causal attention limit, optimal, file:PATH) with alpha, kappa, alpha/kappa"


def add_arguments(p):
    p.add_argument("--scheme", required=True, metavar=listed(SCHEMES), help="weight scheme (file:PATH: .npy or .csv)")
    p.add_argument("--T", required=True, help="sequence length")
    p.add_argument("--signs", default=None, metavar=listed(SIGN_SPECS), help="sign family")
    p.add_argument("--tau", default=None, help="causal only: attention temperature tau >= 0 (default 0)")
    p.add_argument("--mask", default=None, metavar=listed(MASK_CHOICES),
                   help="causal only: inclusive (keys s <= t, default) or strict (s < t)")
    p.add_argument("--digits", default=30, help="significant digits of every real (default 30)")


def run(args):
    # imported here, not at the top: the command line builds every command's parser before running one
    from derive.model.attention import pooling
    from derive.model.signs import check_T, parse_signs

    digits = check_digits(args.digits)
    T = check_T(args.T)
    check_output(T, digits)
    family = parse_signs(args.signs) if args.signs is not None else None
    p = pooling(args.scheme, T, family, tau=args.tau, mask=args.mask, digits=digits)
    w, note, a, k = p.weights, p.note, p.alpha, p.kappa
    exact = [format_exact(x) for x in w]
    # format_real leaves its working precision when converting; hold enough digits around it
    with mpmath.workdps(digits + 10):
        # weights repeat (mean, optimal blocks): each distinct value is formatted once
        formatted = {}

        def real(x):
            if x is None:
                return None
            if x not in formatted:
                formatted[x] = format_real(x, digits)
            return formatted[x]

        return {
            "weights": [real(x) for x in w],
            "exact": exact if all(e is not None for e in exact) else None,
            "alpha": real(a),
            "kappa": real(k),
            "alpha_over_kappa": real(None if a is None else a / k),
            "note": note,
        }


def render(doc):
    lines = [f"w = [{', '.join(doc['exact'] or doc['weights'])}]",
             f"kappa = {doc['kappa']}", f"alpha = {doc['alpha']}", f"alpha/kappa = {doc['alpha_over_kappa']}"]
    if doc["note"]:
        lines.append(f"note: {doc['note']}")
    return "\n".join(lines)
