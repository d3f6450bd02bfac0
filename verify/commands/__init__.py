"""One module per ``verify`` subcommand."""
