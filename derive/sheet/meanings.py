"""What each quantity of ``verify formula --quantity`` is, in words: the table behind its ``--help`` and the
quantities of :mod:`derive.sheet.quantities` (apart from them, so that building the command line imports no SymPy)."""

__all__ = ["QUANTITY_MEANINGS", "QUANTITIES"]

QUANTITY_MEANINGS = {
    "signal.strength":
        "theta_s = alpha (mu2 + delta), the strength of the signal term of the population covariance",
    "signal.cosine2": "the squared cosine of the signal direction mu + Z s/V with u",
    "mean.strength": "W^2 delta, the strength of the vocabulary-mean term of the raw S",
    "population.theta_critical":
        "theta_c, the strength above which a rank-one term of the population covariance makes an outlier",
    "population.eigenvalue": "the population outlier ell(theta_s) of the signal term (N = oo)",
    "population.overlap": "the limit of |u_hat^T u|^2 for the population outlier",
    "population.mu2_critical": "the smallest mu2 at which the population outlier exists",
    "population.rho_critical":
        "the smallest rho = alpha mu2/kappa at which the population outlier exists (C3 states it as delta + sqrt(delta))",
    "sample.theta_critical":
        "theta_c^N, the threshold strength of a rank-one term at the sample level (d/N -> gamma)",
    "sample.eigenvalue": "the sample outlier psi(ell(theta_s)) of the signal term",
    "sample.overlap": "the limit of |u_hat^T u|^2 for the sample outlier",
    "sample.mu2_critical": "the smallest mu2 at which the sample outlier exists",
    "sample.rho_critical": "the smallest rho = alpha mu2/kappa at which the sample outlier exists",
    "bulk.right_edge": "the right edge of the bulk kappa (MP_delta boxtimes MP_gamma)",
    "bulk.population_right_edge": "the right edge of the population bulk kappa MP_delta",
    "bulk.density": "the density of the bulk kappa (MP_delta boxtimes MP_gamma) at x",
    "bulk.atom_at_zero": "the mass of that bulk at zero",
    "weights.causal":
        "the d -> oo limit weight w_t of causal attention (outputs averaged; sum 1), for --where mask=inclusive (default) or mask=strict",
    "alpha_over_kappa.mean.prefix": "alpha/kappa of mean pooling on prefix:L",
    "alpha_over_kappa.mean.suffix": "alpha/kappa of mean pooling on suffix:L",
    "alpha_over_kappa.optimal.prefix": "alpha/kappa of optimal pooling on prefix:L",
    "alpha_over_kappa.optimal.suffix": "alpha/kappa of optimal pooling on suffix:L",
}
"""The names ``verify formula --quantity`` accepts and what each is."""

QUANTITIES = tuple(QUANTITY_MEANINGS)
