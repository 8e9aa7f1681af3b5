"""Sharing an agent through a git server (reserved for the remote-sync work).

It sits above reflect (a sync may re-apply a reflection's stored operations) and below
the watcher (which syncs after evolve's commits).
"""
