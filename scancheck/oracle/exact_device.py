"""The exact oracle on the GPU: :func:`scancheck.oracle.exact.exact_scan` where the data lies.

``kernels/oracle/exact_scan.cu`` turns every finite value into an exact fixed-point
integer of W 64-bit words, takes the integer prefix sums in one decoupled look-back
pass and rounds each once to the input's format (nearest, ties to even), reading and
writing the float bits alone: the same 2 * itemsize bytes a float scan moves.  W comes
from one pass over the data's exponents, so the integers are as wide as the data needs
and no wider.  Below :data:`COLUMNS_FROM` words each thread holds its integer in registers
(``exact_scan``), where every value costs O(W); from there each thread's integer lives in
shared memory, where a value costs O(1) (``exact_scan_columns``: a value touches two words,
rounding reads the two at the top).  float32 and float64 data as wide as :data:`CERTIFIED`
says take the certified scan first (``certified_scan``: double-double sums, each rounding
proven to be the exact sum's, or the exact scan runs after all).  The exponent pass also
finds the first infinity or NaN: only the values before it are scanned, every output from
it on being a special.  Results are bit for bit those of the CPU oracle, which
``tests/oracle/test_exact_device.py`` checks on every data distribution.
"""

from __future__ import annotations

import functools
from typing import Any, NamedTuple

import numpy as np

from ..core.arrays import as_dtype
from ..core.cuda import (
    KERNEL_DIR,
    IeeeModule,
    allow_shared_memory,
    expand_source,
    lookback_smem,
    staged,
)
from ..core.dtypes import CUDA_SCALAR, SIGNIFICAND_BITS

#: Storage (the unsigned integer of the same width), significand bits and exponent bits of
#: each format the device oracle reads.  CuPy has no bfloat16 arrays: bfloat16 comes as a
#: torch tensor (:func:`exact_scan_device`), and is scanned as its bits.
FORMATS: dict[str, tuple[str, int, int]] = {
    d: (CUDA_SCALAR[f"uint{8 * as_dtype(d).itemsize}"], SIGNIFICAND_BITS[d],
        8 * as_dtype(d).itemsize - SIGNIFICAND_BITS[d])
    for d in ("float16", "bfloat16", "float32", "float64")
}
#: Integer widths compiled, in 64-bit words; the narrowest that holds every prefix is used.
#: 5 words hold any float32 data below 2**42 elements (exponents -149 to 127); 34 any
#: float64 data up to 2**34 elements (exponents -1074 to 1023).
WIDTHS = (1, 2, 3, 4, 5, 6, 8, 16, 34)
BLOCK = 256
#: Elements a thread of the look-back path scans: 16 was the fastest measured on an H100 at
#: 1, 2 and 6 words (8 or 32 beside it), placements being recomputed, not held.
ITEMS = 16
#: Widths from which each thread's integer lives in shared memory (``exact_scan_columns``):
#: in registers a scan costs about one torch.cumsum of time a word.
COLUMNS_FROM = 8
#: Threads a block of the column scan (each warp scans its own tile: the block size only
#: sets how many warps share an SM's shared memory a block), and elements a thread.  On an
#: H100 at 34 words and 2**28 elements, the scan alone took 17.7, 10.6 and 8.5 ms at 16, 32
#: and 64 items a thread (64 threads a block; 11.7 ms at 32 threads and 32 items): a tile's
#: look-back and word-by-word scan cost about what its values' walks do.  64 items is not
#: yet through the device tests.
COLUMNS_BLOCK = 64
COLUMNS_ITEMS = 32
#: Formats the certified scan serves, and the widths from which they take it first: a
#: float32 prefix needs 25 bits, a float64 one 54, where double-double sums carry 106.  Where
#: one rounding is not certified both scans run.  On an H100, wide-range float32 data at
#: 2**24, 2**28 and 2**30, the bench's (2**22 values tiled) and data drawn afresh, were
#: certified whole: 2.2 ms for the certified scan at 2**28, against 5.4 for the exact scan at
#: 5 words, about 1.1 ms a word (compute-bound: an H200, with the same arithmetic and 1.4
#: times the bandwidth, put the certified one at 3.3 times torch.cumsum's time).  So float32
#: takes it from 3 words (the exact scan's 3.3 ms would be 4 to 5 times torch.cumsum's on an
#: H200); at 1 and 2 the exact scan costs no more, and data with ties (integers past 2**24)
#: would pay for both.  float64 takes it where the column scan would run (wide data took 7
#: times torch.cumsum's time there on an H200).  (The first certificate, the interval's ends
#: rounded outwards to doubles, left a prefix of fresh data at 2**28 and at 2**30 to the
#: exact scan: see the kernel.)
CERTIFIED: dict[str, int] = {"float32": 3, "float64": 8}
#: Elements from which the conformance checks of a GPU target take the exact answer from
#: the device oracle: below it, the copy to the device costs more than the CPU oracle.
DEVICE_FROM = 1 << 16


def _format(dtype: str) -> str:
    return ", ".join(map(str, FORMATS[dtype]))


def _range_name(dtype: str) -> str:
    return f"exponent_range<{_format(dtype)}>"


def _scan_name(dtype: str, words: int, items: int | None = None) -> str:
    return f"exact_scan<{_format(dtype)}, {words}, {items or ITEMS}>"


def _columns_name(dtype: str, words: int, items: int | None = None) -> str:
    return f"exact_scan_columns<{_format(dtype)}, {words}, {items or COLUMNS_ITEMS}>"


def _certified_name(dtype: str, items: int | None = None) -> str:
    rounding = "CertifiedRound64" if dtype == "float64" else "CertifiedRound"
    return f"certified_scan<scancheck::{rounding}, {items or ITEMS}>"


def instantiations(dtype: str) -> list[str]:
    """The kernel name expressions the oracle may launch for ``dtype``."""
    return ([_range_name(dtype)]
            + [(_scan_name if w < COLUMNS_FROM else _columns_name)(dtype, w) for w in WIDTHS]
            + ([_certified_name(dtype)] if dtype in CERTIFIED else []))


def columns_smem(itemsize: int, words: int, items: int) -> int:
    """Dynamic shared memory of one warp of ``exact_scan_columns`` (the kernel's Layout): the
    tile's padded values, the lanes' integers, the tile's sum and the lanes' one-byte carry
    counts."""
    return 8 * (-(-staged(items, itemsize) * itemsize // 8) + 32 * words + words) + 32 * words


@functools.cache
def _kernel(name: str, device: int) -> Any:
    # One small module per instantiation: a float32 check compiles only the widths it meets.
    return IeeeModule(expand_source("exact_scan.cu", KERNEL_DIR / "oracle"),
                       name_expressions=(name,)).get_function(name)


def warm(dtype: str) -> None:
    """Compile every instantiation the oracle may launch for ``dtype`` into the NVRTC cache on
    disk (:class:`~scancheck.core.cuda.IeeeModule`), so that the processes of a GPU test
    session load them instead of each compiling them at its first large case."""
    import cupy as cp

    for name in instantiations(dtype):
        _kernel(name, cp.cuda.Device().id)


def words_needed(lo: int, hi: int, n: int) -> int:
    """Words that hold any prefix sum of ``n`` values whose bits lie in [2**lo, 2**(hi+1)),
    with its sign."""
    bits = (hi - lo + 1) + max(n, 1).bit_length() + 1
    need = -(-bits // 64)
    for w in WIDTHS:
        if w >= need:
            return w
    raise ValueError(f"the data spans {hi - lo + 1} bits of exponent at n = {n:,}: over the "
                     f"{64 * WIDTHS[-1]}-bit integers the device oracle compiles")


def as_device_array(x: Any) -> Any:
    """``x`` as a CuPy array without a copy: CuPy arrays, ``__cuda_array_interface__`` or DLPack."""
    import cupy as cp

    if isinstance(x, cp.ndarray):
        return x
    if hasattr(x, "__cuda_array_interface__"):
        return cp.asarray(x)
    return cp.from_dlpack(x)


def exact_scan_device(x: Any, inclusive: bool = True) -> Any:
    """The exact add scan of a 1-D device float array, rounded once per output to its dtype:
    bit for bit :func:`scancheck.oracle.exact.exact_scan` of the same values, as a CuPy array (a
    torch tensor for a torch bfloat16 tensor, which CuPy cannot hold)."""
    import cupy as cp

    if is_torch_bfloat16(x):
        import torch

        if x.ndim != 1:
            raise ValueError(f"x must be 1-D for the device oracle, got shape {tuple(x.shape)}")
        bits = cp.from_dlpack(x.contiguous().view(torch.int16)).view(cp.uint16)
        out = _exact_bits(bits, "bfloat16", inclusive)
        return torch.from_dlpack(out.view(cp.int16)).view(torch.bfloat16)
    a = as_device_array(x)
    if a.ndim != 1:
        raise ValueError(f"x must be 1-D for the device oracle, got shape {tuple(a.shape)}")
    dtype = a.dtype.name
    if dtype not in FORMATS:
        raise ValueError(f"dtype={dtype!r} is not supported by the device oracle; allowed: "
                         f"{', '.join(FORMATS)}")
    a = cp.ascontiguousarray(a)
    return _exact_bits(a.view(f"u{a.itemsize}"), dtype, inclusive).view(a.dtype)


def is_torch_bfloat16(x: Any) -> bool:
    """Whether ``x`` is a torch bfloat16 tensor (which the device oracle reads as its bits)."""
    return type(x).__module__.startswith("torch") and str(getattr(x, "dtype", "")) == "torch.bfloat16"


class ExponentPass(NamedTuple):
    """What the exponent pass finds in one read of the data: the lowest set bit's and the
    leading bit's exponents over its nonzero finite values (``lo > hi`` where there is none),
    whether any value is an infinity or NaN, and the indices of the first +inf, -inf and NaN
    and of the first value that is not -0.0 (the length for none)."""

    lo: int
    hi: int
    special: bool
    starts: tuple[int, int, int, int]


def exponent_pass(bits: Any, dtype: str) -> ExponentPass:
    """:class:`ExponentPass` of a 1-D device array of ``dtype``'s bits (unsigned integers of
    its width), from one kernel launch and one copy back."""
    import cupy as cp

    n = bits.shape[0]
    # The pass's results in one buffer, so that one copy each way moves them: firsts (four
    # uint64, n for none), then range (three int32 and a pad).
    init = np.full(6, n, dtype=np.uint64)
    init[4:].view(np.int32)[:] = (np.iinfo(np.int32).max, np.iinfo(np.int32).min, 0, 0)
    found = cp.asarray(init)
    grid = max(min(-(-n // (BLOCK * 16 // bits.itemsize)), 4 * 1024), 1)
    _kernel(_range_name(dtype), cp.cuda.Device().id)(
        (grid,), (BLOCK,), (bits, np.int64(n), found[4:].view(cp.int32), found))
    got = found.get()
    lo, hi, special = (int(v) for v in got[4:].view(np.int32)[:3])
    return ExponentPass(lo, hi, bool(special), tuple(int(v) for v in got[:4]))


def _exact_bits(bits: Any, dtype: str, inclusive: bool) -> Any:
    """:func:`exact_scan_device` on the bits of a contiguous 1-D array of ``dtype``."""
    import cupy as cp

    n = bits.shape[0]
    out = cp.empty_like(bits)
    if n:
        lo, hi, special, starts = exponent_pass(bits, dtype)
        # From the first infinity or NaN on, every output is one (IEEE's rules, which
        # overlay_specials lays over): only the values before it are scanned.
        head = min(starts[:3])
        if head:
            _scan_finite(bits[:head], out[:head], lo, hi, dtype)
        if special or starts[3]:
            if dtype == "bfloat16":  # as float32, whose top half bfloat16 is: exactly
                wide = [(v.astype(cp.uint32) << 16).view(cp.float32) for v in (bits, out)]
                overlay_specials(*wide, cp, starts)
                out = (wide[1].view(cp.uint32) >> 16).astype(cp.uint16)
            else:
                overlay_specials(bits.view(dtype), out.view(dtype), cp, starts)
    if not inclusive and n:
        out = cp.concatenate([cp.zeros(1, dtype=out.dtype), out[:-1]])
    return out


def _scan_finite(bits: Any, out: Any, lo: int, hi: int, dtype: str) -> None:
    """The exact scan of finite ``bits`` (infinities and NaN read as 0) into ``out``, whose
    set bits lie in [2**lo, 2**(hi+1)): by the certified scan, the column scan or the
    register one, as the width the data need says."""
    import cupy as cp

    n, dev = bits.shape[0], cp.cuda.Device().id
    words = words_needed(lo, hi, n) if lo <= hi else 0
    if not words:  # no nonzero finite value: every finite prefix is zero
        out.fill(0)
    elif words >= CERTIFIED.get(dtype, WIDTHS[-1] + 1) and _launch_certified(bits, out, n, dev):
        pass
    elif words >= COLUMNS_FROM:
        _launch_columns(bits, out, n, lo, dtype, words, dev)
    else:
        _launch(bits, out, n, lo, dtype, words, dev)


def _launch(bits: Any, out: Any, n: int, base: int, dtype: str, words: int, dev: int,
            items: int | None = None) -> None:
    import cupy as cp

    items = items or ITEMS
    tiles = -(-n // (BLOCK * items))
    counter = cp.zeros(1, dtype=cp.uint32)
    flags = cp.zeros(tiles, dtype=cp.int32)
    aggregates = cp.empty((tiles, words), dtype=cp.uint64)
    inclusives = cp.empty((tiles, words), dtype=cp.uint64)
    smem = lookback_smem(BLOCK, items, 8 * words, bits.itemsize)
    kernel = _kernel(_scan_name(dtype, words, items), dev)
    allow_shared_memory(kernel, smem)
    kernel((tiles,), (BLOCK,), (bits, out, np.int64(n), np.int32(base), counter, flags,
                                aggregates, inclusives), shared_mem=smem)


def _launch_certified(bits: Any, out: Any, n: int, dev: int, items: int | None = None) -> bool:
    """The certified scan of float32 or float64 bits (by their width) into ``out``; whether
    every output was certified (where one was not, ``out`` is to be written again by the
    exact scan)."""
    import cupy as cp

    items = items or ITEMS
    tiles = -(-n // (BLOCK * items))
    # One buffer, zeroed in one fill: the uncertified flag, the tile counter, the tile flags.
    state = cp.zeros(tiles + 2, dtype=cp.uint32)
    status = cp.empty((2, tiles, 3), dtype=cp.float64)  # aggregates, inclusives: 24 bytes a tile
    smem = lookback_smem(BLOCK, items, 24, bits.itemsize)
    kernel = _kernel(_certified_name("float64" if bits.itemsize == 8 else "float32", items), dev)
    allow_shared_memory(kernel, smem)
    kernel((tiles,), (BLOCK,), (bits, out, np.int64(n), state[0:1], state[1:2],
                                state[2:].view(cp.int32), status[0], status[1]), shared_mem=smem)
    return not int(state[0].get())


def _launch_columns(bits: Any, out: Any, n: int, base: int, dtype: str, words: int, dev: int,
                    items: int | None = None, block: int | None = None) -> None:
    import cupy as cp

    items, block = items or COLUMNS_ITEMS, block or COLUMNS_BLOCK
    tiles = -(-n // (32 * items))
    warps = block // 32
    counter = cp.zeros(1, dtype=cp.uint32)
    flags = cp.zeros(tiles, dtype=cp.int32)
    # The look-back moves two words a lane: the width rounded up to even, a tile.  At 34
    # words and 16 items, 272 bytes a 512-value tile: a fifteenth of a float64 input's bytes.
    stride = words + words % 2
    aggregates = cp.empty((tiles, stride), dtype=cp.uint64)
    inclusives = cp.empty((tiles, stride), dtype=cp.uint64)
    smem = warps * columns_smem(bits.itemsize, words, items)
    kernel = _kernel(_columns_name(dtype, words, items), dev)
    allow_shared_memory(kernel, smem)
    kernel((-(-tiles // warps),), (block,), (bits, out, np.int64(n), np.int32(base), counter,
                                            flags, aggregates, inclusives), shared_mem=smem)


def overlay_specials(x: Any, out: Any, xp: Any,
                     starts: tuple[int, int, int, int] | None = None) -> None:
    """IEEE's rules over the finite sums of a 1-D scan, in place, as
    ``exact._apply_specials`` states them: NaN from a NaN on, or once both infinities were
    seen; +-inf from the first of its sign; -0.0 while every input so far was -0.0.  Each
    rule starts or ends at one index, so nothing of the size of ``x`` is kept, and each
    output is written once: from the first special on, the finite sums are never read.
    ``xp`` is the array module of ``x`` and ``out`` (CuPy, or NumPy in the CPU tests);
    ``starts``, where known (the exponent pass finds them), the indices of the first +inf,
    -inf and NaN and of the first value that is not -0.0, ``len(x)`` for none."""
    n = x.shape[0]

    def first(mask: Any) -> int:
        i = int(xp.argmax(mask))
        return i if bool(mask[i]) else n

    # By bits, not by value: CuPy compiles its kernels with -ftz=true, so there
    # ``x == 0`` holds for every subnormal and a -tiny would extend the -0.0 run.
    sign = 1 << (8 * x.dtype.itemsize - 1)
    if starts is None:
        starts = (first(x == xp.inf), first(x == -xp.inf), first(xp.isnan(x)),
                  first(x.view(f"u{x.dtype.itemsize}") != sign))
    pinf, ninf, first_nan, negzero = starts
    nan = min(first_nan, max(pinf, ninf))
    # Before the NaNs start, at most one infinity has been met: the first of them.
    special = min(pinf, ninf, first_nan)
    if special < nan:
        out[special:nan] = xp.inf if special == pinf else -xp.inf
    if nan < n:
        out[nan:] = xp.nan
    # Copied, not filled: CuPy 14.2 stores +0.0 when a slice is assigned or filled with the
    # scalar -0.0, in every float dtype (docs/findings.md); the inputs there are -0.0.
    if negzero:
        out[:negzero] = x[:negzero]
