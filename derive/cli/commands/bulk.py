"""``derive bulk``: the limiting spectral law of S, the model's own (with ``--T``) or its Gaussian equivalent."""
from derive.cli.kit import MASK_CHOICES, MASK_HELP, SCHEMES, SIGN_SPECS, listed
from derive.errors import ParameterError
from derive.numbers import check_digits, parse_fraction
from derive.resources import bulk_parameters, check_density_work, check_points

__all__ = ["NAME", "HELP", "add_arguments", "run"]

NAME = "bulk"
HELP = ("the limiting spectral law of S: with --T and --weights the model's own (finite vocabulary), else the "
        "Gaussian-equivalent kappa (MP_delta boxtimes MP_gamma); support, atom at 0, density")


def add_arguments(p):
    p.add_argument("--delta", required=True, help="d/V (> 0)")
    p.add_argument("--gamma", required=True, help="d/N (> 0)")
    p.add_argument("--kappa", default=None, help="||w||^2 (> 0), for the Gaussian-equivalent law (without --T)")
    p.add_argument("--T", default=None, help="sequence length: the model's own law, with --weights")
    p.add_argument("--weights", default=None, metavar=listed(SCHEMES), help="with --T: the weight scheme")
    p.add_argument("--signs", default=None, metavar=listed(SIGN_SPECS),
                   help="with --T: sign family (needed by --weights optimal only)")
    p.add_argument("--tau", default=None, help="with --weights causal: attention temperature tau >= 0 (default 0)")
    p.add_argument("--mask", default=None, metavar=listed(MASK_CHOICES),
                   help="with --weights causal: " + MASK_HELP)
    p.add_argument("--x", required=True, help="comma-separated points X1,X2,... for the density")
    p.add_argument("--digits", default=30, help="significant digits of every real (default 30)")


def _points(text: str) -> list:
    items = text.split(",")
    check_points(len(items), "x")
    if not text.strip() or any(not item.strip() for item in items):
        raise ParameterError("x", f"malformed list {text!r} (use X1,X2,...)")
    return [parse_fraction(item, "x") for item in items]


def run(args):
    from derive.model.spec import Model

    digits = check_digits(args.digits)
    if args.T is not None:
        if args.kappa is not None:
            raise ParameterError("kappa", "is ||w||^2 of --weights for the model's own law: omit it")
        if args.weights is None:
            raise ParameterError("weights", "is required with --T (mean, causal, optimal, file:PATH)")
        model = Model(delta=args.delta, gamma=args.gamma, T=args.T, weights=args.weights, tau=args.tau,
                      mask=args.mask, signs=args.signs)
        return _document(model, args.x, digits)
    for name in ("weights", "signs", "tau", "mask"):
        if getattr(args, name) is not None:
            raise ParameterError(name, "belongs to the model's own law: give --T with it")
    if args.kappa is None:
        raise ParameterError("kappa", "is required for the Gaussian-equivalent law (or give --T and --weights)")
    delta, gamma, kappa = bulk_parameters(args.delta, args.gamma, args.kappa)
    return _document(Model(delta=delta, gamma=gamma, kappa=kappa), args.x, digits)


def _document(model, x: str, digits: int) -> dict:
    points = _points(x)
    check_density_work(len(points), digits)
    # imported once the input is read (SymPy loads with it): bad input is refused at once
    from derive.cli.documents import bulk_document

    return bulk_document(model, points, digits)
