"""One module per ``verify`` subcommand, and :mod:`~verify.commands.options`, the options they share."""
