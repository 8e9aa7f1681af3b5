"""An agent's workspace: its git repository of skills and memo, as a person and evolve edit it.

The agent facade, SKILL.md and memo.md parsing, curation (pin, restore, prune, eviction),
the template of a new agent repository and the skill links into agent harnesses.
"""
