"""Target resolution, specs and their errors."""

from __future__ import annotations

from dataclasses import replace

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
        (lambda: TargetSpec(initial=True, axis="arg"), "initial value is checked on forward"),
        (lambda: TargetSpec(dtypes=("bool",)), "in bool, \\+ and \\* are a logical or"),
        (lambda: TargetSpec(op="recurrence", dtypes=("bool",), promote=(("bool", "int64"),)),
         "allowed dtypes"),
        (lambda: TargetSpec(dtypes=("float8",)), "float8 unknown"),
        (lambda: TargetSpec(initial=True, reverse=True), "initial value is checked on forward"),
    ],
)
def test_bad_targets_are_refused_with_a_reason(call, message):
    with pytest.raises(ValueError, match=message):
        call()


def test_a_promotion_must_widen_and_name_known_dtypes():
    with pytest.raises(ValueError, match="no promotion"):
        TargetSpec(promote=(("int64", "int32"),))
    with pytest.raises(ValueError, match="no promotion"):
        TargetSpec(promote=(("int32", "float64"),))
    with pytest.raises(ValueError, match="promote="):
        TargetSpec(promote=(("int8", "complex64"),))
    assert TargetSpec(promote=(("int32", "int64"),)).output_dtype("int32") == "int64"
    assert TargetSpec().output_dtype("float16") == "float16"


def test_a_reverse_scan_is_checked_as_the_forward_scan_it_mirrors(budget):
    from scancheck.conformance import check

    rev = TargetSpec(axis="arg", reverse=True, dtypes=("float32", "int32"))
    flipped = Target("reverse cumsum", lambda x, axis: np.flip(np.cumsum(
        np.flip(x, axis), axis=axis, dtype=x.dtype), axis), rev)
    assert check(flipped, ("integers exact", "floats within bound", "rows"),
                 budget=replace(budget, max_n=2**16)).passed
    forward_only = Target("forward cumsum declared reverse",
                          lambda x: np.cumsum(x, dtype=x.dtype), TargetSpec(reverse=True))
    rep = check(forward_only, properties=("integers exact",), budget=budget)
    case = rep.verdict.smallest_case
    # Reported in the target's own indices: output n-1 of a reverse scan is x[n-1] alone.
    assert not rep.passed and case["n"] == 2 and case["index"] == 1
    with pytest.raises(ValueError, match="reverse=True with op='recurrence'"):
        TargetSpec(op="recurrence", reverse=True)


@pytest.mark.parametrize("inclusive", [True, False])
@pytest.mark.parametrize("dtype", ["int32", "float64"])
def test_a_scan_from_an_initial_value_is_seen_as_the_scan_of_initial_then_data(inclusive, dtype):
    from scancheck.targets import seeded

    def from_initial(x, initial):
        full = np.cumsum(np.r_[np.asarray(initial, x.dtype), x], dtype=x.dtype)
        return full[1:] if inclusive else full[:-1]

    t = seeded(Target("t", from_initial, TargetSpec(inclusive=inclusive, initial=True)))
    assert t.spec.inclusive and not t.spec.initial
    y = np.array([5, 1, 2, 3, 4], dtype=dtype)
    np.testing.assert_array_equal(t(y), np.cumsum(y))
    assert t(y[:0]).shape == (0,)


def test_scans_from_an_initial_value_conform_and_one_that_drops_it_past_a_tile_does_not(budget):
    """itertools.accumulate from initial= conforms; a scan whose initial value reaches only
    its first tile fails, at the first output of the second tile, and conforms when given
    the identity: only the initial values the cases draw catch it."""
    from scancheck.conformance import check
    from scancheck.controls import initial_value_in_the_first_tile_only as first_tile

    # Whole checks of both, and of the control, are test_conformance's and test_controls'.
    small = replace(budget, max_n=2**12)
    for name in ("itertools.accumulate(initial=)", "itertools.accumulate(operator.mul, initial=)"):
        rep = check(resolve(name), ("integers exact", "floats within bound",
                                    "products within bound"), budget=small)
        assert rep.passed, rep.rows()
        assert any("initial value" in r.detail for r in rep.results if r.status == "pass")
    rep = check(resolve("scancheck.controls:initial_value_in_the_first_tile_only"),
                ("integers exact",), budget=small)
    assert not rep.passed and rep.verdict.cause.name == "LOGIC"
    assert rep.verdict.smallest_case["index"] == 64  # the second tile's first output
    from_identity = Target("from 0", lambda x: first_tile(x, 0), TargetSpec(inclusive=False))
    assert check(from_identity, ("integers exact", "floats within bound"), budget=small).passed
