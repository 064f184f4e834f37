"""Benchmarks: scan bandwidth on the GPU against device memcpy, and exact-oracle throughput.

Every figure is a ratio to a reference measured in the same run: the GPU table to a
device-to-device copy of the same bytes, the oracle to mpmath's running sum.  GPU
times come from CUDA events after warm-up, the median of many runs; bandwidth
counts bytes read plus bytes written (2 * n * itemsize for a scan and for a copy).
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

GRID_VARIANTS = ("hierarchical", "recursive", "chained", "decoupled_lookback")
#: Decoupled look-back configurations tried; the table shows each.
LOOKBACK_CONFIGS = ((256, {"items": 8}), (256, {"items": 16}), (512, {"items": 8}),
                    (128, {"items": 16}))


@dataclass
class Row:
    n: int
    dtype: str
    impl: str
    ms: float
    gbps: float
    ratio: float

    def as_dict(self) -> dict[str, object]:
        return {"n": f"2^{int(np.log2(self.n))}", "dtype": self.dtype, "implementation": self.impl,
                "median ms": self.ms, "GB/s": self.gbps, "x memcpy": self.ratio}


def time_gpu(fn: Callable[[], Any], warmup: int = 3, reps: int = 20) -> float:
    """Median milliseconds of ``fn`` on the current stream, timed with CUDA events."""
    import cupy as cp

    for _ in range(warmup):
        fn()
    cp.cuda.Device().synchronize()
    start, end = cp.cuda.Event(), cp.cuda.Event()
    times = []
    for _ in range(reps):
        start.record()
        fn()
        end.record()
        end.synchronize()
        times.append(cp.cuda.get_elapsed_time(start, end))
    return statistics.median(times)


def _references(x: Any, out: Any) -> dict[str, Callable[[], Any]]:
    """Library scans to compare with, each only where its library is installed."""
    import cupy as cp

    refs: dict[str, Callable[[], Any]] = {}
    try:
        from cupy._core import _accelerator

        def with_accel(names: list[str]) -> Callable[[], Any]:
            def run() -> Any:
                saved = _accelerator.get_routine_accelerators()
                _accelerator.set_routine_accelerators(names)
                try:
                    return cp.cumsum(x, out=out)
                finally:
                    _accelerator.set_routine_accelerators(saved)

            return run

        refs["cupy.cumsum (CUB)"] = with_accel(["cub"])
        refs["cupy.cumsum (no CUB)"] = with_accel([])
    except ImportError:
        refs["cupy.cumsum"] = lambda: cp.cumsum(x, out=out)
    try:
        import torch

        tx = torch.from_dlpack(x)
        tout = torch.from_dlpack(out)
        refs["torch.cumsum"] = lambda: torch.cumsum(tx, 0, out=tout)
    except ImportError:
        pass
    return refs


def gpu_table(sizes: tuple[int, ...] = (2**20, 2**24, 2**28),
              dtypes: tuple[str, ...] = ("float32", "float64"), reps: int = 20) -> list[Row]:
    """Median time and bandwidth of every grid variant and library scan, against memcpy."""
    import cupy as cp

    from .progress import Progress

    rows: list[Row] = []
    with Progress() as progress:
        task = progress.task("bench", len(dtypes) * len(sizes))
        for dtype in dtypes:
            for n in sizes:
                what = f"{dtype} n=2^{n.bit_length() - 1}"
                task.start(what)
                rows.extend(_bench_size(n, dtype, reps))
                cp.get_default_memory_pool().free_all_blocks()
                task.finish(what, "timed")
    return rows


def _bench_size(n: int, dtype: str, reps: int) -> list[Row]:
    import cupy as cp

    from .kernels.launch import plan

    x = cp.random.default_rng(0).random(n, dtype=np.float64).astype(dtype)
    out = cp.empty_like(x)
    nbytes = 2 * x.nbytes
    copy_ms = time_gpu(lambda: cp.copyto(out, x), reps=reps)
    timed: list[tuple[str, float]] = [("device memcpy", copy_ms)]
    for name in GRID_VARIANTS:
        configs = LOOKBACK_CONFIGS if name == "decoupled_lookback" else ((256, None),)
        for block, params in configs:
            label = name if params is None else f"{name} b{block} {params}"
            timed.append((label, time_gpu(plan(x, name, "add", block, params, out=out), reps=reps)))
    for label, fn in _references(x, out).items():
        timed.append((label, time_gpu(fn, reps=reps)))
    return [Row(n, dtype, impl, ms, nbytes / ms / 1e6, copy_ms / ms) for impl, ms in timed]


def oracle_throughput(n: int = 1_000_000, mp_n: int = 20_000, reps: int = 5) -> list[dict]:
    """Exact-oracle elements per second on this CPU next to mpmath's running sum: float32
    data of every distribution, and float64 normal(0, 1) and wide data."""
    import mpmath

    from .engine.strategies import DISTRIBUTIONS, generate_data
    from .oracle.exact import exact_scan

    rng = np.random.default_rng(0)
    cases = {"float32 normal(0, 1)": rng.standard_normal(n).astype(np.float32)}
    cases.update({f"float32 {dist}": generate_data(rng, n, "float32", dist)
                  for dist in DISTRIBUTIONS})
    cases["float64 normal(0, 1)"] = rng.standard_normal(n)
    cases["float64 wide"] = generate_data(rng, n, "float64", "wide")
    small = rng.integers(0, 1000, mp_n).astype(np.float32).tolist()
    t0 = time.perf_counter()
    acc = mpmath.mpf(0)
    for v in small:
        acc += v
        float(acc)
    mp_rate = mp_n / (time.perf_counter() - t0)
    rows = [{"input": "mpmath running sum (float32 ints)", "elements/s": mp_rate, "x mpmath": 1.0}]
    exact_scan(cases["float32 normal(0, 1)"][:100])  # the first call compiles (or loads) it
    for label, x in cases.items():
        best = min(_seconds(exact_scan, x) for _ in range(reps))
        rows.append({"input": f"exact_scan, {label}", "elements/s": n / best,
                     "x mpmath": n / best / mp_rate})
    return rows


#: The device oracle's benchmark data: (label, dtype, distribution of strategies.generate_data).
DEVICE_ORACLE_CASES = (("float32 normal(0, 1)", "float32", "normal"),
                       ("float32 integers in [0, 1000)", "float32", "integers"),
                       ("float32 wide (exponents over the range)", "float32", "wide"),
                       ("float64 normal(0, 1)", "float64", "normal"),
                       ("float64 wide", "float64", "wide"))


def device_oracle_throughput(sizes: tuple[int, ...] = (2**24, 2**28), reps: int = 10) -> list[dict]:
    """The exact oracle on the GPU, whole (exponent pass, width, scan, rounding), against a
    device copy and torch.cumsum of the same array timed in the same run."""
    import cupy as cp

    from .engine.strategies import generate_data

    rows = []
    for label, dtype, dist in DEVICE_ORACLE_CASES:
        for n in sizes:
            if dist == "normal":
                x = cp.random.default_rng(0).standard_normal(n, dtype=cp.float64).astype(dtype)
            else:  # generated on the host once, tiled: the oracle's speed, not the generator's
                part = generate_data(np.random.default_rng(0), min(n, 2**22), dtype, dist)
                x = cp.tile(cp.asarray(part), -(-n // part.size))[:n]
            rows.append({"input": label, "n": f"2^{n.bit_length() - 1}", **_time_oracle(x, reps)})
            del x
            cp.get_default_memory_pool().free_all_blocks()
    return rows


def _time_oracle(x: Any, reps: int) -> dict[str, float]:
    import cupy as cp

    from .oracle.exact_device import exact_scan_device

    out = cp.empty_like(x)
    copy_ms = time_gpu(lambda: cp.copyto(out, x), reps=reps)
    oracle_ms = time_gpu(lambda: exact_scan_device(x), reps=reps)
    row = {"oracle ms": oracle_ms, "elements/s": x.size / oracle_ms * 1e3,
           "x memcpy time": oracle_ms / copy_ms}
    try:
        import torch
    except ImportError:
        return row
    tx = torch.from_dlpack(x)
    torch_ms = time_gpu(lambda: torch.cumsum(tx, 0), reps=reps)
    row.update({"torch.cumsum ms": torch_ms, "x torch.cumsum time": oracle_ms / torch_ms})
    return row


def _seconds(fn: Callable[..., Any], *args: Any) -> float:
    t0 = time.perf_counter()
    fn(*args)
    return time.perf_counter() - t0
