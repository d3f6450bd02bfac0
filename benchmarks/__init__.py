"""The benchmark harness of attention-rmt (not installed): ``python -m benchmarks all|sweeps``.

Every figure is a ratio against a baseline timed in the same run, written to ``notes/benchmarks.md``
and ``notes/sweeps.md`` of this checkout.
"""
