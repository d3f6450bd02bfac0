"""The studies wing: finite-size ladders, real attention against its limit, downstream classification."""
