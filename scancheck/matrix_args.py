"""The options of the library matrix, shared by ``scancheck matrix`` and ``python -m
scancheck.matrix`` (a module of its own, light to import: the command line's parser is built
on every start)."""

from __future__ import annotations

import argparse
import os

from .spec_flags import positive


def add_matrix_arguments(parser: argparse.ArgumentParser) -> None:
    """The matrix's options on ``parser``."""
    parser.add_argument("targets", nargs="*", metavar="TARGET",
                        help="with --markdown: library scans (default: every one here)")
    parser.add_argument("--budget", type=positive(float), metavar="SECONDS",
                        help="seconds a cell of the library table may take (default 6), or "
                        "with --markdown a property (default 3)")
    parser.add_argument("--max-n", type=positive(int), help="largest n of a cell (default "
                        "2**20)")
    parser.add_argument("--workers", type=positive(int), default=min(8, os.cpu_count() or 1),
                        help="cells checked at once, each in a process of its own")
    parser.add_argument("--markdown", action="store_true", help="instead: every library scan "
                        "here at every dtype it declares, as Markdown (the GPU suite's matrix)")
