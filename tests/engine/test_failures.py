"""One failure does not hide the next: an empty input refused, an exception or memory running
out at some size moves a property's search to where the target answers, and the verdict
lists each distinct cause once.  In this process, on small sizes: a child's start-up would
cost more than these checks."""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import replace

import numpy as np
import pytest

from scancheck.engine.cases import Budget
from scancheck.engine.conformance import check, check_property
from scancheck.engine.diagnosis import Cause, is_resource_error
from scancheck.engine.no_answer import raised
from scancheck.faces.spec_flags import add_spec_flags, spec_overrides
from scancheck.targets.spec import TargetSpec, with_overrides
from scancheck.targets.target import Target

SMALL = Budget(0.2, max_n=4096)


class OutOfMemoryError(RuntimeError):
    """As torch.OutOfMemoryError: a RuntimeError by its class, out of memory by its name."""


def _scan(empty: Exception | None = None, raises: Exception | None = None, at: int = 3000,
          wrong_from: int | None = None, device: str = "cpu") -> Target:
    """A sum scan that raises ``empty`` on an empty input, ``raises`` from n = ``at``, and
    adds 1 to every output from index ``wrong_from - 1``."""
    def fn(x: np.ndarray) -> np.ndarray:
        if empty is not None and x.size == 0:
            raise empty
        if raises is not None and x.size >= at:
            raise raises
        out = np.cumsum(x, dtype=x.dtype)
        if wrong_from is not None and x.size >= wrong_from:
            out[wrong_from - 1:] += 1
        return out

    return Target("user scan", fn, TargetSpec(dtypes=("int32", "float64"), device=device))


def test_an_empty_input_refused_names_the_flag_that_declares_it_and_so_declared_conforms():
    target = _scan(empty=ValueError("no data"))
    (r,) = check(target, ("integers exact",), budget=SMALL).results
    flag = r.diagnosis.rpartition("declare ")[2]
    assert r.status == "fail" and r.smallest_case["n"] == 0 and flag.startswith("--no-")
    parser = argparse.ArgumentParser()
    add_spec_flags(parser)
    spec = with_overrides(target.spec, spec_overrides(parser.parse_args([flag])))
    assert check(replace(target, spec=spec), ("integers exact",), budget=SMALL).passed


def test_an_empty_input_refused_ends_no_search_the_wrong_answer_past_it_is_found():
    rep = check(_scan(empty=ValueError("no data"), wrong_from=100), ("integers exact",),
                budget=SMALL)
    (r,) = rep.results
    assert r.status == "fail" and r.smallest_case["n"] == 100 and r.cause == "LOGIC"
    (refused,) = r.more
    assert refused.smallest_case["n"] == 0 and "raised ValueError on an empty input" in \
        refused.diagnosis
    assert r.detail["searched"] == "n = 1 to 4,096 (the empty input refused)"
    verdict = rep.verdict
    assert [(f.cause, f.smallest_case["n"]) for f in verdict.findings] == [
        (Cause.LOGIC, 0), (Cause.LOGIC, 100)]
    assert verdict.line.startswith("logic error: raised ValueError on an empty input")
    assert verdict.also == ["logic error in 'integers exact': differs from the exact scan "
                            "(smallest case n=100, index 99)"]
    # Every result stays in the JSON, the failures that moved a search under 'more'.
    data = json.loads(rep.to_json())
    assert data["results"][0]["more"][0]["smallest_case"]["n"] == 0
    assert [f["properties"] for f in data["verdict"]["findings"]] == [["integers exact"]] * 2
    assert [row["smallest failing case"][:5] for row in rep.rows()] == ["n=0, ", "n=100"]


@pytest.mark.parametrize("error", [
    MemoryError("Unable to allocate 50.0 GiB for an array"),
    OutOfMemoryError("CUDA out of memory. Tried to allocate 50.00 GiB"),
    RuntimeError("RESOURCE_EXHAUSTED: Out of memory while trying to allocate 53687091200 bytes"),
    RuntimeError("CUDA error: out of memory\nCUDA kernel errors might be asynchronously "
                 "reported at some other API call"),
], ids=["MemoryError", "torch", "XLA", "torch context"])
def test_out_of_memory_is_its_own_cause_and_the_search_goes_on_below_it(error):
    assert is_resource_error(error)
    rep = check(_scan(raises=error, at=300, wrong_from=100), ("integers exact", "deterministic"),
                budget=SMALL)
    wrong, memory = rep.results
    assert wrong.cause == "LOGIC" and wrong.smallest_case["n"] == 100
    assert memory.status == "fail" and memory.cause == "RESOURCE"
    assert memory.smallest_case["n"] == 300 and memory.detail["largest n"] == 299
    assert memory.detail["searched"] == "n = 0 to 299 (out of memory at n = 300)"
    # Neither explains the other: a wrong answer is not for want of memory.
    verdict = rep.verdict
    assert [f.cause for f in verdict.findings] == [Cause.LOGIC, Cause.RESOURCE]
    assert verdict.also[0].startswith(f"out of memory in 'deterministic': raised "
                                      f"{type(error).__name__}")


def test_out_of_memory_on_the_empty_input_is_not_a_logic_error():
    rep = check(_scan(empty=MemoryError("Unable to allocate 50.0 GiB")), ("integers exact",),
                budget=SMALL)
    assert rep.verdict.line == ("out of memory: raised MemoryError (Unable to allocate 50.0 GiB) "
                                "on an empty input (smallest case n=0)")
    assert rep.results[0].detail["searched"] == "n = 1 to 4,096 (out of memory at n = 0)"


def test_an_exception_at_some_size_is_a_fault_there_and_wrong_answers_below_it_are_found():
    rep = check(_scan(raises=ValueError("boom"), at=3000, wrong_from=100),
                ("integers exact", "deterministic"), budget=SMALL)
    wrong, fault = rep.results
    assert wrong.cause == "LOGIC" and wrong.smallest_case["n"] == 100
    assert fault.status == "fault" and fault.smallest_case["n"] == 3000
    assert fault.diagnosis.startswith("raised ValueError (boom); it answered every case of 1 "
                                      "to 2,999 elements") and fault.detail["largest n"] == 2999
    verdict = rep.verdict
    assert verdict.line.startswith("fault in 'deterministic': raised ValueError (boom);")
    assert verdict.line.endswith("(smallest case n=3000); also logic error in 'integers exact': "
                                 "differs from the exact scan (smallest case n=100, index 99)")
    assert [f.folded() for f in verdict.findings][1].endswith("-- explains: integers exact")


def test_raising_at_every_size_past_some_n_names_the_flag_that_declares_that_limit():
    target = _scan(raises=ValueError("at most 2999 elements"), at=3000)
    (r,) = check(target, ("integers exact",), budget=SMALL).results
    assert r.status == "fault" and r.smallest_case["n"] == 3000
    flag = r.diagnosis.rpartition("declare ")[2]
    assert flag == "--accepts-max-n 2999"
    parser = argparse.ArgumentParser()
    add_spec_flags(parser)
    spec = with_overrides(target.spec, spec_overrides(parser.parse_args(flag.split())))
    assert check(replace(target, spec=spec), ("integers exact",), budget=SMALL).passed


def test_raising_past_one_element_is_told_the_first_combine_not_a_limit():
    """A scan of one element combines nothing: raising at every n past it is no size limit
    to declare (a combine handed operands of another shape raises so)."""
    (r,) = check(_scan(raises=ValueError("not enough values to unpack"), at=2),
                 ("integers exact",), budget=SMALL).results
    assert r.status == "fault" and r.smallest_case["n"] == 2
    assert r.diagnosis == ("raised ValueError (not enough values to unpack); it answered one "
                           "element, where a scan combines nothing, and raised at each larger n "
                           "tried: the first combine raises"), r.diagnosis


def test_raising_at_some_sizes_only_is_told_no_limit():
    def fn(x: np.ndarray) -> np.ndarray:
        if x.size > 1 and x.size % 2:  # every tile edge 2**k + 1 of the ladder raises
            raise ValueError("odd n")
        return np.cumsum(x, dtype=x.dtype)

    (r,) = check(Target("user scan", fn, TargetSpec(dtypes=("int32",))), ("integers exact",),
                 budget=SMALL).results
    assert r.status == "fault" and r.smallest_case["n"] == 3, r
    assert r.diagnosis == "raised ValueError (odd n)"


def test_scancheck_s_own_errors_are_not_blamed_on_the_target(monkeypatch):
    def broken(*args, **kwargs):
        raise RuntimeError("an oracle's bug")

    monkeypatch.setattr("scancheck.engine.properties.running.exact_answer", broken)
    with pytest.raises(RuntimeError, match="an oracle's bug"):
        check_property(_scan(), "integers exact", SMALL)


def test_a_gpu_target_s_error_ends_its_process_but_its_out_of_memory_does_not():
    """An error from a GPU target may leave its CUDA context unusable, so that every later
    call fails: it is not a failure of one case (in a child, the child dies and a new one
    goes on below its size); out of memory leaves the context as it was."""
    def thrown(error: Exception) -> Exception:
        try:
            _scan(raises=error, at=0).run(np.zeros(3, dtype=np.int32))
        except Exception as exc:
            return exc
        raise AssertionError("no exception")

    gpu = _scan(device="gpu")
    assert raised(gpu, thrown(ValueError("illegal address")), 5) is None
    assert raised(gpu, thrown(MemoryError("no room")), 5).cause == Cause.RESOURCE
    assert raised(_scan(), thrown(ValueError("boom")), 5).cause == Cause.FAULT
    assert raised(_scan(), ValueError("not the target's"), 5) is None


def _gpu_memory(monkeypatch, free: float, elsewhere: float, own: float = 0.5) -> None:
    """The GPU's memory as a reading would tell it, in GiB of an 80 GiB device; and a GPU
    target's arrays handed over as NumPy's (CuPy's part in a check is the GPU tests')."""
    from types import SimpleNamespace

    from scancheck.core.devices import GpuMemory

    monkeypatch.setitem(sys.modules, "cupy", SimpleNamespace(
        asarray=np.asarray, cuda=SimpleNamespace(Device=lambda: SimpleNamespace(
            synchronize=lambda: None))))

    gib = 2**30
    reading = GpuMemory(int(free * gib), 80 * gib, int(own * gib))
    assert abs(reading.elsewhere - elsewhere * gib) < gib
    monkeypatch.setattr("scancheck.engine.no_answer.gpu_memory", lambda: reading)


def test_out_of_memory_while_other_processes_hold_the_gpu_is_no_evidence(monkeypatch):
    """A GPU target out of memory while other processes held most of the GPU (a JAX client
    beside it took 75%): the property stops short, "partial", claiming nothing from that n
    on, and a wrong answer found below it is still the verdict."""
    _gpu_memory(monkeypatch, free=1.0, elsewhere=78.5)
    oom = OutOfMemoryError("CUDA out of memory. Tried to allocate 2.00 MiB")
    rep = check(_scan(raises=oom, at=300, device="gpu"), ("integers exact",), budget=SMALL)
    (r,) = rep.results
    assert r.status == "partial" and r.detail["largest n"] == 299, r
    assert r.diagnosis.startswith("no failure up to n = 299; out of memory at n = 300, the "
                                  "GPU's memory was taken (78.5 GiB of the GPU's 80.0 held "
                                  "elsewhere"), r.diagnosis
    assert rep.verdict_word == "partial" and not rep.passed
    assert "the GPU's memory was taken" in rep.summary and "--budget" not in rep.summary
    # One bug does not hide another: the wrong answer below the out-of-memory is the verdict.
    rep = check(_scan(raises=oom, at=300, wrong_from=100, device="gpu"),
                ("integers exact", "deterministic"), budget=SMALL)
    assert rep.verdict_word == "DOES NOT CONFORM" and rep.verdict.cause == Cause.LOGIC
    assert rep.results[1].status == "partial"
    # A refusal found before it stands, the memory noted beside it.
    rep = check(_scan(empty=ValueError("no data"), raises=oom, at=300, device="gpu"),
                ("integers exact",), budget=SMALL)
    (r,) = rep.results
    assert r.status == "fail" and r.smallest_case["n"] == 0 and r.cause == "LOGIC"
    assert r.detail["memory taken"].startswith("from n = 300: the GPU's memory was taken")


def test_scancheck_s_own_allocation_on_a_gpu_others_took_is_no_evidence_either(monkeypatch):
    """Placing a case's input on the GPU, or judging its answer there, runs out where others
    took the GPU's memory: the same stop, not a crash of the check."""
    _gpu_memory(monkeypatch, free=0.05, elsewhere=79.5)

    def placed(x):
        if x.size >= 300:
            raise OutOfMemoryError("Out of memory allocating 67,108,864 bytes")
        return x

    monkeypatch.setattr("scancheck.targets.target._device_view", placed)
    (r,) = check(_scan(device="gpu"), ("integers exact",), budget=SMALL).results
    assert r.status == "partial" and r.detail["largest n"] == 299, r


def test_out_of_memory_with_the_gpu_to_itself_stays_the_targets(monkeypatch):
    """Where other processes hold less than half of the GPU, running out is the target's
    doing (it asked for more than was free): its own cause, as on the CPU."""
    _gpu_memory(monkeypatch, free=40.0, elsewhere=30.0, own=10.0)
    oom = OutOfMemoryError("CUDA out of memory. Tried to allocate 50.00 GiB")
    (r,) = check(_scan(raises=oom, at=300, device="gpu"), ("integers exact",),
                 budget=SMALL).results
    assert r.status == "fail" and r.cause == "RESOURCE" and "memory taken" not in r.detail
    # Nor is a CPU target's memory ever read off the GPU.
    monkeypatch.setattr("scancheck.engine.no_answer.gpu_memory", None)
    (r,) = check(_scan(raises=MemoryError("no room"), at=300), ("integers exact",),
                 budget=SMALL).results
    assert r.status == "fail" and r.cause == "RESOURCE"


def test_memory_taken_while_a_wrong_answer_is_shrunk_leaves_the_wrong_answer(monkeypatch):
    """The GPU's memory taken only after a wrong answer was seen: shrinking meets out of
    memory at smaller n, which is no evidence, and the wrong answer stays the verdict."""
    state = {"taken": False}
    oom = OutOfMemoryError("CUDA out of memory. Tried to allocate 2.00 MiB")
    _gpu_memory(monkeypatch, free=1.0, elsewhere=78.5)

    def fn(x):
        if state["taken"] and x.size >= 2:
            raise oom
        out = np.cumsum(x, dtype=x.dtype)
        if x.size >= 1000:
            out[-1] += 1
            state["taken"] = True
        return out

    target = Target("user scan", fn, TargetSpec(dtypes=("int32",), device="gpu"))
    rep = check(target, ("integers exact",), budget=SMALL)
    assert rep.verdict_word == "DOES NOT CONFORM" and rep.verdict.cause == Cause.LOGIC, rep.summary


def test_a_request_that_never_fits_or_the_hosts_memory_is_the_targets_own(monkeypatch):
    """Much of the GPU free, a request past it is the target's, whatever others hold; and a
    host MemoryError is never the GPU's memory taken."""
    _gpu_memory(monkeypatch, free=34.0, elsewhere=45.5)
    huge = OutOfMemoryError("CUDA out of memory. Tried to allocate 500.00 GiB")
    (r,) = check(_scan(raises=huge, at=1, device="gpu"), ("integers exact",),
                 budget=SMALL).results
    assert r.status == "fail" and r.cause == "RESOURCE", r
    _gpu_memory(monkeypatch, free=1.0, elsewhere=78.5)
    host = MemoryError("Unable to allocate 1.00 TiB for an array with shape (2**40,)")
    (r,) = check(_scan(raises=host, at=300, device="gpu"), ("integers exact",),
                 budget=SMALL).results
    assert r.status == "fail" and r.cause == "RESOURCE" and "memory taken" not in r.detail


def test_the_summary_tells_each_reason_a_check_stopped_short(monkeypatch):
    from scancheck.engine.conformance import ConformanceReport
    from scancheck.engine.diagnosis import PropertyResult

    taken = "the GPU's memory was taken (...)"
    rep = ConformanceReport("t", {}, [
        PropertyResult("integers exact", "partial", "...", detail={"largest n": 299,
                                                                    "memory taken": taken},
                       reason="MEMORY_TAKEN"),
        PropertyResult("deterministic", "slow", "...", detail={"largest n": 4096,
                                                                "short of n": 8192})])
    assert rep.summary == (
        "no failure up to n = 299; out of memory in integers exact from n = 300, the GPU's "
        "memory was taken (...); the budget ran out before the top in deterministic: give "
        "--budget more seconds, or --max-n 299 for a verdict there")
