"""``derive weights``: pooling weights of a scheme, normalized to sum 1, with alpha and kappa."""
from derive.cli.kit import add_scheme, add_signs, scheme_options

__all__ = ["NAME", "HELP", "add_arguments", "run", "render"]

NAME = "weights"
HELP = "pooling weights (mean, causal attention limit, optimal, file:PATH) with alpha, kappa, alpha/kappa"


def add_arguments(p):
    add_scheme(p, flag="--scheme", required=True, help="weight scheme (file:PATH: .npy or .csv; w1,...,wT: the weights)")
    p.add_argument("--T", required=True, help="sequence length")
    add_signs(p)
    p.add_argument("--digits", default=30, help="significant digits of every real (default 30)")


def run(args):
    # imported here, not at the top: the command line builds every command's parser before running one
    from derive.cli.randomweights import weights_document
    from derive.model.signs import check_T
    from derive.model.schemes import parse_scheme
    from derive.model.spec import Model
    from derive.numbers import check_digits

    digits = check_digits(args.digits)
    T = check_T(args.T)
    scheme = parse_scheme(args.scheme, T, parameter="scheme", **scheme_options(args))
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
    if doc.get("kappa_moments"):  # a scheme with a law of its weights (softmax)
        lines += [f"weights: {doc['weights_are']}", f"kappa_moments (E||w||^2, E||w||^4) = {doc['kappa_moments']}",
                  f"errors: {doc['errors']}"]
    from derive.cli.reading import DIGITS, reading

    return "\n".join(lines + [reading("w: normalized to sum 1, exact rationals where they exist, else reals",
                                       DIGITS)])
