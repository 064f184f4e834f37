"""Benchmarks: scan bandwidth on the GPU against device memcpy, and exact-oracle throughput.

Every figure is a ratio to a reference measured in the same run: the GPU table to a
device-to-device copy of the same bytes (and torch.cumsum and CUB beside it), the device
oracle to torch.cumsum, the CPU oracle to mpmath's running sum.  GPU
times come from CUDA events after warm-up, the median of many runs; bandwidth
counts bytes read plus bytes written (2 * n * itemsize for a scan and for a copy).
"""

from __future__ import annotations

import functools
import textwrap
import time
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np

from ...core.cuda import LaunchError
from ...kernels.tune import (
    TUNED_DTYPES,
    TUNED_VARIANTS,
    LaunchTable,
    current_device,
    time_gpu,
)
from ..tables import fit_columns, format_table

#: The variant whose launches are tuned and benchmarked against the libraries.
TUNED_VARIANT = TUNED_VARIANTS[0]
BENCH_DTYPES = TUNED_DTYPES
#: Timed runs of each scan after its warm-up, the median kept, unless told.
REPS = 20
#: The sizes (log2) the scans' table times unless told: past L2 and a launch's overhead from
#: 2**24; those over free device memory are skipped.
LOG2_SIZES = (16, 20, 24, 28, 30)
#: The widest a printed table may be: a terminal's.
WIDTH = 120
#: Launches a tuning run times in full at each (dtype, size), the fastest of one screening run
#: each: the slow ones (tiles of 256 elements at 2^30 take ten times memcpy's time) get no more.
SWEEP_KEEP = 16
#: The oracle's results are compared with the CPU oracle's bit for bit up to this size (the
#: values drawn, untiled; the GPU tests hold tiled ones to it).
ORACLE_CHECK_LOG2 = 22


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
            reps: int = REPS, keep: int | None = None) -> dict[str, Any]:
    """Median ms of memcpy, torch.cumsum, CuPy's CUB scan and :data:`TUNED_VARIANT` at each
    (block, params) in ``configs``, all on one array in one run; a launch the device
    refuses, or a library that fails, is timed as None with the reason.  With ``keep``,
    each launch is first timed once (``screen_ms``) and only the ``keep`` fastest in full."""
    import cupy as cp

    from ...kernels.launch import plan

    x = _bench_input(n, dtype)
    out = cp.empty_like(x)
    res: dict[str, Any] = {"variant": TUNED_VARIANT, "dtype": dtype, "log2_n": n.bit_length() - 1,
                           "memcpy_ms": time_gpu(lambda: cp.copyto(out, x), reps=reps)}
    for name, fn in _references(x, out).items():
        try:
            res[f"{name}_ms"] = time_gpu(fn, reps=reps)
        except Exception as exc:  # a library's refusal is a row's note, not the bench's end
            res[f"{name}_ms"], res[f"{name}_error"] = None, repr(exc)[:200]

    def timed(row: dict[str, Any], warmup: int, runs: int) -> float | None:
        try:  # the instantiation alone: a tuning run compiles dozens of launch shapes
            run = plan(x, TUNED_VARIANT, "add", row["block"], row["params"], out=out, narrow=True)
        except LaunchError as exc:
            row["error"] = str(exc)
            return None
        return time_gpu(run, warmup=warmup, reps=runs)

    rows: list[dict[str, Any]] = [{"block": b, "params": dict(p), "ms": None} for b, p in configs]
    finalists = rows
    if keep is not None and len(rows) > keep:
        for row in rows:
            row["screen_ms"] = timed(row, 1, 1)
        finalists = sorted((r for r in rows if r["screen_ms"] is not None),
                           key=lambda r: r["screen_ms"])[:keep]
    for row in finalists:
        row["ms"] = timed(row, 3, reps)
    res["configs"] = rows
    return res


def check_launches(configs: list[tuple[int, dict[str, int]]],
                   dtypes: tuple[str, ...] = BENCH_DTYPES) -> dict[str, str]:
    """Each launch shape (block, template params) of ``configs`` run against its model:
    float data bit for bit (up to three tiles the look-back folds in one order only), integer
    data against NumPy's exact sums, one element short of a tile and a partial tile past
    two; {shape: "equal" or where it differs}."""
    import cupy as cp

    from ...kernels.launch import plan
    from ...kernels.registry import VARIANTS

    var = VARIANTS[TUNED_VARIANT]
    # The runtime parameters at their last values (a prefetch, a back-off): each shape's
    # waits are exercised; none changes a value.
    last = {k: v[-1] for k, v in var.runtime_params.items()}
    found: dict[str, str] = {}
    rng = np.random.default_rng(0)
    for block, params in configs:
        shape = launch_label(block, var.template_params(params))
        if shape in found:
            continue
        found[shape] = "equal"
        tile = block * var.resolve_params(params)["items"]
        for n in (tile - 1, 2 * tile + 3):
            ints = rng.integers(0, 1000, n)
            for dtype in dtypes:
                x = ints.astype(dtype) * (1.001 if dtype.startswith("float") else 1)
                x = x.astype(dtype)
                want = (var.build_model(n, block, params).run(x, "add")
                        if dtype.startswith("float") else np.cumsum(x, dtype=dtype))
                try:
                    got = plan(cp.asarray(x), var, "add", block, {**params, **last},
                               narrow=True)().get()
                except LaunchError:
                    continue
                if got.view(f"u{x.itemsize}").tobytes() != want.view(f"u{x.itemsize}").tobytes():
                    found[shape] = f"DIFFERS at n={n} {dtype}"
    return found


def tune_sweep(log2_sizes: tuple[int, ...], dtypes: tuple[str, ...] = BENCH_DTYPES,
               reps: int = REPS, keep: int | None = SWEEP_KEEP) -> dict[str, Any]:
    """Every candidate launch of :data:`TUNED_VARIANT` checked against its model
    (:func:`check_launches`), then timed at each (dtype, size) that fits, the fastest
    ``keep`` of a screening run in full, with memcpy, torch and CUB beside them: the input of
    ``python -m scancheck.kernels.tune``.  A launch shape that differs from its model is
    never timed."""
    from ...kernels.registry import VARIANTS

    kind = current_device()
    var = VARIANTS[TUNED_VARIANT]
    checks = check_launches(list(var.candidates))
    configs = [(b, p) for b, p in var.candidates
               if checks[launch_label(b, var.template_params(p))] == "equal"]
    skipped: list[str] = []
    results = [measure(2**k, dtype, configs, reps, keep)
               for dtype, k in _sizes_that_fit("tune", dtypes, log2_sizes, skipped)]
    return {"device": kind.name, "compute_capability": kind.compute_capability,
            "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
            "checks": checks, "results": results, "skipped (memory)": skipped}


def launch_label(block: int, params: dict[str, int]) -> str:
    """A launch as the tables show it: threads x items, then ``+h`` for hoisted loads, ``+pf``
    for the L2 prefetch and ``+bo`` for the look-back's back-off, where they are on, and
    ``+sK`` for a look-back polling K predecessors a lane (K > 1)."""
    marks = (("hoist", "+h"), ("prefetch_kib", "+pf"), ("backoff_ns", "+bo"))
    span = params.get("span", 1)
    return (f"{block}x{params.get('items', 1)}" + "".join(m for k, m in marks if params.get(k))
            + (f"+s{span}" if span > 1 else ""))


LAUNCH_LEGEND = ("launch: threads x items a thread; +h: loads hoisted, +pf: L2 prefetch ahead, "
                 "+bo: look-back back-off, +sK: look-back polls K tiles a lane")


def sweep_rows(sweep: dict[str, Any]) -> list[dict[str, Any]]:
    """:func:`tune_sweep` per (dtype, size): the two fastest launches and torch, as fractions
    of memcpy's time, and how many launches were timed in full (the JSON keeps them all)."""
    rows = []
    for r in sweep["results"]:
        timed = sorted((c for c in r["configs"] if c.get("ms") is not None), key=lambda c: c["ms"])
        row: dict[str, Any] = {"dtype": r["dtype"], "n": f"2^{r['log2_n']}"}
        for rank, c in zip(("best", "second"), timed + [None, None]):
            row[rank] = "-" if c is None else launch_label(c["block"], c["params"])
            row[f"{rank} x memcpy"] = None if c is None else r["memcpy_ms"] / c["ms"]
        for lib in ("torch", "cub"):
            ms = r.get(f"{lib}_ms")
            row[f"{lib} x memcpy"] = r["memcpy_ms"] / ms if ms else None
        row["timed"] = f"{len(timed)} of {len(r['configs'])}"
        rows.append(row)
    return rows


def _gbps(n: int, dtype: str, ms: float | None) -> float | None:
    return None if ms is None else 2 * n * np.dtype(dtype).itemsize / ms / 1e6


def speed_row(res: dict[str, Any]) -> dict[str, Any]:
    """One row from :func:`measure`'s result at a single (tuned) launch: each
    implementation's ms, GB/s (bytes read plus written) and fraction of memcpy's time."""
    n, dtype, copy = 2 ** res["log2_n"], res["dtype"], res["memcpy_ms"]
    cfg = res["configs"][0]
    row: dict[str, Any] = {"dtype": dtype, "n": f"2^{res['log2_n']}",
                           "launch": launch_label(cfg["block"], cfg["params"]),
                           "block": cfg["block"], "params": cfg["params"]}
    for label, ms in (("ours", cfg.get("ms")), ("torch", res.get("torch_ms")),
                      ("CUB", res.get("cub_ms")), ("memcpy", copy)):
        row[f"{label} ms"] = ms
        row[f"{label} GB/s"] = _gbps(n, dtype, ms)
        if label != "memcpy":
            row[f"{label} x memcpy"] = None if ms is None else copy / ms
    return row


def speed_table(log2_sizes: tuple[int, ...], table: LaunchTable,
                dtypes: tuple[str, ...] = BENCH_DTYPES, reps: int = REPS) -> list[dict[str, Any]]:
    """Per (dtype, size) that fits: the look-back at ``table``'s launch, torch, CUB and
    memcpy (:func:`speed_row`)."""
    return [speed_row(measure(2**k, dtype, [table.launch(TUNED_VARIANT, dtype, 2**k)], reps))
            for dtype, k in _sizes_that_fit("bench", dtypes, log2_sizes, [])]


def oracle_table(log2_sizes: tuple[int, ...], dists: tuple[str, ...] | None = None,
                 dtypes: tuple[str, ...] = ("float32", "float64"), reps: int = 5,
                 check_log2: int = ORACLE_CHECK_LOG2) -> list[dict[str, Any]]:
    """The device exact oracle per (dtype, size, distribution of the strategies; all by
    default): its median ms, torch.cumsum's on the same array and their ratio, and up to
    2^``check_log2`` whether its bits are the CPU oracle's (None above it)."""
    import cupy as cp

    from ...engine.strategies import DISTRIBUTIONS

    if dists is not None:  # a name refused before any array is drawn
        oracle_request(list(dists), None, True)
    rows = []
    for dtype, k in _sizes_that_fit("oracle", dtypes, log2_sizes, []):
        n = 2**k
        torch_ms = None
        for dist in DISTRIBUTIONS if dists is None else dists:
            x = _oracle_input(n, dtype, dist)
            if torch_ms is None:
                torch_ms = _torch_ms(x, reps)
            ms, same = _oracle_ms(x, reps, check=k <= check_log2)
            rows.append({"dtype": dtype, "log2_n": k, "distribution": dist, "oracle_ms": ms,
                         "torch_ms": torch_ms, "x torch": ms / torch_ms if ms and torch_ms
                         else None, "bits equal to the CPU oracle's": same})
            del x
        cp.get_default_memory_pool().free_all_blocks()
    return rows


def _sizes_that_fit(name: str, dtypes: tuple[str, ...], log2_sizes: tuple[int, ...],
                    skipped: list[str]) -> Iterator[tuple[str, int]]:
    """Each (dtype, log2 n) whose arrays fit in free device memory, under one progress task
    named ``name``; the others are appended to ``skipped`` and shown as skipped."""
    from ..progress import Progress

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
    return oracle_data(np.random.default_rng(0), 2**22, dtype, dist)


def _oracle_input(n: int, dtype: str, dist: str) -> Any:
    """n device values of ``dist``: :func:`_oracle_data` tiled (the oracle's speed, not the
    generator's)."""
    import cupy as cp

    part = _oracle_data(dtype, dist)[:n]
    return cp.tile(cp.asarray(part), -(-n // part.size))[:n]


def _torch_ms(x: Any, reps: int) -> float | None:
    try:
        import torch
    except ImportError:
        return None
    tx = torch.from_dlpack(x)
    return time_gpu(lambda: torch.cumsum(tx, 0), reps=max(reps, 10))


def _oracle_ms(x: Any, reps: int, check: bool) -> tuple[float | None, bool | None]:
    """Median ms of the device exact oracle on ``x`` (None where it runs out of device memory)
    and, with ``check``, whether its bits are the CPU oracle's on the same values (None and
    False where it fails otherwise: told as a difference)."""
    import cupy as cp

    from ...oracle.exact import exact_scan
    from ...oracle.exact_device import exact_scan_device

    try:
        ms = time_gpu(lambda: exact_scan_device(x), warmup=1, reps=reps)
        got = exact_scan_device(x) if check else None
    except cp.cuda.memory.OutOfMemoryError:
        return None, None
    except Exception:  # any other failure is the oracle's, and shown as such: not the bench's end
        return None, False
    if got is None:
        return ms, None
    host = x.get()
    bits = f"u{host.itemsize}"
    return ms, bool((got.get().view(bits) == exact_scan(host).view(bits)).all())


# -- the printed tables --------------------------------------------------------------------


def _cell(v: object, digits: int = 3) -> object:
    """A figure as the tables print it: ratios to 3 significant digits, large ones whole."""
    if isinstance(v, float | np.floating):
        return f"{v:.0f}" if abs(v) >= 1000 else f"{v:.{digits}g}"
    return "-" if v is None else v


def fit_tables(rows: list[dict[str, Any]], keys: tuple[str, ...], title: str,
               width: int = WIDTH) -> str:
    """``rows`` as plain-text tables of at most ``width`` columns: the ``keys`` columns in
    each, the others split over as many tables as they need (a column too wide alone is
    cut, with an ellipsis)."""
    if not rows:
        return f"{title}\n(no rows)"
    cols = [c for c in rows[0] if c not in keys]
    shown = [{c: _cell(r.get(c)) for c in rows[0]} for r in rows]
    wide = {c: max(len(c), *(len(str(r[c])) for r in shown)) for c in rows[0]}
    base = sum(wide[k] + 2 for k in keys)
    limit = width - base
    groups: list[list[str]] = [[]]
    used = 0
    for c in cols:
        need = min(wide[c], limit) + 2
        if groups[-1] and used + need > limit + 2:
            groups.append([])
            used = 0
        groups[-1].append(c)
        used += need
    room = max(limit, 4)
    name = {c: c if len(c) <= room else c[:room - 1] + "…" for c in rows[0]}
    cut = {name[c]: room for c in cols if wide[c] > limit}
    out = [textwrap.fill(title, width)]
    for i, group in enumerate(groups):
        part = [{name[c]: r[c] for c in (*keys, *group)} for r in shown]
        text = format_table(fit_columns(part, cut))
        out.append(text if len(groups) == 1 else f"({i + 1} of {len(groups)})\n{text}")
    return "\n".join(out)


def scans_text(rows: list[dict[str, Any]], source: str, width: int = WIDTH) -> str:
    """The scans' table: per (dtype, size) the look-back at its launch, torch and CUB as
    fractions of memcpy's time, and the launch table used."""
    shown = [{"dtype": r["dtype"], "n": r["n"], "launch": r["launch"],
              "ours GB/s": r["ours GB/s"], "ours": r["ours x memcpy"],
              "torch": r["torch x memcpy"], "CUB": r["CUB x memcpy"],
              "memcpy GB/s": r["memcpy GB/s"]} for r in rows]
    title = (f"scans: the decoupled look-back (ours) at its tuned launch, torch.cumsum, CUB: "
             f"x memcpy's bandwidth, measured in the same run.  Launch table: {source}.  "
             f"{LAUNCH_LEGEND}.")
    return fit_tables(shown, ("dtype", "n"), title, width)


def oracle_text(rows: list[dict[str, Any]], width: int = WIDTH) -> str:
    """The exact oracle's table: a row per distribution, a column per (dtype, size), each its
    time over torch.cumsum's; a last row of torch's ms; which bits were checked."""
    by_dist: dict[str, dict[str, Any]] = {}
    torch_row: dict[str, Any] = {"distribution": "(torch.cumsum ms)"}
    for r in rows:
        col = f"{r['dtype'].replace('float', 'f')} 2^{r['log2_n']}"
        by_dist.setdefault(r["distribution"], {"distribution": r["distribution"]})[col] = \
            r["x torch"]
        torch_row[col] = r["torch_ms"]
    checked = [r for r in rows if r["bits equal to the CPU oracle's"] is not None]
    wrong = [f"{r['dtype']} {r['distribution']} 2^{r['log2_n']}" for r in checked
             if not r["bits equal to the CPU oracle's"]]
    sizes = sorted({r["log2_n"] for r in checked})
    note = ("bits: " + (f"DIFFERENT from the CPU oracle's at {', '.join(wrong)}" if wrong else
                        f"equal to the CPU oracle's at every distribution checked (sizes "
                        f"{', '.join(f'2^{k}' for k in sizes)})") if checked
            else "bits: not compared with the CPU oracle")
    title = ("the exact oracle (exponent pass, scan, rounding, IEEE specials): its time over "
             "torch.cumsum's on the same array (float data of each distribution, 2^22 values "
             "drawn once and tiled)")
    return fit_tables([*by_dist.values(), torch_row], ("distribution",), title, width) + \
        "\n" + textwrap.fill(note, width)


#: The CPU table's size where none is given (log2), and the largest it times: past the
#: caches the CPU oracle scans some 3e7 float32 a second (3e8 at 2^20, on a 2-core x86
#: machine), and the table times every distribution 5 times.
CPU_ORACLE_LOG2 = 20
CPU_ORACLE_MAX_LOG2 = 22
#: The device table's sizes where none is given (log2).
DEVICE_ORACLE_LOG2 = (20, 24, 28)
#: The log2 sizes --oracle-sizes may name: the device oracle's arrays past 2^32 elements
#: fit no GPU's memory.
ORACLE_LOG2_RANGE = range(1, 33)


def oracle_dists() -> tuple[str, ...]:
    """The distributions --oracle-dists may name: normal(0, 1), then the strategies' own."""
    from ...engine.strategies import DISTRIBUTIONS

    return ("normal", *DISTRIBUTIONS)


def oracle_data(rng: np.random.Generator, n: int, dtype: str, dist: str) -> np.ndarray:
    """n host values of ``dtype`` drawn from ``dist``, one of :func:`oracle_dists`."""
    from ...engine.strategies import generate_data

    if dist == "normal":
        return rng.standard_normal(n).astype(dtype)
    return generate_data(rng, n, dtype, dist)


def oracle_request(dists: list[str] | None, log2_sizes: list[str] | None, gpu: bool,
                   why: str = "") -> tuple[tuple[str, ...] | None, tuple[int, ...], tuple[int, ...]]:
    """``bench --oracle``'s --oracle-dists and --oracle-sizes as the tables use them: the
    distributions (None: the defaults), the CPU table's log2 sizes and the device table's
    (none without a GPU); a ValueError naming the argument and what is allowed where a name
    is unknown, a size is no log2 in :data:`ORACLE_LOG2_RANGE`, or a size no table times."""
    if dists is not None:
        bad = [d for d in dists if d not in oracle_dists()]
        if bad or not dists:
            raise ValueError(f"--oracle-dists {' '.join(bad) if bad else 'given no name'}: "
                             f"{'unknown' if bad else 'leave it out for all'}; allowed: "
                             f"{', '.join(oracle_dists())}")
    if log2_sizes is None:
        return (None if dists is None else tuple(dists), (CPU_ORACLE_LOG2,),
                DEVICE_ORACLE_LOG2 if gpu else ())
    sizes = []
    for v in log2_sizes:
        k = int(v) if str(v).strip().isdigit() else None
        if k not in ORACLE_LOG2_RANGE:
            raise ValueError(f"--oracle-sizes {v}: not a log2 size; allowed: whole numbers "
                             f"{ORACLE_LOG2_RANGE[0]} to {ORACLE_LOG2_RANGE[-1]} (20 is 2^20 "
                             f"elements)")
        sizes.append(k)
    cpu = tuple(k for k in sizes if k <= CPU_ORACLE_MAX_LOG2)
    past = [str(k) for k in sizes if k > CPU_ORACLE_MAX_LOG2]
    if past and not gpu:  # given, and timed by no table: refused, not left out unsaid
        raise ValueError(f"--oracle-sizes {' '.join(past)}: past {CPU_ORACLE_MAX_LOG2} (2^"
                         f"{CPU_ORACLE_MAX_LOG2} elements), the largest the CPU table times, and "
                         f"the device table needs a GPU ({why or 'none here'}); allowed here: "
                         f"{ORACLE_LOG2_RANGE[0]} to {CPU_ORACLE_MAX_LOG2}")
    return None if dists is None else tuple(dists), cpu, tuple(sizes) if gpu else ()


def oracle_throughput(sizes: tuple[int, ...] = (2**CPU_ORACLE_LOG2,), mp_n: int = 20_000,
                      reps: int = 5, dists: tuple[str, ...] | None = None) -> list[dict]:
    """Exact-oracle elements per second on this CPU next to mpmath's running sum, at each of
    ``sizes`` (() times mpmath alone): float32 data of every distribution, and float64
    normal(0, 1) and wide data; or float32 and float64 of ``dists``."""
    import mpmath

    from ...oracle.exact import exact_scan

    small = np.random.default_rng(0).integers(0, 1000, mp_n).astype(np.float32).tolist()
    t0 = time.perf_counter()
    acc = mpmath.mpf(0)
    for v in small:
        acc += v
        float(acc)
    mp_rate = mp_n / (time.perf_counter() - t0)
    rows = [{"input": "mpmath running sum (float32 ints)", "n": _size(mp_n),
             "elements/s": mp_rate, "x mpmath": 1.0}]
    exact_scan(np.ones(100, np.float32))  # the first call compiles (or loads) it
    for m in sizes:
        rng = np.random.default_rng(0)
        if dists is None:
            cases = {f"float32 {dist}": oracle_data(rng, m, "float32", dist)
                     for dist in oracle_dists()}
            cases["float64 normal"] = oracle_data(rng, m, "float64", "normal")
            cases["float64 wide"] = oracle_data(rng, m, "float64", "wide")
        else:
            cases = {f"{dtype} {dist}": oracle_data(rng, m, dtype, dist)
                     for dtype in ("float32", "float64") for dist in dists}
        for label, x in cases.items():
            best = min(_seconds(exact_scan, x) for _ in range(reps))
            rows.append({"input": f"exact_scan, {label}", "n": _size(m), "elements/s": m / best,
                         "x mpmath": m / best / mp_rate})
    return rows


def _size(n: int) -> str:
    """n as the tables show it: 2^k for a power of two, else with thousands separators."""
    return f"2^{n.bit_length() - 1}" if n > 0 and n & (n - 1) == 0 else f"{n:,}"


def throughput_text(rows: list[dict[str, Any]], title: str, width: int = WIDTH) -> str:
    """:func:`oracle_throughput`'s or :func:`device_oracle_throughput`'s rows as tables of at
    most ``width`` columns, keyed by input and n."""
    return fit_tables(rows, ("input", "n"), title, width)


#: The device oracle's benchmark data: (label, dtype, distribution of strategies.generate_data).
DEVICE_ORACLE_CASES = (("float32 normal(0, 1)", "float32", "normal"),
                       ("float32 integers in [0, 1000)", "float32", "integers"),
                       ("float32 wide (exponents over the range)", "float32", "wide"),
                       ("float64 normal(0, 1)", "float64", "normal"),
                       ("float64 wide", "float64", "wide"))


def device_oracle_throughput(sizes: tuple[int, ...] = (2**24, 2**28), reps: int = 10,
                             dists: tuple[str, ...] | None = None) -> list[dict]:
    """The exact oracle on the GPU, whole (exponent pass, width, scan, rounding), against a
    device copy and torch.cumsum of the same array timed in the same run: on
    :data:`DEVICE_ORACLE_CASES`, or with ``dists`` float32 and float64 data of those."""
    import cupy as cp

    cases = DEVICE_ORACLE_CASES if dists is None else tuple(
        (f"{dtype} {dist}", dtype, dist) for dtype in ("float32", "float64") for dist in dists)
    rows = []
    for label, dtype, dist in cases:
        for n in sizes:
            x = _oracle_input(n, dtype, dist)
            rows.append({"input": label, "n": _size(n), **_time_oracle(x, reps)})
            del x
            cp.get_default_memory_pool().free_all_blocks()
    return rows


def _time_oracle(x: Any, reps: int) -> dict[str, float]:
    import cupy as cp

    from ...oracle.exact_device import exact_scan_device

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
