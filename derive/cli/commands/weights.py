"""``derive weights``: pooling weights of a scheme, normalized to sum 1, with alpha and kappa."""
import argparse

from derive.cli.kit import add_scheme, add_signs, scheme_options
from derive.errors import ParameterError
from derive.model.schemes import scheme_syntaxes
from derive.report.text import weights_text as render

__all__ = ["NAME", "HELP", "add_arguments", "run", "render"]

NAME = "weights"
HELP = f"pooling weights ({', '.join(scheme_syntaxes())}) with alpha, kappa, alpha/kappa"


def add_arguments(p):
    # --weights is required, but by run(): argparse cannot require one of two options of which one is hidden
    add_scheme(p, help="weight scheme (file:PATH: .npy or .csv; w1,...,wT: the weights); required. --scheme is its "
                       "older name, deprecated: it goes in the next release")
    p.add_argument("--scheme", default=None, help=argparse.SUPPRESS)
    p.add_argument("--T", required=True, help="sequence length")
    add_signs(p)
    p.add_argument("--digits", default=30, help="significant digits of every real (default 30)")


def run(args):
    # imported here, not at the top: the command line builds every command's parser before running one
    from derive.report.randomweights import weights_document
    from derive.model.signs import check_T
    from derive.model.schemes import parse_scheme
    from derive.model.spec import Model
    from derive.numbers import check_digits

    if args.weights is not None and args.scheme is not None:
        raise ParameterError("scheme", "is the older name of --weights: give one of them")
    # an error names the option the user typed
    spec, parameter = (args.weights, "weights") if args.scheme is None else (args.scheme, "scheme")
    if spec is None:
        raise ParameterError("weights", "is required: the weight scheme")
    digits = check_digits(args.digits)
    T = check_T(args.T)
    scheme = parse_scheme(spec, T, parameter=parameter, **scheme_options(args))
    return weights_document(Model(T=T, weights=scheme, signs=args.signs), digits)
