"""compute-sanitizer runs: the summary parser, bad tools, and a hung run cut short.

The kernels themselves run under the real tool in tests/test_kernels.py (on a GPU);
here a stand-in ``compute-sanitizer`` on PATH lets CI check the process handling.
"""

from __future__ import annotations

import os
import time

import pytest

from scancheck.isolation.sanitizer import inconclusive, parse_summary, run_command


@pytest.mark.parametrize(
    "tool, output, issues",
    [
        ("racecheck", "========= RACECHECK SUMMARY: 20 hazards displayed (20 errors, 0 warnings)", 20),
        ("synccheck", "========= ERROR SUMMARY: 0 errors", 0),
        ("memcheck", "========= ERROR SUMMARY: 1 error", 1),
        ("racecheck", "========= Error: No attachable process found.", -1),
    ],
)
def test_summary_lines_are_counted_and_a_missing_one_is_minus_one(tool, output, issues):
    assert parse_summary(tool, output) == issues


def test_an_unknown_tool_is_refused_naming_the_allowed_ones():
    with pytest.raises(ValueError, match="tool='leakcheck' is unknown; allowed: racecheck"):
        run_command("leakcheck", ["true"], "t")


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


def test_a_hung_run_times_out_and_takes_the_watched_process_with_it(tmp_path, monkeypatch):
    tool = tmp_path / "compute-sanitizer"
    pidfile = tmp_path / "watched.pid"
    # A stand-in that starts the "watched" process and never returns, like a tool stuck on it.
    tool.write_text(f"#!/bin/sh\necho started\nsleep 300 &\necho $! > {pidfile}\nwait\n")
    tool.chmod(0o755)
    monkeypatch.setenv("PATH", f"{tmp_path}{os.pathsep}{os.environ['PATH']}")
    t0 = time.monotonic()
    report = run_command("synccheck", ["python", "-c", "pass"], "stand-in", timeout=2)
    assert report.timed_out and not report.clean and report.issues == -1
    assert "started" in report.output
    assert time.monotonic() - t0 < 30
    watched = int(pidfile.read_text())
    deadline = time.monotonic() + 10
    while _alive(watched) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not _alive(watched), "the process under the tool outlived the timeout"


_OOM = ("========= Program hit cudaErrorMemoryAllocation (error 2) due to \"out of memory\" on "
        "CUDA API call to cudaMalloc.\n=========     Saved host backtrace up to driver entry point")


def test_a_run_that_could_not_watch_the_target_is_inconclusive_not_a_verdict():
    """Seen on an H100 with other checks filling the device: memcheck counted the refused
    allocations as errors, and synccheck said 'Device not supported'.  Only a run whose
    every report is of that kind is inconclusive."""
    banner = "========= COMPUTE-SANITIZER\n"
    assert "out of memory" in inconclusive(banner + _OOM + "\n========= ERROR SUMMARY: 2 errors")
    assert "could not attach" in inconclusive(banner + "========= Error: Device not supported.")
    real = "========= Invalid __global__ read of size 4 bytes\n=========     at scan+0x1c0"
    assert inconclusive(banner + real + "\n" + _OOM) is None
    assert inconclusive(banner + "========= ERROR SUMMARY: 0 errors") is None
