"""The model's own laws in the limit ``d, V, N -> oo`` at fixed ``delta = d/V`` and ``gamma = d/N``: the bulk (token
reuse, walks, Silverstein's equation and its populations, the cavity equations, the token graph, the law as one
object, the top of the bulk at ``T = 1``) and the signal outlier (its equations, the sign field on quenched
populations, the outlier with its errors)."""

KERNEL_FILES = ("cavity.py", "linalg.py", "roottokens.py", "signfield.py")
"""The package's files of numba kernels. Their kernels call and inline one another's compiled functions, so each
kernel's cache is keyed to all four (:func:`derive.cache.keep_fresh`)."""
