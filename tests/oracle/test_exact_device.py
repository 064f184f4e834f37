"""The exact oracle on the device (scancheck.oracle.exact_device), against the CPU oracle.

Where nvcc is present, the oracle's integer arithmetic (``kernels/oracle/exact_scan.cu`` is
``__host__ __device__``) runs on the CPU too, summing in order: the conversion to fixed
point, the wide additions and the rounding meet the CPU oracle bit for bit without a GPU.
The warp-wide path's lane arithmetic runs there too, its ballots and shuffles emulated
over 32 lanes, and its chunks joined by the look-back's whole-integer additions.
On a GPU, the whole device path (exponent pass, width, look-back scan, IEEE specials)
must do the same on every data distribution.
"""

from __future__ import annotations

import ctypes
import shutil
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from scancheck.core.arrays import as_dtype
from scancheck.core.cuda import KERNEL_DIR, expand_source
from scancheck.core.dtypes import finfo
from scancheck.engine.strategies import DISTRIBUTIONS, finite_floats, scan_data
from scancheck.oracle.exact import exact_scan
from scancheck.oracle.exact_device import (
    FORMATS,
    WARP_FROM,
    WIDTHS,
    exact_scan_device,
    instantiations,
    overlay_specials,
    words_needed,
)
from scancheck.testing import assert_same_bits, nvcc_errors, nvcc_shared_library

nvcc = shutil.which("nvcc")
needs_nvcc = pytest.mark.skipif(nvcc is None, reason="nvcc is not on PATH")


@needs_nvcc
@pytest.mark.slow
def test_every_instantiation_the_oracle_launches_compiles(tmp_path):
    src = expand_source("exact_scan.cu", KERNEL_DIR / "oracle")
    names = [name for dtype in FORMATS for name in instantiations(dtype)]
    refs = ",\n".join(f"  reinterpret_cast<const void*>(&{name})" for name in names)
    assert not (err := nvcc_errors(f"{src}\nconst void* instances[] = {{\n{refs}\n}};\n",
                                   tmp_path)), err


@pytest.fixture(scope="session")
def host_oracle(tmp_path_factory):
    """The kernel's arithmetic built for the CPU: (range, scan) callables by dtype and width
    (once per worker: the suite's slow-first order interleaves modules, so a module fixture
    would be torn down and rebuilt between this module's tests)."""
    if nvcc is None:
        pytest.skip("nvcc is not on PATH")
    out = tmp_path_factory.mktemp("host_oracle")
    lines = [expand_source("exact_scan.cu", KERNEL_DIR / "oracle"), """
template <typename Bits, int P, int EBITS, int W>
void host_scan(const void* in, void* out, long long n, int base) {
  const scancheck::FixedPoint<Bits, P, EBITS, W> fp{base};
  const scancheck::WideAdd<W> add;
  scancheck::Wide<W> acc = scancheck::WideAdd<W>::identity();
  for (long long i = 0; i < n; ++i) {
    acc = add(acc, fp.load(static_cast<const Bits*>(in)[i]));
    static_cast<Bits*>(out)[i] = fp.store(acc);
  }
}
// exact_scan_warp's steps on one CPU thread: each warp collective is a loop over 32 lanes.
// Chunks of `chunk` values are summed apart and joined as the look-back joins them.
template <typename Bits, int P, int EBITS>
void host_warp_scan(const void* in, void* out, long long n, int base, int chunk) {
  using namespace scancheck;
  using namespace scancheck::warpint;
  struct Warp {
    LaneWords v[kLanes] = {};
    void add(const LaneWords* a, bool neg) {  // warp_add
      LaneSum s[kLanes];
      unsigned gen = 0, prop = 0;
      for (int l = 0; l < kLanes; ++l) {
        s[l] = lane_sum(v[l], a[l], neg);
        gen |= unsigned(s[l].gen) << l;
        prop |= unsigned(s[l].prop) << l;
      }
      const unsigned c = lane_carries(gen, prop, neg);
      for (int l = 0; l < kLanes; ++l) v[l] = lane_finish(s[l], c, l);
    }
    void add_value(Bits b, int base) {
      const Placed x = place<Bits, P, EBITS>(b, base);
      LaneWords a[kLanes];
      for (int l = 0; l < kLanes; ++l) a[l] = lane_part(x, l);
      add(a, x.neg);
    }
    Window window() const {  // warp_window
      const bool neg = (v[kLanes - 1].hi >> 63) != 0;
      const unsigned long long flip = neg ? ~0ULL : 0ULL;
      LaneWords m[kLanes];
      unsigned nonzero = 0, ones = 0;
      for (int l = 0; l < kLanes; ++l) {
        m[l] = {v[l].lo ^ flip, v[l].hi ^ flip};
        nonzero |= unsigned((m[l].lo | m[l].hi) != 0) << l;
        ones |= unsigned((m[l].lo & m[l].hi) == ~0ULL) << l;
      }
      Window w = window_shape(nonzero, ones, neg);
      w.w[0] = m[w.top - 1].lo;
      w.w[1] = m[w.top - 1].hi;
      w.w[2] = m[w.top].lo;
      w.w[3] = m[w.top].hi;
      return w;
    }
  };
  const Bits* x = static_cast<const Bits*>(in);
  Warp prefix;
  for (long long start = 0; start < n; start += chunk) {
    const long long stop = start + chunk < n ? start + chunk : n;
    Warp run = prefix, sum;
    for (long long i = start; i < stop; ++i) {
      run.add_value(x[i], base);
      static_cast<Bits*>(out)[i] = round_window<Bits, P, EBITS>(run.window(), base);
      sum.add_value(x[i], base);
    }
    prefix.add(sum.v, false);
  }
}
template <typename Bits, int P, int EBITS>
void host_range(const void* in, long long n, int* range) {
  for (long long i = 0; i < n; ++i)
    widen_range<Bits, P, EBITS>(static_cast<const Bits*>(in)[i], range[0], range[1], range[2]);
}
"""]
    for dtype, (bits, p, e) in FORMATS.items():
        lines.append(f'extern "C" void range_{dtype}(const void* in, long long n, int* r) '
                     f'{{ host_range<{bits}, {p}, {e}>(in, n, r); }}')
        lines.append(f'extern "C" void warp_{dtype}(const void* in, void* out, long long n, '
                     f'int base, int chunk) {{ host_warp_scan<{bits}, {p}, {e}>(in, out, n, '
                     f'base, chunk); }}')
        for w in WIDTHS:
            lines.append(f'extern "C" void scan_{dtype}_{w}(const void* in, void* out, long long n,'
                         f' int base) {{ host_scan<{bits}, {p}, {e}, {w}>(in, out, n, base); }}')
    # Built once per machine and source, not by each worker of each session (3 CPU-s each).
    return ctypes.CDLL(str(nvcc_shared_library("\n".join(lines), out, ("-std=c++17", "-O1"))))


def host_exact_scan(lib, x: np.ndarray, warp_from: int = WARP_FROM, chunk: int = 37) -> np.ndarray:
    """exact_scan_device's steps, with the kernels' arithmetic run on the CPU."""
    x = np.ascontiguousarray(x)
    n, dtype = x.shape[0], x.dtype.name
    rng = np.array([np.iinfo(np.int32).max, np.iinfo(np.int32).min, 0, 0], dtype=np.int32)
    getattr(lib, f"range_{dtype}")(x.ctypes.data_as(ctypes.c_void_p), ctypes.c_longlong(n),
                                   rng.ctypes.data_as(ctypes.POINTER(ctypes.c_int)))
    lo, hi, special = (int(v) for v in rng[:3])
    out = np.zeros_like(x)
    if lo <= hi:
        w = words_needed(lo, hi, n)
        args = (x.ctypes.data_as(ctypes.c_void_p), out.ctypes.data_as(ctypes.c_void_p),
                ctypes.c_longlong(n), ctypes.c_int(lo))
        if w >= warp_from:
            getattr(lib, f"warp_{dtype}")(*args, ctypes.c_int(chunk))
        else:
            getattr(lib, f"scan_{dtype}_{w}")(*args)
    if special or x[0] == 0:
        overlay_specials(x, out, np)
    return out


float_dtypes = st.sampled_from(list(FORMATS))


@needs_nvcc
@given(dtype=float_dtypes, dist=st.sampled_from(DISTRIBUTIONS), data=st.data())
def test_the_oracle_arithmetic_equals_the_cpu_oracle_on_every_distribution(host_oracle, dtype,
                                                                          dist, data):
    n = data.draw(st.integers(1, 3000), label="n")
    x = data.draw(scan_data(n, dtype, dist), label="x")
    assert_same_bits(host_exact_scan(host_oracle, x), exact_scan(x), f"{dist} {dtype}")


@needs_nvcc
@given(dtype=float_dtypes, data=st.data())
def test_the_oracle_arithmetic_is_exact_over_the_whole_exponent_range(host_oracle, dtype, data):
    """Arbitrary finite floats: subnormals, the largest values and everything between, so
    the widest integers (34 words for float64) and rounding to infinity are met."""
    x = data.draw(finite_floats(dtype, max_size=200), label="x")
    assert_same_bits(host_exact_scan(host_oracle, x), exact_scan(x), dtype)


@needs_nvcc
@given(dtype=float_dtypes, dist=st.sampled_from(DISTRIBUTIONS), data=st.data())
def test_the_warp_wide_arithmetic_equals_the_cpu_oracle_at_every_width(host_oracle, dtype, dist,
                                                                      data):
    """The warp path at any width, narrow data included, where its integers sit in lane 0
    alone and negative sums are all ones above: chunks of a few values, joined by
    whole-integer additions."""
    n = data.draw(st.integers(1, 400), label="n")
    x = data.draw(scan_data(n, dtype, dist), label="x")
    chunk = data.draw(st.integers(1, 64), label="chunk")
    assert_same_bits(host_exact_scan(host_oracle, x, warp_from=1, chunk=chunk), exact_scan(x),
                     f"{dist} {dtype} chunk={chunk}")


@needs_nvcc
@pytest.mark.parametrize("dtype", list(FORMATS))
def test_ties_round_to_even_and_carries_reach_the_exponent(host_oracle, dtype):
    info = finfo(dtype)
    eps, one = info.eps, np.array(1, dtype=as_dtype(dtype))
    cases = [
        [one, eps / 2],  # a tie at an even significand: stays 1
        [one + eps, eps / 2],  # a tie at an odd one: rounds up
        [one, eps / 2, info.smallest_subnormal],  # just past the tie: up
        [2 - eps, eps / 2],  # the carry out of the significand steps the exponent
        [info.max, info.max, -info.max],  # the exact prefixes: max, 2 max (inf), max
        [info.smallest_normal - info.smallest_subnormal, info.smallest_subnormal],
        [-info.smallest_subnormal, info.smallest_subnormal],  # an exact zero: +0.0
    ]
    for values in cases:
        x = np.array(values, dtype=as_dtype(dtype))
        for warp_from in (1, WARP_FROM):
            assert_same_bits(host_exact_scan(host_oracle, x, warp_from), exact_scan(x),
                             f"{values}")


def test_a_host_library_is_built_once_per_machine_and_source(tmp_path, monkeypatch):
    """The host build of the oracle's arithmetic is kept by nvcc's version, its flags and the
    whole source: each xdist worker of each session loads the one built first."""
    import subprocess
    from types import SimpleNamespace

    from scancheck import testing

    builds = []

    def nvcc(cmd, **kwargs):  # a stand-in: its version, or a build that fails on BAD
        if cmd[1:] == ["--version"]:
            return SimpleNamespace(returncode=0, stdout="stand-in nvcc 1.0", stderr="")
        builds.append(cmd)
        source = Path(next(c for c in cmd if c.endswith(".cu")))
        if "BAD" in source.read_text():
            return SimpleNamespace(returncode=1, stdout="", stderr=f"{source}: error: BAD")
        Path(cmd[cmd.index("-o") + 1]).write_text("library")
        return SimpleNamespace(returncode=0, stdout="", stderr="")

    monkeypatch.setattr(testing.shutil, "which", lambda name: f"/stand-in/{name}")
    monkeypatch.setattr(subprocess, "run", nvcc)
    monkeypatch.setenv("SCANCHECK_NVCC_CACHE", str(tmp_path / "kept"))
    work = tmp_path / "work"
    work.mkdir()
    lib = nvcc_shared_library("int good;", work, ("-O1",))
    assert lib.read_text() == "library" and lib.parent == tmp_path / "kept" and len(builds) == 1
    assert nvcc_shared_library("int good;", work, ("-O1",)) == lib and len(builds) == 1  # kept
    assert nvcc_shared_library("int good;", work, ("-O2",)) != lib and len(builds) == 2
    for _ in range(2):
        with pytest.raises(RuntimeError, match="error: BAD"):
            nvcc_shared_library("int BAD;", work)
    assert len(builds) == 4 and sorted(p.suffix for p in lib.parent.iterdir()) == [".so", ".so"]
    monkeypatch.setenv("SCANCHECK_NVCC_CACHE", "")  # none kept: built where the test works
    assert nvcc_shared_library("int good;", work, ("-O1",)).parent == work and len(builds) == 5


def test_widths_grow_with_the_span_and_the_length():
    assert words_needed(0, 23, 1000) == 1
    assert words_needed(-60, 2, 2**28) == 2
    assert words_needed(-1074, 1023, 2**34) == 34
    with pytest.raises(ValueError, match="over the 2176-bit integers"):
        words_needed(-1074, 1023, 2**80)


# -- on a GPU ---------------------------------------------------------------------------


def _to_device(x: np.ndarray):
    """A CuPy array of ``x``, or a torch tensor for bfloat16 (CuPy has none)."""
    if x.dtype.name == "bfloat16":
        import torch

        return torch.from_numpy(x.view(np.int16)).cuda().view(torch.bfloat16)
    import cupy as cp

    return cp.asarray(x)


def _to_host(y) -> np.ndarray:
    if str(getattr(y, "dtype", "")) == "torch.bfloat16":
        import torch

        return y.view(torch.int16).cpu().numpy().view(as_dtype("bfloat16"))
    return y.get()


@pytest.mark.gpu
@pytest.mark.parametrize("dtype", list(FORMATS))
@given(dist=st.sampled_from(DISTRIBUTIONS), data=st.data())
def test_the_device_oracle_equals_the_cpu_oracle_on_every_distribution(dtype, dist, data):
    n = data.draw(st.sampled_from([1, 2, 23, 2047, 2048, 2049, 4097, 65537, 300_001]), label="n")
    x = data.draw(scan_data(n, dtype, dist), label="x")
    got = exact_scan_device(_to_device(x))
    assert type(got) is type(_to_device(x[:1]))
    assert_same_bits(_to_host(got), exact_scan(x), f"{dist} {dtype} n={n}")


@pytest.mark.gpu
@pytest.mark.parametrize("dtype", list(FORMATS))
@given(data=st.data())
def test_the_device_oracle_is_exact_over_the_whole_exponent_range(dtype, data):
    x = data.draw(finite_floats(dtype, max_size=3000), label="x")
    assert_same_bits(_to_host(exact_scan_device(_to_device(x))), exact_scan(x), dtype)


@pytest.mark.gpu
@pytest.mark.parametrize("dtype", list(FORMATS))
def test_a_run_of_negative_zeros_ends_at_a_subnormal(dtype):
    """-0.0 holds only while every input so far is -0.0; CuPy's kernels flush subnormals
    (-ftz=true), so a subnormal must not read as a zero there (found on the H100)."""
    tiny = finfo(as_dtype(dtype)).smallest_subnormal
    x = np.array([-0.0, -tiny, -0.0, tiny, -0.0, tiny], dtype=as_dtype(dtype))
    for k in range(1, x.size + 1):
        assert_same_bits(_to_host(exact_scan_device(_to_device(x[:k]))), exact_scan(x[:k]),
                         f"{dtype} {x[:k]!r}")


@pytest.mark.gpu
@pytest.mark.slow
@pytest.mark.parametrize("dist", ["uniform", "cancellation", "wide", "specials"])
def test_the_device_oracle_at_millions_of_elements(dist):
    """Many tiles, long look-back chains, sums past 2**24: still the CPU oracle's bits."""
    import cupy as cp

    from scancheck.engine.strategies import generate_data

    x = generate_data(np.random.default_rng(7), 3_000_017, "float32", dist)
    assert_same_bits(exact_scan_device(cp.asarray(x)), exact_scan(x), dist)
    x64 = generate_data(np.random.default_rng(8), 1_000_003, "float64", dist)
    assert_same_bits(exact_scan(cp.asarray(x64)), exact_scan(x64), f"{dist} float64")


@pytest.mark.gpu
def test_exact_scan_computes_device_arrays_where_they_lie():
    import cupy as cp
    import torch

    x = np.random.default_rng(3).standard_normal(10_001).astype(np.float32)
    want = exact_scan(x)
    assert isinstance(exact_scan(cp.asarray(x)), cp.ndarray)
    assert_same_bits(exact_scan(cp.asarray(x)), want)
    assert_same_bits(exact_scan(torch.from_numpy(x).cuda()), want)  # DLPack
    assert_same_bits(exact_scan(cp.asarray(x), inclusive=False),
                     exact_scan(x, inclusive=False))
    ints = np.arange(100, dtype=np.int32)
    assert_same_bits(exact_scan(cp.asarray(ints), "max"), exact_scan(ints, "max"))
    bf = x.astype(as_dtype("bfloat16"))  # torch bfloat16: on the device, and back as bfloat16
    for op in ("add", "max"):
        got = exact_scan(_to_device(bf), op)
        assert got.dtype == torch.bfloat16 and got.is_cuda
        assert_same_bits(_to_host(got), exact_scan(bf, op), op)


@pytest.mark.gpu
def test_bad_device_inputs_are_refused_by_name():
    import cupy as cp

    with pytest.raises(ValueError, match="x must be 1-D"):
        exact_scan_device(cp.zeros((2, 3), dtype=cp.float32))
    with pytest.raises(ValueError, match="dtype='int32' is not supported"):
        exact_scan_device(cp.zeros(3, dtype=cp.int32))
    assert exact_scan_device(cp.zeros(0, dtype=cp.float32)).shape == (0,)
