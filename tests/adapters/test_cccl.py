"""cuda.compute's scans with a Python operator: their host side checked on the CPU (the
operator traced from each probe monoid's combine, the record layout, packing, the
unavailable message) around a sequential stand-in for cuda.compute and CuPy, also broken
on purpose; the real scans where cuda.compute and a GPU are (marked ``gpu``)."""

from __future__ import annotations

import sys
import types
from dataclasses import replace

import numpy as np
import pytest

from scancheck.adapters import builtin_targets, cccl, rows
from scancheck.adapters.cccl import (
    CcclOpError,
    cccl_rows,
    make_operator,
    pack,
    record_dtype,
    unpack,
)
from scancheck.core.monoids import PROBES, Monoid, namespace
from scancheck.engine.cases import Budget
from scancheck.engine.conformance import check_property

NAMES = [r.name for r in cccl_rows()]


def _elements(arr: np.ndarray) -> list:
    """The elements an operator is handed: np.record (fields by attribute, as cuda.compute's
    structs) or NumPy scalars."""
    return list(arr.view(np.recarray)) if arr.dtype.names else list(arr)


def _apply_op(op, a, b, dtypes):
    """``op`` applied element by element in Python to two tuples of leaves."""
    dtype = record_dtype(dtypes)
    with np.errstate(all="ignore"):
        got = [op(x, y) for x, y in zip(_elements(pack(a, dtype)), _elements(pack(b, dtype)))]
    return unpack(np.array([tuple(g) if dtype.names else g for g in got], dtype=dtype), dtypes)


@pytest.mark.parametrize("name", list(PROBES))
def test_the_operator_traced_from_each_probe_equals_its_combine(name):
    """Run in Python on records, the operator gives the combine's leaves bit for bit."""
    m = PROBES[name]
    rng = np.random.default_rng(0)
    a, b = m.draw(rng, (64,)), m.draw(rng, (64,))
    got = _apply_op(make_operator(m.bound, m.dtypes), a, b, m.dtypes)
    for g, w in zip(got, m.apply(a, b)):
        assert g.dtype == w.dtype and np.array_equal(g, w), name


@pytest.mark.parametrize("name", list(PROBES))
def test_the_operator_compiles_and_agrees_under_numbas_typing(name):
    """numba's CPU target types the operator as numba-cuda does (uint32 * uint32 in 64
    bits, then the cast back): compiled with njit it still equals the combine."""
    numba = pytest.importorskip("numba")
    m = PROBES[name]
    rng = np.random.default_rng(1)
    a, b = m.draw(rng, (64,)), m.draw(rng, (64,))
    dtype = record_dtype(m.dtypes)
    op = numba.njit(make_operator(m.bound, m.dtypes))
    pa, pb = pack(a, dtype), pack(b, dtype)
    got = np.empty_like(pa)
    for i in range(pa.shape[0]):
        got[i] = op(pa[i], pb[i]) if dtype.names is None else op(pa.view(np.recarray)[i],
                                                                  pb.view(np.recarray)[i])
    for g, w in zip(unpack(got, m.dtypes), m.apply(a, b)):
        assert np.array_equal(g, w), name


def test_a_swapped_combine_gives_an_operator_that_differs():
    """The comparison above can fail: the affine combine traced with its operands swapped
    differs from the combine."""
    m = PROBES["affine mod 2**32"]
    rng = np.random.default_rng(2)
    a, b = m.draw(rng, (64,)), m.draw(rng, (64,))
    got = _apply_op(make_operator(lambda x, y: m.combine(y, x), m.dtypes), a, b, m.dtypes)
    assert not all(np.array_equal(g, w) for g, w in zip(got, m.apply(a, b)))


def test_the_record_is_aligned_as_a_c_struct():
    """Each field at a multiple of its size, the record a multiple of the largest: the
    layout of cuda.compute's structs (and of a C struct of these fields)."""
    dt = record_dtype(("int32", "uint64", "uint8", "float64"))
    assert dt.names == ("f0", "f1", "f2", "f3") and dt.isalignedstruct
    assert [dt.fields[n][1] for n in dt.names] == [0, 8, 16, 24] and dt.itemsize == 32
    assert record_dtype(("int32",)) == np.dtype("int32")


def test_packing_round_trips():
    m = PROBES["sequence hash"]
    a = m.draw(np.random.default_rng(3), (17,))
    back = unpack(pack(a, record_dtype(m.dtypes)), m.dtypes)
    assert all(b.dtype == v.dtype and np.array_equal(b, v) for b, v in zip(back, a))


@pytest.mark.parametrize("combine, dtypes, says", [
    (lambda a, b: (a[0] if a[0] > b[0] else b[0],), ("int32",), "branches"),
    (lambda a, b: (namespace(a[0]).exp(a[0] + b[0]),), ("float32",), "exp"),
    (lambda a, b: (a[0] + b[0],), ("float16",), "float16"),
    (lambda a, b: (a[0] + b[0], a[0]), ("int32",), "2 leaves"),
    (lambda a, b: (a[0] + np.float16(1),), ("int32",), "float16"),
])
def test_a_combine_that_cannot_be_traced_says_what_it_did(combine, dtypes, says):
    with pytest.raises(CcclOpError, match=says):
        make_operator(combine, dtypes)


def test_a_user_monoid_with_where_and_constants_traces():
    """``where`` becomes a conditional expression, a NumPy constant a cast of its dtype."""
    def sat(a, b):
        xp = namespace(a[0])
        s = a[0] + b[0]
        return (xp.where(s > np.int64(100), np.int64(100), s),)

    m = Monoid(sat, (np.int64(0),), name="saturating", commutative=True)
    op = make_operator(m.bound, m.dtypes)
    assert "if" in op.__scancheck_source__ and "int64(100)" in op.__scancheck_source__
    assert op(np.int64(70), np.int64(50)) == 100 and op(np.int64(7), np.int64(5)) == 12


def test_without_cuda_compute_the_targets_say_why(monkeypatch):
    """Listed whatever is installed; where cuda (cuda-cccl's namespace) is missing the reason
    names the package to install, and a missing GPU is a reason of its own."""
    monkeypatch.setattr(rows, "not_installed",
                        lambda mod: f"{mod} is not installed" if mod == "cuda" else None)
    monkeypatch.setattr(rows, "no_gpu", lambda: None)
    got = {r.name: r.target().unavailable for r in cccl_rows()}
    assert set(got) == set(NAMES) and all("cuda-cccl" in v for v in got.values())
    monkeypatch.setattr(rows, "not_installed", lambda mod: None)
    monkeypatch.setattr(rows, "no_gpu", lambda: "no GPU here")
    got = {r.name: r.target().unavailable for r in cccl_rows()}
    assert got == dict.fromkeys(NAMES, "no GPU here")
    assert set(NAMES) <= set(builtin_targets())


# A stand-in for cuda.compute and CuPy: the documented scans, one op call per element, in
# Python, on NumPy arrays (``.get()`` the copy back), so the adapter's host side runs here.

class _Dev(np.ndarray):
    def get(self) -> np.ndarray:
        return np.array(self)


def _fake_modules(swap: bool = False, drop_init: bool = False) -> dict[str, types.ModuleType]:
    def scan(d_in, d_out, op, init, n, inclusive):
        xs = _elements(np.asarray(d_in))
        acc = None
        if init is not None and not drop_init:
            init = np.array([init] if np.asarray(init).ndim == 0 else init, dtype=d_in.dtype)
            acc = _elements(init)[0]
        with np.errstate(all="ignore"):
            for i, x in enumerate(xs[:n]):
                if not inclusive:
                    d_out[i] = acc if acc is not None else np.zeros((), d_in.dtype)
                acc = x if acc is None else (op(x, acc) if swap else op(acc, x))
                acc = _elements(np.array([tuple(acc) if d_in.dtype.names else acc],
                                         dtype=d_in.dtype))[0]
                if inclusive:
                    d_out[i] = acc

    cc = types.ModuleType("cuda.compute")
    # Keyword-only, as cuda-cccl's (1.1.1); the inclusive scan's init_value optional.
    def inclusive_scan(*, d_in, d_out, op, init_value=None, num_items, stream=None):
        scan(d_in, d_out, op, init_value, num_items, True)

    def exclusive_scan(*, d_in, d_out, op, init_value, num_items, stream=None):
        scan(d_in, d_out, op, init_value, num_items, False)

    cc.inclusive_scan, cc.exclusive_scan = inclusive_scan, exclusive_scan
    cp = types.ModuleType("cupy")
    cp.asarray = lambda a: np.array(a).view(_Dev)
    cp.empty = lambda n, dtype: np.empty(n, dtype=dtype).view(_Dev)
    cuda = types.ModuleType("cuda")
    cuda.compute = cc
    return {"cupy": cp, "cuda": cuda, "cuda.compute": cc}


@pytest.mark.parametrize("name", NAMES)
def test_each_target_conforms_around_a_correct_stand_in(monkeypatch, name, budget):
    """Every probe monoid through the adapter (trace, pack, bytes and views, identity,
    unpack) around the stand-in: the scancheck verdict passes.  A correct target searches
    for the profile's seconds (a fixed 3 s was 3 CPU-s of each CI run's 90): the ladder,
    each probe at a few small sizes and a probe at every scale to 256, runs whole at any
    budget."""
    for mod, fake in _fake_modules().items():
        monkeypatch.setitem(sys.modules, mod, fake)
    target = {r.name: r.target(here=False) for r in cccl_rows()}[name]
    result = check_property(target, "probe monoids", replace(budget, max_n=256))
    assert result.status == "pass", (result.diagnosis, result.smallest_case)


@pytest.mark.parametrize("name, broken", [
    ("cuda.compute inclusive_scan (op)", dict(swap=True)),
    ("cuda.compute exclusive_scan (op)", dict(swap=True)),
    ("cuda.compute exclusive_scan (op)", dict(drop_init=True)),
])
def test_a_broken_stand_in_is_caught_through_the_adapter(monkeypatch, name, broken):
    """The adapter hides no bug: a scan that combines (b, a), or an exclusive scan that
    starts from zeros instead of the identity, fails."""
    for mod, fake in _fake_modules(**broken).items():
        monkeypatch.setitem(sys.modules, mod, fake)
    target = {r.name: r.target(here=False) for r in cccl_rows()}[name]
    result = check_property(target, "probe monoids", Budget(3, max_n=256))
    assert result.status == "fail", result.diagnosis


@pytest.mark.gpu
@pytest.mark.parametrize("name", NAMES)
def test_cuda_compute_scans_conform_under_the_probes_on_the_gpu(name):
    target = builtin_targets()[name]
    if target.unavailable:
        pytest.skip(f"{name}: {target.unavailable} (checked on the device by cccl_cmd.sh)")
    result = check_property(target, "probe monoids", Budget(10, max_n=2**14))
    assert result.status == "pass", (result.diagnosis, result.smallest_case)


def test_the_module_imports_no_gpu_package():
    assert "cupy" not in vars(cccl) and "cuda" not in vars(cccl)
