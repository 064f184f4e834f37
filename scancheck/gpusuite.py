"""The whole GPU suite and the benchmarks in one call, with a short summary printed last.

    python -m scancheck.gpusuite [--workers auto] [--profile gpu] [--parts tests huge ...]

Runs ``pytest -m "gpu and not huge" -n WORKERS`` at the ``gpu`` Hypothesis profile (or
``--profile``), then the tests past 2**31 elements in one process, ``scancheck verify``,
``check`` on the library scans and the kernels, the negative controls, the precision
table and the bandwidth benchmark.  Logs go to ``$OUT`` (or ./gpusuite-out).
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import os
import re
import subprocess
import sys
import time
from collections.abc import Mapping
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from .core.cuda import SUITE_CUPY_CACHE
from .core.devices import usable_cores
from .core.private import cache_bytecode
from .progress import Progress

PARTS = ("tests", "huge", "verify", "check", "controls", "matrix", "precision", "bench")
_COLOUR = re.compile(r"\x1b\[[0-9;]*m")
_COUNTS = re.compile(r"(\d+) (passed|failed|skipped|error|errors|xfailed|xpassed)")


#: XLA compiles each JAX scan once per (shape, dtype), in each worker: kept on disk, every
#: program is compiled once for the machine, and properties of one target that meet the same
#: shapes, later runs and the other workers load it.
_JAX_CACHE = {
    "JAX_COMPILATION_CACHE_DIR": str(Path(os.environ.get("XDG_CACHE_HOME",
                                                         Path.home() / ".cache"))
                                     / "scancheck" / "jax"),
    "JAX_PERSISTENT_CACHE_MIN_COMPILE_TIME_SECS": "0",
    "JAX_PERSISTENT_CACHE_MIN_ENTRY_SIZE_BYTES": "-1",
}

#: The GPU tests' targets whose library compiles once per (shape, dtype), into JAX's cache on
#: disk: the warm step calls each on every input its tests' ladders reach
#: (:mod:`scancheck.engine.warmup`), a dtype to a process, so that the cache holds every
#: program before the tests start; a stamp beside the cache marks each job done.
JIT_TARGETS = ("jax.lax.associative_scan (x64)", "jax.numpy.cumprod", "jax.numpy.cumsum (x64)",
               "jax.numpy.cumprod (x64)", "jax.lax.scan (add, initial)",
               "jax.lax.scan (mul, initial)", "jax.numpy.cumsum (default dtype)")
#: Those whose library compiles its scan kernels per dtype and layout, into CuPy's cache.
CUPY_TARGETS = ("cupy.cumprod", "cupy.cumsum (no CUB)", "cupy.cumsum (default dtype)")
#: The GPU tests' targets whose library compiles per combine or kernel specialisation into a
#: cache on disk -- torch.compile's Inductor graphs, fla's Triton kernels and autotuning -- by
#: the start of their names, with the largest n of their tests: the warm step runs each test's
#: property on every such target but the CPU ones (their specs say where the inputs live, not
#: where the scan runs) once on its ladder.  On a fresh H100 the first of those tests took 16
#: and 18 s, the same tests 8 and 6 s once the caches held the kernels.
COMPILED_TARGETS = {"torch associative_scan": 2**10, "fla ": 2**14}
#: Processes that share one dtype's inputs, where one alone would be the warm step's longest
#: job: eager associative_scan compiles each of its operations per shape (float64's 73
#: programs took one process 50 s on a fresh H100).
_WARM_PARTS = {"jax.lax.associative_scan (x64)": 4}
#: The largest n of the GPU suite's conformance tests (tests/engine/test_conformance.py).
SUITE_MAX_N = 2**22

#: The suite's progress line, while main runs: each part is a step, named after its log.
_steps: Any = None


def _run(cmd: list[str], log: Path, env: dict[str, str]) -> tuple[int, str, float]:
    t0 = time.time()
    print(f"$ {' '.join(cmd)}", flush=True)
    if _steps is not None:
        _steps.start(log.stem)
    with log.open("w") as fh:
        proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                                env=env)
        tail: list[str] = []
        for line in proc.stdout:  # type: ignore[union-attr]
            fh.write(line)
            tail = (tail + [line])[-400:]
        proc.wait()
    if _steps is not None:
        _steps.finish(log.stem, f"exit {proc.returncode}")
    return proc.returncode, "".join(tail), time.time() - t0


def _counts(text: str) -> str:
    """pytest's own closing line: unindented, so that a line quoted in a traceback (pytester's
    docstring holds one) is never taken for the session's outcome."""
    plain = (_COLOUR.sub("", ln) for ln in text.splitlines())  # --color=yes, FORCE_COLOR
    last = [ln for ln in plain
            if ln[:1] in ("=", *"0123456789") and " in " in ln and _COUNTS.search(ln)]
    return (last[-1].strip("= \n") if last
            else "no pytest summary line (the session ended before it: see its log)")


def _check_targets(py: str, out: Path, env: dict[str, str], summary: list[str],
                   jobs: str) -> int:
    """``scancheck check`` on the library scans and every scancheck kernel, and on the
    grid-scope kernels under the recurrence pair too (long recurrences at GPU sizes); the
    summary table."""
    from .engine.library import builtin_targets
    from .kernels.registry import VARIANTS

    # Every built-in target but the CPU models (CI checks those), kernels included; those
    # whose library this machine lacks are named, not checked.
    table = builtin_targets()
    targets = [name for name, t in table.items()
               if not name.startswith("model:") and not t.unavailable]
    unrun = [f"{name} ({t.unavailable})" for name, t in table.items() if t.unavailable]
    targets += [f"kernel:{name}:256:recurrence" for name, var in VARIANTS.items()
                if var.capacity is None and "recurrence" in var.operators]
    # The look-back as a reference cumprod and logcumsumexp on the GPU.
    targets += ["kernel:decoupled_lookback:256:mul", "kernel:decoupled_lookback:256:logaddexp"]
    rc, text, secs = _run([py, "-m", "scancheck.cli", "check", *targets, "--jobs", jobs,
                           "--json", str(out / "conformance.json")], out / "conformance.log", env)
    tail = text[text.rfind("summary"):] if "summary" in text else text[-2000:]
    summary.append(f"scancheck check ({secs:.0f}s):")
    summary.extend(f"  {ln}" for ln in tail.splitlines()[3:])
    if unrun:
        summary.append(f"  not checked, cannot run here: {'; '.join(unrun)}")
    return rc


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m scancheck.gpusuite")
    parser.add_argument("--workers", default="auto")
    parser.add_argument("--profile", default="gpu", choices=("ci", "gpu", "thorough"),
                        help="Hypothesis profile of the test parts (default: gpu)")
    parser.add_argument("--parts", nargs="+", default=list(PARTS), choices=PARTS,
                        help="which parts to run (default: all)")
    parser.add_argument("--bench-sizes", nargs="+", default=["20", "24", "28"])
    parser.add_argument("--jobs", default="4",
                        help="targets checked at once by the check and controls parts (default: 4)")
    parser.add_argument("pytest_args", nargs="*")
    args = parser.parse_args(argv)

    out = Path(os.environ.get("OUT") or "gpusuite-out")
    out.mkdir(parents=True, exist_ok=True)
    env = suite_env(args.profile, os.environ)
    global _steps
    summary: list[str] = []
    try:
        smi = subprocess.run(["nvidia-smi", "-L"], capture_output=True, text=True)
        summary.append(f"device: {smi.stdout.strip() or smi.stderr.strip()}")
    except OSError:
        summary.append("device: none (no nvidia-smi here)")
    with Progress() as progress:
        _steps = progress.task("gpu suite", len(set(args.parts)))
        try:
            status = _parts(args, out, env, summary)
        finally:
            _steps = None
    print("\n==== scancheck GPU summary ====")
    print("\n".join(summary))
    return status


def suite_env(profile: str, environ: Mapping[str, str]) -> dict[str, str]:
    """The environment of the suite's processes: ``environ`` with the Hypothesis profile, this
    checkout on the path, and the suite's caches wherever ``environ`` sets up none of its own."""
    env = {**_JAX_CACHE, "CUPY_CACHE_DIR": str(SUITE_CUPY_CACHE), **environ}
    root = Path(__file__).resolve().parent.parent
    env.update(SCANCHECK_HYPOTHESIS_PROFILE=profile, PYTHONUNBUFFERED="1",
               PYTHONPATH=os.pathsep.join([str(root), environ.get("PYTHONPATH", "")]))
    # The warm step's processes write the bytecode the tests' workers load (each of an H100's
    # twelve compiled torch from source where none was installed).
    cache_bytecode(env)
    return env


def _library_jobs(names: tuple[str, ...]) -> list[tuple[str, str]]:
    """(label, code) of the warm step's library processes: each target of ``names`` that can
    run here, a dtype to a process (eager JAX dispatches under the GIL, so threads alone
    leave cores idle)."""
    from .engine.library import builtin_targets

    table = builtin_targets()
    jobs = []
    for name in names:
        target = table[name]
        if target.unavailable:
            continue
        parts = _WARM_PARTS.get(name, 1)
        jobs += [(f"{name} {dtype}" + (f" {part + 1}/{parts}" if parts > 1 else ""),
                  f"from scancheck.engine.warmup import warm\n"
                  f"warm({name!r}, {SUITE_MAX_N}, dtypes=({dtype!r},), threads=2, part={part}, "
                  f"parts={parts})")
                 for dtype in target.spec.dtypes for part in range(parts)]
    return jobs


def compiled_property(spec: Any) -> str:
    """The property the GPU tests check a :data:`COMPILED_TARGETS` target under."""
    return ("segments" if spec.segments else "probe monoids" if spec.combine
            else "floats within bound")


#: The tests this suite runs: every one marked ``gpu`` but those past 2**31 (``--parts huge``).
GPU_TESTS = "gpu and not huge"


def _compiled_jobs() -> list[tuple[str, str]]:
    """(label, code) of the warm step's processes for :data:`COMPILED_TARGETS` that run here."""
    from .engine.library import builtin_targets

    return [(name, f"from scancheck.engine.warmup import warm_check\n"
                   f"warm_check({name!r}, {compiled_property(t.spec)!r}, {max_n})")
            for name, t in builtin_targets().items() if not t.unavailable
            for prefix, max_n in COMPILED_TARGETS.items()
            if name.startswith(prefix) and "CPU" not in name]


def _collection_jobs() -> list[tuple[str, str]]:
    """The warm step's collection of the tests: each worker's collection rewrites every test
    module's asserts and compiles it, all twelve at once on a fresh machine, unless a
    collection before them left the bytecode."""
    return [("test modules", "import sys, pytest; sys.exit(pytest.main(['--collect-only', "
                             f"'-q', '-p', 'no:cacheprovider', '-m', {GPU_TESTS!r}]))")]


def _warm_kernels(py: str, env: dict[str, str]) -> str:
    """Every variant compiled once (and the look-back at each tuning candidate's items), the
    device oracle at each format, the CPU oracle and the library programs of the tests' ladders,
    side by side, into their caches on disk before the tests start: otherwise each of the
    workers compiles each one it meets on its own, all at once.  Where the CPU oracle's jobs
    passed, ``env`` tells the tests' pytest so."""
    from .kernels.launch import warm_jobs
    from .oracle.compiled import COMPILED_ENV, SHARES, share_code
    from .oracle.exact_device import FORMATS

    start = time.monotonic()
    code = "from scancheck.kernels.launch import warm; warm({!r}, {!r})"
    jobs = [(name if params is None else f"{name} {params}", code.format(name, params))
            for name, params in warm_jobs()]
    jobs += [(f"device oracle {d}", f"from scancheck.oracle.exact_device import warm; warm({d!r})")
             for d in FORMATS]
    cpu_oracles = [(f"CPU oracle {k + 1}/{SHARES}", share_code(k)) for k in range(SHARES)]
    jobs += cpu_oracles + _collection_jobs()
    stamped = dict(_library_jobs(JIT_TARGETS))
    jobs = [*stamped.items(), *_compiled_jobs(), *_library_jobs(CUPY_TARGETS),
            *jobs]  # the longest first
    deadline = start + 300

    stamps = Path(env["JAX_COMPILATION_CACHE_DIR"]) / "scancheck-warmed"
    stamps.mkdir(parents=True, exist_ok=True)
    salt = _warm_salt()

    def run(job: tuple[str, str]) -> tuple[str, int, float]:
        t0 = time.monotonic()
        stamp = stamps / hashlib.sha256((salt + job[1]).encode()).hexdigest()[:24]
        if job[0] in stamped and stamp.exists():
            return job[0], 0, 0.0
        try:
            rc = subprocess.run([py, "-c", job[1]], env=env, stdout=subprocess.DEVNULL,
                                stderr=subprocess.DEVNULL,
                                timeout=max(1.0, deadline - t0)).returncode
        except subprocess.TimeoutExpired:
            rc = -1
        if job[0] in stamped and rc == 0:
            stamp.touch()
        return job[0], rc, time.monotonic() - t0

    # One process a core: some sixty at once held tens of GiB of host memory (JAX's).  A
    # JAX job already run on this machine for the same code and version left a stamp beside
    # JAX's cache, and is passed over: loading its programs took 34 s on an H100.
    with ThreadPoolExecutor(usable_cores()) as pool:
        done = list(pool.map(run, jobs))
    # A module that does not compile is the tests' to report, with its error.
    failed = [label for label, rc, _ in done if rc]
    if not any(label in failed for label, _ in cpu_oracles):
        env[COMPILED_ENV] = "1"  # pytest's controller need not load them again (~2 s)
    slowest = ", ".join(f"{label} {secs:.0f} s"
                        for label, _, secs in sorted(done, key=lambda d: -d[2])[:3])
    return (f"caches warmed: {len(jobs) - len(failed)} of {len(jobs)} jobs in "
            f"{time.monotonic() - start:.0f} s (slowest: {slowest})"
            + (f" (failed: {', '.join(failed)})" if failed else ""))


def _warm_salt() -> str:
    """What a JAX job's stamp depends on besides its code: scancheck's engine and core (which
    decide the inputs a job calls) and JAX's version.  A stale stamp only leaves the tests
    to compile what they meet."""
    from importlib import metadata

    root = Path(__file__).resolve().parent
    digest = hashlib.sha256()
    for path in sorted([*root.glob("engine/**/*.py"), *root.glob("core/*.py")]):
        digest.update(path.read_bytes())
    for dist in ("jax", "jaxlib"):
        with contextlib.suppress(metadata.PackageNotFoundError):
            digest.update(f"{dist} {metadata.version(dist)}".encode())
    return digest.hexdigest()


def _parts(args: argparse.Namespace, out: Path, env: dict[str, str], summary: list[str]) -> int:
    """Every part asked for, in order; their summary lines appended; the worst exit status."""
    py = sys.executable
    parts = set(args.parts)
    status = 0

    if "tests" in parts:
        summary.append(_warm_kernels(py, env))
        # Work stealing: a worker out of tests takes half of the busiest one's, so that no
        # worker ends its share long after the others (on an H100 with every cache warm, 57 s
        # against 65 s for xdist's default scheduling).
        rc, text, secs = _run([py, "-m", "pytest", "-m", GPU_TESTS, "-n", args.workers,
                               "--dist", "worksteal", "-q", "-p", "no:cacheprovider",
                               "--durations=8", *args.pytest_args],
                              out / "gpu-tests.log", env)
        status |= rc
        summary.append(f"gpu suite (-n {args.workers}, {args.profile} profile): {_counts(text)} "
                       f"[{secs:.0f}s wall]")
        summary.extend(f"  {ln}" for ln in text.splitlines()
                       if ln.startswith(("gpu tests per GPU", "gpu timeline")))
        slow = text[text.find("slowest"):].splitlines()[1:4] if "slowest" in text else []
        summary.extend(f"  slowest: {ln.strip()}" for ln in slow)
        if rc:
            fails = [ln for ln in text.splitlines() if ln.startswith(("FAILED", "ERROR"))]
            summary.extend(f"  {ln[:200]}" for ln in fails[:15])
    if "huge" in parts:
        # The checks past 2**32 take turns on the device (a lock in scancheck.engine.large); the
        # GPU controls, each several child processes, run beside them.
        rc, text, secs = _run([py, "-m", "pytest", "-m", "huge", "-n", "3", "-q", "-p",
                               "no:cacheprovider", "--durations=5"], out / "huge-tests.log", env)
        status |= rc
        summary.append(f"huge tests (past 2**31 and 2**32, GPU controls): {_counts(text)} "
                       f"[{secs:.0f}s]")
        if rc:
            fails = [ln for ln in text.splitlines() if ln.startswith(("FAILED", "ERROR"))]
            summary.extend(f"  {ln[:200]}" for ln in fails[:15])
    if "verify" in parts:
        rc, text, _ = _run([py, "-m", "scancheck.cli", "verify", "--block", "256"],
                           out / "verify.log", env)
        status |= rc
        summary.append(f"scancheck verify: {text.strip().splitlines()[-1]}")
    if "check" in parts:
        status |= _check_targets(py, out, env, summary, args.jobs)
    if "controls" in parts:
        # The default flags of `scancheck check`: every control must be caught with them.
        rc, text, secs = _run([py, "-m", "scancheck.cli", "check", "--controls", "--jobs",
                               args.jobs],
                              out / "controls.log", env)
        status |= rc
        print(text[-3000:])
        summary.append(f"negative controls ({secs:.0f}s): {text.strip().splitlines()[-1]}")
    if "matrix" in parts:
        rc, text, secs = _run([py, "-m", "scancheck.matrix", "--markdown", "--budget", "1",
                               "--workers", "12"], out / "matrix.md", env)
        status |= rc
        cells = [ln for ln in text.splitlines() if ln.startswith("| ") and "library scan" not in ln]
        ok = sum(ln.split("|")[4].strip() == "conforms" for ln in cells)
        summary.append(f"conformance matrix ({secs:.0f}s): {ok} of {len(cells)} cells conform "
                       f"(matrix.md)")
    if "precision" in parts:
        rc, text, secs = _run([py, "-m", "scancheck.cli", "precision", "--sweep", "--max-log2", "30",
                               "--plot", str(out / "precision.png")], out / "precision.log", env)
        status |= rc
        table = text[: text.find("\nsweep")] if "\nsweep" in text else text
        summary.append(f"scancheck precision ({secs:.0f}s):")
        summary.extend(f"  {ln}" for ln in table.strip().splitlines()[1:])
    if "bench" in parts:
        rc, text, _ = _run([py, "-m", "scancheck.cli", "bench", "--json", str(out / "bench.json"),
                            "--log2-sizes", *args.bench_sizes], out / "bench.log", env)
        status |= rc
        lines = text.splitlines()
        keep = [ln for ln in lines if ln.startswith(("dtype ", "float32 ", "float64 "))
                and ("2^28" in ln or "2^24" in ln or ln.startswith("dtype "))]
        summary.append("bandwidth (the look-back at its tuned launch, torch, CUB: GB/s and x "
                       "memcpy; the exact oracle's time over torch's per distribution):")
        summary.extend(f"  {ln}" for ln in keep)
        rc, text, _ = _run([py, "-m", "scancheck.cli", "bench", "--oracle", "--log2-sizes",
                            args.bench_sizes[-1]], out / "bench-oracle.log", env)
        status |= rc
        table = text[text.find("exact oracle on"):] if "exact oracle on" in text else ""
        summary.append("exact oracle on the device (ms, elements/s, x memcpy, torch.cumsum):")
        summary.extend(f"  {ln}" for ln in table.splitlines()[3:])
    return status


if __name__ == "__main__":
    sys.exit(main())
