"""``derive bulk``: the limiting spectral law of S, the model's own (with ``--T``) or its Gaussian equivalent."""
import sys

from derive.cli.kit import add_law, add_scheme, add_signs, scheme_options
from derive.errors import ParameterError
from derive.files import check_output_target
from derive.numbers import check_count, check_digits, parse_fraction
from derive.report.text import bulk_text as render
from derive.resources import bulk_parameters, check_density_work, check_points

__all__ = ["NAME", "HELP", "add_arguments", "run", "render"]

NAME = "bulk"
HELP = ("the limiting spectral law of S: with --T and --weights the model's own (finite vocabulary), else the "
        "Gaussian-equivalent kappa (MP_delta boxtimes MP_gamma); support, atom at 0, density")


PLOT_POINTS = 60
"""The points ``--plot`` draws without ``--x``: a smooth line (the plot joins more than 20 points by a line), at a cost
the cavity density of the model's own law bears in seconds."""


def add_arguments(p):
    p.add_argument("--delta", required=True, help="d/V (> 0)")
    p.add_argument("--gamma", required=True, help="d/N (> 0)")
    p.add_argument("--kappa", default=None, help="||w||^2 (> 0), for the Gaussian-equivalent law (without --T)")
    add_law(p, more=" (kappa (MP_delta boxtimes MP_gamma) at the weights' kappa). With --T only")
    p.add_argument("--T", default=None, help="sequence length: the model's own law, with --weights")
    add_scheme(p, help="with --T: the weight scheme")
    add_signs(p, help="with --T: sign family (needed by --weights optimal only)")
    p.add_argument("--x", default=None,
                   help="the points of the density: X1,X2,... and/or grids start:stop:num (num points from start "
                        "to stop, both included: 0:2:201), e.g. 0.01:1:100,1.5; required without --plot")
    p.add_argument("--plot", default=None, metavar="PATH",
                   help=f"also draw the density at the points (PNG), with the law and its parameters in the title; "
                        f"without --x at {PLOT_POINTS} points over the support of the Gaussian equivalent (to 1.25 "
                        f"times its right edge: the model's own law has a tail beyond it)")
    p.add_argument("--digits", default=30, help="significant digits of every real (default 30)")


def _points(text: str) -> list:
    """The exact points of ``--x``: numbers and ``start:stop:num`` grids, separated by commas.

    >>> [str(x) for x in _points("0:1:3,2")]
    ['0', '1/2', '1', '2']
    """
    items = text.split(",")
    if not text.strip() or any(not item.strip() for item in items):
        raise ParameterError("x", f"malformed list {text!r} (use X1,X2,... or start:stop:num)")
    grids = [item.split(":") for item in items]
    for g in grids:
        if len(g) not in (1, 3):
            raise ParameterError("x", f"malformed grid {':'.join(g)!r} (use start:stop:num)")
    # the count is checked before a grid's points are made: a num of 10^12 is refused, not built
    counts = [1 if len(g) == 1 else check_count(g[2], "x", low=2) for g in grids]
    check_points(sum(counts), "x")
    out = []
    for g, n in zip(grids, counts):
        if len(g) == 1:
            out.append(parse_fraction(g[0], "x"))
            continue
        start, stop = parse_fraction(g[0], "x"), parse_fraction(g[1], "x")
        out += [start + (stop - start) * i / (n - 1) for i in range(n)]
    return out


def run(args):
    from derive.model.spec import Model

    digits = check_digits(args.digits)
    if args.T is not None:
        if args.kappa is not None:
            raise ParameterError("kappa", "is ||w||^2 of --weights with --T: omit it (the document holds the "
                                          "Gaussian-equivalent law at that kappa; --law gaussian-equivalent gives it alone)")
        if args.weights is None:
            from derive.model.schemes import scheme_syntaxes

            raise ParameterError("weights", f"is required with --T ({', '.join(scheme_syntaxes())})")
        model = Model(delta=args.delta, gamma=args.gamma, T=args.T, weights=args.weights, signs=args.signs,
                      **scheme_options(args))
        return _document(model, args.x, digits, args.plot, args.law)
    for name in ("weights", "signs", "law", *scheme_options(args)):
        if getattr(args, name) is not None:
            raise ParameterError(name, "belongs to the model's own law: give --T with it")
    if args.kappa is None:
        raise ParameterError("kappa", "is required for the Gaussian-equivalent law (or give --T and --weights)")
    delta, gamma, kappa = bulk_parameters(args.delta, args.gamma, args.kappa)
    return _document(Model(delta=delta, gamma=gamma, kappa=kappa), args.x, digits, args.plot)


def _support_grid(model) -> list:
    """The points ``--plot`` draws without ``--x``: :data:`PLOT_POINTS` from the left end of the Gaussian equivalent's
    support (at the model's ``kappa``, its weights' with ``T``) to 1.25 times its right end, the ends rounded to
    three digits. A support that starts at 0 starts at 1/100 of the right end instead: the density may diverge at 0.

    >>> from derive.model.spec import Model
    >>> grid = _support_grid(Model(delta=1, gamma=1, kappa=1))   # the support [0, 27/4]
    >>> len(grid), str(grid[0]), str(grid[-1])
    (60, '211/2500', '211/25')
    """
    import sympy as sp

    from derive import interface
    from derive.gaussian.bulk import support

    kappa = model.kappa if model.T is None else interface.weights(model).kappa
    intervals, _ = support(model.delta, model.gamma, parse_fraction(str(kappa), "kappa"))
    rounded = lambda v: parse_fraction(f"{float(v):.3g}", "x")  # noqa: E731
    stop = rounded(1.25 * sp.N(intervals[-1][1]))
    start = rounded(intervals[0][0]) if intervals[0][0] > 0 else stop / 100
    return [start + (stop - start) * i / (PLOT_POINTS - 1) for i in range(PLOT_POINTS)]


def _document(model, x: str | None, digits: int, plot: str | None, law: str | None = None) -> dict:
    if x is None and not plot:
        raise ParameterError("x", "is required: the points of the density (or --plot PATH, drawn over the support)")
    points = _support_grid(model) if x is None else _points(x)
    check_density_work(len(points), digits)
    if plot:
        check_output_target(plot, "plot")
    # imported once the input is read (SymPy loads with it): bad input is refused at once
    from derive.report.randomweights import bulk_document

    doc = bulk_document(model, points, digits, law)
    if plot:
        from derive.report.plot import bulk_plot

        bulk_plot(doc, points, model, plot)
        where = "of --x" if x is not None else "over the support (no --x)"
        print(f"wrote {plot}: the density at the {len(points)} points {where}", file=sys.stderr)
    return doc
