"""Exact and symbolic results for the random-matrix analysis of attention pooling.

Nothing in this package imports :mod:`verify`; what it draws at random (the samplers of the sign families, the
quenched populations of the model's own law, the token matrices of an expectation at the user's ``d``) is seeded. A question starts from a :class:`Model`
(every parameter read and checked once) and the answers come back as numbers and objects, at the current mpmath
precision (``with mpmath.workdps(P): ...``)::

    >>> import mpmath, derive
    >>> m = derive.Model(delta="1/2", gamma="1/4", T=8, weights="mean", signs="prefix:3", mu2="3/2", centered=True)
    >>> with mpmath.workdps(20):
    ...     out = derive.spike(m, law="gaussian-equivalent")
    ...     print(out.law, mpmath.nstr(out.sample.overlap, 10), derive.weights(m).alpha)
    gaussian-equivalent 0.6185897436 7/32

The public names are those of :data:`__all__` (the table :data:`PUBLIC` says where each lives); each is imported
on first use, so that a command needing one module does not pay for all of them. The wings:

* :mod:`derive.model`: the model itself (the specification, sign families and their ``R``, realizability, the
  expectations of the pooled vectors, the weight schemes, the optimal weights);
* :mod:`derive.gaussian`: the Gaussian-equivalent laws (free probability, the bulk
  :math:`\\kappa(\\mathrm{MP}_\\delta\\boxtimes\\mathrm{MP}_\\gamma)`, the outlier equations and their numbers);
* :mod:`derive.vocabulary`: the model's own laws (finite vocabulary, token reuse), in two wings: the limit
  (:mod:`derive.vocabulary.limit`: Silverstein's equation, the cavity equations, the token graph, the signal outlier
  of any weights) and one draw (:mod:`derive.vocabulary.draw`: a sampled token matrix, the law given it, the
  expectation at the user's ``d``);
* :mod:`derive.sheet`: the registry of derived formulas, the LaTeX sheet, the quantities a user's formula is checked
  against;
* :mod:`derive.report`: what the command lines print: the JSON documents, their text forms, provenance, plots;
* :mod:`derive.cli`: the ``derive`` command line.
"""
from importlib import import_module

PUBLIC = {
    "derive.model.spec": ("Model",),
    "derive.model.signs": ("SignFamily",),
    "derive.model.families": ("UserFamily", "parse_signs"),
    "derive.model.schemes": ("Scheme",),
    "derive.interface": ("weights", "bulk", "spike", "finite_size", "LAWS"),
    "derive.model.pooling": ("pooling", "Pooling"),
    "derive.model.attention": ("causal_weights", "mean_weights", "optimal_weights"),
    "derive.gaussian.outliers": ("outliers_at", "Outliers", "Level", "OtherOutlier", "signal_strength",
                                 "signal_cosine2", "mean_strength", "population_outlier", "population_overlap",
                                 "population_threshold", "population_right_edge", "sample_outlier", "sample_overlap",
                                 "sample_threshold", "sample_right_edge", "critical_mu2"),
    "derive.gaussian.bulk": ("BulkLaw",),
    "derive.vocabulary.limit.law": ("VocabularyLaw", "vocabulary_law"),
    "derive.vocabulary.limit.silverstein": ("GeneralizedMP",),
    "derive.vocabulary.draw.finite_size": ("FiniteSize",),
    "derive.sheet.formulas": ("all_formulas",),
    "derive.sheet.latex": ("formula_sheet",),
    "derive.symbols": ("Formula",),
    "derive.errors": ("ParameterError",),
}
"""Each public name, by the module that defines it."""

_RENAMED = {"gaussian_law": ("derive.gaussian.bulk", "law")}
"""Public names that differ from the defining module's (``gaussian_law`` is :func:`derive.gaussian.bulk.law`)."""

_WHERE = {name: (module, name) for module, names in PUBLIC.items() for name in names} | _RENAMED

__all__ = sorted(_WHERE) + ["__version__"]


def __getattr__(name):
    if name == "__version__":
        from importlib.metadata import PackageNotFoundError, version

        try:
            return version("attention-rmt")
        except PackageNotFoundError:
            return "unknown (not installed)"
    if name not in _WHERE:
        raise AttributeError(f"module 'derive' has no attribute {name!r}")
    module, attribute = _WHERE[name]
    return getattr(import_module(module), attribute)


def __dir__():
    return sorted(set(globals()) | set(__all__))
