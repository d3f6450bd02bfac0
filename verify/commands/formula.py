"""``verify formula``: a user's closed form of a derived quantity, proved equal, or refuted at a point."""
import textwrap

from derive.sheet.meanings import QUANTITIES, QUANTITY_MEANINGS
from verify.commands.options import add_max_memory

__all__ = ["NAME", "HELP", "EPILOG", "add_arguments", "run", "render", "exit_status"]

NAME = "formula"
HELP = "check your closed form of a derived quantity: a proof, a counterexample at a simple point, or agreement"


EPILOG = "the quantities:\n" + "\n".join(
    textwrap.fill(meaning, 100, initial_indent=f"  {name:<32}", subsequent_indent=" " * 34)
    for name, meaning in QUANTITY_MEANINGS.items()) + "\n\n" + "\n\n".join(textwrap.fill(text, 100, break_on_hyphens=False) for text in (
    "population.* are exact in the limit d/V -> delta; sample.* and bulk.* are for the Gaussian-equivalent law (the "
    "paper's); weights.* and alpha_over_kappa.* are exact.",
    "An expression may also use the paper's and the formula sheet's names where the quantity's parameters define "
    "them: rho (alpha mu2/kappa), theta (theta_s = alpha (mu2 + delta)), theta_c, cos2_s, theta_m, sigma2_H, "
    "lambda_H, the sheet's functions zeta(theta), eta(theta), ell(theta), psi(ell(theta)) (a bare zeta is "
    "zeta(theta)), and s for t in weights.causal (derive formulas lists the sheet).",
    "Where the derived value has two forms (an overlap is 0 below its threshold, mu2_critical is 0 where the outlier "
    "exists at mu2 = 0), both sides are checked: a form right only where the outlier exists is equal or agrees "
    "'where' that region (the document's domain), with the point beyond it where the two differ. A form that is a "
    "claim of the paper is told which (explanation) and what the ledger derives instead."))


def add_arguments(p):
    p.add_argument("--quantity", required=True, choices=QUANTITIES, metavar="Q",
                   help="the derived quantity (each with its meaning below)")
    p.add_argument("--expr", required=True,
                   help="a SymPy expression in the quantity's symbols (delta, gamma, alpha, kappa, mu2, W, x, T, t, tau, "
                        "L) and the sheet's names (theta, ...)")
    p.add_argument("--where", default=None,
                   help="constraints on the domain searched, e.g. 'delta=1/2, gamma<1, mask=strict'")
    p.add_argument("--mc", action="store_true", help="add a Monte Carlo of the model at the point (sample.eigenvalue, sample.overlap)")
    p.add_argument("--examples", default="200", help="points Hypothesis evaluates when no proof is found (default 200)")
    p.add_argument("--seed", default="0", help="seed of the search and of the Monte Carlo (default 0)")
    p.add_argument("--digits", default=30, help="significant digits of the comparison and of every real (default 30)")
    add_max_memory(p)


def run(args):
    from verify.montecarlo.memory import set_max_memory
    from verify.formula import check_formula  # here: building the parser must not import SymPy

    set_max_memory(args.max_memory)

    return check_formula(args.quantity, args.expr, where=args.where, mc=args.mc, digits=args.digits,
                         examples=args.examples, seed=args.seed).as_dict()


def exit_status(doc) -> int:
    """0 for equal or agrees (on the whole domain, or where ``domain`` says), 1 for a counterexample."""
    return 1 if doc["verdict"] == "counterexample" else 0


def render(doc) -> str:
    lines = [f"{doc['quantity']}: {doc['verdict']}" + (f" where {doc['domain']}" if doc.get("domain") else "")]
    if doc.get("separated_by"):
        lines.append(f"  condition: {doc['separated_by']}")
    lines += [f"  yours:   {doc['expr']}", f"  law:     {doc['law']}"]
    for name, meaning in (doc.get("names") or {}).items():
        lines.append(f"  {name}: {meaning}")
    if doc["proof"]:
        lines.append(f"  proof:   {doc['proof']}")
    if doc.get("domain"):
        lines.append(f"  but:     {doc['note']}")
    where = doc["point"] or doc["checked_at"]
    lines.append(("  at:      " if doc["point"] else "  e.g. at: ") + ", ".join(f"{k} = {v}" for k, v in where.items()))
    lines.append(f"  derived: {doc['expected']}")
    lines.append(f"  yours:   {doc['got'] if doc['got'] is not None else 'undefined'}")
    lines.append(f"  {doc['examples']} points evaluated; values differ when apart by more than {doc['tolerance']} "
                 "relative to max(1, |derived|)")
    if doc["note"] and not doc.get("domain"):
        lines.append(f"  note:    {doc['note']}")
    if doc.get("explanation"):
        lines.append(f"  claim:   {doc['explanation']}")
    mc = doc.get("mc")
    if mc:
        if "skipped" in mc:
            lines.append(f"  Monte Carlo skipped: {mc['skipped']}")
        else:
            lines.append(f"  Monte Carlo (d = {mc['d']}, V = {mc['V']}, N = {mc['N']}, {mc['signs']}, {mc['S']} S, "
                         f"{mc['seeds']} seeds): {mc['mean']} [{mc['ci95'][0]}, {mc['ci95'][1]}]; "
                         f"derived in CI: {mc['expected_in_ci']}, yours in CI: {mc['got_in_ci']}")
            lines.append("  (Monte Carlo: the mean over the seeds and its Student-t 95% interval)")
    lines.append("  derived, yours: to --digits significant digits (default 30), each correct to the digits shown")
    return "\n".join(lines)
