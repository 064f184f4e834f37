"""``python -m scancheck``: the same command line as the ``scancheck`` console script."""

import sys

from .cli import main

sys.exit(main())
