"""fla-core's chunk cumsum targets: their host side (shapes, cu_seqlens, bfloat16, the local
kind's carries) checked on the CPU around a plain torch stand-in for fla's kernels, which
is also broken on purpose; the real kernels where fla-core and a GPU are (marked ``gpu``)."""

from __future__ import annotations

import importlib.util
from dataclasses import replace

import numpy as np
import pytest

from scancheck.adapters import builtin_targets, fla
from scancheck.adapters.fla import add_carries, fla_rows, fla_shape
from scancheck.engine.cases import Budget
from scancheck.engine.conformance import check_property
from scancheck.faces.jobs.gpusuite import COMPILED_TARGETS, compiled_property

pytestmark = pytest.mark.skipif(importlib.util.find_spec("torch") is None,
                                reason="torch is not installed")


def _bounds(t, cu):
    return [0, t] if cu is None else cu.tolist()


def _scan(x, reverse):
    import torch

    return torch.flip(torch.cumsum(torch.flip(x, [0]), 0), [0]) if reverse else torch.cumsum(x, 0)


def fake_global(g, reverse=False, cu_seqlens=None, carry_across=False):
    """What fla documents: float32 sums along T per sequence (``carry_across``: the bug of
    a kernel that ignores cu_seqlens)."""
    s = g[0].float()
    out = s.clone()
    bounds = _bounds(s.shape[0], None if carry_across else cu_seqlens)
    for bos, eos in zip(bounds[:-1], bounds[1:]):
        if eos > bos:
            out[bos:eos] = _scan(s[bos:eos], reverse)
    return out[None]


def fake_local(g, chunk, reverse=False, cu_seqlens=None, no_restart=False):
    """Each chunk of each sequence scanned alone (``no_restart``: chunks not restarted)."""
    s = g[0].float()
    out = s.clone()
    bounds = _bounds(s.shape[0], cu_seqlens)
    for bos, eos in zip(bounds[:-1], bounds[1:]):
        step = (eos - bos) or 1 if no_restart else chunk
        for lo in range(bos, eos, step):
            out[lo:min(lo + step, eos)] = _scan(s[lo:min(lo + step, eos)], reverse)
    return out[None]


def _targets(monkeypatch, glob=fake_global, local=fake_local):
    monkeypatch.setattr(fla, "_fla", lambda: (glob, local))
    return {r.name: r.target(here=False) for r in fla_rows(device="cpu")}


def test_fla_shapes_are_along_t():
    assert fla_shape((5,)) == (1, 5, 1)
    assert fla_shape((5, 3)) == (1, 5, 3)
    assert fla_shape((5, 2, 3)) == (1, 5, 2, 3)
    assert fla_shape((5, 2, 3, 4)) == (1, 5, 6, 4)


def test_the_carries_make_chunk_local_scans_whole():
    rng = np.random.default_rng(0)
    x = rng.integers(-9, 9, (300, 2)).astype(np.float32)
    bounds = np.array([0, 0, 64, 65, 200, 300])
    for reverse in (False, True):
        import torch

        local = fake_local(torch.from_numpy(x)[None], 64, reverse, torch.tensor(bounds))[0]
        whole = fake_global(torch.from_numpy(x)[None], reverse, torch.tensor(bounds))[0]
        got = add_carries(local.numpy(), bounds, 64, reverse)
        np.testing.assert_array_equal(got, whole.numpy())  # integers: exact in any order


@pytest.mark.parametrize("name", [r.name for r in fla_rows()])
def test_every_fla_target_conforms_around_a_correct_stand_in(monkeypatch, name):
    """float32, float16 and bfloat16 in, float32 out, forward and reverse, with cu_seqlens
    (empty sequences and chunk seams drawn) and without."""
    target = _targets(monkeypatch)[name]
    result = check_property(target, compiled_property(target.spec), Budget(3, max_n=2048))
    assert result.status == "pass", (result.diagnosis, result.smallest_case)


@pytest.mark.parametrize("name, broken", [
    ("fla chunk_global_cumsum (BT 32, cu_seqlens)",
     dict(glob=lambda g, reverse=False, cu_seqlens=None: fake_global(g, reverse, cu_seqlens, True))),
    ("fla chunk_local_cumsum (chunk 64, carried, cu_seqlens, reverse)",
     dict(local=lambda g, c, reverse=False, cu_seqlens=None: fake_local(g, c, reverse, cu_seqlens,
                                                                       True))),
])
def test_a_broken_stand_in_is_caught_through_the_adapter(monkeypatch, name, broken):
    """The adapter hides no bug: a kernel that carries across cu_seqlens, or one whose chunks
    do not restart (the carries then count twice), fails."""
    target = _targets(monkeypatch, **broken)[name]
    result = check_property(target, "segments", Budget(3, max_n=2048))
    assert result.status == "fail", result.diagnosis


@pytest.fixture(scope="session")
def fla_warmed():
    """A worker's first calls of fla's kernels, done once: 6-16 s in a GPU suite worker on an
    H100 with every cache warm, where each fla test after it took 0.5-1.3 s."""
    from scancheck.engine.warmup import warm

    warm(fla_rows()[0].name, 64, threads=1)


@pytest.mark.gpu
@pytest.mark.parametrize("name", [r.name for r in fla_rows()])
def test_fla_chunk_cumsums_conform_on_the_gpu(name, budget, fla_warmed):
    """At the profile's budget: the ladder of sizes to 2**14 is walked whole whatever it is."""
    target = builtin_targets()[name]
    if target.unavailable:
        pytest.skip(f"{name}: {target.unavailable}")
    result = check_property(target, compiled_property(target.spec),
                            replace(budget, max_n=COMPILED_TARGETS["fla "]))
    assert result.status == "pass", (result.diagnosis, result.smallest_case)


def test_without_fla_the_targets_say_why():
    t = builtin_targets()["fla chunk_global_cumsum (BT 32, cu_seqlens)"]
    if importlib.util.find_spec("fla") is None:
        assert t.unavailable and "not installed" in t.unavailable
    assert replace(t.spec).segments == "offsets:int32" and t.spec.promote


def test_each_fla_kernel_is_pinned_to_one_named_configuration():
    """Where fla-core and Triton import (no GPU needed), every kernel the targets call is
    left one autotuning configuration, the named one."""
    for needs in ("fla", "triton", "einops"):
        if importlib.util.find_spec(needs) is None:
            pytest.skip(f"{needs} is not installed")
    from fla.ops.utils import cumsum as module

    fla._fla()
    for name, kwargs in fla.PINNED.items():
        tuner = getattr(module, name)
        while not hasattr(tuner, "configs"):
            tuner = tuner.fn
        (config,) = tuner.configs
        assert config.num_warps == 4 and all(config.kwargs[k] == v for k, v in kwargs.items())


@pytest.mark.slow
def test_the_real_fla_kernels_conform_in_tritons_interpreter():
    """fla's own kernels (pinned, :data:`~scancheck.engine.fla.PINNED`), run by
    Triton's interpreter on CPU tensors in a child process (TRITON_INTERPRET is read when
    Triton is imported): every target with cu_seqlens (empty sequences, chunk seams),
    forward and reverse, the global kind and the carried local one (without cu_seqlens the
    same kernels run; the CPU stand-in tests check those adapters);
    float32 and float16 (the interpreter of Triton 3.8 reads bfloat16 subnormals wrong:
    4.59e-39 loaded and converted to float32 gives 6.61e-39, in a two-line kernel too)."""
    import json
    import os
    import subprocess
    import sys

    for needs in ("fla", "triton", "einops"):
        if importlib.util.find_spec(needs) is None:
            pytest.skip(f"{needs} is not installed")
    code = (
        "import json\n"
        "from scancheck.engine.cases import Budget\n"
        "from scancheck.engine.conformance import check_property\n"
        "from dataclasses import replace\n"
        "from scancheck.adapters.fla import fla_rows\n"
        "out = {}\n"
        "for t in (r.target(here=False) for r in fla_rows(device='cpu')):\n"
        "    if not t.spec.segments:\n"
        "        continue\n"
        "    t = replace(t, spec=replace(t.spec, dtypes=('float32', 'float16')))\n"
        "    r = check_property(t, 'segments', Budget(1, max_n=130))\n"
        "    out[t.name] = r.status if r.status == 'pass' else f'{r.status}: {r.diagnosis}'\n"
        "print(json.dumps(out))\n")
    done = subprocess.run([sys.executable, "-c", code], env=dict(os.environ, TRITON_INTERPRET="1"),
                          capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, done.stderr[-3000:]
    verdicts = json.loads(done.stdout.strip().splitlines()[-1])
    assert verdicts == {r.name: "pass" for r in fla_rows() if r.spec.segments}, verdicts
