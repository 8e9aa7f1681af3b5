"""`python -m evolve`."""

import sys

from evolve.cli import main

sys.exit(main())
