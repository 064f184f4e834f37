// scancheck's exact oracle on the device (scancheck/exact_device.py drives it).
//
// Every finite input x = (-1)^s * m * 2^e becomes the exact integer +-m * 2^(e - base) in
// W 64-bit words (two's complement), where base is the lowest set bit's exponent over the
// data, so nothing is lost; the host picks W so that every prefix sum fits.  The prefix
// sums are integer sums, taken by the decoupled look-back engine of
// kernels/decoupled_lookback.cu in one pass, and each is rounded once, to nearest, ties
// to even, straight from the integer to the output's bits.  Only integer instructions
// touch the data: no compiler flag (CuPy's -ftz=true included) can change a result.
// Infinities and NaNs enter as 0 here; the host overlays IEEE's rules for them, as the
// CPU oracle does (scancheck/exact.py).
#include "../decoupled_lookback.cu"

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
  return __builtin_ctzll(v);
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

// The exact inclusive scan of n values in the format (Bits, P, EBITS), W words wide.
template <typename Bits, int P, int EBITS, int W, int ITEMS>
__global__ void exact_scan(const Bits* __restrict__ in, Bits* __restrict__ out, long long n,
                           int base, unsigned* counter, int* flags, scancheck::Wide<W>* aggregates,
                           scancheck::Wide<W>* inclusives) {
  using namespace scancheck;
  const TileStatus<Wide<W>> status{flags, aggregates, inclusives, nullptr};
  lookback_scan<Wide<W>, WideAdd<W>, ITEMS>(in, out, n, counter, status,
                                           FixedPoint<Bits, P, EBITS, W>{base});
}

// Folds one value into a running (lo, hi, special): the lowest set bit's and the leading
// bit's exponents over nonzero finite values, and whether any value is an infinity or NaN.
template <typename Bits, int P, int EBITS>
__host__ __device__ __forceinline__ void widen_range(Bits b, int& lo, int& hi, int& special) {
  bool neg;
  unsigned long long mant;
  int expo;
  if (!scancheck::Format<Bits, P, EBITS>::split(b, neg, mant, expo)) {
    special = 1;
  } else if (mant) {
    const int low = expo + scancheck::ctz64(mant), high = expo + 63 - scancheck::clz64(mant);
    lo = low < lo ? low : lo;
    hi = high > hi ? high : hi;
  }
}

// range = (lo, hi, special, first_zero) over all n values, first_zero saying whether in[0]
// is +-0 (the host then looks for a -0.0 prefix); the host starts it at (INT_MAX, INT_MIN,
// 0, 0).
// The body reads 16-byte vectors, as the scan does, so this pass costs one read of the
// data at memory speed; one atomic per block, not per warp, keeps the three words cool.
template <typename Bits, int P, int EBITS>
__global__ void exponent_range(const Bits* __restrict__ in, long long n, int* range) {
  constexpr int kPer = 16 / sizeof(Bits);
  int lo = 0x7fffffff, hi = -0x7fffffff - 1, special = 0;
  const long long tid = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x;
  const long long stride = static_cast<long long>(gridDim.x) * blockDim.x;
  const long long misaligned = reinterpret_cast<unsigned long long>(in) % 16 / sizeof(Bits);
  const long long head = misaligned ? (kPer - misaligned < n ? kPer - misaligned : n) : 0;
  const long long vectors = (n - head) / kPer;
  if (tid == 0 && n > 0)
    range[3] = (in[0] & ~static_cast<Bits>(scancheck::Format<Bits, P, EBITS>::kSign)) == 0;
  if (tid < head) widen_range<Bits, P, EBITS>(in[tid], lo, hi, special);
  const uint4* body = reinterpret_cast<const uint4*>(in + head);
  for (long long i = tid; i < vectors; i += stride) {
    union {
      uint4 v;
      Bits b[kPer];
    } u;
    u.v = __ldcs(&body[i]);
#pragma unroll
    for (int k = 0; k < kPer; ++k) widen_range<Bits, P, EBITS>(u.b[k], lo, hi, special);
  }
  for (long long i = head + vectors * kPer + tid; i < n; i += stride)
    widen_range<Bits, P, EBITS>(in[i], lo, hi, special);
#pragma unroll
  for (int off = 16; off > 0; off /= 2) {
    lo = min(lo, __shfl_xor_sync(0xffffffffu, lo, off));
    hi = max(hi, __shfl_xor_sync(0xffffffffu, hi, off));
    special |= __shfl_xor_sync(0xffffffffu, special, off);
  }
  __shared__ int partial[3][32];
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32, nwarps = blockDim.x / 32;
  if (lane == 0) {
    partial[0][warp] = lo;
    partial[1][warp] = hi;
    partial[2][warp] = special;
  }
  __syncthreads();
  if (threadIdx.x == 0) {
    for (int w = 1; w < nwarps; ++w) {
      lo = min(lo, partial[0][w]);
      hi = max(hi, partial[1][w]);
      special |= partial[2][w];
    }
    atomicMin(&range[0], lo);
    atomicMax(&range[1], hi);
    if (special) atomicOr(&range[2], 1);
  }
}

// -- Wide data: one integer per warp -----------------------------------------------------
//
// Past a few words, an integer per thread no longer fits in registers and the look-back
// moves whole integers through shuffles.  Here a warp owns one 4096-bit two's-complement
// integer, lane l holding words 2l and 2l+1, and walks a chunk of the data in order: each
// value touches one or two words, so an addition is two 64-bit adds per lane plus one
// carry-lookahead step over the warp, and rounding reads only the two top nonzero lanes.
// The lane-local arithmetic below is __host__ __device__: the CPU tests run it with the
// warp's ballots and shuffles emulated.
namespace scancheck {
namespace warpint {

constexpr int kLanes = 32;
constexpr int kWords = 2 * kLanes;

struct LaneWords {
  unsigned long long lo, hi;
};

__host__ __device__ __forceinline__ int clz32(unsigned v) {
#ifdef __CUDA_ARCH__
  return __clz(static_cast<int>(v));
#else
  return __builtin_clz(v);
#endif
}

// This lane's 128 bits of a placed value.
__host__ __device__ __forceinline__ LaneWords lane_part(const Placed& x, int lane) {
  const int w0 = 2 * lane, w1 = w0 + 1;
  return {x.word == w0 ? x.lo : (x.word + 1 == w0 ? x.hi : 0),
          x.word == w1 ? x.lo : (x.word + 1 == w1 ? x.hi : 0)};
}

// One lane's part of v + a (v - a when neg, as v + ~a + 1), before carries between lanes:
// gen says the lane carries out, prop that it would pass a carry on (all ones).
struct LaneSum {
  LaneWords s;
  bool gen, prop;
};

__host__ __device__ __forceinline__ LaneSum lane_sum(LaneWords v, LaneWords a, bool neg) {
  if (neg) {
    a.lo = ~a.lo;
    a.hi = ~a.hi;
  }
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
// the 32-bit sum gen + (gen | prop) (+1 into lane 0 for a subtraction) are exactly the
// carries of the wide addition, so one integer addition replaces a 32-step ripple.
__host__ __device__ __forceinline__ unsigned lane_carries(unsigned gen, unsigned prop, bool neg) {
  const unsigned either = gen | prop;
  return (gen + either + (neg ? 1u : 0u)) ^ gen ^ either;
}

__host__ __device__ __forceinline__ LaneWords lane_finish(LaneSum s, unsigned carries, int lane) {
  const unsigned long long c = (carries >> lane) & 1u;
  const unsigned long long lo = s.s.lo + c;
  return {lo, s.s.hi + (lo < c)};
}

// What rounding a warp integer v needs: the magnitude's four words in lanes top - 1 and
// top (the top nonzero lane, or lane 1 when only lane 0 is nonzero), a carry into them and
// a sticky bit from the lanes below.
// For v < 0, |v| = m + 1 with m = ~v: the +1 reaches the window only when m is all ones
// below it, and the bits below are nonzero exactly when it does not.
struct Window {
  unsigned long long w[4];
  int top;
  bool neg, carry, sticky;
};

// The window's shape from the ballots of m's nonzero and all-ones lanes.
__host__ __device__ __forceinline__ Window window_shape(unsigned nonzero, unsigned ones, bool neg) {
  Window w{};
  w.neg = neg;
  w.top = 31 - clz32(nonzero | 2u);
  const unsigned below = (1u << (w.top - 1)) - 1;
  w.carry = neg && (ones & below) == below;
  w.sticky = neg ? (ones & below) != below : (nonzero & below) != 0;
  return w;
}

// The window rounded once to the format: bit for bit FixedPoint::store of the whole v.
template <typename Bits, int P, int EBITS>
__host__ __device__ __forceinline__ Bits round_window(const Window& win, int base) {
  Wide<5> v;
  unsigned long long carry = win.carry;
#pragma unroll
  for (int k = 0; k < 4; ++k) {
    v.w[k] = win.w[k] + carry;
    carry = carry && v.w[k] == 0;
  }
  v.w[4] = carry;
  // With bits below the window, the lead bit lies 128 bits or more above its bottom, far
  // above the rounding bit: a sticky 1 in the lowest place rounds as those bits do.
  v.w[0] |= win.sticky;
  const Bits mag = round_magnitude<Bits, P, EBITS, 5>(v, base + 128 * (win.top - 1));
  return static_cast<Bits>(win.neg ? (mag | Format<Bits, P, EBITS>::kSign) : mag);
}

constexpr unsigned kFull = 0xffffffffu;

// v += a (v -= a when neg) over the warp.
__device__ __forceinline__ void warp_add(LaneWords& v, LaneWords a, bool neg, int lane) {
  const LaneSum s = lane_sum(v, a, neg);
  v = lane_finish(s, lane_carries(__ballot_sync(kFull, s.gen), __ballot_sync(kFull, s.prop), neg),
                  lane);
}

// Lane src's placed value, in every lane.
__device__ __forceinline__ Placed shfl_placed(const Placed& x, int src) {
  const int packed = __shfl_sync(kFull, 2 * x.word + x.neg, src);
  return {__shfl_sync(kFull, x.lo, src), __shfl_sync(kFull, x.hi, src), packed >> 1,
          (packed & 1) != 0};
}

__device__ __forceinline__ Window warp_window(const LaneWords& v) {
  const bool neg = (__shfl_sync(kFull, v.hi, kLanes - 1) >> 63) != 0;
  const unsigned long long flip = neg ? ~0ULL : 0ULL;
  const LaneWords m{v.lo ^ flip, v.hi ^ flip};
  Window w = window_shape(__ballot_sync(kFull, (m.lo | m.hi) != 0),
                          __ballot_sync(kFull, (m.lo & m.hi) == ~0ULL), neg);
  w.w[0] = __shfl_sync(kFull, m.lo, w.top - 1);
  w.w[1] = __shfl_sync(kFull, m.hi, w.top - 1);
  w.w[2] = __shfl_sync(kFull, m.lo, w.top);
  w.w[3] = __shfl_sync(kFull, m.hi, w.top);
  return w;
}

__device__ __forceinline__ void publish(int* flags, unsigned long long* values, long long chunk,
                                        int flag, LaneWords v, int lane) {
  unsigned long long* dst = values + chunk * kWords + 2 * lane;
  store_volatile(dst, v.lo);
  store_volatile(dst + 1, v.hi);
  __threadfence();
  __syncwarp();
  if (lane == 0) {
    __threadfence();
    atomicExch(&flags[chunk], flag);
  }
}

}  // namespace warpint
}  // namespace scancheck

// The exact inclusive scan for wide data: each warp takes the next chunk of CHUNK values
// (an atomic counter hands them out in start order, so a warp only waits on running
// ones), sums it, publishes the sum and looks back over its predecessors' sums 32 at a
// time, as kernels/decoupled_lookback.cu does for tiles; then walks the chunk again from
// that prefix, keeping each value's rounding window in the lane that will store it and
// rounding 32 values at once.
template <typename Bits, int P, int EBITS, int CHUNK>
__global__ void exact_scan_warp(const Bits* __restrict__ in, Bits* __restrict__ out, long long n,
                                int base, unsigned* counter, int* flags,
                                unsigned long long* aggregates, unsigned long long* inclusives) {
  using namespace scancheck;
  using namespace scancheck::warpint;
  const int lane = threadIdx.x % kLanes;
  unsigned ticket = 0;
  if (lane == 0) ticket = atomicAdd(counter, 1u);
  const long long chunk = __shfl_sync(kFull, ticket, 0);
  const long long start = chunk * CHUNK;
  if (start >= n) return;  // the whole warp: chunk is warp-uniform
  const long long stop = start + CHUNK < n ? start + CHUNK : n;

  // Each lane places its own value of every 32; the warp adds them one by one.
  LaneWords sum{0, 0};
  for (long long i = start; i < stop; i += kLanes) {
    const Placed mine = place<Bits, P, EBITS>(i + lane < stop ? in[i + lane] : Bits(0), base);
    const int count = stop - i < kLanes ? static_cast<int>(stop - i) : kLanes;
    for (int k = 0; k < count; ++k) {
      const Placed x = shfl_placed(mine, k);
      warp_add(sum, lane_part(x, lane), x.neg, lane);
    }
  }

  LaneWords prefix{0, 0};
  if (chunk > 0) {
    publish(flags, aggregates, chunk, kAggregate, sum, lane);
    for (long long end = chunk - 1;; end -= kLanes) {
      const long long j = end - lane;  // lane 0 is the nearest predecessor
      int f = kInclusive;
      do {
        if (j >= 0) f = *reinterpret_cast<volatile int*>(&flags[j]);
      } while (__any_sync(kFull, f == kInvalid));
      __syncwarp();
      __threadfence();
      const unsigned inclusive_lanes = __ballot_sync(kFull, f == kInclusive && j >= 0);
      const int last = inclusive_lanes ? __ffs(inclusive_lanes) - 1 : kLanes - 1;
      // Integer addition is associative and commutative: any order gives the same sum.
      for (int k = 0; k <= last && end - k >= 0; ++k) {
        const int fk = __shfl_sync(kFull, f, k);
        const unsigned long long* src =
            (fk == kInclusive ? inclusives : aggregates) + (end - k) * kWords + 2 * lane;
        warp_add(prefix, {scancheck::load_volatile(src), scancheck::load_volatile(src + 1)},
                 false, lane);
      }
      if (inclusive_lanes) break;
    }
  }
  LaneWords inclusive = prefix;
  warp_add(inclusive, sum, false, lane);
  publish(flags, inclusives, chunk, kInclusive, inclusive, lane);

  LaneWords run = prefix;
  for (long long i = start; i < stop; i += kLanes) {
    const Placed mine = place<Bits, P, EBITS>(i + lane < stop ? in[i + lane] : Bits(0), base);
    const int count = stop - i < kLanes ? static_cast<int>(stop - i) : kLanes;
    Window kept{};
    for (int k = 0; k < count; ++k) {
      const Placed x = shfl_placed(mine, k);
      warp_add(run, lane_part(x, lane), x.neg, lane);
      const Window w = warp_window(run);
      if (lane == k) kept = w;
    }
    if (lane < count) out[i + lane] = round_window<Bits, P, EBITS>(kept, base);
  }
}
