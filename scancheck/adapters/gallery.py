"""``python -m scancheck.adapters.gallery [--write PAGE]``: the findings gallery, generated
from every family's known bugs (:func:`scancheck.adapters.known.gallery`), printed or
written into PAGE (docs/findings.md) between its markers."""

from __future__ import annotations

import argparse

from . import known_bugs
from .known import gallery, with_gallery


def main(argv: list[str] | None = None) -> int:
    """Print the gallery, or write it into ``--write PAGE`` between its markers."""
    parser = argparse.ArgumentParser(prog="python -m scancheck.adapters.gallery")
    parser.add_argument("--write", metavar="PAGE", help="write the gallery into PAGE")
    args = parser.parse_args(argv)
    if not args.write:
        print(gallery(known_bugs()), end="")
        return 0
    with open(args.write) as fh:
        page = fh.read()
    with open(args.write, "w") as fh:
        fh.write(with_gallery(page, known_bugs()))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
