"""Which GPUs and cores this process may use, read without initialising CUDA here."""

from __future__ import annotations

import functools
import os
import subprocess


@functools.cache
def visible_gpus() -> tuple[str, ...]:
    """The GPU ids CUDA_VISIBLE_DEVICES allows (all that ``nvidia-smi -L`` lists where it is
    unset): what child processes may be pinned to, one each, round-robin."""
    listed = os.environ.get("CUDA_VISIBLE_DEVICES")
    if listed is not None:
        return tuple(d.strip() for d in listed.split(",") if d.strip() and d.strip() != "-1")
    try:
        out = subprocess.run(["nvidia-smi", "-L"], capture_output=True, text=True, timeout=20)
    except (OSError, subprocess.TimeoutExpired):
        return ()
    return tuple(str(i) for i, ln in enumerate(out.stdout.splitlines()) if ln.startswith("GPU "))


@functools.cache
def gpu_available() -> tuple[bool, str]:
    """Whether kernels can run here, and if not, why (asked once per process: every target
    of ``builtin_targets`` wants to know)."""
    try:
        import cupy
    except ImportError:
        return False, "cupy is not installed"
    try:
        if cupy.cuda.runtime.getDeviceCount() < 1:
            return False, "no CUDA device is visible"
    except Exception as exc:  # any CUDA error here means there is no usable GPU
        return False, f"no usable CUDA device ({exc})"
    return True, cupy.cuda.runtime.getDeviceProperties(0)["name"].decode()


def usable_cores() -> int:
    """The CPU cores this process may run on (its affinity where the OS tells it), at least 1."""
    if hasattr(os, "sched_getaffinity"):
        return max(1, len(os.sched_getaffinity(0)))
    return os.cpu_count() or 1
