"""The paper's claims as its summaries state them, and the closed forms they state: one record per claim, read by the
ledger's records (:mod:`verify.ledger.claims`: each :class:`~verify.ledger.records.Claim` takes its statement from
:data:`STATEMENTS`) and by ``verify formula`` (:func:`claimed_forms`: a user's form that is a claim's own form is told
which claim it is and what the ledger derives instead).

A :class:`ClaimedForm` is a claim's formula for a quantity of ``verify formula`` (:mod:`derive.sheet.quantities`) and
the derivation's correction of it, both made from the SymPy objects the code evaluates (the checks C3 and C6 state the
same corrections in their records). Light by design: SymPy and the derivation's symbolic modules, no Monte Carlo, so
that ``verify formula`` can read it.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import sympy as sp

__all__ = ["STATEMENTS", "ClaimedForm", "CLAIMED_FORMS", "claimed_forms", "claimed_mu2_critical",
           "c3_corrected", "c6_corrected"]

STATEMENTS = {
    "C1": "the limiting spectral distribution of S is kappa*(MP_delta boxtimes MP_gamma); its shape depends on delta, "
          "gamma only, its scale on kappa",
    "C2": "two successive BBP-type transitions, governed by delta, gamma, alpha, kappa: one at population level "
          "(N = oo) and one at sample level (finite gamma)",
    "C3": "an outlier exists iff rho = alpha*mu2/kappa > delta + sqrt(delta); above it the outlier's eigenvector "
          "aligns with u",
    "C4": "even above C3, finite N can hide the outlier; explicit formulas give the outlier eigenvalue of S and the "
          "overlap |u_hat^T u|^2",
    "C5": "the w maximizing alpha/kappa is the normalized top eigenvector of R; for prefix:L it puts all mass on the "
          "first L positions and beats mean pooling",
    "C6": "parameter-free causal self-attention converges as d -> oo to harmonic weights w_t ~ H_{T-1} - H_{t-1}, "
          "monotonically decreasing in t",
    "C7": "causal attention gives a higher alpha/kappa than mean pooling when the signal sits in early positions",
    "C8": "ridge-regression classification on the pooled vectors ranks optimal weights > causal attention > mean "
          "pooling, the same order as their alpha/kappa",
    "C9": "empirical eigenvalue histograms match the bulk density and the predicted outlier locations; alignment "
          "curves and detectability thresholds match the formulas",
}
"""Each claim of the paper as summarized."""


def claimed_mu2_critical() -> sp.Expr:
    """C3's threshold as stated: an outlier iff :math:`\\rho = \\alpha\\mu_2/\\kappa > \\delta + \\sqrt\\delta`."""
    from derive.symbols import alpha, delta, kappa
    return kappa * (delta + sp.sqrt(delta)) / alpha


def _derived_mu2_critical() -> sp.Expr:
    from derive.gaussian import spikes
    return sp.simplify(spikes.critical_mu2().subs(spikes.theta, spikes.population_threshold()))


def c3_corrected() -> str:
    """C3's corrected statement, written from the SymPy objects of :mod:`derive.gaussian.spikes` and
    :mod:`derive.model.expectations`."""
    from derive.gaussian import spikes
    from derive.model import expectations as ex

    terms = ex.population_covariance_terms()
    return (f"an outlier exists iff mu2 > {_derived_mu2_critical()} (the claim: mu2 > {claimed_mu2_critical()}): the "
            f"class-mean noise Z s/V of the finite vocabulary makes the spike theta = {terms['signal_strength']}; above "
            f"the threshold the eigenvector is not aligned with u: |<u_hat,u>|^2 -> zeta(theta) * "
            f"{terms['signal_cosine2']} < 1, zeta = {spikes.population_overlap()}")


def _c3_term(quantity: str) -> Callable[[], str]:
    """The corrected term of C3's threshold, for ``mu2`` or for ``rho``."""
    def text() -> str:
        from derive.model import expectations as ex
        from derive.symbols import alpha, kappa

        from derive.gaussian import spikes

        strength = ex.population_covariance_terms()["signal_strength"]
        derived = spikes.critical_mu2().subs(spikes.theta, spikes.population_threshold())
        claimed = claimed_mu2_critical()
        if quantity == "population.rho_critical":
            derived, claimed = sp.expand(alpha * derived / kappa), sp.expand(alpha * claimed / kappa)
        gap = sp.simplify(claimed - derived)
        return (f"the class-mean term: the noise Z s/V of the finite vocabulary's class means adds delta to mu2 in the "
                f"signal term's strength theta_s = {strength} (the claim has alpha*mu2), so the derived value is "
                f"max(0, {derived}), the claim's {claimed} less {gap}")
    return text


def c6_corrected() -> str:
    """C6's corrected statement, written from :func:`derive.model.attention.causal_weight`."""
    from derive.model.attention import causal_weight
    from derive.symbols import tau

    strict, inclusive = causal_weight("strict"), causal_weight("inclusive")
    return (f"as d -> oo the weights converge to w_s = {strict} for the STRICT mask (keys s < t, outputs averaged "
            f"over t = 2..T), for every tau; for the INCLUSIVE mask (s <= t) the limit is w_s = {inclusive}, i.e. "
            f"{sp.simplify(inclusive.subs(tau, 0))} at tau = 0; both are decreasing in s; real attention deviates "
            "from the limit by O(d^{-1/2}) per sequence")


def _c6_form() -> sp.Expr:
    from derive.symbols import T, t
    return (sp.harmonic(T - 1) - sp.harmonic(t - 1)) / (T - 1)


def _c6_term() -> str:
    from derive.model.attention import causal_weight
    from derive.symbols import s, t, tau

    inclusive = sp.simplify(causal_weight("inclusive").subs(tau, 0).subs(s, t))
    return (f"the mask: the claimed weights are the limit of the strict mask (keys s < t) only, for every tau; the "
            f"inclusive mask (s <= t, the tools' default) gives {inclusive} at tau = 0")


@dataclass(frozen=True)
class ClaimedForm:
    """A claim's closed form of a derived quantity (``expr()``, in :mod:`derive.symbols`) and ``correction()``, the
    term the ledger's derivation corrects, in words made from the derivation's own objects."""

    claim: str
    quantity: str
    expr: Callable[[], sp.Expr]
    correction: Callable[[], str]

    def explanation(self) -> str:
        """What ``verify formula`` says of a user's form that is this one."""
        return (f"this is claim {self.claim} as the paper states it ({STATEMENTS[self.claim]}); the ledger corrects "
                f"it: {self.correction()}")


def _rho_form() -> sp.Expr:
    from derive.symbols import delta
    return delta + sp.sqrt(delta)


CLAIMED_FORMS = (
    ClaimedForm("C3", "population.mu2_critical", claimed_mu2_critical, _c3_term("population.mu2_critical")),
    ClaimedForm("C3", "population.rho_critical", _rho_form, _c3_term("population.rho_critical")),
    ClaimedForm("C6", "weights.causal", _c6_form, _c6_term),
)
"""The closed forms the paper's claims state for quantities of ``verify formula``, where the ledger corrects them."""


def claimed_forms(quantity: str) -> list[ClaimedForm]:
    """The claimed forms of ``quantity``.

    >>> [f.claim for f in claimed_forms("population.mu2_critical")]
    ['C3']
    """
    return [f for f in CLAIMED_FORMS if f.quantity == quantity]
