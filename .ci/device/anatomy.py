"""Where the look-back's time goes on this device.  From the repo root on a GPU machine:

    python .ci/device/anatomy.py [--tuned] [LOG2 ...]        (default: 28 30)

For each dtype and size, the tuned launch and (without --tuned) its neighbours (8 to 32
values a thread, with and without the L2 prefetch), each as a fraction of a device-to-device
copy measured in the same run (x memcpy, median of 10):
  full     the look-back kernel as it is;
  nolook   the same kernel with its look-back left out (each tile's prefix the identity):
           what the tiles' loads, block scans and stores reach alone;
  copy     the tiles' loads and stores through the staging area only (no scan);
and a plain grid-stride int4 copy at three launch shapes.  full against nolook is the
look-back's cost; nolook against copy, the block scan's.  The variants are built from
kernels/decoupled_lookback.cu by text edits, in a temporary folder: nothing in the checkout
changes.  Their outputs are not checked (nolook's are not a scan).
"""

from __future__ import annotations

import argparse
import dataclasses
import functools
import sys
import tempfile
import time
from pathlib import Path

import cupy as cp
import numpy as np

from scancheck.core.cuda import expand_source
from scancheck.kernels.launch import plan
from scancheck.kernels.registry import VARIANTS
from scancheck.kernels.tune import device_table, time_gpu

LOOKBACK = "if (warp == 0) {\n    if (tile == 0) {"
LOADED = ("load_striped<In, ITEMS, HOIST>(stage_in, in, seg, n, full, Convert::pad());\n"
          "  __syncwarp();\n")
STORE_STAGED = ("  store_striped<Out, ITEMS>(out, reinterpret_cast<Out*>(stage_in), seg, n, "
                "full);\n  return tile;\n")

GRID_COPY = cp.RawKernel(r"""
extern "C" __global__ void grid_copy(const int4* __restrict__ a, int4* __restrict__ b,
                                     long long m) {
  for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < m;
       i += (long long)gridDim.x * blockDim.x)
    __stcs(&b[i], __ldcs(&a[i]));
}""", "grid_copy")


def variants(folder: Path) -> list[str]:
    """Register the nolook and copy variants of the look-back (sources in ``folder``)."""
    var = VARIANTS["decoupled_lookback"]
    src = expand_source(var.source)
    edits = {"nolook": src.replace(LOOKBACK, "if (false) {\n    if (tile == 0) {"),
             "copy": src.replace(LOADED, LOADED + STORE_STAGED)}
    names = []
    for kind, text in edits.items():
        if text == src:
            sys.exit(f"anatomy: kernels/{var.source} no longer has the text the {kind} variant "
                     f"edits")
        path = folder / f"anatomy_{kind}.cu"
        path.write_text(text)
        VARIANTS[path.stem] = dataclasses.replace(var, name=path.stem, source=str(path))
        names.append(path.stem)
    return names


def one(dtype: str, n: int, table, probes: list[str], sms: int, tuned_only: bool) -> None:
    """The lines of one dtype at n elements: the tuned launch, and its neighbours unless
    ``tuned_only``."""
    var = VARIANTS["decoupled_lookback"]
    x = cp.arange(n, dtype=dtype) % 7
    out = cp.empty_like(x)
    memcpy = time_gpu(functools.partial(cp.copyto, out, x), reps=10)
    m4 = x.nbytes // 16
    grid = []
    for block, per_sm in ((256, 8), (1024, 4), (512, 32)):
        blocks = min((m4 + block - 1) // block, sms * per_sm)
        ms = time_gpu(functools.partial(GRID_COPY, (blocks,), (block,), (x, out, np.int64(m4))),
                      reps=10)
        grid.append(f"{block}x{per_sm}/SM {memcpy / ms:.3f}")
    print(f"{dtype} 2^{n.bit_length() - 1}: memcpy {memcpy:.3f} ms; grid copy "
          f"{', '.join(grid)}", flush=True)
    block, params = var.tuned(dtype, n, table.rows)
    launches = [(block, dict(params))]
    shapes = (((128, 16), (256, 16), (256, 8), (512, 8)) if x.itemsize == 8 else
              ((128, 32), (256, 32), (256, 16), (512, 16)))
    for b, items in () if tuned_only else shapes:
        for prefetch in (0, 6144):
            launch = (b, {**params, "items": items, "hoist": 1, "prefetch_kib": prefetch})
            if launch not in launches:
                launches.append(launch)
    for b, p in launches:
        row = [f"{memcpy / time_gpu(plan(x, kernel, 'add', b, p, out=out, narrow=True), reps=10):.3f}"
               for kernel in ("decoupled_lookback", *probes)]
        tuned = " (tuned)" if (b, p) == launches[0] else ""
        print(f"  {b} x {p['items']}, prefetch {p['prefetch_kib']} KiB, hoist {p['hoist']}{tuned}: "
              f"full {row[0]}  nolook {row[1]}  copy {row[2]}", flush=True)


def main() -> None:
    cli = argparse.ArgumentParser(description="Where the look-back's time goes on this device.")
    cli.add_argument("--tuned", action="store_true", help="the tuned launch only")
    cli.add_argument("log2", nargs="*", type=int, default=[28, 30], help="sizes, as log2")
    args = cli.parse_args()
    sizes = args.log2
    table = device_table()
    sms = cp.cuda.Device().attributes["MultiProcessorCount"]
    name = cp.cuda.runtime.getDeviceProperties(0)["name"].decode()
    print(f"device {name} ({sms} SMs), launch table {table.source}", flush=True)
    t0 = time.time()
    with tempfile.TemporaryDirectory() as tmp:
        probes = variants(Path(tmp))
        for k in sizes:
            for dtype in ("float32", "float64", "int32", "int64"):
                one(dtype, 2**k, table, probes, sms, args.tuned)
                cp.get_default_memory_pool().free_all_blocks()
    print(f"total {time.time() - t0:.0f} s")


if __name__ == "__main__":
    main()
