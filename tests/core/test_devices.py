"""What this process may use: its cores (scancheck.core.devices)."""

from __future__ import annotations

import os

from scancheck.core.devices import usable_cores


def test_usable_cores_are_this_processs_affinity(monkeypatch):
    assert usable_cores() == (len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity")
                              else os.cpu_count())
    monkeypatch.delattr(os, "sched_getaffinity", raising=False)
    monkeypatch.setattr(os, "cpu_count", lambda: None)  # unknown: one core, not none
    assert usable_cores() == 1
