"""Benchmarks: scan bandwidth on the GPU against device memcpy, and exact-oracle throughput.

Every figure is a ratio to a reference measured in the same run: the GPU table to a
device-to-device copy of the same bytes (and torch.cumsum and CUB beside it), the device
oracle to torch.cumsum, the CPU oracle to mpmath's running sum.  GPU
times come from CUDA events after warm-up, the median of many runs; bandwidth
counts bytes read plus bytes written (2 * n * itemsize for a scan and for a copy).
"""

from __future__ import annotations

import functools
import statistics
import time
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np

#: The variant whose launches are tuned and benchmarked against the libraries.
TUNED_VARIANT = "decoupled_lookback"
BENCH_DTYPES = ("float32", "float64", "int32", "int64")


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
    """torch.cumsum and CuPy's CUB scan of ``x`` into ``out`` (same dtype), each only where
    its library is installed."""
    import cupy as cp

    refs: dict[str, Callable[[], Any]] = {}
    try:
        import torch

        tx, tout = torch.from_dlpack(x), torch.from_dlpack(out)
        refs["torch"] = lambda: torch.cumsum(tx, 0, dtype=tx.dtype, out=tout)
    except ImportError:
        pass
    try:
        from cupy._core import _accelerator

        def cub() -> Any:
            saved = _accelerator.get_routine_accelerators()
            _accelerator.set_routine_accelerators(["cub"])
            try:
                return cp.cumsum(x, dtype=x.dtype, out=out)
            finally:
                _accelerator.set_routine_accelerators(saved)

        refs["cub"] = cub
    except ImportError:
        pass
    return refs


def _bench_input(n: int, dtype: str) -> Any:
    """n values of ``dtype`` on the device: uniform [0, 1) floats, integers in [0, 4)."""
    import cupy as cp

    rng = cp.random.default_rng(0)
    if dtype == "float32":
        return rng.random(n, dtype=cp.float32)
    if dtype == "float64":
        return rng.random(n, dtype=cp.float64)
    return (rng.random(n, dtype=cp.float32) * 4).astype(dtype)


def _fits(n: int, dtype: str) -> bool:
    """Whether input, output and the libraries' scratch of n ``dtype`` values fit in free
    device memory (2^30 float64 needs about 20 GiB)."""
    import cupy as cp

    cp.get_default_memory_pool().free_all_blocks()
    free, _ = cp.cuda.runtime.memGetInfo()
    return free > 3.5 * n * np.dtype(dtype).itemsize + 2**30


def measure(n: int, dtype: str, configs: list[tuple[int, dict[str, int]]],
            reps: int = 20) -> dict[str, Any]:
    """Median ms of memcpy, torch.cumsum, CuPy's CUB scan and :data:`TUNED_VARIANT` at each
    (block, params) in ``configs``, all on one array in one run; a launch the device
    refuses, or a library that fails, is timed as None with the reason."""
    import cupy as cp

    from .core.cuda import LaunchError
    from .kernels.launch import plan

    x = _bench_input(n, dtype)
    out = cp.empty_like(x)
    res: dict[str, Any] = {"variant": TUNED_VARIANT, "dtype": dtype, "log2_n": n.bit_length() - 1,
                           "memcpy_ms": time_gpu(lambda: cp.copyto(out, x), reps=reps)}
    for name, fn in _references(x, out).items():
        try:
            res[f"{name}_ms"] = time_gpu(fn, reps=reps)
        except Exception as exc:  # a library's refusal is a row's note, not the bench's end
            res[f"{name}_ms"], res[f"{name}_error"] = None, repr(exc)[:200]
    timed = []
    for block, params in configs:
        row: dict[str, Any] = {"block": block, "params": dict(params)}
        try:
            row["ms"] = time_gpu(plan(x, TUNED_VARIANT, "add", block, params, out=out), reps=reps)
        except LaunchError as exc:
            row["ms"], row["error"] = None, str(exc)
        timed.append(row)
    res["configs"] = timed
    return res


def tune_sweep(log2_sizes: tuple[int, ...], dtypes: tuple[str, ...] = BENCH_DTYPES,
               reps: int = 20) -> dict[str, Any]:
    """Every candidate launch of :data:`TUNED_VARIANT` at each (dtype, size) that fits,
    with memcpy, torch and CUB beside it: the input of ``python -m scancheck.kernels.tune``."""
    import cupy as cp

    from .kernels.registry import VARIANTS

    configs = list(VARIANTS[TUNED_VARIANT].candidates)
    skipped: list[str] = []
    results = [measure(2**k, dtype, configs, reps)
               for dtype, k in _sizes_that_fit("tune", dtypes, log2_sizes, skipped)]
    props = cp.cuda.runtime.getDeviceProperties(cp.cuda.Device().id)
    return {"device": props["name"].decode(), "date": time.strftime("%Y-%m-%d %H:%M UTC",
                                                                     time.gmtime()),
            "results": results, "skipped (memory)": skipped}


def sweep_rows(sweep: dict[str, Any]) -> list[dict[str, Any]]:
    """:func:`tune_sweep`'s timings as table rows: each launch's fraction of memcpy's time."""
    rows = []
    for r in sweep["results"]:
        row = {"dtype": r["dtype"], "n": f"2^{r['log2_n']}"}
        for c in r["configs"]:
            row[_config_label(c)] = None if c["ms"] is None else r["memcpy_ms"] / c["ms"]
        for lib in ("torch", "cub"):
            row[lib] = r[f"{lib}_ms"] and r["memcpy_ms"] / r[f"{lib}_ms"] if f"{lib}_ms" in r \
                else None
        rows.append(row)
    return rows


def _config_label(cfg: dict[str, Any]) -> str:
    return f"b{cfg['block']} " + " ".join(f"{k}={v}" for k, v in cfg["params"].items())


def _gbps(n: int, dtype: str, ms: float | None) -> float | None:
    return None if ms is None else 2 * n * np.dtype(dtype).itemsize / ms / 1e6


def speed_row(res: dict[str, Any]) -> dict[str, Any]:
    """One table row from :func:`measure`'s result at a single (tuned) config: each
    implementation's GB/s (bytes read plus written) and its fraction of memcpy's."""
    n, dtype, copy = 2 ** res["log2_n"], res["dtype"], res["memcpy_ms"]
    cfg = res["configs"][0]
    row: dict[str, Any] = {"dtype": dtype, "n": f"2^{res['log2_n']}",
                           "config": _config_label(cfg)}
    for label, ms in (("ours", cfg.get("ms")), ("torch", res.get("torch_ms")),
                      ("CUB", res.get("cub_ms")), ("memcpy", copy)):
        row[f"{label} GB/s"] = _gbps(n, dtype, ms)
        if label != "memcpy":
            row[f"{label} x memcpy"] = None if ms is None else copy / ms
    return row


def speed_table(log2_sizes: tuple[int, ...], dtypes: tuple[str, ...] = BENCH_DTYPES,
                reps: int = 20, oracle_dists: tuple[str, ...] | None = None,
                oracle_reps: int = 5) -> list[dict[str, Any]]:
    """Per (dtype, size): the tuned look-back, torch, CUB and memcpy (:func:`speed_row`), and
    for float dtypes the device exact oracle's time on each data distribution as a multiple
    of torch.cumsum's time at that size (all distributions of the strategies by default)."""
    from .engine.strategies import DISTRIBUTIONS
    from .kernels.registry import VARIANTS

    dists = DISTRIBUTIONS if oracle_dists is None else oracle_dists
    var = VARIANTS[TUNED_VARIANT]
    rows = []
    for dtype, k in _sizes_that_fit("bench", dtypes, log2_sizes, []):
        res = measure(2**k, dtype, [var.tuned(dtype, 2**k)], reps)
        row = speed_row(res)
        for dist in dists:  # the oracle is of float data; "-" in the integer rows
            row[f"oracle/torch {dist}"] = "-"
            if dtype in ("float32", "float64") and res.get("torch_ms"):
                ms = _oracle_ms(2**k, dtype, dist, oracle_reps)
                row[f"oracle/torch {dist}"] = None if ms is None else ms / res["torch_ms"]
        rows.append(row)
    return rows


def _sizes_that_fit(name: str, dtypes: tuple[str, ...], log2_sizes: tuple[int, ...],
                    skipped: list[str]) -> Iterator[tuple[str, int]]:
    """Each (dtype, log2 n) whose arrays fit in free device memory, under one progress task
    named ``name``; the others are appended to ``skipped`` and shown as skipped."""
    from .progress import Progress

    with Progress() as progress:
        task = progress.task(name, len(dtypes) * len(log2_sizes))
        for dtype in dtypes:
            for k in log2_sizes:
                what = f"{dtype} n=2^{k}"
                task.start(what)
                if not _fits(2**k, dtype):
                    skipped.append(what)
                    task.finish(what, "skipped: over free device memory")
                    continue
                yield dtype, k
                task.finish(what, "timed")


@functools.cache
def _oracle_data(dtype: str, dist: str) -> np.ndarray:
    """2^22 host values of ``dist``, drawn once per run (the generator is slow)."""
    from .engine.strategies import generate_data

    return generate_data(np.random.default_rng(0), 2**22, dtype, dist)


def _oracle_ms(n: int, dtype: str, dist: str, reps: int) -> float | None:
    """Median ms of the device exact oracle on n values of ``dist`` (generated on the host,
    2^22 at most, tiled: the oracle's speed, not the generator's); None where it runs out
    of device memory."""
    import cupy as cp

    from .oracle.exact_device import exact_scan_device

    part = _oracle_data(dtype, dist)[:n]
    x = cp.tile(cp.asarray(part), -(-n // part.size))[:n]
    try:
        return time_gpu(lambda: exact_scan_device(x), warmup=1, reps=reps)
    except cp.cuda.memory.OutOfMemoryError:
        return None


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
