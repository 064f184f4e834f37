"""The built-in targets of other libraries (and scancheck's own kernels), one module per
library family, each a table of :class:`~scancheck.adapters.rows.Row` (a target, its
declared contract and its plain-library call) and the family's known upstream bugs.

:data:`FAMILIES` is the registry: a family module and the prefixes of the names it owns,
so that resolving a built-in name loads that family's module alone.  Adding a library is a
module with ``ROWS`` and ``KNOWN`` and one line here (CONTRIBUTING.md).  The engine finds
these tables through :func:`find` and :func:`names`, which the package registers with it
(:mod:`scancheck.targets.builtin_tables`); it imports nothing of this layer.
"""

from __future__ import annotations

import functools
import importlib
from dataclasses import dataclass, replace
from types import ModuleType
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ..targets.target import Target
    from .known import KnownBug
    from .rows import Row


@dataclass(frozen=True)
class Family:
    """A family module of this package and the beginnings of the names its rows have."""

    module: str
    prefixes: tuple[str, ...]


#: The registry: one line per library family.
FAMILIES: tuple[Family, ...] = (
    Family("numpy_stdlib", ("numpy.", "numpy ", "itertools.")),
    Family("cupy_scans", ("cupy.",)),
    Family("torch_scans", ("torch.", "torch ")),
    Family("jax_scans", ("jax.",)),
    Family("triton_scans", ("triton ",)),
    Family("frames", ("pandas ", "polars ", "pyarrow.", "dask.")),
    Family("numba_scans", ("numba ",)),
    Family("fla", ("fla ",)),
    Family("cccl", ("cuda.compute ",)),
    Family("own", ("scancheck:", "model:", "sequential ", "brent_kung ", "blelloch ")),
)


def family_module(family: Family) -> ModuleType:
    """The family's module, imported."""
    return importlib.import_module(f"{__name__}.{family.module}")


def families_of(name: str) -> list[Family]:
    """The families whose prefixes ``name`` begins with, the longest prefix first."""
    found = [(max(len(p) for p in f.prefixes if name.startswith(p)), f)
             for f in FAMILIES if name.startswith(f.prefixes)]
    return [f for _, f in sorted(found, key=lambda pair: -pair[0])]


@functools.cache
def _table(module: str) -> dict[str, Row]:
    family = next(f for f in FAMILIES if f.module == module)
    rows = family_module(family).ROWS
    table = {r.name: r for r in rows}
    if len(table) != len(rows):
        dup = sorted({r.name for r in rows if sum(s.name == r.name for s in rows) > 1})
        raise RuntimeError(f"adapter {module} names two rows alike: {dup}")
    return table


def row(name: str) -> Row | None:
    """The row of the built-in target ``name`` (an old name through its family's
    ``ALIASES``), loading only the families the name's prefix points to."""
    for family in families_of(name):
        table = _table(family.module)
        meant = getattr(family_module(family), "ALIASES", {}).get(name, name)
        if meant in table:
            return table[meant]
    return None


def find(name: str) -> Target | None:
    """The built-in target ``name`` (a copy of its own) under the spec that holds on the device
    its library runs on here, or None; an old name (a family's ``ALIASES``) keeps its name."""
    found = row(name)
    if found is None:
        return None
    target = found.target()
    witnesses = tuple(w for bug in known_for(found.name) if found.name in bug.targets
                      for w in bug.witnesses)
    if witnesses:
        target = replace(target, witnesses=witnesses)
    if found.on_device is not None and target.unavailable is None:
        try:
            target = replace(target, spec=found.on_device(target.spec))
        except Exception:  # noqa: BLE001 -- no device to ask here: the check's calls will say why
            pass
    return target if target.name == name else replace(target, name=name, locator=f"builtin:{name}")


def all_rows() -> list[Row]:
    """Every row of every family, in the registry's order."""
    return [r for f in FAMILIES for r in _table(f.module).values()]


def names() -> list[str]:
    """Every built-in name (every family loaded)."""
    return [r.name for r in all_rows()]


def builtin_targets() -> dict[str, Target]:
    """Every built-in target by name, available or not (see ``Target.unavailable``): copies
    of their own, which a caller may change."""
    return {r.name: r.target() for r in all_rows()}


def reproducer_call(name: str) -> tuple[str, str] | None:
    """The imports and the plain library expression on ``x`` that compute what the built-in
    target ``name`` hands back, or None (no such target, or one with no plain call)."""
    found = row(name)
    return found.call if found is not None else None


def known_bugs() -> list[KnownBug]:
    """Every family's known bugs, in the registry's order."""
    return [k for f in FAMILIES for k in family_module(f).KNOWN]


def known_for(name: str) -> list[KnownBug]:
    """The known bugs of the family that owns the built-in target ``name`` (its module
    alone loaded)."""
    return [k for f in families_of(name)[:1] for k in family_module(f).KNOWN]
