"""Exact and symbolic results for the random-matrix analysis of attention pooling.

Nothing in this package draws random numbers or imports :mod:`verify`.
"""
