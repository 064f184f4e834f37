"""scancheck.core.counts: what every layer takes as a count from a user."""

from __future__ import annotations

import numpy as np
import pytest

from scancheck.core.counts import is_count


@pytest.mark.parametrize("value", [1, 7, 2**40, np.int64(3), np.uint8(1)])
def test_whole_numbers_of_one_or_more_are_counts(value):
    assert is_count(value)


@pytest.mark.parametrize("value", [0, -2, True, False, np.bool_(True), 1.0, 2.5, "3", None,
                                   np.int32(0), float("nan")])
def test_nothing_else_is(value):
    assert not is_count(value)
