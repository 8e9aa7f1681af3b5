"""Observe: new transcript bytes and hook records → runs, facts and usage in state.db."""
