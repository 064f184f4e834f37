"""The whole GPU suite and the benchmarks in one call, with a short summary printed last.

    python -m scancheck.gpusuite [--workers auto] [--profile gpu] [--parts tests huge ...]

Runs ``pytest -m "gpu and not huge and not findings" -n WORKERS`` at the ``gpu`` Hypothesis
profile (or ``--profile``), beside a warm step that fills the compilers' caches on disk (each
job's times in ``warm-jobs.json``), then the tests past 2**31 elements in one process, the
findings' reproducers, ``scancheck verify``, ``check`` on the library scans and the kernels,
the negative controls, the precision table and the bandwidth benchmark.  Logs go to ``$OUT``
(or ./gpusuite-out).
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import threading
import time
from collections.abc import Mapping
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, NamedTuple

from ...core.cuda import SUITE_CUPY_CACHE
from ...core.devices import usable_cores
from ...core.private import cache_bytecode
from ..progress import Progress

PARTS = ("tests", "huge", "findings", "verify", "check", "controls", "matrix", "precision", "bench")
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

#: Inductor compiles in the process that calls torch.compile.  By default it starts a pool of
#: a worker a core (each importing torch and Triton), again after each compilation: in every
#: warm job and test worker that compiles, beside the rest of a suite that already has a
#: process on every core.
_INDUCTOR = {"TORCHINDUCTOR_COMPILE_THREADS": "1"}

#: The GPU tests' targets whose library compiles once per (shape, dtype), into JAX's cache on
#: disk: the warm step calls each on every input its tests' ladders reach
#: (:mod:`scancheck.engine.warmup`), a dtype to a process, so that the cache holds every
#: program before the tests start; a stamp beside the cache marks each job done.
JIT_TARGETS = ("jax.lax.associative_scan (x64)", "jax.numpy.cumprod", "jax.numpy.cumsum (x64)",
               "jax.numpy.cumprod (x64)", "jax.lax.scan (add, initial)",
               "jax.lax.scan (mul, initial)", "jax.numpy.cumsum (default dtype)")
#: Those whose library compiles its scan kernels per dtype and layout, into CuPy's cache.
CUPY_TARGETS = ("cupy.cumprod (CUB)", "cupy.cumsum (no CUB)", "cupy.cumsum (default dtype)")
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
#: Processes that compile the reference kernels and the device oracle, each a share of the
#: modules in turn (a process a module started Python, CuPy and a CUDA context 26 times, each
#: job 4-14 s on a fresh H200, beside the tests).
KERNEL_SHARES = 4
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


def _failed(text: str) -> list[str]:
    """pytest's lines naming the tests that failed or erred (the first 15), indented."""
    fails = [ln for ln in text.splitlines() if ln.startswith(("FAILED", "ERROR"))]
    return [f"  {ln[:200]}" for ln in fails[:15]]


def seconds_by_module(junit: Path, top: int = 5) -> list[str]:
    """The test modules that took the most test-seconds in the JUnit XML ``junit`` (setup and
    teardown included), largest first, a line each; none where it is missing or unreadable."""
    import xml.etree.ElementTree as ET

    try:
        cases = ET.parse(junit).getroot().iter("testcase")
    except (OSError, ET.ParseError):
        return []
    per: dict[str, float] = {}
    for case in cases:
        module = case.get("classname", "?")  # a test function's module, dotted
        per[module] = per.get(module, 0.0) + float(case.get("time", 0.0))
    total = sum(per.values())
    ranked = sorted(per.items(), key=lambda kv: -kv[1])[:top]
    return [f"test-seconds {total:.0f} in all; by module: " + ", ".join(
        f"{m} {t:.0f}" for m, t in ranked)] if ranked else []


def _check_targets(py: str, out: Path, env: dict[str, str], summary: list[str],
                   jobs: str) -> int:
    """``scancheck check`` on the library scans and every scancheck kernel, and on the
    grid-scope kernels under the recurrence pair too (long recurrences at GPU sizes); the
    summary table."""
    from ...adapters import all_rows, builtin_targets
    from ...kernels.registry import VARIANTS

    # Every built-in target but the CPU models (CI checks those) and the libraries' further
    # modes (scancheck hunt checks them), kernels included; those whose library this
    # machine lacks are named, not checked.
    rows = all_rows()
    variants = {r.name for r in rows if r.variant}
    table = {n: t for n, t in builtin_targets().items() if n not in variants}
    # The longest checks start first (checks start in the order given, --jobs at once): the
    # kernels' (sanitizers, and the checks past 2**31 that take turns on the device), then
    # the other GPU targets', then the CPU ones', which fill the slots the others leave.
    kernels = [f"kernel:{name}:256:recurrence" for name, var in VARIANTS.items()
               if var.capacity is None and "recurrence" in var.operators]
    # The look-back as a reference cumprod and logcumsumexp on the GPU.
    kernels += ["kernel:decoupled_lookback:256:mul", "kernel:decoupled_lookback:256:logaddexp"]
    # JAX's rows declare the CPU and run where JAX does: on the GPU here.
    on_gpu = {r.name for r in rows if r.runs_on_gpu}
    ready = [name for name, t in table.items()
             if not name.startswith("model:") and not t.unavailable]
    targets = kernels + sorted(ready, key=lambda name: (not name.startswith("scancheck:"),
                                                        name not in on_gpu))
    unrun = [f"{name} ({t.unavailable})" for name, t in table.items() if t.unavailable]
    rc, text, secs = _run([py, "-m", "scancheck", "check", *targets, "--jobs", jobs,
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
    checkout on the path, and the suite's caches and Inductor's compile threads wherever
    ``environ`` sets none of its own."""
    env = {**_JAX_CACHE, **_INDUCTOR, "CUPY_CACHE_DIR": str(SUITE_CUPY_CACHE), **environ}
    root = Path(__file__).resolve().parents[3]  # the checkout: scancheck/faces/jobs/ up
    env.update(SCANCHECK_HYPOTHESIS_PROFILE=profile, PYTHONUNBUFFERED="1",
               PYTHONPATH=os.pathsep.join([str(root), environ.get("PYTHONPATH", "")]))
    # The warm step's processes write the bytecode the tests' workers load (each of an H100's
    # twelve compiled torch from source where none was installed).
    cache_bytecode(env)
    return env


class _Job(NamedTuple):
    """One process of the warm step: what it is, its code, and the target and dtype whose
    tests wait for it (None: no test waits, it fills a cache every test may read)."""

    label: str
    code: str
    target: str | None = None
    dtype: str | None = None


def _library_jobs(names: tuple[str, ...]) -> list[_Job]:
    """The warm step's library processes: each target of ``names`` that can run here, a dtype
    to a process (eager JAX dispatches under the GIL, so threads alone leave cores idle)."""
    from ...adapters import builtin_targets

    table = builtin_targets()
    jobs = []
    for name in names:
        target = table[name]
        if target.unavailable:
            continue
        parts = _WARM_PARTS.get(name, 1)
        jobs += [_Job(f"{name} {dtype}" + (f" {part + 1}/{parts}" if parts > 1 else ""),
                      f"from scancheck.engine.warmup import warm\n"
                      f"warm({name!r}, {SUITE_MAX_N}, dtypes=({dtype!r},), threads=2, "
                      f"part={part}, parts={parts})", name, dtype)
                 for dtype in target.spec.dtypes for part in range(parts)]
    return jobs


def compiled_property(spec: Any) -> str:
    """The property the GPU tests check a :data:`COMPILED_TARGETS` target under."""
    return ("segments" if spec.segments else "probe monoids" if spec.combine
            else "floats within bound")


#: The tests this suite runs: every one marked ``gpu`` but those past 2**31 (``--parts huge``)
#: and the findings' reproducers (``--parts findings``: each a process compiling its own).
GPU_TESTS = "gpu and not huge and not findings"


def _compiled_jobs() -> list[_Job]:
    """The warm step's processes for :data:`COMPILED_TARGETS` that run here (the modes the
    GPU tests check: the further ones are the hunt's)."""
    from ...adapters import all_rows, builtin_targets

    variants = {r.name for r in all_rows() if r.variant}
    return [_Job(name, f"from scancheck.engine.warmup import warm_check\n"
                       f"warm_check({name!r}, {compiled_property(t.spec)!r}, {max_n})", name)
            for name, t in builtin_targets().items() if not t.unavailable and name not in variants
            for prefix, max_n in COMPILED_TARGETS.items()
            if name.startswith(prefix) and "CPU" not in name]


def compile_modules(modules: list[tuple[str, str, dict[str, int] | None]]) -> int:
    """Compile each of ``modules`` -- ("kernel", variant, params) or ("oracle", dtype, None) --
    into its cache on disk, one after another; the number that failed (their tests report
    the error)."""
    from ...kernels.launch import warm as kernel
    from ...oracle.exact_device import warm as oracle

    failed = 0
    for kind, name, params in modules:
        try:
            if kind == "kernel":
                kernel(name, params)
            else:
                oracle(name)
        except Exception:
            failed += 1
    return failed


def _collection_jobs() -> list[_Job]:
    """The warm step's collection of the tests: each worker's collection rewrites every test
    module's asserts and compiles it, all twelve at once on a fresh machine, unless a
    collection before them left the bytecode."""
    return [_Job("test modules", "import sys, pytest; sys.exit(pytest.main(['--collect-only', "
                                 f"'-q', '-p', 'no:cacheprovider', '-m', {GPU_TESTS!r}]))")]


class _Warming:
    """The warm step: every variant compiled once (and the look-back at each tuning
    candidate's items), the device oracle at each format, the CPU oracle and the library
    programs of the tests' ladders, side by side, into their caches on disk, a process a core.

    It runs beside the tests.  :meth:`gate` waits for what the tests' pytest needs before it
    starts (the test modules' bytecode, the CPU oracle); the other jobs go on while the tests
    run, and a test of a target that has jobs of its own (JAX, CuPy, torch.compile, fla) waits
    for them (:func:`scancheck.engine.warmup.wait_warmed`) instead of compiling what they are
    compiling.  Where the CPU oracle's jobs passed, ``env`` tells the tests' pytest so."""

    def __init__(self, py: str, env: dict[str, str], folder: Path | None = None) -> None:
        from ...kernels.launch import warm_jobs
        from ...oracle.compiled import SHARES, share_code
        from ...oracle.exact_device import FORMATS

        self.py, self.env, self.folder = py, env, folder
        # The variants at their defaults (the modules the kernel tests load) and the device
        # oracle come before the tuning candidates (only verify and the tuning tests run them).
        compiles = warm_jobs()
        modules = ([("kernel", name, params) for name, params in compiles if params is None]
                   + [("oracle", d, None) for d in FORMATS]
                   + [("kernel", name, params) for name, params in compiles
                      if params is not None])
        kernels = [_Job(f"kernels {k + 1}/{KERNEL_SHARES}",
                        "from scancheck.faces.jobs.gpusuite import compile_modules\n"
                        f"raise SystemExit(compile_modules({modules[k::KERNEL_SHARES]!r}))")
                   for k in range(KERNEL_SHARES) if modules[k::KERNEL_SHARES]]
        self.cpu_oracles = [_Job(f"CPU oracle {k + 1}/{SHARES}", share_code(k))
                            for k in range(SHARES)]
        jit = _library_jobs(JIT_TARGETS)
        self.stamped = {job.label for job in jit}
        # What pytest needs first, then torch.compile's jobs (the longest a test waits for: 39
        # s on a fresh H100; started behind the JAX ones, its test waited 80 s), then the
        # CUDA modules the kernel and oracle tests load (last, on a fresh H200, they ran from
        # 85 to 107 s, while those tests had run from +12 s), then JAX and CuPy.
        self.gated = [*_collection_jobs(), *self.cpu_oracles]
        self.jobs = [*self.gated, *_compiled_jobs(), *kernels, *jit,
                     *_library_jobs(CUPY_TARGETS)]
        self.done: dict[str, tuple[int, float, float]] = {}  # label -> (rc, start, end)
        self._gate = threading.Event()
        self._thread: threading.Thread | None = None

    def start(self) -> _Warming:
        """Start the jobs, in a thread of this process; each runs as a process of its own."""
        from ...engine.warmup import WARMING_ENV, plan_warming

        self.t0 = time.monotonic()
        if self.folder is not None:
            plan: dict[str, dict[str, list[str]]] = {}
            for k, job in enumerate(self.jobs):
                if job.target is not None:
                    plan.setdefault(job.target, {}).setdefault(job.dtype or "-", []).append(
                        str(k))
            plan_warming(self.folder, plan)
            self.test_env = {**self.env, WARMING_ENV: str(self.folder)}
        else:
            self.test_env = dict(self.env)
        self._thread = threading.Thread(target=self._run_all, daemon=True)
        self._thread.start()
        return self

    def _run_all(self) -> None:
        from ...engine.warmup import job_ended, warming_over

        deadline = self.t0 + 300
        stamps = Path(self.env["JAX_COMPILATION_CACHE_DIR"]) / "scancheck-warmed"
        stamps.mkdir(parents=True, exist_ok=True)
        salt = _warm_salt()
        gated = set(self.gated)

        def run(k: int) -> None:
            job = self.jobs[k]
            t0 = time.monotonic()
            stamp = stamps / hashlib.sha256((salt + job.code).encode()).hexdigest()[:24]
            if job.label in self.stamped and stamp.exists():
                rc = 0
            else:
                try:
                    rc = subprocess.run([self.py, "-c", job.code], env=self.env,
                                        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                        timeout=max(1.0, deadline - t0)).returncode
                except subprocess.TimeoutExpired:
                    rc = -1
                if job.label in self.stamped and rc == 0:
                    stamp.touch()
            self.done[job.label] = (rc, t0 - self.t0, time.monotonic() - self.t0)
            if self.folder is not None:
                job_ended(self.folder, str(k))
            if not self._gate.is_set() and all(g.label in self.done for g in gated):
                self._gate.set()

        # One process a core: some sixty at once held tens of GiB of host memory (JAX's).  A
        # JAX job already run on this machine for the same code and version left a stamp
        # beside JAX's cache, and is passed over: loading its programs took 34 s on an H100.
        try:
            with ThreadPoolExecutor(usable_cores()) as pool:
                list(pool.map(run, range(len(self.jobs))))
        finally:
            self._gate.set()
            if self.folder is not None:
                warming_over(self.folder)

    def gate(self) -> float:
        """Wait for the jobs the tests' pytest needs before it starts; the seconds since the
        start.  Where the CPU oracle's jobs passed, the tests' environment says so."""
        from ...oracle.compiled import COMPILED_ENV

        self._gate.wait()
        if all(self.done.get(job.label, (1,))[0] == 0 for job in self.cpu_oracles):
            self.env[COMPILED_ENV] = self.test_env[COMPILED_ENV] = "1"
        return time.monotonic() - self.t0

    def finish(self, out: Path | None = None) -> str:
        """Wait for every job; the summary line (and, in ``out``, each job's times).  The
        step's folder of job marks is removed once read."""
        assert self._thread is not None
        self._thread.join()
        done = self.done
        # A module that does not compile is the tests' to report, with its error.
        failed = [label for label, (rc, _, _) in done.items() if rc]
        slowest = ", ".join(f"{label} {end - start:.0f} s" for label, (_, start, end)
                            in sorted(done.items(), key=lambda d: d[1][1] - d[1][2])[:3])
        line = (f"caches warmed: {len(done) - len(failed)} of {len(self.jobs)} jobs in "
                f"{max((end for _, _, end in done.values()), default=0):.0f} s (slowest: "
                f"{slowest})" + (f" (failed: {', '.join(failed)})" if failed else ""))
        if self.folder is not None and (self.folder / "waited").exists():
            waits = [float(ln.split("\t")[0])
                     for ln in (self.folder / "waited").read_text().splitlines() if ln]
            line += (f"; {len(waits)} tests waited for them, {sum(waits):.0f} s in all, "
                     f"the longest {max(waits):.0f} s")
        if self.folder is not None:  # a mark a job: some hundred empty files among the logs
            shutil.rmtree(self.folder, ignore_errors=True)
        if out is not None:
            (out / "warm-jobs.json").write_text(json.dumps(
                [{"job": label, "rc": rc, "start": round(start, 2), "end": round(end, 2)}
                 for label, (rc, start, end) in sorted(done.items(), key=lambda d: d[1][1])],
                indent=1))
        return line


def _warm_kernels(py: str, env: dict[str, str]) -> str:
    """The whole warm step, before anything else; its summary line."""
    warming = _Warming(py, env).start()
    warming.gate()
    return warming.finish()


def _warm_salt() -> str:
    """What a JAX job's stamp depends on besides its code: scancheck's engine and core (which
    decide the inputs a job calls) and JAX's version.  A stale stamp only leaves the tests
    to compile what they meet."""
    from importlib import metadata

    package = Path(__file__).resolve().parents[2]
    digest = hashlib.sha256()
    for path in sorted([*package.glob("engine/**/*.py"), *package.glob("targets/*.py"),
                        *package.glob("core/*.py")]):
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
        # The warm step runs beside the tests, which start once the test modules' bytecode
        # and the CPU oracle are there; a test of a target the step is compiling for waits.
        warming = _Warming(py, env, out / "warming").start()
        gated = warming.gate()
        # Work stealing: a worker out of tests takes half of the busiest one's, so that no
        # worker ends its share long after the others (on an H100 with every cache warm, 57 s
        # against 65 s for xdist's default scheduling).
        rc, text, secs = _run([py, "-m", "pytest", "-m", GPU_TESTS, "-n", args.workers,
                               "--dist", "worksteal", "-q", "-p", "no:cacheprovider",
                               # Every test's time, for what the suite's wall time is made of.
                               "--durations=8", f"--junitxml={out / 'gpu-tests.xml'}",
                               *args.pytest_args],
                              out / "gpu-tests.log", warming.test_env)
        status |= rc
        summary.append(f"{warming.finish(out)}; the tests started at +{gated:.0f} s")
        summary.append(f"gpu suite (-n {args.workers}, {args.profile} profile): {_counts(text)} "
                       f"[{secs:.0f}s wall, {gated + secs:.0f}s with the warm step's start]")
        summary.extend(f"  {ln}" for ln in text.splitlines()
                       if ln.startswith(("gpu tests per GPU", "gpu timeline")))
        slow = text[text.find("slowest"):].splitlines()[1:4] if "slowest" in text else []
        summary.extend(f"  slowest: {ln.strip()}" for ln in slow)
        summary.extend(f"  {ln}" for ln in seconds_by_module(out / "gpu-tests.xml"))
        if rc:
            summary.extend(_failed(text))
    if "huge" in parts:
        # The checks past 2**32 take turns on the device (a lock in scancheck.engine.large); the
        # GPU controls, each several child processes, run beside them.
        rc, text, secs = _run([py, "-m", "pytest", "-m", "huge", "-n", "3", "-q", "-p",
                               "no:cacheprovider", "--durations=5"], out / "huge-tests.log", env)
        status |= rc
        summary.append(f"huge tests (past 2**31 and 2**32, GPU controls): {_counts(text)} "
                       f"[{secs:.0f}s]")
        if rc:
            summary.extend(_failed(text))
    if "findings" in parts:
        # Three at once: two of them hold tens of GiB past 2**31 elements.
        rc, text, secs = _run([py, "-m", "pytest", "-m", "gpu and findings", "-n", "3", "-q",
                               "-p", "no:cacheprovider", "-rs"], out / "findings.log", env)
        status |= rc
        summary.append(f"findings' reproducers (each says what the known-bug registry "
                       f"expects): {_counts(text)} [{secs:.0f}s]")
        if rc:
            summary.extend(_failed(text))
    if "verify" in parts:
        rc, text, _ = _run([py, "-m", "scancheck", "verify", "--block", "256"],
                           out / "verify.log", env)
        status |= rc
        summary.append(f"scancheck verify: {text.strip().splitlines()[-1]}")
    if "check" in parts:
        status |= _check_targets(py, out, env, summary, args.jobs)
    if "controls" in parts:
        # The default flags of `scancheck check`: every control must be caught with them.
        rc, text, secs = _run([py, "-m", "scancheck", "check", "--controls", "--jobs",
                               args.jobs],
                              out / "controls.log", env)
        status |= rc
        print(text[-3000:])
        summary.append(f"negative controls ({secs:.0f}s): {text.strip().splitlines()[-1]}")
    if "matrix" in parts:
        rc, text, secs = _run([py, "-m", "scancheck", "matrix", "--markdown", "--budget", "1",
                               "--workers", "12"], out / "matrix.md", env)
        status |= rc
        cells = [ln for ln in text.splitlines() if ln.startswith("| ") and "library scan" not in ln]
        ok = sum(ln.split("|")[4].strip() == "conforms" for ln in cells)
        summary.append(f"conformance matrix ({secs:.0f}s): {ok} of {len(cells)} cells conform "
                       f"(matrix.md)")
    if "precision" in parts:
        rc, text, secs = _run([py, "-m", "scancheck", "precision", "--sweep", "--max-log2", "30",
                               "--plot", str(out / "precision.png")], out / "precision.log", env)
        status |= rc
        table = text[: text.find("\nsweep")] if "\nsweep" in text else text
        summary.append(f"scancheck precision ({secs:.0f}s):")
        summary.extend(f"  {ln}" for ln in table.strip().splitlines()[1:])
    if "bench" in parts:
        rc, text, _ = _run([py, "-m", "scancheck", "bench", "--json", str(out / "bench.json"),
                            "--log2-sizes", *args.bench_sizes], out / "bench.log", env)
        status |= rc
        lines = text.splitlines()
        keep = [ln for ln in lines if ln.startswith(("dtype ", "float32 ", "float64 "))
                and ("2^28" in ln or "2^24" in ln or ln.startswith("dtype "))]
        summary.append("bandwidth (the look-back at its tuned launch, torch, CUB: GB/s and x "
                       "memcpy; the exact oracle's time over torch's per distribution):")
        summary.extend(f"  {ln}" for ln in keep)
        rc, text, _ = _run([py, "-m", "scancheck", "bench", "--oracle"],
                           out / "bench-oracle.log", env)
        status |= rc
        table = text[text.find("exact oracle on"):] if "exact oracle on" in text else ""
        summary.append("exact oracle on the device (ms, elements/s, x memcpy, torch.cumsum):")
        summary.extend(f"  {ln}" for ln in table.splitlines()[3:])
    return status

