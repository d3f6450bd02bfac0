r"""Moments of the pooled vectors, derived from the sampling law.

Notation: ``a = \sum_t w_t \mathbf{1}_{v_t}`` is the pooled one-hot vector (so ``c = E a``),
``s`` the class signs of the vocabulary (``s^T 1 = 0``, ``s^T s = 1^T 1 = V``), and the
scalars of the weights are

.. math:: \alpha = w^T R w, \qquad \kappa = \|w\|^2, \qquad W = \textstyle\sum_t w_t .

Everything below is obtained by SymPy from the law of ``(xi, v)``: the pair law of two
signs is solved from its moment constraints, the token law is uniform in the class of the
sign, and the sums over positions are split into the diagonal ``t = s`` and the rest.
"""
from __future__ import annotations

from functools import lru_cache

import sympy as sp

from derive.symbols import Formula, named
from derive.symbols import N, V, W, alpha, d, delta, kappa, mu2

__all__ = ["R_ts", "sigma", "sigma2", "same", "sign_pair_law", "second_moment_entry", "mean_entry",
           "second_moment_coefficients", "second_moment_spectrum", "population_covariance_terms",
           "sample_covariance_mean", "formulas"]

R_ts = sp.Symbol("R_ts", real=True)
sigma, sigma2 = sp.symbols("sigma sigma_2")  # the class signs s_v, s_v' of two tokens, each +-1
same = named("same_token", r"\mathbf{1}_{v = v'}")  # 1 if v = v', else 0


@lru_cache(maxsize=None)
def sign_pair_law() -> dict:
    r"""The joint law of ``(xi_t, xi_s)``, ``t != s``, solved from its constraints.

    Four probabilities, one normalization, two zero means and one correlation
    ``E[xi_t xi_s] = R_ts`` determine it: :math:`P(a, b) = (1 + a b R_{ts})/4`.

    >>> sign_pair_law()[(1, -1)]
    1/4 - R_ts/4
    """
    p = {(a, b): sp.Symbol(f"p_{a}_{b}") for a in (1, -1) for b in (1, -1)}
    eqs = [
        sum(p.values()) - 1,
        sum(a * q for (a, b), q in p.items()),
        sum(b * q for (a, b), q in p.items()),
        sum(a * b * q for (a, b), q in p.items()) - R_ts,
    ]
    sol = sp.solve(eqs, list(p.values()), dict=True)[0]
    return {k: sp.expand(sol[q]) for k, q in p.items()}


def _token_given_sign(sign_of_token, xi):
    # Uniform over the V/2 tokens of the class of xi.
    return sp.Piecewise((2 / V, sp.Eq(sign_of_token, xi)), (0, True))


def _pair_moment(sig, sig2) -> sp.Expr:
    """``P(v_t = v, v_s = v')`` for ``t != s`` with class signs ``sig, sig2`` of ``v, v'``."""
    law = sign_pair_law()
    return sp.nsimplify(sum(q * _token_given_sign(sig, a) * _token_given_sign(sig2, b) for (a, b), q in law.items()))


def _single_moment(sig) -> sp.Expr:
    """``P(v_t = v)`` for a token of class sign ``sig``: the sign is fair by the zero mean."""
    marginal = {a: sum(q for (x, _), q in sign_pair_law().items() if x == a) for a in (1, -1)}
    return sp.simplify(sum(q * _token_given_sign(sig, a) for a, q in marginal.items()))


@lru_cache(maxsize=None)
def second_moment_entry() -> sp.Expr:
    r"""The entry :math:`E[a a^T]_{v v'}` in terms of :math:`\alpha, \kappa, W`.

    With the pair moment affine in :math:`R_{ts}`, the sum over ``t != s`` only needs
    :math:`\sum_{t\ne s} w_t w_s = W^2 - \kappa` and :math:`\sum_{t\ne s} w_t w_s R_{ts} = \alpha - \kappa`:

    .. math:: E[a a^T] = \frac{\kappa}{V} I + \frac{W^2-\kappa}{V^2} 1 1^T + \frac{\alpha-\kappa}{V^2} s s^T.

    ``same_token`` is 1 on the diagonal; ``sigma, sigma_2`` are the class signs.

    >>> second_moment_entry()
    kappa*same_token/V + sigma*sigma_2*(alpha - kappa)/V**2 + (W**2 - kappa)/V**2
    """
    entries = {}
    for sig in (1, -1):
        for sig2 in (1, -1):
            pair = sp.expand(_pair_moment(sig, sig2))
            off = pair.coeff(R_ts, 0) * (W**2 - kappa) + pair.coeff(R_ts, 1) * (alpha - kappa)
            entries[(sig, sig2)] = sp.expand(off)
    diag = sp.simplify(_single_moment(1))
    # The four sign cases are b0 + b1 sigma sigma'; read b0, b1 off two of them and check the rest.
    b0 = (entries[(1, 1)] + entries[(1, -1)]) / 2
    b1 = (entries[(1, 1)] - entries[(1, -1)]) / 2
    for (sig, sig2), e in entries.items():
        assert sp.simplify(e - b0 - b1 * sig * sig2) == 0
    assert sp.simplify(diag - _single_moment(-1)) == 0
    return sp.factor(b1) * sigma * sigma2 + sp.factor(b0) + same * kappa * diag


@lru_cache(maxsize=None)
def mean_entry() -> sp.Expr:
    r"""The entry :math:`E[a]_v = W/V` (each position puts mass ``1/V`` on every token).

    >>> mean_entry()
    W/V
    """
    return sp.simplify(W * _single_moment(1))


@lru_cache(maxsize=None)
def second_moment_coefficients() -> tuple:
    r"""The coefficients of ``I``, ``1 1^T`` and ``s s^T`` in :math:`M = E[a a^T]`, read off its entry.

    >>> second_moment_coefficients()
    (kappa/V, (W**2 - kappa)/V**2, (alpha - kappa)/V**2)
    """
    entry = second_moment_entry()
    coeff_11 = entry.subs(same, 0).subs({sigma: 0})
    return entry.coeff(same), coeff_11, sp.factor(sp.expand(entry.subs(same, 0) - coeff_11).coeff(sigma * sigma2))


@lru_cache(maxsize=None)
def second_moment_spectrum() -> dict:
    r"""How :math:`M = E[a a^T]` acts on ``s``, on ``1`` and on their orthogonal complement.

    From the entry formula with :math:`s \perp 1`, :math:`\|s\|^2 = \|1\|^2 = V`:
    :math:`M s = (\alpha/V) s`, :math:`M 1 = (W^2/V) 1`, :math:`M x = (\kappa/V) x` for ``x`` orthogonal to both.

    >>> second_moment_spectrum()
    {'s': alpha/V, 'one': W**2/V, 'perp': kappa/V}
    """
    coeff_I, coeff_11, coeff_ss = second_moment_coefficients()
    # M = cI I + c11 11^T + css ss^T; apply to s and 1 with s.1 = 0, s.s = 1.1 = V.
    return {
        "s": sp.simplify(coeff_I + coeff_ss * V),
        "one": sp.simplify(coeff_I + coeff_11 * V),
        "perp": sp.simplify(coeff_I),
    }


@lru_cache(maxsize=None)
def population_covariance_terms() -> dict:
    r"""The terms of :math:`E[c c^T \mid E]` with the table written as :math:`E = \mu s^T + Z`.

    Projecting ``M`` on ``s``, ``1`` and the rest, with :math:`g = Z s / V` (the class-mean
    noise of the vocabulary) and :math:`m = Z 1 / V` (its overall mean noise):

    .. math:: E[c c^T \mid E] = \alpha (\mu + g)(\mu + g)^T + W^2\, m m^T + \frac{\kappa}{V} Z P_\perp Z^T ,

    and :math:`E[c \mid E] = W m`, so the centered covariance drops the ``W^2 m m^T`` term.
    ``g``, ``m`` and :math:`Z P_\perp` are independent Gaussians; :math:`E\|g\|^2 = E\|m\|^2 = d/V`.
    The returned strengths are those of the rank-one terms with unit directions, in the limit
    ``d/V -> delta``: the signal term has :math:`\|\mu+g\|^2 \to \mu_2 + \delta`, so strength
    :math:`\alpha(\mu_2+\delta)`, and its direction has squared cosine
    :math:`\mu_2/(\mu_2+\delta)` with :math:`u = \mu/\|\mu\|`.

    >>> t = population_covariance_terms(); t["signal_strength"], t["signal_cosine2"], t["mean_strength"]
    (alpha*(delta + mu2), mu2/(delta + mu2), W**2*delta)
    """
    spec = second_moment_spectrum()
    # E||Z x||^2 = d ||x||^2 for Z with iid N(0,1) entries; ||s||^2 = ||1||^2 = V.
    g_norm2 = sp.simplify(d * V / V**2)
    m_norm2 = g_norm2
    limit = {d: delta * V}
    signal_norm2 = mu2 + g_norm2  # <mu, g> has mean 0 and variance mu2/V -> 0
    return {
        "signal_strength": sp.factor((spec["s"] * V * signal_norm2).subs(limit)),
        "signal_cosine2": sp.factor((mu2 / signal_norm2).subs(limit)),
        "mean_strength": sp.factor((spec["one"] * V * m_norm2).subs(limit)),
        "bulk_scale": sp.factor(spec["perp"] * V),
        "mean_vector_coefficient": sp.simplify(mean_entry() * V),
    }


@lru_cache(maxsize=None)
def sample_covariance_mean(centered: bool = False) -> dict:
    r"""The exact expectation of ``S`` (or ``S_c``) at finite ``V, N``, over the table and the sequences:
    :math:`E[S] = a\, u u^T + b\, I` with ``u`` the unit signal direction.

    Given the table, :math:`E[S \mid E] = E M E^T` and, the ``c_n`` being i.i.d. given it,
    :math:`E[S_c \mid E] = (1 - 1/N)(E M E^T - E \bar m \bar m^T E^T)` with :math:`\bar m = E[a]`.
    Over :math:`E = \mu s^T + Z`: :math:`E[Z X Z^T] = \mathrm{tr}(X) I` and the cross terms vanish, so
    :math:`a = \mu_2\, s^T M s` (and :math:`s^T \bar m = 0`) and :math:`b = \mathrm{tr} M` (minus
    :math:`\|\bar m\|^2` when centered), both read off :func:`second_moment_spectrum` and :func:`mean_entry`.

    >>> sample_covariance_mean()
    {'u': alpha*mu2, 'identity': (V*kappa + W**2 + alpha - 2*kappa)/V}
    """
    spec = second_moment_spectrum()
    # M has eigenvalue spec["s"] on s, spec["one"] on 1 and spec["perp"] on the V - 2 others; s^T s = V
    trace = spec["s"] + spec["one"] + (V - 2) * spec["perp"]
    along_u = mu2 * spec["s"] * V
    mean_norm2 = mean_entry() ** 2 * V  # ||E[a]||^2 = V (W/V)^2
    if not centered:
        return {"u": sp.factor(along_u), "identity": sp.factor(trace)}
    keep = 1 - 1 / N
    return {"u": sp.factor(keep * along_u), "identity": sp.factor(keep * (trace - mean_norm2))}


def formulas() -> list[Formula]:
    terms = population_covariance_terms()
    src = "derive/model/expectations.py"
    limit = "$d/V \\to \\delta$"
    return [
        Formula("second moment of the pooled one-hot vector", second_moment_entry(),
                "one-hot pooling $a = \\sum_t w_t \\mathbf{1}_{v_t}$; $\\sigma, \\sigma_2$ the class signs of the tokens "
                "$v, v'$", f"{src}:second_moment_entry", named("M_vv", r"\mathbb{E}[a_v a_{v'}]")),
        Formula("mean of the pooled one-hot vector", mean_entry(), "every position puts mass $1/V$ on each token",
                f"{src}:mean_entry", named("abar_v", r"\mathbb{E}[a_v]")),
        Formula("strength of the signal term", terms["signal_strength"],
                f"{limit}; direction $\\mu + Zs/V$ (the class-mean noise kept)", f"{src}:population_covariance_terms",
                named("theta_s", r"\theta_s"), quantities=(("signal.strength", None),)),
        Formula("squared cosine of the signal direction with $u$", terms["signal_cosine2"], limit,
                f"{src}:population_covariance_terms", named("cos2_s", r"\cos^2\varphi_s"),
                quantities=(("signal.cosine2", None),)),
        Formula("strength of the vocabulary-mean term (raw $S$ only)", terms["mean_strength"],
                f"{limit}; direction $Z\\mathbf{{1}}/V$, asymptotically orthogonal to $u$",
                f"{src}:population_covariance_terms", named("theta_m", r"\theta_m"),
                quantities=(("mean.strength", None),)),
        Formula("scale of the population bulk", terms["bulk_scale"],
                "the bulk $(\\kappa/V) Z P_\\perp Z^\\top \\to \\kappa\\,\\mathrm{MP}_\\delta$",
                f"{src}:population_covariance_terms", named("sigma2_H", r"\sigma_H^2")),
    ]
