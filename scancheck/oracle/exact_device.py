"""The exact oracle on the GPU: :func:`scancheck.oracle.exact.exact_scan` where the data lies.

``kernels/oracle/exact_scan.cu`` turns every finite value into an exact fixed-point
integer of W 64-bit words, takes the integer prefix sums in one decoupled look-back
pass and rounds each once to the input's format (nearest, ties to even), reading and
writing the float bits alone: the same 2 * itemsize bytes a float scan moves.  W comes
from one pass over the data's exponents, so the integers are as wide as the data needs
and no wider.  Below :data:`COLUMNS_FROM` words each thread holds its integer in registers
(``exact_scan``), where every value costs O(W); from there each thread's integer lives in
shared memory, where a value costs O(1) (the column scan: a value touches two words,
rounding reads the two at the top; the tiles' sums are taken first and scanned on their own,
so no tile waits on another).  float32 and float64 data as wide as :data:`CERTIFIED`
says take the certified scan first (``certified_scan``: double-double sums, each rounding
proven to be the exact sum's); it marks each tile where a rounding is not, and the column
scan writes those tiles alone again, summing the values before the last of them for their
prefixes.  The exponent pass also finds the first infinity or NaN: only the values before
it are scanned, every output from it on being a special.  A call keeps its state on the
device in one buffer (``_Call``) and reads it back once, twice where the certified scan
runs on more than :data:`EARLY_CERTIFIED_UP_TO` values.  Results are bit for bit those of
the CPU oracle, which ``tests/oracle/test_exact_device.py`` checks on every data
distribution.
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
    device_sm_count,
    device_smem_limit,
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
#: float64 data up to 2**34 elements (exponents -1074 to 1023).  Between 8 and 34 the steps
#: are a few words: a column scan's time grows with its width (each tile scans its lanes a
#: word at a time), and float64 data spanning 2**-564 to 2**512 (the bench's factors) need 18
#: words at 2**28 values.
WIDTHS = (1, 2, 3, 4, 5, 6, 8, 12, 16, 20, 24, 34)
BLOCK = 256
#: Elements a thread of the look-back path scans: 16 was the fastest measured on an H100 at
#: 1, 2 and 6 words (8 or 32 beside it), placements being recomputed, not held.
ITEMS = 16
#: Widths from which each thread's integer lives in shared memory (``exact_scan_columns``):
#: in registers a scan costs about one torch.cumsum of time a word.
COLUMNS_FROM = 8
#: Threads a block of the column scan's writing kernel (each warp writes its own tile: the
#: block size only sets how many warps share an SM's shared memory a block), one warp where
#: two warps' shared memory is over the device's limit, and elements a thread.  No tile waits
#: on another (reduce, then scan: :func:`_launch_columns`), so the tile size only trades a
#: tile's fixed work (a word-by-word scan of its lanes) against the warps in flight.  The
#: whole oracle on float64 factors data (the certified scan, then the column scan over 87% of
#: the values to write 539 of 65,536 tiles), x torch.cumsum's time on an H100 at 96, 64 and 32
#: items: 2.35, 2.39 and 2.51 at 2**28; 3.91, 3.45 and 3.08 at 2**24.
COLUMNS_BLOCK = 64
COLUMNS_ITEMS = 64
#: Formats the certified scan serves, and the widths from which they take it first: a
#: float32 prefix needs 25 bits, a float64 one 54, where double-double sums carry 106.  Where
#: a rounding is not certified, the exact scan writes that tile again (:func:`_rescan`).  On
#: an H100, wide-range float32 data at 2**24, 2**28 and 2**30, the bench's (2**22 values
#: tiled) and data drawn afresh, were certified whole: 2.2 ms for the certified scan at 2**28,
#: against 5.4 for the exact scan at 5 words, about 1.1 ms a word (compute-bound: an H200,
#: with the same arithmetic and 1.4 times the bandwidth, put the certified one at 3.3 times
#: torch.cumsum's time).  So float32 takes it from 3 words (the exact scan's 3.3 ms would be 4
#: to 5 times torch.cumsum's on an H200); at 1 and 2 the exact scan costs no more.  float64
#: takes it where the column scan would run (wide data took 7 times torch.cumsum's time there
#: on an H200).  (The first certificate, the interval's ends rounded outwards to doubles, left
#: a prefix of fresh data at 2**28 and at 2**30 to the exact scan: see the kernel.)
CERTIFIED: dict[str, int] = {"float32": 3, "float64": 8}
#: Values a tile of the scans that give a block a tile: the certified scan, whose marks of
#: uncertified tiles are of this many values, and the register scan.
TILE = BLOCK * ITEMS
#: Values a tile of the column scan (a warp's).
COLUMNS_TILE = 32 * COLUMNS_ITEMS
#: Warps a block of ``column_sums`` (a warp a tile, its shared memory the lanes' integers
#: alone: at 34 words, four warps take 39 KiB).
SUMS_WARPS = 4
#: Column tiles' sums a warp of ``column_prefixes`` sums or scans in turn (2**28 values make
#: 131,072 tiles: chunks of 2,048, then of 32, then one), and its warps a block.  On an H100,
#: at 96 values a lane, the prefixes of the sums of 2.3e8 float64 values took 0.08 ms, the
#: sums themselves 1.06 ms.
CHUNK = 64
PREFIX_WARPS = 4
#: 32-bit words of a call's header on the device (the kernel's ``Header``): the exponent
#: pass's firsts (four uint64) and range (lo, hi, special, a pad), then the certified scan's
#: marks (whether it ran, its uncertified tiles, 1 + the last of them, a pad).
HEADER_WORDS = 16
#: Values up to which the certified scan is launched before the host reads the exponent
#: pass's results back, to skip itself on the device where the data are too narrow for it:
#: for wide data one read back (a wait of tens of microseconds with the device idle) less, for
#: narrow data a launch of empty blocks, one a tile.  At 2**24 those are 4096; at 2**28,
#: 65536 empty blocks would cost about what the read back saves (an estimate from block
#: launch rates, not a measurement), and the host reads first.
EARLY_CERTIFIED_UP_TO = 1 << 24
#: Elements from which the conformance checks of a GPU target take the exact answer from
#: the device oracle: below it, the copy to the device costs more than the CPU oracle.
DEVICE_FROM = 1 << 16


def _format(dtype: str) -> str:
    return ", ".join(map(str, FORMATS[dtype]))


def _range_name(dtype: str) -> str:
    return f"exponent_range<{_format(dtype)}>"


def _scan_name(dtype: str, words: int, items: int | None = None) -> str:
    return f"exact_scan<{_format(dtype)}, {words}, {items or ITEMS}>"


def _columns_module(dtype: str, words: int) -> tuple[str, str, str, str]:
    """The column scan's kernels at ``words`` words, compiled as one module: the tiles' sums,
    their prefixes, the list of tiles to write, the scan that writes them (all on tiles of
    :data:`COLUMNS_TILE` values)."""
    shape = f"{_format(dtype)}, {words}, {COLUMNS_ITEMS}"
    return (f"column_sums<{shape}>", f"column_prefixes<{words}>", "named_column_tiles",
            f"exact_scan_columns<{shape}>")


def _certified_name(dtype: str, items: int | None = None) -> str:
    rounding = "CertifiedRound64" if dtype == "float64" else "CertifiedRound"
    return f"certified_scan<scancheck::{rounding}, {items or ITEMS}>"


def widths(dtype: str) -> tuple[int, ...]:
    """The widths :func:`words_needed` may give data of ``dtype``: up to the one that holds
    any prefix of values over the format's whole exponent range, at any length an index
    holds."""
    _, p, ebits = FORMATS[dtype]
    bias = 2 ** (ebits - 1) - 1
    top = words_needed(2 - bias - p, bias, 2**63 - 1)  # the least subnormal's bit, the top
    return tuple(w for w in WIDTHS if w <= top)


def instantiations(dtype: str) -> list[tuple[str, ...]]:
    """The kernel modules the oracle may launch for ``dtype``, each the name expressions
    compiled together: the exact scan at each of its :func:`widths`, and where the certified
    scan serves ``dtype``, it and the column scan at each width it serves (which writes the
    tiles it leaves uncertified)."""
    def scan(w: int) -> tuple[str, ...]:
        return (_scan_name(dtype, w),) if w < COLUMNS_FROM else _columns_module(dtype, w)

    modules = [("oracle_prepare",), (_range_name(dtype),)] + [scan(w) for w in widths(dtype)]
    if dtype in CERTIFIED:
        modules += [(_certified_name(dtype),)] + [
            _columns_module(dtype, w) for w in widths(dtype)
            if CERTIFIED[dtype] <= w < COLUMNS_FROM]
    return modules


def columns_smem(itemsize: int, words: int, items: int) -> int:
    """Dynamic shared memory of one warp of ``exact_scan_columns`` (the kernel's Layout): the
    tile's padded values, then :func:`integers_smem`."""
    return 8 * -(-staged(items, itemsize) * itemsize // 8) + integers_smem(words)


def integers_smem(words: int) -> int:
    """Dynamic shared memory of one warp of ``column_sums`` (Layout's kIntegerBytes): the
    lanes' integers, the tile's sum and the lanes' one-byte carry counts."""
    return 8 * (32 * words + words) + 32 * words


@functools.cache
def _module(names: tuple[str, ...], device: int) -> IeeeModule:
    # Small modules, one a scan: a float32 check compiles only the widths it meets.
    return IeeeModule(expand_source("exact_scan.cu", KERNEL_DIR / "oracle"),
                      name_expressions=names)


def _kernel(name: str, device: int, module: tuple[str, ...] | None = None) -> Any:
    """The kernel ``name`` from the module of ``module``'s names (``name`` alone if none)."""
    return _module(module or (name,), device).get_function(name)


def warm(dtype: str) -> None:
    """Compile every instantiation the oracle may launch for ``dtype`` into the NVRTC cache on
    disk (:class:`~scancheck.core.cuda.IeeeModule`), so that the processes of a GPU test
    session load them instead of each compiling them at its first large case."""
    import cupy as cp

    for names in instantiations(dtype):
        _module(names, cp.cuda.Device().id)


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


class Header(NamedTuple):
    """A call's header as read back from the device (the kernel's ``Header``): the exponent
    pass's results, whether the certified scan ran, how many of its tiles (:data:`TILE`
    values each) it left a rounding of uncertified, and 1 + the last of them (0 for none)."""

    exponents: ExponentPass
    certified: bool
    uncertified: int
    end: int

    @classmethod
    def parse(cls, words: np.ndarray) -> Header:
        """The header from its :data:`HEADER_WORDS` 32-bit words."""
        firsts = words[:8].view(np.uint64)
        lo, hi, special = (int(v) for v in words[8:11].view(np.int32))
        ran, uncertified, end = (int(v) for v in words[12:15])
        return cls(ExponentPass(lo, hi, bool(special), tuple(int(v) for v in firsts)),
                   bool(ran), uncertified, end)


def state_words(n: int) -> int:
    """32-bit words of a call's state on the device for ``n`` values: the kernel's
    ``State::words`` (the header, the block scans' look-back, a mark a tile)."""
    return HEADER_WORDS + 1 + 2 * _cdiv(n, TILE)


def uncertified_at(tiles: int) -> int:
    """Where the certified scan's marks (a word a tile) start in a call's state of ``tiles``
    block tiles, in words: past the header and the block scans' counter and flags."""
    return HEADER_WORDS + 1 + tiles


def certified_min_bits(dtype: str) -> int:
    """The bits a prefix of ``dtype`` data needs from which the certified scan takes them: past
    those of the widest integer narrower than ``CERTIFIED[dtype]`` words."""
    return 64 * max((w for w in WIDTHS if w < CERTIFIED[dtype]), default=0) + 1


def takes_certified(lo: int, hi: int, head: int, min_bits: int) -> bool:
    """The kernel's ``takes_certified``: whether there are ``head`` values before the first
    infinity or NaN, and their prefixes, with bits in [2**lo, 2**(hi+1)), need at least
    ``min_bits`` bits (0: any data).  With :func:`certified_min_bits`, exactly where
    :func:`words_needed` comes to ``CERTIFIED[dtype]`` words or more."""
    if head <= 0:
        return False
    if min_bits <= 0:
        return True
    return lo <= hi and (hi - lo + 1) + head.bit_length() + 1 >= min_bits


def _cdiv(a: int, b: int) -> int:
    return -(-a // b)


class _Call:
    """One call's work on the device over the bits of ``n`` values of ``dtype`` into ``out``:
    its state (:func:`state_words`) set by ``oracle_prepare`` and the exponent pass queued
    behind it when made; launches queue on the current stream, and only :meth:`read` waits."""

    def __init__(self, bits: Any, out: Any, dtype: str) -> None:
        import cupy as cp

        self.bits, self.out, self.dtype = bits, out, dtype
        self.n = n = bits.shape[0]
        self.tiles = _cdiv(n, TILE)
        self.dev = cp.cuda.Device().id
        words = state_words(n)
        self.state = cp.empty(words, dtype=cp.uint32)
        grid = max(min(_cdiv(words - HEADER_WORDS, BLOCK), 1024), 1)
        _kernel("oracle_prepare", self.dev)((grid,), (BLOCK,),
                                            (self.state, np.int64(words), np.int64(n)))
        grid = max(min(_cdiv(n, BLOCK * 16 // bits.itemsize), 4 * 1024), 1)
        _kernel(_range_name(dtype), self.dev)((grid,), (BLOCK,),
                                              (bits, np.int64(n), self.state))

    def read(self) -> Header:
        """The header as the work queued so far leaves it (one copy back, which waits)."""
        return Header.parse(self.state[:HEADER_WORDS].get())

    def uncertified_marks(self) -> Any:
        """The certified scan's mark a tile, on the device (``State::uncertified``): 1 where it
        left a rounding of the tile uncertified."""
        start = uncertified_at(self.tiles)
        return self.state[start:start + self.tiles]

    def uncertified_tiles(self) -> np.ndarray:
        """The tiles the certified scan marked uncertified."""
        return np.flatnonzero(self.uncertified_marks().get())


def _scan(bits: Any, out: Any, dtype: str) -> ExponentPass:
    """The exact scan of ``bits`` into ``out`` up to the first infinity or NaN (from there
    on IEEE's rules decide every output: the caller overlays them), by the certified scan with
    the exact one behind it on the tiles it leaves uncertified, the column scan or the
    register one, as the data's width says; the exponent pass's results."""
    call = _Call(bits, out, dtype)
    min_bits = certified_min_bits(dtype) if dtype in CERTIFIED else None
    # Small calls launch the certified scan before the exponent pass is read back: it skips
    # itself on the device where the data are too narrow for it, and wide data are then read
    # back once, not twice.
    early = min_bits is not None and call.n <= EARLY_CERTIFIED_UP_TO
    if early:
        _launch_certified(call, min_bits)
    header = call.read()
    lo, hi, _, starts = header.exponents
    head = min(starts[:3])
    if not head:
        return header.exponents
    if lo > hi:  # no nonzero finite value: every finite prefix is zero
        out[:head].fill(0)
        return header.exponents
    words = words_needed(lo, hi, head)
    if not early and min_bits is not None and takes_certified(lo, hi, head, min_bits):
        _launch_certified(call, min_bits)
        header = call.read()
    if header.certified:
        if header.uncertified:
            _rescan(call, words, lo, header.end, head)
    elif words >= COLUMNS_FROM:
        _launch_columns(call, words, lo, head)
    else:
        _launch(call, words, lo, head)
    return header.exponents


def exponent_pass(bits: Any, dtype: str) -> ExponentPass:
    """:class:`ExponentPass` of a 1-D device array of ``dtype``'s bits (unsigned integers of
    its width), from one launch after the state's and one copy back."""
    return _Call(bits, None, dtype).read().exponents


def certified_only(bits: Any, dtype: str) -> tuple[Any, np.ndarray]:
    """The certified scan alone, whatever the data's width, over the bits of float32 or
    float64 values (IEEE's rules not laid over): its outputs, written up to the first infinity
    or NaN, and the tiles (:data:`TILE` values each) where it left a rounding uncertified,
    whose outputs are then not to be trusted."""
    import cupy as cp

    call = _Call(bits, cp.empty_like(bits), dtype)
    _launch_certified(call, 0)
    return call.out, call.uncertified_tiles()


def _exact_bits(bits: Any, dtype: str, inclusive: bool) -> Any:
    """:func:`exact_scan_device` on the bits of a contiguous 1-D array of ``dtype``."""
    import cupy as cp

    n = bits.shape[0]
    out = cp.empty_like(bits)
    if n:
        _, _, special, starts = _scan(bits, out, dtype)
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


def _launch(call: _Call, words: int, base: int, n: int) -> None:
    """The register scan of the call's first ``n`` values, ``words`` words wide, from exponent
    ``base``."""
    import cupy as cp

    status = cp.empty(2 * call.tiles * words, dtype=cp.uint64)  # aggregates, inclusives
    smem = lookback_smem(BLOCK, ITEMS, 8 * words, call.bits.itemsize)
    kernel = _kernel(_scan_name(call.dtype, words), call.dev)
    allow_shared_memory(kernel, smem)
    kernel((_cdiv(n, TILE),), (BLOCK,), (call.bits, call.out, np.int64(n), np.int32(base),
                                         call.state, np.int64(call.tiles), status),
           shared_mem=smem)


def _launch_certified(call: _Call, min_bits: int) -> None:
    """The certified scan of the call's float32 or float64 values (by their width), which runs
    on the device only where :func:`takes_certified` says with ``min_bits``."""
    import cupy as cp

    status = cp.empty(2 * call.tiles * 3, dtype=cp.float64)  # aggregates, inclusives: 24 bytes
    smem = lookback_smem(BLOCK, ITEMS, 24, call.bits.itemsize)
    kernel = _kernel(_certified_name(call.dtype), call.dev)
    allow_shared_memory(kernel, smem)
    kernel((call.tiles,), (BLOCK,), (call.bits, call.out, call.state, np.int64(call.tiles),
                                     np.int32(min_bits), status), shared_mem=smem)


def _launch_columns(call: _Call, words: int, base: int, n: int, every: int = 0) -> int:
    """The column scan of the call's first ``n`` values, ``words`` words wide, from exponent
    ``base``: every output, or with ``every`` those of the tiles of ``every`` values the
    certified scan marked (the column tiles that overlap one walk their values).  Reduce, then
    scan: every column tile's sum, their exclusive prefixes, then the tiles that write, a warp
    a tile.  The column tiles it sums."""
    import cupy as cp

    tiles = _cdiv(n, COLUMNS_TILE)
    module = _columns_module(call.dtype, words)
    sums_kernel, prefixes_kernel, named_kernel, scan_kernel = (
        _kernel(name, call.dev, module) for name in module)
    # A 34-word sum is 272 bytes, a sixtieth of a tile of 2,048 float64 values.
    sums = cp.empty(tiles * _stride(words), dtype=cp.uint64)
    sums_smem = SUMS_WARPS * integers_smem(words)
    allow_shared_memory(sums_kernel, sums_smem)
    sums_kernel((_cdiv(tiles, SUMS_WARPS),), (32 * SUMS_WARPS,),
                (call.bits, np.int64(n), np.int32(base), sums), shared_mem=sums_smem)
    _exclusive(sums, tiles, words, prefixes_kernel)
    named, queue = cp.empty(tiles, dtype=cp.uint32), cp.zeros(2, dtype=cp.uint32)
    # A warp looks at 32 tiles; four warps a block.
    named_kernel((_cdiv(tiles, 32 * 4),), (32 * 4,),
                 (np.int64(n), np.int32(COLUMNS_ITEMS), call.state, np.int64(call.tiles),
                  np.int64(every), named, queue))
    per_warp = columns_smem(call.bits.itemsize, words, COLUMNS_ITEMS)
    warps = COLUMNS_BLOCK // 32 if COLUMNS_BLOCK // 32 * per_warp <= device_smem_limit() else 1
    smem = warps * per_warp
    allow_shared_memory(scan_kernel, smem)
    # Each warp takes tiles from the list until it is empty: as many blocks as the device
    # holds at once, and no more than the tiles need.
    grid = min(_cdiv(tiles, warps), device_sm_count() * max(1, device_smem_limit() // smem))
    scan_kernel((grid,), (32 * warps,),
                (call.bits, call.out, np.int64(n), np.int32(base), call.state,
                 np.int64(call.tiles), np.int64(every), sums, named, queue), shared_mem=smem)
    return tiles


def _stride(words: int) -> int:
    """Words between two integers of ``words`` words in the column scan's global arrays (the
    kernel's Layout::kStride): two a lane, the width rounded up to even."""
    return words + words % 2


def _exclusive(sums: Any, count: int, words: int, kernel: Any) -> None:
    """``count`` integers of ``words`` words in ``sums`` (an even number of words apart), in
    place, to their exclusive prefix sums by ``column_prefixes`` (``kernel``): each chunk of
    :data:`CHUNK` summed, the chunks' sums made exclusive the same way, then each chunk
    scanned from its own."""
    import cupy as cp

    chunks = _cdiv(count, CHUNK)
    grid, block = (_cdiv(chunks, PREFIX_WARPS),), (32 * PREFIX_WARPS,)
    if chunks == 1:
        kernel(grid, block, (sums, np.int64(count), np.int32(CHUNK), sums, np.int32(2)))
        return
    totals = cp.empty(chunks * _stride(words), dtype=cp.uint64)
    kernel(grid, block, (sums, np.int64(count), np.int32(CHUNK), totals, np.int32(0)))
    _exclusive(totals, chunks, words, kernel)
    kernel(grid, block, (sums, np.int64(count), np.int32(CHUNK), totals, np.int32(1)))


def _rescan(call: _Call, words: int, base: int, end: int, head: int) -> int:
    """The exact scan's outputs where the certified scan left a tile uncertified, and nowhere
    else: the column scan, ``words`` words wide, over the values up to the end of tile
    ``end - 1``, the last uncertified one (those before are summed for its prefix), writing only
    the marked tiles.  The column tiles it runs."""
    # At least two words: the column scan's window (any wider integer is as exact).
    return _launch_columns(call, max(words, 2), base, min(head, end * TILE), every=TILE)


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
