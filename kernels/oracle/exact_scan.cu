// scancheck's exact oracle on the device (scancheck/exact_device.py drives it).
//
// Every finite input x = (-1)^s * m * 2^e becomes the exact integer +-m * 2^(e - base) in
// W 64-bit words (two's complement), where base is the lowest set bit's exponent over the
// data, so nothing is lost; the host picks W so that every prefix sum fits.  The prefix
// sums are integer sums, taken by the decoupled look-back engine of
// kernels/decoupled_lookback.cu in one pass, and each is rounded once, to nearest, ties
// to even, straight from the integer to the output's bits.  Only integer instructions
// touch the data: no compiler flag (CuPy's -ftz=true included) can change a result.  The
// certified scan below is the exception: its conversions between float and double read
// subnormals as zero under -ftz=true, and would then certify wrong sums (2^-149 as +0), so
// this file is compiled only without it (IeeeModule, scancheck/core/cuda.py).
// Infinities and NaNs enter as 0 here; the host overlays IEEE's rules for them, as the
// CPU oracle does (scancheck/exact.py).
#include "../decoupled_lookback.cu"
#if !defined(__CUDACC_RTC__)
#include <cfenv>  // the certified scan's arithmetic on the CPU, in the tests
#include <cstring>
#endif

namespace scancheck {

// The arithmetic below is __host__ __device__: tests/test_exact_device.py runs it on the
// CPU against the CPU oracle, where no GPU is present.
__host__ __device__ __forceinline__ int clz64(unsigned long long v) {
#ifdef __CUDA_ARCH__
  return __clzll(static_cast<long long>(v));
#else
  return __builtin_clzll(v);
#endif
}

__host__ __device__ __forceinline__ int ctz64(unsigned long long v) {
#ifdef __CUDA_ARCH__
  return __ffsll(static_cast<long long>(v)) - 1;
#else
  return v ? __builtin_ctzll(v) : 64;
#endif
}

__host__ __device__ __forceinline__ int ctz32(unsigned v) {
#ifdef __CUDA_ARCH__
  return __ffs(static_cast<int>(v)) - 1;
#else
  return v ? __builtin_ctz(v) : 32;
#endif
}

// W words, least significant first.
template <int W>
struct __align__(8) Wide {
  unsigned long long w[W];
};

// v = -v modulo 2^(64W).  On the device the borrow runs through the carry flag (sub.cc and
// subc, two instructions a word), as the additions below do.
template <int W>
__host__ __device__ __forceinline__ void negate(Wide<W>& v) {
#ifdef __CUDA_ARCH__
  asm volatile("sub.cc.u64 %0, 0, %0;" : "+l"(v.w[0]));
#pragma unroll
  for (int k = 1; k < W; ++k) asm volatile("subc.cc.u64 %0, 0, %0;" : "+l"(v.w[k]));
#else
  unsigned long long carry = 1;
  for (int k = 0; k < W; ++k) {
    const unsigned long long s = ~v.w[k] + carry;
    carry = carry && s == 0;
    v.w[k] = s;
  }
#endif
}

// Integer addition modulo 2^(64W): exact, since the host sized W for the largest prefix.
template <int W>
struct WideAdd {
  using value_type = Wide<W>;
  __host__ __device__ static Wide<W> identity() {
    Wide<W> z;
#pragma unroll
    for (int k = 0; k < W; ++k) z.w[k] = 0;
    return z;
  }
  __host__ __device__ Wide<W> operator()(const Wide<W>& a, const Wide<W>& b) const {
    Wide<W> r;
#ifdef __CUDA_ARCH__
    asm volatile("add.cc.u64 %0, %1, %2;" : "=l"(r.w[0]) : "l"(a.w[0]), "l"(b.w[0]));
#pragma unroll
    for (int k = 1; k < W; ++k)
      asm volatile("addc.cc.u64 %0, %1, %2;" : "=l"(r.w[k]) : "l"(a.w[k]), "l"(b.w[k]));
#else
    unsigned long long carry = 0;
    for (int k = 0; k < W; ++k) {
      const unsigned long long s = a.w[k] + b.w[k];
      const unsigned long long c = s < a.w[k];
      r.w[k] = s + carry;
      carry = c | (r.w[k] < s);
    }
#endif
    return r;
  }
};

// The IEEE binary format of P significand bits and EBITS exponent bits, stored in Bits.
template <typename Bits, int P, int EBITS>
struct Format {
  static constexpr int kFrac = P - 1;
  static constexpr int kBias = (1 << (EBITS - 1)) - 1;
  static constexpr int kInfField = (1 << EBITS) - 1;
  static constexpr int kQmin = 2 - kBias - P;  // exponent of the smallest subnormal
  static constexpr unsigned long long kSign = 1ULL << (P - 1 + EBITS);

  // x = (-1)^neg * mant * 2^expo for finite x (mant < 2^P); false for infinities and NaN.
  __host__ __device__ static bool split(Bits b, bool& neg, unsigned long long& mant, int& expo) {
    const unsigned long long u = b;
    const int field = static_cast<int>((u >> kFrac) & kInfField);
    const unsigned long long frac = u & ((1ULL << kFrac) - 1);
    neg = (u & kSign) != 0;
    if (field == kInfField) return false;
    mant = field ? (frac | (1ULL << kFrac)) : frac;
    expo = (field ? field : 1) - kBias - kFrac;
    return true;
  }
};

// Word k of v, for a k known only at run time, without indexing a register array (which
// would move v to local memory).
template <int W>
__host__ __device__ __forceinline__ unsigned long long word_at(const Wide<W>& v, int k) {
  unsigned long long r = 0;
#pragma unroll
  for (int i = 0; i < W; ++i) r = (i == k) ? v.w[i] : r;
  return r;
}

// Where |b|'s fixed-point integer at exponent base lies: its bits lo in word `word` and hi
// in the word above, and b's sign.  Infinities and NaN give 0, as in FixedPoint::load.
struct Placed {
  unsigned long long lo, hi;
  int word;
  bool neg;
};

template <typename Bits, int P, int EBITS>
__host__ __device__ __forceinline__ Placed place(Bits b, int base) {
  unsigned long long mant;
  int expo;
  bool neg;
  if (!Format<Bits, P, EBITS>::split(b, neg, mant, expo) || mant == 0) return {0, 0, 0, false};
  int off = expo - base;
  if (off < 0) {  // exact: base is at most the exponent of mant's lowest set bit
    mant >>= -off;
    off = 0;
  }
  const int bit = off & 63;
  return {mant << bit, bit ? mant >> (64 - bit) : 0, off >> 6, neg};
}

// (hi * 2^64 + lo) * 2^wbase, plus a sticky part below 2^wbase when sticky is set, rounded
// once to the format: nearest, ties to even, overflow to infinity.  With sticky set, the
// lead bit must lie 64 bits or more above wbase, so the sticky part is below the rounding bit.
// Any result: round128 below takes this for subnormal ones alone.
template <typename Bits, int P, int EBITS>
__host__ __device__ Bits round128_any(unsigned long long hi, unsigned long long lo, bool sticky,
                                      int wbase) {
  using F = Format<Bits, P, EBITS>;
  if (!(hi | lo)) return 0;
  const int lead = (hi ? 127 - clz64(hi) : 63 - clz64(lo)) + wbase;
  const int last = lead - P + 1;
  const int quantum = last > F::kQmin ? last : F::kQmin;  // exponent of the last place
  const int drop = quantum - wbase;  // bits of the window below it: at most 127, since every
                                    // nonzero value is at least 2^base >= 2^kQmin
  unsigned long long keep;
  if (drop <= 0) {
    keep = lo << -drop;  // the value is below 2^(P + wbase): nothing to round
  } else {
    keep = drop >= 64 ? hi >> (drop - 64) : (lo >> drop) | (hi << (64 - drop));
    const int h = drop - 1;  // the rounding bit; everything below it is sticky
    bool half, rest;
    if (h >= 64) {
      half = (hi >> (h - 64)) & 1;
      rest = lo != 0 || (hi & ((1ULL << (h - 64)) - 1)) != 0;
    } else {
      half = (lo >> h) & 1;
      rest = (lo & ((1ULL << h) - 1)) != 0;
    }
    keep += half && (rest || sticky || (keep & 1));
  }
  // keep <= 2^P: adding the field steps makes a carry out of the significand (keep ==
  // 2^P, or a subnormal rounding up to 2^(P-1)) step the exponent field, as IEEE's
  // encoding is built to.
  const long long steps = quantum - F::kQmin;
  const unsigned long long inf = static_cast<unsigned long long>(F::kInfField) << (P - 1);
  unsigned long long bits = steps >= F::kInfField ? inf : keep + (steps << (P - 1));
  if (bits > inf) bits = inf;
  return static_cast<Bits>(bits);
}

// round128_any's result, for a normal (or overflowing) one in a few instructions: the 64
// bits from the lead bit down (one funnel shift) hold the P kept bits and the rounding bit,
// and everything below them only says whether it is zero.  The wide oracle rounds every
// prefix through here.
template <typename Bits, int P, int EBITS>
__host__ __device__ __forceinline__ Bits round128(unsigned long long hi, unsigned long long lo,
                                                  bool sticky, int wbase) {
  using F = Format<Bits, P, EBITS>;
  static_assert(P < 63, "the rounding bit lies in the top 64 bits");
  int s;  // bits above the lead bit in the 128-bit window
  unsigned long long top, below;
  if (hi) {
    s = clz64(hi);
    top = s ? (hi << s) | (lo >> (64 - s)) : hi;
    below = lo << s;
  } else {
    if (!lo) return 0;
    s = 64 + clz64(lo);
    top = lo << (s - 64);
    below = 0;
  }
  const int last = 127 - s + wbase - P + 1;  // exponent of the last kept place
  if (last < F::kQmin) return round128_any<Bits, P, EBITS>(hi, lo, sticky, wbase);
  unsigned long long keep = top >> (64 - P);
  const bool half = (top >> (63 - P)) & 1;
  const bool rest = (top & ((1ULL << (63 - P)) - 1)) != 0 || below != 0 || sticky;
  keep += half && (rest || (keep & 1));
  // As in round128_any: keep <= 2^P, and a carry out of the significand steps the field.
  const long long steps = last - F::kQmin;
  const unsigned long long inf = static_cast<unsigned long long>(F::kInfField) << (P - 1);
  unsigned long long bits = steps >= F::kInfField ? inf : keep + (steps << (P - 1));
  if (bits > inf) bits = inf;
  return static_cast<Bits>(bits);
}

// A non-negative v * 2^base rounded once: its top two words (the top nonzero word and the
// one below, or words 1 and 0) and a sticky bit for any word below them.
template <typename Bits, int P, int EBITS, int W>
__host__ __device__ __forceinline__ Bits round_magnitude(const Wide<W>& v, int base) {
  int top = 1;
#pragma unroll
  for (int k = 2; k < W; ++k) top = v.w[k] ? k : top;
  bool sticky = false;
#pragma unroll
  for (int k = 0; k + 2 < W; ++k) sticky |= k < top - 1 && v.w[k] != 0;
  return round128<Bits, P, EBITS>(word_at(v, top), word_at(v, top - 1), sticky,
                                  base + 64 * (top - 1));
}

template <typename Bits, int P, int EBITS, int W>
struct FixedPoint {
  using In = Bits;
  using Out = Bits;
  using F = Format<Bits, P, EBITS>;
  // From two words, placing a value twice costs less than holding ITEMS of them (measured).
  static constexpr bool kRecompute = W >= 2;
  static constexpr bool kStaged = false;  // kRecompute's order instead (lookback_scan)
  int base;

  __host__ __device__ static Bits pad() { return 0; }

  __host__ __device__ Wide<W> load(Bits b) const {
    const Placed x = place<Bits, P, EBITS>(b, base);
    Wide<W> r;
#pragma unroll
    for (int k = 0; k < W; ++k) r.w[k] = k == x.word ? x.lo : (k == x.word + 1 ? x.hi : 0);
    if (x.neg) negate(r);
    return r;
  }

  // v * 2^base rounded once to the format: nearest, ties to even, overflow to infinity.
  __host__ __device__ Bits store(Wide<W> v) const {
    const bool neg = (v.w[W - 1] >> 63) != 0;
    if (neg) negate(v);
    const Bits mag = round_magnitude<Bits, P, EBITS>(v, base);
    return static_cast<Bits>(neg ? (mag | F::kSign) : mag);
  }
};

}  // namespace scancheck

// -- A call's state -----------------------------------------------------------------------
//
// What one call of the oracle keeps on the device besides its data and the tiles' sums: one
// buffer of 32-bit words, set by oracle_prepare, sized by State::words (exact_device's
// state_words) and its header read back by the host in one copy:
//   the header: the exponent pass's results, then the certified scan's marks;
//   the look-back of the scans a block a tile (the certified scan or the register scan: one
//     of them runs in a call): its ticket counter and a flag a tile;
//   a word a tile, set where the certified scan left a rounding of the tile uncertified.
namespace scancheck {

struct Header {
  unsigned long long firsts[4];  // the first +inf, -inf, NaN, value not -0.0 (n: none)
  int range[4];                  // lo, hi, whether any value is special; a pad
  unsigned marks[4];             // certified_scan's: whether it ran, how many tiles it left
                                 // uncertified, 1 + the last of them (0: none); a pad
};
static_assert(sizeof(Header) == 64, "exact_device.HEADER_WORDS is 16");

struct State {
  static constexpr long long kHeaderWords = sizeof(Header) / 4;
  Header* header;
  unsigned* counter;
  int* flags;
  unsigned* uncertified;

  // The state of a call whose block scans have `tiles` tiles.
  __host__ __device__ State(unsigned* base, long long tiles)
      : header(reinterpret_cast<Header*>(base)),
        counter(base + kHeaderWords),
        flags(reinterpret_cast<int*>(base + kHeaderWords + 1)),
        uncertified(base + kHeaderWords + 1 + tiles) {}

  // Words of the buffer for `tiles` block tiles.
  __host__ __device__ static long long words(long long tiles) {
    return kHeaderWords + 1 + 2 * tiles;
  }
};

}  // namespace scancheck

// A call's state (`words` words) set to where a call starts: the exponent pass's firsts at n
// (none met) and its range at the identities of the minimum and maximum it takes, every other
// word 0.  One launch, and no copy from the host, which waits for it.
__global__ void oracle_prepare(unsigned* state, long long words, long long n) {
  using scancheck::State;
  const long long stride = static_cast<long long>(gridDim.x) * blockDim.x;
  for (long long i = State::kHeaderWords + static_cast<long long>(blockIdx.x) * blockDim.x +
                     threadIdx.x;
       i < words; i += stride)
    state[i] = 0;
  if (blockIdx.x == 0 && threadIdx.x == 0) {
    scancheck::Header& h = *reinterpret_cast<scancheck::Header*>(state);
    for (int k = 0; k < 4; ++k) {
      h.firsts[k] = static_cast<unsigned long long>(n);
      h.marks[k] = 0;
    }
    h.range[0] = 0x7fffffff;
    h.range[1] = -0x7fffffff - 1;
    h.range[2] = h.range[3] = 0;
  }
}

// The exact inclusive scan of n values in the format (Bits, P, EBITS), W words wide, a block
// a tile: its look-back in the state of a call of `tiles` tiles, the tiles' sums in status
// (aggregates, then inclusive prefixes: 2 * tiles).
template <typename Bits, int P, int EBITS, int W, int ITEMS>
__global__ void exact_scan(const Bits* __restrict__ in, Bits* __restrict__ out, long long n,
                           int base, unsigned* state, long long tiles,
                           scancheck::Wide<W>* status) {
  using namespace scancheck;
  const State s(state, tiles);
  const TileStatus<Wide<W>> look{s.flags, status, status + tiles, nullptr};
  lookback_scan<Wide<W>, WideAdd<W>, ITEMS>(in, out, n, s.counter, look,
                                           FixedPoint<Bits, P, EBITS, W>{base});
}

// The certified scan: float32 or float64 prefix sums taken in double-double arithmetic and
// rounded only where that rounding is proven to be the exact sum's; each tile where one is not
// is marked, and the host has the exact scan write those tiles alone (exact_scan_columns,
// below).  Data spanning the whole float32 range need 5 words there (about 370 integer
// instructions a value, compute-bound), the float64 range 34 (the column scan); here a value
// costs about 30 double additions.
//
// Why the rounding holds where it is certified.  A node c = a (+) b below computes
// s + e = a.hi + b.hi exactly (two_sum), t = fl(a.lo + b.lo), w = fl(e + t), and
// hi + lo = s + w exactly (two_sum again), so hi + lo is a + b less the errors of t and w.
// Rounded to nearest, an addition errs by at most u = 2^-53 times its result (a sum below the
// normal range is exact), so the node adds u (|t| + |w|), rounded up, to err: nothing where
// both additions were exact.  That is never more than 2^-104 (|a.hi| + |b.hi|): |lo| <= u|hi|
// holds for every operand (leaves have lo = 0, two_sum leaves it so), hence
// |t| + |w| <= 3u (1 + u)^2 (|a.hi| + |b.hi|).  A prefix is a tree of such nodes over its
// terms, so its hi + lo is within its err of the exact sum; where hi + lo lies farther than
// err inside the rounding boundaries of a float32 (CertifiedRound::rounds_to), that float32 is
// the exact sum's rounding.  Where err is 0, every addition the tree took was exact: w was 0 at
// every node, so lo is 0 and hi is the exact sum, and both certificates below take it as
// such, ties and zeros included (the exact sums of float32 terms within some 29 bits of each
// other: integers, factors near 1).  Every float32 term is a multiple of 2^-149 and the sums
// stay below 2^170 (2^42 terms), so no double overflows, and the scaling by 2^-53 is exact
// (every nonzero |t| or |w| is at least 2^-149).  Elsewhere a prefix fails to certify only
// within err of a float32 tie (an exact tie included), or after cancellation of some 80 bits.
//
// float64 data (CertifiedRound64) keep the bound: a sum of two doubles that lies below the
// normal range is a multiple of 2^-1074 below 2^-1022, a double itself, so no addition loses
// a bit to underflow either; only the scaling by 2^-53 may, and it is rounded up.  A sum
// past the largest double makes hi, lo or err an infinity or a NaN, and every prefix from
// there on uncertified (infinities and NaNs stay so through the additions).  The rounding
// boundaries of a float64 are its midpoints with its neighbours, hi +- half an ulp, exact
// in double down to |hi| >= 2^-1020 (below it a prefix is certified only when exact).
namespace scancheck {

// Double arithmetic rounded as named (rn: to nearest, ties to even; ru: up; rd: down).  On
// the device the intrinsics, which also keep the compiler from fusing or reordering what the
// error analysis counts on; on the CPU (tests/oracle/test_exact_device.py) the same operation
// under fesetround, through volatiles, so that it is done inside its rounding mode.
#ifdef __CUDA_ARCH__
__device__ __forceinline__ double add_rn(double a, double b) { return __dadd_rn(a, b); }
__device__ __forceinline__ double add_ru(double a, double b) { return __dadd_ru(a, b); }
__device__ __forceinline__ double add_rd(double a, double b) { return __dadd_rd(a, b); }
__device__ __forceinline__ double sub_rn(double a, double b) { return __dsub_rn(a, b); }
__device__ __forceinline__ double sub_rd(double a, double b) { return __dsub_rd(a, b); }
__device__ __forceinline__ double mul_ru(double a, double b) { return __dmul_ru(a, b); }
#else
inline double host_rounded(int mode, double a, double b, char op) {
  const int old = std::fegetround();
  std::fesetround(mode);
  volatile double x = a, y = b;
  volatile double r = op == '+' ? x + y : op == '-' ? x - y : x * y;
  std::fesetround(old);
  return r;
}
inline double add_rn(double a, double b) { return host_rounded(FE_TONEAREST, a, b, '+'); }
inline double add_ru(double a, double b) { return host_rounded(FE_UPWARD, a, b, '+'); }
inline double add_rd(double a, double b) { return host_rounded(FE_DOWNWARD, a, b, '+'); }
inline double sub_rn(double a, double b) { return host_rounded(FE_TONEAREST, a, b, '-'); }
inline double sub_rd(double a, double b) { return host_rounded(FE_DOWNWARD, a, b, '-'); }
inline double mul_ru(double a, double b) { return host_rounded(FE_UPWARD, a, b, '*'); }
#endif

// v's bits read as a To of the same size: a float's or double's bits, and back.
template <typename To, typename From>
__host__ __device__ __forceinline__ To bit_cast(const From& v) {
  static_assert(sizeof(To) == sizeof(From), "the same bits");
  To r;
  memcpy(&r, &v, sizeof(To));
  return r;
}

// A double rounded to float32, to nearest.
__host__ __device__ __forceinline__ float to_float_rn(double d) {
#ifdef __CUDA_ARCH__
  return __double2float_rn(d);
#else
  return static_cast<float>(d);  // the host's rounding mode is to nearest outside host_rounded
#endif
}

struct __align__(8) Certified {
  double hi, lo;  // the prefix sum, hi + lo, |lo| <= 2^-53 |hi|
  double err;     // a bound on |hi + lo - the exact sum|
};

// s + e = a + b exactly (Knuth's TwoSum).
__host__ __device__ __forceinline__ void two_sum(double a, double b, double& s, double& e) {
  s = add_rn(a, b);
  const double bb = sub_rn(s, a);
  e = add_rn(sub_rn(a, sub_rn(s, bb)), sub_rn(b, bb));
}

struct CertifiedAdd {
  using value_type = Certified;
  __host__ __device__ static Certified identity() { return {0.0, 0.0, 0.0}; }
  __host__ __device__ Certified operator()(const Certified& a, const Certified& b) const {
    double s, e;
    two_sum(a.hi, b.hi, s, e);
    const double t = add_rn(a.lo, b.lo);
    const double w = add_rn(e, t);
    Certified r;
    two_sum(s, w, r.hi, r.lo);
    r.err = add_ru(add_ru(a.err, b.err), mul_ru(add_ru(fabs(t), fabs(w)), 0x1p-53));
    return r;
  }
};

// float32 bits in, float32 bits out; `missed` is set where a rounding is not certified (the
// kernel then marks the tile, whose outputs the exact scan writes again).
struct CertifiedRound {
  using In = unsigned;
  using Out = unsigned;
  static constexpr bool kRecompute = true;  // 24 bytes a value: converted twice, not held
  static constexpr bool kStaged = false;
  mutable bool missed = false;

  __host__ __device__ static unsigned pad() { return 0; }

  __host__ __device__ Certified load(unsigned b) const {
    // Infinities and NaN enter as 0, as in FixedPoint::load.  The conversion is exact,
    // subnormals included (the module is compiled without flushing them).
    const double v = ((b >> 23) & 0xff) == 0xff ? 0.0 : static_cast<double>(bit_cast<float>(b));
    return {v, 0.0, 0.0};
  }

  // Whether hi + lo, give or take err, lies strictly between the rounding boundaries of the
  // float32 f > 0 (bits): the midpoints with its neighbours, exact in double (past the
  // largest float, 2^128 - 2^103, from which IEEE rounds to infinity).  Each distance is
  // taken rounded down, so one found positive is.
  __host__ __device__ static bool rounds_to(unsigned f, double hi, double lo, double err) {
    constexpr double kOverflow = 0x1p128 - 0x1p103;
    if (f >= 0x7f800000u) return sub_rd(add_rd(hi, lo), err) >= kOverflow;
    const double mid = static_cast<double>(bit_cast<float>(f));
    const double below = 0.5 * (mid + static_cast<double>(bit_cast<float>(f - 1)));
    const double above =
        f == 0x7f7fffffu ? kOverflow : 0.5 * (mid + static_cast<double>(bit_cast<float>(f + 1)));
    return sub_rd(add_rd(sub_rd(hi, below), lo), err) > 0.0 &&
           sub_rd(sub_rd(sub_rd(above, hi), lo), err) > 0.0;
  }

  __host__ __device__ unsigned store(const Certified& c) const {
    // The exact sum is a multiple of 2^-149, as hi is: within less than that of hi, it is
    // hi (so are sums of subnormals, +0 where every term so far is zero, and every sum whose
    // err is 0 and lo 0, ties included).
    if (add_ru(c.err, fabs(c.lo)) < 0x1p-149) return bit_cast<unsigned>(to_float_rn(c.hi));
    // |sum| = hi + lo within err rounds to hi's rounding f or, where hi lies on a tie, to its
    // neighbour on lo's side.  (Rounding the ends hi -+ err outwards to doubles instead made
    // them a double's ulp apart at least, and about one prefix in 2^28 lay within that of a
    // float32 tie: fresh wide data at 2^28 and 2^30 went on to the exact scan, measured.)
    const bool neg = c.hi < 0.0;
    const double hi = fabs(c.hi), lo = neg ? -c.lo : c.lo;
    unsigned f = bit_cast<unsigned>(to_float_rn(hi));
    bool certified = f != 0u && rounds_to(f, hi, lo, c.err);
    if (!certified && f != 0u && f < 0x7f800000u && lo != 0.0) {
      f = lo > 0.0 ? f + 1 : f - 1;
      certified = f != 0u && rounds_to(f, hi, lo, c.err);
    }
    missed = missed || !certified;
    return neg ? f | 0x80000000u : f;
  }
};

// float64 bits in, float64 bits out, as CertifiedRound for float32 (see above).
struct CertifiedRound64 {
  using In = unsigned long long;
  using Out = unsigned long long;
  static constexpr bool kRecompute = true;
  static constexpr bool kStaged = false;
  mutable bool missed = false;

  __host__ __device__ static unsigned long long pad() { return 0; }

  __host__ __device__ Certified load(unsigned long long b) const {
    // Infinities and NaN enter as 0, as in FixedPoint::load.
    const double v = ((b >> 52) & 0x7ff) == 0x7ff ? 0.0 : bit_cast<double>(b);
    return {v, 0.0, 0.0};
  }

  // hi is the double nearest hi + lo (two_sum makes it so); the exact sum, within err of
  // hi + lo, rounds to hi where it lies strictly inside hi's rounding boundaries, half an
  // ulp below (a quarter at a power of two: the double below is nearer) and above.  Each
  // distance is taken rounded down, so one found positive is.
  __host__ __device__ unsigned long long store(const Certified& c) const {
    constexpr double kMax = 0x1.fffffffffffffp1023;
    const bool neg = c.hi < 0.0;
    const double hi = fabs(c.hi), lo = neg ? -c.lo : c.lo;
    const unsigned long long bits = bit_cast<unsigned long long>(hi);
    const int field = static_cast<int>(bits >> 52);
    bool certified = false;
    if (hi <= kMax && fabs(lo) <= kMax && c.err <= kMax) {  // NaN compares false
      // Where err is 0, lo is 0 and hi the exact sum: the checks below would certify it too.
      // Taken first, it keeps ptxas (nvcc 13, sm_90) at 62 registers a thread, not 94: four
      // blocks of 256 threads an SM, not two.
      if (c.err == 0.0) {
        certified = true;
      } else if (field >= 3) {
        const double above = scalbn(1.0, field - 1076);
        const double below = (bits & ((1ULL << 52) - 1)) ? above : 0.5 * above;
        certified = sub_rd(add_rd(below, lo), c.err) > 0.0 &&
                    sub_rd(sub_rd(above, lo), c.err) > 0.0;
      } else {  // the exact sum and hi are multiples of 2^-1074, less than that apart: equal
        certified = add_ru(c.err, fabs(lo)) < 0x1p-1074;
      }
    }
    missed = missed || !certified;
    return hi == 0.0 ? 0ULL : neg ? bits | (1ULL << 63) : bits;  // an exact zero is +0.0
  }
};

// Whether the certified scan takes a call's data (exact_device.takes_certified says the same
// on the host): there are values before the first infinity or NaN (head of them), and their
// prefixes, with bits in [2^lo, 2^(hi+1)), need at least min_bits bits (0: any data), so that
// the exact scan would be at least as wide as the certified scan is worth.
__host__ __device__ inline bool takes_certified(int lo, int hi, long long head, int min_bits) {
  if (head <= 0) return false;
  if (min_bits <= 0) return true;
  const int length = 64 - clz64(static_cast<unsigned long long>(head));  // head's bit length
  return lo <= hi && (hi - lo + 1) + length + 1 >= min_bits;
}

}  // namespace scancheck

// The inclusive scan of the values before the first infinity or NaN, in Round's format (see
// above: CertifiedRound for float32, CertifiedRound64), certified where it is written, in a
// call's state of `tiles` tiles (the look-back's, the tiles' sums in status: 2 * tiles).  It
// reads the exponent pass's results from the state and runs only where takes_certified says
// (every block leaves at once otherwise), so that the host may launch it before it reads
// them; where it runs, it notes so in the header, and marks every tile it leaves a rounding
// of uncertified: State::uncertified, and in the header their count and 1 + the last.  Blocks
// past the head draw no tile.
template <typename Round, int ITEMS>
__global__ void certified_scan(const typename Round::In* __restrict__ in,
                               typename Round::Out* __restrict__ out, unsigned* state,
                               long long tiles, int min_bits, scancheck::Certified* status) {
  using namespace scancheck;
  const State s(state, tiles);
  Header& h = *s.header;
  long long head = static_cast<long long>(h.firsts[0]);
  for (int k = 1; k < 3; ++k) head = min(head, static_cast<long long>(h.firsts[k]));
  if (!takes_certified(h.range[0], h.range[1], head, min_bits)) return;
  if (static_cast<long long>(blockIdx.x) * blockDim.x * ITEMS >= head) return;
  if (blockIdx.x == 0 && threadIdx.x == 0) h.marks[0] = 1u;
  const TileStatus<Certified> look{s.flags, status, status + tiles, nullptr};
  const Round round{};
  const long long tile = lookback_scan<Certified, CertifiedAdd, ITEMS>(in, out, head, s.counter,
                                                                      look, round);
  if (__syncthreads_or(round.missed) && threadIdx.x == 0) {
    s.uncertified[tile] = 1u;
    atomicAdd(&h.marks[1], 1u);
    atomicMax(&h.marks[2], static_cast<unsigned>(tile + 1));
  }
}

namespace scancheck {

// The unsigned integer the exponent pass reads a format's bits in: 32 bits for the 2- and
// 4-byte formats (a 16-bit one costs as much), 64 for float64.
template <bool kWide>
struct RangeWord {
  using type = unsigned;
};
template <>
struct RangeWord<true> {
  using type = unsigned long long;
};

// The exponent pass's running state over values met one at a time: the largest finite
// magnitude's bits, the least key of a nonzero finite one, and whether any was an infinity
// or NaN.  A magnitude's bits a (the sign cleared) order as the magnitudes do, so the top
// bit's exponent over the data is that of the largest a, found once at the end; and a
// nonzero finite value's lowest set bit lies at exponent
//   max(field, 1) + min(ctz(a), kFrac) - kBias - kFrac
// (the significand's lowest set bit is the fraction's when that is nonzero, else the
// implicit bit), so the key is the first two terms.  Each value costs a few 32-bit
// instructions for 2- and 4-byte formats: splitting each one, as this pass did before, made
// it compute-bound at 58 instructions a float32 value (0.81 ms at 2^28 on an H100).
template <typename Bits, int P, int EBITS>
struct RangeFold {
  using F = Format<Bits, P, EBITS>;
  using U = typename RangeWord<sizeof(Bits) == 8>::type;
  static constexpr U kMag = static_cast<U>(F::kSign - 1);
  static constexpr U kInf = static_cast<U>(F::kInfField) << F::kFrac;
  static constexpr int kNone = 0x7fffffff;
  U largest = 0;
  int key = kNone;
  int special = 0;

  __host__ __device__ static U magnitude(Bits b) { return static_cast<U>(b) & kMag; }

  // The lowest set bit of a finite magnitude's bits (its largest is folded apart).
  __host__ __device__ __forceinline__ void low(U a) {
    const int field = static_cast<int>(a >> F::kFrac);
    const int tz = sizeof(U) == 8 ? ctz64(a) : ctz32(static_cast<unsigned>(a));
    const int k = (field > 1 ? field : 1) + (tz < F::kFrac ? tz : F::kFrac);
    key = a && k < key ? k : key;
  }

  __host__ __device__ __forceinline__ void add(Bits b) {
    const U a = magnitude(b);
    if (a >= kInf) {
      special = 1;
    } else {
      largest = a > largest ? a : largest;
      low(a);
    }
  }

  // The lowest set bit's exponent over the nonzero finite values (INT_MAX for none).
  __host__ __device__ int lo() const { return key == kNone ? kNone : key - F::kBias - F::kFrac; }

  // The leading bit's exponent over them (INT_MIN for none).
  __host__ __device__ int hi() const {
    bool neg;
    unsigned long long mant;
    int expo;
    if (!largest || !F::split(static_cast<Bits>(largest), neg, mant, expo)) return -kNone - 1;
    return expo + 63 - clz64(mant);
  }
};

}  // namespace scancheck

// Where IEEE's rules start, for the host's overlay (exact_device.overlay_specials): the
// first +inf, -inf and NaN, and the first value that is not -0.0 (the end of a -0.0 prefix),
// kept in f as the indices met so far.  A thread meets its indices in increasing order, so
// the first one it meets of each kind is its least.
template <typename Bits, int P, int EBITS>
__device__ __forceinline__ void note_firsts(Bits b, long long i, long long (&f)[4]) {
  using F = scancheck::Format<Bits, P, EBITS>;
  const unsigned long long u = b;
  const bool special = ((u >> F::kFrac) & F::kInfField) == F::kInfField;
  const bool nan = special && (u & ((1ULL << F::kFrac) - 1)) != 0;
  const bool neg = (u & F::kSign) != 0;
  if (special && !nan && !neg && i < f[0]) f[0] = i;
  if (special && !nan && neg && i < f[1]) f[1] = i;
  if (nan && i < f[2]) f[2] = i;
  if (u != F::kSign && i < f[3]) f[3] = i;
}

// One value met alone (the unaligned head and the tail, and every value of a vector that
// holds an infinity or a NaN).
template <typename Bits, int P, int EBITS>
__device__ __forceinline__ void meet(Bits b, long long i, scancheck::RangeFold<Bits, P, EBITS>& r,
                                     long long (&f)[4]) {
  r.add(b);
  note_firsts<Bits, P, EBITS>(b, i, f);
}

// The header's range = (lo, hi, special) over all n values and its firsts = note_firsts' four
// indices over all of them, from where oracle_prepare starts them: (INT_MAX, INT_MIN, 0) and
// n (none).  The body reads 16-byte vectors, as the scan does, so this pass costs one read of
// the data at memory speed, and the host's overlay of IEEE's rules needs no pass of its own
// (four searches of the data took the oracle from 2 to 18 times torch.cumsum's time on
// float32 data with infinities).  A vector of finite values (almost every one) only folds
// its magnitudes; the indices are looked at only for a vector holding an infinity or NaN,
// and for the end of a -0.0 prefix until the thread has met it.  One atomic per block, not
// per warp, keeps the words cool.
template <typename Bits, int P, int EBITS>
__global__ void exponent_range(const Bits* __restrict__ in, long long n,
                               scancheck::Header* header) {
  using namespace scancheck;
  int* range = header->range;
  unsigned long long* firsts = header->firsts;
  using R = RangeFold<Bits, P, EBITS>;
  using U = typename R::U;
  constexpr int kPer = 16 / sizeof(Bits);
  R r;
  long long f[4] = {n, n, n, n};
  const long long tid = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x;
  const long long stride = static_cast<long long>(gridDim.x) * blockDim.x;
  const long long misaligned = reinterpret_cast<unsigned long long>(in) % 16 / sizeof(Bits);
  const long long head = misaligned ? (kPer - misaligned < n ? kPer - misaligned : n) : 0;
  const long long vectors = (n - head) / kPer;
  if (tid < head) meet<Bits, P, EBITS>(in[tid], tid, r, f);
  const uint4* body = reinterpret_cast<const uint4*>(in + head);
  for (long long i = tid; i < vectors; i += stride) {
    union {
      uint4 v;
      Bits b[kPer];
    } u;
    u.v = __ldcs(&body[i]);
    const long long at = head + i * kPer;
    U largest = 0;
#pragma unroll
    for (int k = 0; k < kPer; ++k) {
      const U a = R::magnitude(u.b[k]);
      largest = a > largest ? a : largest;
    }
    if (largest < R::kInf) {
      r.largest = largest > r.largest ? largest : r.largest;
#pragma unroll
      for (int k = 0; k < kPer; ++k) r.low(R::magnitude(u.b[k]));
      if (f[3] == n) {  // the thread has met only -0.0 so far
#pragma unroll
        for (int k = 0; k < kPer; ++k)
          if (u.b[k] != static_cast<Bits>(R::F::kSign) && f[3] == n) f[3] = at + k;
      }
    } else {
#pragma unroll
      for (int k = 0; k < kPer; ++k) meet<Bits, P, EBITS>(u.b[k], at + k, r, f);
    }
  }
  for (long long i = head + vectors * kPer + tid; i < n; i += stride)
    meet<Bits, P, EBITS>(in[i], i, r, f);
  int lo = r.lo(), hi = r.hi(), special = r.special;
#pragma unroll
  for (int off = 16; off > 0; off /= 2) {
    lo = min(lo, __shfl_xor_sync(0xffffffffu, lo, off));
    hi = max(hi, __shfl_xor_sync(0xffffffffu, hi, off));
    special |= __shfl_xor_sync(0xffffffffu, special, off);
#pragma unroll
    for (int k = 0; k < 4; ++k) f[k] = min(f[k], __shfl_xor_sync(0xffffffffu, f[k], off));
  }
  __shared__ int partial[3][32];
  __shared__ long long partial_firsts[4][32];
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32, nwarps = blockDim.x / 32;
  if (lane == 0) {
    partial[0][warp] = lo;
    partial[1][warp] = hi;
    partial[2][warp] = special;
#pragma unroll
    for (int k = 0; k < 4; ++k) partial_firsts[k][warp] = f[k];
  }
  __syncthreads();
  if (threadIdx.x == 0) {
    for (int w = 1; w < nwarps; ++w) {
      lo = min(lo, partial[0][w]);
      hi = max(hi, partial[1][w]);
      special |= partial[2][w];
#pragma unroll
      for (int k = 0; k < 4; ++k) f[k] = min(f[k], partial_firsts[k][w]);
    }
    atomicMin(&range[0], lo);
    atomicMax(&range[1], hi);
    if (special) atomicOr(&range[2], 1);
#pragma unroll
    for (int k = 0; k < 4; ++k)
      if (f[k] < n) atomicMin(&firsts[k], static_cast<unsigned long long>(f[k]));
  }
}

// -- Wide data: one integer per thread, in shared memory -----------------------------------
//
// In registers, a thread's W-word integer costs O(W) a value: a register array cannot be
// indexed at run time, so placing a value, adding it and finding the words to round each
// select over all W words (about one torch.cumsum of time a word).  Here each thread's
// integer lives in shared memory, where a value touches only its two words k and k + 1,
// a carry ripples on only while words overflow (usually not at all), and rounding reads
// only the two words at the top, which the thread tracks as it adds.  O(W) work is left
// once per thread, not per value.  Each warp scans one tile of 32 * ITEMS values, a lane
// owning ITEMS consecutive ones (a warp, not a block: no barrier, no block-wide scan):
//   1. each lane sums its values in carry-save form (a word's carries are counted beside
//      it, so no addition ripples: a running sum changes sign often, and every sign change
//      of a two's-complement integer ripples through all the words above the value);
//   2. the warp scans its lanes' sums a word at a time, lowest first, each lane carrying its
//      own carry into the next word: each lane's exclusive prefix within the tile,
//      normalized, and the tile's sum;
//   3. the tiles' sums are scanned on their own (reduce, then scan: column_prefixes, two
//      words a lane, as many lanes as the width needs), giving each tile its prefix;
//   4. each lane adds the tile's prefix to its own, finds its top word once, and walks its
//      values again, rounding each prefix from the two words at its top.
// The arithmetic is __host__ __device__: the CPU tests run it with a warp's lanes in turn
// and each lane's integer in a plain array.
namespace scancheck {
namespace columns {

// Word k of one thread's integer lives at p[k * S].  On the device a warp's 32 integers
// interleave (S = 32): lane l's word k sits 8 bytes past lane l-1's, so a warp reading
// each lane's word k, whatever k each lane reads, hits every bank evenly.
template <typename T, int S>
struct Column {
  T* p;
  __host__ __device__ __forceinline__ T& operator[](int k) const { return p[k * S]; }
};

// v += x in carry-save form: the carry out of word k (-1 for a borrow) goes to the count
// c[k], worth 2^64 words k, not into word k + 1.  A value adds to a word once at most (as
// its low or its high part), so |c[k]| <= the values added: a signed char holds ITEMS.
template <int W, int S>
__host__ __device__ __forceinline__ void add_carry_save(Column<unsigned long long, S> v,
                                                        Column<signed char, S> c,
                                                        const Placed& x) {
  const int k = x.word;
  const unsigned long long a = v[k];
  v[k] = x.neg ? a - x.lo : a + x.lo;
  c[k] = static_cast<signed char>(c[k] + (x.neg ? -(a < x.lo) : (a + x.lo < a)));
  if (k + 1 < W) {  // hi is 0 when k is the top word: every value fits in W words
    const unsigned long long b = v[k + 1];
    v[k + 1] = x.neg ? b - x.hi : b + x.hi;
    c[k + 1] = static_cast<signed char>(c[k + 1] + (x.neg ? -(b < x.hi) : (b + x.hi < b)));
  }
}

// lo + hi * 2^64, two's complement: a word of a carry-save integer with its carries, and
// sums of such words over a warp (|hi| <= 32 * 2, far inside an int).
struct Sum128 {
  unsigned long long lo;
  int hi;
};

__host__ __device__ __forceinline__ Sum128 add(Sum128 a, Sum128 b) {
  const unsigned long long lo = a.lo + b.lo;
  return {lo, a.hi + b.hi + (lo < a.lo ? 1 : 0)};
}

__host__ __device__ __forceinline__ Sum128 sub(Sum128 a, Sum128 b) {
  return {a.lo - b.lo, a.hi - b.hi - (a.lo < b.lo ? 1 : 0)};
}

__host__ __device__ __forceinline__ Sum128 widen(int c) {
  return {static_cast<unsigned long long>(static_cast<long long>(c)), c < 0 ? -1 : 0};
}

// Word k of a carry-save integer with the carries out of word k - 1 (below = c[k-1]).
__host__ __device__ __forceinline__ Sum128 digit(unsigned long long word, int below) {
  return add({word, 0}, widen(below));
}

// Word k of a normalized sum whose digits at k sum to d, given the carry into word k;
// carry becomes the carry out (signed: a borrow is -1).
__host__ __device__ __forceinline__ unsigned long long settle(Sum128 d, int& carry) {
  const Sum128 s = add(d, widen(carry));
  carry = s.hi;
  return s.lo;
}

// What rounding a normalized integer v needs without reading it whole: ext, the word its
// sign extends with (0 or all ones); top, its highest word that is not ext (0 if none);
// nonzero, how many of its W words are not 0.
struct Track {
  unsigned long long ext;
  int top, nonzero;
};

// v += p over all W words (p the tile's prefix, the same for every lane), and v's Track.
template <int W, int S>
__host__ __device__ __forceinline__ Track add_whole(Column<unsigned long long, S> v,
                                                    const unsigned long long* p) {
  Track t{0, 0, 0};
  int top0 = 0, top1 = 0;  // highest word that is not 0, not all ones
  unsigned long long carry = 0, s = 0;
  for (int k = 0; k < W; ++k) {
    const unsigned long long a = v[k], b = a + p[k];
    s = b + carry;
    carry = (b < a) | (s < b);
    v[k] = s;
    t.nonzero += s != 0;
    top0 = s != 0 ? k : top0;
    top1 = s != ~0ULL ? k : top1;
  }
  t.ext = (s >> 63) ? ~0ULL : 0ULL;
  t.top = t.ext ? top1 : top0;
  return t;
}

// v += x (v -= |x| when x is negative) on a normalized v, keeping t.  A carry (or borrow)
// out of word k + 1 ripples on while the words above pass it on: far from every time,
// except when v changes sign (then up through the sign extension).  The top can only move
// where the addition reached it: at or above it, the new top is searched for downward from
// the highest word written (one or two steps, unless the top cancelled out).
template <int W, int S>
__host__ __device__ __forceinline__ void add_tracked(Column<unsigned long long, S> v,
                                                     const Placed& x, Track& t) {
  const int k = x.word;
  const bool neg = x.neg;
  const unsigned long long a = v[k];
  unsigned long long last = neg ? a - x.lo : a + x.lo;
  bool carry = neg ? a < x.lo : last < a;
  v[k] = last;
  t.nonzero += (last != 0) - (a != 0);
  int j = k;
  if (k + 1 < W) {
    const unsigned long long b = v[k + 1];
    const unsigned long long u = neg ? b - x.hi : b + x.hi;
    const bool over = neg ? b < x.hi : u < b;
    last = neg ? u - carry : u + carry;
    carry = over | (neg ? u < static_cast<unsigned long long>(carry) : last < u);
    v[k + 1] = last;
    t.nonzero += (last != 0) - (b != 0);
    j = k + 1;
    // A word passes a carry on when +1 wraps it to 0, a borrow when -1 wraps it to ones.
    const unsigned long long wrap = neg ? ~0ULL : 0ULL, step = wrap | 1ULL;
    while (carry && j + 1 < W) {
      ++j;
      const unsigned long long o = v[j];
      last = o + step;
      v[j] = last;
      t.nonzero += (last != 0) - (o != 0);
      carry = last == wrap;
    }
  }
  if (j == W - 1) t.ext = (last >> 63) ? ~0ULL : 0ULL;
  if (j >= t.top) {  // the words above j are t.ext: above the old top, or past the end
    int i = j;
    while (i > 0 && v[i] == t.ext) --i;
    t.top = i;
  }
}

// v * 2^base rounded once: bit for bit FixedPoint::store, from v's two top words (words
// top and top - 1, or 1 and 0).  For v < 0, |v| = ~v + 1: the +1 reaches the window only
// when the words below it are all zero, and |v|'s words below it are nonzero exactly when
// v's are.  Both are told by t.nonzero, less the window's nonzero words and the ext words
// above it (nonzero for v < 0).
template <typename Bits, int P, int EBITS, int W, int S>
__host__ __device__ __forceinline__ Bits round_column(Column<unsigned long long, S> v,
                                                      const Track& t, int base) {
  static_assert(W >= 2, "the window is two words");
  const int top = t.top > 0 ? t.top : 1;
  const unsigned long long hi = v[top], lo = v[top - 1];
  const bool neg = t.ext != 0;
  const bool sticky = t.nonzero - (hi != 0) - (lo != 0) - (neg ? W - 1 - top : 0) != 0;
  const int wbase = base + 64 * (top - 1);
  if (!neg) return round128<Bits, P, EBITS>(hi, lo, sticky, wbase);
  unsigned long long mhi = ~hi, mlo = ~lo;
  Bits mag;
  if (!sticky && ++mlo == 0 && ++mhi == 0) {
    mag = round128<Bits, P, EBITS>(1, 0, false, wbase + 64);  // |v| = 2^128 * 2^wbase
  } else {
    // With sticky set the top word of |v| is ~hi != 0: the lead bit is 64 bits or more
    // above wbase, as round128 asks.
    mag = round128<Bits, P, EBITS>(mhi, mlo, sticky, wbase);
  }
  return static_cast<Bits>(mag | Format<Bits, P, EBITS>::kSign);
}

// A warp's shared memory in the column scan: the tile's values as read, padded as
// kernels/decoupled_lookback.cu pads them (each lane rounds its values in place, and the
// outputs leave from there), then the lanes' integers (Integers, kIntegerBytes).  The values
// stay in shared memory, not registers, so that the loops over them need not be unrolled:
// unrolled, the walk of 16 values took 100 registers and more code than the instruction cache
// holds.  Summing a tile needs no stage (column_sums: kIntegerBytes a warp).
// scancheck/oracle/exact_device.py's columns_smem sizes it the same way.
template <typename Bits, int W, int ITEMS>
struct Layout {
  static constexpr int kStage = pad<Bits>(32 * ITEMS);
  static constexpr int kStageWords = (kStage * static_cast<int>(sizeof(Bits)) + 7) / 8;
  // The lanes' integers (32 * W words), W words (the tile's sum, then its prefix), then the
  // lanes' carry counts (32 * W bytes).
  static constexpr int kIntegerBytes = 8 * (32 * W + W) + 32 * W;
  static constexpr int kBytes = 8 * kStageWords + kIntegerBytes;
  // Words of a tile's sum in global memory: two a lane.
  static constexpr int kStride = W + (W & 1);
  static_assert(kStride <= 64, "a warp holds an integer at two words a lane");
  static_assert(ITEMS <= 127, "a lane's carry counts are signed chars");
};

constexpr unsigned kFull = 0xffffffffu;

// Two words of a wide integer a lane (lane l: words 2l and 2l + 1): how a warp adds two
// integers (warp_add) and moves one to or from global memory.
struct LaneWords {
  unsigned long long lo, hi;
};

// One lane's part of v + a, before carries between lanes: gen says the lane carries out,
// prop that it would pass a carry on (all ones).
struct LaneSum {
  LaneWords s;
  bool gen, prop;
};

__host__ __device__ __forceinline__ LaneSum lane_sum(LaneWords v, LaneWords a) {
  const unsigned long long s0 = v.lo + a.lo;
  const unsigned long long c0 = s0 < a.lo;
  unsigned long long s1 = v.hi + a.hi;
  bool gen = s1 < a.hi;
  const unsigned long long t = s1 + c0;
  gen = gen || t < s1;  // at most one of the two can carry out
  s1 = t;
  return {{s0, s1}, gen, (s0 & s1) == ~0ULL};
}

// The carry into every lane, from the lanes' generate and propagate masks: the carries of
// the 32-bit sum gen + (gen | prop) are exactly the carries of the wide addition, so one
// integer addition replaces a 32-step ripple.
__host__ __device__ __forceinline__ unsigned lane_carries(unsigned gen, unsigned prop) {
  const unsigned either = gen | prop;
  return (gen + either) ^ gen ^ either;
}

__host__ __device__ __forceinline__ LaneWords lane_finish(LaneSum s, unsigned carries, int lane) {
  const unsigned long long c = (carries >> lane) & 1u;
  const unsigned long long lo = s.s.lo + c;
  return {lo, s.s.hi + (lo < c)};
}

// v += a over the warp (modulo 2^4096: words past W are never read).
__device__ __forceinline__ void warp_add(LaneWords& v, LaneWords a, int lane) {
  const LaneSum s = lane_sum(v, a);
  v = lane_finish(s, lane_carries(__ballot_sync(kFull, s.gen), __ballot_sync(kFull, s.prop)),
                  lane);
}

// A lane's two words of an integer in global memory (the tiles' sums), in one 16-byte access
// each way; lanes past the width hold 0.  For odd W the top lane moves one word past W too:
// the stride leaves room for it, and no word past W is read.
template <int W>
__device__ __forceinline__ LaneWords load_pair(const unsigned long long* p, int lane) {
  if (2 * lane >= W) return {0, 0};
  const ulonglong2 v = *reinterpret_cast<const ulonglong2*>(p + 2 * lane);
  return {v.x, v.y};
}

template <int W>
__device__ __forceinline__ void store_pair(unsigned long long* p, LaneWords v, int lane) {
  if (2 * lane < W) *reinterpret_cast<ulonglong2*>(p + 2 * lane) = make_ulonglong2(v.lo, v.hi);
}

// Whether the column tile of values [seg, end) has outputs to write: every tile does where
// every <= 0; else a tile does that overlaps a tile of `every` values (the certified scan's,
// numbered from 0) that uncertified marks.
__host__ __device__ inline bool writes_tile(const unsigned* uncertified, long long every,
                                            long long seg, long long end) {
  if (every <= 0) return true;
  for (long long c = seg / every; c * every < end; ++c)
    if (uncertified[c]) return true;
  return false;
}

// A warp's integers in shared memory (Layout::kIntegerBytes from `words`): lane l's word k at
// v[k], its carry count at c[k], and the tile's sum or prefix.
template <int W>
struct Integers {
  Column<unsigned long long, 32> v;
  unsigned long long* tile_words;
  Column<signed char, 32> c;

  __device__ Integers(unsigned long long* words, int lane)
      : v{words + lane}, tile_words(words + 32 * W),
        c{reinterpret_cast<signed char*>(words + 33 * W) + lane} {}
};

// 2. Word by word, lowest first: each word's sum over the lanes up to this one (a
// Kogge-Stone scan of 128-bit sums), less this lane's own for the exclusive prefix, and each
// lane's carries on into the next word.  Each lane's integer becomes its exclusive prefix
// within the tile, normalized, and the tile's sum goes to tile_words (lane 31 writes it: the
// warp syncs before reading it).
template <int W>
__device__ __forceinline__ void scan_lanes(const Integers<W>& m, int lane) {
  int carry_ex = 0, carry_in = 0;
#pragma unroll 2
  for (int k = 0; k < W; ++k) {
    const Sum128 d = digit(m.v[k], k > 0 ? m.c[k - 1] : 0);
    Sum128 inc = d;
#pragma unroll
    for (int off = 1; off < 32; off *= 2) {
      const Sum128 o{__shfl_up_sync(kFull, inc.lo, off), __shfl_up_sync(kFull, inc.hi, off)};
      if (lane >= off) inc = add(o, inc);
    }
    m.v[k] = settle(sub(inc, d), carry_ex);
    const unsigned long long total = settle(inc, carry_in);
    if (lane == 31) m.tile_words[k] = total;
  }
}

template <int W>
__device__ __forceinline__ void clear(const Integers<W>& m) {
  for (int k = 0; k < W; ++k) {
    m.v[k] = 0;
    m.c[k] = 0;
  }
}

// The exact inclusive scan's outputs of column tile `tile`, its exclusive prefix read from
// sums: the tile staged, each lane's ITEMS consecutive values summed (step 1) and scanned
// across the lanes (step 2), each lane's integer set to its prefix, its values walked and
// rounded (step 4); where every > 0 only the outputs of marked tiles of `every` values are
// stored.  Not inlined: in the kernel's loop over tiles the compiler kept every tile load's
// address live across iterations (254 registers, against 56).
template <typename Bits, int P, int EBITS, int W, int ITEMS>
__device__ __noinline__ void write_tile(const Bits* __restrict__ in, Bits* __restrict__ out,
                                        long long n, int base, const unsigned* uncertified,
                                        long long every, const unsigned long long* sums,
                                        long long tile, Bits* stage, const Integers<W>& m,
                                        int lane) {
  const long long seg = tile * 32 * ITEMS;
  const bool full = seg + 32 * ITEMS <= n;
  // Padding reads as +0.0, which adds nothing.  Each value is placed twice (for the sum, then
  // for the walk), not held placed.
  load_striped<Bits, ITEMS>(stage, in, seg, n, full, Bits(0));
  clear<W>(m);
  __syncwarp();
#pragma unroll 4
  for (int i = 0; i < ITEMS; ++i)
    add_carry_save<W>(m.v, m.c, place<Bits, P, EBITS>(stage[pad<Bits>(lane * ITEMS + i)], base));
  scan_lanes<W>(m, lane);
  __syncwarp();
  const LaneWords prefix = load_pair<W>(sums + tile * Layout<Bits, W, ITEMS>::kStride, lane);
  if (2 * lane < W) m.tile_words[2 * lane] = prefix.lo;
  if (2 * lane + 1 < W) m.tile_words[2 * lane + 1] = prefix.hi;
  __syncwarp();

  Track t = add_whole<W>(m.v, m.tile_words);
#pragma unroll 1
  for (int i = 0; i < ITEMS; ++i) {
    Bits& slot = stage[pad<Bits>(lane * ITEMS + i)];
    add_tracked<W>(m.v, place<Bits, P, EBITS>(slot, base), t);
    slot = round_column<Bits, P, EBITS, W>(m.v, t, base);
  }
  __syncwarp();
  if (every > 0) {
#pragma unroll 1
    for (int i = 0; i < ITEMS; ++i) {
      const long long e = seg + i * 32 + lane;
      if (e < n && uncertified[e / every]) out[e] = stage[pad<Bits>(i * 32 + lane)];
    }
  } else {
    store_striped<Bits, ITEMS>(out, stage, seg, n, full);
  }
  __syncwarp();  // the next tile's values overwrite the stage
}

}  // namespace columns
}  // namespace scancheck

// The column scan runs as reduce, then scan (exact_device._launch_columns):
//   column_sums: each column tile's sum (steps 1 and 2), a warp a tile, none waiting on
//     another;
//   column_prefixes: the sums, in place, to exclusive prefix sums;
//   named_column_tiles, then exact_scan_columns: the tiles to write, each summed again, its
//     lanes' prefixes its own plus the tile's (steps 3 and 4).
// No tile waits on its predecessors.  A look-back over tiles this small waits one round trip
// through L2 for every 32 tiles, slower than memory, and a rescan sums every tile before the
// last one it writes: most of the data, for the bench's float64 factors.

// The sum of each column tile of n values (32 * ITEMS values, a warp a tile), tile t's at
// sums + t * Layout::kStride.  The sum is the same whichever lane adds which value, so each
// lane adds every 32nd value as it is read (coalesced, eight loads in flight a lane), with no
// stage.  Dynamic shared memory: Layout<Bits, W, ITEMS>::kIntegerBytes a warp.
template <typename Bits, int P, int EBITS, int W, int ITEMS>
__global__ void column_sums(const Bits* __restrict__ in, long long n, int base,
                            unsigned long long* sums) {
  using namespace scancheck;
  using namespace scancheck::columns;
  using L = Layout<Bits, W, ITEMS>;
  static_assert(ITEMS % 8 == 0, "values are read eight at a time");
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  const long long tile = static_cast<long long>(blockIdx.x) * (blockDim.x / 32) + warp;
  const long long seg = tile * 32 * ITEMS;
  if (seg >= n) return;  // the whole warp
  const Integers<W> m(reinterpret_cast<unsigned long long*>(scancheck_smem + warp * L::kIntegerBytes),
                      lane);
  clear<W>(m);
  for (int i = 0; i < ITEMS; i += 8) {
    Bits x[8];
#pragma unroll
    for (int k = 0; k < 8; ++k) {
      const long long e = seg + (i + k) * 32 + lane;
      x[k] = e < n ? __ldcs(in + e) : Bits(0);
    }
#pragma unroll
    for (int k = 0; k < 8; ++k) add_carry_save<W>(m.v, m.c, place<Bits, P, EBITS>(x[k], base));
  }
  scan_lanes<W>(m, lane);
  __syncwarp();
  const LaneWords sum{2 * lane < W ? m.tile_words[2 * lane] : 0ULL,
                      2 * lane + 1 < W ? m.tile_words[2 * lane + 1] : 0ULL};
  store_pair<W>(sums + tile * L::kStride, sum, lane);
}

// Over `count` W-word integers in a (W rounded up to even words apart), a warp a chunk of
// `per` consecutive ones: mode 0 sums each chunk into totals; mode 1 makes each integer of a,
// in place, its chunk's total from totals plus the integers of its chunk before it; mode 2
// the same from 0 (one chunk).  Chunks' sums by mode 0, made exclusive (the same modes,
// recursively), then mode 1, leave a's exclusive prefix sums.  A chunk's loads go 8 at a
// time: one memory latency per 8 integers, not per integer.
template <int W>
__global__ void column_prefixes(unsigned long long* a, long long count, int per,
                                unsigned long long* totals, int mode) {
  using namespace scancheck::columns;
  constexpr int kStride = W + (W & 1);
  const int lane = threadIdx.x % 32;
  const long long chunk = static_cast<long long>(blockIdx.x) * (blockDim.x / 32) + threadIdx.x / 32;
  const long long first = chunk * per;
  if (first >= count) return;  // the whole warp
  const long long last = first + per < count ? first + per : count;
  LaneWords run = mode == 1 ? load_pair<W>(totals + chunk * kStride, lane) : LaneWords{0, 0};
  for (long long i = first; i < last; i += 8) {
    LaneWords got[8];
#pragma unroll
    for (int k = 0; k < 8; ++k)
      got[k] = i + k < last ? load_pair<W>(a + (i + k) * kStride, lane) : LaneWords{0, 0};
#pragma unroll
    for (int k = 0; k < 8; ++k) {
      if (mode != 0 && i + k < last) store_pair<W>(a + (i + k) * kStride, run, lane);
      warp_add(run, got[k], lane);
    }
  }
  if (mode == 0) store_pair<W>(totals + chunk * kStride, run, lane);
}

// The column tiles of n values (32 * items values each) that writes_tile names, in `named`
// in no particular order, and their count in queue[0]: a warp looks at 32 tiles, and takes
// their places in named with one atomic.  The marks are those of `every` values in the state
// of a call of `tiles` block tiles.
__global__ void named_column_tiles(long long n, int items, const unsigned* state,
                                   long long tiles, long long every, unsigned* named,
                                   unsigned* queue) {
  using namespace scancheck;
  const long long span = 32LL * items;
  const State s(const_cast<unsigned*>(state), tiles);
  const int lane = threadIdx.x % 32;
  const long long tile =
      (static_cast<long long>(blockIdx.x) * (blockDim.x / 32) + threadIdx.x / 32) * 32 + lane;
  const long long column_tiles = (n + span - 1) / span;
  const bool wanted = tile < column_tiles &&
                      columns::writes_tile(s.uncertified, every, tile * span,
                                           tile * span + span < n ? tile * span + span : n);
  const unsigned ballot = __ballot_sync(columns::kFull, wanted);
  if (!ballot) return;
  unsigned at = 0;
  if (lane == 0) at = atomicAdd(&queue[0], static_cast<unsigned>(__popc(ballot)));
  at = __shfl_sync(columns::kFull, at, 0);
  if (wanted) named[at + __popc(ballot & ((1u << lane) - 1u))] = static_cast<unsigned>(tile);
}

// The exact inclusive scan's outputs of the column tiles of n values in `named` (queue[0] of
// them, by named_column_tiles), W words wide, a tile's exclusive prefix read from sums
// (column_sums, then column_prefixes).  Where every > 0, only the outputs of the tiles the
// certified scan marked (State::uncertified, of tiles of `every` values, in the state of a
// call of `tiles` block tiles) are stored: a column tile may straddle a marked tile's edge,
// and the certified outputs beside it stay as the certified scan wrote them.  Each warp takes
// the next tile of named (queue[1] counts them out) until none is left, so that a run of
// marked tiles is written by as many warps as it has tiles.  Dynamic shared memory:
// Layout<Bits, W, ITEMS>::kBytes a warp.
template <typename Bits, int P, int EBITS, int W, int ITEMS>
__global__ void exact_scan_columns(const Bits* __restrict__ in, Bits* __restrict__ out,
                                   long long n, int base, unsigned* state, long long tiles,
                                   long long every, const unsigned long long* sums,
                                   const unsigned* named, unsigned* queue) {
  using namespace scancheck;
  using namespace scancheck::columns;
  using L = Layout<Bits, W, ITEMS>;
  const State s(state, tiles);
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  unsigned long long* space = reinterpret_cast<unsigned long long*>(scancheck_smem + warp * L::kBytes);
  const Integers<W> m(space + L::kStageWords, lane);
  const unsigned count = queue[0];
  for (;;) {
    unsigned next = 0;
    if (lane == 0) next = atomicAdd(&queue[1], 1u);
    next = __shfl_sync(kFull, next, 0);
    if (next >= count) return;  // the whole warp
    write_tile<Bits, P, EBITS, W, ITEMS>(in, out, n, base, s.uncertified, every, sums,
                                         named[next], reinterpret_cast<Bits*>(space), m, lane);
  }
}
