"""`python -m dagtools.cli`: the command line run from its own package, as `python -m dagtools` runs it."""

import sys

from ._main import main

sys.exit(main())
