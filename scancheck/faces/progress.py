"""Progress on long work: live bars on a terminal (rich), a plain line per finished step
otherwise, nothing at all when asked to be quiet.

One :class:`Progress` serves a whole command; each target (or sweep) gets a :class:`Task`
that knows its total, what is running now, and what finished with which status.  Tasks are
updated from the threads that wait on child processes.
"""

from __future__ import annotations

import sys
import threading
import time
from typing import Any, TextIO


class Task:
    """One line of progress: ``total`` steps, the ones running, the ones done."""

    def __init__(self, owner: Progress, name: str, total: int) -> None:
        self.owner, self.name, self.total = owner, name, total
        self.done = 0
        self.running: list[str] = []
        self.t0 = time.monotonic()
        self._id = owner._add(self)

    def plan(self, total: int) -> None:
        """How many steps there are, once known."""
        self.total = total
        self.owner._update(self)

    def start(self, what: str) -> None:
        with self.owner._lock:
            self.running.append(what)
        self.owner._update(self)

    def finish(self, what: str, status: str = "done") -> None:
        with self.owner._lock:
            if what in self.running:
                self.running.remove(what)
            self.done += 1
        self.owner._finished(self, what, status)

    def label(self) -> str:
        now = ", ".join(self.running[:3]) + (" ..." if len(self.running) > 3 else "")
        return f"{self.name}: {now}" if now else self.name


class Progress:
    """Live progress for a command (``quiet``: none; ``stream`` not a terminal: lines)."""

    def __init__(self, quiet: bool = False, stream: TextIO | None = None) -> None:
        self.stream = stream or sys.stderr
        self.quiet = quiet
        self._lock = threading.Lock()
        self._live: Any = None
        if not quiet and self.stream.isatty():
            try:
                from rich.console import Console
                from rich.progress import (
                    BarColumn,
                    MofNCompleteColumn,
                    SpinnerColumn,
                    TextColumn,
                    TimeElapsedColumn,
                )
                from rich.progress import Progress as Bars
            except ImportError:  # no rich: plain lines, as on a pipe
                return
            self._live = Bars(SpinnerColumn(), TextColumn("{task.description}"), BarColumn(),
                              MofNCompleteColumn(), TimeElapsedColumn(),
                              console=Console(file=self.stream), transient=False)

    def __enter__(self) -> Progress:
        if self._live is not None:
            self._live.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        if self._live is not None:
            self._live.stop()

    def task(self, name: str, total: int = 0) -> Task:
        return Task(self, name, total)

    def _add(self, task: Task) -> Any:
        if self._live is not None:
            return self._live.add_task(task.label(), total=task.total or None)
        return None

    def _update(self, task: Task) -> None:
        if self._live is not None:
            self._live.update(task._id, description=task.label(), total=task.total or None,
                              completed=task.done)

    def _finished(self, task: Task, what: str, status: str) -> None:
        if self._live is not None:
            self._update(task)
        elif not self.quiet:
            with self._lock:
                elapsed = time.monotonic() - task.t0
                total = f"/{task.total}" if task.total else ""
                self.stream.write(f"  {task.name}: {what} {status} "
                                  f"[{task.done}{total}, {elapsed:.0f} s]\n")
                self.stream.flush()
