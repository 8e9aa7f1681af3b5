"""What evolve installs outside itself (package data, no code).

The agent repository's git pre-commit hook and the watcher's systemd/launchd service files.
Read with importlib.resources.files("evolve.hooks").
"""
