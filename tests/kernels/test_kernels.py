"""The variant registry, the kernel sources, and the kernels themselves on a GPU.

CPU tests check the registry and compile every instantiation with nvcc (so a CUDA
syntax error fails CI without a GPU).  Tests marked ``gpu`` run the kernels: bit for
bit against their models, the interval proof, rounding within bound, compute-sanitizer,
and launches refused with a clear error.
"""

from __future__ import annotations

import shutil

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from scancheck.core.cuda import LaunchError, expand_source
from scancheck.core.operators import OPERATORS, get_operator, interval_expected, interval_input
from scancheck.engine.strategies import DISTRIBUTIONS, elements_for, launches
from scancheck.kernels.registry import VARIANTS, get_variant, instantiations
from scancheck.oracle.bounds import Verdict, classify
from scancheck.oracle.logsumexp import judge_logsumexp
from scancheck.oracle.products import judge_products
from scancheck.testing import assert_same_bits, nvcc_errors, nvcc_errors_each

CORRECT = [name for name, v in VARIANTS.items() if not v.racy]
WITH_ADD = [name for name in CORRECT if "add" in VARIANTS[name].operators]
WITH_INTERVAL = [name for name, v in VARIANTS.items() if "interval" in v.operators]
GRID = [name for name, v in VARIANTS.items() if v.scope == "grid"]
# One Hypothesis test per (variant, operator) and per (variant, float dtype): each pair gets
# the profile's whole example budget and its own database entry, and a failure's test id
# names the operator or dtype that broke.
CORRECT_OPS = [(name, op) for name in CORRECT for op in VARIANTS[name].operators]
WITH_ADD_FLOATS = [(name, dt) for name in WITH_ADD for dt in ("float32", "float64")
                   if dt in VARIANTS[name].dtypes]


# -- the registry, on the CPU ---------------------------------------------------------


def test_every_row_names_an_existing_source_with_its_entries():
    for v in VARIANTS.values():
        src = expand_source(v.source)
        for entry in v.entries:
            assert entry in src, f"{v.name}: entry {entry} is not in {v.source}"
        assert v.inclusive == v.build_model(5, max(v.min_block, 32)).inclusive


def test_every_functor_of_the_python_vocabulary_is_in_the_header():
    header = expand_source("scan_ops.cuh")
    for op in OPERATORS.values():
        assert f"struct {op.cuda_functor.split('::')[-1]}" in header


@pytest.mark.parametrize(
    "kwargs, message",
    [
        (dict(block=48), "power of two"),
        (dict(block=2048), "over the limit of 1024 threads"),
        (dict(n=0), "empty"),
        (dict(n=257), "single-block limit"),
        (dict(dtype="float16"), "dtype='float16'"),
        (dict(op="interval", dtype="float32"), "allowed: int32"),
        (dict(op="xor"), "operator='xor' is unknown"),
    ],
)
def test_bad_launches_are_refused_naming_the_limit(kwargs, message):
    args = dict(n=100, block=256, dtype="float32", op="add") | kwargs
    with pytest.raises(ValueError, match=message):
        get_variant("kogge_stone").check(**args)


@pytest.mark.parametrize("variant, block, message", [
    ("blelloch", 3, "block=3"), ("blelloch", 2048, "over the limit of 1024 threads"),
    ("no_such_scan", 256, "no_such_scan"),
])
def test_scan_refuses_a_bad_launch_before_it_needs_cupy(variant, block, message, monkeypatch):
    """The launch's own limits are told whether or not CuPy is there to run it (here made
    unimportable), and a good launch without CuPy says what to install."""
    import sys

    from scancheck.kernels.launch import scan

    monkeypatch.setitem(sys.modules, "cupy", None)
    x = np.ones(100, dtype=np.float32)
    with pytest.raises(ValueError, match=message):
        scan(x, variant, block=block)
    with pytest.raises(ModuleNotFoundError, match=r"blelloch is a CUDA kernel and runs through "
                                                  r"CuPy, which is not installed: pip install"):
        scan(x, "blelloch", block=64)


def test_shared_memory_over_the_limit_is_refused():
    var = get_variant("coarsened")
    with pytest.raises(LaunchError, match="shared memory"):
        var.check(1000, 1024, "float64", "add", {"coarse": 16}, smem_limit=48 * 1024)


def test_warp_variants_refuse_blocks_below_a_warp():
    with pytest.raises(LaunchError, match="multiple of 32"):
        get_variant("warp_shuffle").check(10, 16, "float32", "add")


def test_unknown_parameter_is_refused():
    with pytest.raises(LaunchError, match="no parameter 'items'"):
        get_variant("kogge_stone").check(10, 32, "float32", "add", {"items": 4})


def test_a_runtime_parameter_reaches_neither_the_compiled_module_nor_the_model():
    var = get_variant("decoupled_lookback")
    on, off = {"items": 16, "prefetch_kib": 6144, "backoff_ns": 200}, {"items": 16, "prefetch_kib": 0}
    assert var.template_params(on) == var.template_params(off) == {"items": 16, "hoist": 0}
    assert var.name_expression("decoupled_lookback", "float64", "add", var.resolve_params(on)) \
        == var.name_expression("decoupled_lookback", "float64", "add", var.resolve_params(off))
    assert var.resolve_params(None)["prefetch_kib"] == 0
    x = np.arange(1, 300, dtype=np.float64)
    np.testing.assert_array_equal(var.build_model(299, 32, on).run(x, "add"),
                                  var.build_model(299, 32, off).run(x, "add"))
    with pytest.raises(LaunchError, match=r"prefetch_kib=5 is not allowed .*allowed: \(0, 6144\)"):
        var.check(10, 32, "float64", "add", {"prefetch_kib": 5})


def test_a_layout_parameter_reaches_the_compiled_module_but_not_the_model():
    """hoist moves the same values sooner: its own instantiation, the same combines."""
    var = get_variant("decoupled_lookback")
    on, off = var.resolve_params({"items": 16, "hoist": 1}), var.resolve_params({"items": 16})
    assert var.name_expression("decoupled_lookback", "float32", "add", on).endswith("16, 1>")
    assert var.name_expression("decoupled_lookback", "float32", "add", off).endswith("16, 0>")
    x = np.arange(1, 1300, dtype=np.float32) * np.float32(1.001)
    assert_same_bits(var.build_model(1299, 64, on).run(x, "add"),
                     var.build_model(1299, 64, off).run(x, "add"))
    with pytest.raises(TypeError):  # the model itself has no such parameter
        var.model(1299, 64, items=16, hoist=1)


def test_launches_that_differ_in_a_runtime_parameter_share_one_compiled_module(monkeypatch):
    import sys
    from types import SimpleNamespace

    import scancheck.kernels.launch as launch

    keys = []

    def module(name, params, device, names=None):
        keys.append((name, params, device, names))
        return SimpleNamespace(get_function=lambda expr: expr)

    fake_cupy = SimpleNamespace(cuda=SimpleNamespace(Device=lambda: SimpleNamespace(id=0)))
    monkeypatch.setitem(sys.modules, "cupy", fake_cupy)
    monkeypatch.setattr(launch, "_module", module)
    var = get_variant("decoupled_lookback")
    runtime = ({"prefetch_kib": 0}, {"prefetch_kib": 6144}, {"backoff_ns": 200})
    # At the defaults' template params: one module of every dtype and operator.
    got = [launch.compiled_kernels(var, "float64", "add", var.resolve_params(p)) for p in runtime]
    assert got[0] == got[1] == got[2]
    assert keys == [("decoupled_lookback", var.template_key(None), 0, None)] * 3
    # A narrow module holds the one instantiation, under the same name: the same code.
    narrow = launch.compiled_kernels(var, "float64", "add", var.resolve_params(None), narrow=True)
    assert narrow == got[0]
    assert keys[-1] == ("decoupled_lookback", var.template_key(None), 0, tuple(got[0].values()))
    # Elsewhere (a tuning candidate's items) only the instantiation launched is compiled.
    keys.clear()
    other = [launch.compiled_kernels(var, "float64", "add", var.resolve_params({"items": 16, **p}))
             for p in runtime]
    assert other[0] == other[1] == other[2]
    assert keys == [("decoupled_lookback", (("hoist", 0), ("items", 16)), 0,
                     tuple(other[0].values()))] * 3


def test_warming_a_candidate_compiles_each_dtype_of_its_first_operator_alone(monkeypatch):
    """The warm step fills the cache with what a candidate launch loads: verify and the
    tuner launch the first operator (add) in each of its dtypes, never the whole module."""
    import sys
    from types import SimpleNamespace

    import scancheck.kernels.launch as launch

    seen = []

    def module(name, params, device, names=None):
        seen.append((params, names))
        return SimpleNamespace(get_function=lambda expr: expr)

    monkeypatch.setitem(sys.modules, "cupy", SimpleNamespace(
        cuda=SimpleNamespace(Device=lambda: SimpleNamespace(id=0))))
    monkeypatch.setattr(launch, "_module", module)
    var = get_variant("decoupled_lookback")
    launch.warm(var, {"items": 64, "hoist": 1})
    add = [d for d in var.dtypes if d in get_operator("add").dtypes]
    assert [names for _, names in seen] == [
        (var.name_expression("decoupled_lookback", d, "add", var.resolve_params(
            {"items": 64, "hoist": 1})),) for d in add]
    seen.clear()
    launch.warm(var)
    assert seen == [(var.template_key(None), None)]


nvcc = shutil.which("nvcc")


@pytest.mark.skipif(nvcc is None, reason="nvcc is not on PATH")
@pytest.mark.slow
@pytest.mark.parametrize("name", list(VARIANTS))
def test_every_instantiation_compiles_with_nvcc(name, tmp_path):
    var = VARIANTS[name]
    src = expand_source(var.source)
    if not var.fixed_entry:
        refs = ",\n".join(f"  reinterpret_cast<const void*>(&{e})" for e in instantiations(var))
        src += f"\nconst void* scancheck_instances[] = {{\n{refs}\n}};\n"
    assert not (err := nvcc_errors(src, tmp_path, fmad=False)), err


_FAKE_NVCC = """#!/bin/sh
# nvcc stand-in: answers --version; logs each compile, which fails on a source saying BAD.
[ "$1" = "--version" ] && { echo "stand-in nvcc 1.0"; exit 0; }
echo compile >> LOG
for a in "$@"; do
  case "$a" in *.cu) grep -q BAD "$a" && { echo "$a: error: BAD" >&2; exit 1; };; esac
done
exit 0
"""


def test_a_clean_compile_is_noted_and_not_repeated_and_an_error_always_is(tmp_path, monkeypatch):
    """nvcc's clean compiles are noted by version, flags and whole source, and not run again
    (the suite's nvcc checks cost a minute of CPU once, not on every run); an error is shown
    every time."""
    import os

    log, work, bin_dir = tmp_path / "compiles", tmp_path / "work", tmp_path / "bin"
    work.mkdir()
    bin_dir.mkdir()
    (bin_dir / "nvcc").write_text(_FAKE_NVCC.replace("LOG", str(log)))
    (bin_dir / "nvcc").chmod(0o755)
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.setenv("SCANCHECK_NVCC_CACHE", str(tmp_path / "notes"))

    def compiles() -> int:
        return len(log.read_text().split()) if log.exists() else 0

    assert nvcc_errors("int good;", work) == "" and compiles() == 1
    assert nvcc_errors("int good;", work) == "" and compiles() == 1  # noted
    assert nvcc_errors("int good;", work, fmad=False) == "" and compiles() == 2  # other flags
    for _ in range(2):
        assert "error: BAD" in nvcc_errors("int BAD;", work)
    assert compiles() == 4
    # Together: the noted one is left out; the failing run is followed by each alone.
    each = nvcc_errors_each({"a": "int good;", "b": "int b;", "c": "int BAD;"}, work)
    assert each["a"] == each["b"] == "" and "error: BAD" in each["c"] and compiles() == 7
    monkeypatch.setenv("SCANCHECK_NVCC_CACHE", "")  # none kept
    assert nvcc_errors("int good;", work) == "" and compiles() == 8


# -- the kernels, on a GPU ------------------------------------------------------------


def _draw_input(data, op, n, dtype):
    dist = data.draw(st.sampled_from(DISTRIBUTIONS), label="distribution")
    return data.draw(elements_for(op, n, dtype, dist), label="x")


@pytest.mark.gpu
@pytest.mark.parametrize("name, op", CORRECT_OPS)
@given(data=st.data())
def test_kernel_equals_its_model_bit_for_bit(name, op, data):
    from scancheck.kernels.launch import scan

    var = VARIANTS[name]
    n, block, dtype, _ = data.draw(launches(name, ops=(op,), max_size=3000), label="launch")
    x = _draw_input(data, op, n, dtype)
    got = scan(x, name, op, block).get()
    expected = var.build_model(n, block).run(x, op)
    if (var.deterministic and op != "logaddexp") or OPERATORS[op].exact_in(dtype):
        assert_same_bits(got, expected, f"{name} n={n} block={block} {dtype} {op}")
    elif op == "mul":  # the look-back's order varies: judged as any product scan is
        judged = judge_products(x, got, var.inclusive)
        assert judged.ok.all(), judged.reason[~judged.ok][:1]
    elif op == "logaddexp":  # CUDA's expf and log1pf: within the bound, not NumPy's bits
        judged = judge_logsumexp(x, got, var.inclusive)
        assert judged.ok.all(), judged.reason[~judged.ok][:1]
    elif op == "add":
        depths = var.build_model(n, block).metrics().output_depths
        report = classify(x, got, depths, inclusive=var.inclusive, name=name)
        assert report.verdict != Verdict.BEYOND_BOUND, report.row()
    else:  # recurrence under a non-deterministic look-back: same values up to rounding
        np.testing.assert_allclose(got, expected, rtol=1e-3, atol=1e-4)


@pytest.mark.gpu
@pytest.mark.parametrize("name", WITH_INTERVAL)
@given(data=st.data())
def test_interval_proof_holds_on_the_gpu(name, data):
    from scancheck.kernels.launch import scan

    var = VARIANTS[name]
    n, block, _, _ = data.draw(launches(name, ops=("interval",), max_size=20000))
    got = scan(interval_input(n), name, "interval", block).get()
    if var.racy and not np.array_equal(got, interval_expected(n, var.inclusive)):
        return  # a race may or may not strike on a given run; racecheck must catch it
    np.testing.assert_array_equal(got, interval_expected(n, var.inclusive))


@pytest.mark.gpu
@pytest.mark.parametrize("name, dtype", WITH_ADD_FLOATS)
@given(data=st.data())
def test_float_errors_stay_within_the_bound(name, dtype, data):
    from scancheck.kernels.launch import scan

    var = VARIANTS[name]
    n, block, _, _ = data.draw(launches(name, ops=("add",), dtypes_=(dtype,)))
    dist = data.draw(st.sampled_from(["integers", "uniform", "wide", "cancellation"]))
    x = data.draw(elements_for("add", n, dtype, dist))
    got = scan(x, name, "add", block).get()
    depths = var.build_model(n, block).metrics().output_depths
    report = classify(x, got, depths, inclusive=var.inclusive, name=name)
    assert report.verdict != Verdict.BEYOND_BOUND, report.row()


@pytest.mark.gpu
def test_seed_004_float2_kernel_equals_the_generic_pair_instantiation():
    from scancheck.kernels.launch import scan

    rng = np.random.default_rng(4)
    for n in (1, 31, 33, 500, 1024):
        x = np.stack([rng.uniform(-1, 1, n), rng.uniform(-1, 1, n)], -1).astype(np.float32)
        assert_same_bits(scan(x, "recurrence_float2", "recurrence", 1024),
                         scan(x, "warp_shuffle", "recurrence", 1024), f"n={n}")


@pytest.mark.gpu
def test_refused_launch_leaves_the_process_able_to_launch():
    import cupy as cp

    from scancheck.kernels.launch import scan

    x = cp.arange(300, dtype=cp.float32)
    for bad in (dict(block=100), dict(block=4096), dict(block=128, params={"coarse": 3})):
        with pytest.raises(LaunchError):
            scan(x, "coarsened", "add", **bad)
    with pytest.raises(LaunchError, match="single-block limit"):
        scan(x, "kogge_stone", "add", 256)
    np.testing.assert_array_equal(scan(x, "hierarchical", "add", 256).get(),
                                  np.cumsum(np.arange(300, dtype=np.float32)))


@pytest.mark.gpu
def test_recursive_kernel_reproduces_seed_003():
    from scancheck.kernels.launch import scan

    got = scan(np.ones(23, dtype=np.int32), "recursive", "add", 4).get()
    np.testing.assert_array_equal(got, np.arange(23))


@pytest.mark.gpu
@pytest.mark.parametrize("span", get_variant("decoupled_lookback").runtime_params["span"])
@pytest.mark.parametrize("op, dtype", [("add", "int32"), ("interval", "int32"),
                                       ("recurrence", "int64")])
def test_lookback_rounds_of_every_span_fold_their_tiles_in_order(span, op, dtype):
    """Hundreds of 32-element tiles at once, so that look-backs fold rounds of many
    predecessors: at every span, exact operators (two of them not commutative) give the
    model's bits, through 4-, 8- and 16-byte tile status words."""
    from scancheck.kernels.launch import scan

    n, block, params = 20_011, 32, {"items": 1, "span": span}
    rng = np.random.default_rng(span)
    if op == "interval":
        x = interval_input(n)
    elif op == "recurrence":  # a = +-1 keeps every product's sign a fact of the order
        x = np.stack([rng.choice([-1, 1], n), rng.integers(-3, 4, n)], axis=1).astype(dtype)
    else:
        x = rng.integers(-1000, 1000, n).astype(dtype)
    want = get_variant("decoupled_lookback").build_model(n, block, params).run(x, op)
    assert_same_bits(scan(x, "decoupled_lookback", op, block, params), want)


@pytest.mark.gpu
def test_a_block_larger_than_its_registers_allow_is_refused_before_it_runs():
    """The look-back over the int64 recurrence's (a, b) pairs needs some 100 registers a
    thread (sm_90), so a block of 1024 threads needs more than an SM's 65,536: a LaunchError
    naming the limit, not the driver's launch failure; a block within it runs, the model's
    bits."""
    from scancheck.core.cuda import LaunchError, thread_limit
    from scancheck.kernels.launch import compiled_kernels, plan

    var = get_variant("decoupled_lookback")
    kernel = compiled_kernels(var, "int64", "recurrence", var.resolve_params(None))
    limit = thread_limit(kernel["decoupled_lookback"])
    assert limit < 1024, limit  # else this test refuses nothing
    rng = np.random.default_rng(5)
    n = 50_000
    x = np.stack([rng.choice([-1, 1], n), rng.integers(-3, 4, n)], axis=1).astype(np.int64)
    with pytest.raises(LaunchError, match=rf"^block=1024 is over the {limit} threads a block of "
                                          rf"decoupled_lookback may have .*allowed: up to {limit}$"):
        plan(x, var, "recurrence", 1024)
    block = 1 << (limit.bit_length() - 1)
    assert_same_bits(plan(x, var, "recurrence", block)(),
                     var.build_model(n, block).run(x, "recurrence"))


@pytest.mark.gpu
@pytest.mark.slow
@pytest.mark.parametrize("name", GRID)
def test_grid_scans_of_a_million_equal_the_model(name):
    from scancheck.kernels.launch import scan

    n = 1_000_003
    x = np.random.default_rng(1).integers(-1000, 1000, n).astype(np.int32)
    assert_same_bits(scan(x, name, "add", 256), get_variant(name).build_model(n, 256).run(x))


@pytest.mark.gpu
@pytest.mark.slow
@pytest.mark.parametrize("tool", ["racecheck", "synccheck"])
@pytest.mark.parametrize("name", list(VARIANTS))
def test_sanitizer_reports_only_the_racy_kernel(name, tool):
    from scancheck.isolation.sanitizer import find_sanitizer, sanitize_variant, watched_input
    from scancheck.kernels.launch import scan

    if find_sanitizer() is None:
        pytest.skip("compute-sanitizer is not installed")
    var = VARIANTS[name]
    op = var.operators[0]
    dtype = "float32" if "float32" in var.dtypes else var.dtypes[0]
    n = 256 * 9 + 5 if var.scope == "grid" else var.capacity(256, var.resolve_params(None))
    # The kernel compiled here first, so that the watched child loads it from the cache
    # instead of compiling under the sanitizer on a machine the warm step keeps busy.
    scan(watched_input(n, dtype, op), name, op, 256)
    # One run takes 1-2 s alone and once passed 60 s beside a full suite and the warm step:
    # two minutes mean it hung, and this test fails saying so before pytest-timeout would
    # take the worker down.
    report = sanitize_variant(tool, name, n, 256, dtype, op, timeout=120)
    assert not report.timed_out, f"{tool} did not finish in 120 s:\n{report.output[-3000:]}"
    assert report.returncode == 0 and report.issues >= 0, report.output[-3000:]
    if var.racy and tool == "racecheck":
        assert report.issues > 0, "racecheck missed the in-place Hillis-Steele race"
    else:
        assert report.issues == 0, report.first_lines()


@pytest.mark.gpu
@pytest.mark.huge
@pytest.mark.parametrize("size", ["past 2**31", "past 2**32"])
@pytest.mark.parametrize("name", ["decoupled_lookback", "hierarchical", "chained", "recursive"])
def test_past_2_to_the_31_and_32_no_index_overflows(name, size):
    """n = 2**31 + 17 and 2**32 + 17 float32, ones around both boundaries: a step function
    whose every output the step checker verifies on the device."""
    from scancheck.engine.conformance import check_property
    from scancheck.targets.kernel_targets import kernel_target

    result = check_property(kernel_target(name), size)
    assert result.status == "pass", (result.diagnosis, result.smallest_case)


@pytest.mark.parametrize("name", [n for n, v in VARIANTS.items() if v.max_depth is not None])
@given(data=st.data())
def test_closed_form_depth_bounds_hold_for_the_models(name, data):
    var = VARIANTS[name]
    block = data.draw(st.sampled_from([b for b in (2, 4, 32, 64, 256) if b >= var.min_block
                                       and b % var.block_multiple == 0]))
    n = data.draw(st.integers(1, 60_000))
    measured = int(var.build_model(n, block).metrics().output_depths.max())
    assert var.depth_bound(n, block) >= measured


@pytest.mark.skipif(nvcc is None, reason="nvcc is not on PATH")
def test_every_cuda_file_under_kernels_compiles(tmp_path):
    """Registry sources are compiled above, the oracle's kernels by test_exact_device and
    test_large at the instantiations they launch; here every other .cu (the negative
    controls, conformance-target signature) at float and int."""
    from scancheck.core.cuda import KERNEL_DIR
    from scancheck.targets.resolve import cu_prelude

    registered = {v.source for v in VARIANTS.values()}
    others = [p for p in sorted(KERNEL_DIR.rglob("*.cu"))
              if p.name not in registered and p.parent.name != "oracle"]
    assert others, "expected the negative controls under kernels/controls"
    errors = nvcc_errors_each({f"{path.name} {dtype}": cu_prelude(dtype) + expand_source(
        path.name, path.parent) for path in others for dtype in ("float32", "int32")}, tmp_path)
    assert not any(errors.values()), "\n".join(f"{k}:\n{e}" for k, e in errors.items() if e)


@pytest.mark.gpu
def test_warm_leaves_the_compiled_variant_in_cupys_kernel_cache(tmp_path):
    """What the GPU suite warms before its workers start (gpusuite._warm_kernels): a child
    compiles the variant into the disk cache, and another process then compiles nothing."""
    import os
    import subprocess
    import sys

    env = dict(os.environ, CUPY_CACHE_DIR=str(tmp_path))
    code = "from scancheck.kernels.launch import warm; warm('kogge_stone')"
    subprocess.run([sys.executable, "-c", code], env=env, check=True, timeout=300)

    def files():
        return sorted((p.name, p.stat().st_mtime_ns) for p in tmp_path.rglob("*") if p.is_file())

    cached = files()
    assert cached, "warm() left nothing in CuPy's kernel cache"
    subprocess.run([sys.executable, "-c", code], env=env, check=True, timeout=300)
    assert files() == cached, "the second process compiled the variant again"
