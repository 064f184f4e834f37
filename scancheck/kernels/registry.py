"""The variant registry: one row per scan algorithm, and how each row is launched.

A :class:`Variant` row names the CUDA source under ``kernels/``, its template entry
points, what it computes, the launch shapes it accepts, its shared memory, its host-side
launch sequence and its CPU model in :mod:`scancheck.kernels.models`.

Adding a variant is one ``.cu`` file, one ``build_*`` model and one row of
:data:`VARIANTS`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..core.arrays import as_dtype
from ..core.cuda import (
    DEFAULT_SMEM_LIMIT,
    LaunchError,
    check_block,
    device_l2_bytes,
    lookback_smem,
)
from ..core.dtypes import KERNEL_DTYPES
from ..core.operators import OPERATORS, Operator, get_operator
from . import models
from .network import Network

#: What every variant runs: each operator whose CUDA functor rounds as NumPy does, so that a
#: kernel equals its model bit for bit.  logaddexp calls CUDA's expf and log1pf: only the
#: look-back runs it, judged by the log-sum-exp bound (scancheck.oracle.logsumexp).
#: The segmented sum runs on Blelloch's variant alone, where segmented scans come from (every
#: operator a variant runs is compiled into its module, at a cost to every check of it).
KERNEL_OPERATORS: tuple[str, ...] = tuple(op for op in OPERATORS
                                          if op not in ("logaddexp", "segmented_add"))

Launcher = Callable[["Launch"], None]


@dataclass(frozen=True)
class Variant:
    """One scan algorithm: its kernel source, launch rules, shared memory and model."""

    name: str
    source: str
    entries: tuple[str, ...]
    inclusive: bool
    #: "block": one block scans everything (n is limited); "grid": any n.
    scope: str
    model: Callable[..., Network]
    launch: Launcher
    #: Elements one block holds, as a function of (block, params); None for grid scope.
    capacity: Callable[[int, dict], int] | None
    #: Dynamic shared memory in bytes for (block, element size, params).
    smem: Callable[[int, int, dict], int]
    min_block: int = 1
    block_multiple: int = 1
    operators: tuple[str, ...] = KERNEL_OPERATORS
    dtypes: tuple[str, ...] = KERNEL_DTYPES
    #: Template parameters after <T, Op>, with their allowed values; the first is the default.
    params: dict[str, tuple[int, ...]] = field(default_factory=dict)
    #: Those of :attr:`params` that change how data move, never which combines are made in
    #: which order: compiled into the module, not passed to the model.
    layout_params: tuple[str, ...] = ()
    #: Kernel arguments a launch may set, allowed values first the default: they move time,
    #: never a bit of output, so compiled modules, name expressions and models ignore them.
    runtime_params: dict[str, tuple[int, ...]] = field(default_factory=dict)
    #: The least block size at which the variant races (its race needs that many threads:
    #: with one or two, no thread reads a cell another writes in the same step); 0: never.
    racy: int = 0
    #: Same bits on every run even for rounding operators (decoupled look-back is not:
    #: its tile prefixes fold whatever predecessors had published).
    deterministic: bool = True
    #: The plain extern "C" kernel this row runs, for rows that are not templates.
    fixed_entry: str | None = None
    #: A proven upper bound on any output's summation-tree depth at (n, block, params),
    #: for sizes whose model is too large to build (checked against the models in tests).
    max_depth: Callable[[int, int, dict], int] | None = None
    #: Launch shapes (block, params) a tuning run may choose from; ``verify`` compares the
    #: kernel with its model at each, so the tuned table never picks an unverified one.
    candidates: tuple[tuple[int, dict[str, int]], ...] = ()
    doc: str = ""

    def resolve_params(self, params: dict[str, int] | None) -> dict[str, int]:
        """Defaults filled in, template and runtime parameters alike; raises LaunchError for
        unknown or disallowed values."""
        params = dict(params or {})
        every = {**self.params, **self.runtime_params}
        for key in params:
            if key not in every:
                allowed = ", ".join(every) or "none"
                raise LaunchError(f"{self.name} has no parameter {key!r}; allowed: {allowed}")
        out = {}
        for key, allowed in every.items():
            value = params.get(key, allowed[0])
            if value not in allowed:
                raise LaunchError(
                    f"{key}={value} is not allowed for {self.name}; allowed: {allowed}"
                )
            out[key] = value
        return out

    def template_params(self, params: dict[str, int] | None) -> dict[str, int]:
        """The resolved template parameters of ``params``: what a compiled module and a model
        depend on (runtime parameters left out)."""
        return {k: v for k, v in self.resolve_params(params).items() if k in self.params}

    def template_key(self, params: dict[str, int] | None) -> tuple[tuple[str, int], ...]:
        """:meth:`template_params` as a sorted tuple: one compiled module's identity."""
        return tuple(sorted(self.template_params(params).items()))

    def check_block_and_operator(self, block: int, op: str | Operator) -> Operator:
        """The operator, where this variant is built for it and ``block`` is a block size it
        launches with; else a LaunchError naming the limit (before any input is seen)."""
        oper = get_operator(op)
        if oper.name not in self.operators:
            raise LaunchError(
                f"operator={oper.name!r} is not supported by {self.name}; "
                f"allowed: {', '.join(self.operators)}"
            )
        check_block(block)
        if block < self.min_block or block % self.block_multiple:
            raise LaunchError(
                f"block={block} is not allowed for {self.name}: it needs at least "
                f"{self.min_block} threads, a multiple of {self.block_multiple}"
            )
        return oper

    def check(self, n: int, block: int, dtype: str, op: str | Operator,
              params: dict[str, int] | None = None, smem_limit: int | None = None) -> dict:
        """Validate a launch; returns the resolved params or raises LaunchError naming the limit."""
        oper = self.check_block_and_operator(block, op)
        dt = as_dtype(dtype).name
        allowed = [d for d in self.dtypes if d in oper.dtypes]
        if dt not in allowed:
            raise LaunchError(
                f"dtype={dt!r} with operator {oper.name!r} is not supported by {self.name}; "
                f"allowed: {', '.join(allowed)}"
            )
        if n < 1:
            raise LaunchError(f"n={n}: the input is empty; a scan needs at least one element")
        resolved = self.resolve_params(params)
        if self.capacity is not None:
            cap = self.capacity(block, resolved)
            if n > cap:
                raise LaunchError(
                    f"n={n} is over the single-block limit of {self.name}: {cap} elements at "
                    f"block={block}; use a grid-scope variant for longer inputs"
                )
        itemsize = as_dtype(dt).itemsize * oper.width
        need = self.smem(block, itemsize, resolved)
        limit = DEFAULT_SMEM_LIMIT if smem_limit is None else smem_limit
        if need > limit:
            raise LaunchError(
                f"{self.name} at block={block} needs {need} bytes of shared memory, over the "
                f"device limit of {limit} bytes per block"
            )
        return resolved

    def candidate_launches(self) -> list[tuple[int, dict[str, int]]]:
        """Its :attr:`candidates`, params resolved: the only launches a tuned table may name."""
        return [(b, self.resolve_params(p)) for b, p in self.candidates]

    def tuned(self, dtype: str, n: int, table: dict[str, dict[str, list[dict]]]
              ) -> tuple[int, dict[str, int]]:
        """The (block, params) a launch table ({variant: {dtype: rows}}, one device's:
        :func:`scancheck.kernels.tune.device_table`) gives ``n`` elements of ``dtype``: its
        first row whose range holds n, else its last; 256 threads at the default params where
        the table has no row for this variant and dtype."""
        rows = table.get(self.name, {}).get(as_dtype(dtype).name)
        if not rows:
            return 256, self.resolve_params(None)
        row = next((r for r in rows if n <= 2 ** r["up_to_log2"]), rows[-1])
        return row["block"], self.resolve_params(row["params"])

    def depth_bound(self, n: int, block: int, params: dict[str, int] | None = None) -> int:
        """Largest summation-tree depth of any output: closed form, else from the model."""
        resolved = self.resolve_params(params)
        if self.max_depth is not None:
            return self.max_depth(n, block, resolved)
        return int(self.build_model(n, block, resolved).metrics().output_depths.max())

    def build_model(self, n: int, block: int, params: dict[str, int] | None = None) -> Network:
        """The CPU model of this variant for ``n`` elements at ``block`` threads."""
        shape = {k: v for k, v in self.template_params(params).items()
                 if k not in self.layout_params}
        return self.model(n, block, **shape)

    def name_expression(self, entry: str, dtype: str, op: str | Operator,
                        params: dict[str, int]) -> str:
        """The C++ template instantiation of ``entry`` for this element type and operator."""
        if self.fixed_entry is not None:
            return self.fixed_entry
        oper = get_operator(op)
        args = [oper.cuda_element(dtype), oper.cuda_functor_type(dtype)]
        args += [str(params[k]) for k in self.params]
        return f"{entry}<{', '.join(args)}>"


# -- shared-memory sizes --------------------------------------------------------------


def _smem_elems(count: Callable[[int, dict], int]) -> Callable[[int, int, dict], int]:
    return lambda block, itemsize, params: count(block, params) * itemsize

def _lookback_smem(block: int, itemsize: int, params: dict) -> int:
    return lookback_smem(block, params["items"], itemsize, itemsize)


# -- host orchestration ---------------------------------------------------------------


@dataclass
class Launch:
    """Everything a launcher needs: the compiled kernels, the arrays and the launch shape.

    Scratch arrays (block sums, tile flags, counters) are allocated on the first run
    and reused, zeroed where the algorithm needs zeros, so repeated runs time only
    the scan itself.
    """

    variant: Variant
    kernels: dict[str, Any]
    x: Any
    out: Any
    n: int
    block: int
    params: dict[str, int]
    smem: int
    _scratch: dict[str, Any] = field(default_factory=dict)
    #: Launches so far on this Launch's scratch (kernels that tag their status by launch).
    epoch: int = 0

    @property
    def element_bytes(self) -> int:
        """Bytes of one element as a kernel sees it (a row of x for pair types)."""
        return self.x.itemsize * self.x[0].size

    def run(self, entry: str, grid: int, args: tuple, smem: int | None = None) -> None:
        self.kernels[entry]((grid,), (self.block,), args,
                            shared_mem=self.smem if smem is None else smem)

    def scratch(self, key: str, count: int, dtype: Any = None, zero: bool = False) -> Any:
        """A device array of ``count`` elements (of x's element type unless ``dtype``)."""
        import cupy as cp

        arr = self._scratch.get(key)
        if arr is None:
            if dtype is None:
                arr = cp.empty((count,) + self.x.shape[1:], dtype=self.x.dtype)
            else:
                arr = cp.empty(count, dtype=dtype)
            self._scratch[key] = arr
        if zero:
            arr.fill(0)
        return arr

    def __call__(self) -> Any:
        self.variant.launch(self)
        return self.out


def _launch_single(lc: Launch) -> None:
    lc.run(lc.variant.entries[0], 1, (lc.x, lc.out, np.int64(lc.n)))


def _blocks(n: int, per_block: int) -> int:
    return -(-n // per_block)


def _levels(n: int, block: int) -> int:
    """Levels of the recursive scan: block scans until one block remains."""
    levels = 1
    while n > block:
        n, levels = _blocks(n, block), levels + 1
    return levels


def _launch_hierarchical(lc: Launch) -> None:
    nb = _blocks(lc.n, lc.block)
    sums = lc.scratch("block_sums", nb)
    k1, k2, k3 = lc.variant.entries
    lc.run(k1, nb, (lc.x, lc.out, sums, np.int64(lc.n)))
    lc.run(k2, 1, (sums, np.int64(nb)))
    lc.run(k3, nb, (lc.out, sums, np.int64(lc.n)))


def _launch_recursive(lc: Launch) -> None:
    level_in, sizes, prefixes = lc.x, [lc.n], [lc.out]
    while True:
        m = sizes[-1]
        nb = _blocks(m, lc.block)
        sums = lc.scratch(f"sums{len(sizes) - 1}", nb)
        lc.run("recursive_level", nb, (level_in, prefixes[-1], sums, np.int64(m)))
        if nb == 1:
            break
        sizes.append(nb)
        prefixes.append(lc.scratch(f"prefix{len(sizes) - 1}", nb))
        level_in = sums
    for lv in range(len(sizes) - 2, -1, -1):
        m = sizes[lv]
        lc.run("recursive_add", _blocks(m, lc.block), (prefixes[lv], prefixes[lv + 1],
                                                        np.int64(m), np.int32(lc.block)))


def _launch_chained(lc: Launch) -> None:
    import cupy as cp

    nb = _blocks(lc.n, lc.block)
    counter = lc.scratch("counter", 1, cp.uint32, zero=True)
    flags = lc.scratch("flags", nb, cp.int32, zero=True)
    incl = lc.scratch("inclusive", nb)
    lc.run("chained", nb, (lc.x, lc.out, np.int64(lc.n), counter, incl, flags))


def _launch_lookback(lc: Launch) -> None:
    # Zeroed once: the kernel resets its counter and each launch takes the next epoch, so
    # earlier launches' tile flags read as invalid (no fill kernels before each launch).
    # The arguments are built once too: at 2^16..2^20 elements the host's time to launch
    # is a good part of the time measured.
    lc.epoch = lc.epoch + 1 if lc.epoch < _MAX_EPOCH else 1
    if lc.epoch == 1:
        lc._scratch["lookback args"] = _lookback_args(lc)
    nb, args = lc._scratch["lookback args"]
    lc.run("decoupled_lookback", nb, (*args, np.uint32(lc.epoch)))


def _lookback_args(lc: Launch) -> tuple[int, tuple]:
    """The grid and the look-back's arguments but the epoch, its status arrays zeroed."""
    import cupy as cp

    nb = _blocks(lc.n, lc.block * lc.params["items"])
    counter = lc.scratch("counter", 1, cp.uint32, zero=True)
    if lc.element_bytes in (4, 8):  # flag and value packed in one 8- or 16-byte word
        words = lc.scratch("status", nb * lc.element_bytes // 4, cp.uint64, zero=True)
        flags = agg = incl = lc.scratch("unused", 1, cp.int32)
    else:
        flags = lc.scratch("flags", nb, cp.int32, zero=True)
        agg, incl = lc.scratch("aggregates", nb), lc.scratch("inclusives", nb)
        words = lc.scratch("unused", 1, cp.uint64)
    return nb, (lc.x, lc.out, np.int64(lc.n), counter, flags, agg, incl, words,
                np.int64(prefetch_tiles(lc)), np.uint32(lc.params["backoff_ns"]),
                np.int32(lc.params["span"]))


def prefetch_tiles(lc: Launch) -> int:
    """Tiles ahead of its own that each look-back tile asks L2 for: ``prefetch_kib`` of
    input, but never over an eighth of the device's L2 (lines evicted before their loads
    come are read twice: float64 at 2^28 on an H100, 50 MB of L2, ran at 0.97 x memcpy
    with 8.6 MB ahead and at 0.69 with 26 MB), in whole tiles."""
    import cupy as cp

    tile_bytes = lc.block * lc.params["items"] * lc.element_bytes
    ahead = min(lc.params["prefetch_kib"] * 1024, device_l2_bytes(cp.cuda.Device().id) // 8)
    return ahead // tile_bytes


#: Epochs run 1.._MAX_EPOCH: a tile flag stores 2 * epoch + 1 in 32 bits.
_MAX_EPOCH = 2**31 - 1


# -- the registry ---------------------------------------------------------------------

VARIANTS: dict[str, Variant] = {
    v.name: v
    for v in (
        Variant(
            "hillis_steele_inplace", "hillis_steele_inplace.cu", ("hillis_steele_inplace",),
            inclusive=True, scope="block", model=models.build_hillis_steele_inplace,
            launch=_launch_single, capacity=lambda b, p: b, smem=_smem_elems(lambda b, p: b),
            racy=4, doc="seed 001 algorithm 1: one buffer, no temporary - the race to catch",
        ),
        Variant(
            "hillis_steele_double", "hillis_steele_double.cu", ("hillis_steele_double",),
            inclusive=False, scope="block", model=models.build_hillis_steele_double,
            launch=_launch_single, capacity=lambda b, p: b, smem=_smem_elems(lambda b, p: 2 * b),
            doc="seed 001 algorithm 2: double-buffered, exclusive",
        ),
        Variant(
            "kogge_stone", "kogge_stone.cu", ("kogge_stone",), inclusive=True, scope="block",
            model=models.build_kogge_stone, launch=_launch_single, capacity=lambda b, p: b,
            smem=_smem_elems(lambda b, p: b), doc="seed 002 11.2: temporary and two barriers",
        ),
        Variant(
            "brent_kung", "brent_kung.cu", ("brent_kung",), inclusive=True, scope="block",
            model=models.build_brent_kung, launch=_launch_single, capacity=lambda b, p: 2 * b,
            smem=_smem_elems(lambda b, p: 2 * b), doc="seed 002 11.3: reduction and reverse trees",
        ),
        Variant(
            "blelloch", "blelloch.cu", ("blelloch",), inclusive=False, scope="block",
            model=models.build_blelloch, launch=_launch_single, capacity=lambda b, p: 2 * b,
            smem=_smem_elems(lambda b, p: 2 * b), doc="seed 000: up-sweep, down-sweep",
            operators=(*KERNEL_OPERATORS, "segmented_add"),
        ),
        Variant(
            "blelloch_bcf", "blelloch_bcf.cu", ("blelloch_bcf",), inclusive=False, scope="block",
            model=models.build_blelloch, launch=_launch_single, capacity=lambda b, p: 2 * b,
            smem=_smem_elems(lambda b, p: 2 * b + (2 * b >> 5)),
            doc="Blelloch with bank-conflict-free padding (GPU Gems 3, 39.2.3)",
        ),
        Variant(
            "coarsened", "coarsened.cu", ("coarsened",), inclusive=True, scope="block",
            model=models.build_coarsened, launch=_launch_single,
            capacity=lambda b, p: b * p["coarse"],
            smem=_smem_elems(lambda b, p: b * p["coarse"]), params={"coarse": (4, 1, 2, 8, 16)},
            doc="seed 002 11.4: sequential runs, Kogge-Stone of run totals, add back",
        ),
        Variant(
            "warp_shuffle", "warp_shuffle.cu", ("warp_shuffle",), inclusive=True, scope="block",
            model=models.build_warp_shuffle, launch=_launch_single, capacity=lambda b, p: b,
            smem=_smem_elems(lambda b, p: 32), min_block=32, block_multiple=32,
            doc="seed 004 task 3: __shfl_up_sync within warps, warp sums in shared memory",
        ),
        Variant(
            "recurrence_float2", "recurrence_float2.cu", ("scan_recurrence_float2",),
            inclusive=True, scope="block", model=models.build_warp_shuffle,
            launch=_launch_single, capacity=lambda b, p: b, smem=_smem_elems(lambda b, p: 32),
            min_block=32, block_multiple=32, operators=("recurrence",), dtypes=("float32",),
            fixed_entry="scan_recurrence_float2",
            doc="seed 004 task 4 as described: float2 pairs and recurrence_op",
        ),
        Variant(
            "hierarchical", "hierarchical.cu",
            ("hierarchical_block_scan", "hierarchical_scan_sums", "hierarchical_add"),
            inclusive=True, scope="grid", model=models.build_hierarchical,
            launch=_launch_hierarchical, capacity=None, smem=_smem_elems(lambda b, p: 33),
            min_block=32, block_multiple=32,
            # two warp-shuffle block scans (11 each), the serial carry over chunks of sums
            max_depth=lambda n, b, p: _blocks(_blocks(n, b), b) + 24,
            doc="seed 004 task 2: block scans, scan of block sums, add back",
        ),
        Variant(
            "recursive", "recursive.cu", ("recursive_level", "recursive_add"), inclusive=False,
            scope="grid", model=models.build_recursive, launch=_launch_recursive, capacity=None,
            smem=_smem_elems(lambda b, p: 2 * b), min_block=2,
            # per level: a Hillis-Steele block scan, the block sum, the added offset
            max_depth=lambda n, b, p: _levels(n, b) * (b.bit_length() + 2),
            doc="seed 003: block scans and block sums level by level, offsets back down",
        ),
        Variant(
            "chained", "chained.cu", ("chained",), inclusive=True, scope="grid",
            model=models.build_chained, launch=_launch_chained, capacity=None,
            smem=_smem_elems(lambda b, p: 33), min_block=32, block_multiple=32,
            max_depth=lambda n, b, p: _blocks(n, b) + 12,  # one combine per tile in the chain
            doc="seed 002 11.6: single pass, each tile waits for its predecessor (safe order)",
        ),
        Variant(
            "decoupled_lookback", "decoupled_lookback.cu", ("decoupled_lookback",),
            inclusive=True, scope="grid", model=models.build_decoupled_lookback,
            launch=_launch_lookback, capacity=None, smem=_lookback_smem, min_block=32,
            block_multiple=32, params={"items": (8, 1, 2, 4, 16, 32, 64), "hoist": (0, 1)},
            # hoist=1 issues a thread's 16-byte loads all before its stores to shared memory
            # (kernels/decoupled_lookback.cu's load_striped): the same values, moved sooner.
            layout_params=("hoist",), deterministic=False,
            # An L2 prefetch this many KiB of input ahead: 8-byte elements gained 2-8% at
            # 2^24..2^30, 4-byte ones lost 1-3% but at 2^30 (one H100): the tuner chooses.
            # A pause between polls of the look-back, in ns (0: none), as CUB's tunings of
            # the look-back's wait have per architecture: the tuner chooses too.
            runtime_params={"prefetch_kib": (0, 6144), "backoff_ns": (0, 200), "span": (1, 2)},
            operators=(*KERNEL_OPERATORS, "logaddexp"),
            max_depth=lambda n, b, p: _blocks(n, b * p["items"]) + p["items"] + 16,
            # A look-back of 64 predecessors a round (span 2) only where tiles stream fastest:
            # on one H100 it lost 0-2% at 2^28 and 2^30 to span 1, where the chain of
            # inclusive prefixes keeps ahead of DRAM; faster memory may not.
            candidates=tuple((b, {"items": i, "hoist": h, "prefetch_kib": k, "backoff_ns": w,
                                  "span": s})
                             for b in (64, 128, 256, 512) for i in (4, 8, 16, 32, 64)
                             for h in (0, 1) for k in (0, 6144) for w in (0, 200)
                             for s in ((1, 2) if b in (128, 256) and i in (16, 32) else (1,))),
            doc="Merrill & Garland 2016: single pass, decoupled look-back",
        ),
    )
}


def get_variant(name: str | Variant) -> Variant:
    """Look a variant up by name, raising a ValueError that lists the known ones."""
    if isinstance(name, Variant):
        return name
    try:
        return VARIANTS[name]
    except KeyError:
        raise ValueError(f"variant={name!r} is unknown; allowed: {', '.join(VARIANTS)}") from None

def instantiations(variant: Variant, params: dict[str, int] | None = None) -> list[str]:
    """Name expressions of a variant: each entry at each dtype and operator, and at
    ``params`` if given, else at every allowed parameter value."""
    combos = [variant.resolve_params(params)] if params is not None else _param_combos(variant)
    exprs = []
    for op in variant.operators:
        oper = OPERATORS[op]
        for dt in variant.dtypes:
            if dt not in oper.dtypes:
                continue
            for combo in combos:
                for entry in variant.entries:
                    exprs.append(variant.name_expression(entry, dt, oper, combo))
    return sorted(set(exprs))


def _param_combos(variant: Variant) -> list[dict[str, int]]:
    combos: list[dict[str, int]] = [{}]
    for key, values in variant.params.items():
        combos = [{**c, key: v} for c in combos for v in values]
    return combos
