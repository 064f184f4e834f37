"""``python -m scancheck.gpusuite``: the whole GPU suite and the benchmarks in one call
(:mod:`scancheck.faces.jobs.gpusuite`)."""

import sys

from .faces.jobs.gpusuite import main

if __name__ == "__main__":
    sys.exit(main())
