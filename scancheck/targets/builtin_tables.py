"""Built-in targets by name, found in the tables that the layers above the engine register:
the engine knows no library.  The package registers its adapters (:mod:`scancheck.adapters`)
as it is imported, so that every process finds them, a check's child as its parent."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from .target import Target


class Tables(Protocol):
    """What a registered set of built-in tables answers."""

    def find(self, name: str) -> Target | None:
        """The built-in target of that name, or None, loading as little as it can."""

    def names(self) -> list[str]:
        """Every built-in name (loading every table)."""


#: Each registered loader returns its tables when a built-in name is first asked for.
_LOADERS: list[Callable[[], Any]] = []


def register(load: Callable[[], Tables]) -> None:
    """Add the tables ``load()`` returns to those a built-in name is looked up in (once)."""
    if load not in _LOADERS:
        _LOADERS.append(load)


def find(name: str) -> Target | None:
    """The built-in target named ``name`` in the first registered tables that have it."""
    for load in _LOADERS:
        found = load().find(name)
        if found is not None:
            return found
    return None


def names() -> list[str]:
    """Every built-in name of every registered table."""
    return [n for load in _LOADERS for n in load().names()]
