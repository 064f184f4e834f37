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

template <int W>
__host__ __device__ __forceinline__ void negate(Wide<W>& v) {
  unsigned long long carry = 1;
#pragma unroll
  for (int k = 0; k < W; ++k) {
    const unsigned long long s = ~v.w[k] + carry;
    carry = carry && s == 0;
    v.w[k] = s;
  }
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
    unsigned long long carry = 0;
#pragma unroll
    for (int k = 0; k < W; ++k) {
      const unsigned long long s = a.w[k] + b.w[k];
      const unsigned long long c = s < a.w[k];
      r.w[k] = s + carry;
      carry = c | (r.w[k] < s);
    }
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

template <typename Bits, int P, int EBITS, int W>
struct FixedPoint {
  using In = Bits;
  using Out = Bits;
  using F = Format<Bits, P, EBITS>;
  int base;

  __host__ __device__ static Bits pad() { return 0; }

  __host__ __device__ Wide<W> load(Bits b) const {
    Wide<W> r = WideAdd<W>::identity();
    bool neg;
    unsigned long long mant;
    int expo;
    if (!F::split(b, neg, mant, expo) || mant == 0) return r;
    int off = expo - base;
    if (off < 0) {  // exact: base is at most the exponent of mant's lowest set bit
      mant >>= -off;
      off = 0;
    }
    const int word = off >> 6, bit = off & 63;
    const unsigned long long lo = mant << bit, hi = bit ? mant >> (64 - bit) : 0;
#pragma unroll
    for (int k = 0; k < W; ++k) r.w[k] = (k == word) ? lo : ((k == word + 1) ? hi : 0);
    if (neg) negate(r);
    return r;
  }

  // v * 2^base rounded once to the format: nearest, ties to even, overflow to infinity.
  __host__ __device__ Bits store(Wide<W> v) const {
    const bool neg = (v.w[W - 1] >> 63) != 0;
    if (neg) negate(v);
    int top = -1;
#pragma unroll
    for (int k = 0; k < W; ++k) top = v.w[k] ? k : top;
    if (top < 0) return 0;
    const int lead_bit = 64 * top + 63 - clz64(word_at(v, top));
    const int last = lead_bit + base - P + 1;
    const int quantum = last > F::kQmin ? last : F::kQmin;  // exponent of the last place
    const int drop = quantum - base;                              // bits of v below it
    unsigned long long keep;
    if (drop <= 0) {
      keep = v.w[0] << -drop;  // v < 2^P here: nothing to round
    } else {
      const int q = drop >> 6, s = drop & 63;
      keep = word_at(v, q) >> s;
      if (s) keep |= word_at(v, q + 1) << (64 - s);
      const int h = drop - 1;  // the rounding bit; everything below it is sticky
      const bool half = (word_at(v, h >> 6) >> (h & 63)) & 1;
      bool sticky = (word_at(v, h >> 6) & ((1ULL << (h & 63)) - 1)) != 0;
#pragma unroll
      for (int k = 0; k < W; ++k) sticky |= (k < (h >> 6)) && v.w[k] != 0;
      keep += half && (sticky || (keep & 1));
    }
    // keep <= 2^P: adding the field steps makes a carry out of the significand (keep ==
    // 2^P, or a subnormal rounding up to 2^(P-1)) step the exponent field, as IEEE's
    // encoding is built to.
    const long long steps = quantum - F::kQmin;
    const unsigned long long inf = static_cast<unsigned long long>(F::kInfField) << (P - 1);
    unsigned long long bits = steps >= F::kInfField ? inf : keep + (steps << (P - 1));
    if (bits > inf) bits = inf;
    return static_cast<Bits>(neg ? (bits | F::kSign) : bits);
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

// range = (lo, hi, special) over all n values; the host starts it at (INT_MAX, INT_MIN, 0).
template <typename Bits, int P, int EBITS>
__global__ void exponent_range(const Bits* __restrict__ in, long long n, int* range) {
  int lo = 0x7fffffff, hi = -0x7fffffff - 1, special = 0;
  const long long stride = static_cast<long long>(gridDim.x) * blockDim.x;
  for (long long i = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += stride)
    widen_range<Bits, P, EBITS>(in[i], lo, hi, special);
#pragma unroll
  for (int off = 16; off > 0; off /= 2) {
    lo = min(lo, __shfl_xor_sync(0xffffffffu, lo, off));
    hi = max(hi, __shfl_xor_sync(0xffffffffu, hi, off));
    special |= __shfl_xor_sync(0xffffffffu, special, off);
  }
  if (threadIdx.x % 32 == 0) {
    atomicMin(&range[0], lo);
    atomicMax(&range[1], hi);
    if (special) atomicOr(&range[2], 1);
  }
}
