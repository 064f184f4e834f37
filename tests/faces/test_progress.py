"""Progress: a line per finished step off a terminal, live bars on one, nothing when quiet."""

from __future__ import annotations

import io
from dataclasses import replace

from scancheck.faces.progress import Progress
from scancheck.isolation.parent import check_isolated


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_plain_lines_off_a_terminal_and_none_when_quiet():
    out = io.StringIO()
    with Progress(stream=out) as progress:
        task = progress.task("numpy.cumsum", 2)
        task.start("rows")
        task.finish("rows", "pass")
    assert out.getvalue().startswith("  numpy.cumsum: rows pass [1/2, ")
    quiet = io.StringIO()
    with Progress(quiet=True, stream=quiet) as progress:
        progress.task("x", 1).finish("a")
    assert quiet.getvalue() == ""


def test_live_bars_on_a_terminal():
    term = _Terminal()
    with Progress(stream=term) as progress:
        task = progress.task("kernel:chained", 3)
        task.start("integers exact")
        task.finish("integers exact", "pass")
    assert "kernel:chained" in term.getvalue() and "1/3" in term.getvalue()


def test_a_check_reports_every_step_it_runs(budget):
    out = io.StringIO()
    with Progress(stream=out) as progress:
        task = progress.task("numpy.cumsum")
        rep = check_isolated("numpy.cumsum", properties=("integers exact", "rows"),
                             budget=replace(budget, max_n=4096), progress=task)
    assert rep.passed and task.done == task.total == 2 and not task.running
    lines = out.getvalue().splitlines()
    assert any("integers exact pass" in ln for ln in lines) and any("rows pass" in ln for ln in lines)
