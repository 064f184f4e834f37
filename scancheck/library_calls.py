"""How each built-in library target is called without scancheck: the imports, and the plain
library expression that scans ``x`` (a NumPy array; ``AXIS`` stands for the axis of an N-D
case, ``x[0]`` for the initial value of a scan that takes one, the rest its input), as the
report's reproducer prints it (:mod:`scancheck.report`).  Each is read from the target's own
row in :mod:`scancheck.adapters`, beside the function it must match bit for bit
(``tests/test_report.py`` runs them where the library is installed).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping

from .adapters import all_rows, reproducer_call


class _Calls(Mapping[str, tuple[str, str]]):
    """Built-in name -> (imports, expression on ``x``): a name looks up its own family's
    table alone; iterating loads every family."""

    def __getitem__(self, name: str) -> tuple[str, str]:
        call = reproducer_call(name) if isinstance(name, str) else None
        if call is None:
            raise KeyError(name)
        return call

    def __contains__(self, name: object) -> bool:
        return isinstance(name, str) and reproducer_call(name) is not None

    def __iter__(self) -> Iterator[str]:
        return (r.name for r in all_rows() if r.call is not None)

    def __len__(self) -> int:
        return sum(1 for _ in self)


#: Built-in library target name -> (imports, expression on ``x``).
LIBRARY_CALLS: Mapping[str, tuple[str, str]] = _Calls()
