"""``derive weights``: pooling weights of a scheme, normalized to sum 1, with alpha and kappa."""
from derive.cli.kit import add_scheme, add_signs, scheme_options
from derive.model.schemes import scheme_syntaxes
from derive.report.text import weights_text as render

__all__ = ["NAME", "HELP", "add_arguments", "run", "render"]

NAME = "weights"
HELP = f"pooling weights ({', '.join(scheme_syntaxes())}) with alpha, kappa, alpha/kappa"


def add_arguments(p):
    add_scheme(p, flag="--scheme", required=True, help="weight scheme (file:PATH: .npy or .csv; w1,...,wT: the weights)")
    p.add_argument("--T", required=True, help="sequence length")
    add_signs(p)
    p.add_argument("--digits", default=30, help="significant digits of every real (default 30)")


def run(args):
    # imported here, not at the top: the command line builds every command's parser before running one
    from derive.report.documents import weights_document
    from derive.model.signs import check_T
    from derive.model.schemes import parse_scheme
    from derive.model.spec import Model
    from derive.numbers import check_digits

    digits = check_digits(args.digits)
    T = check_T(args.T)
    scheme = parse_scheme(args.scheme, T, parameter="scheme", **scheme_options(args))
    return weights_document(Model(T=T, weights=scheme, signs=args.signs), digits)
