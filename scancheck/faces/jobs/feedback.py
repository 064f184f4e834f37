"""How fast scancheck gives feedback: the README's test command, the GPU suite, and one default
check of a CPU library scan and of a GPU kernel, each timed whole against its goal.

A benchmark, not a test: run it before and after a change that may slow the suite, and the
table shows what the change cost (tests and Hypothesis examples run, largest n reached,
slowest test), with the CPU seconds of each part next to its wall time: on a machine that
others share, the CPU time moves less than the wall time does.

    python -m scancheck.faces.jobs.feedback [--parts tests gpu-tests cpu-check gpu-check] [--json FILE]
"""

from __future__ import annotations

import argparse
import json
import os
import re
import resource
import subprocess
import sys
import tempfile
import time
from dataclasses import asdict, dataclass
from pathlib import Path

from ..tables import format_table

ROOT = Path(__file__).resolve().parents[3]
#: Wall seconds each part may take (issue goals: two CPU cores for the tests and the CPU
#: check, one H100 for the GPU parts).
GOALS = {"tests": 90.0, "gpu-tests": 60.0, "cpu-check": 30.0, "gpu-check": 45.0}
CPU_TARGET, GPU_TARGET = "numpy.cumsum", "kernel:decoupled_lookback"


@dataclass
class Timing:
    """One part's wall time against its goal, and what that time bought."""

    part: str
    command: str
    seconds: float
    goal: float
    ran: str  # tests passed/failed/skipped and examples, or the largest n and cases of a check
    slowest: str = ""
    ok: bool = True
    cpu: float = 0.0  # user + system seconds of the part's processes, children included

    def row(self) -> dict[str, object]:
        return {"part": self.part, "wall s": round(self.seconds, 1),
                "cpu s": round(self.cpu, 1), "goal s": self.goal,
                "within": "yes" if self.seconds <= self.goal and self.ok else "NO",
                "ran": self.ran, "slowest": self.slowest}


def _children_cpu() -> float:
    """User + system seconds of this process's finished children so far."""
    use = resource.getrusage(resource.RUSAGE_CHILDREN)
    return use.ru_utime + use.ru_stime


def counted(stdout: str) -> tuple[str, int]:
    """From the output of a pytest run with ``--hypothesis-show-statistics``: its outcome
    counts ("670 passed, 369 skipped") and the Hypothesis examples its tests ran, every
    phase's (generated, replayed and shrunk; passing, failing and invalid)."""
    lines = stdout.strip().splitlines()
    tail = lines[-1] if lines else ""
    counts = ", ".join(f"{n} {what}" for n, what in re.findall(
        r"(\d+) (passed|failed|skipped|errors?)", tail))
    examples = sum(int(a) + int(b) + int(c) for a, b, c in re.findall(
        r"- (\d+) passing, (\d+) failing, and (\d+) invalid test cases", stdout))
    return counts, examples


def _env() -> dict[str, str]:
    """This environment, with this checkout importable from any working directory."""
    return dict(os.environ, PYTHONPATH=os.pathsep.join(
        p for p in (str(ROOT), os.environ.get("PYTHONPATH", "")) if p))


def _pytest(part: str, args: list[str]) -> Timing:
    cmd = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--durations=1",
           "--hypothesis-show-statistics", *args]
    t0, cpu0 = time.monotonic(), _children_cpu()
    proc = subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT, env=_env())
    secs, cpu = time.monotonic() - t0, _children_cpu() - cpu0
    counts, examples = counted(proc.stdout)
    if not counts:
        counts = proc.stderr.strip()[-200:]
    slow = re.search(r"^([\d.]+)s (?:call|setup)\s+(\S+)", proc.stdout, re.M)
    profile = os.environ.get("SCANCHECK_HYPOTHESIS_PROFILE", "ci")
    return Timing(part, "pytest " + " ".join(args), secs, GOALS[part],
                  f"{counts}, {examples} examples ({profile} profile)",
                  f"{slow.group(2).split('::')[-1][:60]} {slow.group(1)} s" if slow else "",
                  proc.returncode in (0, 5) and "failed" not in counts, cpu)


def _check(part: str, target: str) -> Timing:
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "report.json"
        cmd = [sys.executable, "-m", "scancheck", "check", target, "--json", str(out)]
        t0, cpu0 = time.monotonic(), _children_cpu()
        proc = subprocess.run(cmd, capture_output=True, text=True, cwd=tmp, env=_env())
        secs, cpu = time.monotonic() - t0, _children_cpu() - cpu0
        if not out.exists():
            return Timing(part, f"scancheck check {target}", secs, GOALS[part],
                          f"no report: {proc.stderr.strip()[-160:]}", ok=False, cpu=cpu)
        rep = json.loads(out.read_text())[0]
    results = rep["results"]
    cases = sum(int(r["detail"].get("cases", 0)) for r in results)
    longest = sorted(results, key=lambda r: -r.get("seconds", 0.0))[:3]
    return Timing(part, f"scancheck check {target}", secs, GOALS[part],
                  f"largest n {rep['verdict']['largest n']:,}, {cases} cases, "
                  f"{sum(r['status'] != 'skip' for r in results)} checks",
                  ", ".join(f"{r['name']} {r.get('seconds', 0.0):.0f} s" for r in longest),
                  proc.returncode == 0, cpu)


def measure(parts: list[str]) -> list[Timing]:
    """Each part asked for, run whole in a child process and timed; GPU parts are skipped,
    saying so, where no GPU is present."""
    from ...core.devices import gpu_available

    gpu, why = gpu_available()
    out = []
    for part in parts:
        if part.startswith("gpu") and not gpu:
            out.append(Timing(part, "", 0.0, GOALS[part], f"not run: {why}"))
        elif part == "tests":
            out.append(_pytest(part, ["-n", "auto"]))
        elif part == "gpu-tests":
            out.append(_pytest(part, ["-m", "gpu and not huge", "-n", "auto"]))
        else:
            out.append(_check(part, CPU_TARGET if part == "cpu-check" else GPU_TARGET))
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m scancheck.faces.jobs.feedback", description=__doc__.split(
        "\n\n")[0])
    ap.add_argument("--parts", nargs="+", choices=list(GOALS), default=list(GOALS))
    ap.add_argument("--json", help="also write the timings to this file")
    args = ap.parse_args(argv)
    timings = measure(args.parts)
    print(format_table([t.row() for t in timings], title="how fast scancheck gives feedback"))
    if args.json:
        Path(args.json).write_text(json.dumps([asdict(t) for t in timings], indent=1))
    return 0 if all(t.ok for t in timings) else 1


if __name__ == "__main__":
    sys.exit(main())
