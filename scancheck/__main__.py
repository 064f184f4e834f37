"""``python -m scancheck``: the same command line as the ``scancheck`` console script."""

import sys

from .faces.cli.main import main

sys.exit(main())
