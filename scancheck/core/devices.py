"""Which GPUs and cores this process may use, read without initialising CUDA here."""

from __future__ import annotations

import contextlib
import functools
import os
import subprocess
import sys
from dataclasses import dataclass


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


@dataclass(frozen=True)
class GpuMemory:
    """The current CUDA device's memory, in bytes: free, in all, and what this process's
    array libraries hold (their pools and live arrays; not their CUDA contexts)."""

    free: int
    total: int
    own: int

    @property
    def elsewhere(self) -> int:
        """What neither is free nor this process's libraries hold: other processes', and
        this process's CUDA contexts (a few hundred MiB each)."""
        return max(0, self.total - self.free - self.own)

    def told(self) -> str:
        gib = 2.0**30
        return (f"{self.elsewhere / gib:.1f} GiB of the GPU's {self.total / gib:.1f} held "
                f"elsewhere, {self.free / gib:.1f} GiB free, {self.own / gib:.1f} GiB held by "
                f"this process's array libraries")


def gpu_memory() -> GpuMemory | None:
    """The current device's memory as the array libraries this process has imported already
    (CuPy, torch, JAX) report it, else as nvidia-smi does; what this process holds as the
    larger of its libraries' sum and nvidia-smi's figure for it; None where nothing can
    tell.  No library is imported, and no JAX backend started, to ask (CuPy makes its
    context where it has none)."""
    free_total: tuple[int, int] | None = None
    own = 0
    cupy = sys.modules.get("cupy")
    if cupy is not None:
        with contextlib.suppress(Exception):
            free_total = tuple(cupy.cuda.runtime.memGetInfo())  # type: ignore[assignment]
            own += int(cupy.get_default_memory_pool().total_bytes())
    torch = sys.modules.get("torch")
    if torch is not None:
        with contextlib.suppress(Exception):
            if torch.cuda.is_initialized():
                free_total = free_total or tuple(torch.cuda.mem_get_info())
                own += int(torch.cuda.memory_reserved())
    bridge = sys.modules.get("jax._src.xla_bridge")
    # Asked only where JAX has started its backends: asking would start them, and its GPU
    # client takes 75% of the GPU as it starts.
    if bridge is not None and getattr(bridge, "_backends", None):
        with contextlib.suppress(Exception):
            for device in sys.modules["jax"].local_devices():
                if device.platform == "gpu":
                    stats = device.memory_stats() or {}
                    # A preallocating client holds its whole pool, whatever is in use.
                    own += max((int(stats.get(k, 0)) for k in ("pool_bytes", "bytes_reserved",
                                                               "bytes_in_use")), default=0)
    if free_total is None:  # no library has a CUDA context (making one ran out, say)
        free_total = _smi_memory()
    if free_total is None:
        return None
    free, total = free_total
    # All this process holds, its contexts and other allocators' memory too, where the
    # driver lists it (a container's own process ids may not be the ones it lists).
    return GpuMemory(int(free), int(total), max(own, _smi_own() or 0))


def _smi(*args: str) -> list[list[str]] | None:
    """The CSV rows nvidia-smi prints for ``args`` (no header, no units); None where it
    cannot be asked."""
    try:
        out = subprocess.run(["nvidia-smi", *args, "--format=csv,noheader,nounits"],
                             capture_output=True, text=True, timeout=20)
    except (OSError, subprocess.TimeoutExpired):
        return None
    if out.returncode:
        return None
    return [[v.strip() for v in ln.split(",")] for ln in out.stdout.splitlines() if ln.strip()]


def _smi_memory() -> tuple[int, int] | None:
    """(free, total) bytes of the first visible GPU as nvidia-smi reads them, with no CUDA
    context of this process's; None where it cannot."""
    visible = os.environ.get("CUDA_VISIBLE_DEVICES", "0").split(",")[0].strip() or "0"
    rows = _smi("-i", visible, "--query-gpu=memory.free,memory.total")
    try:
        free, total = (int(v) * 2**20 for v in rows[0])  # type: ignore[index]  # MiB
    except (TypeError, IndexError, ValueError):
        return None
    return free, total


def _smi_own() -> int | None:
    """The bytes of GPU memory nvidia-smi lists for this process, on every GPU; None where
    it lists none."""
    rows = _smi("--query-compute-apps=pid,used_memory") or []
    used = [int(row[1]) * 2**20 for row in rows
            if len(row) >= 2 and row[0] == str(os.getpid()) and row[1].isdigit()]
    return sum(used) if used else None
