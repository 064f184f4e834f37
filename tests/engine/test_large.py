"""Past 2**31 and 2**32: the step data, the threshold search, the verdict it supports, the
random data after them, and a clear skip where memory is short.  The full-size runs are GPU
tests (test_kernels, huge)."""

from __future__ import annotations

import shutil

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from scancheck.engine.diagnosis import Cause
from scancheck.engine.large import (
    LARGE_SIZES,
    RANDOM_BOUNDARIES,
    RANDOM_COUNT,
    RANDOM_LIMIT,
    RANDOM_WINDOW,
    _threshold,
    check_large,
    marks_for,
    random_data,
    step_test,
    verdict,
)
from scancheck.targets.spec import TargetSpec
from scancheck.targets.target import Target
from scancheck.testing import nvcc_errors


def test_marks_sit_on_both_sides_of_both_boundaries():
    assert marks_for(2**32 + 17).tolist() == [0, 5, 2**31 - 1, 2**31, 2**32 - 1, 2**32, 2**32 + 16]
    assert marks_for(3).tolist() == [0, 2]


@given(st.integers(1, 2**33), st.integers(0, 2**33))
def test_the_threshold_search_finds_the_first_failing_size(threshold, extra):
    n = threshold + extra
    calls = []

    def fails(m):
        calls.append(m)
        return m >= threshold

    assert _threshold(fails, n) == threshold
    assert len(calls) < 80  # a ladder of scales, then bisection


def test_an_error_below_2_to_the_31_is_a_logic_error_not_an_index_overflow():
    logic = verdict("past 2**31", 262_401, "float32", 262_400, 0.0)
    assert logic.cause == Cause.LOGIC.name and "past n = 262,400" in logic.diagnosis
    over31 = verdict("past 2**31", 2**31 + 1, "float32", 2**31, 0.0)
    assert over31.cause == Cause.INDEX_OVERFLOW.name and "past 2**31" in over31.diagnosis
    over32 = verdict("past 2**32", 2**32 + 1, "int32", 0, 1)
    assert "past 2**32" in over32.diagnosis and over32.smallest_case["n"] == 2**32 + 1


def _numpy(fn=None, **spec):
    return Target("t", fn or (lambda x: np.cumsum(x, dtype=x.dtype)), TargetSpec(**spec))


def test_the_step_test_checks_every_output():
    assert step_test(_numpy(), 5000, "float32") is None

    def last_unwritten(x):
        out = np.cumsum(x, dtype=x.dtype)
        out[-1] = np.nan
        return out

    assert step_test(_numpy(last_unwritten), 5000, "float32")[0] == 4999
    exclusive = _numpy(lambda x: np.concatenate([[0], np.cumsum(x, dtype=x.dtype)[:-1]]),
                       inclusive=False)
    assert step_test(exclusive, 5000, "int32") is None


def test_every_sum_of_the_random_data_is_exact_in_any_order():
    x = random_data(300_000, "float32", 0)
    assert np.abs(x).astype(np.float64).sum() < 2**24  # any subset's sum is an exact float32
    assert (x == np.round(x)).all() and np.abs(x).max() <= RANDOM_LIMIT
    assert (x[marks_for(x.size)] == 1).all() and (x < 0).any()
    # At full size too: the sparse values, the windows and the marks stay below 2**24.
    most = (RANDOM_COUNT + 2 * RANDOM_WINDOW * len(RANDOM_BOUNDARIES)) * RANDOM_LIMIT + 7
    assert most < 2**24


def test_the_random_data_is_dense_at_the_boundaries(monkeypatch):
    """At n = boundary + 17 a sparse draw almost never lands past the boundary: every place
    near it is drawn, so a value there is negative with odds 8 in 17."""
    import scancheck.engine.large

    monkeypatch.setattr(scancheck.engine.large, "RANDOM_BOUNDARIES", (200_000,))
    monkeypatch.setattr(scancheck.engine.large, "RANDOM_COUNT", 10)
    x = random_data(200_017, "float32", 0)
    near = x[200_000 - RANDOM_WINDOW:200_016]  # the last place holds a mark
    assert (near < 0).mean() > 0.4 and (near > 0).mean() > 0.4
    assert np.count_nonzero(x[:200_000 - RANDOM_WINDOW]) <= 10 + len(marks_for(x.size))


def test_random_data_catch_what_step_data_cannot(monkeypatch):
    """A scan that reads magnitudes from index 4000 on: right on the step data at 5000
    elements, wrong on the random data, and the smallest case is the failing prefix."""

    def sign_lost(x):
        y = x.copy()
        y[4000:] = np.abs(y[4000:])
        return np.cumsum(y, dtype=x.dtype)

    target = _numpy(sign_lost)
    assert step_test(target, 5000, "float32") is None
    monkeypatch.setitem(LARGE_SIZES, "past 2**31", 5000)
    r = check_large(target, "past 2**31")
    assert r.status == "fail" and r.cause == Cause.LOGIC.name, r
    x = random_data(5000, "float32", 0)
    at = r.smallest_case["index"]
    assert at >= 4000 and x[at] < 0 and (x[4000:at] >= 0).all()
    assert r.smallest_case["n"] == at + 1 and "random integer data" in r.diagnosis
    right = check_large(_numpy(), "past 2**31")
    assert right.status == "pass" and right.detail["random data"] == "right"
    ints = check_large(_numpy(dtypes=("int32",)), "past 2**31")
    assert ints.status == "pass" and ints.detail["random data"] == "not run: no float dtype"


def test_short_memory_is_said_not_guessed(monkeypatch):
    import scancheck.engine.large

    # A host with 16 GiB free, whatever machine runs this test.
    monkeypatch.setattr(scancheck.engine.large.os, "sysconf",
                        lambda name: 2**22 if name == "SC_AVPHYS_PAGES" else 4096)
    r = check_large(_numpy(dtypes=("float64",)), "past 2**32")
    assert r.status == "skip"
    # The input, the copy the target is handed and the output: 3 * 8 bytes an element.
    assert r.diagnosis == ("not run: n = 4,294,967,313 float64 needs about 96 GiB of host "
                           "memory; 16 GiB are free")


@pytest.mark.parametrize("spec, why", [(dict(op="max"), "add scan"),
                                       (dict(max_n=1000), "declared max_n=1,000")])
def test_targets_that_cannot_take_the_size_are_skipped(spec, why):
    assert why in check_large(_numpy(**spec), "past 2**31").diagnosis


@pytest.mark.skipif(shutil.which("nvcc") is None, reason="nvcc is not on PATH")
def test_the_step_check_kernel_compiles_for_every_dtype_it_is_launched_with(tmp_path):
    """The instantiations large._step_kernel asks NVRTC for (one dtype each)."""
    from scancheck.core.cuda import KERNEL_DIR, expand_source
    from scancheck.core.dtypes import CUDA_SCALAR
    from scancheck.engine.large import STEP_DTYPES

    refs = ", ".join(f"reinterpret_cast<const void*>(&step_check<{CUDA_SCALAR[d]}>)"
                     for d in STEP_DTYPES)
    src = expand_source("step_check.cu", KERNEL_DIR / "oracle")
    assert not (err := nvcc_errors(f"{src}\nconst void* instances[] = {{{refs}}};\n", tmp_path)), err


def test_a_promoting_target_is_taken_past_2_to_the_31_in_its_narrowest_widened_type():
    """int8 in, int64 out: the promotion is checked at that size, in the least memory."""
    from scancheck.engine.large import large_dtype, room

    widening = Target("w", np.cumsum, TargetSpec(dtypes=("bool", "int32", "int8"),
                                                 promote=(("bool", "int64"), ("int32", "int64"),
                                                          ("int8", "int64"))))
    assert large_dtype(widening) == "int8"
    assert large_dtype(Target("p", np.cumsum, TargetSpec(dtypes=("int8", "int32")))) == "int32"
    # room counts the input, its copy and the int64 output: 1 + 1 + 8 bytes an element.
    assert "needs about 10240 GiB" in room(widening, 2**40, "int8")


def test_the_room_a_max_scan_needs_counts_the_indices_it_returns():
    """cummax returns int64 indices beside its values: 4 + 4 + 4 + 8 bytes an int32 element."""
    from scancheck.engine.large import room

    values = Target("v", np.maximum.accumulate, TargetSpec(op="max", dtypes=("int32",)))
    both = Target("i", np.maximum.accumulate, TargetSpec(op="max", dtypes=("int32",),
                                                          indices=True))
    assert "needs about 12288 GiB" in room(values, 2**40, "int32")
    assert "needs about 20480 GiB" in room(both, 2**40, "int32")


# -- lock files: never opened through a symbolic link, never truncated ---------------------


@pytest.fixture
def private_tmp(tmp_path, monkeypatch):
    """The temporary directory of this test alone, as scancheck's lock files see it."""
    import tempfile

    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    return tmp_path


def test_a_lock_directory_others_could_write_is_refused_and_the_big_checks_say_so(
        private_tmp, monkeypatch):
    import os

    import scancheck.core.locks as locks

    where = private_tmp / f"scancheck-locks-{os.getuid()}"
    elsewhere = private_tmp / "theirs"
    elsewhere.mkdir()
    where.symlink_to(elsewhere)
    with pytest.raises(locks.LockRefused, match="is not a directory .*remove .* or set TMPDIR"):
        locks.lock_dir()
    where.unlink()
    where.mkdir(mode=0o700)
    where.chmod(0o777)
    with pytest.raises(locks.LockRefused, match="mode 777"):
        locks.lock_dir()
    where.chmod(0o700)
    assert locks.lock_dir() == str(where)
    # Another user's directory under the name this user's would have.
    uid = os.getuid()
    (private_tmp / f"scancheck-locks-{uid + 1}").mkdir(mode=0o700)
    monkeypatch.setattr(locks.os, "getuid", lambda: uid + 1)
    with pytest.raises(locks.LockRefused, match=f"belongs to uid {uid} "):
        locks.lock_dir()
    r = check_large(_numpy(), "past 2**31")
    assert r.status == "skip" and r.diagnosis.startswith("not run: ") and "belongs to" in r.diagnosis
