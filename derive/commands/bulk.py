"""``derive bulk``: the limiting spectral law of S (claim C1 as derived), at requested points."""
import mpmath

from derive.errors import ParameterError
from derive.numbers import check_digits, format_real, parse_rational
from derive.resources import check_density_work, check_points

__all__ = ["NAME", "HELP", "add_arguments", "run"]

NAME = "bulk"
HELP = "support, atom at 0, density and Stieltjes polynomial of kappa (MP_delta boxtimes MP_gamma)"


def add_arguments(p):
    p.add_argument("--delta", required=True, help="d/V (> 0)")
    p.add_argument("--gamma", required=True, help="d/N (> 0)")
    p.add_argument("--kappa", required=True, help="||w||^2 (> 0)")
    p.add_argument("--x", required=True, help="comma-separated points X1,X2,... for the density")
    p.add_argument("--digits", default=30, help="significant digits of every real (default 30)")


def _points(text: str) -> list:
    items = text.split(",")
    check_points(len(items), "x")
    if not text.strip() or any(not item.strip() for item in items):
        raise ParameterError("x", f"malformed list {text!r} (use X1,X2,...)")
    return [parse_rational(item, "x") for item in items]


def run(args):
    from derive import bulk  # here, not at the top: the command line builds every parser before running one

    digits = check_digits(args.digits)
    points = _points(args.x)
    check_density_work(len(points), digits)
    law = bulk.law(*bulk.parameters(args.delta, args.gamma, args.kappa))
    values = bulk.density(law.delta, law.gamma, law.kappa, points, digits)
    # format_real reads its argument in the current precision, which must not cut the digits
    with mpmath.workdps(digits + 10):
        return {
            "support": [[format_real(a, digits), format_real(b, digits)] for a, b in law.support],
            "atom_at_zero": format_real(law.atom_at_zero, digits),
            "density": [format_real(v, digits) for v in values],
            "polynomial": str(law.polynomial),
        }
