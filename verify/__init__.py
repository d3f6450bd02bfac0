"""Numbers and experiments put against the results of :mod:`derive`."""
