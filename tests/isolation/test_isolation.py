"""Targets in child processes: faults and hangs are verdicts, usage errors are not, and
sanitizer runs see through memory pools and name the size that showed a report.

The real compute-sanitizer runs in the GPU tests; here a stand-in on PATH checks what
scancheck hands it and how it reads the answer.
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
from dataclasses import asdict, replace
from pathlib import Path

import numpy as np
import pytest

from scancheck.engine.cases import Budget, Case
from scancheck.engine.conformance import check
from scancheck.engine.options import CheckOptions, Plan
from scancheck.isolation.child import smoke_case
from scancheck.isolation.parent import (
    IsolatedCheck,
    UsageError,
    bisect_death,
    check_isolated,
    deal_groups,
    device_turn,
    first_report_size,
    first_share,
    plan,
    run_properties,
)
from scancheck.isolation.watch import (
    GROWING,
    SMALL_N,
    Memory,
    growing_call,
    slow_call,
    watch,
)
from scancheck.targets.resolve import resolve
from scancheck.targets.spec import TargetSpec, spec_from_json


def _size(case: dict) -> dict:
    """The n and dtype of the case a fault or hang was in, having checked that it names its
    data too: the input is drawn again from it, n elements of its dtype."""
    x = Case(case["n"], case["dtype"], case["data"], case["seed"], case.get("drawn", 0),
             case.get("skip", 0)).data("add")
    assert x.shape == (case["n"],) and x.dtype == np.dtype(case["dtype"])
    return {"n": case["n"], "dtype": case["dtype"]}


def test_a_faulting_target_is_reported_and_the_session_goes_on(budget):
    props = ("integers exact", "recurrence", "floats within bound")
    report = check_isolated("scancheck.testing:crashing_scan", properties=props, budget=budget,
                            timeout=30)
    statuses = {r.name: r.status for r in report.results}
    assert statuses["integers exact"] == "fault" and statuses["recurrence"] == "skip"
    assert "SIGABRT" in report.results[0].diagnosis
    assert [r.name for r in report.results] == list(props)  # in order, whoever ran them
    assert report.verdict.cause.name == "FAULT"
    # ... and this process can go on checking other targets.
    assert check(resolve("numpy.cumsum"), ("integers exact",), budget=budget).passed


def test_a_target_that_exits_with_status_0_is_a_fault_saying_so(budget, tmp_path):
    (tmp_path / "quits.py").write_text("import sys\n\ndef scan(x):\n    sys.exit(0)\n")
    report = check_isolated(f"{tmp_path / 'quits.py'}:scan", properties=("integers exact",),
                            budget=budget, timeout=30)
    assert report.verdict.cause.name == "FAULT"
    assert "the process exited with status 0 before its checks ended" in report.summary


def test_a_target_that_never_returns_is_a_hang_at_the_size_it_hung(budget):
    report = check_isolated("scancheck.testing:hanging_scan",
                            properties=("integers exact", "deterministic"), budget=budget,
                            timeout=1)
    hang, below = report.results
    # The case names the dtype it hung in: 'integers exact' draws int32 first.
    assert hang.status == "hang" and _size(hang.smallest_case) == {"n": 5, "dtype": "int32"}
    assert hang.diagnosis.startswith("the target gave no answer in 1 s at n = 5")
    assert hang.timeout == 1  # the report's script waits as long before it calls it a hang
    # The next property goes on in a new child to the largest size that returned, and says
    # so: the target hangs from n = 4, and every size between 2 and 5 could have cost another
    # whole timeout.  The hang's n is the smallest found, not every smaller one checked.
    assert hang.detail["largest n"] == 2 and not hang.minimal
    assert below.status == "pass" and below.detail["largest n"] == 2
    assert below.detail["checked"] == "to n = 2 (the target's hang in 'integers exact' at n = 5)"
    assert report.diagnosis.startswith("fault: hang in 'integers exact': the target gave no "
                                       "answer in 1 s at n = 5")
    assert report.diagnosis.endswith("(smallest failing n found: 5; not every smaller n checked)")


def test_a_target_whose_first_call_never_returns_is_not_said_to_have_been_fast(budget, tmp_path):
    """No call returned, so none was fast before the one that ran past --timeout: the hang
    says its first call did, and that a target this slow at every n reads the same."""
    (tmp_path / "sleepy.py").write_text("import time\n\ndef scan(x):\n    time.sleep(60)\n")
    report = check_isolated(f"{tmp_path / 'sleepy.py'}:scan", properties=("integers exact",),
                            budget=budget, timeout=1)
    (hang,) = report.results
    assert hang.status == "hang", hang
    assert "(its first call ran past --timeout: a loop that never ends, or a target slower " \
           "than --timeout allows at any n)" in hang.diagnosis, hang.diagnosis
    assert "before it were fast" not in hang.diagnosis


@pytest.mark.parametrize("locator, message", [
    ("nope_mod:fn", "module 'nope_mod' cannot be imported"),
    ("scancheck.controls.sums:no_such_scan", "has no attribute 'no_such_scan'"),
    ("/no/such/file.cu", "is not a file"),
    ("kernel:no_such_variant", "variant='no_such_variant' is unknown"),
])
def test_a_target_that_cannot_be_loaded_is_a_usage_error_not_a_verdict(locator, message):
    with pytest.raises(UsageError, match=message):
        check_isolated(locator, properties=("integers exact",))


def test_bad_options_are_refused_before_anything_runs():
    with pytest.raises(ValueError, match="timeout=0"):
        check_isolated("numpy.cumsum", timeout=0)
    with pytest.raises(ValueError, match="sanitize='leakcheck' is unknown"):
        check_isolated("numpy.cumsum", sanitize=("leakcheck",))


_STAND_IN = """#!/bin/sh
# compute-sanitizer stand-in: record the pool settings, run the command, report a read
# error right after the launch at n = 257.
env | grep -E 'SCANCHECK_NO_MEMORY_POOL|PYTORCH_NO_CUDA|XLA_PYTHON' > {envfile}
echo "$*" > {envfile}.args
while [ "${{1#--}}" != "$1" ]; do shift 2; done
echo "========= COMPUTE-SANITIZER"
"$@" | while read -r line; do
  echo "$line"
  [ "$line" = "scancheck-sanitize: n=257" ] && echo "========= Invalid __global__ read of size 4 bytes"
done
echo "========= ERROR SUMMARY: 1 error"
"""


def test_a_sanitizer_run_has_every_pool_off_and_names_the_size_of_the_first_report(
        tmp_path, monkeypatch, budget):
    envfile = tmp_path / "env.txt"
    tool = tmp_path / "compute-sanitizer"
    tool.write_text(_STAND_IN.format(envfile=envfile))
    tool.chmod(0o755)
    monkeypatch.setenv("PATH", f"{tmp_path}{os.pathsep}{os.environ['PATH']}")
    report = check_isolated("numpy.cumsum", properties=(), sanitize=("memcheck",), budget=budget)
    r = report.results[0]
    assert (r.name, r.status, r.cause) == ("sanitizer: memcheck", "fail", "FAULT")
    assert r.diagnosis == "memory error: memcheck reported 1 (first at n = 257, allocators unpooled)"
    assert r.detail["sizes"] == "1, 31, 33, 255, 257, 1000, 4099, 70001"
    assert set(envfile.read_text().split()) == {
        "SCANCHECK_NO_MEMORY_POOL=1", "PYTORCH_NO_CUDA_MEMORY_CACHING=1",
        "XLA_PYTHON_CLIENT_PREALLOCATE=false", "XLA_PYTHON_CLIENT_ALLOCATOR=platform"}
    # A failed host API call is no memory error of the kernel's: numba-cuda's driver probes
    # (cuGetProcAddress) made memcheck report 48 on a correct scan.
    assert "--report-api-errors no" in (tmp_path / "env.txt.args").read_text()


def test_the_first_report_is_traced_to_the_size_launched_before_it():
    out = "\n".join(["========= COMPUTE-SANITIZER", "scancheck-sanitize: n=1",
                     "scancheck-sanitize: n=33", "========= Error: Race reported between Write",
                     "=========     at 0x1c0 in scan", "scancheck-sanitize: n=257",
                     "========= RACECHECK SUMMARY: 1 hazard displayed"])
    assert first_report_size(out) == 33
    assert first_report_size("========= ERROR SUMMARY: 0 errors") is None


def test_gpu_targets_get_the_sanitizers_and_the_large_checks_by_default():
    gpu, cpu = TargetSpec(device="gpu"), TargetSpec()

    def tasks(spec, large, sanitize, have_sanitizer=True):
        options = CheckOptions(properties=("integers exact",), large=large, sanitize=sanitize)
        return plan(spec, options, have_sanitizer)

    assert tasks(gpu, None, None) == [
        ("property", "integers exact"), ("property", "past 2**31"), ("property", "past 2**32"),
        *[("sanitizer", t) for t in ("memcheck", "initcheck", "racecheck", "synccheck")]]
    assert tasks(gpu, None, None, False) == tasks(gpu, None, ())
    assert tasks(gpu, False, ()) == [("property", "integers exact")]  # --quick
    assert tasks(cpu, None, None) == [("property", "integers exact")]
    assert tasks(cpu, True, ("memcheck",))[1:] == [
        ("property", "past 2**31"), ("property", "past 2**32"), ("sanitizer", "memcheck")]
    batched = TargetSpec(device="gpu", axis="arg")
    assert tasks(batched, None, ())[1:] == [
        ("property", "past 2**31"), ("property", "past 2**32"), ("property", "batch past 2**32")]
    segmented = TargetSpec(device="gpu", segments="offsets", axis=0)
    assert tasks(segmented, None, ())[1:] == [("property", "segments past 2**31")]


def test_after_a_fault_the_other_properties_go_on_below_its_size_and_say_so(budget):
    """A crash from n = 4 on, met at n = 5, is bisected in fresh processes to n = 4 (n = 3
    returned there) and leaves n <= 3 to check: the properties after it run there, in new
    children; the checks past 2**31 and 2**32 have nothing below their size and are not
    retried."""
    crash, exact, det = run_properties(
        IsolatedCheck("scancheck.testing:crashing_scan", CheckOptions(timeout=30)),
        Plan(("integers exact", "certified exact", "deterministic"), budget), TargetSpec())
    assert crash.status == "fault" and crash.smallest_case == smoke_case(TargetSpec(), 4)
    assert crash.diagnosis == ("the process died (killed by SIGABRT) at n = 4, called once in "
                               "a fresh process on uniform data; n = 3 returned there")
    for r in (exact, det):
        assert r.status == "pass" and r.detail["largest n"] == 3, r
        assert r.detail["checked"] == ("below n = 4 (the target's fault in 'integers exact' "
                                       "was there)")
    big = run_properties(IsolatedCheck("scancheck.testing:crashing_scan",
                                       CheckOptions(timeout=30)),
                         Plan(("past 2**31", "past 2**32"), budget), TargetSpec())
    assert [r.status for r in big][1:] == ["skip"]


def test_a_death_its_cases_data_alone_shows_is_not_bisected(tmp_path, budget):
    """A target that dies on a NaN: one call on uniform data at the size it died at returns,
    so the death stays at the case that showed it, with that case's data."""
    (tmp_path / "dies.py").write_text(
        "import os\nimport numpy as np\n\ndef scan(x):\n    if np.isnan(x).any():\n"
        "        os.abort()\n    return np.cumsum(x, dtype=x.dtype)\n")
    spec = TargetSpec(dtypes=("float64",))
    (nans,) = run_properties(IsolatedCheck(f"{tmp_path / 'dies.py'}:scan",
                                           CheckOptions(timeout=30, spec=spec)),
                             Plan(("nan and inf",), budget), spec)
    assert nans.status == "fault" and nans.smallest_case["data"] != "uniform", nans
    assert "fresh process" not in nans.diagnosis


def test_a_bisection_claims_nothing_of_a_size_whose_call_neither_returns_nor_dies(tmp_path):
    """A target that hangs from 101 elements and aborts from 301: the call at 225 gives no
    answer, so the bisection ends there, told at the size it died at with smaller sizes not
    all tried; a second death of the check, at another size, reuses the first's bisection."""
    (tmp_path / "hangs.py").write_text(
        "import os, time\nimport numpy as np\n\ndef scan(x):\n    if x.size > 300:\n"
        "        os.abort()\n    while x.size > 100:\n        time.sleep(1)\n"
        "    return np.cumsum(x, dtype=x.dtype)\n")
    job = IsolatedCheck(f"{tmp_path / 'hangs.py'}:scan", CheckOptions(timeout=2))
    _, status, err = watch(job.command(smoke=(400,)), 30, fork=job.forkable)
    assert status == "died (killed by SIGABRT)", (status, err)
    assert bisect_death(job, TargetSpec(), 400, 50, status, err) == (
        400, "; sizes below it not all tried", "the process died (killed by SIGABRT)")
    assert len(job.deaths) == 1
    assert bisect_death(job, TargetSpec(), 500, 50, status, err)[0] == 400  # the one found


def test_a_target_that_breaks_only_on_empty_input_is_checked_from_n_1(budget):
    empty, other = run_properties(
        IsolatedCheck("scancheck.testing:crashing_on_empty_scan", CheckOptions(timeout=30)),
        Plan(("integers exact", "certified exact"), budget), TargetSpec())
    assert empty.status == "fault" and _size(empty.smallest_case) == {"n": 0, "dtype": "int32"}
    assert other.status == "pass" and other.detail["checked"].startswith("from n = 1")


def test_the_properties_share_as_few_children_as_keep_the_workers_busy():
    props = ("integers exact", "certified exact", "floats within bound", "recurrence")
    tasks = [("property", p) for p in (*props, "past 2**31", "past 2**32")] + [
        ("sanitizer", "memcheck")]
    groups, skipped = deal_groups(tasks, TargetSpec(device="gpu"), workers=2)
    assert groups == [("property", ("integers exact", "floats within bound")),
                      ("property", ("certified exact",)),
                      ("property", ("past 2**31", "past 2**32")), ("sanitizer", ("memcheck",))]
    assert skipped["recurrence"].status == "skip"  # no child for what cannot apply
    assert deal_groups(tasks[:3], TargetSpec(), workers=1)[0] == [("property", props[:3])]


def test_the_child_that_resolves_a_cpu_target_goes_on_with_the_first_share(tmp_path, monkeypatch,
                                                                             budget):
    """One start-up fewer per check: the child that resolved a CPU target runs the first
    child's share of the properties itself; the others get children of their own, as
    deal_groups deals them.  A GPU target's children take their turns on the device first."""
    props = ("integers exact", "certified exact", "recurrence", "deterministic")
    cpu, gpu = TargetSpec(), TargetSpec(device="gpu")

    def first(props, spec, workers):
        return first_share(deal_groups([("property", p) for p in props], spec, workers)[0], spec)

    assert first(props, cpu, 1) == ("integers exact", "certified exact", "deterministic")
    assert first(props, cpu, 2) == ("integers exact", "deterministic")
    assert first(props, gpu, 1) == ()
    assert first(("recurrence", "past 2**31"), cpu, 1) == ()  # none applies but a large one
    seen = tmp_path / "pids.txt"  # each process that loads the target, resolving it or not
    (tmp_path / "pidscan.py").write_text(
        "import os\nimport numpy as np\n\n"
        f"with open({str(seen)!r}, 'a') as fh:\n"
        "    fh.write(f'{os.getpid()}\\n')\n\n"
        "def scan(x):\n"
        "    return np.cumsum(x, dtype=x.dtype)\n")
    monkeypatch.setenv("PYTHONPATH", f"{tmp_path}{os.pathsep}{os.environ.get('PYTHONPATH', '')}")
    rep = check_isolated("pidscan:scan", properties=("integers exact", "deterministic"),
                         budget=replace(budget, max_n=64), workers=1)
    assert rep.passed and [r.status for r in rep.results] == ["pass", "pass"], rep.rows()
    assert len(set(seen.read_text().split())) == 1


def test_a_pinned_check_runs_its_children_on_its_gpu_alone(tmp_path, monkeypatch, budget):
    """check --jobs on several GPUs pins each target's children to one, round-robin: the
    child sees only that GPU, whatever CUDA_VISIBLE_DEVICES the parent had."""
    seen = tmp_path / "seen.txt"
    (tmp_path / "envscan.py").write_text(
        "import os\nimport numpy as np\n\n"
        "def scan(x):\n"
        f"    with open({str(seen)!r}, 'a') as fh:\n"
        "        fh.write(os.environ.get('CUDA_VISIBLE_DEVICES', '') + '\\n')\n"
        "    return np.cumsum(x, dtype=x.dtype)\n")
    monkeypatch.setenv("PYTHONPATH", f"{tmp_path}{os.pathsep}{os.environ.get('PYTHONPATH', '')}")
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "3,5")
    rep = check_isolated("envscan:scan", properties=("integers exact",),
                         budget=replace(budget, max_n=4096), gpu="5")
    assert rep.passed and set(seen.read_text().split()) == {"5"}


def test_targets_go_round_robin_over_the_visible_gpus(monkeypatch):
    from scancheck.core.devices import visible_gpus
    from scancheck.faces.cli.check import round_robin

    visible_gpus.cache_clear()
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "3,5")
    try:
        assert round_robin(["a", "b", "c"]) == {"a": "3", "b": "5", "c": "3"}
        visible_gpus.cache_clear()
        monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "0")
        assert round_robin(["a", "b"]) == {}  # one GPU: nothing to share out
    finally:
        visible_gpus.cache_clear()


def test_the_checks_past_2_to_the_31_hold_the_gpu_alone(tmp_path, monkeypatch):
    """While any child of a GPU target runs, a large check cannot take its GPU; children of
    CPU targets take no turn at all."""
    import fcntl

    from scancheck.core.locks import lock_dir
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    locks = Path(lock_dir())
    gpu = TargetSpec(device="gpu")
    with device_turn(gpu, "7", exclusive=False), device_turn(gpu, "7", exclusive=False):
        with open(locks / "scancheck-gpu-7.lock") as fh:
            with pytest.raises(BlockingIOError):
                fcntl.flock(fh, fcntl.LOCK_EX | fcntl.LOCK_NB)
    with device_turn(gpu, "7", exclusive=True):
        with open(locks / "scancheck-gpu-7.lock") as fh:
            with pytest.raises(BlockingIOError):
                fcntl.flock(fh, fcntl.LOCK_SH | fcntl.LOCK_NB)
    with device_turn(TargetSpec(), None, exclusive=True):
        assert not (locks / "scancheck-gpu-all.lock").exists()


def test_a_spec_with_promotions_reaches_the_child_intact(budget):
    """The spec travels as JSON: the promotions' pairs come back as pairs."""
    spec = TargetSpec(dtypes=("int8", "bool"), promote=(("int8", "int64"), ("bool", "int64")))
    assert spec_from_json(json.loads(json.dumps(asdict(spec)))) == spec
    report = check_isolated("numpy:cumsum", spec=spec, properties=("integers exact",),
                            budget=replace(budget, max_n=4096), large=False, sanitize=())
    assert report.passed, report.rows()


def test_an_exception_in_a_child_fails_its_case_and_the_search_goes_on_below(budget):
    """A Python exception ends no child: each property takes it to its smallest n and
    searches below it, in the same child, so that nothing is restarted and every property
    says where it looked."""
    from scancheck.engine.diagnosis import diagnose
    results = run_properties(
        IsolatedCheck("scancheck.testing:raising_scan", CheckOptions(timeout=30)),
        Plan(("integers exact", "deterministic"), budget), TargetSpec())
    for r in results:
        assert r.status == "fault" and r.smallest_case["n"] == 4, r
        assert r.diagnosis == ("raised ValueError (too long); it answered every case of "
                               "1 to 3 elements and raised at each larger n tried: where that is its "
                               "limit, declare --accepts-max-n 3") and "checked" not in r.detail
        assert r.detail["searched"] == "n = 0 to 3 (raised at n = 4)"
    assert [f.properties for f in diagnose(results).findings] == [
        ["integers exact", "deterministic"]]


def test_the_seconds_of_a_check_bound_every_property_and_a_slow_target_is_slow_not_a_hang():
    """``seconds`` (the command line's --budget) bounds the whole check, ladders included: a
    right but slow target ends near its seconds, "slow" with the n it reached, no hang."""
    import time

    t0 = time.time()
    report = check_isolated("scancheck.testing:slow_scan", properties=("integers exact", "deterministic"),
                            budget=Budget(30, bounded=True), seconds=3, timeout=20, large=False, sanitize=(),
                            workers=1)
    took = time.time() - t0
    statuses = {r.name: r.status for r in report.results}
    assert set(statuses.values()) <= {"slow", "pass"} and "slow" in statuses.values(), statuses
    assert report.verdict_word == "slow" and not report.passed
    assert 16 < report.reached < 2**20
    # Its seconds, the rung the last rate allowed (at most about twice the one before), and
    # a loaded CI machine's start-up of the children.
    assert took < 3 + 6, report.time_spent()


def _calls(*timed, hung_at=None):
    """A child's events: a call of each (n, seconds) in turn, then one at ``hung_at`` that
    never returned."""
    events, t = [{"event": "start", "property": "p"}], 100.0
    for n, seconds in timed:
        events += [{"event": "call", "n": n, "t": t}, {"event": "return", "n": n,
                                                       "t": t + seconds}]
        t += seconds + 0.01
    if hung_at is not None:
        events.append({"event": "call", "n": hung_at, "t": t})
    return events


def test_a_call_whose_time_the_calls_at_n_over_2_and_4_predict_is_slow():
    """Quadratic: 0.5 s at 2**19, 0.125 s at 2**18, so about 2 s at 2**20, past 1 s."""
    slow = slow_call(_calls((2**17, 0.03), (2**18, 0.125), (2**19, 0.5), hung_at=2**20), 1.0)
    assert slow is not None and slow.n == 2**20 and round(slow.predicted) == 2
    assert slow.larger == (2**19, 0.5) and slow.smaller == (2**18, 0.125)
    told = slow.told(1.0)
    assert "slow, not hung" in told and "--timeout 4" in told
    # A compiling call that grows slowly is still slow where a linear growth reaches it.
    assert slow_call(_calls((2**18, 20.0), (2**19, 35.0), hung_at=786_429), 60.0) is not None


def _memory(events, at_call, last, mid=None):
    return events + [{"event": "memory", "peak": last, "last": last, "at call": at_call,
                      "mid call": at_call if mid is None else mid, "machine": 16 * 2**30}]


def test_a_call_past_the_timeout_whose_memory_grows_is_working_not_hung():
    """Grown by GROWING since the call began, and by half that in its last half timeout:
    slow.  Grown less, grown early only (its buffers taken, then a spin), at a small n, or
    killed outside a call: no such call (a hang where nothing else predicts the time)."""
    fast = _calls((2**18, 0.001), (2**19, 0.002), hung_at=2**20)
    base = 2**28
    grew = growing_call(_memory(fast, base, base + GROWING, mid=base + GROWING // 2))
    assert grew is not None and grew.n == 2**20
    told = grew.told(60.0)
    assert "allocates as it goes" in told and "by 128 MiB" in told and "--timeout 240" in told
    assert growing_call(_memory(fast, base, base + GROWING - 1)) is None
    assert growing_call(_memory(fast, base, base + 4 * GROWING, mid=base + 4 * GROWING)) is None
    assert growing_call(_memory(_calls((2, 0.001), hung_at=SMALL_N), base, 2**30)) is None
    assert growing_call(_memory(_calls((2**19, 0.5)), base, 2**30)) is None
    assert growing_call(fast) is None  # no readings (not Linux)


_GROWS = """\
import json, sys, time
import numpy as np
with open(sys.argv[1], "w") as out:
    out.write(json.dumps({"event": "call", "n": 5000, "t": time.time()}) + "\\n")
time.sleep(0.2)
kept = [np.ones(2**20) for _ in range(32)] if sys.argv[2] == "once" else []
while True:
    if sys.argv[2] == "steadily" or sys.argv[2] == "late" and len(kept) < 32:
        kept.append(np.ones(2**20))  # 8 MiB every 50 ms
    time.sleep(0.05)
"""


@pytest.mark.skipif(not os.path.exists("/proc/self/statm"), reason="reads /proc (Linux)")
@pytest.mark.parametrize("how", ["steadily", "once", "late"])
def test_the_watcher_reads_a_childs_memory_as_it_runs(tmp_path, how):
    """A child that takes 8 MiB every 50 ms from its call's start is growing as it is
    killed; one that takes 256 MiB at once, then waits, grew as much but is not, nor one
    that takes them 8 MiB at a time into the timeout's last half, then waits (a hang whose
    buffers page in on a loaded machine): it stops growing in the half timeout of grace."""
    script = tmp_path / "grow.py"
    script.write_text(_GROWS)
    events, status, _ = watch([sys.executable, str(script), "{out}", how], 2.0)
    memory = Memory.of(events)
    assert status == "timeout" and memory is not None
    assert GROWING < memory.grew_in_call() < 600 * 2**20, memory
    assert (growing_call(events) is not None) == (how == "steadily"), memory
    assert not memory.killed_from_outside  # the watcher's own SIGKILL


@pytest.mark.skipif(not os.path.exists("/proc/self/statm"), reason="reads /proc (Linux)")
def test_a_sigkill_the_watcher_did_not_send_is_told_apart(tmp_path):
    script = tmp_path / "killed.py"
    script.write_text("import os, signal, time\ntime.sleep(0.2)\n"
                      "os.kill(os.getpid(), signal.SIGKILL)\n")
    events, status, _ = watch([sys.executable, str(script), "{out}"], 30)
    memory = Memory.of(events)
    assert status == "died (killed by SIGKILL)" and memory is not None
    assert memory.killed_from_outside and "resident at its peak of the " in memory.told()


@pytest.mark.parametrize("events", [
    _calls((2**18, 0.001), (2**19, 0.002), hung_at=2**20),  # fast before: a hang
    _calls((2**19, 0.001), (2**20, 0.002), hung_at=2**20),  # the same n was fast
    _calls((2, 0.4), (SMALL_N // 2, 0.45), hung_at=SMALL_N),  # a small n: a hang
    _calls((10, 0.001), hung_at=2**20),  # nothing within 8 times below it
    _calls((2**19, 0.5)),  # killed outside any call
], ids=["fast before", "same n fast", "small n", "no evidence near", "in no call"])
def test_a_call_that_times_out_where_smaller_calls_were_fast_is_a_hang(events):
    assert slow_call(events, 1.0) is None


def test_a_control_gets_the_same_verdict_in_a_child_as_in_this_process(budget):
    """One loop runs the properties here and in each child, told by the same options: a
    control's verdict, and each property's status, cause and smallest n, are the same."""
    from scancheck.controls import CONTROLS

    control = next(c for c in CONTROLS if c.locator.endswith(":dropped_partial_block"))
    options = CheckOptions(properties=("integers exact", "deterministic", "recurrence"),
                           budget=replace(budget, max_n=control.reach), large=False,
                           sanitize=(), workers=2)
    here, caught_here = control.check(isolated=False, options=options)
    there, caught_there = control.check(isolated=True, options=options)
    assert caught_here and caught_there, (here.rows(), there.rows())

    def told(rep):
        return [(r.name, r.status, r.cause, (r.smallest_case or {}).get("n"))
                for r in rep.results]

    assert told(there) == told(here)
    assert there.verdict.line == here.verdict.line


def _ended(pid: int) -> bool:
    """Whether process ``pid`` is gone (or a zombie no one has reaped yet)."""
    try:
        with open(f"/proc/{pid}/stat") as fh:
            return fh.read().rpartition(")")[2].split()[0] == "Z"
    except FileNotFoundError:
        return True


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
@pytest.mark.parametrize("zygote", [True, False], ids=["forked by the zygote", "started afresh"])
def test_a_hung_target_ends_with_the_check_killed_from_outside(tmp_path, zygote):
    """A check killed while its target hangs (before --timeout) leaves no child running: the
    zygote kills the children it forked when its parent goes, and a child whose parent is
    gone ends its own session."""
    import signal
    import subprocess
    import time

    pidfile = tmp_path / "pid"
    (tmp_path / "hangs.py").write_text(
        "import os, time\n\n\ndef scan(x):\n"
        f"    open({str(pidfile)!r}, 'w').write(str(os.getpid()))\n"
        "    time.sleep(1000)\n")
    env = {**os.environ, "SCANCHECK_NO_ZYGOTE": "" if zygote else "1"}
    check_ = subprocess.Popen([sys.executable, "-m", "scancheck", "check",
                               f"{tmp_path / 'hangs.py'}:scan", "--timeout", "300"],
                              env=env, cwd=tmp_path, stdout=subprocess.DEVNULL,
                              stderr=subprocess.DEVNULL, start_new_session=True)
    try:
        deadline = time.monotonic() + 120
        while not pidfile.exists() or not pidfile.read_text():
            assert check_.poll() is None and time.monotonic() < deadline, "the target never ran"
            time.sleep(0.1)
        hung = int(pidfile.read_text())
        assert not _ended(hung)
        check_.send_signal(signal.SIGKILL)  # only the check's own process
        check_.wait()
        deadline = time.monotonic() + 15
        while not _ended(hung) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert _ended(hung), f"the hung target's process {hung} outlived its check"
    finally:
        if check_.poll() is None:
            os.killpg(check_.pid, signal.SIGKILL)


def test_a_target_whose_loading_never_ends_is_told_so_with_the_time_it_was_given():
    """A child that resolves the target and gives no sign of life (a module that hangs when
    imported) is refused as not loaded, saying how long loading was given and why."""
    from scancheck.isolation.parent import _refusal
    from scancheck.isolation.watch import quiet_limit

    told = str(_refusal([], "timeout", "", "hangs.py:scan", 3.0))
    assert f"gave no sign of life in {quiet_limit(3.0):.0f} s" in told and "imported" in told
    assert quiet_limit(3.0) == 120 and quiet_limit(30.0) == 300
