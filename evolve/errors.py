"""One error root, one handler, documented exit codes.

Exit codes (also in README):
  0  success
  1  a user error: the message says what to do (UserError; a git failure in a damaged
     agent repository, `store.git.damaged`)
  2  usage error (bad arguments)
  3  an internal error: a bug, logged with a traceback under the home
  75 busy: try again later (another evolve process holds the agent, or a person's git
     operation is in progress in its repository, or left conflict markers in memo.md or a
     skill: `workspace.hold`); "skipped / nothing new" is 0
  130 interrupted (Ctrl-C)
"""

from __future__ import annotations

EXIT_OK = 0
EXIT_USER = 1
EXIT_USAGE = 2
EXIT_BUG = 3
EXIT_BUSY = 75  # EX_TEMPFAIL (sysexits.h)
EXIT_INTERRUPTED = 130


class EvolveError(Exception):
    """Root of evolve's own errors."""


class UserError(EvolveError):
    """Something the user can fix; the message is one line naming the remedy."""


class ConfigError(UserError):
    """A configuration file holds a bad value; message is `file: key: problem`."""


class NameRefused(UserError):
    """A skill or agent name that is not allowed (never used to build a path)."""


class PathRefused(UserError):
    """A path evolve never writes (outside the repository, into .git, a filter file, through a link)."""


class Busy(UserError):
    """Not now: evolve or a person is using the agent; the message says who (exit 75)."""


class LockBusy(Busy):
    """Another live process holds a lock we need."""
