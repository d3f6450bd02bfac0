"""What the command lines and verify's reports print: the JSON documents, their text forms and how to read them,
provenance, plots. Below the command line: ``derive.cli`` and ``verify`` both import it, and it imports no command
line."""
