"""The 'segments' property: correct segmented and chunked targets pass, the segmented
controls of a wrong answer fail with a smallest case of few segments, and no other property
runs them."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from scancheck.adapters import builtin_targets
from scancheck.controls import CONTROLS, segmented
from scancheck.controls.segmented import infinity_plus_finite_as_nan
from scancheck.engine.cases import Budget, Case
from scancheck.engine.conformance import check, check_property
from scancheck.engine.diagnosis import Cause
from scancheck.engine.properties import TABLE, applies
from scancheck.engine.properties.segments import segments_check
from scancheck.targets.resolve import resolve
from scancheck.targets.spec import TargetSpec
from scancheck.targets.target import Target

TARGETS = builtin_targets()
#: pandas 3.1.1's groupby().cumsum() turns an infinity plus a finite value into NaN (its
#: compensated sum subtracts inf from inf); Series.cumsum does not.
FINDING = "pandas groupby().cumsum()"
SEGMENTED = [n for n, t in TARGETS.items() if t.spec.segments and n != FINDING]
SEG_CONTROLS = [c for c in CONTROLS if not c.gpu and resolve(c.locator, c.spec).spec.segments]
#: Bits that differ between runs are reported as the ladder found them, not shrunk: a
#: smaller case shows them again only by chance (tests/test_controls.py catches these).
WRONG_ANSWERS = [c for c in SEG_CONTROLS if c.cause != Cause.NONDETERMINISM]


@pytest.mark.parametrize("name", SEGMENTED)
def test_correct_segmented_targets_conform(name, budget):
    target = TARGETS[name]
    if target.unavailable:
        pytest.skip(f"{name}: {target.unavailable}")
    # The profile's search past the ladder (every scale to 2**14 is checked whatever it is).
    result = check_property(target, "segments", replace(budget, max_n=2**14))
    assert result.status == "pass", (result.diagnosis, result.smallest_case)


def test_a_segmented_target_gets_the_segments_property_alone():
    seg, plain = TargetSpec(segments="offsets"), TargetSpec()
    assert [p for p, row in TABLE.items() if applies(row, seg) is None] == ["segments"]
    assert applies(TABLE["segments"], plain) is not None


@pytest.mark.parametrize("control", WRONG_ANSWERS, ids=[c.name for c in WRONG_ANSWERS])
def test_a_segmented_control_shrinks_to_a_few_segments(control):
    rep, caught = control.check(isolated=False, budget=Budget(5))
    assert caught, rep.rows()
    (result,) = [r for r in rep.results if r.status == "fail"]
    assert result.name == "segments"
    case = result.smallest_case
    # n is the elements of the input shrunk to (the seed draws the case at 'drawn'): the
    # verdict tells no other size.
    size = int(np.prod(case["shape"]))
    assert size == case["n"] and "shrunk to" not in rep.verdict.line, rep.verdict.line
    if case.get("segments") == "groups":  # the fewest labels and elements that still fail
        # A heapsort reorders equal labels only among a few more elements than two.
        assert len(set(case["groups"])) <= 2 and case["shape"][0] <= 6, case
        return
    if case.get("segments") == "flags":  # a description of another kind: a few elements
        assert case["shape"][0] <= 4, case
        return
    if case.get("segments") == "keys":  # a segment's key each: the fewest that still join
        assert len(case["keys"]) <= 3 and case["shape"][0] <= 4, case
        return
    offsets = case.get("offsets")
    # At most three segments (empty ones included): joined, not removed, where removing
    # would move the seam; of a few elements away from tiles and chunks.
    assert offsets is not None and len(offsets) <= 4 and offsets[-1] <= case["n"], case
    if "tile" not in control.name and "chunk" not in control.name:
        assert offsets[-1] <= 4, case


def test_a_description_written_into_is_a_verdict_of_its_own():
    def scan(x, offsets):
        offsets[-1] = 0
        return np.cumsum(x, dtype=x.dtype)

    t = Target("writes", scan, TargetSpec(segments="offsets", dtypes=("int32",)))
    failure = segments_check(t, Case(10, "int32", "integers", 1))
    assert failure is not None and "writes into its offsets" in failure.diagnosis


def test_the_unsegmented_scan_of_segmented_data_is_caught_per_segment():
    """np.cumsum over the whole array, ignoring the segments: right on the first segment
    alone, so the failure names a later one."""
    t = Target("ignores", lambda x, s: np.cumsum(x, dtype=x.dtype),
               TargetSpec(segments="flags", dtypes=("int64",)))
    rep = check(t, properties=("segments",), budget=Budget(2, max_n=4096))
    assert not rep.passed and "segment 2 of 2" in rep.diagnosis, rep.diagnosis


def test_index_overflow_model_is_right_below_2_31(budget):
    """The int32 ``bos * H`` control is right at every size the CPU can hold: only a check
    past 2**31 elements can catch it ('segments past 2**31', tests/engine/test_large_segments.py)."""
    t = resolve("scancheck.controls.segmented:offsets_times_heads_in_32_bits")
    assert check_property(t, "segments", replace(budget, max_n=2**12)).status == "pass"
    starts = np.array([0, 2**29], np.int32)
    with np.errstate(over="ignore"):
        assert (starts * np.int32(4))[1] < 0  # the wrap it would meet at T * H = 2**31


@pytest.mark.parametrize("declared", ["offsets:int32", "offsets:int64"])
def test_a_target_taking_one_offsets_dtype_gets_that_one_alone(declared):
    seen = set()

    t = Target("one dtype", lambda x, o: (seen.add(o.dtype.name), x.copy())[1],
               TargetSpec(segments=declared, dtypes=("int32",)))
    for seed in range(20):
        segments_check(t, Case(50, "int32", "integers", seed))
    assert seen == {declared.partition(":")[2]}


def test_a_column_of_a_segmented_scan_is_told_in_plain_numbers():
    """NumPy 2 shows its scalars as np.int64(1) inside a list: a column is told as [1]."""
    import re
    from dataclasses import replace as changed

    (control,) = [c for c in SEG_CONTROLS if c.name.startswith("carry not reset")]
    target = resolve(control.locator, control.spec)
    target = changed(target, spec=changed(target.spec, axis=0))
    r = check_property(target, "segments", Budget(1))
    assert r.status == "fail" and re.search(r"column \[\d+(, \d+)*\]", r.diagnosis), r.diagnosis
    assert "np." not in r.diagnosis


def _seg_tiled(x, offsets):
    """A segmented sum that misses a segment's reset where it starts on a tile of 16."""
    out = np.cumsum(x, dtype=x.dtype)
    for a, b in zip(offsets[:-1], offsets[1:]):
        if a < b and a % 16:
            out[a:b] -= out[a - 1] if a else 0
    return out


def test_a_segmented_case_names_its_segment_from_1_and_n_as_its_shape():
    """The case cell agrees with the prose: the segment counted from 1 (the failing output
    lies in it), n the elements of the input it failed on, the drawn size beside it."""
    import re

    t = Target("tiled", _seg_tiled, TargetSpec(segments="offsets", dtypes=("int64",)))
    rep = check(t, properties=("segments",), budget=Budget(2, max_n=4096))
    (result,) = [r for r in rep.results if r.status == "fail"]
    case = result.smallest_case
    assert case["n"] == int(np.prod(case["shape"])), case
    assert case.get("drawn", case["n"]) >= case["n"] and case.get("drawn") != case["n"], case
    told = int(re.search(r"segment (\d+) of", result.diagnosis)[1])
    offsets = case["offsets"]
    assert case["segment"] == told and offsets[told - 1] <= case["index"] < offsets[told], (
        case, result.diagnosis)
    assert f"(smallest case n={case['n']}, index {case['index']})" in rep.verdict.line


def test_a_target_that_raises_on_the_declared_kind_and_reads_another_is_told_its_contract():
    """Raising on flags where the same segments as offsets are right is the description's
    kind, not a largest n of its own."""
    t = Target("idx", segmented.offsets_as_indices_where_flags_are_declared,
               TargetSpec(segments="flags", dtypes=("int32",)))
    r = check_property(t, "segments", Budget(2, max_n=256))
    assert r.cause == "CONTRACT" and r.detail["contract"] == "--segments offsets", r
    assert "reads its segments as offsets: raised IndexError on these flags" in r.diagnosis


def _groups_scan(order):
    """A groups sum scanning each group's elements in ``order(members)``."""
    def scan(x, labels):
        out = np.empty_like(x)
        for label in np.unique(labels):
            members = order(np.flatnonzero(labels == label))
            out[members] = np.cumsum(x[members], dtype=x.dtype)
        return out
    return scan


def _offset_groups(x, labels):
    """A groups sum in order, each group after the first started from 1: no order of a
    group's elements gives its outputs."""
    out = _groups_scan(lambda m: m)(x, labels)
    first = labels == labels[0]
    out[~first] += x.dtype.type(1)
    return out


@pytest.mark.parametrize("fn, told", [
    (_groups_scan(lambda m: m[::-1]), "): from its last element to its first"),
    (_offset_groups, None)])
def test_a_groups_scan_is_told_out_of_order_only_where_its_outputs_show_an_order(fn, told):
    """A group scanned from its end is told so, each output holding the running sum in that
    order; a group wrong otherwise is not told any order."""
    t = Target("groups", fn, TargetSpec(segments="groups", dtypes=("int64",)))
    seen = set()
    for seed in range(30):
        failure = segments_check(t, Case(12, "int64", "integers", seed))
        if failure is not None:
            seen.add(told in failure.diagnosis if told else "another order" in failure.diagnosis)
    assert seen == {told is not None}, seen


def test_a_group_is_named_by_its_label_in_the_case_too():
    (control,) = [c for c in SEG_CONTROLS if c.name == "group labels narrowed to int32"]
    r = check_property(resolve(control.locator, control.spec), "segments", Budget(2))
    case = r.smallest_case
    assert r.status == "fail" and "segment" not in case, case
    assert case["group"] == case["groups"][case["index"]], case
    assert f"group {case['group']} (" in r.diagnosis, r.diagnosis


def _leaks(x, offsets):
    """Each segment after the first starts from the previous segment's last output."""
    out = np.empty_like(x)
    carry = x.dtype.type(0)
    with np.errstate(invalid="ignore", over="ignore"):
        for a, b in zip(offsets[:-1], offsets[1:]):
            out[a:b] = carry + np.cumsum(x[a:b], dtype=x.dtype)
            carry = out[b - 1] if b > a else carry
    return out


@pytest.mark.parametrize("fn, cause", [(infinity_plus_finite_as_nan, Cause.SPECIALS),
                                       (_leaks, Cause.LOGIC)])
def test_a_nan_or_infinity_failure_is_told_by_whether_finite_data_fail_too(fn, cause):
    """A wrong NaN or infinity in a segment is NaN/inf semantics where the same segments of
    finite data are right, and never 'precision lost'; a logic error that a NaN or infinity
    merely carried stays a logic error."""
    t = Target(fn.__name__, fn, TargetSpec(segments="offsets", dtypes=("float32",)))
    told = set()
    for seed in range(40):
        failure = segments_check(t, Case(24, "float32", "specials", seed))
        if failure is not None and np.isinf(failure.expected) != np.isinf(failure.got):
            told.add(failure.cause)
            assert "precision lost" not in failure.diagnosis, failure.diagnosis
    assert told == {cause}, told


def _offsets_over_the_last_output():
    """A segmented sum that reads its description as offsets, and starts each output from
    the last one of that shape (memory a freed output left): handed flags, it writes the
    first element alone, so its first call is wrong and a call after a right one is right."""
    last: dict[tuple, np.ndarray] = {}

    def scan(x, seg):
        key = (x.shape, x.dtype.str)
        out = last.get(key, np.zeros_like(x)).copy()
        o = np.asarray(seg, np.int64)
        for a, b in zip(o[:-1], o[1:]):
            out[a:b] = np.cumsum(x[a:b], axis=0, dtype=x.dtype)
        last[key] = out.copy()
        return out

    return scan


def test_a_description_read_as_another_kind_stays_a_contract_where_reruns_come_out_right(
        budget):
    """Right on the same segments handed as offsets, wrong on the flags declared: the rerun
    of the flags, right by the memory the right answer left, refutes nothing; the verdict
    is the declaration, not a logic error that comes and goes."""
    t = Target("offsets_over_last", _offsets_over_the_last_output(),
               TargetSpec(dtypes=("int64",), segments="flags"))
    rep = check(t, properties=("segments",), budget=budget)
    assert rep.verdict.cause == Cause.CONTRACT, rep.rows()
    assert "declare --segments offsets" in rep.diagnosis and "some runs" not in rep.diagnosis
