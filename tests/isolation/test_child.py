"""The child process of an isolated check: the order it is given, the plan it runs as its
parent made it, and the launches a sanitizer run watches."""

from __future__ import annotations

import json
import os
from dataclasses import fields, replace

import pytest

from scancheck.engine.cases import Budget
from scancheck.engine.options import CheckOptions, Plan
from scancheck.isolation.child import ORDER, Order, smoke
from scancheck.isolation.parent import child_command
from scancheck.isolation.watch import watch
from scancheck.targets.resolve import resolve


def test_a_sanitizer_run_leaves_a_write_into_the_input_to_the_value_properties(capsys):
    """Its child launches the target at a few sizes for the sanitizer to watch: a write
    into the input is no fault there (the value properties refuse it, with its own cause)."""
    smoke(resolve("scancheck.controls.sums:zeroing_its_input"), [1, 33])
    assert capsys.readouterr().out.split() == ["scancheck-sanitize:", "n=1",
                                               "scancheck-sanitize:", "n=33"]


@pytest.mark.parametrize("name", ["scancheck.controls.segmented:offsets_times_heads_in_32_bits",
                                  "numpy segmented cumsum (groups)"])
def test_a_sanitizer_run_hands_a_segmented_target_its_segments(name):
    """A segmented target is launched as fn(x, segments) (a (T, 1) input for one along axis
    0): called as fn(x) it would fail in every sanitizer run, a fault that is not its own."""
    seen = []
    target = resolve(name)
    fn = target.fn
    smoke(replace(target, fn=lambda x, s: (seen.append((x.shape, s.dtype.name)), fn(x, s))[1]),
           [1, 33, 257])
    assert [shape for shape, _ in seen] == (
        [(1,), (33,), (257,)] if target.spec.axis is None else [(1, 1), (33, 1), (257, 1)])


def test_every_field_of_a_childs_order_survives_json():
    from tests.engine.test_options import FULL

    order = Order("numpy.cumsum", FULL, resolve=True, plan=Plan(("rows",), Budget(1.0)),
                  handoff="/tmp/plan.json", smoke=(1, 33))
    assert [f.name for f in fields(Order) if getattr(order, f.name) == getattr(
        Order("numpy.cumsum"), f.name)] == ["locator"]
    assert list(ORDER.kinds) == [f.name for f in fields(Order)]
    assert ORDER.load(json.loads(json.dumps(ORDER.dump(order)))) == order
    with pytest.raises(ValueError, match="Order: unknown field 'props'; allowed: locator"):
        ORDER.load({"locator": "numpy.cumsum", "props": ["rows"]})


_RECORDING = (
    "import sys\nimport numpy as np\n\n"
    "def scan(x):\n"
    "    with open({seen!r}, 'a') as fh:\n"
    "        fh.write(str(sorted(m for m in sys.modules if m.startswith('scancheck.isolation.')"
    " and m != 'scancheck.isolation.child')) + '\\n')\n"
    "    return np.cumsum(x, dtype=x.dtype)\n")


def _resolving_child(tmp_path, monkeypatch, handed):
    """The events of a child started afresh to resolve a target and go on with the plan
    ``handed`` to it (JSON null: none), and what its target saw loaded of the isolation
    layer."""
    seen = tmp_path / "seen.txt"
    (tmp_path / "recording.py").write_text(_RECORDING.format(seen=str(seen)))
    monkeypatch.setenv("PYTHONPATH", f"{tmp_path}{os.pathsep}{os.environ.get('PYTHONPATH', '')}")
    handoff = tmp_path / "plan.json"
    handoff.write_text(json.dumps(handed))
    # Its options name properties of their own: the child runs the plan, not these.
    order = Order("recording:scan", CheckOptions(properties=("rows",)), resolve=True,
                  handoff=str(handoff))
    events, status, err = watch(child_command(order), 60, fork=False)
    assert status == "ok", err
    return events, seen.read_text().splitlines() if seen.exists() else []


def test_the_child_runs_the_plan_its_parent_made_and_plans_nothing(tmp_path, monkeypatch):
    """The plan is made once, in the parent: the child that resolved the target runs the
    properties it is handed, in their order and within their budget -- one the parent's
    planner would have answered without a child ('recurrence' of an add scan) included --
    and never loads the planner."""
    plan = Plan(("deterministic", "recurrence", "integers exact"), Budget(0.2, max_n=64))
    events, seen = _resolving_child(tmp_path, monkeypatch, plan.to_json())
    started = [ev["property"] for ev in events if ev["event"] == "start"]
    results = {ev["result"]["name"]: ev["result"] for ev in events if ev["event"] == "result"}
    assert [ev["event"] for ev in events][0] == "target"
    assert started == list(plan.properties) == list(results)
    assert results["recurrence"]["status"] == "skip"
    assert results["integers exact"]["status"] == "pass"
    assert max(ev["n"] for ev in events if ev["event"] == "case") <= 64
    assert seen and set(seen) == {"[]"}  # scancheck.isolation.parent never loaded


def test_a_child_handed_no_plan_stops_once_it_has_told_the_target(tmp_path, monkeypatch):
    events, seen = _resolving_child(tmp_path, monkeypatch, None)
    # The child's own events: the watcher's readings of its memory come last.
    assert [ev["event"] for ev in events if ev["event"] != "memory"] == ["target"] and seen == []
