"""One module per claim of the paper (``c1`` to ``c9``), and what their checks share (``common``)."""
