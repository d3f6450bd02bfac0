"""One draw of the model's token matrix: its sampling, its spectrum, the bulk and outliers of ``S`` conditional on
it, and the expectation over draws at the user's dimension ``d``."""
