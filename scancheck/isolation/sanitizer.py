"""compute-sanitizer runs of scancheck's kernels, each in its own process, and their parsing.

A kernel runs under ``compute-sanitizer --tool racecheck|synccheck|memcheck`` in a
child Python process (``python -m scancheck.isolation.sanitizer VARIANT ...``), so that a
fault, a hang or a corrupted CUDA context stays in the child.  The report counts
the hazards or errors the tool printed in its summary line.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import signal
import subprocess
import sys
from dataclasses import dataclass
from typing import Any

from ..engine.options import SANITIZER_TOOLS as TOOLS

_SUMMARY = re.compile(r"(?:RACECHECK|ERROR) SUMMARY: (\d+) (?:hazards?|errors?)")


@dataclass
class SanitizerReport:
    """What one compute-sanitizer tool found in one run."""

    tool: str
    target: str
    issues: int
    returncode: int
    timed_out: bool
    output: str

    @property
    def clean(self) -> bool:
        return self.issues == 0 and self.returncode == 0 and not self.timed_out

    def first_lines(self, k: int = 6) -> str:
        lines = [ln for ln in self.output.splitlines() if ln.startswith("=========")]
        return "\n".join(lines[:k])


#: Where :func:`find_sanitizer` looked, said where it found none.
NOT_FOUND = "compute-sanitizer is not on PATH nor under $CUDA_HOME/bin or /usr/local/cuda/bin"


def find_sanitizer() -> str | None:
    """Path of compute-sanitizer on PATH or under the CUDA toolkit, or None."""
    found = shutil.which("compute-sanitizer")
    if found:
        return found
    for root in (os.environ.get("CUDA_HOME", ""), "/usr/local/cuda"):
        candidate = os.path.join(root, "bin", "compute-sanitizer")
        if root and os.path.exists(candidate):
            return candidate
    return None


#: Reports that say the run could not watch the target, not what the target did.
_INCONCLUSIVE = (("out of memory", "the device was out of memory (other work on the GPU?)"),
                 ("Device not supported", "compute-sanitizer could not attach to the device"))


def is_report(line: str) -> bool:
    """Whether a line of a tool's output opens a report (not detail, the banner or a summary)."""
    return line.startswith("========= ") and not line.startswith("=========  ") and not any(
        k in line for k in ("COMPUTE-SANITIZER", "SUMMARY", "Target application"))


def inconclusive(output: str) -> str | None:
    """Why a run says nothing of the target, where every report it made is of that kind
    (an allocation the full device refused; a device the tool cannot attach to); None
    if any report is the target's own, or there is none."""
    found = [ln for ln in output.splitlines() if is_report(ln)]
    for words, why in _INCONCLUSIVE:
        if found and all(words in ln for ln in found):
            return why
    return None


def parse_summary(tool: str, output: str) -> int:
    """Issues counted in the tool's summary line; -1 if the output has none."""
    found = _SUMMARY.findall(output)
    return sum(int(k) for k in found) if found else -1


def run_command(tool: str, command: list[str], target: str, timeout: float = 300,
                env: dict[str, str] | None = None) -> SanitizerReport:
    """Run ``command`` (with ``env``, or this environment) under compute-sanitizer ``tool``
    in a child process."""
    if tool not in TOOLS:
        raise ValueError(f"tool={tool!r} is unknown; allowed: {', '.join(TOOLS)}")
    exe = find_sanitizer()
    if exe is None:
        raise FileNotFoundError(NOT_FOUND)
    # A host API call that fails is no kernel's memory error, and a target that cares raises
    # (a fault): numba-cuda probes the driver with cuGetProcAddress, and memcheck counted
    # each failed probe as an error of a correct scan (measured on an H100, 2026-11-24).
    argv = [exe, "--tool", tool, "--print-limit", "20", "--report-api-errors", "no"]
    if tool == "racecheck":
        argv += ["--racecheck-report", "hazard"]
    proc = subprocess.Popen(argv + command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                            text=True, start_new_session=True, env=env)
    try:
        output, _ = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)  # the tool and the process it watches
        output, _ = proc.communicate()
        return SanitizerReport(tool, target, -1, -1, True, output or "")
    return SanitizerReport(tool, target, parse_summary(tool, output), proc.returncode, False, output)


def sanitize_variant(
    tool: str, variant: str, n: int, block: int, dtype: str = "float32", op: str = "add",
    timeout: float = 300,
) -> SanitizerReport:
    """Run one scancheck kernel under ``tool`` in a child process and report what it found."""
    from .child import python_command

    cmd = [*python_command("scancheck.isolation.sanitizer"), variant, str(n), str(block), dtype, op]
    return run_command(tool, cmd, f"{variant} n={n} block={block} {dtype} {op}", timeout)


def _child(argv: list[str] | None = None) -> int:
    """Launch one kernel once (the process compute-sanitizer watches)."""
    parser = argparse.ArgumentParser(prog="python -m scancheck.isolation.sanitizer")
    parser.add_argument("variant")
    parser.add_argument("n", type=int)
    parser.add_argument("block", type=int)
    parser.add_argument("dtype", nargs="?", default="float32")
    parser.add_argument("op", nargs="?", default="add")
    args = parser.parse_args(argv)
    import cupy as cp

    from ..kernels.launch import scan

    scan(watched_input(args.n, args.dtype, args.op), args.variant, args.op, args.block)
    cp.cuda.Device().synchronize()
    return 0


def watched_input(n: int, dtype: str, op: str) -> Any:
    """The input the watched child scans: ``n`` elements of ``op`` in ``dtype``, the same on
    every run."""
    import numpy as np

    from ..core.operators import get_operator, interval_input

    oper = get_operator(op)
    if oper.elements == "intervals":
        return interval_input(n)
    return np.random.default_rng(0).integers(0, 10, oper.element_shape(n)).astype(dtype)


if __name__ == "__main__":
    sys.exit(_child())
