"""Past 2**31 and 2**32 elements: step data, then random data, checked where the output lies.

The step input is zeros with ones at a few marks around the 32-bit boundaries, so the
correct scan is a step function whose values are small and exact in any dtype.  On a GPU,
the kernel ``kernels/oracle/step_check.cu`` compares every output with the count of marks
before it without copying the output: n = 2**32 + 17 float32 needs its input, the copy of
it the target is handed (:meth:`~scancheck.targets.target.Target.run`: a target that writes into
its input is caught here too) and the output, 48 GiB, and nothing of that size besides.
Where the check fails, the same step test at every scale below (2**k + 17 for k = 10, 11,
...) and a bisection find the smallest n that fails: past 2**31 that is an index overflow;
below it, a logic error that merely needs many elements.

Step data are ones and zeros: a scan that loses signs, or misreads values only between
the marks, passes them.  Where the step test passes on a float dtype, the same size runs
on random data (:func:`random_data`: a million random integers in [-8, 8] at random
places and every place near 2**31 and 2**32 random, every sum of any of them exact)
against the exact oracle, on the device for a
GPU target: the answer of every summation order is the exact one, so any difference is
an error, found by index.
"""

from __future__ import annotations

import contextlib
import functools
import os
import sys
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np

from ..core.arrays import as_dtype
from ..core.dtypes import CUDA_SCALAR
from ..core.locks import LockRefused, file_lock, lock_dir
from ..targets.target import Target
from .diagnosis import Cause, PropertyResult, Reason, is_resource_error

LARGE_SIZES: dict[str, int] = {"past 2**31": 2**31 + 17, "past 2**32": 2**32 + 17}
#: Arrays a check needs: input and output (an output wider where the target promotes).  A
#: library's temporaries beyond them show as its out-of-memory error, which is reported as
#: a skip, never as a verdict.
_HEADROOM = 2.0
_CHUNK = 1 << 24


def out_of_memory(name: str, n: int, exc: Exception) -> PropertyResult:
    """The skip of a large check whose target ran out of memory at ``n`` (no evidence of a
    wrong answer); any other exception raised again, from its own frame."""
    if is_resource_error(exc):
        return PropertyResult(name, "skip", f"not run: the target ran out of memory at "
                              f"n = {n:,} ({str(exc)[:160]})")
    raise exc


def marks_for(n: int) -> np.ndarray:
    """Where the ones go: the start, both sides of 2**31 and 2**32, and the last element."""
    near = {0, 5, 2**31 - 1, 2**31, 2**32 - 1, 2**32, n - 1}
    return np.array(sorted(m for m in near if 0 <= m < n), dtype=np.int64)


#: The dtypes a check past 2**31 uses, in order of preference, where the target widens no
#: narrow integer type: 4- and 8-byte ones.
STEP_DTYPES = ("float32", "int32", "float64", "int64")


def large_dtype(target: Target) -> str | None:
    """The dtype the checks past 2**31 take: for a target that widens narrow integers, the
    narrowest of them (the promotion is checked at that size too, in the least memory),
    else the first of :data:`STEP_DTYPES` it declares."""
    spec = target.spec
    widened = [d for d, _ in spec.promote if d in spec.dtypes and as_dtype(d).kind in "iu"]
    if widened:
        return min(widened, key=lambda d: as_dtype(d).itemsize)
    return next((d for d in STEP_DTYPES if d in spec.dtypes), None)


#: Bytes of one index a max or min scan returns beside its values: int64, as torch's (an
#: upper bound for narrower ones).
_INDEX_BYTES = 8


def room(target: Target, n: int, dtype: str, headroom: float = _HEADROOM) -> str | None:
    """Why ``n`` elements of ``dtype`` twice (the input, and the copy the target is handed:
    :meth:`Target.run`) and ``headroom - 1`` arrays of n of the type the target returns for
    it (wider where it promotes), and the int64 indices of a target that returns them (cummax,
    cummin), do not fit where the target runs (None if they do)."""
    out = as_dtype(target.spec.output_dtype(dtype)).itemsize
    need = n * (2 * np.dtype(dtype).itemsize + (headroom - 1) * out
                + (_INDEX_BYTES if target.spec.indices else 0))
    if target.spec.device == "gpu":
        import cupy as cp

        cp.get_default_memory_pool().free_all_blocks()
        torch = sys.modules.get("torch")
        if torch is not None and torch.cuda.is_initialized():
            torch.cuda.empty_cache()  # a torch target's outputs stay in torch's cache
        free, where = cp.cuda.runtime.memGetInfo()[0], "device"
    else:
        free, where = os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE"), "host"
    if need <= free:
        return None
    return (f"n = {n:,} {dtype} needs about {need / 2**30:.0f} GiB of {where} memory; "
            f"{free / 2**30:.0f} GiB are free")


def unlockable() -> str | None:
    """Why the checks of this size cannot take their lock here (None where they can)."""
    try:
        lock_dir()
    except LockRefused as exc:
        return str(exc)
    return None


@contextlib.contextmanager
def one_at_a_time(target: Target) -> Iterator[None]:
    """Serialize the checks of this size across processes on one device (or the host), so
    that targets checked side by side do not each take half the memory they need."""
    gpu = target.spec.device == "gpu"
    key = "host"
    if gpu:
        import cupy as cp

        key = cp.cuda.Device().pci_bus_id.replace(":", "-")
    with file_lock(f"scancheck-large-{key}.lock"):
        try:
            yield
        finally:
            if gpu:  # hand the device memory back, not to this process's pool
                cp.get_default_memory_pool().free_all_blocks()


@functools.cache
def _step_kernel(dtype: str) -> Any:
    """step_check for ``dtype`` alone: the 16-bit types need headers this kernel does not
    include, and the checks past 2**31 get only 4- and 8-byte outputs (:func:`large_dtype`)."""
    import cupy as cp

    from ..core.cuda import KERNEL_DIR, expand_source

    name = f"step_check<{CUDA_SCALAR[dtype]}>"
    mod = cp.RawModule(code=expand_source("step_check.cu", KERNEL_DIR / "oracle"),
                       options=("--std=c++17",), name_expressions=[name])
    return mod.get_function(name)


def _first_wrong_device(out: Any, marks: np.ndarray, inclusive: bool) -> tuple[int, int]:
    import cupy as cp

    n = out.shape[0]
    first = cp.full(1, np.iinfo(np.uint64).max, dtype=cp.uint64)
    count = cp.zeros(1, dtype=cp.uint64)
    m = cp.asarray(marks)
    _step_kernel(out.dtype.name)((min(65535, -(-n // 256)),), (256,),
                                 (out, np.int64(n), m, np.int32(m.size), np.int32(inclusive),
                                  first, count))
    return int(first.get()[0]), int(count.get()[0])


def _first_wrong_host(out: np.ndarray, marks: np.ndarray, inclusive: bool) -> tuple[int, int]:
    side = "right" if inclusive else "left"
    first, count = -1, 0
    for lo in range(0, out.shape[0], _CHUNK):
        hi = min(lo + _CHUNK, out.shape[0])
        want = np.searchsorted(marks, np.arange(lo, hi), side=side)
        bad = np.flatnonzero(~(out[lo:hi] == want))
        if bad.size and first < 0:
            first = lo + int(bad[0])
        count += bad.size
    return first, count


#: Nonzero values of the random data: few and small enough that every sum of any of them
#: (with the marks) is an integer below 2**24 in magnitude, exact in every float type.
#: Beside RANDOM_COUNT values at random places, every element within RANDOM_WINDOW of
#: each boundary is random: at n = 2**31 + 17 only 17 elements lie past 2**31, and a
#: sparse draw would almost never put a value there.
RANDOM_COUNT = 1 << 20
RANDOM_LIMIT = 8
RANDOM_WINDOW = 1 << 16
RANDOM_BOUNDARIES = (2**31, 2**32)


def random_data(n: int, dtype: str, seed: int, xp: Any = np) -> Any:
    """``n`` values of ``dtype``: zeros, :data:`RANDOM_COUNT` random integers in
    [-RANDOM_LIMIT, RANDOM_LIMIT] at random places, random integers at every place within
    :data:`RANDOM_WINDOW` of each of :data:`RANDOM_BOUNDARIES`, and ones at
    :func:`marks_for`'s marks; ``xp`` (NumPy or CuPy) holds and draws them.  Every partial
    sum in any order is exact."""
    rs = xp.random.RandomState(seed)
    x = xp.zeros(n, dtype=dtype)
    k = min(n, RANDOM_COUNT)
    places = rs.randint(0, n, size=k, dtype=np.int64)
    x[places] = rs.randint(-RANDOM_LIMIT, RANDOM_LIMIT + 1, size=k).astype(dtype)
    for b in RANDOM_BOUNDARIES:
        lo, hi = max(0, b - RANDOM_WINDOW), min(n, b + RANDOM_WINDOW)
        if lo < hi:
            x[lo:hi] = rs.randint(-RANDOM_LIMIT, RANDOM_LIMIT + 1, size=hi - lo).astype(dtype)
    x[xp.asarray(marks_for(n))] = 1
    return x


def _first_difference(got: Any, want: Any, xp: Any) -> int:
    """The first index where ``got`` and ``want`` differ in value (-1 if none), a chunk at a
    time so that no temporary is as large as the arrays."""
    step = 1 << 28
    for lo in range(0, want.shape[0], step):
        bad = got[lo:lo + step] != want[lo:lo + step]
        if bool(bad.any()):
            return lo + int(xp.argmax(bad))
    return -1


def random_test(target: Target, x: Any) -> tuple[int, Any] | None:
    """Run the target on ``x`` (:func:`random_data`, where the target runs): None if every
    output is the exact answer, else the first wrong output's index and value."""
    from ..core.arrays import array_module
    from ..oracle.exact import exact_scan

    want = exact_scan(x, inclusive=target.spec.inclusive)  # on the device for device data
    xp = array_module(x)
    got = target.run(x)
    if xp is np:
        got = np.asarray(got)
    else:
        from ..oracle.exact_device import as_device_array

        got = as_device_array(got)
    first = _first_difference(got, want, xp)
    return (first, got[first].item()) if first >= 0 else None


def step_test(target: Target, n: int, dtype: str) -> tuple[int, Any] | None:
    """Run the target on step data of ``n`` elements: None if every output is right, else
    the first wrong output's index and value."""
    marks = marks_for(n)
    if target.spec.device == "gpu":
        import cupy as cp

        x = cp.zeros(n, dtype=dtype)
        x[cp.asarray(marks)] = 1
        from ..oracle.exact_device import as_device_array

        # Stays on the device (only the verdict comes back), as CuPy's whatever the target
        # returned: a torch tensor, a Numba array, anything with DLPack.
        out = as_device_array(target.run(x))
        del x
        first, count = _first_wrong_device(out, marks, target.spec.inclusive)
        value = out[first].item() if count else None
    else:
        x = np.zeros(n, dtype=dtype)
        x[marks] = 1
        out = np.asarray(target.run(x))
        del x
        first, count = _first_wrong_host(out, marks, target.spec.inclusive)
        value = out[first].item() if count else None
    del out
    return (first, value) if count else None


def _threshold(fails: Callable[[int], bool], n: int) -> int:
    """The smallest size whose step test fails, given that ``n`` fails: 2**k + 17 for
    k = 10, 11, ... below n, then bisection between the last size that passed and the first
    that failed."""
    lo, hi = 0, n
    for k in range(10, n.bit_length()):
        m = 2**k + 17
        if m >= n:
            break
        if fails(m):
            hi = m
            break
        lo = m
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if fails(mid):
            hi = mid
        else:
            lo = mid
    return hi


def check_large(target: Target, name: str,
                on_step: Callable[[int], None] | None = None) -> PropertyResult:
    """The step test at ``LARGE_SIZES[name]``, and where it fails, the diagnosis the scales
    below support: a logic error past some smaller n, or an index overflow."""
    n = LARGE_SIZES[name]
    dtype = large_dtype(target)
    if target.spec.family != "sum" or dtype is None:
        return PropertyResult(name, "skip", "needs an add scan of a 4- or 8-byte dtype, or of "
                              "an integer type it widens")
    if target.spec.max_n is not None and target.spec.max_n < n:
        return PropertyResult(name, "skip", f"declared max_n={target.spec.max_n:,}")
    refused = unlockable()
    if refused:  # not a verdict on the target
        return PropertyResult(name, "skip", f"not run: {refused}")
    with one_at_a_time(target):
        short = room(target, n, dtype)
        if short:
            return PropertyResult(name, "skip", f"not run: {short}")

        def test(m: int) -> tuple[int, Any] | None:
            if on_step is not None:
                on_step(m)
            return step_test(target, m, dtype)

        try:
            wrong = test(n)
        except Exception as exc:
            return out_of_memory(name, n, exc)
        if wrong is None:
            return _random_check(target, name, n)
        first = _threshold(lambda m: test(m) is not None, n)
        at, value = test(first) or wrong
    return verdict(name, first, dtype, at, value)


def _random_check(target: Target, name: str, n: int) -> PropertyResult:
    """After the step test passed at ``n``: :func:`random_test` at ``n`` on the target's
    first float dtype, the failing prefix confirmed as the smallest case."""
    detail: dict[str, Any] = {"n": n, "dtype": large_dtype(target), "step data": "right"}
    dtype = next((d for d in STEP_DTYPES if d in target.spec.dtypes and "float" in d), None)
    short = room(target, n, dtype, headroom=_HEADROOM + 1) if dtype else "no float dtype"
    if short:
        detail["random data"] = f"not run: {short}"
        return PropertyResult(name, "pass", detail=detail)
    xp = np
    if target.spec.device == "gpu":
        import cupy as xp
    x = random_data(n, dtype, 0, xp)
    wrong = random_test(target, x)
    detail["random data"] = "right" if wrong is None else "wrong"
    if wrong is None:
        return PropertyResult(name, "pass", detail=detail)
    at, value = wrong
    # The prefix up to the first wrong output is a case of its own (its sums are exact too).
    smallest = at + 1 if random_test(target, x[:at + 1]) else n
    del x
    case = {"n": smallest, "dtype": dtype, "data": f"scancheck.engine.large.random_data({n}, "
            f"{dtype!r}, 0, {xp.__name__})[:{smallest}]", "index": at, "got": value}
    where = "past 2**32" if at >= 2**32 else "past 2**31" if at >= 2**31 else "below 2**31"
    return PropertyResult(name, "fail", f"wrong at index {at:,} ({where}) on random integer "
                          f"data whose every sum is exact, right on step data of the same size: "
                          f"values other than 0 and 1 go wrong (a lost sign, a misread element)",
                          case, detail, cause=Cause.LOGIC.name,
                          reason=Reason.WRONG_VALUE.name)


def verdict(name: str, first: int, dtype: str, index: int, value: Any) -> PropertyResult:
    """The failure of check ``name`` whose step test first fails at ``first`` elements (first
    wrong output ``index``): an index overflow if every n up to 2**31 passed, else a logic
    error that needs many elements."""
    case = {"n": first, "dtype": dtype, "data": "steps at " + ", ".join(map(str, marks_for(first))),
            "index": index, "got": value}
    detail = {"n": LARGE_SIZES[name]}
    if first <= 2**31:
        return PropertyResult(name, "fail", f"wrong past n = {first - 1:,} on step data, right "
                              f"at every smaller scale tried (an error that needs many "
                              f"elements, not a 32-bit index)", case, detail, cause=Cause.LOGIC.name,
                              reason=Reason.WRONG_VALUE.name)
    past = "2**32" if first > 2**32 else "2**31"
    return PropertyResult(name, "fail", f"wrong from n = {first:,} (past {past}), right at "
                          f"every scale below", case, detail, cause=Cause.INDEX_OVERFLOW.name,
                          reason=Reason.WRONG_VALUE.name)
