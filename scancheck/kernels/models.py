"""CPU schedule models of every scan variant: the executable specification of its kernel.

Each ``build_*`` function returns the :class:`~scancheck.kernels.network.Network` of combines
its CUDA kernel in ``kernels/`` performs for ``n`` elements at ``block`` threads per
block, in the same order and with the same operands on each side, so that on a GPU
the kernel's output must equal the model's bit for bit.  Thread ``g`` of the
network is global thread ``blockIdx * block + threadIdx`` of the kernel.
"""

from __future__ import annotations

import numpy as np

from .network import GLOBAL, REGISTER, SHARED, WARP, Network


def _grid(nb: int, block: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Block index, thread index and global thread id of every thread, shape (nb, block)."""
    b, t = np.meshgrid(np.arange(nb), np.arange(block), indexing="ij")
    return b, t, b * block + t


def _levels(block: int) -> list[int]:
    """Strides 1, 2, 4, ... below ``block``."""
    return [1 << k for k in range(max(block - 1, 0).bit_length())]


# -- Hillis-Steele (seed 001) -------------------------------------------------------


def build_hillis_steele_inplace(n: int, block: int) -> Network:
    """In-place Hillis-Steele, one buffer (racy): x[t] = x[t-d] (+) x[t] between barriers."""
    net = Network(n, inclusive=True)
    x = net.alloc("x", block, SHARED)
    t = np.arange(block)
    net.load("load", x + t, t, t)
    for d in _levels(block):
        m = t >= d
        net.op(f"d={d}", x + t[m], x + t[m], t[m], a=x + t[m] - d)
    net.store("store", x + t, t, t, barrier=True)
    return net


def build_hillis_steele_double(n: int, block: int) -> Network:
    """Double-buffered Hillis-Steele, exclusive, exactly as seed 001 traces it."""
    net = Network(n, inclusive=False)
    buf = net.alloc("temp", 2 * block, SHARED)
    t = np.arange(block)
    _hillis_steele_exclusive(net, buf, block, np.zeros(block, dtype=np.int64), t, t, t - 1,
                             snapshots="temp")
    net.store("store", buf + _hs_final(block) * block + t, t, t, barrier=False)
    return net


def _hs_final(block: int) -> int:
    """The buffer index (pout) that holds the result after the double-buffered loop."""
    return len(_levels(block)) % 2


def _hillis_steele_exclusive(
    net: Network, buf: int, block: int, bofs: np.ndarray, t: np.ndarray, g: np.ndarray,
    src: np.ndarray, src_base: int | None = None, src_n: int | None = None,
    snapshots: str | None = None,
) -> None:
    """Seed 001's double-buffered exclusive scan of each block (``bofs`` = block offsets in buf).

    Thread t loads element ``src`` (t-1 of its block; t = 0 loads the identity).  With
    ``snapshots`` (the buffer's region name), both rows are recorded after every round.
    """
    src_base = net.IN if src_base is None else src_base
    src_n = net.n if src_n is None else src_n
    ok = (t > 0) & (src < src_n)
    net.op("load", buf + bofs + t, np.where(ok, src_base + np.maximum(src, 0), net.IDENT), g)
    if snapshots:
        net.snapshot("load", snapshots)
    pout = 0
    for d in _levels(block):
        pout, pin = 1 - pout, pout
        out_at = buf + bofs + pout * block + t
        in_at = buf + bofs + pin * block + t
        m = t >= d
        net.op(f"d={d}", out_at[m], in_at[m], g[m], a=in_at[m] - d)
        net.op(f"d={d} copy", out_at[~m], in_at[~m], g[~m], barrier=False)
        if snapshots:
            net.snapshot(f"offset={d}", snapshots)


# -- Kogge-Stone and Brent-Kung (seed 002) ------------------------------------------


def build_kogge_stone(n: int, block: int) -> Network:
    """Kogge-Stone, inclusive: a temporary and two barriers per stride (seed 002, 11.2)."""
    net = Network(n, inclusive=True)
    xy = net.alloc("XY", block, SHARED)
    tmp = net.alloc("temp", block, REGISTER)
    t = np.arange(block)
    net.load("load", xy + t, t, t)
    for d in _levels(block):
        m = t >= d
        net.op(f"d={d} read", tmp + t[m], xy + t[m], t[m], a=xy + t[m] - d)
        net.op(f"d={d} write", xy + t[m], tmp + t[m], t[m])
    net.store("store", xy + t, t, t)
    return net


def build_brent_kung(n: int, block: int) -> Network:
    """Brent-Kung, inclusive, 2*block elements: reduction tree then reverse tree (seed 002, 11.3)."""
    net = Network(n, inclusive=True)
    size = 2 * block
    xy = net.alloc("XY", size, SHARED)
    t = np.arange(block)
    net.load("load", xy + t, t, t)
    net.load("load hi", xy + t + block, t + block, t, barrier=False)
    stride = 1
    while stride <= block:
        idx = (t + 1) * 2 * stride - 1
        m = idx < size
        net.op(f"up {stride}", xy + idx[m], xy + idx[m], t[m], a=xy + idx[m] - stride)
        stride *= 2
    stride = size // 4
    while stride > 0:
        idx = (t + 1) * 2 * stride - 1
        m = idx + stride < size
        net.op(f"down {stride}", xy + idx[m] + stride, xy + idx[m] + stride, t[m], a=xy + idx[m])
        stride //= 2
    net.store("store", xy + t, t, t, barrier=True)
    net.store("store hi", xy + t + block, t + block, t)
    return net


# -- Blelloch (seed 000) ------------------------------------------------------------


def build_blelloch(n: int, block: int) -> Network:
    """Blelloch up-sweep / down-sweep, exclusive, 2*block elements (seed 000).

    The bank-conflict-free kernel pads its shared-memory addresses but performs the
    same combines, so it shares this model.
    """
    net = Network(n, inclusive=False)
    size = 2 * block
    tmp = net.alloc("temp", size, SHARED)
    reg = net.alloc("t", block, REGISTER)
    t = np.arange(block)
    net.load("load", tmp + 2 * t, 2 * t, t)
    net.load("load odd", tmp + 2 * t + 1, 2 * t + 1, t, barrier=False)
    offset = 1
    d = size >> 1
    while d > 0:
        m = t < d
        ai = offset * (2 * t[m] + 1) - 1
        bi = offset * (2 * t[m] + 2) - 1
        net.op(f"up d={d}", tmp + bi, tmp + bi, t[m], a=tmp + ai)
        offset *= 2
        d >>= 1
    net.snapshot("up-sweep", "temp")
    net.op("clear last", tmp + size - 1, net.IDENT, 0, barrier=False)
    d = 1
    while d < size:
        offset >>= 1
        m = t < d
        ai = offset * (2 * t[m] + 1) - 1
        bi = offset * (2 * t[m] + 2) - 1
        net.op(f"down d={d} save", reg + t[m], tmp + ai, t[m])
        net.op(f"down d={d} left", tmp + ai, tmp + bi, t[m], barrier=False)
        net.op(f"down d={d} right", tmp + bi, reg + t[m], t[m], a=tmp + bi, barrier=False)
        net.snapshot(f"down d={d}", "temp")
        d *= 2
    net.store("store", tmp + 2 * t, 2 * t, t, barrier=True)
    net.store("store odd", tmp + 2 * t + 1, 2 * t + 1, t)
    return net


# -- three-phase coarsened (seed 002, 11.4) -----------------------------------------


def build_coarsened(n: int, block: int, coarse: int = 4) -> Network:
    """Three-phase scan of ``coarse * block`` elements: per-thread, Kogge-Stone, add back."""
    if coarse < 1:
        raise ValueError(f"coarse={coarse} must be at least 1")
    net = Network(n, inclusive=True)
    sec = net.alloc("section", coarse * block, SHARED)
    tmp = net.alloc("temp", block, REGISTER)
    t = np.arange(block)
    for j in range(coarse):
        net.load(f"load {j}", sec + j * block + t, j * block + t, t, barrier=(j == 0))
    for i in range(1, coarse):
        at = sec + t * coarse + i
        net.op(f"phase 1, {i}", at, at, t, a=at - 1, barrier=(i == 1))
    last = sec + t * coarse + coarse - 1
    for d in _levels(block):
        m = t >= d
        net.op(f"phase 2 d={d} read", tmp + t[m], last[m], t[m], a=last[m] - d * coarse)
        net.op(f"phase 2 d={d} write", last[m], tmp + t[m], t[m])
    m = t > 0
    prev = sec + (t[m] - 1) * coarse + coarse - 1
    for i in range(coarse - 1):
        at = sec + t[m] * coarse + i
        net.op(f"phase 3, {i}", at, at, t[m], a=prev, barrier=(i == 0))
    for j in range(coarse):
        net.store(f"store {j}", sec + j * block + t, j * block + t, t, barrier=(j == 0))
    return net


# -- warp shuffle (seed 004) --------------------------------------------------------


def _warp_inclusive(net: Network, tag: str, v: int, y: int, lanes: np.ndarray, g: np.ndarray,
                    thread: np.ndarray | None = None) -> None:
    """``__shfl_up_sync`` inclusive scan of registers ``v + g`` within each warp
    (``thread``: the threads holding them, when register slots are not thread ids)."""
    thread = g if thread is None else thread
    for d in (1, 2, 4, 8, 16):
        m = lanes >= d
        # A shuffle syncs one warp, not the block: no barrier for the hazard analysis.
        net.op(f"{tag} shfl {d}", y + g[m], v + g[m] - d, thread[m], barrier=False)
        net.op(f"{tag} add {d}", v + g[m], v + g[m], thread[m], a=y + g[m], barrier=False)


def _block_scan_warps(net: Network, tag: str, nb: int, block: int, v: int) -> None:
    """Inclusive block scan of registers ``v`` (nb blocks of ``block`` threads), in place.

    Warps scan with shuffles, lane 31 writes its warp's total to shared memory, warp 0
    scans the totals, and warps after the first add the total before them.
    """
    y = net.alloc(f"{tag}.y", nb * block, REGISTER)
    sums = net.alloc(f"{tag}.warp_sums", nb * WARP, SHARED)
    b, t, g = _grid(nb, block)
    lane, warp = t % WARP, t // WARP
    _warp_inclusive(net, f"{tag} warp", v, y, lane.ravel(), g.ravel())
    m = lane == WARP - 1
    net.op(f"{tag} warp total", sums + b[m] * WARP + warp[m], v + g[m], g[m], barrier=False)
    _scan_warp_totals(net, tag, sums, nb, block)
    m = warp > 0
    net.op(f"{tag} add prefix", v + g[m], v + g[m], g[m], a=sums + b[m] * WARP + warp[m] - 1)


def _scan_warp_totals(net: Network, tag: str, sums: int, nb: int, block: int) -> None:
    """After a barrier, warp 0 of each block scans the 32 warp totals in ``sums`` in place
    (lanes past the last warp hold the identity)."""
    s = net.alloc(f"{tag}.s", nb * WARP, REGISTER)
    sy = net.alloc(f"{tag}.sy", nb * WARP, REGISTER)
    bw, lw = np.meshgrid(np.arange(nb), np.arange(WARP), indexing="ij")
    gw, sl = bw * block + lw, bw * WARP + lw  # warp 0's threads; slot = block*32 + lane
    nwarps = block // WARP
    net.op(f"{tag} totals load", s + sl, np.where(lw < nwarps, sums + sl, net.IDENT), gw)
    _warp_inclusive(net, f"{tag} totals", s, sy, lw.ravel(), sl.ravel(), thread=gw.ravel())
    mm = lw < nwarps
    net.op(f"{tag} totals store", sums + sl[mm], s + sl[mm], gw[mm], barrier=False)


def _check_warp_block(block: int) -> None:
    if block % WARP or block > 1024:
        raise ValueError(f"block={block} must be a multiple of {WARP} and at most 1024")


def build_warp_shuffle(n: int, block: int) -> Network:
    """Warp-shuffle scan, inclusive: ``__shfl_up_sync`` in warps, warp sums through shared memory."""
    net = Network(n, inclusive=True)
    v, _, t, _ = _tiles_scanned(net, "block", 1, block)
    net.store("store", v + t, t, t)
    return net


def _tiles_scanned(net: Network, tag: str, nb: int, block: int
                   ) -> tuple[int, np.ndarray, np.ndarray, np.ndarray]:
    """One element per thread loaded into register ``v`` and block-scanned with warps;
    returns ``v`` and the block, thread and global ids of :func:`_grid`."""
    _check_warp_block(block)
    v = net.alloc("v", nb * block, REGISTER)
    b, t, g = _grid(nb, block)
    net.load(f"{tag} load", v + g, g, g)
    _block_scan_warps(net, tag, nb, block, v)
    return v, b, t, g


# -- hierarchical three-kernel scan (seed 004, seed 002 11.5) -----------------------


def build_hierarchical(n: int, block: int) -> Network:
    """Block scans writing block sums; one block scans the sums in chunks; sums added back."""
    net = Network(n, inclusive=True)
    nb = -(-n // block)
    v, b, t, g = _tiles_scanned(net, "k1", nb, block)
    bsum = net.alloc("block_sums", nb, GLOBAL)
    net.store("k1 store", v + g, g, g)
    m = t == block - 1
    net.op("k1 block sum", bsum + b[m], v + g[m], g[m], barrier=False)
    _scan_block_sums(net, bsum, nb, block)
    net.snapshot("scanned block sums", "block_sums")
    m = (b > 0) & (g < n)
    net.op("k3 add", net.OUT + g[m], net.OUT + g[m], g[m], a=bsum + b[m] - 1)
    return net


def _scan_block_sums(net: Network, sums: int, count: int, block: int) -> None:
    """Kernel 2: one block scans ``count`` sums in place, chunk by chunk, carrying the total."""
    chunks = -(-count // block)
    v = net.alloc("k2.v", chunks * block, REGISTER)
    carry = net.alloc("k2.carry", block, REGISTER)
    cshared = net.alloc("k2.carry_shared", 1, SHARED)
    t = np.arange(block)
    net.op("k2 carry init", carry + t, net.IDENT, t)
    for c in range(chunks):
        idx = c * block + t
        ok = idx < count
        net.op(f"k2 load {c}", v + idx, np.where(ok, sums + np.minimum(idx, count - 1), net.IDENT), t)
        # One block: the scan addresses its registers as v + thread id.
        _block_scan_warps(net, f"k2.{c}", 1, block, v + c * block)
        net.op(f"k2 carry add {c}", v + idx, v + idx, t, a=carry + t, barrier=False)
        net.op(f"k2 store {c}", sums + idx[ok], v + idx[ok], t[ok], barrier=False)
        net.op(f"k2 carry out {c}", cshared, v + idx[-1], block - 1, barrier=False)
        net.op(f"k2 carry in {c}", carry + t, cshared, t)


# -- recursive multi-level scan (seed 003) ------------------------------------------


def build_recursive(n: int, block: int) -> Network:
    """Seed 003's recursive scan, exclusive: block scans and block sums level by level,
    then each level's scanned sums are added back as offsets, top level first.

    Snapshots ``prefix{l}``/``sums{l}`` after the up pass and ``offsets{l}`` after the
    down pass expose the seed's buffers level by level.
    """
    net = Network(n, inclusive=False)
    sizes = [n]
    while sizes[-1] > block:
        sizes.append(-(-sizes[-1] // block))
    prefix = [net.OUT] + [net.alloc(f"prefix{lv}", m, GLOBAL) for lv, m in enumerate(sizes) if lv]
    for lv in range(len(sizes)):
        net.regions.setdefault(f"prefix{lv}", (prefix[lv], sizes[lv], GLOBAL))
    sums = [net.alloc(f"sums{lv}", -(-m // block), GLOBAL) for lv, m in enumerate(sizes)]
    src = net.IN
    for lv, m in enumerate(sizes):
        nb = -(-m // block)
        buf = net.alloc(f"temp{lv}", nb * 2 * block, SHARED)
        b, t, g = _grid(nb, block)
        elem = b * block + t
        _hillis_steele_exclusive(net, buf, block, (b * 2 * block).ravel(), t.ravel(), g.ravel(),
                                 (elem - 1).ravel(), src, m)
        res = buf + b * 2 * block + _hs_final(block) * block + t
        ok = elem < m
        net.op(f"level {lv} store", prefix[lv] + elem[ok], res[ok], g[ok], barrier=False)
        last = t == block - 1
        el = elem[last]
        x_last = np.where(el < m, src + np.minimum(el, m - 1), net.IDENT)
        net.op(f"level {lv} block sum", sums[lv] + b[last], x_last, g[last], a=res[last],
               barrier=False)
        net.snapshot(f"prefix{lv}", f"prefix{lv}")
        net.snapshot(f"sums{lv}", f"sums{lv}")
        src = sums[lv]
    for lv in range(len(sizes) - 2, -1, -1):
        i = np.arange(sizes[lv])
        net.op(f"level {lv} add offsets", prefix[lv] + i, prefix[lv] + i, i,
               a=prefix[lv + 1] + i // block)
        net.snapshot(f"offsets{lv}", f"prefix{lv}")
    return net


# -- single-pass scans --------------------------------------------------------------


def build_chained(n: int, block: int) -> Network:
    """Single-pass chained scan: tile k waits for tile k-1's inclusive prefix (seed 002, 11.6).

    Tiles are numbered in the order blocks start (an atomic counter), so each waits
    only on one already running; the chain itself is a serial step.
    """
    net = Network(n, inclusive=True)
    nb = -(-n // block)
    v, b, t, g = _tiles_scanned(net, "tile", nb, block)
    incl = net.alloc("inclusive", nb, GLOBAL)
    lastg = g[:, -1]
    net.op("tile 0 publish", incl, v + lastg[0], lastg[0], barrier=False)
    if nb > 1:
        k = np.arange(1, nb)
        net.op("chain", incl + k, v + lastg[k], lastg[k], a=incl + k - 1, serial=True)
    m = b > 0
    net.op("add prefix", v + g[m], v + g[m], g[m], a=incl + b[m] - 1)
    net.store("store", v + g, g, g)
    return net


def build_decoupled_lookback(n: int, block: int, items: int = 8) -> Network:
    """Decoupled look-back (Merrill & Garland 2016): tiles of ``block * items`` elements.

    Within a tile: a sequential scan of each thread's items, a warp-shuffle scan of
    the thread totals, warp totals through shared memory.  The tile prefix is resolved
    here as the chain of inclusive prefixes; the kernel may instead fold aggregates of
    several predecessors, which changes rounding (never the tree-depth bound) and
    nothing at all for exact operators.
    """
    _check_warp_block(block)
    if items < 1:
        raise ValueError(f"items={items} must be at least 1")
    net = Network(n, inclusive=True)
    tile = block * items
    nb = -(-n // tile)
    it = net.alloc("items", nb * tile, REGISTER)
    agg = net.alloc("thread_totals", nb * block, REGISTER)
    y = net.alloc("y", nb * block, REGISTER)
    pre = net.alloc("thread_prefix", nb * block, REGISTER)
    wt = net.alloc("warp_totals", nb * WARP, SHARED)
    incl = net.alloc("inclusive", nb, GLOBAL)
    b, t, g = _grid(nb, block)
    lane, warp = t % WARP, t // WARP
    nwarps = block // WARP
    elem0 = b * tile + t * items
    for i in range(items):
        net.load(f"load {i}", it + g * items + i, elem0 + i, g, barrier=(i == 0))
    for i in range(1, items):
        net.op(f"thread scan {i}", it + g * items + i, it + g * items + i, g,
               a=it + g * items + i - 1, barrier=False)
    net.op("thread total", agg + g, it + g * items + items - 1, g, barrier=False)
    _warp_inclusive(net, "warp", agg, y, lane.ravel(), g.ravel())
    m = lane == WARP - 1
    net.op("warp total", wt + b[m] * WARP + warp[m], agg + g[m], g[m], barrier=False)
    _scan_warp_totals(net, "tile", wt, nb, block)
    # Thread prefix = (warp prefix or identity) (+) (lane-1's inclusive or identity).
    first = lane == 0
    net.op("lane prefix", y + g, np.where(first, net.IDENT, agg + g - 1), g)
    wpre = np.where(warp > 0, wt + b * WARP + warp - 1, net.IDENT)
    net.op("thread prefix", pre + g, y + g, g, a=wpre, barrier=False)
    tile_total = wt + np.arange(nb) * WARP + nwarps - 1
    net.op("tile 0 publish", incl, tile_total[0], 0, barrier=False)
    if nb > 1:
        k = np.arange(1, nb)
        net.op("look-back", incl + k, tile_total[k], k * block, a=incl + k - 1, serial=True)
    tp = np.where(b > 0, incl + b - 1, net.IDENT)
    net.op("tile prefix", pre + g, pre + g, g, a=tp)
    for i in range(items):
        net.op(f"add prefix {i}", it + g * items + i, it + g * items + i, g, a=pre + g,
               barrier=False)
    for i in range(items):
        net.store(f"store {i}", it + g * items + i, elem0 + i, g)
    return net
