"""``derive weights``: pooling weights of a scheme, normalized to sum 1, with alpha and kappa."""
from derive.cli.kit import MASK_CHOICES, MASK_HELP, SCHEMES, SIGN_SPECS, listed

__all__ = ["NAME", "HELP", "add_arguments", "run", "render"]

NAME = "weights"
HELP = "pooling weights (mean, causal attention limit, optimal, file:PATH) with alpha, kappa, alpha/kappa"


def add_arguments(p):
    p.add_argument("--scheme", required=True, metavar=listed(SCHEMES), help="weight scheme (file:PATH: .npy or .csv)")
    p.add_argument("--T", required=True, help="sequence length")
    p.add_argument("--signs", default=None, metavar=listed(SIGN_SPECS), help="sign family")
    p.add_argument("--tau", default=None, help="causal only: attention temperature tau >= 0 (default 0)")
    p.add_argument("--mask", default=None, metavar=listed(MASK_CHOICES),
                   help="causal only: " + MASK_HELP)
    p.add_argument("--digits", default=30, help="significant digits of every real (default 30)")


def run(args):
    # imported here, not at the top: the command line builds every command's parser before running one
    from derive.cli.documents import weights_document
    from derive.model.signs import check_T
    from derive.model.spec import Model, Scheme
    from derive.numbers import check_digits

    digits = check_digits(args.digits)
    T = check_T(args.T)
    scheme = Scheme.of(args.scheme, args.tau, args.mask, T, parameter="scheme")
    return weights_document(Model(T=T, weights=scheme, signs=args.signs), digits)


def render(doc):
    lines = [f"w = [{', '.join(doc['exact'] or doc['weights'])}]", f"kappa = {doc['kappa']}"]
    if doc["alpha"] is None:
        lines += ["alpha: needs --signs (alpha = w^T R w)", "alpha/kappa: needs --signs"]
    else:
        lines += [f"alpha = {doc['alpha']}", f"alpha/kappa = {doc['alpha_over_kappa']}"]
    if doc["mask"] is not None:
        paper = ("the paper's harmonic form H_{T-1} - H_{t-1}" if doc["mask"] == "strict"
                 else "the default; the paper's harmonic form H_{T-1} - H_{t-1} is the strict mask's")
        lines.append(f"mask = {doc['mask']} ({paper}), tau = {doc['tau']}")
    if doc["note"]:
        lines.append(f"note: {doc['note']}")
    from derive.cli.reading import DIGITS, reading

    return "\n".join(lines + [reading("w: normalized to sum 1, exact rationals where they exist, else reals",
                                       DIGITS)])
