"""The warm step's calls (scancheck.engine.warmup): every input a check's ladders hand a
target, so that a library compiling once per shape has compiled them before the tests."""

from __future__ import annotations

from dataclasses import replace

import pytest

from scancheck.engine import warmup
from scancheck.engine.cases import Budget
from scancheck.engine.conformance import PROPERTIES, check_property, not_applicable
from scancheck.engine.warmup import ladder_calls, warm, warm_check
from scancheck.targets.resolve import resolve


def _recording(name: str, dtypes: tuple[str, ...], seen: list, fail_at: int | None = None,
               axis: bool = False):
    """The target ``name`` narrowed to ``dtypes``, its every call's (dtype, shape) kept, and
    its axis where ``axis`` (a JIT compiles a static axis of -1 and of 1 apart)."""
    target = resolve(name)
    inner = target.fn

    def fn(x, *rest):
        seen.append((x.dtype.name, tuple(x.shape), *rest[:1]) if axis else
                    (x.dtype.name, tuple(x.shape)))
        if fail_at is not None and x.size == fail_at:
            raise RuntimeError("refused")
        return inner(x, *rest)

    return replace(target, fn=fn, locator=None, spec=replace(target.spec, dtypes=dtypes))


@pytest.mark.parametrize("name", ["numpy.cumsum", "numpy.cumprod (default dtype)"])
def test_every_input_a_ladder_hands_the_target_is_warmed(name):
    """With no time for Hypothesis's draws, a check runs its ladders alone: each input it
    hands the target, 1-D or a batch of rows, is one the warm step calls."""
    checked: list = []
    warmed: list = []
    for dtype in ("int32", "float32"):  # one dtype a check, as the GPU suite splits them
        target = _recording(name, (dtype,), checked)
        for prop in PROPERTIES:
            if not not_applicable(target.spec, prop):
                check_property(target, prop, Budget(1e-9, max_n=2**12))
        for _, call in ladder_calls(_recording(name, (dtype,), warmed), 2**12).values():
            call()
    assert len(checked) > 40 and any(len(shape) > 1 for _, shape in checked)
    assert set(checked) <= set(warmed)


def test_warm_calls_each_input_once_and_passes_over_a_refusal(monkeypatch):
    seen: list = []
    target = _recording("numpy.cumsum", ("int64",), seen, fail_at=7, axis=True)
    monkeypatch.setattr(warmup, "resolve", lambda name: target)
    calls = warm("numpy.cumsum", 2**10, threads=2)
    assert calls == len(ladder_calls(target, 2**10)) == len(seen) == len(set(seen))
    assert {call[:2] for call in seen} >= {("int64", (7,)), ("int64", (1024,))}


def test_an_unavailable_target_is_not_warmed(monkeypatch):
    target = replace(resolve("numpy.cumsum"), unavailable="not installed here")
    monkeypatch.setattr(warmup, "resolve", lambda name: target)
    assert warm("numpy.cumsum", 2**10) == 0


def test_the_warm_ladders_reach_max_n():
    keys = ladder_calls(resolve("numpy.cumsum"), 2**10)
    assert max(key[1][0] for key in keys if isinstance(key[1], tuple) and len(key[1]) == 1) == 2**10


def test_a_warm_check_walks_the_ladder_of_the_property_it_names(monkeypatch):
    """What Inductor or Triton compile per combine or specialisation, a warm check has met:
    every input the property's ladder hands the target, to max_n, and no search past it."""
    checked: list = []
    warmed: list = []
    check_property(_recording("numpy.cumsum", ("float32",), checked), "floats within bound",
                   Budget(1e-9, max_n=2**12))
    monkeypatch.setattr(warmup, "resolve",
                        lambda name: _recording(name, ("float32",), warmed))
    assert warm_check("numpy.cumsum", "floats within bound", 2**12) == "pass"
    assert set(checked) == set(warmed) and ("float32", (2**12,)) in warmed
    monkeypatch.setattr(warmup, "resolve", lambda name: replace(
        resolve(name), unavailable="not installed here"))
    assert warm_check("numpy.cumsum", "floats within bound", 2**12) == "unavailable"


def test_a_test_waits_for_its_targets_warm_jobs_and_for_no_others(tmp_path, monkeypatch):
    """Beside a warm step (SCANCHECK_WARMING), a target's jobs are waited for until each is
    marked ended, those of one dtype alone where the test has one; a target with no job, or
    no warm step at all, waits for nothing; the waits are noted for the suite's summary."""
    import threading
    import time

    monkeypatch.delenv(warmup.WARMING_ENV, raising=False)
    assert warmup.wait_warmed("jax.numpy.cumsum (x64)", "float64") == 0
    warmup.plan_warming(tmp_path, {"jax.numpy.cumsum (x64)": {"float64": ["0", "1"],
                                                              "int64": ["2"]}})
    monkeypatch.setenv(warmup.WARMING_ENV, str(tmp_path))
    assert warmup.wait_warmed("numpy.cumsum") == 0
    ended = []

    def end(job, after):
        time.sleep(after)
        ended.append(job)
        warmup.job_ended(tmp_path, job)

    threads = [threading.Thread(target=end, args=(j, t)) for j, t in (("0", 0.2), ("1", 0.4))]
    for t in threads:
        t.start()
    waited = warmup.wait_warmed("jax.numpy.cumsum (x64)", "float64")
    assert ended == ["0", "1"] and waited >= 0.35
    start = time.monotonic()
    assert warmup.wait_warmed("jax.numpy.cumsum (x64)", "int64", timeout=0.3) >= 0.3  # job 2
    warmup.warming_over(tmp_path)  # the step ended: job 2 is waited for no more
    assert warmup.wait_warmed("jax.numpy.cumsum (x64)") < 0.05
    assert time.monotonic() - start < 5
    noted = (tmp_path / "waited").read_text().splitlines()
    assert [ln.split("\t")[1:] for ln in noted] == [["jax.numpy.cumsum (x64)", "float64"],
                                                    ["jax.numpy.cumsum (x64)", "int64"]]
