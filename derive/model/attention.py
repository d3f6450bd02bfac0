r"""Pooling weights: mean, the ``d -> oo`` limit of causal self-attention, optimal, user files.

**Causal attention.** Tokens ``x_t = e_{v_t}`` with ``e_v = s_v mu + z_v``, scores
``tau <x_t, x_s>/d``, a row softmax over the causal window (``inclusive``: keys ``s <= t``;
``strict``: ``s < t``), outputs ``y_t = sum_s A_ts x_s`` and the pooled vector
``c = (1/n_out) sum_t y_t = sum_s w_s x_s``. As ``d -> oo`` with ``||mu||^2 = mu2`` fixed,

.. math:: \frac{\langle x_t, x_t\rangle}{d} = \frac{\mu_2 + 2 s_v\langle\mu,z_v\rangle + \|z_v\|^2}{d} \to 1,
   \qquad \frac{\langle x_t, x_s\rangle}{d} \to 0 \quad (v_t \ne v_s),

almost surely (law of large numbers; fluctuations are ``O(d^{-1/2})``). Assumed: the tokens of
a sequence are distinct, which fails with probability ``O(T^2/V) -> 0`` (a repeated token
would score ``tau`` off the diagonal). The limit score matrix is ``tau I`` and everything
below is derived from it by SymPy.

**Convention for the strict mask.** Position 1 has an empty window and no output; the
pooled vector averages the ``T - 1`` outputs ``t = 2..T`` (setting ``y_1 = 0`` and averaging
over ``T`` gives the same weights after normalization to sum 1). ``T = 1`` is refused.
"""
from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from functools import lru_cache, wraps

import mpmath
import sympy as sp

from derive.cache import memo
from derive.errors import ParameterError
from derive.symbols import T, s, t, tau, u
from derive.symbols import Formula, named
from derive.model.signs import SignFamily, check_R, check_T
from derive.numbers import check_digits, check_range, exact_sum, parse_rational, real_vector
from derive.resources import MAX_EIGEN_WORK, check_exact_causal_T

__all__ = ["MASK_OFFSETS", "limit_score", "softmax_normalizer", "causal_attention", "causal_weight", "causal_weights",
           "mean_weights", "alpha", "kappa", "sum_w", "normalized", "vanishes", "optimal_weights",
           "formulas"]


MASK_OFFSETS = {"inclusive": 0, "strict": 1}
"""Each mask of :data:`derive.model.schemes.MASKS` as the offset ``k`` of its window ``1 <= s <= t - k``."""


def _mask_offset(mask: str) -> int:
    if not isinstance(mask, str) or mask not in MASK_OFFSETS:
        raise ParameterError("mask", f"must be one of {', '.join(MASK_OFFSETS)}, got {mask!r}")
    return MASK_OFFSETS[mask]


def _per_mask(f):
    """Cache ``f(mask)`` per mask, after checking the mask (an unhashable one would not reach the check)."""
    cached = lru_cache(maxsize=None)(f)

    @wraps(f)
    def checked(mask):
        _mask_offset(mask)
        return cached(mask)

    return checked


def limit_score(i, j) -> sp.Expr:
    r"""The ``d -> oo`` limit of the attention score of query ``i`` on key ``j``.

    .. math:: \lim_{d\to\infty} \tau \frac{\langle x_i, x_j\rangle}{d} = \tau\,\delta_{ij}
       \qquad\text{(distinct tokens)}

    >>> limit_score(t, u), limit_score(2, 2)
    (tau*KroneckerDelta(t, u), tau)
    """
    return tau * sp.KroneckerDelta(i, j)


def _exp_of_indicator(expr: sp.Expr) -> sp.Expr:
    # exp(c * delta) = 1 + (e^c - 1) delta because delta is 0 or 1; SymPy can sum the right side
    def affine(e):
        c, delta = e.args[0].as_independent(sp.KroneckerDelta)
        return 1 + (sp.exp(c) - 1) * delta if isinstance(delta, sp.KroneckerDelta) else e

    return expr.replace(lambda e: isinstance(e, sp.exp), affine)


@_per_mask
def softmax_normalizer(mask: str) -> sp.Expr:
    r"""The softmax denominator of row ``t`` in the limit: :math:`Z_t = \sum_{u=1}^{t-k} e^{\tau\delta_{tu}}`.

    >>> softmax_normalizer("inclusive"), softmax_normalizer("strict")
    (t + exp(tau) - 1, t - 1)
    """
    k = _mask_offset(mask)
    return sp.simplify(sp.summation(_exp_of_indicator(sp.exp(limit_score(t, u))), (u, 1, t - k)))


@_per_mask
def causal_attention(mask: str) -> sp.Expr:
    r"""The limit attention entry :math:`A_{ts} = e^{\tau\delta_{ts}}/Z_t` for ``s`` in the window of ``t``.

    >>> causal_attention("inclusive").subs({t: 3, s: 3})
    exp(tau)/(exp(tau) + 2)
    """
    return _exp_of_indicator(sp.exp(limit_score(t, s))) / softmax_normalizer(mask)


def _telescoped_sum(f: sp.Expr, var: sp.Symbol, lo, hi) -> sp.Expr:
    r"""``sum_{var=lo}^{hi} f`` for ``f = c/(a var + b)``, by the digamma antidifference.

    :math:`\psi(x+1) - \psi(x) = 1/x`, so ``F = (c/a) psi(var + b/a)`` has ``F(var+1) - F(var) = f``
    (checked by SymPy), and the sum telescopes to ``F(hi+1) - F(lo)``.
    """
    num, den = sp.fraction(sp.together(f))
    a, b = sp.Poly(den, var).all_coeffs()
    if num.has(var):
        raise ValueError(f"not a simple fraction in {var}: {f}")
    F = num / a * sp.digamma(var + b / a)
    assert sp.simplify(sp.expand_func(F.subs(var, var + 1) - F) - f) == 0
    return F.subs(var, hi + 1) - F.subs(var, lo)


@_per_mask
def causal_weight(mask: str) -> sp.Expr:
    r"""The limit pooling weight of position ``s`` in a sequence of length ``T``.

    :math:`w_s = \frac{1}{n_{out}} \sum_{t \ge s + k} A_{ts}` with ``n_out`` the number of
    nonempty windows; SymPy gives, with :math:`E = e^\tau`,

    .. math:: \text{inclusive: } w_s = \frac{1}{T}\Big[\frac{E}{E+s-1} + H_{E+T-1} - H_{E+s-1}\Big],
       \qquad \text{strict: } w_s = \frac{H_{T-1} - H_{s-1}}{T-1}

    (generalized harmonic numbers, :math:`H_x = \psi(x+1) + \gamma`). At ``tau = 0`` the
    inclusive weights are :math:`(H_T - H_{s-1})/T`; the strict ones do not depend on ``tau``.

    >>> [causal_weight(m).subs({T: 3, tau: 0, s: 1}) for m in ("inclusive", "strict")]
    [11/18, 3/4]
    """
    k = _mask_offset(mask)
    A = sp.expand(causal_attention(mask))
    delta = sp.KroneckerDelta(t, s)
    # the window of t contains s iff t >= s + k, and s <= T
    diagonal = sp.refine(sp.summation(delta * A.coeff(delta), (t, s + k, T)), sp.Q.ge(T, s))
    off = A.subs(delta, 0)
    n_out = sp.summation(1, (t, 1 + k, T))
    w = (_telescoped_sum(off, t, s + k, T) + diagonal) / n_out
    return sp.simplify(w.rewrite(sp.harmonic))


def _check_tau(tau_value) -> sp.Expr:
    value = parse_rational(tau_value, "tau")
    return check_range(value, "tau", low=0)


def causal_weights(T_value, tau_value=0, mask: str = "inclusive", digits: int = 30) -> list:
    r"""The limit weights of causal attention for ``T_value`` positions, normalized to sum 1.

    ``tau = 0`` (either mask) and the strict mask (any ``tau``) give exact rationals (harmonic
    numbers, evaluated exactly from the expression of :func:`causal_weight`); otherwise that expression is
    evaluated by mpmath to ``digits``. The claimed form :math:`w_t \propto H_{T-1} - H_{t-1}` is the strict
    mask. Exact weights are offered up to ``T = MAX_EXACT_CAUSAL_T`` (:mod:`derive.resources`).

    >>> causal_weights(4, 0, "inclusive"), causal_weights(4, 3, "strict")
    ([25/48, 13/48, 7/48, 1/16], [11/18, 5/18, 1/9, 0])
    """
    n = check_T(T_value)
    tv = _check_tau(tau_value)
    _mask_offset(mask)
    digits = check_digits(digits)
    if tv > 700:
        raise ParameterError("tau", f"must be <= 700 (exp(tau) must stay finite), got {tv}")
    if mask == "strict" and n == 1:
        raise ParameterError("T", "the strict mask needs T >= 2 (position 1 has no key)")
    check_exact_causal_T(n)
    if mask == "strict" or tv == 0:
        # SymPy derives the weight's expression in about 2 s, a cost every process paid again (a sweep of causal
        # weights validated its grid on it before its first task): the exact weights are kept in the derivation cache
        return [sp.Rational(x) for x in memo("causal-weights", {"T": n, "mask": mask}, lambda: _exact_weights(n, mask),
                                             lambda v: _sums_to_one(v, n))]
    f = _numeric_weight(mask)
    # alpha and kappa sum T products of these Floats at their precision: log10(T) more guard digits keep the
    # rounding of those sums (at most T units of the last place, relative, for positive terms) below 10^-digits
    guard = 5 + len(str(n))
    with mpmath.workdps(digits + guard + 5):
        e = mpmath.exp(mpmath.mpf(tv.p) / tv.q)
        w = [f(k, n, e) for k in range(1, n + 1)]
        total = sum(w)
        return [sp.Float(x / total, digits + guard) for x in w]


_HARMONIC = [Fraction(0)]


def _exact_harmonic(k) -> Fraction:
    """:math:`H_k` as an exact fraction, from a table extended on demand."""
    k = int(k)
    while len(_HARMONIC) <= k:
        _HARMONIC.append(_HARMONIC[-1] + Fraction(1, len(_HARMONIC)))
    return _HARMONIC[k]


def _exact_weights(n: int, mask: str) -> list[str]:
    """The exact weights of :func:`causal_weights` (strict mask, or ``tau = 0``) normalized to sum 1, as ``p/q``."""
    f = _exact_weight(mask)
    w = [f(k, n) for k in range(1, n + 1)]
    total = sum(w, Fraction(0))
    return [str(x / total) for x in w]


def _sums_to_one(value, n: int) -> bool:
    """Whether a kept ``value`` of :func:`_exact_weights` is ``n`` nonnegative rationals ``p/q`` that sum to 1."""
    if not (isinstance(value, list) and len(value) == n and all(isinstance(x, str) for x in value)):
        return False
    try:
        w = [Fraction(x) for x in value]
    except (ValueError, ZeroDivisionError):
        return False
    return all(x >= 0 for x in w) and sum(w, Fraction(0)) == 1


@lru_cache(maxsize=None)
def _exact_weight(mask: str):
    """:func:`causal_weight` at ``tau = 0`` as an exact function of the integers ``(s, T)`` (Python
    fractions, harmonic numbers from a table: ``subs`` per position took seconds at ``T = 1000``)."""
    expr = causal_weight(mask).subs(tau, 0)
    assert not (expr.atoms(sp.Float) or expr.free_symbols - {s, T})
    return sp.lambdify((s, T), expr, modules=[{"harmonic": _exact_harmonic}])


@lru_cache(maxsize=None)
def _numeric_weight(mask: str):
    """:func:`causal_weight` as an mpmath function of ``(s, T, exp(tau))``."""
    E = sp.Symbol("E_tau", positive=True)
    return sp.lambdify((s, T, E), causal_weight(mask).subs(sp.exp(tau), E), modules="mpmath")


def mean_weights(T_value) -> list[sp.Rational]:
    r"""Mean pooling, :math:`w_t = 1/T`.

    >>> mean_weights(4)
    [1/4, 1/4, 1/4, 1/4]
    """
    n = check_T(T_value)
    return [sp.Rational(1, n)] * n


def alpha(w, R: sp.Matrix) -> sp.Expr:
    r"""Signal after pooling, :math:`\alpha(w) = w^\top R w`.

    >>> alpha([1, 1], sp.Matrix([[1, 1], [1, 1]]))
    4
    """
    w = real_vector(w, "weights")
    v = sp.Matrix(w)
    return (v.T * check_R(R, len(w)) * v)[0, 0]


def kappa(w) -> sp.Expr:
    r"""Noise scale, :math:`\kappa(w) = \|w\|^2 = \sum_t w_t^2`.

    >>> kappa([sp.Rational(1, 2), sp.Rational(1, 2)])
    1/2
    """
    return exact_sum(real_vector(w, "weights"), 2)


def sum_w(w) -> sp.Expr:
    r""":math:`W = \sum_t w_t`, the weight of the mean spike of the raw covariance.

    >>> sum_w([1, 2, 3])
    6
    """
    return exact_sum(real_vector(w, "weights"))


def normalized(w, parameter: str) -> list:
    r"""``w / sum(w)``; a zero sum is an error of ``parameter``.

    >>> normalized([1, 3], "weights")
    [1/4, 3/4]
    """
    w = real_vector(w, parameter)
    total = exact_sum(w)
    if vanishes(total):
        raise ParameterError(parameter, "the weights sum to zero and cannot be normalized to sum 1")
    return w if total == 1 else [x / total for x in w]


def vanishes(total) -> bool:
    """Whether a sum of weights is zero: exactly, or below ``1e-25`` where it was computed to 30 digits.

    >>> vanishes(sp.Integer(0)), vanishes(sp.Float("1e-40")), vanishes(sp.Rational(1, 10**40))
    (True, True, False)
    """
    return total == 0 or (not total.is_Rational and abs(sp.N(total, 30)) < sp.Float(10) ** -25)


def optimal_weights(family: SignFamily, T_value, digits: int = 30) -> tuple[list, str | None]:
    r"""The top eigenvector of ``R`` (the maximizer of :math:`w^\top R w/\|w\|^2`), sign chosen so
    :math:`\sum_t w_t > 0`, with a note when it is not unique.

    When ``R = 1_B 1_B^T`` on a block ``B`` of ``L >= 2`` positions and the identity elsewhere
    (``prefix:L``, ``suffix:L``, ``markov:1``) the block is rank one with the single nonzero
    eigenvalue :math:`\mathrm{tr} = L > 1`, so :math:`w = 1_B/L` exactly, with
    :math:`\lambda_{max} = L` (checked: :math:`R w = L w`). When ``R = I`` every ``w`` is
    optimal and the mean weights are returned. Otherwise the eigenvector is computed by
    ``mpmath.eigsy`` at ``digits + 10`` digits.

    >>> from derive.model.families import parse_signs
    >>> optimal_weights(parse_signs("suffix:2"), 3)
    ([0, 1/2, 1/2], None)
    """
    if not isinstance(family, SignFamily):
        raise ParameterError("signs", f"must be a SignFamily (see derive.model.spec.parse_signs), got {type(family).__name__}")
    n = family.check(T_value)
    digits = check_digits(digits)
    B = family.block(n)
    if B is not None and len(B) == 0:
        return mean_weights(n), "R = I: every w attains alpha/kappa = 1 (no unique optimum); the mean weights are returned"
    if B is not None:
        members = set(B)
        w = [sp.Rational(1, len(B)) if i in members else sp.Integer(0) for i in range(n)]
        # R w = L w on the block, so alpha = (sum_B w)^2 = 1
        assert family._quadratic_form(w, n) == 1
        return w, None
    work = n**3 * (digits + 10) ** 2
    if work > MAX_EIGEN_WORK:
        raise ParameterError("digits" if n <= 8 else "T", f"optimal weights of {family.kind} signs need an mpmath "
                             f"eigendecomposition of the {n} x {n} R at {digits + 10} digits: at most T^3 (digits + "
                             f"10)^2 = {MAX_EIGEN_WORK}, got {work}")
    v, multiplicity = _top_eigenvector(family.R(n), n, digits)
    if sum(v) < 0 or (sum(v) == 0 and next(x for x in v if x != 0) < 0):
        v = [-x for x in v]
    note = None
    if multiplicity > 1:
        note = (f"the top eigenvalue of R is degenerate (multiplicity {multiplicity}); the returned vector is "
                "one eigenvector of that eigenspace (mpmath's choice) and is not unique")
    return v, note


def _top_eigenvector(R: sp.Matrix, n: int, digits: int) -> tuple[list, int]:
    r"""A unit top eigenvector of the symmetric ``R`` correct to ``digits`` digits (entries as SymPy Floats), and the
    multiplicity of the top eigenvalue (1 unless it is exactly degenerate).

    ``mpmath.eigsy`` at :math:`p` digits moves the eigenvalues by about :math:`r = n\,10^{2-p}\|R\|` and the top
    eigenvector by :math:`r/g`, :math:`g = \lambda_1 - \lambda_2` the gap. The precision starts at ``digits + 10``;
    once the gap stands out of the rounding (:math:`g > 1000\,r`) it becomes ``digits + 3 + log10(n ||R||/g)`` if that
    is more. Eigenvalues within :math:`1000\,r` of the top are a cluster that is either one exactly degenerate
    eigenvalue, decided exactly for a rational ``R`` (Sturm's count of the distinct roots of the characteristic
    polynomial above the middle of the gap below the cluster is 1), or several close ones, and then the precision
    doubles. Work beyond :data:`derive.resources.MAX_EIGEN_REFINEMENT_WORK` is refused, naming ``signs``. At
    ``digits + 10`` alone, ``markov:1e-20`` at ``T = 4`` (gap about ``1e-20``) had given a wrong vector, called
    degenerate, at ``--digits 6``.

    >>> w, multiplicity = _top_eigenvector(sp.Matrix([[1, sp.Rational(1, 10**20)], [sp.Rational(1, 10**20), 1]]), 2, 6)
    >>> [mpmath.nstr(x, 8) for x in w], multiplicity
    (['0.70710678', '0.70710678'], 1)
    """
    from derive.resources import MAX_EIGEN_REFINEMENT_WORK

    dps, distinct = digits + 10, None
    exact = all(x.is_Rational for x in R)
    while True:
        if n ** 3 * dps ** 2 > MAX_EIGEN_REFINEMENT_WORK:
            raise ParameterError("signs", f"the top eigenvalues of R are too close to be told apart within the work "
                                          f"limit T^3 dps^2 <= {MAX_EIGEN_REFINEMENT_WORK} (its top eigenvector to "
                                          f"{digits} digits needs more than {dps // 2} working digits)")
        with mpmath.workdps(dps):
            # a rational entry through its integers: sp.N of 10^-2700 (markov:1e-900) exceeds Python's limit on digits
            M = mpmath.matrix([[mpmath.mpf(x.p) / x.q if x.is_Rational else mpmath.mpf(sp.N(x, dps)) for x in R.row(i)]
                               for i in range(n)])
            ev, Q = mpmath.eigsy(M)
            order = sorted(range(n), key=lambda i: ev[i], reverse=True)
            top, scale = ev[order[0]], max(1, abs(ev[order[0]]))
            rounding = n * scale * mpmath.mpf(10) ** (2 - dps)
            cluster = sum(1 for i in order if top - ev[i] <= 1000 * rounding)
            vector = [sp.Float(mpmath.nstr(Q[i, order[0]], dps), dps) for i in range(n)]
            if cluster == 1:
                gap = top - ev[order[1]] if n > 1 else scale
                need = digits + 3 + max(0, int(mpmath.ceil(mpmath.log10(n * scale / gap))))
                if need <= dps:
                    return vector, 1
                dps = need
                continue
            middle = (top + ev[order[cluster]]) / 2 if cluster < n else top - 1
            sign, man, exp, _ = middle._mpf_
            below = (-1) ** sign * sp.Integer(man) * sp.Integer(2) ** exp  # exactly the binary number middle
        if exact:
            if distinct is None:
                p = R.charpoly(sp.Dummy("lam"))
                distinct = sp.quo(p, sp.gcd(p, p.diff()))  # the distinct eigenvalues, each once
            if distinct.count_roots(inf=below) == 1:
                return vector, cluster
        dps *= 2


def formulas() -> list[Formula]:
    src = "derive/model/attention.py"
    out = [Formula("limit attention logit", limit_score(t, s),
                   "$d \\to \\infty$, $\\mu_2$ fixed, distinct tokens in the sequence", f"{src}:limit_score",
                   named("e_ts", r"e_{ts}"), claim="C6")]
    for mask, window in (("inclusive", "keys $s \\le t$ (the default mask of the tools; the paper's harmonic form "
                                       "$H_{T-1} - H_{t-1}$ is not this mask's)"),
                         ("strict", "keys $s < t$ (outputs $t = 2, \\dots, T$; the paper's harmonic form "
                                    "$H_{T-1} - H_{t-1}$ holds for this mask only, at any $\\tau$)")):
        hyp = f"$d \\to \\infty$, softmax over {window}, outputs averaged; $\\tau \\ge 0$"
        out.append(Formula(f"causal attention entry, {mask} mask", causal_attention(mask), hyp,
                           f"{src}:causal_attention", named(f"A_ts_{mask}", rf"A^{{\mathrm{{{mask}}}}}_{{ts}}"),
                           claim="C6"))
        out.append(Formula(f"causal pooling weight, {mask} mask", causal_weight(mask), hyp,
                           f"{src}:causal_weight", named(f"w_s_{mask}", rf"w^{{\mathrm{{{mask}}}}}_{{s}}"), claim="C6",
                           quantities=(("weights.causal", f"mask={mask}"),)))
    return out
