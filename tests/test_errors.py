"""Error metrics, rigorous bounds and the per-output verdict."""

from __future__ import annotations

import numpy as np
import pytest

from scancheck.errors import (
    Verdict,
    abs_sums,
    classify,
    format_table,
    gamma,
    log_depths,
    sequential_depths,
    ulp,
)


def test_gamma_is_higham_and_refuses_depths_past_one_over_u():
    assert gamma(1, "float32") == pytest.approx(2.0**-24 / (1 - 2.0**-24))
    assert gamma(0, "float64") == 0
    assert gamma(2**24, "float32") == np.inf  # no finite bound: nothing can be ruled out
    with pytest.raises(ValueError, match="depth"):
        gamma(-1, "float32")
    with pytest.raises(ValueError, match="dtype='int32'"):
        gamma(3, "int32")


def test_depth_helpers():
    assert sequential_depths(4).tolist() == [0, 1, 2, 3]
    assert sequential_depths(4, inclusive=False).tolist() == [0, 0, 1, 2]
    assert log_depths(5).tolist() == [0, 1, 2, 2, 3]


def test_ulp_and_abs_sums():
    assert ulp(np.array([1.0]), "float32")[0] == 2.0**-23
    assert abs_sums(np.array([1.0, -2.0, np.inf], dtype=np.float32)).tolist()[:2] >= [1.0, 3.0]


def test_exact_output_within_bound_and_beyond():
    x = np.array([1.0, 2.0**-24, 2.0**-24], dtype=np.float32)
    # Left to right, 1 + 2**-24 ties to 1 twice; the exact third prefix is 1 + 2**-23.
    seq = classify(x, np.array([1.0, 1.0, 1.0], dtype=np.float32), [0, 1, 2])
    assert seq.verdicts.tolist() == [Verdict.EXACT, Verdict.EXACT, Verdict.WITHIN_BOUND]
    assert seq.ulp_err[2] == 1
    wrong = classify(x, np.array([1.0, 1.0, 3.0], dtype=np.float32), [0, 1, 2])
    assert wrong.verdict == Verdict.BEYOND_BOUND and wrong.beyond.tolist() == [2]
    assert wrong.row()["verdict"] == "beyond bound"


def test_a_wrong_nan_or_infinity_is_beyond_the_bound():
    x = np.array([1.0, np.inf], dtype=np.float32)
    rep = classify(x, np.array([1.0, np.nan], dtype=np.float32), [0, 1])
    assert rep.verdicts.tolist() == [Verdict.EXACT, Verdict.BEYOND_BOUND]
    ok = classify(x, np.array([1.0, np.inf], dtype=np.float32), [0, 1])
    assert ok.verdict == Verdict.EXACT


def test_report_summary_numbers():
    x = np.ones(4, dtype=np.float64)
    rep = classify(x, np.array([1, 2, 3, 5], dtype=np.float64), sequential_depths(4))
    assert rep.max_abs == 1 and rep.l2 == 1 and rep.rms == 0.5 and rep.worst_index == 3


def test_classify_refuses_mismatched_shapes_and_integer_data():
    with pytest.raises(ValueError, match="shape"):
        classify(np.ones(3, dtype=np.float32), np.ones(2, dtype=np.float32), 0)
    with pytest.raises(ValueError, match="float32 or float64"):
        classify(np.ones(3, dtype=np.int32), np.ones(3, dtype=np.int32), 0)


def test_format_table_aligns_columns():
    text = format_table([{"a": 1.23456, "b": "x"}, {"a": 2.0, "b": "yy"}], title="T")
    lines = text.splitlines()
    assert lines[0] == "T" and lines[2].startswith("-") and "1.23" in lines[3]
