"""The watcher: a process beside the agent that observes, commits a person's edits and runs the cycle."""
