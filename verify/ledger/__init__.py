"""The ledger wing: the claims and their checks (:mod:`~verify.ledger.claims`), the records and verdict
machinery (:mod:`~verify.ledger.records`), the readable report (:mod:`~verify.ledger.report`)."""
