r"""The model and its notation, in one place: the first section of the formula sheet (:func:`notation_latex`) and the
documentation's page ``docs/notation.md`` (:func:`notation_markdown`; ``tests/test_docs.py`` checks that the page
shows exactly this text).

Each entry is a symbol and its meaning, mathematics between dollars (LaTeX in the sheet, rendered as math by
Markdown viewers), the rest plain text. The sign families and the weight schemes are listed from their catalogues
(:mod:`derive.model.families`, :mod:`derive.model.schemes`: each entry's ``syntax`` and ``notation``), so that an
entry added there is listed here.
"""
from __future__ import annotations

from derive.model import families, schemes

__all__ = ["MODEL", "NOTATION", "notation_markdown", "notation_latex"]

MODEL = (
    "Embedding table, fixed once and shared by all sequences: $E = [e_1 \\dots e_V] \\in \\mathbb{R}^{d \\times V}$, "
    "$e_v = s_v \\mu + z_v$, with balanced class signs $s_v \\in \\{\\pm 1\\}$, a signal vector $\\mu$ and noise "
    "$z_v \\sim N(0, I_d)$. Sequences $n = 1, \\dots, N$: a sign vector $\\xi_n \\in \\{\\pm 1\\}^T$ with "
    "$\\mathbb{E}\\xi_n = 0$ and $\\mathbb{E}\\xi_n\\xi_n^\\top = R$; at each position $t$ a token $v_{n,t}$ drawn "
    "uniformly from the class $\\{v : s_v = \\xi_{n,t}\\}$, and $X^{(n)}_t = e_{v_{n,t}}$. Pooling: "
    "$c_n = \\sum_t w_t X^{(n)}_t$. The question: how much of $u = \\mu/\\|\\mu\\|$ the top eigenvector $\\hat u$ of "
    "$S$ recovers, $|\\hat u^\\top u|^2$, as $d, V, N \\to \\infty$ with $d/V \\to \\delta$, $d/N \\to \\gamma$ and "
    "$T$ fixed."
)
"""The paper's model (docs/notation.md) in one paragraph."""


def _listed(syntax: tuple, notation: str) -> str:
    """A catalogue entry as the notation lists it: its forms, and what it is where it says."""
    forms = " or ".join(f"`{form}`" for form in syntax)
    return f"{forms} ({notation})" if notation else forms


NOTATION = (
    ("d, V, N, T", "embedding dimension, vocabulary size (even), number of sequences, sequence length (fixed)"),
    ("\\delta = d/V", "the embedding dimension over the vocabulary size"),
    ("\\gamma = d/N", "the embedding dimension over the number of sequences ($\\gamma = 0$: the population level, "
                      "$N = \\infty$)"),
    ("\\mu_2 = \\|\\mu\\|^2", "the signal strength (`mu2` on the command line); $u = \\mu/\\|\\mu\\|$ the direction to "
                             "recover"),
    ("R", "the positional correlation of the signs, $R = \\mathbb{E}\\xi\\xi^\\top$, $R_{tt} = 1$; sign families "
          + ", ".join(_listed((cls.syntax,), cls.notation) for cls in families.CATALOGUE)),
    ("w \\in \\mathbb{R}^T", "the pooling weights (normalized to $\\sum_t w_t = 1$ in every output): "
                             + ", ".join(_listed(s.syntax, s.notation) for s in schemes.CATALOGUE)),
    ("\\tau", "the attention temperature: scores $\\tau \\langle x_t, x_s \\rangle / d$, softmax over the causal "
              "window, outputs averaged over positions"
              + "".join(f"; `{s.name}` scales the scores by `{s.scores}` instead" for s in schemes.CATALOGUE if s.scores)),
    ("\\text{mask}", "the causal window: `inclusive` (keys $s \\le t$; the tools' default) or `strict` ($s < t$). The "
                     "paper's harmonic weights $w_t \\propto H_{T-1} - H_{t-1}$ are the strict mask's (any $\\tau$); "
                     "the inclusive mask gives $H_T - H_{t-1}$ at $\\tau = 0$"),
    ("H_k", "the $k$-th harmonic number $\\sum_{j \\le k} 1/j$"),
    ("c_n = \\sum_t w_t X^{(n)}_t", "the pooled vector of sequence $n$; $a = \\sum_t w_t \\mathbf{1}_{v_t} \\in "
                                    "\\mathbb{R}^V$ its one-hot form ($c = Ea$)"),
    ("S = \\frac{1}{N}\\sum_n c_n c_n^\\top", "the raw sample covariance (not centered, as the paper writes it)"),
    ("S_c", "the centered one, $\\frac{1}{N}\\sum_n (c_n - \\bar c)(c_n - \\bar c)^\\top$ (`--centered`): it has no "
            "vocabulary-mean outlier"),
    ("\\alpha = w^\\top R w", "the signal kept by the pooling"),
    ("\\kappa = \\|w\\|^2", "the noise scale of the pooled vectors"),
    ("W = \\sum_t w_t", "the weight of the vocabulary-mean term of the raw $S$ (1 for normalized weights)"),
    ("\\theta_s = \\alpha(\\mu_2 + \\delta)", "the strength of the signal term of the population covariance (the "
                                              "class-mean noise $Zs/V$ adds $\\delta$ to $\\mu_2$); `theta` in "
                                              "`verify formula`"),
    ("\\cos^2\\varphi_s = \\mu_2/(\\mu_2 + \\delta)", "the squared cosine of the signal direction $\\mu + Zs/V$ "
                                                       "with $u$"),
    ("\\theta_m = W^2\\delta", "the strength of the vocabulary-mean term $Z\\mathbf{1}/V$ (raw $S$ only)"),
    ("\\theta_c, \\lambda_H", "the population threshold strength $\\kappa(\\delta + \\sqrt\\delta)$ and the right "
                              "edge $\\kappa(1 + \\sqrt\\delta)^2$ of the population bulk $\\kappa\\,\\mathrm{MP}_\\delta$"),
    ("\\mathrm{MP}_c, \\boxtimes", "the Marchenko-Pastur law of ratio $c$ and the free multiplicative convolution; "
                                   "$\\kappa(\\mathrm{MP}_\\delta \\boxtimes \\mathrm{MP}_\\gamma)$ is the claimed "
                                   "bulk (C1)"),
    ("m(z)", "the Stieltjes transform $\\int d\\mu(x)/(x - z)$ of a law; the bulk's polynomial is in $m$ and $z$"),
    ("A, D", "the token matrix, $A_{vn} = \\sum_t w_t \\mathbf{1}[v_{n,t} = v]$ ($V \\times N$), and "
             "$D = (V/N) AA^\\top$: $S = \\frac{1}{N} E A A^\\top E^\\top$"),
    ("N T / V = T\\delta/\\gamma", "the reuse: how many times a token is used on average (`reuse`)"),
    ("|\\hat u^\\top u|^2", "the overlap of an outlier's eigenvector with $u$ (`overlap`; 0 without outlier)"),
    ("\\mu_{2,c}", "the smallest $\\mu_2$ at which an outlier exists, all else fixed (`mu2_critical`)"),
    ("\\text{law}", "what a result is for: `finite-vocabulary` (the model's own $S$: tokens reused a Poisson number "
                    "of times) or `gaussian-equivalent` (pooled vectors replaced by Gaussian ones with the same "
                    "covariance, the paper's law)"),
)
"""Each symbol (LaTeX) and its meaning."""


def notation_markdown() -> str:
    """The notation as ``docs/notation.md`` shows it: the model's paragraph, then one bullet per symbol.

    >>> notation_markdown().splitlines()[2]
    '- $d, V, N, T$: embedding dimension, vocabulary size (even), number of sequences, sequence length (fixed)'
    """
    return "\n".join([MODEL, ""] + [f"- ${symbol}$: {meaning}" for symbol, meaning in NOTATION]) + "\n"


def notation_latex(escape) -> str:
    """The notation as the sheet's first section; ``escape`` makes a meaning's text safe for LaTeX (mathematics
    between dollars kept, backquoted names in ``\\texttt``)."""
    def text(s: str) -> str:
        parts = s.split("`")
        return "".join(escape(p) if i % 2 == 0 else r"\texttt{" + escape(p) + "}" for i, p in enumerate(parts))

    items = "\n".join(rf"\item[${symbol}$] {text(meaning)}." for symbol, meaning in NOTATION)
    return "\n".join([r"\section*{Model and notation}", text(MODEL), "", r"\begin{description}", items,
                      r"\end{description}", ""])
