"""A row of an adapter's table: one built-in target, the contract it declares and the same
call in plain library code; and the mode products that generate rows.

A family module (one per library family, :data:`scancheck.adapters.FAMILIES`) holds a
``ROWS`` tuple of :class:`Row` and a ``KNOWN`` tuple of the upstream bugs its library has
(:class:`scancheck.adapters.known.KnownBug`).  A row names what it needs (modules, a GPU),
so that a table is made without importing any library; its target says why it cannot run
where something is missing.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

from ..targets.spec import TargetSpec
from ..targets.target import Target, builtin, no_gpu, not_installed

#: What to say where a needed module is missing and its package is named otherwise.
_INSTALL_HINTS = {"cuda": "cuda.compute is not installed (pip: cuda-cccl)"}


@dataclass(frozen=True)
class Row:
    """One built-in target: its name as users type it, the function scancheck calls, its
    declared contract, the modules and device it needs, and ``call``: the imports and the
    plain library expression on ``x`` that computes, bit for bit, what ``fn`` hands back
    (``AXIS`` for the axis of an N-D case, ``x[0]`` for an initial value), None where
    there is none (scancheck's own kernels)."""

    name: str
    fn: Callable[..., Any]
    spec: TargetSpec
    needs: tuple[str, ...] = ()
    gpu: bool = False
    call: tuple[str, str] | None = None
    #: The library API this row calls, and the mode it calls it in: (axis, value) pairs, as
    #: the conformance table lists them.
    api: str = ""
    mode: tuple[tuple[str, str], ...] = ()
    #: Why this mode cannot run on any machine (the library refuses it), or None.
    refused: str | None = None
    #: A mode beyond the API's calls the GPU suite checks (compiled, deterministic, jitted,
    #: strided, ...): the hunt checks it, the suite's check part does not.
    variant: bool = False
    #: It runs where its library's default device is, a GPU where one is found (JAX): the
    #: hunt's GPU part checks it too.
    follows_device: bool = False
    #: Where it follows its library's device: the spec as it holds there, from ``spec``
    #: (imports the library: asked only where one target is resolved to be checked; None:
    #: ``spec`` holds on every device).
    on_device: Callable[[TargetSpec], TargetSpec] | None = None

    @property
    def runs_on_gpu(self) -> bool:
        """Whether a machine with a GPU runs it there: it needs one, or follows its library's
        device (JAX)."""
        return self.gpu or self.follows_device

    def unavailable(self) -> str | None:
        """Why this target cannot run here, or None."""
        if self.refused:
            return self.refused
        missing = self._missing()
        if missing:
            return missing[0][1]
        return no_gpu() if self.gpu else None

    def lacking(self) -> tuple[str, ...]:
        """What this machine lacks to run the target: the top-level packages of its missing
        modules, else ("a GPU",) where it needs one and none is found; () where it runs here
        or no machine runs it (:attr:`refused`)."""
        if self.refused:
            return ()
        missing = tuple(dict.fromkeys(m.partition(".")[0] for m, _ in self._missing()))
        return missing or (("a GPU",) if self.gpu and no_gpu() else ())

    def _missing(self) -> list[tuple[str, str]]:
        """Each module of :attr:`needs` not found here, with why, in their order."""
        return [(module, why) for module in self.needs if (why := _missing(module))]

    def target(self, here: bool = True) -> Target:
        """The row as a target a check runs (a child re-creates it by its name), unavailable
        where it cannot run here; ``here=False``: as if everything it needs were found."""
        return builtin(self.name, self.fn, self.spec, self.unavailable() if here else None)


def _missing(module: str) -> str | None:
    parent = module.rpartition(".")[0]
    # A dotted name's parent must exist to be asked about.
    if parent and _missing(parent):
        return _missing(parent)
    why = not_installed(module)
    return _INSTALL_HINTS.get(module, why) if why else None


def modes(axes: dict[str, tuple[Any, ...]], keep: Callable[[dict[str, Any]], bool] | None = None
          ) -> Iterator[dict[str, Any]]:
    """Every combination of the axes' values (the first axis varying slowest), each a dict
    axis -> value, those ``keep`` refuses left out."""
    for values in itertools.product(*axes.values()):
        mode = dict(zip(axes, values))
        if keep is None or keep(mode):
            yield mode


def told(mode: dict[str, Any]) -> tuple[tuple[str, str], ...]:
    """A mode as (axis, value) text pairs, as the table shows it."""
    return tuple((k, v if isinstance(v, str) else str(v).lower()) for k, v in mode.items())
