"""Counts and flags as every layer takes them from a user: whole numbers of one or more, and
True or False."""

from __future__ import annotations

import numbers
from typing import Any


def is_count(value: Any) -> bool:
    """Whether ``value`` is a whole number >= 1: a Python or NumPy integer, never a bool
    (True is an int to Python, and no count a user means) nor a float."""
    # numbers.Integral holds NumPy's integers (not its bool_) without importing NumPy.
    return isinstance(value, numbers.Integral) and not isinstance(value, bool) and value >= 1


def check_flag(name: str, value: Any, *also: type) -> None:
    """A ValueError naming ``name`` unless ``value`` is True or False (or of a type in
    ``also``, NumPy's bool say): "no" or 0 would read as a truth value, and be checked and
    reported as a declaration never made."""
    if not isinstance(value, (bool, *also)):
        raise ValueError(f"{name}={value!r} must be True or False")
