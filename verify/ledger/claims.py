"""The claims of the paper, each with its check (one module per claim in :mod:`verify.ledger.checks`); the
ledger's figures are in :mod:`verify.ledger.figures`.

Each check returns ``{"verdict", "derived", "evidence"[, "corrected"][, "artifacts"]}``. Verdicts come
only from comparisons made at run time; :func:`verify.ledger.records.evaluate` turns any failure of a
check into ``inconclusive``.
"""
from __future__ import annotations

from functools import partial

from verify.ledger.checks.c1 import check_c1
from verify.ledger.checks.c2 import LEVELS as C2_LEVELS, check_c2, points
from verify.ledger.checks.c3 import check_c3
from verify.ledger.checks.c4 import PARTS as C4_PARTS, check_c4, comparisons
from verify.ledger.checks.c5 import check_c5
from verify.ledger.checks.c6 import check_c6
from verify.ledger.checks.c7 import check_c7
from verify.ledger.checks.c8 import check_c8
from verify.ledger.checks.c9 import check_c9, histogram_ladder
from verify.ledger.checks.c10 import check_c10
from verify.ledger.checks.common import FULL, QUICK
from verify.ledger.records import Claim
from verify.ledger.statements import STATEMENTS

__all__ = ["QUICK", "FULL", "CLAIMS"]


# cost: CPU seconds of each check, its prepare parts included, in one --quick run (2026-12-05, one BLAS thread), used
# only to start the long ones first
CLAIMS = [
    Claim("C1", STATEMENTS["C1"], check_c1, cost=7.4),
    Claim("C2", STATEMENTS["C2"], check_c2,
          prepare=tuple(partial(points, level=level) for level in C2_LEVELS), cost=33),
    Claim("C3", STATEMENTS["C3"], check_c3, cost=3.3),
    Claim("C4", STATEMENTS["C4"], check_c4, needs=("C2",),
          prepare=tuple(partial(comparisons, part=i) for i in range(len(C4_PARTS))), cost=25),
    Claim("C5", STATEMENTS["C5"], check_c5, cost=2.4),
    Claim("C6", STATEMENTS["C6"], check_c6, cost=0.7),
    Claim("C7", STATEMENTS["C7"], check_c7, cost=0.9),
    Claim("C8", STATEMENTS["C8"], check_c8, cost=0.8),
    Claim("C9", STATEMENTS["C9"], check_c9, needs=("C2", "C4"),
          prepare=histogram_ladder, cost=4.8),
    Claim("C10", "beyond the paper: at the transformer's scaling, scores tau <x_t, x_s>/sqrt(d), causal attention "
                 "still lowers the sample-level threshold below mean pooling's for early-signal families (prefix:L), "
                 "as it does at the paper's 1/d (C7)", check_c10, cost=7),
]
