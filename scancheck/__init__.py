"""scancheck: a conformance oracle and property-testing suite for parallel prefix scans.

The public API, importable without a GPU (kernels load CuPy only when launched):

* :func:`exact_scan` — the exact answer, rounded once;
* :func:`classify` — per-output verdict: exact, within the rounding bound, overflowed where
  some summation order may overflow, or beyond the bound;
* ``scancheck.explain.explain`` — one computed scan judged: rounding, suspicious, or proven
  wrong (in its module: the module's name is the function's);
* :func:`check_laws` — monoid laws of any operator, with the smallest counterexamples;
* :data:`VARIANTS` and :func:`scan` — the reference kernels and their launcher;
* :func:`check` — conformance of any scan implementation (a :class:`Target` with its
  :class:`TargetSpec`) within a time :class:`Budget`; :func:`check_isolated` — the same in
  child processes, so that a crash or a hang is a verdict; :class:`CheckOptions` — every
  setting of a check, one value for both.

Names load on first use, so that the child processes scancheck starts (one kernel under
compute-sanitizer, one conformance target) import only the modules they need.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from .targets.builtin_tables import register as _register_builtins

if TYPE_CHECKING:
    from .core.cuda import LaunchError
    from .core.monoids import Monoid
    from .core.operators import OPERATORS, Operator, get_operator
    from .engine.cases import Budget
    from .engine.conformance import check
    from .engine.options import CheckOptions
    from .isolation.parent import check_isolated
    from .kernels.launch import scan
    from .kernels.registry import VARIANTS, Variant
    from .oracle.bounds import ErrorReport, Verdict, classify
    from .oracle.exact import exact_scan
    from .oracle.laws import check_laws
    from .targets.spec import TargetSpec
    from .targets.target import Target

__version__ = "0.1.0"

_HOME = {
    "core.cuda": ("LaunchError",),
    "core.monoids": ("Monoid",),
    "core.operators": ("OPERATORS", "Operator", "get_operator"),
    "engine.cases": ("Budget",),
    "engine.conformance": ("check",),
    "engine.options": ("CheckOptions",),
    "engine.report": ("ConformanceReport",),
    "isolation.parent": ("check_isolated",),
    "kernels.launch": ("scan",),
    "kernels.registry": ("VARIANTS", "Variant"),
    "oracle.bounds": ("ErrorReport", "Verdict", "classify"),
    "oracle.exact": ("exact_scan",),
    "oracle.laws": ("check_laws",),
    "targets.spec": ("TargetSpec",),
    "targets.target": ("Target",),
}
_MODULE_OF = {name: module for module, names in _HOME.items() for name in names}
__all__ = [
    "OPERATORS", "VARIANTS", "Budget", "CheckOptions", "ConformanceReport", "ErrorReport",
    "LaunchError", "Monoid", "Operator", "Target", "TargetSpec", "Variant", "Verdict", "check",
    "check_isolated", "check_laws", "classify", "exact_scan", "get_operator", "scan",
]


def _adapters() -> Any:
    """The adapters layer: the built-in targets of other libraries, loaded when a built-in
    name is first resolved."""
    from . import adapters

    return adapters


# The engine finds built-in names through this, knowing no library itself.
_register_builtins(_adapters)


def __getattr__(name: str) -> Any:
    if name not in _MODULE_OF:
        raise AttributeError(f"module 'scancheck' has no attribute {name!r}")
    value = getattr(importlib.import_module(f".{_MODULE_OF[name]}", __name__), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted([*globals(), *__all__])
