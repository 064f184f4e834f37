"""Seed 004's float precision "bug", reproduced and explained with numbers.

The practical scanned 1,000,000 integer-valued floats in [0, 1000) with a three-kernel
float GPU scan, compared it with a sequential float CPU scan, saw an RMS difference in
the millions and blamed float precision.  Measured against the *exact* answer, the
sequential CPU reference is the one far off: its k-th prefix passes through k-1
roundings, a tree scan's through about log2(k) plus one per block level.

:func:`precision_table` runs every scan on the same data and reports RMS, L2 and max
error against the exact oracle and against the float32 CPU reference;
:func:`sweep` measures error and bound over n for each algorithm.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

import numpy as np

from ...core.operators import sequential_scan
from ...engine.strategies import DISTRIBUTIONS, generate_data
from ...kernels.registry import VARIANTS
from ...oracle.bounds import Verdict, abs_sums, classify, sequential_depths
from ...oracle.exact import exact_scan
from ..progress import Progress

GPU_SCANS = ("hierarchical", "decoupled_lookback")
SWEEP_TREES = ("kogge_stone", "brent_kung", "blelloch")
BLOCK = 256


def practical_data(n: int = 1_000_000, distribution: str = "integers", seed: int = 8) -> np.ndarray:
    """The practical's input: ``n`` float32 values (integer-valued in [0, 1000) by default)."""
    if n < 1:
        raise ValueError(f"n={n} must be at least 1")
    if distribution not in DISTRIBUTIONS:
        raise ValueError(f"distribution={distribution!r} is unknown; allowed: {', '.join(DISTRIBUTIONS)}")
    return generate_data(np.random.default_rng(seed), n, "float32", distribution)


@dataclass
class PrecisionRow:
    """One scan's errors against the exact answer and against the float32 CPU reference."""

    scan: str
    where: str
    dtype: str
    rms: float
    l2: float
    max_err: float
    rms_vs_ref: float
    max_vs_ref: float
    verdict: str

    def as_dict(self) -> dict[str, object]:
        return {"scan": self.scan, "where": self.where, "dtype": self.dtype,
                "RMS vs exact": self.rms, "L2 vs exact": self.l2, "max vs exact": self.max_err,
                "RMS vs CPU f32": self.rms_vs_ref, "max vs CPU f32": self.max_vs_ref,
                "vs its bound": self.verdict}


def _candidates(x32: np.ndarray, gpu: bool) -> Iterable[tuple[str, str, np.ndarray, np.ndarray]]:
    """(name, where, input, output) for every scan; depths are attached by the caller."""
    n = x32.size
    x64 = x32.astype(np.float64)
    yield "sequential", "CPU", x32, sequential_scan(x32)
    yield "sequential", "CPU", x64, sequential_scan(x64)
    for name in GPU_SCANS:
        for x in (x32, x64):
            if gpu:
                from ...kernels.launch import scan

                yield name, "GPU", x, scan(x, name, "add", BLOCK).get()
            else:
                yield name, "CPU model", x, VARIANTS[name].build_model(n, BLOCK).run(x)
    if gpu:
        yield from _library_scans(x32, x64)


def _library_scans(x32: np.ndarray, x64: np.ndarray) -> Iterable[tuple[str, str, np.ndarray, np.ndarray]]:
    import cupy as cp

    for x in (x32, x64):
        yield "cupy.cumsum", "GPU", x, cp.cumsum(cp.asarray(x)).get()
    try:
        import torch
    except ImportError:
        return
    for x in (x32, x64):
        yield "torch.cumsum", "GPU", x, torch.cumsum(torch.from_numpy(x).cuda(), 0).cpu().numpy()


def _depths(name: str, n: int) -> np.ndarray | int:
    """Per-output tree depths; any summation order is within the sequential depths.  Past
    the models' sizes, the variant's one depth bound for every output (the bounds
    broadcast it: n copies of it would be 8 GiB at 2**30)."""
    if name in VARIANTS:
        var = VARIANTS[name]
        if n <= 2**22:
            return var.build_model(n, BLOCK).metrics().output_depths
        return var.depth_bound(n, BLOCK)
    return sequential_depths(n)


def precision_table(x32: np.ndarray, gpu: bool) -> tuple[list[PrecisionRow], str]:
    """Errors of every scan of ``x32`` and the conclusion the numbers support."""
    ref32 = sequential_scan(x32).astype(np.float64)
    exact = {"float32": exact_scan(x32), "float64": exact_scan(x32.astype(np.float64))}
    sums = {dt: abs_sums(x32.astype(dt)) for dt in exact}
    depth_cache: dict[str, np.ndarray] = {}
    rows = []
    for name, where, x, out in _candidates(x32, gpu):
        dt = x.dtype.name
        if name not in depth_cache:
            depth_cache[name] = _depths(name, x.size)
        rep = classify(x, out, depth_cache[name], name=name, exact=exact[dt], sums=sums[dt])
        with np.errstate(invalid="ignore"):  # inf - inf: NaN, what the column then shows
            diff = out.astype(np.float64) - ref32
        rows.append(PrecisionRow(
            name, where, dt, rep.rms, rep.l2, rep.max_abs,
            float(np.sqrt(np.mean(diff**2))), float(np.abs(diff).max()),
            rep.verdict.label))
    return rows, conclusion(rows, finite=bool(np.isfinite(x32).all()))


def conclusion(rows: list[PrecisionRow], finite: bool = True) -> str:
    """The sentence the measured errors support (never assumed); ``finite``: whether the
    data hold no infinity or NaN (whose outputs no error is measured on)."""
    seq = next(r for r in rows if r.scan == "sequential" and r.dtype == "float32")
    trees = [r for r in rows if r.dtype == "float32" and r.scan != "sequential"]
    best = min(trees, key=lambda r: r.rms)
    worst_tree = max(trees, key=lambda r: r.rms)
    f64 = [r for r in rows if r.dtype == "float64"]
    lines = []
    beyond = [r for r in rows if r.verdict == Verdict.BEYOND_BOUND.label]
    if beyond:
        lines.append("Beyond their rounding bounds (logic errors, not precision): "
                     + ", ".join(f"{r.scan} {r.where} {r.dtype}" for r in beyond) + ".")
    if seq.rms > 10 * worst_tree.rms:
        lines.append(
            f"The float32 scans disagree with the sequential CPU reference by an RMS of up to "
            f"{max(r.rms_vs_ref for r in trees):.3g}, but against the exact answer the sequential "
            f"reference's RMS error is {seq.rms:.3g} and the tree scans' at most "
            f"{worst_tree.rms:.3g} ({best.scan}: {best.rms:.3g}): the disagreement is the "
            f"sequential reference's rounding ({seq.rms / max(worst_tree.rms, 1e-300):.0f}x larger), "
            f"not a bug in the parallel scan.")
    elif seq.rms == worst_tree.rms == 0:
        lines.append("Every float32 scan is exact at this n: there is no rounding to tell "
                     "apart.")
    elif worst_tree.rms > 10 * seq.rms:
        lines.append(f"The tree scans round more than the sequential one at this n: RMS up to "
                     f"{worst_tree.rms:.3g} against {seq.rms:.3g}.")
    else:
        lines.append(f"Sequential RMS {seq.rms:.3g} and tree-scan RMS up to {worst_tree.rms:.3g} are "
                     f"within a factor of 10 of each other at this n: neither dominates.")
    exact64 = [r for r in f64 if r.max_err == 0]
    if exact64:
        lines.append(f"In float64 {len(exact64)} of {len(f64)} scans are exact on this data "
                     f"({'every' if finite else 'every finite'} prefix fits in 53 bits), so "
                     f"switching to double removes the error "
                     f"from the reference and the kernel alike.")
    lines.append("Every error is within its algorithm's rounding bound." if not beyond else "")
    return " ".join(s for s in lines if s)


# -- the sweep ------------------------------------------------------------------------


@dataclass
class SweepPoint:
    algorithm: str
    n: int
    max_err: float
    bound: float

    def as_dict(self) -> dict[str, object]:
        return {"algorithm": self.algorithm, "n": f"2^{int(np.log2(self.n))}",
                "max |error|": self.max_err, "bound": self.bound,
                "error/bound": self.max_err / self.bound if self.bound else 0.0}


@dataclass
class Swept:
    """The sweep's points, every algorithm at each size reached, and why it stopped short of
    the sizes asked (None: it reached them all)."""

    points: list[SweepPoint]
    stopped: str | None = None


#: One algorithm of the sweep: its name, how it runs (on host or device arrays, as
#: ``on_device`` says), the depths of its outputs at n (an array, or one depth for all),
#: and the largest log2 n it runs at.
SweepRun = tuple[str, Callable[[Any], Any], Callable[[int], Any], bool, int]


def _sweep_runs(gpu: bool, max_tree_log2: int, max_model_log2: int) -> list[SweepRun]:
    """Every algorithm of the sweep."""
    runs: list[SweepRun] = [("sequential", sequential_scan, sequential_depths, False, 99)]
    for name in SWEEP_TREES:
        var = VARIANTS[name]
        per_thread = var.capacity(1024, {}) // 1024

        def run(x: np.ndarray, var: Any = var, k: int = per_thread) -> np.ndarray:
            # The single-block algorithm over the whole array, as one network.
            return var.build_model(x.size, x.size // k).run(x)

        def depths(n: int, var: Any = var, k: int = per_thread) -> np.ndarray:
            return var.build_model(n, n // k).metrics().output_depths

        runs.append((name, run, depths, False, max_tree_log2))
    for name in GPU_SCANS:
        var = VARIANTS[name]
        if gpu:
            from ...kernels.launch import scan

            def run_gpu(x: Any, name: str = name) -> Any:
                return scan(x, name, "add", BLOCK)

            runs.append((name, run_gpu, lambda n, name=name: _depths(name, n), True, 99))
        else:
            runs.append((name, lambda x, var=var: var.build_model(x.size, BLOCK).run(x),
                         lambda n, name=name: _depths(name, n), False, max_model_log2))
    return runs


#: Peak bytes of host memory per element of the sweep's largest size on the CPU models (its
#: exact scans, magnitude sums and every algorithm's output), rounded up: 2.4 GB at 2**24.
CPU_SWEEP_BYTES = 150


def cpu_sweep_limit(top: int) -> str | None:
    """Why a sweep of the CPU models up to 2**``top`` would not fit this machine's memory
    (the kernel kills a process past it, before Python can raise), naming the largest that
    would; None where it fits, or the machine does not say its memory."""
    from ...isolation.watch import machine_memory

    have = machine_memory()
    if have is None or CPU_SWEEP_BYTES << top <= have:
        return None
    fits = max((have // CPU_SWEEP_BYTES).bit_length() - 1, 10)
    fits -= fits % 2  # the sweep's sizes are even powers
    return (f"--max-log2 {top}: without a GPU the sweep runs the CPU models, about "
            f"{CPU_SWEEP_BYTES} bytes an element, {(CPU_SWEEP_BYTES << top) / 2**30:.0f} GiB "
            f"at 2**{top}, past this machine's {have / 2**30:.1f} GiB; give at most {fits}")


def sweep(log2_sizes: Iterable[int], gpu: bool, distribution: str = "integers",
          max_tree_log2: int = 18, max_model_log2: int = 22) -> Swept:
    """Max error against exact and the algorithm's bound, per algorithm and size (float32).

    Each size draws one input, and its exact scans and magnitude sums are computed once for
    every algorithm; with a GPU they are computed on the device (the exact oracle of
    :mod:`scancheck.oracle.exact_device`), where the GPU scans' outputs stay.  A size whose
    arrays do not fit in memory (another process may hold some of it) ends the sweep there,
    said in :attr:`Swept.stopped`, with every smaller size whole.
    """
    from ...engine.diagnosis import is_device_memory_error, is_resource_error

    runs = _sweep_runs(gpu, max_tree_log2, max_model_log2)
    todo = [(2**k, [r for r in runs if k <= r[4]]) for k in log2_sizes]
    points: list[SweepPoint] = []
    stopped = None
    with Progress() as progress:
        task = progress.task("sweep", sum(len(group) for _, group in todo))
        for n, group in todo:
            try:
                points.extend(_sweep_size(n, group, distribution, gpu, task))
            except Exception as exc:
                if not is_resource_error(exc):
                    raise
                where = "device" if is_device_memory_error(exc) else "host"
                stopped = (f"stopped at n = 2^{n.bit_length() - 1}: out of {where} memory "
                           f"({type(exc).__name__}); " + (
                               f"every smaller size is whole, and --max-log2 "
                               f"{n.bit_length() - 3} stays below it" if points
                               else "no size of the sweep fits"))
                break
    if stopped is not None:
        # Out of the handler, whose traceback held the size's arrays.
        _free_device_memory(gpu)
    return Swept(points, stopped)


def _free_device_memory(gpu: bool) -> None:
    """Hand back what CuPy's pool holds, so that what runs after the sweep has it."""
    if gpu:
        import cupy as cp

        cp.get_default_memory_pool().free_all_blocks()


def _sweep_size(n: int, runs: list[SweepRun], distribution: str, gpu: bool,
                task: Any) -> list[SweepPoint]:
    """Every algorithm of ``runs`` at size ``n``: its largest error against the exact scan,
    and the largest of its bounds."""
    from ...oracle.bounds import gamma, ulp

    x = practical_data(n, distribution, seed=n)
    xp = np
    if gpu:
        import cupy as xp
    xd = xp.asarray(x)
    cache: dict[bool, tuple[Any, Any, Any]] = {}  # inclusive -> (exact, sum|x|, ulp/2)
    points = []
    for name, run, depths, on_device, _ in runs:
        what = f"{name} n=2^{int(np.log2(n))}"
        task.start(what)
        inclusive = VARIANTS[name].inclusive if name in VARIANTS else True
        if inclusive not in cache:
            exact = exact_scan(xd, inclusive=inclusive)
            cache[inclusive] = (exact.astype(np.float64), abs_sums(xd, inclusive),
                                ulp(exact, "float32") / 2)
            del exact
        exact64, sums, half_ulp = cache[inclusive]
        # In place where the arrays are large: at 2**30 each float64 array is 8 GiB.
        err64 = xp.asarray(run(xd if on_device else x)).astype(np.float64)
        err64 -= exact64
        err = float(xp.abs(err64, out=err64).max())
        # errors.rounding_bound, gamma_d * sum|x| + ulp/2 per output, at its largest.
        err64[...] = xp.asarray(gamma(depths(n), "float32"))
        err64 *= sums
        err64 += half_ulp
        points.append(SweepPoint(name, n, err, float(err64.max())))
        del err64
        task.finish(what, f"max |error| {err:.3g}")
    return points


def plot(points: list[SweepPoint], path: str, title: str) -> None:
    """Log-log error against n, one line per algorithm, its bound dashed in the same colour."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(8, 5.5))
    names = list(dict.fromkeys(p.algorithm for p in points))
    for i, name in enumerate(names):
        pts = [p for p in points if p.algorithm == name]
        colour = f"C{i}"
        # An exact result (error 0) has no place on a log axis: it is left out, not faked.
        ax.loglog([p.n for p in pts], [p.max_err if p.max_err > 0 else np.nan for p in pts], "o-",
                  color=colour, label=name)
        ax.loglog([p.n for p in pts], [p.bound for p in pts], "--", color=colour, alpha=0.6)
    ax.set_xlabel("n (elements, float32, integer-valued in [0, 1000))")
    ax.set_ylabel("max |scan - exact|   (dashed: rigorous bound)")
    ax.set_title(title, fontsize=10)
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
