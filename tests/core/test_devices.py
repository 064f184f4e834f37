"""What this process may use: its cores, and the GPU's memory as the array libraries it
has imported tell it (scancheck.core.devices)."""

from __future__ import annotations

import os
import subprocess
import sys
from types import SimpleNamespace

import pytest

from scancheck.core import devices
from scancheck.core.devices import gpu_memory, usable_cores

GIB = 2**30


def test_usable_cores_are_this_processs_affinity(monkeypatch):
    assert usable_cores() == (len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity")
                              else os.cpu_count())
    monkeypatch.delattr(os, "sched_getaffinity", raising=False)
    monkeypatch.setattr(os, "cpu_count", lambda: None)  # unknown: one core, not none
    assert usable_cores() == 1


def test_the_gpus_memory_is_read_from_the_libraries_imported_and_theirs_is_this_process(
        monkeypatch):
    for name in ("cupy", "torch", "jax._src.xla_bridge"):
        monkeypatch.delitem(sys.modules, name, raising=False)
    monkeypatch.setattr(devices, "_smi_memory", lambda: None)
    monkeypatch.setattr(devices, "_smi_own", lambda: None)
    assert gpu_memory() is None  # no library here has a device to ask, nor nvidia-smi
    # No library has a CUDA context (making one ran out, say): nvidia-smi tells, none ours.
    monkeypatch.setattr(devices, "_smi_memory", lambda: (GIB, 80 * GIB))
    assert gpu_memory() == devices.GpuMemory(GIB, 80 * GIB, 0)
    pool = SimpleNamespace(total_bytes=lambda: 3 * GIB)
    monkeypatch.setitem(sys.modules, "cupy", SimpleNamespace(
        cuda=SimpleNamespace(runtime=SimpleNamespace(memGetInfo=lambda: (5 * GIB, 80 * GIB))),
        get_default_memory_pool=lambda: pool))
    cuda = SimpleNamespace(is_initialized=lambda: True, mem_get_info=lambda: (0, 0),
                           memory_reserved=lambda: 2 * GIB)
    monkeypatch.setitem(sys.modules, "torch", SimpleNamespace(cuda=cuda))
    mem = gpu_memory()
    assert (mem.free, mem.total, mem.own, mem.elsewhere) == (5 * GIB, 80 * GIB, 5 * GIB,
                                                             70 * GIB)
    assert mem.told().startswith("70.0 GiB of the GPU's 80.0 held elsewhere, 5.0 GiB free")
    # A library that cannot answer (CUDA not started in torch) leaves the others' reading.
    cuda.is_initialized = lambda: False
    assert gpu_memory().own == 3 * GIB
    # What the driver lists for this process (a numba or raw allocation, its contexts) is
    # its own too, where that is more than its libraries hold.
    monkeypatch.setattr(devices, "_smi_own", lambda: 9 * GIB)
    assert gpu_memory().own == 9 * GIB


def test_nvidia_smi_rows_name_this_process_by_its_id(monkeypatch):
    rows = [["123", "500"], [str(os.getpid()), "2048"], [str(os.getpid()), "[N/A]"]]
    monkeypatch.setattr(devices, "_smi", lambda *args: rows)
    assert devices._smi_own() == 2 * GIB
    monkeypatch.setattr(devices, "_smi", lambda *args: [["123", "500"]])
    assert devices._smi_own() is None
    monkeypatch.setattr(devices, "_smi", lambda *args: [["No running processes found"]])
    assert devices._smi_own() is None
    monkeypatch.setattr(devices, "_smi", lambda *args: [["1024", "81559"]])
    assert devices._smi_memory() == (GIB, 81559 * 2**20)
    monkeypatch.setattr(devices, "_smi", lambda *args: None)
    assert devices._smi_memory() is None


@pytest.mark.gpu
def test_asking_starts_no_jax_backend():
    """JAX's GPU client takes 75% of the GPU as it starts: a process that imported JAX and
    never ran it must not start it by asking."""
    pytest.importorskip("jax")
    code = ("import jax, sys; from scancheck.core.devices import gpu_memory; gpu_memory(); "
            "from jax._src import xla_bridge; sys.exit(1 if xla_bridge._backends else 0)")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]


@pytest.mark.gpu
def test_the_gpus_memory_counts_this_processs_arrays_as_its_own():
    """On the device: a GiB held by CuPy (and by torch, where installed) is this process's,
    not "elsewhere", whatever other work the GPU is doing."""
    import cupy as cp

    before = gpu_memory()
    held = cp.empty(GIB, dtype=cp.uint8)
    after = gpu_memory()
    # Other workers allocate and free meanwhile: only this process's share is certain.
    assert after.own - before.own >= GIB and after.total == before.total
    del held
    cp.get_default_memory_pool().free_all_blocks()
    try:
        import torch
    except ImportError:
        return
    before = gpu_memory()
    held = torch.empty(GIB, dtype=torch.uint8, device="cuda")
    assert gpu_memory().own - before.own >= GIB
    del held
    torch.cuda.empty_cache()
