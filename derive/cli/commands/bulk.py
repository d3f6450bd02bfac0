"""``derive bulk``: the limiting spectral law of S, the model's own (with ``--T``) or its Gaussian equivalent."""
import mpmath

from derive.cli.kit import MASK_CHOICES, SCHEMES, SIGN_SPECS, listed
from derive.errors import ParameterError
from derive.numbers import check_digits, format_real, parse_fraction
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
                   help="with --weights causal: inclusive (keys s <= t, default) or strict (s < t)")
    p.add_argument("--x", required=True, help="comma-separated points X1,X2,... for the density")
    p.add_argument("--digits", default=30, help="significant digits of every real (default 30)")


def _points(text: str) -> list:
    items = text.split(",")
    check_points(len(items), "x")
    if not text.strip() or any(not item.strip() for item in items):
        raise ParameterError("x", f"malformed list {text!r} (use X1,X2,...)")
    return [parse_fraction(item, "x") for item in items]


def run(args):
    digits = check_digits(args.digits)
    if args.T is not None:
        return _model(args, digits)
    for name in ("weights", "signs", "tau", "mask"):
        if getattr(args, name) is not None:
            raise ParameterError(name, "belongs to the model's own law: give --T with it")
    if args.kappa is None:
        raise ParameterError("kappa", "is required for the Gaussian-equivalent law (or give --T and --weights)")
    params = bulk_parameters(args.delta, args.gamma, args.kappa)
    points = _points(args.x)
    check_density_work(len(points), digits)
    # imported once the input is read (SymPy loads with it): bad input is refused at once
    from derive.gaussian import bulk
    from derive.gaussian.regime import gaussian_equivalent_warning

    law = bulk.law(*params)
    values = bulk.density(law.delta, law.gamma, law.kappa, points, digits)
    # format_real reads its argument in the current precision, which must not cut the digits
    with mpmath.workdps(digits + 10):
        return {
            "law": law.law,
            "support": [[format_real(a, digits), format_real(b, digits)] for a, b in law.support],
            "atom_at_zero": format_real(law.atom_at_zero, digits),
            "density": [format_real(v, digits) for v in values],
            "polynomial": str(law.polynomial),
            "warning": gaussian_equivalent_warning(law.delta, law.gamma),
        }


def _model(args, digits: int) -> dict:
    import sympy as sp

    from derive.model.attention import pooling
    from derive.model.signs import check_T
    from derive.vocabulary.law import vocabulary_law

    if args.kappa is not None:
        raise ParameterError("kappa", "is ||w||^2 of --weights for the model's own law: omit it")
    if args.weights is None:
        raise ParameterError("weights", "is required with --T (mean, causal, optimal, file:PATH)")
    T = check_T(args.T)
    p = pooling(args.weights, T, args.signs, tau=args.tau, mask=args.mask, digits=digits)
    law = vocabulary_law(args.delta, args.gamma, p.weights)
    points = [sp.Rational(q.numerator, q.denominator) for q in _points(args.x)]
    check_density_work(len(points), digits)
    with mpmath.workdps(digits + 10):
        support, K = law.support()
        values = law.densities(points)
        fmt = lambda v: "inf" if v == mpmath.inf else format_real(v, digits)  # noqa: E731
        if K is None:
            note = ("more than one nonzero weight: the support is not derived, [0, inf) holds it (unbounded token "
                    "counts); the density is a cavity estimate, printed to the digits its error allows")
        else:
            note = (f"the last interval holds one cluster of eigenvalues per token count above {K}, "
                    f"of total mass below 1e-{digits}")
        return {
            "law": law.law,
            "kappa": format_real(law.kappa, digits),
            "reuse": format_real(law.reuse, digits),
            "support": [[fmt(a), fmt(b)] for a, b in support],
            "support_note": note,
            "atom_at_zero": format_real(law.atom_at_zero(), digits),
            "density": [_estimate(v, e, digits) for v, e in values],
            "density_error": None if all(e is None for _, e in values) else format_real(max(e for _, e in values), 2),
        }


def _estimate(value, error, digits: int) -> str:
    """``value`` to ``digits`` significant digits, or to the digits its ``error`` leaves (at least one)."""
    if error is None or value == 0:
        return format_real(value, digits)
    reliable = int(mpmath.floor(mpmath.log10(abs(value) / error))) + 1 if error > 0 else digits
    return format_real(value, max(1, min(digits, reliable)))
