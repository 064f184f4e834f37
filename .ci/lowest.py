"""Print pip constraints pinning each direct dependency of the project (its dependencies and
the extras named on the command line) to the lower bound pyproject.toml declares for it.

    python .ci/lowest.py test --output lowest.txt && pip install -c lowest.txt -e '.[test]'

What those dependencies need in turn stays free (pip takes the newest it allows), as uv's
``--resolution lowest-direct`` would.  A dependency with no lower bound, or a bound this
script does not read, is an error naming it: an untested version is never pinned silently.
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

try:
    import tomllib
except ImportError:  # Python 3.10
    import tomli as tomllib

#: name[extras] >=version, with nothing else (no upper bound, no marker).
_REQUIREMENT = re.compile(r"^\s*([A-Za-z0-9][A-Za-z0-9._-]*)\s*(\[[^\]]*\])?\s*>=\s*([0-9][^,;\s]*)\s*$")


def lower_bounds(pyproject: Path, extras: list[str]) -> dict[str, str]:
    """Each direct dependency's normalised name -> its declared lower bound (the highest,
    where the project and an extra both name it)."""
    project = tomllib.loads(pyproject.read_text())["project"]
    optional = project.get("optional-dependencies", {})
    unknown = [e for e in extras if e not in optional]
    if unknown:
        raise SystemExit(f"lowest.py: no extra {unknown[0]!r} in {pyproject} "
                         f"(it has: {', '.join(sorted(optional))})")
    found: dict[str, str] = {}
    for req in [*project.get("dependencies", []), *(r for e in extras for r in optional[e])]:
        m = _REQUIREMENT.match(req)
        if m is None:
            raise SystemExit(f"lowest.py: {req!r} is not of the form 'name>=version': "
                             f"its lowest version cannot be read")
        name = re.sub(r"[-_.]+", "-", m.group(1)).lower()
        version = m.group(3)
        if name not in found or _key(version) > _key(found[name]):
            found[name] = version
    return found


def _key(version: str) -> tuple[int, ...]:
    return tuple(int(p) for p in re.findall(r"\d+", version))


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(prog="python .ci/lowest.py", description=__doc__.split("\n")[0])
    ap.add_argument("extras", nargs="*", help="extras whose dependencies are pinned too")
    ap.add_argument("--output", help="write the constraints here (default: print them)")
    ap.add_argument("--installed", action="store_true",
                    help="print each one's lower bound and the version installed instead")
    args = ap.parse_args(argv)
    root = Path(__file__).resolve().parent.parent
    if args.installed:
        from importlib.metadata import PackageNotFoundError, version

        for name, low in sorted(lower_bounds(root / "pyproject.toml", args.extras).items()):
            try:
                have = version(name)
            except PackageNotFoundError:
                have = "not installed"
            print(f"{name:<16} >={low:<10} installed {have}")
        return 0
    pins = "".join(f"{name}=={version}\n" for name, version in
                   sorted(lower_bounds(root / "pyproject.toml", args.extras).items()))
    if args.output:
        Path(args.output).write_text(pins)
    print(pins, end="")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
