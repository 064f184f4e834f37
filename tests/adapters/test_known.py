"""The known bugs: typed symptoms matched to a report's failures, the versions they affect,
the findings gallery generated from them, their reproducers run, and the pytest plugin's
strict xfail."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from dataclasses import dataclass, field, replace
from pathlib import Path
from types import SimpleNamespace

import pytest

import scancheck.adapters as adapters
from scancheck.adapters.known import KnownBug, Symptom, explain, lines, unexplained, unseen, with_gallery
from scancheck.engine.diagnosis import Cause, PropertyResult
from scancheck.faces.plugin.known_xfail import KnownUpstream, mark_known, raise_if_known

ROOT = Path(__file__).resolve().parents[2]
BUGS = adapters.known_bugs()
#: Reproducers that print no verdict line of their own (their entry's text is another's).
NO_VERDICT = {"jax-ml/ml_dtypes#401"}

BUG = KnownBug("up/stream#1", "https://example.invalid/1", "a scan is wrong", "numpy", ("numpy",),
               "1.0", None, ("numpy.cumsum",), (Symptom("probe monoids", Cause.LOGIC),), "open",
               "docs/findings/x.py")


@dataclass
class Report:
    target: str
    results: list = field(default_factory=list)


def failing(name="probe monoids", cause="LOGIC", status="fail", **case):
    return PropertyResult(name, status, "wrong", smallest_case=case or {"n": 9}, cause=cause)


def test_a_failure_with_the_bugs_symptom_is_explained_and_no_other():
    hit = failing()
    rep = Report("numpy.cumsum", [hit, failing("indices", "LOGIC")])
    assert explain(rep, [BUG]) == [(BUG, hit)]
    assert [r.name for r in unexplained(rep, [BUG])] == ["indices"]
    assert "known upstream: https://example.invalid/1" in lines(rep, [BUG])[0]
    # Another cause, another property, another target: not this bug.
    for other in (Report("numpy.cumsum", [failing(cause="FAULT")]),
                  Report("numpy.cumsum", [failing("rows")]),
                  Report("numpy.cumprod", [failing()])):
        assert explain(other, [BUG]) == []


def test_a_bug_explains_every_failure_its_symptoms_match_and_is_told_once():
    """One wrong result fails several properties: each is the bug's, none is new."""
    bug = replace(BUG, symptoms=(Symptom("probe monoids", Cause.LOGIC), Symptom("rows", Cause.LOGIC)))
    first, second = failing(), failing("rows")
    rep = Report("numpy.cumsum", [first, second, failing("indices")])
    assert [r.name for r in unexplained(rep, [bug])] == ["indices"]
    assert explain(rep, [bug]) == [(bug, first)] and len(lines(rep, [bug])) == 1
    assert [r.name for r in unexplained(rep, [replace(bug, fixed="1.1")])] == [
        "probe monoids", "rows", "indices"]  # a version it does not affect explains none


def test_case_values_narrow_a_symptom():
    bug = replace(BUG, symptoms=(Symptom("probe monoids", Cause.LOGIC, (("dtype", ("int64",)),)),))
    assert explain(Report("numpy.cumsum", [failing(n=3, dtype="int64")]), [bug])
    assert not explain(Report("numpy.cumsum", [failing(n=3, dtype="int32")]), [bug])


def test_a_compiled_torch_scan_faulting_in_a_narrow_integer_is_the_select_one_bug():
    """The fault's case names its dtype (the child's last case): an 8- or 16-bit one is the
    known Inductor bug; the same fault in int32, or a wrong value in int8, is not."""
    bug = next(b for b in BUGS if b.key == "pytorch/pytorch#175430")
    target = "torch.cumsum (CUDA, compiled)"
    fault = failing("integers exact", "FAULT", "fault", n=2, dtype="int8")
    assert explain(Report(target, [fault]), [bug]) == [(bug, fault)]
    assert explain(Report("torch.cummax (CUDA, compiled)",
                          [failing("indices", "FAULT", "fault", n=4, dtype="bool")]), [bug])
    for other in (failing("integers exact", "FAULT", "fault", n=2, dtype="int32"),
                  failing("integers exact", "LOGIC", n=2, dtype="int8")):
        assert explain(Report(target, [other]), [bug]) == []
    assert explain(Report("torch.cumsum (CUDA)", [fault]), [bug]) == []  # eager: not this bug
    # Fixed: 'integers exact' passes where 'indices' does not apply (a cumsum has no indices).
    passed = [PropertyResult("integers exact", "pass", ""), PropertyResult("indices", "skip", "")]
    assert unseen(Report(target, passed), [bug]) == [bug]
    assert unseen(Report(target, [PropertyResult("indices", "skip", "")]), [bug]) == []


def test_an_empty_batch_is_a_typed_fact_of_a_symptom():
    bug = replace(BUG, symptoms=(Symptom("probe monoids", Cause.LOGIC, empty=True),))
    assert explain(Report("numpy.cumsum", [failing(n=3, shape=[1, 2, 0, 3])]), [bug])
    assert not explain(Report("numpy.cumsum", [failing(n=3, shape=[1, 2, 1, 3])]), [bug])


def test_a_version_outside_the_range_is_not_explained():
    import numpy as np

    fixed = replace(BUG, fixed="1.1")  # every numpy here is past 1.1
    assert not fixed.affects(np.__version__) and fixed.affects("1.0.5")
    assert explain(Report("numpy.cumsum", [failing()]), [fixed]) == []


def test_a_version_older_than_any_seen_is_explained_and_named_but_not_called_fixed():
    """``since`` is the first version seen to have the bug: an older one failing alike is
    this bug, not a new finding, and says which version it is; passing there is not a fix."""
    import numpy as np

    later = replace(BUG, since="999.0")
    assert not later.affects(np.__version__) and later.unfixed(np.__version__)
    rep = Report("numpy.cumsum", [failing()])
    assert explain(rep, [later]) == [(later, rep.results[0])] and not unexplained(rep, [later])
    assert f"seen from numpy 999.0 on, {np.__version__} here" in lines(rep, [later])[0]
    assert "seen from" not in lines(rep, [BUG])[0]
    passed = Report("numpy.cumsum", [PropertyResult("probe monoids", "pass")])
    assert unseen(passed, [later]) == [] and lines(passed, [later]) == []


def test_a_known_bug_that_did_not_reproduce_says_fixed_in_this_version():
    import numpy as np

    rep = Report("numpy.cumsum", [PropertyResult("probe monoids", "pass")])
    assert unseen(rep, [BUG]) == [BUG]
    assert f"fixed in {np.__version__}?" in lines(rep, [BUG])[0]


def test_a_bug_that_did_not_show_on_the_cases_it_was_seen_on_says_so():
    from scancheck.targets.target import Witness

    seen = replace(BUG, witnesses=(Witness("probe monoids", 9, "int64", "min (uint32)", 0),))
    rep = Report("numpy.cumsum", [PropertyResult("probe monoids", "pass")])
    assert "on the 1 case it was seen on too" in lines(rep, [seen])[0]
    assert "seen on" not in lines(rep, [BUG])[0]


def test_every_bug_is_well_formed_and_its_reproducer_exists():
    names = set(adapters.names())
    for bug in BUGS:
        assert (ROOT / bug.reproducer).is_file(), bug.key
        assert set(bug.targets) <= names, bug.key
        assert bool(bug.targets) == bool(bug.symptoms), bug.key
        assert bug.link is None or bug.link.startswith("https://"), bug.key
        # Each witness is a case of a property the bug shows in, run by each of its targets.
        assert {w.prop for w in bug.witnesses} <= set(bug.props), bug.key
        for name in bug.targets if bug.witnesses else ():
            assert set(bug.witnesses) <= set(adapters.find(name).witnesses), (bug.key, name)
        assert not re.search(r"^\s*(import|from)\s+scancheck", (ROOT / bug.reproducer).read_text(),
                             re.M), f"{bug.reproducer} must run without scancheck"


def test_the_gallery_on_the_findings_page_is_the_registrys():
    page = (ROOT / "docs" / "findings.md").read_text()
    assert with_gallery(page, BUGS) == page, "python -m scancheck.adapters.gallery --write docs/findings.md"
    for bug in BUGS:
        assert bug.reproducer.removeprefix("docs/") in page


def _reproducer_says(bug: KnownBug) -> tuple[str, str]:
    """The verdict line of ``bug``'s reproducer, run in a process of its own (skipped where its
    library is not installed), and the installed version."""
    installed = bug.installed()
    if installed is None:
        pytest.skip(f"{bug.library} is not installed")
    done = subprocess.run([sys.executable, str(ROOT / bug.reproducer)], capture_output=True,
                          text=True, timeout=600, env={**os.environ, "PYTHONWARNINGS": "ignore"})
    assert done.returncode == 0, done.stderr[-2000:]
    last = done.stdout.strip().splitlines()[-1]
    assert re.fullmatch(r"still reproduces|fixed in \S+.*", last), last
    return last, installed


CPU = [b for b in BUGS if not b.gpu and b.key not in NO_VERDICT]


def _agrees(bug, last, installed):
    """Whether a reproducer's verdict line is the registry's: "still reproduces" on a version
    seen with the bug, "fixed in" past its fix, either on a version older than any seen."""
    if bug.older(installed) and bug.unfixed(installed):
        return True
    return (last == "still reproduces") == bug.affects(installed)


@pytest.mark.slow
@pytest.mark.parametrize("bug", CPU, ids=[b.key for b in CPU])
def test_each_cpu_reproducer_says_what_the_registry_expects(bug):
    """Run where its library is installed: "still reproduces" on a version the registry
    says it affects, "fixed in <version>" otherwise."""
    last, installed = _reproducer_says(bug)
    assert _agrees(bug, last, installed), (last, installed)


GPU = [pytest.param(b, id=b.key, marks=[pytest.mark.gpu, pytest.mark.findings])
       for b in BUGS if b.gpu and b.key not in NO_VERDICT]


@pytest.mark.parametrize("bug", GPU)
def test_each_gpu_reproducer_says_what_the_registry_expects(bug):
    """On a GPU where its library is installed: "still reproduces" on a version the registry
    says it affects, "fixed in <version>" otherwise."""
    last, installed = _reproducer_says(bug)
    assert _agrees(bug, last, installed), (last, installed)


def test_the_plugin_marks_an_affected_test_a_strict_xfail_that_only_the_bug_satisfies(monkeypatch):
    monkeypatch.setattr(adapters, "known_for", lambda name: [BUG])
    item = SimpleNamespace(callspec=SimpleNamespace(params={"scan_target_name": "numpy.cumsum",
                                                            "scan_check": "probe monoids"}),
                           markers=[])
    item.add_marker = item.markers.append
    other = SimpleNamespace(callspec=SimpleNamespace(params={"scan_target_name": "numpy.cumsum",
                                                             "scan_check": "rows"}), markers=[])
    other.add_marker = other.markers.append
    mark_known([item, other])
    (mark,) = item.markers
    assert mark.kwargs["strict"] and mark.kwargs["raises"] is KnownUpstream
    assert "https://example.invalid/1" in mark.kwargs["reason"] and not other.markers
    with pytest.raises(KnownUpstream, match="example.invalid"):
        raise_if_known(Report("numpy.cumsum", [failing()]))
    raise_if_known(Report("numpy.cumsum", [failing(cause="FAULT")]))  # not the bug: returns
    # On a version older than any seen with it, the bug may not be there yet: not strict.
    monkeypatch.setattr(adapters, "known_for", lambda name: [replace(BUG, since="999.0")])
    item.markers.clear()
    mark_known([item])
    assert item.markers[0].kwargs["strict"] is False


def test_scancheck_known_lists_every_bug_within_100_columns(capsys):
    from scancheck.faces.cli.main import main

    assert main(["known"]) == 0
    out = capsys.readouterr().out
    assert all(bug.key in out for bug in BUGS)
    assert all(bug.link in out for bug in BUGS if bug.link)
    # Within 100 columns but a whole path alone on its line (the checkout's folder decides
    # its length), kept whole so that it opens from any folder.
    assert all(len(ln) <= 100 or len(ln.split()) == 1 for ln in out.splitlines())
    from pathlib import Path

    import scancheck

    root = Path(scancheck.__file__).resolve().parents[1]
    text = " ".join(out.split())
    assert all(f"({root / bug.reproducer})" in text for bug in BUGS), text


def test_known_reproduce_gives_each_scripts_last_line_whole(capsys, monkeypatch):
    """The table's cell cuts a reproducer's verdict; its detail line gives it whole."""
    from scancheck.faces.cli.main import main

    (bug,) = [b for b in BUGS if b.key == "jax-ml/ml_dtypes#401"]
    monkeypatch.setattr(adapters, "known_bugs", lambda: [bug])
    assert main(["known", "--reproduce"]) == 0
    text = " ".join(capsys.readouterr().out.split())
    done = subprocess.run([sys.executable, str(ROOT / bug.reproducer)], capture_output=True,
                          text=True, timeout=600)
    last = done.stdout.strip().splitlines()[-1]
    assert f"its script printed: {last}" in text, text
