"""Compile the project's numba kernels into numba's cache before several processes need them at once.

numba compiles a kernel for each combination of argument types at its first call in a process and caches the
result on disk (``cache=True``: ``__pycache__`` beside the source, or ``NUMBA_CACHE_DIR``); a process that finds the
cache filled loads the machine code instead. On a fresh checkout, every process that starts before the cache is
filled compiles the same kernels again: the test suite's workers, and the commands its tests start. Running the
solvers once on a tiny draw, for every table type and engine path, fills the cache with the signatures they use
(``tests/conftest.py`` does it while the test workers collect, ``notes/benchmarks.md`` measures what it saves):

    python -m verify.montecarlo.precompile solvers     # verify.montecarlo.kernels
    python -m verify.montecarlo.precompile cavity      # derive.vocabulary.limit.cavity
    python -m verify.montecarlo.precompile signfield   # derive.vocabulary.limit.signfield
"""
from __future__ import annotations

import sys

import numpy as np

__all__ = ["PARTS", "compile_solvers", "compile_cavity", "compile_signfield", "main"]


def compile_solvers() -> None:
    """The matrix-free solvers on a tiny draw: float64 and float32 Lanczos, the mixed path, the mu2 axis,
    each on the raw and the centered ``S`` (the compiled engine; the signatures of every later call of theirs)."""
    import scipy.sparse as sps

    from verify.montecarlo.lanczos import Mixing, implicit_top, product
    from verify.montecarlo.mu2_axis import Pencil, axis_top
    from verify.montecarlo.trials import run_axis, run_trial

    from derive.model.spec import Model

    w = [0.4, 0.3, 0.2, 0.1]
    for centered in (False, True):
        model = Model(d=24, V=48, N=96, T=4, signs="prefix:2", mu2=2, centered=centered)
        for path, dtype in (("implicit", np.float64), ("implicit", np.float32), ("mixed", np.float64)):
            run_trial(model, weights=w, k=2, path=path, dtype=dtype, engine="numba")
        run_axis(model, [0.5, 2.0], weights=w, k=2, path="implicit")
    # a mixing made from a sparse A (its values in C order, the draw's in F order) and the float32 table's block pass
    rng = np.random.default_rng(0)
    E, A, s = rng.standard_normal((24, 48)), sps.random(48, 96, 0.1, random_state=1, format="csc"), np.repeat([1.0, -1.0], 24)
    mixing = Mixing.of(A, True)
    for dtype in (np.float64, np.float32):
        implicit_top(E, mixing, 2, rng.standard_normal(24), dtype)
        axis_top(Pencil.of(E.astype(dtype), mixing, s), [0.5, 2.0], 2)
        product(E.astype(dtype), np.ones((48, 1)))


def compile_cavity() -> None:
    """The population dynamics of the model's bulk (:mod:`derive.vocabulary.limit.cavity`) at one point, tiny settings."""
    from derive.vocabulary.limit.cavity import Settings, densities

    densities([0.5], [0.5, 0.5], 0.5, 1.0, Settings(population=64, replicas=1, stages=1, stage_sweeps=1,
                                                    average_sweeps=1, rounds=1), threads=1)


def compile_signfield() -> None:
    """The quenched populations of the model's outlier at several nonzero weights (:mod:`derive.vocabulary.limit.signfield`)
    at one complex point, with correlated signs, so that the field's linear systems are compiled too."""
    from derive.vocabulary.limit.signfield import quenched

    quenched(np.array([0.5, 0.5]), np.array([[1.0, 0.5], [0.5, 1.0]]), 0.5, 0.5, 64, 0, 64).solve(1.0 + 0.01j)


PARTS = {"solvers": compile_solvers, "cavity": compile_cavity, "signfield": compile_signfield}


def main(argv=None) -> int:
    """``python -m verify.montecarlo.precompile [PART ...]`` (default: every part of :data:`PARTS`)."""
    parts = (sys.argv[1:] if argv is None else argv) or list(PARTS)
    unknown = [p for p in parts if p not in PARTS]
    if unknown:
        print(f"precompile: unknown part {unknown[0]!r} (one of {', '.join(PARTS)})", file=sys.stderr)
        return 2
    for part in parts:
        PARTS[part]()
    return 0


if __name__ == "__main__":
    sys.exit(main())
