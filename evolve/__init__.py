"""evolve: an agent learns from its own transcripts into skills and a memo kept in git.

Importing the package is cheap on purpose: agent hooks import it on every turn, so
nothing heavy (anthropic, GitPython, tiktoken, watchdog) may be imported here.
"""

__version__ = "0.1.0"
