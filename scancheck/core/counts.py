"""Counts as every layer takes them from a user: whole numbers of one or more."""

from __future__ import annotations

from typing import Any

import numpy as np


def is_count(value: Any) -> bool:
    """Whether ``value`` is a whole number >= 1: a Python or NumPy integer, never a bool
    (True is an int to Python, and no count a user means) nor a float."""
    return (isinstance(value, int | np.integer) and not isinstance(value, bool | np.bool_)
            and value >= 1)
