"""One root cause: the ranking, what the primary cause explains, and what stands beside it."""

from __future__ import annotations

import json
from dataclasses import asdict

from scancheck.engine.diagnosis import Cause, PropertyResult, diagnose


def _fail(name, cause, n=10, independent=False, status="fail", text="wrong"):
    return PropertyResult(name, status, text, {"n": n}, cause=cause.name if cause is not None else "",
                          independent=independent)


def test_nothing_failing_is_no_diagnosis():
    d = diagnose([PropertyResult("integers exact", "pass"), PropertyResult("x", "skip")])
    assert d.cause is None and d.line == ""


def test_causes_are_ranked_fault_race_logic_precision_specials_nondeterminism_overflow():
    assert list(Cause) == sorted(Cause)
    order = [Cause.FAULT, Cause.RACE, Cause.LOGIC, Cause.PRECISION, Cause.SPECIALS,
             Cause.NONDETERMINISM, Cause.INDEX_OVERFLOW, Cause.INPUT_WRITTEN]
    for better, worse in zip(order, order[1:]):
        d = diagnose([_fail("b", worse, n=1), _fail("a", better, n=100)])
        assert d.cause == better, (better, worse)


def test_one_bug_one_diagnosis_the_rest_same_cause_or_explained():
    """An exclusive scan wrong at n = 1: every property fails there, all from one logic error."""
    results = [_fail("integers exact", Cause.LOGIC, 1), _fail("floats within bound", Cause.LOGIC, 1),
               _fail("nan and inf", Cause.SPECIALS, 2), _fail("past 2**31", Cause.INDEX_OVERFLOW, 2**31)]
    d = diagnose(results)
    assert d.cause == Cause.LOGIC and d.source == "integers exact"
    assert d.same_cause == ["floats within bound"]
    assert d.explained == ["nan and inf", "past 2**31"] and d.also == []
    assert d.line.startswith("logic error: wrong (smallest case n=1)")


def test_a_failure_with_its_own_evidence_stands_beside_the_primary():
    d = diagnose([_fail("integers exact", Cause.LOGIC, 65),
                  _fail("nan and inf", Cause.SPECIALS, 2, independent=True, text="NaN dropped")])
    assert d.cause == Cause.LOGIC and d.explained == []
    assert d.also == ["NaN/inf semantics broken in 'nan and inf': NaN dropped (smallest case n=2)"]
    assert "; also NaN/inf semantics broken" in d.line


def test_index_overflow_only_where_the_logic_holds_below():
    alone = diagnose([_fail("past 2**32", Cause.INDEX_OVERFLOW, 2**32 + 1)])
    assert alone.cause == Cause.INDEX_OVERFLOW
    with_precision = diagnose([_fail("certified exact", Cause.PRECISION, 513),
                               _fail("past 2**32", Cause.INDEX_OVERFLOW, 2**32 + 1)])
    assert with_precision.also and "index overflow" in with_precision.also[0]
    with_logic = diagnose([_fail("integers exact", Cause.LOGIC, 65),
                           _fail("past 2**32", Cause.INDEX_OVERFLOW, 2**32 + 1)])
    assert with_logic.explained == ["past 2**32"] and not with_logic.also


def test_a_race_explains_every_wrong_answer():
    d = diagnose([_fail("sanitizer: racecheck", Cause.RACE, 257),
                  _fail("integers exact", Cause.LOGIC, 300),
                  _fail("deterministic", Cause.NONDETERMINISM, 512, independent=True)])
    assert d.cause == Cause.RACE and d.explained == ["integers exact", "deterministic"]


def test_a_fault_does_not_explain_wrong_answers_from_runs_that_did_not_fault():
    d = diagnose([_fail("past 2**31", None, 2**31 + 17, status="fault", text="illegal address"),
                  _fail("integers exact", Cause.LOGIC, 65),
                  _fail("past 2**32", None, 2**32 + 17, status="hang", text="no answer")])
    assert d.cause == Cause.FAULT and d.source == "past 2**31"
    assert d.line.startswith("fault in 'past 2**31': illegal address")
    assert d.same_cause == ["past 2**32"] and d.also[0].startswith("logic error in 'integers exact'")


def test_a_write_into_the_input_stands_beside_other_causes_and_a_race_explains_it():
    """Every answer is judged on the input as it was: a write explains no other failure,
    and only a race (or a fault in another run) keeps it from standing on its own."""
    written = _fail("nan and inf", Cause.INPUT_WRITTEN, 1, independent=True,
                    text="x[0] was 1.0, is 0.0 after the call")
    alone = diagnose([written])
    assert alone.line == ("writes into its input: x[0] was 1.0, is 0.0 after the call "
                          "(smallest case n=1)")
    beside = diagnose([_fail("integers exact", Cause.LOGIC, 65), written])
    assert beside.cause == Cause.LOGIC and beside.also == [
        "writes into its input in 'nan and inf': x[0] was 1.0, is 0.0 after the call "
        "(smallest case n=1)"]
    raced = diagnose([_fail("sanitizer: racecheck", Cause.RACE, 257), written])
    assert raced.explained == ["nan and inf"] and not raced.also


def test_wrong_answers_beside_a_memcheck_finding_are_explained_by_it():
    """An out-of-bounds read returns whatever lies past the array: its wrong answers are the
    memory error's, not a second cause (found on the H100: the control 'out-of-bounds read in
    the last tile' read garbage once its input became a copy of exact size)."""
    results = [PropertyResult("sanitizer: memcheck", "fail", "memory error", {"n": 1},
                              cause="FAULT"),
               PropertyResult("integers exact", "fail", "differs", {"n": 300}, cause="LOGIC")]
    d = diagnose(results)
    assert d.cause.name == "FAULT" and not d.also and d.explained == ["integers exact"]


def test_each_cause_is_listed_once_with_the_properties_it_explains_folded_under_it():
    """A hang at 2**31 beside an exclusive scan wrong at output 0: seven properties fail with
    the one logic error, which is one 'also', not seven."""
    props = ["integers exact", "certified exact", "floats within bound", "nan and inf",
             "rows", "recurrence", "deterministic"]
    d = diagnose([_fail("past 2**31", None, 2**31 + 17, status="hang", text="no answer"),
                  *(_fail(p, Cause.LOGIC, 1, text="output 0 differs") for p in props)])
    assert d.cause == Cause.FAULT and len(d.findings) == 2
    assert d.also == ["logic error in 'integers exact' and 6 others: output 0 differs "
                      "(smallest case n=1)"]
    assert d.findings[1].properties == props
    assert d.findings[1].folded() == ("logic error: output 0 differs (smallest case n=1) -- "
                                      "explains: " + ", ".join(props))


def test_an_empty_input_refused_is_a_finding_of_its_own_that_explains_nothing_else():
    d = diagnose([_fail("integers exact", Cause.LOGIC, 0, text="raised on an empty input"),
                  _fail("floats within bound", Cause.LOGIC, 0, text="raised on an empty input"),
                  _fail("certified exact", Cause.PRECISION, 513, text="carry short")])
    assert [(f.cause, f.properties) for f in d.findings] == [
        (Cause.LOGIC, ["integers exact", "floats within bound"]),
        (Cause.PRECISION, ["certified exact"])]
    assert d.explained == [] and "also precision lost in 'certified exact'" in d.line


def test_out_of_memory_explains_nothing_and_nothing_explains_it():
    memory = _fail("deterministic", Cause.RESOURCE, 5000, text="raised MemoryError")
    alone = diagnose([memory])
    assert alone.line == "out of memory: raised MemoryError (smallest case n=5000)"
    beside = diagnose([memory, _fail("certified exact", Cause.PRECISION, 513)])
    assert [f.cause for f in beside.findings] == [Cause.PRECISION, Cause.RESOURCE]
    under_race = diagnose([_fail("sanitizer: racecheck", Cause.RACE, 257), memory])
    assert under_race.also and under_race.explained == []


def test_failures_that_moved_a_search_are_findings_and_come_back_from_json():
    refused = _fail("integers exact", Cause.LOGIC, 0, text="raised on an empty input")
    main = PropertyResult("integers exact", "fail", "differs", {"n": 100}, cause="LOGIC",
                          more=[refused])
    back = PropertyResult(**json.loads(json.dumps(asdict(main))))
    assert back == main and isinstance(back.more[0], PropertyResult)
    assert [f.smallest_case["n"] for f in diagnose([back]).findings] == [0, 100]
