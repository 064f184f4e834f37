"""Counts as every layer takes them from a user: whole numbers of one or more."""

from __future__ import annotations

import numbers
from typing import Any


def is_count(value: Any) -> bool:
    """Whether ``value`` is a whole number >= 1: a Python or NumPy integer, never a bool
    (True is an int to Python, and no count a user means) nor a float."""
    # numbers.Integral holds NumPy's integers (not its bool_) without importing NumPy.
    return isinstance(value, numbers.Integral) and not isinstance(value, bool) and value >= 1
