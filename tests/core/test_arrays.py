"""scancheck.core.arrays: the dtype names every layer asks for, remembered."""

from __future__ import annotations

import numpy as np
import pytest

from scancheck.core.arrays import as_dtype, dtype_name
from scancheck.core.dtypes import INPUT_DTYPES


@pytest.mark.parametrize("spelling", [*INPUT_DTYPES, "f4", "<f8", ">i4", "u1", "?", np.float32,
                                      np.dtype(">f4"), np.dtype("<f4"), np.int64, bool, float])
def test_a_dtype_is_named_as_numpy_names_it_however_spelled_and_asked_again(spelling):
    want = as_dtype(spelling).name
    assert dtype_name(spelling) == want
    assert dtype_name(spelling) == want  # the remembered answer
    assert dtype_name(as_dtype(spelling)) == want


def test_an_unhashable_spelling_is_named_and_a_bad_one_refused():
    assert dtype_name([("a", "f4")]) == np.dtype([("a", "f4")]).name
    with pytest.raises(TypeError):
        dtype_name("float33")
    with pytest.raises(TypeError):
        dtype_name("float33")  # a refusal is not remembered as a name


def test_values_and_structured_dtypes_are_named_each_for_itself():
    """NumPy scalars hash and compare by value, and a record dtype equals its plain twin:
    neither may take another's remembered name."""
    for x in (np.float32(1.0), np.int64(1), np.bool_(True), np.float64("nan")):
        assert dtype_name(x) == np.dtype(x).name
    plain, record = np.dtype([("a", "i4")]), np.dtype((np.record, [("a", "i4")]))
    assert (dtype_name(record), dtype_name(plain)) == (record.name, plain.name)
    assert (dtype_name(plain), dtype_name(record)) == (plain.name, record.name)
