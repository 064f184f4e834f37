"""Conformance checks: correct targets conform at scale, reports say how far they looked,
serialize, and name one diagnosis."""

from __future__ import annotations

import json
import sys
from dataclasses import replace

import pytest

from scancheck.adapters import builtin_targets
from scancheck.engine.cases import DEFAULT_MAX_N, Budget, Case
from scancheck.engine.conformance import LARGE, PROPERTIES, check, check_property, not_applicable
from scancheck.engine.properties import TABLE
from scancheck.faces.jobs.gpusuite import JIT_TARGETS, SUITE_MAX_N
from scancheck.targets.resolve import resolve
from scancheck.targets.spec import TargetSpec


@pytest.mark.parametrize("name", ["numpy.cumsum", "model:recursive", "model:decoupled_lookback",
                                  "model:brent_kung", "numpy.cumprod",
                                  "numpy.logaddexp.accumulate", "itertools.accumulate(initial=)",
                                  "itertools.accumulate(operator.mul, initial=)",
                                  "numpy.cumsum (default dtype)", "numpy.cumprod (default dtype)",
                                  "numpy.maximum.accumulate", "numpy.minimum.accumulate"])
def test_correct_cpu_targets_conform(name, budget):
    """Every property, to 2**16 (the reach to 2**20, where every size is a fresh ladder rung,
    is the next test's, and the GPU suite checks each at the default flags)."""
    report = check(resolve(name), budget=replace(budget, max_n=2**16))
    assert report.passed, report.rows()
    assert report.diagnosis == "" and report.verdict.cause is None


def test_a_cpu_target_is_checked_up_to_2_to_the_20_and_the_report_says_so(budget):
    report = check(resolve("numpy.cumsum"), ("integers exact",), budget=budget)
    assert report.largest_n == DEFAULT_MAX_N["cpu"] == 2**20
    assert report.results[0].detail["largest n"] == 2**20


def test_floats_report_ulps_and_both_bounds(budget):
    r = check_property(resolve("numpy.cumsum"), "floats within bound", budget)
    assert r.status == "pass"
    assert r.detail["max ulps"] >= 0 and 0 <= r.detail["err/seq bound"] <= 1
    assert 0 <= r.detail["err/log2 bound"]


def test_report_serializes_to_json_with_its_verdict(budget):
    report = check(resolve("scancheck.controls.sums:dropped_partial_block"), ("integers exact",),
                   budget=budget)
    data = json.loads(report.to_json())
    assert data["results"][0]["status"] == "fail" and data["results"][0]["cause"] == "LOGIC"
    assert data["verdict"]["cause"] == "LOGIC" and data["verdict"]["line"].startswith("logic error")
    # What the failure shows, by name: each result's, the verdict's and each finding's.
    assert data["results"][0]["reason"] == "WRONG_VALUE" == data["verdict"]["reason"]
    assert [f["reason"] for f in data["verdict"]["findings"]] == ["WRONG_VALUE"]


def test_unknown_property_is_refused():
    with pytest.raises(ValueError, match="property 'speed' is unknown; allowed: integers exact"):
        check_property(resolve("numpy.cumsum"), "speed")


def test_the_large_checks_are_named_properties():
    assert LARGE == ("past 2**31", "past 2**32", "batch past 2**32", "segments past 2**31")
    assert not set(LARGE) & set(PROPERTIES)


def test_builtin_targets_say_why_they_are_unavailable():
    for t in builtin_targets().values():
        assert t.unavailable is None or isinstance(t.unavailable, str)


GPU_TARGETS = ["cupy.cumsum (CUB)", "cupy.cumsum (no CUB)", "torch.cumsum (CUDA)",
               "kernel:decoupled_lookback", "kernel:hierarchical", "kernel:recursive",
               "kernel:chained", "kernel:kogge_stone", "cupy.cumprod (CUB)",
               "kernel:decoupled_lookback:256:mul", "kernel:decoupled_lookback:256:logaddexp",
               # torch's scans beyond cumsum, on CUDA and on the CPU: torch is installed
               # where the GPU suite runs, not in CI.
               *(f"torch.{fn} ({dev})" for fn in ("cumprod", "logcumsumexp", "cummax", "cummin")
                 for dev in ("CUDA", "CPU")),
               # JAX likewise: cumprod, 64-bit types, and scans from an initial value.
               "jax.numpy.cumprod", "jax.numpy.cumsum (x64)", "jax.numpy.cumprod (x64)",
               "jax.lax.associative_scan (x64)", "jax.lax.scan (add, initial)",
               "jax.lax.scan (mul, initial)",
               # Called without dtype=: bool and narrow integers promoted.
               "cupy.cumsum (default dtype)", "torch.cumsum (CUDA, default dtype)",
               "torch.cumsum (CPU, default dtype)", "torch.cumprod (CPU, default dtype)",
               "jax.numpy.cumsum (default dtype)"]


#: Targets whose library compiles a scan once per (shape, dtype): XLA met about 150 fresh
#: compilations in one property of a JAX target over eight dtypes (51 s on a cold H100).
#: One test per dtype spreads them over the workers.
PER_DTYPE = ("jax.",)


def applicable(names: list[str]) -> list[tuple[str, str, str | None]]:
    """(target, property, dtype or None for all) for each property the target's spec admits
    (read from the spec alone: nothing is imported or compiled): one test each, so that no
    test runs a whole check, and xdist spreads a slow library's properties over its workers."""
    table = builtin_targets()
    out: list[tuple[str, str, str | None]] = []
    for name in names:
        spec = (table.get(name) or resolve(name)).spec
        for p in PROPERTIES:
            # A target declared non-deterministic has nothing for 'deterministic' to judge.
            if not_applicable(spec, p) or (p == "deterministic" and not spec.deterministic):
                continue
            dtypes = [d for d in spec.dtypes if p in TABLE and d in TABLE[p].dtypes]
            if name.startswith(PER_DTYPE) and len(dtypes) > 1:
                out += [(name, p, d) for d in dtypes]
            else:
                out.append((name, p, None))
    return out


def one_dtype(spec: TargetSpec, dtype: str) -> TargetSpec:
    """``spec`` narrowed to ``dtype``, with the promotion of that dtype alone."""
    return replace(spec, dtypes=(dtype,), promote=tuple(p for p in spec.promote if p[0] == dtype))


GPU_CASES = applicable(GPU_TARGETS)


def test_the_gpu_suite_warms_every_target_that_compiles_per_shape():
    """The JAX targets these tests split per dtype are the ones whose ladders the GPU suite's
    warm step compiles: one left out would compile its every shape inside its tests."""
    assert {name for name in GPU_TARGETS if name.startswith(PER_DTYPE)} <= set(JIT_TARGETS)


@pytest.mark.gpu
@pytest.mark.slow
@pytest.mark.parametrize("name, prop, dtype", GPU_CASES,
                         ids=["-".join(filter(None, case)) for case in GPU_CASES])
def test_gpu_targets_conform_up_to_2_to_the_22(name, prop, dtype, budget):
    """To 2**22: the ladder's top rungs are judged on the host, and at 2**24 twelve workers
    took 20-50 s a property on an H100 machine.  ``scancheck check`` at its default flags
    (the GPU suite's check part) takes each to 2**24, and the kernels past 2**32."""
    target = resolve(name)
    if target.unavailable:
        pytest.skip(target.unavailable)
    if dtype is not None:
        target = replace(target, spec=one_dtype(target.spec, dtype))
    r = check_property(target, prop, replace(budget, max_n=SUITE_MAX_N))
    if r.status == "skip":
        pytest.skip(f"{name}: {prop}: {r.diagnosis}")
    assert r.status == "pass", (r.diagnosis, r.smallest_case, r.detail)


def test_a_slow_target_under_a_bounded_budget_is_slow_to_the_n_it_reached_never_conforms():
    """A right but slow target (about 1 us an element) whose budget runs out on the ladder is
    "slow" with the largest n it reached, and the report claims nothing past that n."""
    from scancheck.engine.cases import Budget

    target = resolve("scancheck.testing:slow_scan")
    target = replace(target, spec=replace(target.spec, dtypes=("int64",)))
    r = check_property(target, "integers exact", Budget(0.3, bounded=True))
    assert r.status == "slow", r
    reached, short = r.detail["largest n"], r.detail["short of n"]
    assert 16 < reached < short <= DEFAULT_MAX_N["cpu"]
    assert f"no failure up to n = {reached:,}" in r.diagnosis
    assert "the target's own calls took" in r.diagnosis
    report = check(target, ("integers exact", "deterministic"), budget=Budget(0.3, bounded=True))
    assert not report.passed and report.verdict_word == "slow" and report.unfinished
    # Its own n, not the first check's: how far a budget of seconds gets depends on the load.
    assert f"no failure up to n = {report.reached:,}" in report.summary
    assert report.reached < max(int(r.detail["short of n"]) for r in report.unfinished)
    # Unbounded (the tests' budgets), the same target walks its ladder whole and conforms.
    assert check_property(target, "integers exact", Budget(0.1)).status == "pass"


def _compiling_scan(first: float, every: float = 0.0):
    """A right cumsum whose first call of each dtype and layout takes ``first`` seconds more
    (a library compiling per dtype and layout) and every call ``every`` seconds more."""
    import time

    import numpy as np

    seen: set[tuple] = set()

    def scan(x):
        kind = (x.dtype.name, x.flags.c_contiguous)
        if kind not in seen:
            seen.add(kind)
            time.sleep(first)
        time.sleep(every)
        return np.cumsum(x, dtype=x.dtype)

    return scan


SPEC = TargetSpec(dtypes=("int32", "int64"))


def test_a_first_call_that_compiles_is_not_charged_to_the_budget():
    """A target whose first call of each dtype takes longer than the whole budget (a compile)
    still walks its ladder to the top under a bounded budget and passes, and the result says
    how long was left out; the same target slow on every call is still "slow"."""
    from scancheck.engine.cases import Budget
    from scancheck.targets.target import Target

    budget = Budget(0.5, bounded=True, max_n=2**16)
    r = check_property(Target("compiling", _compiling_scan(first=0.8), SPEC), "integers exact",
                       budget)
    assert r.status == "pass" and r.detail["largest n"] == 2**16, (r.status, r.detail)
    assert r.uncharged > 1.4, r.uncharged  # two dtypes' compiles
    slow = Target("slow", _compiling_scan(first=0.0, every=0.1), SPEC)
    r = check_property(slow, "integers exact", budget)
    assert r.status == "slow" and r.detail["largest n"] < 2**16, (r.status, r.detail)
    assert r.uncharged < 0.1, r.uncharged  # its first calls are as slow as its second


def test_a_compile_left_out_of_the_budget_is_not_told_as_the_target_being_slow():
    """A right target, quick but for its compiles, whose budget runs out on the ladder is
    "partial" (the checking took the time), as the same target without compiles is."""
    from scancheck.engine.cases import Budget
    from scancheck.targets.target import Target

    budget = Budget(0.3, bounded=True, max_n=2**24)
    plain = check_property(Target("plain", _compiling_scan(first=0.0), SPEC),
                           "integers exact", budget)
    compiling = check_property(Target("compiling", _compiling_scan(first=1.0), SPEC),
                               "integers exact", budget)
    assert plain.status == compiling.status == "partial", (plain, compiling)


def test_a_target_checked_before_has_no_compile_left_out_of_a_later_check():
    """The time a plan shares among its properties leaves out only its own first calls: a
    target that compiled in an earlier check gets no more time in the next."""
    import time

    from scancheck.engine.cases import Budget
    from scancheck.engine.conformance import run_plan
    from scancheck.engine.options import Plan
    from scancheck.targets.target import Target

    floats = TargetSpec(dtypes=("float32", "float64"))
    target = Target("compiled before", _compiling_scan(first=1.5), floats)
    check_property(target, "floats within bound", Budget(0.2, max_n=64))
    assert target.uncharged() > 2.9
    start = time.monotonic()
    results = run_plan(target, Plan(("certified exact", "floats within bound", "nan and inf"),
                                    Budget(2.0, bounded=True), time.time() + 1.5))
    assert [r.status for r in results] != ["skip"] * 3
    assert time.monotonic() - start < 3.0


def test_each_combine_and_layout_is_a_kind_whose_first_call_is_left_out():
    """The kinds are told apart by the combine handed (torch.compile compiles per combine)
    and by memory layout (numba compiles C, F and A arrays apart)."""
    import numpy as np

    from scancheck.engine.properties.monoids import call_on_leaves
    from scancheck.targets.target import Target

    def combine_a(a, b):
        return a

    def combine_b(a, b):
        return b

    target = Target("generic", lambda leaves, combine: leaves, TargetSpec(combine=True))
    leaves = (np.arange(4, dtype=np.int32),)
    for combine in (combine_a, combine_a, combine_b):
        call_on_leaves(target, leaves, combine)
    assert len(target.first_calls) == 2
    rows = Target("rows", lambda x: np.cumsum(x, axis=0), TargetSpec(axis=0, ndim=(2,)))
    square = np.ones((3, 3), dtype=np.float32)
    for x in (square, np.asfortranarray(square), square[:, ::2]):
        rows.run(x)
    assert len(rows.first_calls) == 3


def test_a_failure_outranks_a_budget_that_ran_out():
    """A property that fails makes the verdict a failure, whatever others did not finish."""
    from scancheck.engine.conformance import ConformanceReport
    from scancheck.engine.diagnosis import PropertyResult

    rep = ConformanceReport("t", {}, [
        PropertyResult("integers exact", "slow", "no failure up to n = 9",
                       detail={"largest n": 9, "short of n": 17}),
        PropertyResult("deterministic", "fail", "bits differ", {"n": 5}, cause="NONDETERMINISM")])
    assert rep.verdict_word == "DOES NOT CONFORM" and not rep.unfinished
    assert rep.summary == rep.diagnosis


def test_under_a_bounded_budget_no_probe_calls_the_target_past_the_n_its_ladder_reached():
    """The accumulation probe (2**20 elements by default) and the float summaries stay within
    the reach of a bounded budget's ladder: what they tell is never about larger n."""
    import numpy as np

    from scancheck.engine.cases import Budget
    from scancheck.targets.target import Target

    called = []

    def recording(x):
        called.append(x.shape[0])
        time_per = 2e-6 * x.shape[0]
        __import__("time").sleep(time_per)
        return np.cumsum(x, dtype=x.dtype)

    target = Target("recording", recording, TargetSpec(dtypes=("float32",)))
    r = check_property(target, "floats within bound", Budget(0.5, bounded=True))
    assert max(called) <= r.detail["largest n"] < 2**20, (r.status, r.detail)


def test_an_exception_that_ends_a_property_in_this_process_names_the_case_it_was_in(
        monkeypatch, budget):
    """A GPU target's exception ends its property (its CUDA context may be gone): in this
    process, as in a child, the fault names the size and dtype of the case it ended."""
    import numpy as np

    import scancheck.engine.conformance as conformance
    from scancheck.targets.target import Target

    def breaks_from_1(x):
        if x.size >= 1:
            raise RuntimeError("launch failed")
        return np.cumsum(x, dtype=x.dtype)

    monkeypatch.setattr(conformance, "raised", lambda *args: None)  # as a GPU target's
    rep = check(Target("breaks", breaks_from_1, TargetSpec()), ("integers exact",), budget=budget)
    (fault,) = rep.results
    assert fault.status == "fault" and fault.cause == "FAULT", fault
    case = fault.smallest_case
    assert (case["n"], case["dtype"]) == (1, "int32"), fault  # the ladder's first
    # ... and its data, to be drawn again.
    assert Case(1, "int32", case["data"], case["seed"]).data("add").shape == (1,)


def test_a_logic_error_found_on_wrapping_data_is_shown_on_the_plainest_data():
    """A carry that skips the block before it past the third block of 256 is wrong on any
    data: its smallest case is shown on the property's plainest data (integers below 1,000,
    whose int32 sums never wrap), at the same threshold n, every smaller n of those data
    checked, whatever data the search first met it on."""
    import numpy as np

    from scancheck.targets.target import Target

    def blocked(x):
        out = np.cumsum(x, dtype=x.dtype)
        for b in range(3, (x.size + 255) // 256):
            out[b * 256:] -= x[(b - 1) * 256:b * 256].sum(dtype=x.dtype)
        return out

    target = Target("blocked", blocked, TargetSpec(dtypes=("int32",)))
    r = check_property(target, "integers exact", Budget(seconds=5))  # time to walk every n
    assert r.cause == "LOGIC" and r.minimal, r
    case = r.smallest_case
    assert (case["n"], case["index"], case["data"]) == (769, 768, "integers"), case
    assert abs(case["got"]) < 10**6 and abs(case["expected"]) < 10**6


@pytest.mark.parametrize("properties", [(), ("rows",)])
def test_a_check_that_checked_nothing_is_no_pass(properties, budget):
    """A wrong 1-D scan checked by no property, or only by one that does not apply to it (the
    N-D rows), is told that nothing was checked (exit status 2), never that it conforms."""
    import numpy as np

    from scancheck.targets.target import Target

    wrong = Target("zeros", lambda x: np.zeros_like(x), TargetSpec(dtypes=("float32",)))
    rep = check(wrong, properties, budget=replace(budget, max_n=64))
    assert rep.checked_nothing and not rep.passed and not rep.failed
    assert rep.verdict_word == "nothing checked" and rep.exit_status == 2
    assert rep.summary.startswith("no property applies (rows: " if properties else
                                  "no property was named")
    assert json.loads(rep.to_json())["verdict"]["word"] == "nothing checked"


def _probe_raising_in_scancheck(monkeypatch):
    """The accumulation probe, made to raise inside scancheck's own code (a TypeError of
    its arithmetic on a table entry set to None)."""
    from scancheck.engine.properties import summaries

    monkeypatch.setitem(summaries.ACCUMULATION_PROBE, "float32", ("float64", None))


def _numpy_cumsum(x):
    import numpy as np

    return np.cumsum(x, dtype=x.dtype)


def test_scanchecks_own_error_is_no_verdict_on_the_target(monkeypatch, budget):
    """An exception raised by scancheck's own code alone, on a right target, is not the
    target's fault: that property claims nothing (partial, exit 3), says where scancheck
    raised, and the properties after it run; in a child's loop too (no containment)."""
    from scancheck.engine.conformance import run_plan
    from scancheck.engine.options import Plan
    from scancheck.targets.target import Target

    _probe_raising_in_scancheck(monkeypatch)
    t = Target("cumsum", _numpy_cumsum, TargetSpec(dtypes=("float32",)))
    rep = check(t, properties=("floats within bound", "certified exact"), budget=budget)
    assert not rep.failed and rep.verdict_word == "partial" and rep.exit_status == 3, rep.rows()
    assert "scancheck's own code raised TypeError" in rep.summary
    assert "scancheck/engine/properties/summaries.py:" in rep.summary
    assert [r.status for r in rep.results] == ["partial", "pass"]
    # The property that claims nothing does not pull the n the others reached down to 0.
    assert rep.reached == rep.results[1].detail["largest n"] > 0
    assert rep.summary.startswith(f"no failure up to n = {rep.reached:,} in the other")
    child = run_plan(t, Plan(("floats within bound",), budget), contain=False)
    assert [r.reason for r in child] == ["OWN_ERROR"]


@pytest.mark.gpu
def test_scanchecks_own_error_on_a_gpu_target_is_no_verdict_on_it(monkeypatch, budget):
    """On a GPU target (CuPy's CUB scan) too, where no CuPy code is on the way and the
    device holds no error afterwards: partial, the next property checked."""
    target = resolve("cupy.cumsum (CUB)")
    if target.unavailable:
        pytest.skip(target.unavailable)
    _probe_raising_in_scancheck(monkeypatch)
    rep = check(replace(target, spec=replace(target.spec, dtypes=("float32",))),
                properties=("floats within bound", "nan and inf"), budget=budget)
    assert [r.status for r in rep.results] == ["partial", "pass"], rep.rows()
    assert rep.exit_status == 3 and "scancheck's own code raised TypeError" in rep.summary


def test_an_error_on_a_gpu_target_is_scanchecks_only_where_the_device_holds_none(monkeypatch):
    """The same exception, raised in scancheck's code alone, is told as scancheck's on a
    GPU target only where the device, asked afterwards, holds no error: not where its
    synchronize raises (a kernel's fault left there), nor where CuPy is not there to ask."""
    from types import SimpleNamespace

    from scancheck.engine.no_answer import own_error
    from scancheck.engine.properties import summaries
    from scancheck.targets.target import Target

    def device(error: Exception | None) -> SimpleNamespace:
        def synchronize() -> None:
            if error is not None:
                raise error
        return SimpleNamespace(cuda=SimpleNamespace(
            Device=lambda: SimpleNamespace(synchronize=synchronize)))

    _probe_raising_in_scancheck(monkeypatch)
    cpu = Target("cumsum", _numpy_cumsum, TargetSpec(dtypes=("float32",)))
    with pytest.raises(TypeError) as raised:
        summaries.accumulation_precision(cpu, "float32")
    # As run_plan catches it: the traceback from the call into scancheck, not this test's.
    raised = raised.value.with_traceback(raised.value.__traceback__.tb_next)
    gpu = replace(cpu, spec=replace(cpu.spec, device="gpu"))
    monkeypatch.setitem(sys.modules, "cupy", device(None))
    assert own_error(gpu, raised).startswith("scancheck/engine/properties/summaries.py:")
    monkeypatch.setitem(sys.modules, "cupy", device(RuntimeError("an illegal address")))
    assert own_error(gpu, raised) is None
    monkeypatch.delitem(sys.modules, "cupy")
    assert own_error(gpu, raised) is None


def test_an_exception_through_code_outside_scancheck_stays_a_fault(monkeypatch, budget):
    """Where the traceback passes through code outside scancheck's checks (here a function
    of this test module in the probe's place: a user's monoid, say), the exception may be
    the target's, and stays a fault."""
    from scancheck.engine.properties import summaries
    from scancheck.targets.target import Target

    def raising(*args, **kwargs):
        raise TypeError("raised outside scancheck")

    monkeypatch.setattr(summaries, "accumulation_precision", raising)
    t = Target("cumsum", _numpy_cumsum, TargetSpec(dtypes=("float32",)))
    rep = check(t, properties=("floats within bound",), budget=budget)
    assert rep.failed and rep.verdict.findings[0].status == "fault", rep.rows()


def test_scanchecks_own_error_in_a_child_is_no_verdict_on_the_target(tmp_path, budget):
    """The same in a child process of an isolated check (its module sets the probe's table
    entry to None when the child imports it): partial, not a fault of the target."""
    from scancheck.isolation.parent import check_isolated

    module = tmp_path / "right_sum.py"
    module.write_text(
        "import numpy as np\n"
        "from scancheck.engine.properties import summaries\n\n"
        "summaries.ACCUMULATION_PROBE['float32'] = ('float64', None)\n\n\n"
        "def scan(x):\n    return np.cumsum(x, dtype=x.dtype)\n")
    rep = check_isolated(f"{module}:scan", properties=("floats within bound",), budget=budget,
                         spec=TargetSpec(dtypes=("float32",)))
    assert not rep.failed and rep.exit_status == 3, rep.rows()
    assert "scancheck's own code raised TypeError" in rep.summary
