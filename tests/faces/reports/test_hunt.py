"""The hunt: a part's table of every API and mode, a new finding's standalone reproducer
confirmed by running it, and the parts merged."""

from __future__ import annotations

import json
import re
import sys
from dataclasses import asdict, replace

import numpy as np
import pytest

from scancheck.adapters import row
from scancheck.engine.cases import Budget
from scancheck.engine.conformance import check
from scancheck.faces.cli.main import main
from scancheck.faces.reports.hunt import (
    CANNOT,
    CONFORMS,
    NOT_CHECKED,
    Found,
    hunt,
    merge,
    run_reproducer,
    table,
    write_reproducer,
)


def _wrong_at_3(x, axis):
    out = np.cumsum(x, axis=axis, dtype=x.dtype)
    if x.shape[axis] > 3:
        out[(slice(None),) * (axis % x.ndim) + (3,)] += 1
    return out


@pytest.fixture
def broken():
    """numpy.cumsum's row with a function wrong at output 3, and its report."""
    r = row("numpy.cumsum")
    target = replace(r.target(), fn=_wrong_at_3)
    target = replace(target, spec=replace(target.spec, dtypes=("int64",)))
    rep = check(target, ("integers exact",), budget=Budget(3, max_n=64))
    assert not rep.passed
    return r, rep


def test_a_reproducer_that_gives_the_wrong_output_the_check_saw_says_it_reproduces(
        broken, tmp_path, monkeypatch):
    r, rep = broken
    # The plain call is what the adapter calls: here made as wrong as the function.
    call = ("", "np.cumsum(x, axis=AXIS, dtype=x.dtype) + (np.arange(x.shape[0]) == 3)")
    monkeypatch.setattr("scancheck.faces.reports.markdown.reproducer_call",
                        lambda name: call if name == r.name else None)
    assert rep.verdict.smallest_case["index"] == 3
    path = write_reproducer(rep, r, tmp_path)
    text = open(path).read()
    assert "import scancheck" not in text and "from scancheck" not in text
    assert run_reproducer(tmp_path / path) == "still reproduces"


def test_a_reproducer_whose_plain_call_is_right_says_it_does_not_reproduce(broken, tmp_path):
    """The negative control: the check's function was wrong, the library's call is not."""
    r, rep = broken
    assert run_reproducer(tmp_path / write_reproducer(rep, r, tmp_path)) == "does not reproduce"


def test_a_hunt_cut_short_lists_the_targets_it_did_not_finish_as_not_checked(tmp_path,
                                                                             monkeypatch):
    """What the part's JSON says while a target's check runs (as a run killed then leaves
    it), and once every check has ended."""
    from scancheck.isolation.parent import UsageError

    seen = []

    def stopped(name, options):
        seen.append({d["target"]: d["verdict"]
                     for d in json.loads((tmp_path / "hunt-cpu.json").read_text())})
        raise UsageError("stopped here")

    monkeypatch.setattr("scancheck.isolation.parent.check_isolated", stopped)
    hunt("cpu", tmp_path, jobs=1, budget=1, only=r"^numpy\.cumsum$", log=lambda *a, **k: None)
    assert seen == [{"numpy.cumsum": NOT_CHECKED}]
    after = json.loads((tmp_path / "hunt-cpu.json").read_text())
    assert [(d["target"], d["verdict"]) for d in after] == [("numpy.cumsum", CANNOT)]


def test_a_hunt_starts_the_compiled_targets_first_then_the_jitted(tmp_path, monkeypatch):
    """The checks that compile are handed out first, so that none of them starts last."""
    from scancheck.adapters.rows import Row
    from scancheck.isolation.parent import UsageError

    started = []

    def record(name, options):
        started.append(name)
        raise UsageError("recorded")

    monkeypatch.setattr(Row, "unavailable", lambda self: None)
    monkeypatch.setattr("scancheck.isolation.parent.check_isolated", record)
    hunt("all", tmp_path, jobs=1, budget=1, only=r"^(torch\.cumsum \(CPU|jax\.numpy\.cumsum)",
         log=lambda *a, **k: None)
    kinds = ["compiled" if "compiled" in n else "jit" if "jit" in n else "other" for n in started]
    assert set(kinds) == {"compiled", "jit", "other"}
    assert kinds == sorted(kinds, key=["compiled", "jit", "other"].index), started


def test_a_hunts_budget_bounds_each_targets_whole_check(tmp_path, monkeypatch):
    """--budget is the seconds a target's whole check may take, shared among its properties
    and bounding their ladders, as `scancheck check --budget` has it; not each property's."""
    from scancheck.isolation.parent import UsageError

    given = []

    def record(name, options):
        given.append(options)
        raise UsageError("recorded")

    monkeypatch.setattr("scancheck.isolation.parent.check_isolated", record)
    hunt("cpu", tmp_path, jobs=1, budget=7, only=r"^numpy\.cumsum$", log=lambda *a, **k: None)
    (options,) = given
    assert options.seconds == 7 and options.budget.seconds == 7 and options.budget.bounded


def test_the_parts_merge_a_target_run_in_one_over_not_checked_or_cannot_run_in_another(
        tmp_path):
    cpu = [Found("a", "lib.a", "-", "cpu", CANNOT, "no GPU"), Found("b", "lib.b", "-", "cpu", CONFORMS),
           Found("c", "lib.c", "-", "cpu", CANNOT, "no GPU")]
    gpu = [Found("a", "lib.a", "-", "gpu", CONFORMS, largest_n=16),
           Found("b", "lib.b", "-", "gpu", NOT_CHECKED), Found("c", "lib.c", "-", "gpu", NOT_CHECKED)]
    for name, lines in (("cpu", cpu), ("gpu", gpu)):
        (tmp_path / f"{name}.json").write_text(json.dumps([asdict(f) for f in lines]))
    merged = {f.target: f for f in merge([tmp_path / "cpu.json", tmp_path / "gpu.json"])}
    assert merged["a"].verdict == CONFORMS and merged["a"].part == "gpu"
    assert merged["b"].verdict == CONFORMS and merged["b"].part == "cpu"
    assert merged["c"].verdict == NOT_CHECKED and merged["c"].part == "gpu"
    assert table(list(merged.values())).startswith("3 targets: 2 conforms, 1 not checked.")


def test_scancheck_hunt_writes_the_table_of_its_targets(tmp_path, capsys):
    page = tmp_path / "api-modes.md"
    assert main(["hunt", "--part", "cpu", "--only", r"^numpy\.cumsum$|^cupy\.cumsum \(CUB\)$",
                 "--jobs", "1", "--budget", "2", "--out", str(tmp_path / "out"),
                 "--write", str(page)]) == 0
    text = page.read_text()
    # Two seconds shared among six properties: a correct scan conforms, or its ladder ends
    # first (a loaded machine); never a failure.
    assert re.search(r"^\| numpy\.cumsum \| - \| numpy\.cumsum \| \*\*(conforms|no failure "
                     r"found)\*\* \|", text, re.M), text
    again = main(["hunt", "--merge", str(tmp_path / "out" / "hunt-cpu.json"), "--write", str(page)])
    assert again == 0 and page.read_text() == text  # the table replaced, not added twice
    found = json.loads((tmp_path / "out" / "hunt-cpu.json").read_text())
    assert [f["target"] for f in found] == ["numpy.cumsum"]  # the GPU one is the GPU part's
    import numpy as np

    assert found[0]["versions"] == f"numpy {np.__version__}"  # what was checked, as installed
    assert f"| cpu | numpy {np.__version__} |" in text


def test_the_parts_split_the_library_targets_and_jax_runs_in_both():
    from scancheck.faces.reports.hunt import _rows

    cpu, gpu = {r.name for r in _rows("cpu", None)}, {r.name for r in _rows("gpu", None)}
    every = {r.name for r in _rows("all", None)}
    assert cpu | gpu == every and "numpy.cumsum" in cpu - gpu and "cupy.cumsum (CUB)" in gpu - cpu
    assert "jax.lax.cumsum (jit, reverse)" in cpu & gpu  # JAX follows its default device
    assert not any(n.startswith(("scancheck:", "model:")) for n in every)


def test_a_target_run_in_two_parts_keeps_both_lines(tmp_path):
    for part in ("cpu", "gpu"):
        (tmp_path / f"{part}.json").write_text(json.dumps([asdict(
            Found("jax.lax.cumsum", "jax.lax.cumsum", "-", part, CONFORMS))]))
    merged = merge([tmp_path / "cpu.json", tmp_path / "gpu.json"])
    assert [f.part for f in merged] == ["cpu", "gpu"]


def test_the_gpu_suites_check_part_leaves_the_further_modes_to_the_hunt(monkeypatch, tmp_path):
    from scancheck.faces.jobs import gpusuite

    seen = {}

    def fake_run(cmd, log, env):
        seen["targets"] = cmd[cmd.index("check") + 1:cmd.index("--jobs")]
        return 0, "summary\n", 0.0

    monkeypatch.setattr(gpusuite, "_run", fake_run)
    gpusuite._check_targets(sys.executable, tmp_path, {}, [], "1")
    checked = set(seen["targets"])
    assert "numpy.cumsum" in checked and "torch.cumsum (CPU, compiled)" not in checked


def test_a_new_finding_without_a_reproducer_says_why(broken, tmp_path, monkeypatch):
    """A target that is no single library call (fla's, which add carries on the host) gets
    no reproducer: its line says so, not nothing."""
    from scancheck.faces.reports.hunt import NEW, NO_CALL

    r, rep = broken
    no_call = replace(r, call=None)
    monkeypatch.setattr("scancheck.faces.reports.hunt._rows", lambda part, only: [no_call])
    monkeypatch.setattr("scancheck.isolation.parent.check_isolated", lambda name, options: rep)
    (line,) = hunt("cpu", tmp_path, jobs=1, budget=1, log=lambda *a, **k: None)
    assert line.verdict == NEW and not line.reproducer and line.reproduced == NO_CALL
    assert NO_CALL in table([line])


def test_a_hunts_max_n_is_the_largest_n_each_targets_check_searches(tmp_path, monkeypatch):
    """--max-n, as the advice of a check whose budget ran out names it, caps every target's
    search; without it each searches to its device's default."""
    from scancheck.isolation.parent import UsageError

    given = []

    def record(name, options):
        given.append(options)
        raise UsageError("recorded")

    monkeypatch.setattr("scancheck.isolation.parent.check_isolated", record)
    argv = ["hunt", "--part", "cpu", "--only", r"^numpy\.cumsum$", "--jobs", "1",
            "--out", str(tmp_path)]
    main([*argv, "--max-n", "4097"])
    main(argv)
    assert [o.budget.max_n for o in given] == [4097, None]


@pytest.mark.parametrize("held, told", [
    ('{"a": 1}', "holds no list of findings"), ("[1, 2]", "holds no list of findings"),
    ("not json", "Expecting value"), ('[{"target": "t"}]', "missing 4 required"),
])
def test_a_merge_of_a_file_that_is_no_parts_findings_is_refused_naming_it(held, told, tmp_path,
                                                                           capsys):
    bad = tmp_path / "bad.json"
    bad.write_text(held)
    assert main(["hunt", "--merge", str(bad)]) == 2
    err = capsys.readouterr().err
    assert f"argument --merge: {bad} is no part's findings" in err and told in err, err
    assert err.count("\n") == 1, err


def test_a_hunts_out_folder_that_cannot_be_made_is_refused_before_any_check(tmp_path, capsys,
                                                                             monkeypatch):
    monkeypatch.setattr("scancheck.faces.reports.hunt.hunt", lambda *a, **k: pytest.fail("ran"))
    afile = tmp_path / "afile"
    afile.write_text("")
    for out, told in ((afile, f"argument --out: {afile} is a file; give a folder"),
                      (afile / "sub", f"argument --out: {afile / 'sub'} cannot be written")):
        assert main(["hunt", "--part", "cpu", "--only", r"^numpy\.cumsum$", "--out",
                     str(out)]) == 2
        err = capsys.readouterr().err
        assert told in err and err.count("\n") == 1, err


def test_a_hunt_that_can_run_none_of_its_targets_here_exits_2(tmp_path, capsys, monkeypatch):
    missing = replace(row("numpy.cumsum"), needs=("no_such_library",))
    monkeypatch.setattr("scancheck.faces.reports.hunt._rows", lambda part, only: [missing])
    status = main(["hunt", "--part", "cpu", "--out", str(tmp_path / "out"), "--budget", "1"])
    out, err = capsys.readouterr()
    assert status == 2 and "no target of part 'cpu' can run here (of 1 tried)" in err, err


def test_a_hunt_line_of_a_check_that_ran_no_property_is_unfinished_not_conforms(tmp_path,
                                                                               monkeypatch):
    from scancheck.engine.diagnosis import PropertyResult
    from scancheck.engine.report import ConformanceReport
    from scancheck.faces.reports.hunt import UNFINISHED

    skipped = ConformanceReport("numpy.cumsum", {}, [
        PropertyResult("rows", "skip", "the target scans 1-D arrays")])
    monkeypatch.setattr("scancheck.isolation.parent.check_isolated", lambda *a, **k: skipped)
    (line,) = hunt("cpu", tmp_path, jobs=1, budget=1, only=r"^numpy\.cumsum$",
                   log=lambda *a, **k: None)
    assert line.verdict == UNFINISHED and "no property applies (rows: " in line.detail
