"""Test-session set-up: Hypothesis profiles, the ``gpu`` marker, one GPU per xdist worker.

Profiles: ``ci`` (quick, the default), ``gpu`` (no deadline, more examples) and
``thorough`` (nightly).  Pick one with ``--hypothesis-profile NAME`` or the
``SCANCHECK_HYPOTHESIS_PROFILE`` environment variable; failing examples persist in
``SCANCHECK_HYPOTHESIS_DB`` -- a directory, or ``redis://host:port/N`` shared by a fleet of
runners (:mod:`scancheck.core.database`) -- and print how to reproduce them.

Tests marked ``gpu`` skip, saying why, where cupy or a CUDA device is missing.  With
several GPUs visible, xdist worker ``gwK`` gets GPU ``K mod count`` through
``CUDA_VISIBLE_DEVICES``, set before anything initialises CUDA, so CuPy, torch, child
processes and compute-sanitizer all use the same one.  All workers share one CuPy
kernel cache, so each kernel is compiled once per machine, not once per worker.  Workers
learn from the controller whether there is a GPU, and leave CUDA to their first GPU test.
On a GPU machine ``-n auto`` starts three workers per four cores, without one a worker more
than cores, and tests marked ``slow`` are handed out first (under worksteal, each worker's
first chunk opens with its share of them); the summary says how the tests and their seconds
fell per GPU.
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
import time
from collections import Counter
from itertools import zip_longest
from pathlib import Path

from scancheck.core.private import private_dir, redirect_bytecode

# Bytecode, where PYTHONDONTWRITEBYTECODE keeps it from being written beside the sources:
# every process of a session -- each xdist worker, each child a test starts -- compiled every
# module it imported, and pytest rewrote the asserts of every test module, of scancheck and of
# Hypothesis (its plugins' packages) anew in each worker: 3.5 CPU-s of a worker's 6 s of
# collection.  Kept instead in this user's private bytecode cache (the setting's intent,
# nothing written in the checkout, is kept); before Hypothesis is imported here, and in the
# environment the workers and children are started with.  A prefix set by the user wins.
redirect_bytecode()

# ml_dtypes registers its types with NumPy once a process: an in-process pytester run forgets
# the modules it imported and the next one imports them again, which ml_dtypes refuses
# ("appears already registered").  Imported here, before any such run, it is never forgotten.
import ml_dtypes  # noqa: E402,F401
import pytest  # noqa: E402
from hypothesis import HealthCheck, settings  # noqa: E402
from hypothesis.database import DirectoryBasedExampleDatabase  # noqa: E402

from scancheck.core.cuda import SUITE_CUPY_CACHE  # noqa: E402
from scancheck.core.database import example_database  # noqa: E402
from scancheck.core.devices import usable_cores, visible_gpus  # noqa: E402
from scancheck.oracle.compiled import COMPILED_ENV, SHARES, share_code  # noqa: E402

os.environ.setdefault("CUPY_CACHE_DIR", str(SUITE_CUPY_CACHE))
# JAX compiles a scan once per shape, and every worker meets the same ladder of shapes: a
# compilation cache on disk shared by the workers pays each once per session, not per worker
# (0.2-0.5 s each for associative_scan in x64).  Its directory is this user's alone: JAX
# runs whatever a cache holds.
_JAX_CACHE = private_dir("scancheck-jax-cache")
if _JAX_CACHE is not None:
    for _key, _value in (("JAX_COMPILATION_CACHE_DIR", str(_JAX_CACHE)),
                         ("JAX_PERSISTENT_CACHE_MIN_COMPILE_TIME_SECS", "0"),
                         ("JAX_PERSISTENT_CACHE_MIN_ENTRY_SIZE_BYTES", "-1")):
        os.environ.setdefault(_key, _value)
elif hasattr(os, "getuid"):
    raise RuntimeError(f"{tempfile.gettempdir()}/scancheck-jax-cache-{os.getuid()} is not this "
                       "user's private directory (or cannot be made there): remove it, or set "
                       "TMPDIR to a directory of your own")
# Each xdist worker and each child it starts (sanitizer runs, isolated targets) would start a
# BLAS/OpenMP thread per core at import.  scancheck does no BLAS work, and a dozen workers'
# spinning pools compete for the cores the tests need: a one-kernel child took 4.6 s of CPU
# in 1 s on a 32-core machine, 2.5 s on a 16-core one.
for _threads in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_threads, "1")

_DB = example_database() or DirectoryBasedExampleDatabase(
    str(Path(__file__).parents[1] / ".hypothesis" / "examples"))
_COMMON = dict(database=_DB, print_blob=True, deadline=None,
               suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
settings.register_profile("ci", max_examples=25, **_COMMON)
settings.register_profile("gpu", max_examples=100, **_COMMON)
settings.register_profile("thorough", max_examples=1000, **_COMMON)
settings.load_profile(os.environ.get("SCANCHECK_HYPOTHESIS_PROFILE", "ci"))
#: Seconds each conformance property may search in the tests, per profile (the ladder of sizes
#: each search walks first, every scale to 2**20 or 2**24, is never cut short): CI
#: has two cores and 90 s for the suite, one H100 60 s for the GPU tests; users' checks
#: default to 30 s a check (``scancheck check --budget``), as the GPU suite's ``check
#: --controls`` and library checks run them; ``thorough`` is the nightly search, of the CPU
#: tests too (``tox -e thorough``).  ``ci`` gives a property 0.02 s: the ladder, which catches
#: every CPU control at any budget (``test_controls``), is whole, Hypothesis draws where a
#: short ladder leaves time, and the long searches are the other profiles' (at 0.1 s the CPU
#: suite took 189 CPU-s and 101 s on two cores, at 0.02 s 171 CPU-s and 90 s).  ``gpu`` is
#: the suite run on every change, to 60 s on one H100; it gives 0.3 s and draws 100 examples
#: (at 1.0 s, 151 GPU conformance tests spent 151 of their 267 s searching after the ladder;
#: at 0.5 s and 200 examples, 438 GPU tests took 537-604 test-seconds, the last worker ending
#: at 52-61 s; at 0.3 s and 100, 49.6 s on the same machine).  The nightly ``thorough``
#: profile draws ten times the examples and searches 27 times as long.
PROPERTY_SECONDS = {"ci": 0.02, "gpu": 0.3, "thorough": 8.0}


@pytest.fixture
def budget():
    """The conformance budget of this session's Hypothesis profile."""
    from scancheck.engine.cases import Budget

    return Budget(PROPERTY_SECONDS.get(settings._current_profile, PROPERTY_SECONDS["ci"]))


@pytest.fixture(autouse=True)
def _warmed_first(request: pytest.FixtureRequest) -> None:
    """Under the GPU suite, whose warm step runs beside the tests, a test of a target that
    step compiles for (its ``name`` parameter, for its ``dtype`` where it has one) waits for
    those jobs, then loads what they compiled instead of compiling it again; elsewhere it
    waits for nothing."""
    params = getattr(getattr(request.node, "callspec", None), "params", {})
    if isinstance(params.get("name"), str):
        from scancheck.engine.warmup import wait_warmed

        wait_warmed(params["name"], params.get("dtype"))


def _worker_index(config: pytest.Config) -> int | None:
    worker = getattr(config, "workerinput", {}).get("workerid")
    return int(worker[2:]) if worker and worker.startswith("gw") else None


def _wants_gpu(config: pytest.Config) -> bool:
    markexpr = config.getoption("markexpr", "") or ""
    return "not gpu" not in markexpr


def _compile_oracles() -> None:
    """The Numba oracles compiled once into their cache on disk before the xdist workers start
    (or, where it is warm, loaded: a second), in processes side by side: a fresh checkout has
    no cache, and every worker, its zygote and child processes compiled the same functions at
    once.  On two cores the suite took 98 s with the cache empty, 94 s with this, 86-88 s with
    it full either way.  One that fails leaves the tests to compile and report it."""
    import subprocess

    if os.environ.get(COMPILED_ENV):
        return  # compiled by the session running this one, or by the GPU suite's warm step
    procs = [subprocess.Popen([sys.executable, "-c", share_code(k)], stdout=subprocess.DEVNULL,
                              stderr=subprocess.DEVNULL) for k in range(SHARES)]
    for proc in procs:
        try:
            proc.wait(timeout=120)
        except subprocess.TimeoutExpired:
            proc.kill()
    # Inherited by every process started from here on: a test that runs a pytest session of
    # its own under xdist (test_runner's -n auto) has it skip the two processes above, which
    # would only load what this one compiled (2.6 of that test's 5 CPU-s).
    os.environ[COMPILED_ENV] = "1"


def pytest_configure(config: pytest.Config) -> None:
    config.pluginmanager.register(_WorkerChunks(), "scancheck-worker-chunks")
    given = getattr(config, "workerinput", {})
    if not given and getattr(config.option, "numprocesses", None) and not config.option.collectonly:
        _compile_oracles()  # the controller of xdist workers, before it starts them
    if "scancheck_gpus" in given:
        # An xdist worker: the controller asked nvidia-smi and CUDA already, so the worker
        # starts without importing CuPy; its first GPU test initialises CUDA.
        gpus = given["scancheck_gpus"].split(",") if given["scancheck_gpus"] else []
        state = (given["scancheck_cuda_devices"], given["scancheck_no_gpu_reason"])
    else:
        gpus = list(visible_gpus()) if _wants_gpu(config) else []
        state = _gpu_state() if gpus else (0, "no NVIDIA GPU is visible")
    config._scancheck_gpus = gpus  # type: ignore[attr-defined]
    config._scancheck_state = state  # type: ignore[attr-defined]
    worker = _worker_index(config)
    if gpus and worker is not None:
        os.environ["CUDA_VISIBLE_DEVICES"] = gpus[worker % len(gpus)]


@pytest.hookimpl(optionalhook=True)
def pytest_configure_node(node) -> None:  # noqa: ANN001
    """Hand the controller's GPU list and CUDA state to each xdist worker."""
    count, reason = node.config._scancheck_state
    node.workerinput.update(scancheck_gpus=",".join(node.config._scancheck_gpus),
                            scancheck_cuda_devices=count, scancheck_no_gpu_reason=reason)


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_auto_num_workers(config: pytest.Config) -> int | None:
    """``-n auto`` on a GPU machine: three workers for every four cores; without one, one
    worker more than cores; and, where no ``--dist`` was given, ``--dist worksteal``.

    GPU tests start child processes (compute-sanitizer, isolated targets), so a worker
    needs more than one core; measured on the whole GPU suite, 12 workers beat 8 and 16 on
    a 16-core H100 machine, and 16 beat 32 on a 32-core two-H200 one.  The CPU suite's
    workers wait a tenth of their time (a child process starting, a hang's timeout, a slow
    target's sleep): on the 2-core CI machine 3 workers took 104 and 108 s where 2 took 116
    and 131 s, run by turns.  Where ``PYTEST_XDIST_AUTO_NUM_WORKERS`` is set, xdist decides.
    """
    if config.option.numprocesses == "auto" and config.option.dist == "no":
        # No --dist given: workers steal queued tests from each other.  The suite's tests run
        # from milliseconds to seconds; on the 2-core CI machine worksteal took 83.9 and 79.8 s
        # where xdist's default (load) took 88.7 and 84.9 s, run by turns.  Set here, not in
        # addopts, so that pytest without xdist, or with -n 0 --pdb, still starts.
        config.option.dist = "worksteal"
    if os.environ.get("PYTEST_XDIST_AUTO_NUM_WORKERS") or config.option.numprocesses != "auto":
        return None
    cores = usable_cores()
    if not (_wants_gpu(config) and visible_gpus()):  # called before pytest_configure
        return cores + 1
    return max(1, cores * 3 // 4)


def _gpu_state() -> tuple[int, str]:
    """(number of CUDA devices, reason when there are none)."""
    try:
        import cupy
    except ImportError as exc:
        return 0, f"cupy is not installed ({exc}); install scancheck[cuda12] or [cuda13]"
    try:
        count = cupy.cuda.runtime.getDeviceCount()
    except Exception as exc:  # no driver, no device: any CUDA error means "no GPU here"
        return 0, f"no usable CUDA device ({type(exc).__name__}: {exc})"
    return count, "" if count else "no CUDA device is visible"


def pytest_report_header(config: pytest.Config) -> list[str]:
    if hasattr(config, "workerinput"):  # workers print no header: asking CUDA would initialise it
        return []
    count, reason = config._scancheck_state  # type: ignore[attr-defined]
    profile = settings._current_profile
    lines = [f"hypothesis profile: {profile}"]
    if not count:
        return [f"scancheck: no GPU ({reason}); gpu tests will skip", *lines]
    import cupy

    gpus = config._scancheck_gpus  # type: ignore[attr-defined]
    name = cupy.cuda.runtime.getDeviceProperties(0)["name"].decode()
    workers = config.getoption("numprocesses", None) if config.pluginmanager.has_plugin("xdist") else None
    lines.insert(0, f"scancheck: GPUs {', '.join(gpus)} ({name}); "
                 + (f"xdist worker gwK uses GPU [{', '.join(gpus)}][K mod {len(gpus)}]"
                    if workers else "one process"))
    return lines


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    # Slow tests first, each paired with a quick one: under worksteal (-n auto's default here)
    # the first worker's run of the collection starts with them and the others steal its
    # quick tests from the far end; under --dist load, which hands out tests two to a
    # worker, the longest start at once and none waits behind another.
    # Tests of one xdist_group share a process's warm-up (a JIT's): they go first and side by
    # side, which keeps them on one worker under worksteal too (it hands each worker a run of
    # the collection and steals from a queue's end), as --dist loadgroup would.  They are
    # taken out before the pairing, so that none leaves two slow tests side by side.
    grouped = sorted((item for item in items if item.get_closest_marker("xdist_group")),
                     key=lambda item: str(item.get_closest_marker("xdist_group").args))
    rest = [item for item in items if not item.get_closest_marker("xdist_group")]
    slow = [item for item in rest if item.get_closest_marker("slow")]
    quick = [item for item in rest if not item.get_closest_marker("slow")]
    items[:] = grouped + [item for pair in zip_longest(slow, quick) for item in pair
                          if item is not None]
    count, reason = config._scancheck_state  # type: ignore[attr-defined]
    if count:
        return
    skip = pytest.mark.skip(reason=f"needs a CUDA GPU: {reason}")
    for item in items:
        # The marker, not the keyword: every folder above a test is a keyword too, and a
        # checkout in a folder named gpu would skip every test.
        if item.get_closest_marker("gpu") is not None:
            item.add_marker(skip)


class _WorkerChunks:
    """Under worksteal each worker is first handed a contiguous chunk of the collection, runs
    it from the front and has its queue's back stolen: each chunk is laid out with its share
    of the slow tests first and quick ones after, so that no slow test is left to the end of
    the session, where one worker runs it alone while the others are done."""

    @pytest.hookimpl(trylast=True)  # after -m and -k have deselected: the chunks are theirs
    def pytest_collection_modifyitems(self, config: pytest.Config,
                                      items: list[pytest.Item]) -> None:
        given = getattr(config, "workerinput", None)
        if not given or getattr(config.option, "dist", "") != "worksteal":
            return
        workers = int(given.get("workercount", 1))
        sizes, left = [], len(items)
        for i in range(workers):  # as worksteal splits its pending tests among idle workers
            sizes.append(left // (workers - i))
            left -= sizes[-1]
        grouped = [item for item in items if item.get_closest_marker("xdist_group")]
        slow = [item for item in items if item.get_closest_marker("slow") and
                item not in grouped]
        quick = [item for item in items if not item.get_closest_marker("slow") and
                 item not in grouped]
        chunks: list[list[pytest.Item]] = [[] for _ in sizes]
        weight = [0] * len(sizes)
        for item in grouped:  # one run, as the collection's order has them (see above)
            at = next(i for i, c in enumerate(chunks) if len(c) < sizes[i])
            chunks[at].append(item)
            weight[at] += 1
        for item in slow:  # to the chunk with the fewest slow tests that has room
            at = min((i for i, c in enumerate(chunks) if len(c) < sizes[i]),
                     key=lambda i: (weight[i], i))
            chunks[at].append(item)
            weight[at] += 1
        for item in quick:
            at = next(i for i, c in enumerate(chunks) if len(c) < sizes[i])
            chunks[at].append(item)
        items[:] = [item for chunk in chunks for item in chunk]


def pytest_deselected(items: list[pytest.Item]) -> None:
    """Whether -k, -m, --deselect or --lf left tests out: tests that read the collection's
    order (tests/test_runner.py) then collect afresh, since deselection follows ordering."""
    if items:
        items[0].config._scancheck_deselected = True  # type: ignore[attr-defined]


def pytest_sessionstart(session: pytest.Session) -> None:
    session.config._scancheck_t0 = time.time()  # type: ignore[attr-defined]
    session.config._scancheck_down = {}  # type: ignore[attr-defined]


@pytest.hookimpl(optionalhook=True)
def pytest_testnodedown(node, error) -> None:  # noqa: ANN001
    """When each xdist worker reported its session finished, its last test's teardown
    done.  Its process ends after this (in a GPU session at once, see pytest_unconfigure;
    else when the controller stops them all at the end), which this time does not show."""
    down = getattr(node.config, "_scancheck_down", None)
    if down is not None:
        down[node.workerinput["workerid"]] = time.time()


@pytest.hookimpl(trylast=True)
def pytest_unconfigure(config: pytest.Config) -> None:
    """An xdist worker of a GPU session ends its process here, its outcome already with the
    controller, and skips the interpreter's exit: the controller stops the workers only once
    the last is done, and their exits, with CUDA, JAX and torch loaded, took 3.9 s of the
    H100 suite's wall time after its last test.  Nothing a test keeps waits for exit: reports
    and Hypothesis's database are written as the tests run."""
    if _worker_index(config) is None or not config.workerinput.get("scancheck_cuda_devices"):
        return
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(0)  # xdist takes the exit status from the worker's report, sent before this


def pytest_terminal_summary(terminalreporter, exitstatus, config) -> None:  # noqa: ANN001
    """Tests and test-seconds per GPU (from the xdist worker that ran each), and when the
    workers started and stopped testing: every GPU busy, and where the wall time went."""
    gpus = config._scancheck_gpus  # type: ignore[attr-defined]
    if not gpus or not config._scancheck_state[0]:  # type: ignore[attr-defined]
        return
    tests: Counter[str] = Counter()
    seconds: Counter[str] = Counter()
    first: dict[str, float] = {}  # worker -> when its first test started
    ended: dict[str, float] = {}  # worker -> when its last test ended
    phases = []
    for reports in terminalreporter.stats.values():
        for rep in reports:
            if not isinstance(rep, pytest.TestReport) or "gpu" not in rep.keywords:
                continue
            node = getattr(rep, "node", None)
            worker = getattr(node, "workerinput", {}).get("workerid", "gw0") if node else "gw0"
            gpu = gpus[int(worker[2:]) % len(gpus)]
            seconds[gpu] += rep.duration
            tests[gpu] += rep.when == "call" and rep.outcome in ("passed", "failed")
            if getattr(rep, "start", None):  # pytest >= 8.2 stamps each phase
                first[worker] = min(first.get(worker, rep.start), rep.start)
                ended[worker] = max(ended.get(worker, rep.stop), rep.stop)
                phases.append({"worker": worker, "test": rep.nodeid, "phase": rep.when,
                               "start": rep.start, "stop": rep.stop})
    if not tests:
        return
    terminalreporter.write_line("gpu tests per GPU: " + ", ".join(
        f"GPU {g}: {tests[g]} ({seconds[g]:.0f} s)" for g in gpus))
    if first:
        t0 = config._scancheck_t0  # type: ignore[attr-defined]
        started = f"first test at +{min(first.values()) - t0:.1f} s, "
        if len(first) > 1:
            started += f"all {len(first)} workers testing by +{max(first.values()) - t0:.1f} s, "
        # Where the workers' last tests end far apart, the scheduling left cores idle; where
        # the workers go down long after, their teardown did.
        done = (f"workers' last tests ended from +{min(ended.values()) - t0:.1f} to "
                f"+{max(ended.values()) - t0:.1f} s")
        down = config._scancheck_down  # type: ignore[attr-defined]
        if down:
            done += f", the last worker down at +{max(down.values()) - t0:.1f} s"
        terminalreporter.write_line(f"gpu timeline: {started}{done}")
        if os.environ.get("SCANCHECK_TIMELINE"):  # each phase of each test, for a closer look
            timeline = Path(os.environ["SCANCHECK_TIMELINE"])
            timeline.parent.mkdir(parents=True, exist_ok=True)
            timeline.write_text(json.dumps(
                {"t0": t0, "down": down, "phases": phases}))
