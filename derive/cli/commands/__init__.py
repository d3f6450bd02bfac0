"""One module per ``derive`` subcommand."""
