"""The adapters' registry: every built-in name resolves through its own family alone, every
name users typed before the tables moved still does, and the mode products generate every
row they name."""

from __future__ import annotations

import itertools
import subprocess
import sys
from pathlib import Path

import pytest

import scancheck.adapters as adapters
from scancheck.adapters import FAMILIES, cupy_scans, jax_scans, torch_scans, triton_scans
from scancheck.adapters.rows import modes
from scancheck.targets.resolve import resolve

BEFORE = Path(__file__).with_name("names_before_adapters.txt").read_text().split("\n")[:-1]


def test_every_row_belongs_to_the_family_its_name_points_to():
    for family in FAMILIES:
        for row in adapters.family_module(family).ROWS:
            assert adapters.families_of(row.name)[0] == family, row.name


@pytest.mark.parametrize("name", BEFORE)
def test_every_name_of_before_the_move_resolves_to_itself(name):
    target = resolve(name)
    assert target.name == name and target.locator == f"builtin:{name}"


def test_an_old_name_kept_as_an_alias_checks_what_it_did():
    old, new = resolve("cupy.cumprod"), resolve("cupy.cumprod (CUB)")
    assert old.spec == new.spec and old.fn is new.fn


def test_resolving_a_builtin_loads_its_own_family_alone():
    """``numpy.cumsum`` loads the NumPy table: no other family, no kernel registry."""
    code = ("import sys\nfrom scancheck.targets.resolve import resolve\n"
            "resolve('numpy.cumsum')\n"
            "print(sorted(m for m in sys.modules if m.startswith(('scancheck.adapters.', "
            "'scancheck.kernels'))))\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout
    assert eval(out) == ["scancheck.adapters.known", "scancheck.adapters.numpy_stdlib",
                         "scancheck.adapters.rows"]


def test_a_mistyped_name_is_answered_from_every_family():
    with pytest.raises(ValueError, match="did you mean 'jax.lax.cumsum"):
        resolve("jax.lax.cumsun")


@pytest.mark.parametrize("module, axes, count", [
    (torch_scans, torch_scans.CUM_MODES, 40),
    (cupy_scans, cupy_scans.MODES, 8),
    (jax_scans, jax_scans.LAX_MODES, 20),
    (jax_scans, jax_scans.JNP_MODES, 8),
    (triton_scans, triton_scans.MODES, 8),
])
def test_a_mode_product_makes_one_row_per_mode(module, axes, count):
    assert len(list(modes(axes))) == count == len(list(itertools.product(*axes.values())))
    made = {r.mode for r in module.ROWS if r.mode}
    for mode in modes(axes):
        shown = tuple((k, v if isinstance(v, str) else str(v).lower()) for k, v in mode.items())
        assert any(set(shown) <= set(m) for m in made), mode


def test_torchs_associative_scan_modes_are_every_mode_torch_has():
    """combine_mode x eager/compiled (static or dynamic shapes) x device x direction: 24
    rows; 'pointwise' on CPU tensors listed as torch refuses it."""
    rows = [r for r in torch_scans.ROWS if r.api == "torch associative_scan"]
    assert len(rows) == 24 == len({r.name for r in rows})
    refused = {r.name for r in rows if r.refused}
    assert refused == {r.name for r in rows if "pointwise" in r.name and "CPU" in r.name}
    assert all("CUDA" in r.refused or "XPU" in r.refused for r in rows if r.refused)
    assert resolve("torch associative_scan (pointwise, CPU)").unavailable


def test_the_deterministic_cuda_cumsum_declares_what_torch_documents():
    """torch.use_deterministic_algorithms(True) makes CUDA cumsum deterministic (torch's
    documentation); the other CUDA scans stay declared otherwise."""
    det = {r.name: r.spec.deterministic for r in torch_scans.ROWS if r.gpu and r.api.startswith("torch.cum")}
    assert det["torch.cumsum (CUDA, deterministic)"] and not det["torch.cumsum (CUDA)"]
    assert not det["torch.cumprod (CUDA, deterministic)"]


def test_the_triton_kernels_scan_as_numpy_does_under_tritons_interpreter():
    """The Triton rows' kernels, run by Triton's interpreter on CPU tensors: every api,
    operator, direction and dtype against NumPy's accumulate."""
    pytest.importorskip("triton")
    pytest.importorskip("torch")
    code = """
import numpy as np, torch
from scancheck.adapters.triton_kernels import scan
rng = np.random.default_rng(0)
bad = []
for dt in (torch.float32, torch.float64, torch.float16, torch.int32, torch.int64):
    for n in (0, 1, 17, 100):
        x = torch.from_numpy(rng.integers(-5, 6, n)).to(dt)
        for api, op in (("tl.cumsum", "add"), ("tl.associative_scan", "add"),
                        ("tl.associative_scan", "max"), ("tl.associative_scan", "min")):
            for rev in (False, True):
                f = {"add": np.add, "max": np.maximum, "min": np.minimum}[op]
                xn = x.numpy().astype(np.float64)
                want = f.accumulate(xn[::-1])[::-1] if rev else f.accumulate(xn)
                if not np.array_equal(scan(x, api, op, rev).numpy().astype(np.float64), want):
                    bad.append((str(dt), n, api, op, rev))
print(bad)
"""
    import os

    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          env=dict(os.environ, TRITON_INTERPRET="1"), timeout=600)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip().splitlines()[-1] == "[]"


def test_a_row_that_follows_its_librarys_device_takes_the_spec_that_holds_there(monkeypatch):
    """JAX's running max and min keep subnormals off the CPU backend: their spec says so
    where JAX runs elsewhere, the CPU's flush where it runs on the CPU, and a row that
    cannot run here keeps its table's spec without importing the library."""
    from types import SimpleNamespace

    from scancheck.adapters import rows

    row = next(r for r in jax_scans.ROWS if r.name == "jax.lax.cummin (jit)")
    assert row.on_device is not None and row.spec.subnormals == "flush:float32,bfloat16"
    for backend, rule in (("gpu", "keep"), ("cpu", "flush:float32,bfloat16"),
                          ("tpu", "flush:float32,bfloat16")):
        monkeypatch.setattr(jax_scans, "load_jax",
                            lambda b=backend: SimpleNamespace(default_backend=lambda: b))
        assert row.on_device(row.spec).subnormals == rule
    # Resolved to be checked, it takes the device's spec; listed, the table's (no import).
    monkeypatch.setattr(rows, "not_installed", lambda mod: None)
    monkeypatch.setattr(jax_scans, "load_jax", lambda: SimpleNamespace(default_backend=lambda: "gpu"))
    assert adapters.find(row.name).spec.subnormals == "keep"
    assert adapters.builtin_targets()[row.name].spec.subnormals == "flush:float32,bfloat16"
    asked = []
    monkeypatch.setattr(rows, "not_installed", lambda mod: f"{mod} is not installed")
    monkeypatch.setattr(jax_scans, "load_jax", lambda: asked.append(1))
    assert adapters.find(row.name).unavailable and asked == []  # not asked where it cannot run
    # A backend that cannot start here: the table's spec, and the check's calls say why.
    monkeypatch.setattr(rows, "not_installed", lambda mod: None)

    def no_backend():
        raise RuntimeError("Unable to initialize backend 'cuda'")

    monkeypatch.setattr(jax_scans, "load_jax", no_backend)
    assert adapters.find(row.name).spec == row.spec
    assert all(r.on_device is None for r in jax_scans.ROWS
               if not r.name.startswith(("jax.lax.cummax", "jax.lax.cummin")))
