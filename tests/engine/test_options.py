"""A check's options and the plan of its property loop: one typed value each, made and
checked once, to JSON and back whole."""

from __future__ import annotations

import json
from dataclasses import fields

import pytest

from scancheck.engine.cases import Budget
from scancheck.engine.options import (
    BUDGET,
    LEAST_SEARCH,
    OPTIONS,
    PLAN,
    CheckOptions,
    Plan,
)
from scancheck.targets.spec import TargetSpec

#: Options whose every field differs from its default.
FULL = CheckOptions(
    properties=("rows", "integers exact"), large=True, budget=Budget(2.5, 77, 4096, True),
    seconds=9.5, timeout=12.0, sanitize=("memcheck", "racecheck"), workers=3,
    spec=TargetSpec(dtypes=("int8", "bool"), promote=(("int8", "int64"), ("bool", "int64"))),
    overrides={"op": "max", "dtypes": ["float32"]}, gpu="1", timeout_flag="--scan-timeout")


def _trip(value):
    return json.loads(json.dumps(value.to_json()))


def test_every_field_of_the_options_survives_json():
    default = CheckOptions()
    assert [f.name for f in fields(CheckOptions) if getattr(FULL, f.name) == getattr(
        default, f.name)] == []
    assert CheckOptions.from_json(_trip(FULL)) == FULL
    assert CheckOptions.from_json(_trip(default)) == default


def test_every_field_of_a_plan_survives_json():
    plan = Plan(("deterministic", "rows"), Budget(1.5, 9, 64, True), until=1.7e9 + 0.123456789,
                empty=False)
    assert [f.name for f in fields(Plan) if getattr(plan, f.name) == getattr(
        Plan(()), f.name)] == []
    assert Plan.from_json(_trip(plan)) == plan


@pytest.mark.parametrize("schema, cls", [(OPTIONS, CheckOptions), (PLAN, Plan),
                                         (BUDGET, Budget)])
def test_each_schema_names_every_field_of_its_dataclass(schema, cls):
    """A field added to the dataclass and not to its schema would not reach a child."""
    assert list(schema.kinds) == [f.name for f in fields(cls)]


def test_a_field_left_out_of_the_json_takes_its_default():
    assert CheckOptions.from_json({}) == CheckOptions()
    assert CheckOptions.from_json({"timeout": 5, "budget": {"seconds": 2}}) == CheckOptions(
        timeout=5, budget=Budget(2))


@pytest.mark.parametrize("data, message", [
    ({"speed": 1}, "CheckOptions: unknown field 'speed'; allowed: properties, large, budget"),
    ({"budget": {"secs": 1}}, "CheckOptions field 'budget': Budget: unknown field 'secs'; "
                              "allowed: seconds"),
    ({"timeout": "abc"}, "CheckOptions field 'timeout': 'abc' is not a number"),
    ({"properties": "rows"}, "CheckOptions field 'properties': 'rows' is not a list of strings "
                             "or null"),
    ({"workers": True}, "CheckOptions field 'workers': True is not an integer or null"),
    ({"overrides": [["op", "max"]]}, "CheckOptions field 'overrides': .* is not an object of "
                                     "TargetSpec fields"),
    ({"spec": {"op": "nope"}}, "CheckOptions field 'spec': op='nope' is unknown"),
    ({"spec": {"speed": 1}}, "CheckOptions field 'spec': .* is not a TargetSpec's JSON object "
                             "or null .*'speed'"),
    ({"budget": {"seconds": -1}}, "CheckOptions field 'budget': budget=-1 seconds must be a "
                                  "positive number"),
    ({"sanitize": ["leakcheck"]}, "sanitize='leakcheck' is unknown; allowed: racecheck"),
    ({"timeout": 0}, "timeout=0 seconds must be positive"),
    ({"timeout_flag": ""}, "timeout_flag='' must be a flag's name"),
    ([], r"CheckOptions: \[\] is not a JSON object"),
])
def test_an_unknown_or_malformed_field_is_an_error_naming_it(data, message):
    with pytest.raises(ValueError, match=message):
        CheckOptions.from_json(data)


@pytest.mark.parametrize("settings, message", [
    ({"timeout": 0}, "timeout=0 seconds must be positive"),
    ({"seconds": -1}, "seconds=-1 must be positive"),
    ({"workers": 0}, "workers=0 must be a positive integer"),
    ({"large": "yes"}, "large='yes' must be True, False or None"),
    ({"properties": "rows"}, "properties='rows' must be a tuple of names"),
    ({"budget": 30}, "budget=30 must be a Budget"),
    ({"gpu": 1}, "gpu=1 must be a GPU id"),
])
def test_options_out_of_range_are_refused_as_they_are_made(settings, message):
    with pytest.raises(ValueError, match=message):
        CheckOptions(**settings)


def test_a_setting_that_is_no_field_and_an_unknown_property_are_named():
    with pytest.raises(TypeError, match="speed is no setting of a check; allowed: budget"):
        CheckOptions().with_settings(speed=1)
    with pytest.raises(ValueError, match="property 'speed' is unknown; allowed: integers exact"):
        CheckOptions(properties=("speed",)).checked_properties()
    assert CheckOptions(properties=("past 2**31",)).checked_properties() == ("past 2**31",)


def test_each_property_of_a_plan_gets_an_even_share_of_the_time_left():
    plan = Plan(("a", "b", "c", "d"), Budget(10), until=100.0)
    assert plan.share(0, 80.0).seconds == 5.0  # 20 s left for four
    assert plan.share(2, 60.0).seconds == 10.0  # never past the budget's own seconds
    assert plan.share(3, 99.99).seconds == LEAST_SEARCH  # however little is left
    assert Plan(("a",), Budget(10)).share(0, 1e12) == Budget(10)  # no time bound: the budget


def test_check_takes_its_settings_as_options_or_by_name_not_both():
    from scancheck.engine.conformance import check
    from scancheck.targets.resolve import resolve

    # Wrong at every n: whatever the search draws first shows it.
    target = resolve("scancheck.controls.sums:exclusive_scan_with_wrong_first_output")
    small = Budget(0.1, max_n=256)
    by_name = check(target, ("integers exact",), budget=small)
    told = check(target, options=CheckOptions(properties=("integers exact",), budget=small,
                                              overrides={"dtypes": ("int32",)}))
    assert [(r.name, r.status, r.cause) for r in told.results] == [
        (r.name, r.status, r.cause) for r in by_name.results] == [
        ("integers exact", "fail", "LOGIC")]
    assert told.spec["dtypes"] == ("int32",)  # the overrides replace the target's own
    with pytest.raises(TypeError, match="not both"):
        check(target, ("integers exact",), options=CheckOptions())
