"""What evolve installs (package data, no code): the agent repo's git pre-commit hook and the
watcher's systemd/launchd service files. Read with importlib.resources.files("evolve.hooks").
"""
