"""One module per group of verbs; each command is a function returning an exit code."""
