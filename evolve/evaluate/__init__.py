"""Proving lessons: Claude Code's `claude plugin eval` run on the agent's main, read back, recorded."""
