"""The stores: files, locks, the git door, agent repositories and their history, state.db, the hook spool.

The lowest layer above the kernel (errors, home, config, names): it knows nothing of the loop.
"""
