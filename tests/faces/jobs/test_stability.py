"""``check --repeat``: each item checked N times, what the runs agree on counted, and the
exit status 1 exactly where a control was missed, an item got two primary diagnoses or a
target failed."""

from __future__ import annotations

import json

import pytest

from scancheck.controls import CONTROLS
from scancheck.engine.cases import Budget
from scancheck.engine.options import CheckOptions
from scancheck.faces.cli.main import main
from scancheck.faces.jobs.stability import (
    Item,
    Run,
    measure,
    primary_of,
    select,
    table,
)


def _control(name: str):
    (control,) = [c for c in CONTROLS if c.name == name]
    return control


def _scripted(outcomes: dict[str, list[tuple[bool | None, str, int | None]]]):
    """A check that answers each item's runs from ``outcomes`` (caught, primary, n), in
    the order of its runs, without any child process: a run with a primary diagnosis failed
    (exit status 1), one without conformed, unless its n is -1 (the budget ran out: 3) or
    -2 (no property applied: 2)."""
    def check(item: Item, run: int, options: CheckOptions) -> Run:
        caught, primary, n = outcomes[item.name][run]
        status = {-1: 3, -2: 2}.get(n, 1 if primary else 0)
        word = ("DOES NOT CONFORM", "conforms", "slow", "nothing checked")[
            (1, 0, 3, 2).index(status)]
        return Run(item.name, run, caught, word, primary, primary, n, True,
                   None if n is None else {"n": n}, 0.0, status=status)
    return check


def test_each_item_is_checked_repeat_times_and_each_run_logged(tmp_path):
    log = tmp_path / "runs.jsonl"
    items = [Item("a", control=CONTROLS[0]), Item("t")]
    check = _scripted({"a": [(True, "logic error", 65)] * 3,
                       "t": [(None, "logic error", 9), (None, "logic error", 7),
                             (None, "logic error", 9)]})
    found = measure(items, 3, CheckOptions(), jobs=2, log=str(log), said=None, check=check)
    assert [s.name for s in found] == ["a", "t"]
    assert [len(s.runs) for s in found] == [3, 3]
    assert found[0].caught == 3 and found[0].stable
    assert found[1].sizes == [9, 7, 9] and found[1].stable  # a target: one primary is enough
    assert measure([Item("/a/long/path/scans.py:fn")], 1, CheckOptions(), said=None, check=_scripted(
        {"/a/long/path/scans.py:fn": [(None, "logic error", 9)]}))[0].row()["item"] == \
        "scans.py:fn"
    lines = [json.loads(line) for line in log.read_text().splitlines()]
    assert sorted((r["name"], r["run"]) for r in lines) == sorted(
        (n, k) for n in "at" for k in range(3))
    assert table(found, 3)[1] == 1  # the target failed each run
    row = found[0].row()
    assert row["caught"] == "3 of 3" and row["smallest n"] == "65 every run"


def test_the_caught_column_is_shown_only_where_a_control_was_checked():
    targets = measure([Item("t")], 2, CheckOptions(), said=None,
                      check=_scripted({"t": [(None, "logic error", 3)] * 2}))
    both = measure([Item("a", control=CONTROLS[0]), Item("t")], 1, CheckOptions(), said=None,
                   check=_scripted({"a": [(True, "logic error", 65)],
                                    "t": [(None, "logic error", 3)]}))
    assert "caught" not in table(targets, 2)[0] and "logic error" in table(targets, 2)[0]
    assert "caught" in table(both, 1)[0] and "1 of 1" in table(both, 1)[0]


@pytest.mark.parametrize("outcomes", [
    [(True, "logic error", 65), (False, "contract differs --nans skip", 65)],  # missed once
    [(True, "logic error", 65), (True, "precision lost", 65)],  # two primary diagnoses
])
def test_a_control_missed_or_told_two_ways_is_unstable_and_fails_the_command(outcomes):
    found = measure([Item("a", control=CONTROLS[0])], 2, CheckOptions(), said=None,
                    check=_scripted({"a": outcomes}))
    assert not found[0].stable
    text, status = table(found, 2)
    assert status == 1 and "0 of 1 stable; not: a" in text


def test_a_target_with_two_primary_diagnoses_is_unstable():
    found = measure([Item("t")], 2, CheckOptions(), said=None, check=_scripted(
        {"t": [(None, "contract differs --nans skip", 5831), (None, "logic error", 5063)]}))
    assert found[0].primaries == ["contract differs --nans skip", "logic error"]
    assert table(found, 2)[1] == 1


def test_the_table_shows_every_primary_diagnosis_whole():
    """Two diagnoses past the column's width are told apart in the table, each whole."""
    long = ["precision lost as if accumulated in float16 --accumulate float16",
            "precision lost as if accumulated in bfloat16 --accumulate bfloat16"]
    found = measure([Item("t")], 2, CheckOptions(), said=None, check=_scripted(
        {"t": [(None, long[0], 9), (None, long[1], 9)]}))
    lines = table(found, 2)[0].splitlines()
    head = next(k for k, line in enumerate(lines) if "primary diagnoses" in line)
    start = lines[head].index("primary diagnoses")
    width = len(lines[head + 1][start:].split("  ")[0])  # the column's dashes
    column = " ".join(line[start:start + width] for line in lines[head + 2:])
    assert all(d in " ".join(column.split()) for d in long)
    assert max(map(len, lines)) <= 100


@pytest.mark.parametrize("runs, status", [
    ([(None, "logic error", 9)] * 2, 1),  # stable, and wrong every run: fails as check does
    ([(None, "", None)] * 2, 0),
    ([(None, "", None), (None, "", -1)], 3),  # once out of budget with no failure found
    ([(None, "", -1), (None, "", -2)], 2),  # nothing checked outranks out of budget
])
def test_repeated_targets_exit_as_check_does(runs, status):
    found = measure([Item("t")], 2, CheckOptions(), said=None, check=_scripted({"t": runs}))
    assert found[0].stable
    assert table(found, 2)[1] == status


def test_the_primary_diagnosis_names_the_contracts_flag():
    """Two contracts are two diagnoses: the flag of the one named is part of the key."""
    rep, caught = _control("checked sum wrapping").check(
        isolated=False, properties=("integers exact",), budget=Budget(1.0, max_n=64))
    assert caught
    assert primary_of(rep) == "contract differs --overflow wrap"
    rep, _ = _control("wrong first output of an exclusive scan").check(
        isolated=False, properties=("integers exact",), budget=Budget(1.0, max_n=64))
    assert primary_of(rep) == "logic error"


def test_select_names_what_matches_nothing_and_leaves_gpu_controls_out():
    with pytest.raises(ValueError, match="--only.*'no such control'"):
        select(["no such control", "off-by-one"], gpu=False)
    assert [c.name for c in select(["off-by-one"], gpu=False)] == [
        "off-by-one at block boundaries"]
    assert not any(c.gpu for c in select(None, gpu=False))
    assert select(["missing barrier"], gpu=False) == []


def test_each_run_is_told_as_it_ends_a_conforming_one_by_its_verdict():
    said: list[str] = []
    measure([Item("t")], 2, CheckOptions(), said=said.append,
            check=_scripted({"t": [(None, "", None), (None, "logic error", 9)]}))
    assert sorted(line.split(": ", 1)[1] for line in said) == ["conforms", "logic error"]


def test_repeat_must_be_a_positive_integer():
    with pytest.raises(ValueError, match="repeat=0"):
        measure([Item("t")], 0, CheckOptions())


def test_check_repeat_of_two_controls_at_once(tmp_path, capsys):
    """The command end to end, on controls every property catches at n = 0 or 1."""
    log = tmp_path / "runs.jsonl"
    status = main(["check", "--controls", "--only", "wrong first output", "--only",
                   "empty input refused, wrong", "--repeat", "2", "--jobs", "2",
                   "--budget", "2", "--json", str(log)])
    out = capsys.readouterr().out
    assert status == 0, out
    assert "2 of 2 stable" in out
    runs = [json.loads(line) for line in log.read_text().splitlines()]
    assert len(runs) == 4 and all(r["caught"] for r in runs)
    assert {r["n"] for r in runs if r["name"].startswith("wrong first")} == {1}


def test_only_without_controls_is_a_usage_error(capsys):
    assert main(["check", "--only", "off-by-one", "some.module:fn"]) == 2
    assert "--only" in capsys.readouterr().err


def test_runs_with_no_failure_have_no_smallest_n():
    found = measure([Item("s", control=CONTROLS[0])], 2, CheckOptions(), said=None,
                    check=_scripted({"s": [(True, "slow", None)] * 2}))
    assert found[0].stable and found[0].row()["smallest n"] == "-"
