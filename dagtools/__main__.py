"""`python -m dagtools`: the command line, as the `dagtools` command runs it."""

import sys

from .cli import main

sys.exit(main())
