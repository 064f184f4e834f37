"""The exact oracle on the device (scancheck.oracle.exact_device), against the CPU oracle.

Where nvcc is present, the oracle's integer arithmetic (``kernels/oracle/exact_scan.cu`` is
``__host__ __device__``) runs on the CPU too, summing in order: the conversion to fixed
point, the wide additions and the rounding meet the CPU oracle bit for bit without a GPU.
The column scan's runs there too: each lane's carry-save sum, the warp's word-by-word scan
of them (a loop over 32 lanes), the tiles' sums scanned chunk by chunk in the warp's lane
arithmetic (its ballots emulated), and each lane's walk that adds a value to its integer and
rounds from the two words it tracks at the top.
On a GPU, the whole device path (exponent pass, width, look-back scan, IEEE specials)
must do the same on every data distribution.
"""

from __future__ import annotations

import ctypes
import math
import re
import shutil
from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from scancheck.core.arrays import as_dtype
from scancheck.core.cuda import KERNEL_DIR, expand_source
from scancheck.core.dtypes import SIGNIFICAND_BITS, finfo
from scancheck.engine.strategies import DISTRIBUTIONS, finite_floats, scan_data
from scancheck.oracle.exact import exact_scan
from scancheck.oracle.exact_device import (
    CERTIFIED,
    COLUMNS_FROM,
    COLUMNS_TILE,
    FORMATS,
    HEADER_WORDS,
    TILE,
    WIDTHS,
    Header,
    certified_min_bits,
    exact_scan_device,
    instantiations,
    overlay_specials,
    state_words,
    takes_certified,
    uncertified_at,
    widths,
    words_needed,
)
from scancheck.testing import assert_same_bits, nvcc_errors, nvcc_shared_library

nvcc = shutil.which("nvcc")
needs_nvcc = pytest.mark.skipif(nvcc is None, reason="nvcc is not on PATH")


@needs_nvcc
@pytest.mark.slow
def test_every_instantiation_the_oracle_launches_compiles(tmp_path):
    src = expand_source("exact_scan.cu", KERNEL_DIR / "oracle")
    names = sorted({name for dtype in FORMATS for module in instantiations(dtype) for name in module})
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
    lines = ["#include <vector>", expand_source("exact_scan.cu", KERNEL_DIR / "oracle"), """
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
// column_prefixes on one CPU thread, a warp's lanes in turn: `count` integers of W words in a
// (W rounded up to even words apart) to their exclusive prefix sums, chunk by chunk of `per`
// as exact_device._exclusive launches it (modes 0, then recursively, then 1; 2 for one chunk).
template <int W>
struct HostWarp {
  using LaneWords = scancheck::columns::LaneWords;
  static constexpr int kStride = W + (W & 1);
  static void load(const unsigned long long* p, LaneWords (&v)[32]) {
    for (int l = 0; l < 32; ++l) v[l] = 2 * l < W ? LaneWords{p[2 * l], p[2 * l + 1]} : LaneWords{0, 0};
  }
  static void store(unsigned long long* p, const LaneWords (&v)[32]) {
    for (int l = 0; l < 32; ++l)
      if (2 * l < W) p[2 * l] = v[l].lo, p[2 * l + 1] = v[l].hi;
  }
  static void add(LaneWords (&v)[32], const LaneWords (&a)[32]) {  // warp_add, ballots emulated
    using namespace scancheck::columns;
    LaneSum s[32];
    unsigned gen = 0, prop = 0;
    for (int l = 0; l < 32; ++l) {
      s[l] = lane_sum(v[l], a[l]);
      gen |= unsigned(s[l].gen) << l;
      prop |= unsigned(s[l].prop) << l;
    }
    const unsigned carries = lane_carries(gen, prop);
    for (int l = 0; l < 32; ++l) v[l] = lane_finish(s[l], carries, l);
  }
  static void chunks(unsigned long long* a, long long count, int per, unsigned long long* totals,
                     int mode) {
    for (long long j = 0; j * per < count; ++j) {
      LaneWords run[32] = {}, got[32];
      if (mode == 1) load(totals + j * kStride, run);
      for (long long i = j * per; i < count && i < (j + 1) * per; ++i) {
        load(a + i * kStride, got);
        if (mode != 0) store(a + i * kStride, run);
        add(run, got);
      }
      if (mode == 0) store(totals + j * kStride, run);
    }
  }
  static void exclusive(unsigned long long* a, long long count, int per) {
    const long long n = (count + per - 1) / per;
    if (n == 1) return chunks(a, count, per, nullptr, 2);
    std::vector<unsigned long long> totals(n * kStride);
    chunks(a, count, per, totals.data(), 0);
    exclusive(totals.data(), n, per);
    chunks(a, count, per, totals.data(), 1);
  }
};
// The column scan's kernels on one CPU thread, each lane's integer a plain array
// (Column<..., 1>) and the warp's scan over lanes a loop: column_sums (a lane every 32nd
// value), HostWarp::exclusive over the tiles' sums (chunks of `per`), then, for the tiles
// writes_tile names (all where every <= 0), write_tile (a lane `items` consecutive values),
// writing only the outputs of marked tiles of `every` values.
template <typename Bits, int P, int EBITS, int W>
void host_columns_scan(const void* in, void* out, long long n, int base, int items,
                       const unsigned* marks, long long every, int per) {
  using namespace scancheck;
  using namespace scancheck::columns;
  using Words = Column<unsigned long long, 1>;
  using Counts = Column<signed char, 1>;
  constexpr int kLanes = 32, kStride = HostWarp<W>::kStride;
  const Bits* x = static_cast<const Bits*>(in);
  const long long span = kLanes * items, tiles = (n + span - 1) / span;
  unsigned long long v[kLanes][W], tile[W];
  signed char c[kLanes][W];
  // Steps 1 and 2: each lane's exclusive prefix within the tile in v, the tile's sum in tile.
  auto sum_tile = [&](long long seg, bool striped) {
    for (int l = 0; l < kLanes; ++l) {
      for (int k = 0; k < W; ++k) v[l][k] = 0, c[l][k] = 0;
      for (int i = 0; i < items; ++i) {
        const long long e = seg + (striped ? i * kLanes + l : static_cast<long long>(l) * items + i);
        add_carry_save<W>(Words{v[l]}, Counts{c[l]}, place<Bits, P, EBITS>(e < n ? x[e] : Bits(0), base));
      }
    }
    int carry_ex[kLanes] = {}, carry_in[kLanes] = {};
    for (int k = 0; k < W; ++k) {
      Sum128 inc{0, 0};
      for (int l = 0; l < kLanes; ++l) {
        const Sum128 d = digit(v[l][k], k > 0 ? c[l][k - 1] : 0);
        inc = add(inc, d);
        v[l][k] = settle(sub(inc, d), carry_ex[l]);
        const unsigned long long total = settle(inc, carry_in[l]);
        if (l == kLanes - 1) tile[k] = total;
      }
    }
  };
  std::vector<unsigned long long> sums(tiles * kStride, 0);
  for (long long t = 0; t < tiles; ++t) {
    sum_tile(t * span, true);
    for (int k = 0; k < W; ++k) sums[t * kStride + k] = tile[k];
  }
  HostWarp<W>::exclusive(sums.data(), tiles, per);
  for (long long t = 0; t < tiles; ++t) {
    const long long seg = t * span, end = seg + span < n ? seg + span : n;
    if (!writes_tile(marks, every, seg, end)) continue;
    sum_tile(seg, false);
    for (int l = 0; l < kLanes; ++l) {  // 4.
      Track tr = add_whole<W>(Words{v[l]}, &sums[t * kStride]);
      for (int i = 0; i < items; ++i) {
        const long long e = seg + static_cast<long long>(l) * items + i;
        add_tracked<W>(Words{v[l]}, place<Bits, P, EBITS>(e < n ? x[e] : Bits(0), base), tr);
        const Bits r = round_column<Bits, P, EBITS, W>(Words{v[l]}, tr, base);
        if (e < n && (every <= 0 || marks[e / every])) static_cast<Bits*>(out)[e] = r;
      }
    }
  }
}
template <typename Bits, int P, int EBITS>
void host_range(const void* in, long long n, int* range) {
  scancheck::RangeFold<Bits, P, EBITS> r;
  for (long long i = 0; i < n; ++i) r.add(static_cast<const Bits*>(in)[i]);
  range[0] = r.lo(), range[1] = r.hi(), range[2] = r.special;
}
// The certificate charged as it was first: 2^-104 (|a.hi| + |b.hi|) a node, whatever its
// additions did (a control: it refuses exact sums on a tie, which CertifiedAdd certifies).
struct ChargedAdd {
  scancheck::Certified operator()(const scancheck::Certified& a,
                                  const scancheck::Certified& b) const {
    scancheck::Certified r = scancheck::CertifiedAdd()(a, b);
    r.err = scancheck::add_ru(scancheck::add_ru(a.err, b.err),
                              scancheck::mul_ru(scancheck::add_ru(fabs(a.hi), fabs(b.hi)),
                                                0x1p-104));
    return r;
  }
};
// A bound that forgets w, the second of a node's two roundings (a control: it is exceeded).
struct ForgetfulAdd {
  scancheck::Certified operator()(const scancheck::Certified& a,
                                  const scancheck::Certified& b) const {
    scancheck::Certified r = scancheck::CertifiedAdd()(a, b);
    const double t = scancheck::add_rn(a.lo, b.lo);
    r.err = scancheck::add_ru(scancheck::add_ru(a.err, b.err),
                              scancheck::mul_ru(fabs(t), 0x1p-53));
    return r;
  }
};
// certified_scan's arithmetic on one CPU thread, its prefixes taken in one of two orders:
// left to right (chunk 0), or as the kernel's tiles join them, each chunk's values summed on
// their own and each output the running prefix (+) its chunk's values so far.  missed[i]: the
// rounding of output i is not certified.  control 1 trusts hi + lo as exact (err read as 0);
// control 2 charges each node as ChargedAdd does, control 3 as ForgetfulAdd.  parts (where
// not null): each output's hi, lo and err, three doubles an output.
template <typename Round, typename Add>
void certified_in_order(const void* in, void* out, unsigned char* missed, double* parts,
                        long long n, long long chunk, int trust) {
  using scancheck::Certified;
  const Add add;
  const Round round{};
  const auto* x = static_cast<const typename Round::In*>(in);
  auto* y = static_cast<typename Round::Out*>(out);
  auto emit = [&](long long i, Certified c) {
    if (parts) parts[3 * i] = c.hi, parts[3 * i + 1] = c.lo, parts[3 * i + 2] = c.err;
    if (trust) c.err = 0.0;
    const Round r{};
    y[i] = r.store(c);
    missed[i] = r.missed;
  };
  Certified prefix = scancheck::CertifiedAdd::identity();
  if (chunk <= 0) {
    for (long long i = 0; i < n; ++i) emit(i, prefix = add(prefix, round.load(x[i])));
    return;
  }
  for (long long s = 0; s < n; s += chunk) {
    const long long e = s + chunk < n ? s + chunk : n;
    Certified run = round.load(x[s]), total = run;
    emit(s, add(prefix, run));
    for (long long i = s + 1; i < e; ++i) {
      run = add(run, round.load(x[i]));
      emit(i, add(prefix, run));
    }
    for (long long i = s + 1; i < e; ++i) total = add(total, round.load(x[i]));
    prefix = add(prefix, total);
  }
}
template <typename Round>
void host_certified(const void* in, void* out, unsigned char* missed, double* parts,
                    long long n, long long chunk, int control) {
  if (control == 2)
    certified_in_order<Round, ChargedAdd>(in, out, missed, parts, n, chunk, 0);
  else if (control == 3)
    certified_in_order<Round, ForgetfulAdd>(in, out, missed, parts, n, chunk, 0);
  else
    certified_in_order<Round, scancheck::CertifiedAdd>(in, out, missed, parts, n, chunk,
                                                       control);
}
extern "C" void certified_float32(const void* in, void* out, unsigned char* missed,
                                  double* parts, long long n, long long chunk, int control) {
  host_certified<scancheck::CertifiedRound>(in, out, missed, parts, n, chunk, control);
}
extern "C" void certified_float64(const void* in, void* out, unsigned char* missed,
                                  double* parts, long long n, long long chunk, int control) {
  host_certified<scancheck::CertifiedRound64>(in, out, missed, parts, n, chunk, control);
}
extern "C" void fill_header(unsigned* words, const unsigned long long* firsts,
                            const int* range, const unsigned* marks) {
  scancheck::Header& h = *reinterpret_cast<scancheck::Header*>(words);
  for (int k = 0; k < 4; ++k) h.firsts[k] = firsts[k], h.range[k] = range[k], h.marks[k] = marks[k];
}
extern "C" int takes_certified(int lo, int hi, long long head, int min_bits) {
  return scancheck::takes_certified(lo, hi, head, min_bits);
}
extern "C" int writes_tile(const unsigned* marks, long long every, long long seg,
                           long long end) {
  return scancheck::columns::writes_tile(marks, every, seg, end);
}
// State's words for `tiles` block tiles, and where its parts start, in words: the block
// scans' counter and flags, the uncertified marks.
extern "C" long long state_layout(long long tiles, long long* at) {
  static unsigned base[1 << 16];
  const scancheck::State s(base, tiles);
  const unsigned* parts[] = {s.counter, reinterpret_cast<unsigned*>(s.flags), s.uncertified};
  for (int k = 0; k < 3; ++k) at[k] = parts[k] - base;
  return scancheck::State::words(tiles);
}
"""]
    for dtype, (bits, p, e) in FORMATS.items():
        lines.append(f'extern "C" void range_{dtype}(const void* in, long long n, int* r) '
                     f'{{ host_range<{bits}, {p}, {e}>(in, n, r); }}')
        for w in WIDTHS:
            lines.append(f'extern "C" void scan_{dtype}_{w}(const void* in, void* out, long long n,'
                         f' int base) {{ host_scan<{bits}, {p}, {e}, {w}>(in, out, n, base); }}')
            if w >= 2:  # the column scan's window is two words
                lines.append(f'extern "C" void columns_{dtype}_{w}(const void* in, void* out, '
                             f'long long n, int base, int items, const unsigned* marks, '
                             f'long long every, int per) {{ host_columns_scan<{bits}, {p}, '
                             f'{e}, {w}>(in, out, n, base, items, marks, every, per); }}')
    # Built once per machine and source, not by each worker of each session (3 CPU-s each).
    return ctypes.CDLL(str(nvcc_shared_library("\n".join(lines), out, ("-std=c++17", "-O1"))))


def host_span(lib, x: np.ndarray) -> tuple[int, int, bool]:
    """The exponent pass's (lo, hi, special) of ``x``, its arithmetic run on the CPU."""
    rng = np.array([np.iinfo(np.int32).max, np.iinfo(np.int32).min, 0, 0], dtype=np.int32)
    x = np.ascontiguousarray(x)
    getattr(lib, f"range_{x.dtype.name}")(x.ctypes.data_as(ctypes.c_void_p),
                                          ctypes.c_longlong(x.shape[0]),
                                          rng.ctypes.data_as(ctypes.POINTER(ctypes.c_int)))
    return int(rng[0]), int(rng[1]), bool(rng[2])


def span(x: np.ndarray) -> tuple[int, int, bool]:
    """(lo, hi, special) from the values themselves: the exponents of the lowest set bit and
    of the leading bit over the nonzero finite values (INT_MAX and INT_MIN for none), and
    whether any value is an infinity or NaN."""
    v = x.astype(np.float64)  # exact for every format the oracle reads
    finite = v[np.isfinite(v) & (v != 0)]
    special = not bool(np.isfinite(v).all())
    if not finite.size:
        return np.iinfo(np.int32).max, np.iinfo(np.int32).min, special
    m, e = np.frexp(np.abs(finite))  # |v| = m * 2**e, 1/2 <= m < 1
    ints = (m * 2.0**53).astype(np.uint64)  # the significand, an integer times 2**(e - 53)
    lowest = np.log2((ints & (~ints + np.uint64(1))).astype(np.float64)).astype(np.int64)
    return int((e - 53 + lowest).min()), int((e - 1).max()), special


def host_exact_scan(lib, x: np.ndarray, columns_from: int = COLUMNS_FROM, items: int = 3,
                    words: int = 0, per: int = 2) -> np.ndarray:
    """exact_scan_device's steps, with the kernels' arithmetic run on the CPU: the column scan
    from ``columns_from`` words, its lanes of ``items`` values, its tiles' sums scanned in
    chunks of ``per``, at ``words`` words where that is more than the data needs (any wider
    integer is as exact)."""
    x = np.ascontiguousarray(x)
    dtype = x.dtype.name
    lo, hi, special = host_span(lib, x)
    out = np.zeros_like(x)
    # As the device path: the values before the first infinity or NaN alone are scanned.
    finite = np.isfinite(x)
    n = int(np.argmin(finite)) if not finite.all() else x.shape[0]
    if lo <= hi and n:
        w = max(words_needed(lo, hi, n), words)
        assert w in WIDTHS, w
        args = (x.ctypes.data_as(ctypes.c_void_p), out.ctypes.data_as(ctypes.c_void_p),
                ctypes.c_longlong(n), ctypes.c_int(lo))
        if w >= columns_from:
            w = max(w, 2)  # the column scan's narrowest: its window is two words
            getattr(lib, f"columns_{dtype}_{w}")(*args, ctypes.c_int(items), None,
                                                  ctypes.c_longlong(0), ctypes.c_int(per))
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
@given(dtype=float_dtypes, dist=st.sampled_from(DISTRIBUTIONS), data=st.data())
def test_the_exponent_pass_finds_the_exact_span_of_the_data(host_oracle, dtype, dist, data):
    """The integers are as wide as the data needs and no wider: the exponent pass's lowest
    and leading bits are those of the values themselves, zeros, infinities and NaN apart
    (a pass that counted a zero's bits would widen them and stay exact, only slower)."""
    n = data.draw(st.integers(1, 300), label="n")
    x = data.draw(scan_data(n, dtype, dist), label="x")
    assert host_span(host_oracle, x) == span(x), f"{dist} {dtype}"


@needs_nvcc
@pytest.mark.parametrize("dtype", list(FORMATS))
def test_the_exponent_pass_finds_every_power_of_two(host_oracle, dtype):
    """A power of two's lowest set bit is its implicit one (a subnormal's, its fraction's):
    alone, below three times the next power, and beside -0.0 and an infinity."""
    info = finfo(dtype)
    p = SIGNIFICAND_BITS[dtype]
    for k in range(int(info.minexp) - (p - 1), int(info.maxexp) - 1):
        one = np.array([2.0**k], dtype=as_dtype(dtype))
        with np.errstate(over="ignore"):  # 6 * the largest power is an infinity: special
            six = one * 6
        for x in (one, np.concatenate([one, six]), np.concatenate([[-0.0], one, [np.inf]])):
            x = x.astype(as_dtype(dtype))
            assert host_span(host_oracle, x) == span(x), f"{dtype} 2**{k}"


@needs_nvcc
@given(dtype=float_dtypes, data=st.data())
def test_the_oracle_arithmetic_is_exact_over_the_whole_exponent_range(host_oracle, dtype, data):
    """Arbitrary finite floats: subnormals, the largest values and everything between, so
    the widest integers (34 words for float64) and rounding to infinity are met."""
    x = data.draw(finite_floats(dtype, max_size=200), label="x")
    assert_same_bits(host_exact_scan(host_oracle, x), exact_scan(x), dtype)


@needs_nvcc
@given(dtype=float_dtypes, dist=st.sampled_from(DISTRIBUTIONS), data=st.data())
def test_the_column_scan_equals_the_cpu_oracle_at_every_width(host_oracle, dtype, dist, data):
    """The column scan at any width, narrow data included, where its integers sit in the
    lowest words and a negative one is all ones above: lanes of a few values (many tiles,
    their sums scanned in chunks of 2 or 3, three levels and more, or in one chunk) or of many
    (a lane's carry counts at their largest)."""
    n = data.draw(st.integers(1, 800), label="n")
    x = data.draw(scan_data(n, dtype, dist), label="x")
    items = data.draw(st.sampled_from([1, 2, 3, 16, 127]), label="items")
    words = data.draw(st.sampled_from(WIDTHS), label="words")
    per = data.draw(st.sampled_from([2, 3, 64]), label="per")
    assert_same_bits(host_exact_scan(host_oracle, x, 1, items, words, per), exact_scan(x),
                     f"{dist} {dtype} items={items} words={words} per={per}")


@needs_nvcc
@given(data=st.data())
def test_the_column_scan_equals_the_cpu_oracle_on_wide_float64(host_oracle, data):
    """The data the column scan is for: float64 over the whole exponent range, 34 words."""
    n = data.draw(st.integers(1, 3000), label="n")
    x = data.draw(scan_data(n, "float64", "wide"), label="x")
    items = data.draw(st.sampled_from([1, 5, 16]), label="items")
    assert_same_bits(host_exact_scan(host_oracle, x, items=items), exact_scan(x),
                     f"items={items}")


def _adversarial(dtype: str) -> dict[str, np.ndarray]:
    """Sums that make the column scan's integers do all they can: cancel to nothing or to the
    lowest word, cross zero both ways, ripple a carry through every word, round to infinity,
    land on subnormals and on powers of two of 2**64 words."""
    info = finfo(dtype)
    tiny, big, top = float(info.smallest_subnormal), float(info.max), 2.0 ** (int(info.maxexp) - 1)
    ulp = big - float(np.nextafter(np.array(big, as_dtype(dtype)), as_dtype(dtype).type(0)))
    rng = np.random.default_rng(5)
    wide = rng.uniform(1, 2, 200) * np.exp2(rng.integers(int(info.minexp), int(info.maxexp) - 1,
                                                          200).astype(float))
    cases = {
        "x, -x pairs": np.ravel(np.column_stack([wide, -wide])),
        "x, -x pairs, then shuffled": rng.permutation(np.ravel(np.column_stack([wide, -wide]))),
        "nested": np.concatenate([wide[:50], -wide[:50][::-1]]),
        "crossing zero": np.array([tiny, -3 * tiny, top, -top, 5 * tiny, -top, top, -2 * tiny]),
        "a carry through every word": np.array([top, -tiny, tiny, -top, -tiny, top, tiny]),
        "a borrow through every word": np.array([-tiny, top, tiny, -top, tiny, -tiny]),
        "to infinity and back": np.array([big, big, -big, -big, -big, big, big]),
        "a tie past the largest": np.array([big, ulp / 2, -big, ulp / 2, ulp / 4, -big]),
        "subnormal results": np.array([3 * tiny, -2 * tiny, 4 * tiny, -7 * tiny,
                                       float(info.smallest_normal), -tiny, -tiny]),
        "-2**64 and -2**128 units": np.array([tiny, -tiny, -tiny * 2.0 ** 64, tiny * 2.0 ** 64,
                                              -tiny * 2.0 ** 128, -tiny, 2 * tiny]),
        "halfway cancellations": np.repeat([top, -top / 2, -top / 2, tiny], 9),
    }
    out = {}
    for name, values in cases.items():
        with np.errstate(over="ignore"):
            x = np.asarray(values, dtype=np.float64).astype(as_dtype(dtype))
        out[name] = x[np.isfinite(x)]
    return out


@needs_nvcc
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_the_column_scan_survives_adversarial_cancellation(host_oracle, dtype):
    for name, x in _adversarial(dtype).items():
        for items in (1, 2, 7, 16):
            for words in (0, 34):
                assert_same_bits(host_exact_scan(host_oracle, x, 1, items, words), exact_scan(x),
                                 f"{name} items={items} words={words}")


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
        for columns_from in (1, COLUMNS_FROM):
            assert_same_bits(host_exact_scan(host_oracle, x, columns_from), exact_scan(x),
                             f"{values}")


def _signed_terms(dtype: str, start: int, terms: list[tuple[int, int, int, int]]) -> np.ndarray:
    """sign * m * 2**(start + 64 * word + shift) for each term, in ``dtype``, the finite ones."""
    with np.errstate(over="ignore"):
        x = np.array([sign * m * 2.0 ** (start + 64 * word + shift)
                      for sign, word, shift, m in terms], dtype=np.float64).astype(dtype)
    return x[np.isfinite(x)]


@needs_nvcc
@given(dtype=st.sampled_from(["float32", "float64"]), data=st.data())
@example(dtype="float64", data=None)
def test_borrows_and_carries_across_words_round_exactly(host_oracle, dtype, data):
    """Signed values 64 bits apart, give or take a significand, some with every significand
    bit set: the prefixes' words are all ones or all zeros below their top, so carries and
    borrows cross words, and a negative prefix's negation carries into the rounding window
    or stops below it.  The explicit example (one Hypothesis found) has bits below a
    negative prefix's window and rounds just below a midpoint: one unit off at the window's
    foot rounds it the other way."""
    p = SIGNIFICAND_BITS[dtype]
    lowest = int(finfo(dtype).minexp) - (p - 1)
    if data is None:
        start, terms = lowest + 64, [(-1, 0, -11, 1), (-1, 1, 0, 2 ** p - 1), (-1, 1, 1, 1),
                                     (1, 0, 0, 1)]
    else:
        start = data.draw(st.integers(lowest, lowest + 64), label="start")
        terms = data.draw(st.lists(st.tuples(st.sampled_from([-1, 1]), st.integers(0, 3),
                                             st.integers(-p, p),
                                             st.sampled_from([1, 3, 2 ** p - 1])),
                                   min_size=1, max_size=10), label="terms")
    x = _signed_terms(dtype, start, terms)
    if x.size:
        for columns_from in (1, COLUMNS_FROM):
            assert_same_bits(host_exact_scan(host_oracle, x, columns_from), exact_scan(x),
                             f"{terms} from 2**{start}, columns from {columns_from}")


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


@given(data=st.data())
def test_the_overlay_writes_each_special_once_and_as_ieees_rules_say(data):
    """From the first special on, overlay_specials writes every output once and never reads
    the finite sums there; the result is the rules laid one after the other over every
    output (+inf from the first +inf, -inf from the first -inf, NaN from the first NaN or
    once both infinities were met, -0.0 while every input was -0.0)."""
    n = data.draw(st.integers(1, 60), label="n")
    pool = [1.5, -2.0, 0.0, -0.0, np.inf, -np.inf, np.nan]
    x = np.array(data.draw(st.lists(st.sampled_from(pool), min_size=n, max_size=n),
                           label="x"), dtype=np.float64)
    sums = np.arange(1, n + 1, dtype=np.float64)
    want = sums.copy()
    seen_pos = seen_neg = seen_nan = False
    for i, v in enumerate(x):
        seen_pos |= v == np.inf
        seen_neg |= v == -np.inf
        seen_nan |= bool(np.isnan(v))
        if seen_nan or (seen_pos and seen_neg):
            want[i] = np.nan
        elif seen_pos or seen_neg:
            want[i] = np.inf if seen_pos else -np.inf
    negzero = next((i for i, v in enumerate(x.view(np.uint64)) if v != 1 << 63), n)
    want[:negzero] = -0.0
    got = sums.copy()
    overlay_specials(x, got, np)
    assert_same_bits(got, want, f"{x!r}")


@pytest.mark.parametrize("dtype", list(FORMATS))
def test_each_format_compiles_the_widths_its_data_may_need_and_no_wider(dtype):
    """From the least subnormal's bit to the largest exponent (finfo's), at any length: the
    widest integer such data need is the format's widest instantiation."""
    info, p = finfo(dtype), SIGNIFICAND_BITS[dtype]
    lo, hi = int(info.minexp) - p + 1, int(info.maxexp) - 1
    assert widths(dtype)[-1] == words_needed(lo, hi, 2**63 - 1)
    assert {words_needed(lo, hi, n) for n in (1, 2**31, 2**62)} <= set(widths(dtype))
    scans = [re.fullmatch(r"exact_scan(_columns)?<.*, (\d+), \d+>", name)
             for module in instantiations(dtype) for name in module]
    assert {int(m.group(2)) for m in scans if m} == set(widths(dtype))


def test_widths_grow_with_the_span_and_the_length():
    assert words_needed(0, 23, 1000) == 1
    assert words_needed(-60, 2, 2**28) == 2
    assert words_needed(-1074, 1023, 2**34) == 34
    with pytest.raises(ValueError, match="over the 2176-bit integers"):
        words_needed(-1074, 1023, 2**80)


# -- the certified scan and its partial fallback, their arithmetic on the CPU -------------


def _ptr(a: np.ndarray) -> ctypes.c_void_p:
    return a.ctypes.data_as(ctypes.c_void_p)


def host_certified(lib, x: np.ndarray, chunk: int = 0, control: int = 0,
                   parts: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """certified_scan's arithmetic on the CPU over float32 or float64 ``x`` (specials read as
    0), its prefixes left to right (``chunk`` 0) or chunk by chunk as tiles join: its outputs,
    and for each whether its rounding was left uncertified.  ``control`` 1 trusts hi + lo as
    exact, 2 charges each node 2^-104 of its operands, as the first certificate did, 3
    forgets w's rounding in the bound.  Each prefix's (hi, lo, err) go to ``parts`` (n x 3
    doubles) where given."""
    x = np.ascontiguousarray(x)
    out = np.empty_like(x)
    missed = np.zeros(x.shape[0], dtype=np.uint8)
    getattr(lib, f"certified_{x.dtype.name}")(
        _ptr(x), _ptr(out), _ptr(missed), None if parts is None else _ptr(parts),
        ctypes.c_longlong(x.shape[0]), ctypes.c_longlong(chunk), ctypes.c_int(control))
    return out, missed.astype(bool)


def _finite_part(x: np.ndarray) -> np.ndarray:
    """``x`` as the certified scan reads it: infinities and NaN as 0, and -0.0 as +0.0 (the
    overlay of IEEE's rules, not the scan, gives a -0.0 prefix)."""
    return np.where(np.isfinite(x), x, 0).astype(x.dtype) + x.dtype.type(0)


def _wrongly_certified(x: np.ndarray, got: np.ndarray, missed: np.ndarray) -> list[int]:
    """The outputs said certified whose bits are not the CPU oracle's."""
    with np.errstate(over="ignore"):
        want = exact_scan(x)
    bits = f"u{x.itemsize}"
    return np.flatnonzero((got.view(bits) != want.view(bits)) & ~missed).tolist()


#: float32 values whose sum is a float32 tie plus 2**-149, which a double-double holds with
#: the 2**-149 lost (hi on the tie, lo 0) and an error bound of some 2**-51: the bound
#: straddles the tie, and hi alone would round it to even, down, where the sum rounds up.
_STRADDLED_TIE = np.array([2.0**-149, 2.0**100, 1.0, 2.0**76, -1.0], dtype=np.float32)


@needs_nvcc
@given(dtype=st.sampled_from(["float32", "float64"]), dist=st.sampled_from(DISTRIBUTIONS),
       chunk=st.sampled_from([0, 1, 7, 64]), data=st.data())
def test_the_certificate_is_the_exact_rounding_wherever_it_says_so(host_oracle, dtype, dist,
                                                                   chunk, data):
    """The certified scan's arithmetic (its bound, its certificate) in two orders of its
    prefixes: every output it certifies is the CPU oracle's bits, and each refusal lies
    within the bound's reach of a rounding boundary."""
    n = data.draw(st.integers(1, 2000), label="n")
    x = _finite_part(data.draw(scan_data(n, dtype, dist), label="x"))
    got, missed = host_certified(host_oracle, x, chunk)
    assert not _wrongly_certified(x, got, missed), f"{dist} {dtype} chunk={chunk}"
    assert not missed.any() or _near_a_boundary(x), f"{dist} {dtype}: refused, none near a tie"


def _outside_the_bound(x: np.ndarray, parts: np.ndarray) -> list[int]:
    """The prefixes whose hi + lo lies farther than err from the exact sum (in rationals),
    of those where no sum overflowed."""
    exact, outside = Fraction(0), []
    for i, v in enumerate(x.astype(np.float64)):
        exact += Fraction(float(v))
        hi, lo, err = parts[i]
        if np.isfinite(parts[i]).all() and abs(Fraction(hi) + Fraction(lo) - exact) > err:
            outside.append(i)
    return outside


@needs_nvcc
@given(dtype=st.sampled_from(["float32", "float64"]),
       dist=st.sampled_from(["wide", "factors", "cancellation", "subnormal", "uniform"]),
       chunk=st.sampled_from([0, 3, 16]), data=st.data())
def test_every_prefix_lies_within_its_error_bound(host_oracle, dtype, dist, chunk, data):
    """The error analysis the certificate stands on: at every prefix, in either order,
    |hi + lo - the exact sum| <= err, where no sum overflowed."""
    n = data.draw(st.integers(1, 300), label="n")
    x = _finite_part(data.draw(scan_data(n, dtype, dist), label="x"))
    parts = np.empty((n, 3))
    host_certified(host_oracle, x, chunk, parts=parts)
    assert not _outside_the_bound(x, parts), f"{dist} {dtype} chunk={chunk}"


@needs_nvcc
def test_a_bound_that_forgets_a_rounding_is_caught(host_oracle):
    """The control of the test above: a bound charged for t alone, not for w, is exceeded
    where w = fl(1 + 2**-149) drops 2**-149 (hi took 2**100, and lo the 1), and the same check
    finds it there; the bound itself covers it."""
    x = np.array([2.0**-149, 2.0**100, 1.0], dtype=np.float32)
    parts = np.empty((3, 3))
    host_certified(host_oracle, x, control=3, parts=parts)
    assert _outside_the_bound(x, parts) == [2]
    host_certified(host_oracle, x, parts=parts)
    assert not _outside_the_bound(x, parts)


@needs_nvcc
def test_a_certificate_that_trusts_the_double_double_is_caught(host_oracle):
    """The control of the test above: the same check on a certificate that reads hi + lo as
    the exact sum finds its wrong bits, on the tie that hi alone rounds the wrong way; the
    certificate itself refuses that output."""
    trusted, missed = host_certified(host_oracle, _STRADDLED_TIE, control=1)
    assert _wrongly_certified(_STRADDLED_TIE, trusted, missed) == [4]
    got, missed = host_certified(host_oracle, _STRADDLED_TIE)
    assert missed.tolist() == [False, False, False, False, True]
    assert not _wrongly_certified(_STRADDLED_TIE, got, missed)


def _exact_in_double(dtype: str, rng: np.random.Generator, n: int) -> np.ndarray:
    """Values whose every partial sum is a double: integers near 2**22 of both signs, so that
    float32 prefixes past 2**24 fall on ties and float64 ones cancel to 0 now and then."""
    k = rng.integers(2**21, 2**23, n) * rng.choice([-1, 1], n)
    if dtype == "float64":
        k = np.repeat(k[: -(-n // 2)], 2)[:n] * np.resize([1, -1], n)  # x, -x pairs: zeros
    return k.astype(as_dtype(dtype))


@needs_nvcc
@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("chunk", [0, 5])
def test_exact_sums_are_certified_ties_and_zeros_included(host_oracle, dtype, chunk):
    """Where every sum the scan takes is a double, each node adds nothing to the bound, and
    every prefix is certified: float32 ties past 2**24 round to even, float64 sums that cancel
    to 0 are +0.0.  The first certificate (a node charged 2^-104 of its operands however its
    additions went) refuses those, which the control below shows."""
    x = _exact_in_double(dtype, np.random.default_rng(11), 3000)
    got, missed = host_certified(host_oracle, x, chunk)
    assert not missed.any() and not _wrongly_certified(x, got, missed)
    charged, missed = host_certified(host_oracle, x, chunk, control=2)
    assert missed.any(), "the charged certificate refused nothing: the data test nothing"
    assert not _wrongly_certified(x, charged, missed)


@needs_nvcc
def test_the_certified_scans_gate_is_the_hosts_and_the_widths(host_oracle):
    """The kernel's takes_certified, the host's takes_certified and the widths agree: the
    certified scan runs exactly where words_needed comes to CERTIFIED words or more; with
    min_bits 0, wherever there is a value before the first special; never where none is."""
    for dtype, least in CERTIFIED.items():
        min_bits = certified_min_bits(dtype)
        for lo in range(-1100, 1100, 41):
            for span in (*range(0, 260, 3), 300, 383, 384, 385, 500, 1100, 2100):
                for head in (1, 2, 3, 7, 1000, 2**20, 2**28 - 1, 2**28, 2**33):
                    hi = lo + span
                    try:
                        want = words_needed(lo, hi, head) >= least
                    except ValueError:  # over the widest integers: not taken either way
                        continue
                    host = takes_certified(lo, hi, head, min_bits)
                    device = bool(host_oracle.takes_certified(lo, hi, ctypes.c_longlong(head),
                                                              min_bits))
                    assert want == host == device, (dtype, lo, hi, head)
    none = (np.iinfo(np.int32).max, np.iinfo(np.int32).min)
    for lo, hi, head, min_bits in [(*none, 5, 129), (0, 10, 0, 0), (0, 10, 0, 129),
                                   (*none, 5, 0), (3, 3, 1, 0)]:
        want = head > 0 and min_bits == 0
        assert takes_certified(lo, hi, head, min_bits) == want
        assert bool(host_oracle.takes_certified(lo, hi, ctypes.c_longlong(head), min_bits)) == want


@needs_nvcc
def test_the_hosts_view_of_a_calls_state_is_the_kernels(host_oracle):
    """state_words, uncertified_at and Header.parse read the buffer as the kernel's State
    and Header lay it out."""
    at = (ctypes.c_longlong * 3)()
    for n in (1, TILE - 1, TILE, TILE + 1, 5 * COLUMNS_TILE + 3, 40 * TILE + 17):
        tiles = -(-n // TILE)
        assert state_words(n) == host_oracle.state_layout(ctypes.c_longlong(tiles), at)
        assert list(at) == [HEADER_WORDS, HEADER_WORDS + 1, uncertified_at(tiles)]
        assert state_words(n) == uncertified_at(tiles) + tiles
    words = np.zeros(HEADER_WORDS, dtype=np.uint32)
    firsts = np.array([5, 2**40 + 3, 7, 2**33], dtype=np.uint64)
    ranges = np.array([-1074, 1023, 1, 0], dtype=np.int32)
    marks = np.array([1, 12, 345, 0], dtype=np.uint32)
    host_oracle.fill_header(_ptr(words), _ptr(firsts), _ptr(ranges), _ptr(marks))
    got = Header.parse(words)
    assert got.exponents == (-1074, 1023, True, (5, 2**40 + 3, 7, 2**33))
    assert (got.certified, got.uncertified, got.end) == (True, 12, 345)


@needs_nvcc
@given(dtype=st.sampled_from(["float32", "float64"]), dist=st.sampled_from(DISTRIBUTIONS),
       data=st.data())
def test_the_rescan_writes_the_marked_tiles_exactly_and_nothing_else(host_oracle, dtype, dist,
                                                                    data):
    """The partial fallback with the kernels' arithmetic on the CPU (host_columns_scan, the
    column scan's steps, and writes_tile, the kernel's choice of tiles): marks on tiles of
    ``every`` values, the scan over the values up to the last marked tile's end.  The column
    tiles that overlap a marked tile are walked; every output of a marked tile is the CPU
    oracle's (its prefix summed from every tile before it), and no other output is written."""
    n = data.draw(st.integers(1, 1500), label="n")
    x = _finite_part(data.draw(scan_data(n, dtype, dist), label="x"))
    items = data.draw(st.sampled_from([1, 2, 3]), label="items")
    per = data.draw(st.sampled_from([2, 3, 64]), label="per")
    every = data.draw(st.sampled_from([32 * items, 64 * items, 17, 100]), label="every")
    tiles = -(-n // every)
    marked = np.array(data.draw(st.lists(st.booleans(), min_size=tiles, max_size=tiles),
                                label="marks"), dtype=np.uint32)
    lo, hi, _ = host_span(host_oracle, x)
    if lo > hi:  # no nonzero value: the oracle fills zeros and scans nothing
        return
    bits = f"u{x.itemsize}"
    sentinel = np.array(0x7FC0DEAD if dtype == "float32" else 0x7FF8DEADDEADDEAD, dtype=bits)
    out = np.full_like(x.view(bits), sentinel).view(x.dtype)
    end = int(np.flatnonzero(marked).max()) + 1 if marked.any() else 0
    reach = min(n, end * every)  # as exact_device._rescan reaches
    if reach:
        w = max(words_needed(lo, hi, n), 2)
        getattr(host_oracle, f"columns_{dtype}_{w}")(
            _ptr(x), _ptr(out), ctypes.c_longlong(reach), ctypes.c_int(lo), ctypes.c_int(items),
            _ptr(marked), ctypes.c_longlong(every), ctypes.c_int(per))
    column = 32 * items
    for t in range(-(-reach // column)):  # a NumPy stand-in for writes_tile, tile by tile
        seg, stop = t * column, min((t + 1) * column, reach)
        assert bool(host_oracle.writes_tile(_ptr(marked), ctypes.c_longlong(every),
                                            ctypes.c_longlong(seg), ctypes.c_longlong(stop))
                    ) == marked[seg // every: -(-stop // every)].any(), (seg, stop)
    written = np.repeat(marked.astype(bool), every)[:n]  # every output of a marked tile
    want = exact_scan(x)
    assert (out.view(bits)[written] == want.view(bits)[written]).all(), f"{dist} {dtype}"
    assert (out.view(bits)[~written] == sentinel).all()


def _planted_ties(dtype: str, n: int, ties: list[int]) -> np.ndarray:
    """``n`` values of ``dtype`` whose prefix sums fall exactly on a tie of the format at the
    indices ``ties`` (increasing, 6 apart), each reached through an inexact double addition,
    so that the certified scan's bound is not 0 there and it refuses them; every other prefix
    lies far from a rounding boundary.  0.25, then 1.0s, the last value tiny (wide enough for
    the certified scan: 3 float32 words, 8 float64 ones), and over a - 2 .. a + 3 for each tie
    a: B, T, -k, k, -T, -B, where k is the prefix before them (0.25 + a whole number, so that
    k + B is no double), B + T a tie (T half an ulp of B), and the six sum to 0."""
    big, half, tiny = {"float32": (2.0**60, 2.0**36, 2.0**-100),
                       "float64": (2.0**52, 0.5, 2.0**-400)}[dtype]
    x = np.ones(n)
    x[0], x[-1] = 0.25, tiny
    for placed, a in enumerate(ties):
        j = a - 2
        assert j >= 1 and j + 6 < n and (not placed or a - ties[placed - 1] >= 6), ties
        k = 0.25 + (j - 1) - 6 * placed  # the ones before j, less those the patterns took
        x[j:j + 6] = [big, half, -k, k, -half, -big]
    return x.astype(as_dtype(dtype))


@needs_nvcc
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_planted_ties_are_the_prefixes_the_certificate_refuses(host_oracle, dtype):
    """The data of the partial fallback's device tests, checked with the certificate's own
    arithmetic in both orders (left to right; a tile's values on their own, joined as tiles
    are): the planted ties, at a tile's first and last value too, are refused, and no other
    prefix is."""
    n = 12 * TILE + 77
    ties = [TILE, 2 * TILE - 1, 5 * TILE + 300, 11 * TILE - 1, 12 * TILE + 10]
    x = _planted_ties(dtype, n, ties)
    assert words_needed(*host_span(host_oracle, x)[:2], n) >= CERTIFIED[dtype]
    for chunk in (0, TILE):
        got, missed = host_certified(host_oracle, x, chunk)
        assert np.flatnonzero(missed).tolist() == ties, f"{dtype} chunk={chunk}"
        assert not _wrongly_certified(x, got, missed)


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
@pytest.mark.parametrize(("dtype", "words"), [("float16", 2), ("float32", 3), ("float32", 5),
                                             ("float64", 8)])
@given(dist=st.sampled_from(DISTRIBUTIONS), data=st.data())
def test_the_device_column_scan_at_widths_the_data_does_not_need(dtype, words, dist, data):
    """The default path takes the column scan only where data needs COLUMNS_FROM words (wide
    float64 data); here narrower data takes it too, its integers in the lowest lanes of the
    look-back and its negative sums all ones above."""
    from scancheck.oracle import exact_device

    need = exact_device.words_needed
    n = data.draw(st.sampled_from([1, 2, 511, 512, 513, 4097, 65537, 300_001]), label="n")
    x = data.draw(scan_data(n, dtype, dist), label="x")
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(exact_device, "COLUMNS_FROM", 2)
        mp.setattr(exact_device, "CERTIFIED", {})  # the exact scan, not its filter
        mp.setattr(exact_device, "words_needed", lambda lo, hi, n: max(need(lo, hi, n), words))
        got = _to_host(exact_scan_device(_to_device(x)))
    assert_same_bits(got, exact_scan(x), f"{dist} {dtype} n={n} words={words}")


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
@pytest.mark.parametrize("dtype", list(FORMATS))
@given(data=st.data())
def test_where_ieees_rules_start_is_found_in_the_exponent_pass(dtype, data):
    """The first +inf, -inf and NaN and the end of a -0.0 prefix come from the exponent pass,
    which reads an unaligned head, 16-byte vectors and a tail: each special placed anywhere
    among them, in an array that starts off a 16-byte boundary, gives the CPU oracle's bits."""
    n = data.draw(st.integers(1, 5000), label="n")
    offset = data.draw(st.integers(0, 7), label="offset")
    x = np.zeros(n + offset, dtype=np.float64)
    # A drawn pattern repeated to n: 5000 drawn elements cost Hypothesis 50 ms an example
    # (a quarter of the GPU suite's test seconds), and what the pass reads is where the first
    # non-zero and the specials fall, which the draws below place anywhere.
    pattern = data.draw(st.lists(st.integers(-3, 3), min_size=1, max_size=64), label="values")
    x[offset:] = np.resize(pattern, n)
    x[offset:offset + data.draw(st.integers(0, n), label="negative zeros")] = -0.0
    for special in (np.inf, -np.inf, np.nan):
        at = data.draw(st.none() | st.integers(0, n - 1), label=f"{special} at")
        if at is not None:
            x[offset + at] = special
    x = x.astype(as_dtype(dtype))
    dev = _to_device(x)[offset:]
    assert_same_bits(_to_host(exact_scan_device(dev)), exact_scan(x[offset:]), dtype)


@pytest.mark.gpu
@pytest.mark.parametrize("dtype", list(FORMATS))
@given(dist=st.sampled_from(DISTRIBUTIONS), data=st.data())
def test_the_device_exponent_pass_finds_the_exact_span_of_the_data(dtype, dist, data):
    """The pass on the device: its unaligned head, its 16-byte vectors (finite ones folded
    by magnitude, others value by value) and its tail give the values' own span."""
    import cupy as cp

    from scancheck.oracle.exact_device import exponent_pass

    n = data.draw(st.sampled_from([1, 7, 8, 9, 100, 4097, 65537]), label="n")
    offset = data.draw(st.integers(0, 7), label="offset")
    x = data.draw(scan_data(n + offset, dtype, dist), label="x")
    bits = cp.asarray(x.view(f"u{x.itemsize}"))[offset:]
    lo, hi, special, _ = exponent_pass(bits, dtype)
    assert (lo, hi, special) == span(x[offset:]), f"{dist} {dtype} n={n} offset={offset}"


def _certified_only(x):
    """The certified scan alone over float32 or float64 data, whatever their width: the tiles
    (TILE values each) where it left a rounding uncertified, and its outputs with IEEE's
    rules laid over them (as the oracle lays them)."""
    import cupy as cp

    from scancheck.oracle.exact_device import certified_only

    out, tiles = certified_only(cp.asarray(x).view(f"u{x.itemsize}"), x.dtype.name)
    got = out.view(x.dtype).get()
    overlay_specials(x, got, np)
    return tiles, got


def _outside(tiles: np.ndarray, n: int) -> np.ndarray:
    """Whether each of n outputs lies outside the given tiles of TILE values."""
    return ~np.repeat(np.isin(np.arange(-(-n // TILE)), tiles), TILE)[:n]


#: Per format: significand bits, the exponent of its least unit, and of the least magnitude
#: the float64 certificate takes a rounding boundary for (below it, exact sums alone).
_UNITS = {"float32": (24, -149, None), "float64": (53, -1074, -1020)}


def _near_a_boundary(x: np.ndarray) -> bool:
    """Whether some prefix of ``x`` (specials read as 0, as the certified scan reads them)
    lies within the certified bound's reach of a rounding boundary of its format: an exact
    tie, a sum cancelled to a few units, or one within 2n * 2^-104 of the magnitudes summed
    (the bound adds 2^-104 of each operand at each of fewer than 2n tree levels); for
    float64 also a sum below 2^-1020 once a term was not zero, or magnitudes summed past the
    largest double."""
    p, least, floor = _UNITS[x.dtype.name]
    units = []  # each value an integer of its format's least units
    for v in np.where(np.isfinite(x), x, 0).astype(np.float64):
        m, e = math.frexp(float(v))
        k, shift = int(m * 2.0**53), e - 53 - least
        units.append(k << shift if shift >= 0 else k >> -shift)
    total = prefix = 0
    for u in units:
        prefix, total = prefix + u, total + abs(u)
        if floor is not None and total and (abs(prefix) < 1 << (floor - least)
                                            or total >= 1 << (1023 - least)):
            return True
        ulp = 1 << max(abs(prefix).bit_length() - p, 0)  # in units; 1 for subnormals
        twice_distance = abs(2 * (abs(prefix) % ulp) - ulp)  # to the midpoint of its ulp
        if twice_distance << 104 <= 4 * len(units) * total:
            return True
    return False


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_a_refusal_is_explained_only_near_a_tie(dtype):
    """The explanation the certified scan's test accepts for a refusal is no blanket one:
    exact sums and wide sums far from a tie have none; an exact tie, a sum cancelled to zero
    and a huge sum cancelled to a few units do (and for float64, a sum that leaves the
    range where the certificate takes boundaries)."""
    rng = np.random.default_rng(7)
    p = _UNITS[dtype][0]
    dt = as_dtype(dtype)
    assert not _near_a_boundary(rng.integers(1, 1000, 4097).astype(dt))
    wide = (rng.uniform(1, 2, 4097) * np.exp2(rng.integers(-100, 100, 4097))
            * rng.choice([-1, 1], 4097))
    assert not _near_a_boundary(wide.astype(dt))
    assert _near_a_boundary(np.array([1.0, 2.0**-p], dtype=dt))  # 1 + 2^-p: a tie
    assert _near_a_boundary(np.array([3.0, 1.0, -4.0], dtype=dt))
    assert _near_a_boundary(np.array([2.0**100, 1.5, -2.0**100], dtype=dt))
    if dtype == "float64":
        assert not _near_a_boundary(np.array([2.0**-1000, 2.0**900], dtype=dt))
        assert _near_a_boundary(np.array([2.0**-1021, 2.0**900], dtype=dt))
        assert _near_a_boundary(np.array([2.0**1023, 2.0**1023, -2.0**1023], dtype=dt))


@pytest.mark.gpu
@pytest.mark.parametrize("dtype", ["float32", "float64"])
@given(dist=st.sampled_from(DISTRIBUTIONS), data=st.data())
def test_the_certified_scan_is_the_exact_one_wherever_it_says_so(dtype, dist, data):
    """Whatever the data: every output outside the tiles the certified scan marks is the CPU
    oracle's bits (those tiles the exact scan writes again), and a tile is marked only where
    the certificate's own bound explains it."""
    n = data.draw(st.sampled_from([1, 2, 23, 2047, 2049, 4097, 65537, 300_001]), label="n")
    x = data.draw(scan_data(n, dtype, dist), label="x")
    tiles, got = _certified_only(x)
    with np.errstate(over="ignore"):
        want = exact_scan(x)
    kept = _outside(tiles, n)
    assert_same_bits(got[kept], want[kept], f"{dist} {dtype} n={n}")
    assert not tiles.size or _near_a_boundary(x), f"{dist} {dtype} n={n}: refused, none near a tie"


@pytest.mark.gpu
@pytest.mark.parametrize("values", [[2.0**-1074, 2.0**-1074, 3 * 2.0**-1074],
                                    [2.0**-1022, -(2.0**-1022), 2.0**-1074],
                                    [2.0**1023, 2.0**1023, -(2.0**1023)],
                                    [1.0, 2.0**-53, 2.0**-105], [1.0, 2.0**-53],
                                    [2.0**-1020, 2.0**-1072, -(2.0**-1073)]],
                         ids=["subnormal sums", "cancelled to a subnormal", "past the largest",
                              "just past a tie", "on a tie", "at the least normal boundary"])
def test_the_float64_certificate_at_the_ends_of_the_range_and_on_ties(values):
    """Where the float64 certificate has no boundary to take (sums below 2^-1020 that are
    not exact, a sum past the largest double, a tie) it refuses; wherever it certifies, the
    bits are the CPU oracle's, and the oracle as a whole gives them too."""
    import cupy as cp

    x = np.array(values, dtype=np.float64)
    with np.errstate(over="ignore"):
        want = exact_scan(x)
    tiles, got = _certified_only(x)
    if not tiles.size:
        assert_same_bits(got, want, f"{values}")
    else:
        assert _near_a_boundary(x), f"{values}: refused, but no prefix is near a boundary"
    assert_same_bits(exact_scan_device(cp.asarray(x)), want, f"{values}")


@pytest.mark.gpu
def test_a_tie_the_bound_straddles_is_left_to_the_exact_scan(monkeypatch):
    """_STRADDLED_TIE's last prefix lies 2**-149 past a float32 tie that hi holds, with a bound
    of some 2**-51: the certified scan marks its tile, hi alone would round it down, and the
    exact scan (at 4 words: the column scan, as the certified scan's fallback) rewrites that
    tile with the oracle's bits."""
    import cupy as cp

    from scancheck.oracle import exact_device

    x = _STRADDLED_TIE
    assert words_needed(-149, 100, x.shape[0]) >= CERTIFIED["float32"]
    tiles, _ = _certified_only(x)
    assert tiles.tolist() == [0]
    rescans = []
    real = exact_device._rescan
    monkeypatch.setattr(exact_device, "_rescan", lambda *a: rescans.append(a[3]) or real(*a))
    assert_same_bits(exact_scan_device(cp.asarray(x)), exact_scan(x))
    assert rescans == [1]  # 1 + the last tile marked


@pytest.mark.gpu
def test_a_double_double_on_a_tie_is_certified_on_the_side_its_low_part_gives():
    """2**-60 + 1 + 2**-24: hi holds the float32 tie 1 + 2**-24 exactly and lo the 2**-60
    that puts the sum past it, so the sum rounds up, and the certificate says so (an
    interval rounded outwards to doubles straddles the tie, as fresh wide data's did once
    in about 2**28 prefixes)."""
    x = np.array([2.0**-60, 1.0, 2.0**-24], dtype=np.float32)
    tiles, got = _certified_only(x)
    assert not tiles.size
    assert_same_bits(got, exact_scan(x))


@pytest.mark.gpu
@pytest.mark.slow
def test_fresh_wide_float32_data_are_certified_at_2_to_the_28():
    """Wide-range data drawn afresh (not the bench's tiles): every prefix certified, and
    the exact scan's bits (itself held to the CPU oracle above)."""
    import cupy as cp

    from scancheck.oracle import exact_device

    g = cp.random.default_rng(28)
    n = 2**28
    x = (g.uniform(1, 2, n) * cp.exp2(g.integers(-124, 101, n).astype(cp.float64))
         * (2 * g.integers(0, 2, n) - 1)).astype(cp.float32)
    got, tiles = exact_device.certified_only(x.view(cp.uint32), "float32")
    assert not tiles.size
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(exact_device, "CERTIFIED", {})
        want = exact_scan_device(x)
    assert bool((got == want.view(cp.uint32)).all())


@pytest.mark.gpu
@pytest.mark.parametrize(("dtype", "dist"), [("float32", "wide"), ("float64", "wide")])
def test_wide_data_take_the_certified_scan_alone(monkeypatch, dtype, dist):
    """Data spanning the whole float32 range (5 words) and wide float64 data (34 words, the
    column scan): every rounding certified, the exact scan never launched, the CPU oracle's
    bits.  (float64 factors are not: some of their prefixes are left uncertified, and the
    exact scan writes their tiles again.)"""
    import cupy as cp

    from scancheck.engine.strategies import generate_data
    from scancheck.oracle import exact_device

    def not_launched(*args, **kwargs):
        raise AssertionError("the exact scan ran")

    monkeypatch.setattr(exact_device, "_launch", not_launched)
    monkeypatch.setattr(exact_device, "_launch_columns", not_launched)
    x = generate_data(np.random.default_rng(5), 1_000_003, dtype, dist)
    lo, hi, _, _ = exact_device.exponent_pass(cp.asarray(x).view(f"u{x.itemsize}"), dtype)
    assert words_needed(lo, hi, x.shape[0]) >= exact_device.CERTIFIED[dtype]
    assert_same_bits(exact_scan_device(cp.asarray(x)), exact_scan(x), f"{dtype} {dist}")


def _count_rescans(monkeypatch) -> list[tuple[list[int], int, int]]:
    """exact_device._rescan, counted: for each call, the tiles the certified scan marked,
    the end it was given (1 + the last marked tile) and the column tiles it ran."""
    from scancheck.oracle import exact_device

    calls = []
    real = exact_device._rescan

    def counted(call, words, base, end, head):
        ran = real(call, words, base, end, head)
        calls.append((call.uncertified_tiles().tolist(), end, ran))
        return ran

    monkeypatch.setattr(exact_device, "_rescan", counted)
    return calls


@pytest.mark.gpu
@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("where", ["a few among many tiles", "a tile's first and last values",
                                   "every tile"])
@pytest.mark.parametrize("early", [True, False], ids=["read back once", "read back twice"])
def test_planted_ties_are_rescanned_alone_and_exactly(monkeypatch, dtype, where, early):
    """Ties the certificate refuses (_planted_ties), placed in a few of 301 tiles, at a tile's
    first and last value, or in every tile: the certified scan marks exactly their tiles, the
    exact scan runs once, over the values up to the last marked tile and no further, and the
    outputs are the CPU oracle's bits; with the certified scan launched before the exponent
    pass is read back, and after."""
    import cupy as cp

    from scancheck.oracle import exact_device

    n = 300 * TILE + 1234
    tiles = -(-n // TILE)
    rng = np.random.default_rng(3)
    if where == "every tile":
        ties = [t * TILE + 100 for t in range(tiles)]
    elif where == "a tile's first and last values":
        ties = [TILE, 2 * TILE - 1, 77 * TILE, 150 * TILE - 1, 300 * TILE]
    else:
        ties = sorted(int(t) * TILE + int(rng.integers(8, TILE - 8))
                      for t in rng.choice(tiles - 60, 5, replace=False))
    x = _planted_ties(dtype, n, ties)
    monkeypatch.setattr(exact_device, "EARLY_CERTIFIED_UP_TO", n if early else n - 1)
    calls = _count_rescans(monkeypatch)
    assert_same_bits(exact_scan_device(cp.asarray(x)), exact_scan(x), f"{dtype} {where}")
    planted = sorted({a // TILE for a in ties})
    assert len(calls) == 1, calls
    marked, end, ran = calls[0]
    assert marked == planted
    assert end == planted[-1] + 1 and ran == -(-min(n, end * TILE) // COLUMNS_TILE)


@pytest.mark.gpu
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_the_rescan_writes_the_marked_tiles_and_no_others(dtype):
    """The column scan as the fallback runs it, on marks set by hand over data the certified
    scan never saw: each marked tile holds the CPU oracle's bits, every other output is left
    as it was, and the scan runs over the tiles up to the last marked one alone."""
    import cupy as cp

    from scancheck.engine.strategies import generate_data
    from scancheck.oracle import exact_device

    n = 20 * TILE + 99
    x = generate_data(np.random.default_rng(2), n, dtype, "wide")
    bits = f"u{x.itemsize}"
    sentinel = 0x7FC0DEAD if dtype == "float32" else 0x7FF8DEADDEADDEAD
    out = cp.full(n, sentinel, dtype=bits)
    call = exact_device._Call(cp.asarray(x).view(bits), out, dtype)
    lo, hi, _, _ = call.read().exponents
    marked = [0, 3, 4, 11, 17]
    call.uncertified_marks()[cp.asarray(marked)] = 1
    ran = exact_device._rescan(call, words_needed(lo, hi, n), lo, marked[-1] + 1, n)
    assert ran == -(-18 * TILE // COLUMNS_TILE)
    written = ~_outside(np.array(marked), n)
    got, want = out.get(), exact_scan(x).view(bits)
    assert (got[written] == want[written]).all()
    assert (got[~written] == sentinel).all()


@pytest.mark.gpu
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_the_bench_factors_rescan_nothing_past_their_first_huge_factor(monkeypatch, dtype):
    """The bench's factors (2**22 values of seed 0): float32 sums of factors near 1 are exact
    in double until the first huge factor, and far from a tie after it, so every prefix is
    certified and the exact scan never runs; float64 ones are not exact in double and their
    ties before that factor are left uncertified, so the rescan reaches its tile and no
    further.  Bits equal to the CPU oracle's either way."""
    import cupy as cp

    from scancheck.engine.strategies import generate_data

    x = generate_data(np.random.default_rng(0), 2**22, dtype, "factors")
    first_huge = int(np.flatnonzero(np.abs(x.astype(np.float64)) > 2.0**10)[0])
    calls = _count_rescans(monkeypatch)
    assert_same_bits(exact_scan_device(cp.asarray(x)), exact_scan(x), dtype)
    if dtype == "float32":
        assert not calls
    else:
        assert len(calls) == 1 and calls[0][1] <= first_huge // TILE + 1, calls


@pytest.mark.gpu
@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("dist", DISTRIBUTIONS)
def test_the_device_oracle_on_every_distribution_the_bench_times(dtype, dist):
    """Each distribution ``scancheck bench`` times the oracle on, as it times it: values
    drawn once and tiled past themselves, many tiles, each path the widths choose (the
    certified scan and the exact one behind it, the column scan, the head before the first
    special), bit for bit the CPU oracle's."""
    import cupy as cp

    from scancheck.engine.strategies import generate_data

    part = generate_data(np.random.default_rng(0), 2**21, dtype, dist)
    x = np.tile(part, 3)[: 3 * 2**21 - 5]
    assert_same_bits(exact_scan_device(cp.asarray(x)), exact_scan(x), f"{dtype} {dist}")


@pytest.mark.gpu
@given(dist=st.sampled_from(DISTRIBUTIONS), data=st.data())
def test_the_exact_scan_behind_the_certified_one(dist, data):
    """The register path at float32's widest data, as it runs where a rounding is not
    certified."""
    from scancheck.oracle import exact_device

    n = data.draw(st.sampled_from([1, 2, 23, 2049, 65537, 300_001]), label="n")
    x = data.draw(scan_data(n, "float32", dist), label="x")
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(exact_device, "CERTIFIED", {})
        got = _to_host(exact_scan_device(_to_device(x)))
    assert_same_bits(got, exact_scan(x), f"{dist} n={n}")


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
