"""Which GPUs this process may use, read without initialising CUDA here."""

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
