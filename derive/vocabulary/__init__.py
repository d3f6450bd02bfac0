"""The model's own laws (a finite vocabulary, tokens reused a Poisson number of times), in two wings:

* :mod:`derive.vocabulary.limit`: ``d, V, N -> oo`` at fixed ratios;
* :mod:`derive.vocabulary.draw`: one sampled token matrix, and the expectation over such draws at the user's ``d``.

The draw builds on the limit (its conditional law is Silverstein's equation with the draw's spectrum as population,
and its outlier the limit's equations), never the other way round.
"""
