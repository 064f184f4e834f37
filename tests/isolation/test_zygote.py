"""Children of isolated checks forked from a zygote (scancheck.isolation.zygote): the same child
as one started afresh, in the parent's environment of the moment, and a fallback."""

from __future__ import annotations

import os
import signal
from dataclasses import replace

from scancheck.engine.cases import Budget
from scancheck.engine.options import Plan
from scancheck.isolation import zygote as zygote_module
from scancheck.isolation.child import Order
from scancheck.isolation.parent import check_isolated, child_command
from scancheck.isolation.watch import watch
from scancheck.isolation.zygote import zygote

_PARENT_FILE = (
    "import os\nimport numpy as np\n\n"
    "with open({seen!r}, 'a') as fh:\n"
    "    fh.write(f'{{os.getppid()}} {{os.getcwd()}} {{os.environ.get(\"MARK\")}}\\n')\n\n"
    "def scan(x):\n"
    "    return np.cumsum(x, dtype=x.dtype)\n")


def _target(tmp_path, monkeypatch):
    seen = tmp_path / "seen.txt"
    (tmp_path / "forkscan.py").write_text(_PARENT_FILE.format(seen=str(seen)))
    monkeypatch.setenv("PYTHONPATH", f"{tmp_path}{os.pathsep}{os.environ.get('PYTHONPATH', '')}")
    return seen


def test_a_cpu_targets_children_are_forked_from_the_zygote_with_the_parents_state(
        tmp_path, monkeypatch, budget):
    """The child's parent is the zygote, its environment and working directory the parent's
    when the child started (set after the zygote had), and the check's verdict a check's."""
    seen = _target(tmp_path, monkeypatch)
    z = zygote()
    assert z is not None
    work = tmp_path / "work"
    work.mkdir()
    monkeypatch.chdir(work)
    monkeypatch.setenv("MARK", "late")
    rep = check_isolated("forkscan:scan", properties=("integers exact",),
                         budget=replace(budget, max_n=64), workers=1)
    assert rep.passed, rep.rows()
    ppid, cwd, mark = seen.read_text().split()[:3]
    assert int(ppid) == z._proc.pid and cwd == str(work) and mark == "late"


def test_without_the_zygote_children_start_afresh(tmp_path, monkeypatch, budget):
    seen = _target(tmp_path, monkeypatch)
    monkeypatch.setenv("SCANCHECK_NO_ZYGOTE", "1")
    assert zygote() is None
    rep = check_isolated("forkscan:scan", properties=("integers exact",),
                         budget=replace(budget, max_n=64), workers=1)
    assert rep.passed, rep.rows()
    assert int(seen.read_text().split()[0]) == os.getpid()  # started by this process


def test_a_dead_zygote_is_replaced_and_a_forked_childs_signal_is_its_exit_code(tmp_path):
    z = zygote()
    assert z is not None
    os.kill(z._proc.pid, signal.SIGKILL)
    z._proc.wait()
    again = zygote()
    assert again is not None and again is not z and again.alive
    # A child killed by a signal reads as Popen says it: the negative signal number.
    order = Order("scancheck.testing:crashing_scan",
                  plan=Plan(("integers exact",), Budget(max_n=64)))
    events, status, err = watch(child_command(order), 30, fork=True)
    assert status.startswith("died (killed by SIG"), (status, err)


def test_a_zygote_that_cannot_start_leaves_children_to_start_afresh(monkeypatch):
    def broken() -> None:
        raise OSError("no zygote here")

    monkeypatch.setattr(zygote_module, "Zygote", broken)
    monkeypatch.setattr(zygote_module, "_zygote", None)
    assert zygote() is None
    events, status, _ = watch(child_command(Order("numpy.cumsum", resolve=True)), 60,
                              fork=True)
    assert status == "ok" and any(ev["event"] == "target" for ev in events)
