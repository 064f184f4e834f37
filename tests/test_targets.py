"""Target resolution, specs and their errors."""

from __future__ import annotations

import numpy as np
import pytest

from scancheck.kernels import KERNEL_DIR
from scancheck.targets import Target, TargetSpec, builtin_targets, load_import_path, resolve


def test_builtins_include_the_libraries_and_scanchecks_own_kernels():
    names = set(builtin_targets())
    assert {"numpy.cumsum", "cupy.cumsum (CUB)", "torch.cumsum (CUDA)",
            "jax.lax.associative_scan", "scancheck:decoupled_lookback",
            "model:decoupled_lookback"} <= names


def test_import_path_takes_the_functions_declared_spec():
    t = load_import_path("scancheck.controls:nan_dropping_max")
    assert t.spec.op == "max" and t.spec.dtypes == ("float32", "float64")
    np.testing.assert_array_equal(t(np.array([1.0, 3.0, 2.0])), [1.0, 3.0, 3.0])


def test_model_target_runs_the_model():
    t = resolve("model:blelloch")
    assert not t.spec.inclusive
    assert t(np.arange(1, 5, dtype=np.int32)).tolist() == [0, 1, 3, 6]


_CONTROL = KERNEL_DIR / "controls" / "missing_barrier.cu"


@pytest.mark.parametrize(
    "call, message",
    [
        (lambda: resolve("nothing"), "is not a built-in"),
        (lambda: resolve("/no/such/file.cu"), "is not a file"),
        (lambda: load_import_path("numpy"), "package.module:function"),
        (lambda: TargetSpec(op="interval"), "proof device"),
        (lambda: TargetSpec(dtypes=("complex64",)), "allowed dtypes"),
        (lambda: TargetSpec(device="tpu"), "device='tpu'"),
        (lambda: resolve(f"cu:{_CONTROL}:48"), "block=48 must be a power of two"),
        (lambda: resolve(f"cu:{_CONTROL}:2048"), "limit of 1024 threads"),
    ],
)
def test_bad_targets_are_refused_with_a_reason(call, message):
    with pytest.raises(ValueError, match=message):
        call()


def test_a_promotion_must_widen_and_name_known_dtypes():
    with pytest.raises(ValueError, match="narrows"):
        TargetSpec(promote=(("int64", "int32"),))
    with pytest.raises(ValueError, match="promote="):
        TargetSpec(promote=(("int8", "complex64"),))
    assert TargetSpec(promote=(("int32", "int64"),)).output_dtype("int32") == "int64"
    assert TargetSpec().output_dtype("float16") == "float16"


def test_a_reverse_scan_is_checked_as_the_forward_scan_it_mirrors(budget):
    from scancheck.conformance import check

    rev = TargetSpec(axis="arg", reverse=True, dtypes=("float32", "int32"))
    flipped = Target("reverse cumsum", lambda x, axis: np.flip(np.cumsum(
        np.flip(x, axis), axis=axis, dtype=x.dtype), axis), rev)
    assert check(flipped, budget=budget).passed
    forward_only = Target("forward cumsum declared reverse",
                          lambda x: np.cumsum(x, dtype=x.dtype), TargetSpec(reverse=True))
    rep = check(forward_only, properties=("integers exact",), budget=budget)
    case = rep.verdict.smallest_case
    # Reported in the target's own indices: output n-1 of a reverse scan is x[n-1] alone.
    assert not rep.passed and case["n"] == 2 and case["index"] == 1
    with pytest.raises(ValueError, match="reverse=True with op='recurrence'"):
        TargetSpec(op="recurrence", reverse=True)
