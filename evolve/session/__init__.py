"""What a new session sees: the memo and the skill index, under the prompt budget.

On the session-start hot path: standard library and evolve's light modules only.
"""
