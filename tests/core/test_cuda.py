"""scancheck.core.cuda on the device: the input-unchanged compare and NVRTC's binaries kept on
disk.  (Block sizes, shared memory and source expansion are tested with the kernels.)"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

WIDTHS = {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}


@pytest.mark.gpu
@given(itemsize=st.sampled_from(sorted(WIDTHS)), n=st.integers(1, 70_000),
       where=st.lists(st.floats(0, 1, exclude_max=True), max_size=3), rows=st.sampled_from([1, 3]))
def test_first_difference_is_the_first_flat_index_that_differs_bit_for_bit(itemsize, n, where,
                                                                              rows):
    import cupy as cp

    from scancheck.core.cuda import first_difference

    a = np.random.default_rng(n).integers(0, 200, size=(n, rows)).astype(WIDTHS[itemsize])
    b = a.copy()
    places = sorted({int(w * a.size) for w in where})
    b.ravel()[places] ^= 1
    want = places[0] if places else -1
    assert first_difference(cp.asarray(a), cp.asarray(b)) == want


@pytest.mark.gpu
def test_first_difference_refuses_arrays_it_cannot_compare_flat():
    import cupy as cp

    from scancheck.core.cuda import first_difference

    a = cp.zeros((4, 6), dtype=cp.float32)
    with pytest.raises(ValueError, match="C-contiguous"):
        first_difference(a[:, ::2], a[:, ::2].copy())
    with pytest.raises(ValueError, match="one shape"):
        first_difference(a, a[:2])
    assert first_difference(a[:0], a[:0]) == -1


@pytest.mark.gpu
def test_a_gpu_target_writing_its_input_is_named_at_the_element_it_wrote():
    """A CuPy target's input compare (one kernel, :func:`first_difference`) names the first
    element written in C order, as the host compare does."""
    import cupy as cp

    from scancheck.targets.spec import TargetSpec
    from scancheck.targets.target import InputWritten, Target

    def writes(a, axis):
        out = cp.cumsum(a, axis=axis)
        a[2, 1] = -0.0 if a.dtype.kind == "f" else 7
        a[3, 0] = 5
        return out

    for dtype in ("float32", "float64", "int32", "int64"):
        x = cp.arange(24, dtype=dtype).reshape(6, 4) + 1
        with pytest.raises(InputWritten, match=r"x\[2, 1\] was 10(\.0)?, is -?(0\.0|7) after"):
            Target("t", writes, TargetSpec(device="gpu", axis="arg", dtypes=(dtype,))).run(x, 1)


@pytest.mark.gpu
def test_an_nvrtc_binary_is_kept_on_disk_and_loaded_by_the_next_compile(tmp_path, monkeypatch):
    """The second module of the same text is loaded, not compiled; a damaged file is compiled
    again and replaced; an empty cache setting keeps nothing."""
    import cupy as cp
    from cupy.cuda import compiler

    from scancheck.core import cuda

    source = 'extern "C" __global__ void twice(float* x) { x[threadIdx.x] *= 2.0f; }'
    monkeypatch.setenv("SCANCHECK_NVRTC_CACHE", str(tmp_path))
    compiles = []
    real = compiler.compile_using_nvrtc
    monkeypatch.setattr(compiler, "compile_using_nvrtc",
                        lambda *a, **k: compiles.append(1) or real(*a, **k))

    def doubled() -> list[float]:
        x = cp.arange(4, dtype=cp.float32)
        cuda.IeeeModule(source).get_function("twice")((1,), (4,), (x,))
        return x.get().tolist()

    assert doubled() == [0, 2, 4, 6] and len(compiles) == 1
    (kept,) = tmp_path.glob("*.pickle")
    assert doubled() == [0, 2, 4, 6] and len(compiles) == 1
    kept.write_bytes(b"not a binary")
    assert doubled() == [0, 2, 4, 6] and len(compiles) == 2 and kept.read_bytes() != b"not a binary"
    monkeypatch.setenv("SCANCHECK_NVRTC_CACHE", "")
    assert doubled() == [0, 2, 4, 6] and len(compiles) == 3
