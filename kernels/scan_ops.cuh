// The operator vocabulary of scancheck on the device; scancheck/operators.py is its
// Python side (the names, identities and evaluation order match row for row).
// Every combine is op(earlier, later).
//
// Float arithmetic is spelled out as IEEE instructions (add.rn / mul.rn / setp without
// .ftz): never contracted into an FMA, never flushing subnormals, whatever flags the
// host library compiles with (CuPy always passes -ftz=true to NVRTC, cupy#9576).  So
// a kernel computes exactly what NumPy computes in the CPU model, bit for bit.
#pragma once

namespace scancheck {

template <typename T> __device__ __forceinline__ T add_rn(T a, T b) { return a + b; }
template <typename T> __device__ __forceinline__ T mul_rn(T a, T b) { return a * b; }
template <typename T> __device__ __forceinline__ bool greater(T a, T b) { return a > b; }

template <> __device__ __forceinline__ float add_rn(float a, float b) {
  float r;
  asm("add.rn.f32 %0, %1, %2;" : "=f"(r) : "f"(a), "f"(b));
  return r;
}
template <> __device__ __forceinline__ float mul_rn(float a, float b) {
  float r;
  asm("mul.rn.f32 %0, %1, %2;" : "=f"(r) : "f"(a), "f"(b));
  return r;
}
template <> __device__ __forceinline__ bool greater(float a, float b) {
  unsigned r;
  asm("{ .reg .pred p; setp.gt.f32 p, %1, %2; selp.u32 %0, 1, 0, p; }" : "=r"(r) : "f"(a), "f"(b));
  return r != 0;
}
// Integer sums and products wrap modulo 2^32 or 2^64, as NumPy's do: computed in the
// unsigned type, since signed overflow is undefined behaviour the compiler may assume away.
template <> __device__ __forceinline__ int add_rn(int a, int b) {
  return static_cast<int>(static_cast<unsigned>(a) + static_cast<unsigned>(b));
}
template <> __device__ __forceinline__ long long add_rn(long long a, long long b) {
  return static_cast<long long>(static_cast<unsigned long long>(a) +
                                static_cast<unsigned long long>(b));
}
template <> __device__ __forceinline__ int mul_rn(int a, int b) {
  return static_cast<int>(static_cast<unsigned>(a) * static_cast<unsigned>(b));
}
template <> __device__ __forceinline__ long long mul_rn(long long a, long long b) {
  return static_cast<long long>(static_cast<unsigned long long>(a) *
                                static_cast<unsigned long long>(b));
}
template <> __device__ __forceinline__ double add_rn(double a, double b) { return __dadd_rn(a, b); }
template <> __device__ __forceinline__ double mul_rn(double a, double b) { return __dmul_rn(a, b); }

template <typename S>
struct __align__(2 * sizeof(S)) Pair {
  S a, b;
};

struct __align__(8) Interval {
  int i, j;
};

template <typename T> struct Bounds;
template <> struct Bounds<float> {
  __device__ static float lowest() { return __int_as_float(0xff800000); }   // -inf
  __device__ static float highest() { return __int_as_float(0x7f800000); }  // +inf
};
template <> struct Bounds<double> {
  __device__ static double lowest() { return __longlong_as_double(0xfff0000000000000ULL); }
  __device__ static double highest() { return __longlong_as_double(0x7ff0000000000000ULL); }
};
template <> struct Bounds<int> {
  __device__ static int lowest() { return -2147483647 - 1; }
  __device__ static int highest() { return 2147483647; }
};
template <> struct Bounds<long long> {
  __device__ static long long lowest() { return -9223372036854775807LL - 1; }
  __device__ static long long highest() { return 9223372036854775807LL; }
};
// Max and Min of booleans are a running or and a running and.
template <> struct Bounds<bool> {
  __device__ static bool lowest() { return false; }
  __device__ static bool highest() { return true; }
};

template <typename T>
struct Add {
  using value_type = T;
  __device__ static T identity() { return T(0); }
  __device__ T operator()(T a, T b) const { return add_rn(a, b); }
};

// NaN-propagating; on ties the earlier operand wins (so -0.0/+0.0 resolve the same
// way on every schedule).  For integers the NaN tests fold away.
template <typename T>
struct Max {
  using value_type = T;
  __device__ static T identity() { return Bounds<T>::lowest(); }
  __device__ T operator()(T a, T b) const {
    return (a != a) ? a : ((b != b || greater(b, a)) ? b : a);
  }
};

template <typename T>
struct Min {
  using value_type = T;
  __device__ static T identity() { return Bounds<T>::highest(); }
  __device__ T operator()(T a, T b) const {
    return (a != a) ? a : ((b != b || greater(a, b)) ? b : a);
  }
};

// Integers wrap modulo 2**bits (multiplied as unsigned: signed overflow is undefined in C++).
template <typename T>
struct Mul {
  using value_type = T;
  __device__ static T identity() { return T(1); }
  __device__ T operator()(T a, T b) const { return mul_rn(a, b); }
};

// log(exp(a) + exp(b)) as max + log1p(exp(min - max)): exp never overflows, -inf is the
// identity (its difference would be NaN), +inf absorbs, NaN propagates.  expf and log1pf
// are CUDA's (a few ulps), so the result is within a bound, not bit for bit NumPy's.
template <typename T>
struct LogAddExp {
  using value_type = T;
  __device__ static T identity() { return Bounds<T>::lowest(); }
  __device__ T operator()(T a, T b) const {
    if (a != a || b != b) return add_rn(a, b);
    const T hi = greater(b, a) ? b : a, lo = greater(b, a) ? a : b;
    if (lo == Bounds<T>::lowest() || hi == Bounds<T>::highest()) return hi;
    return add_rn(hi, static_cast<T>(log1p(exp(add_rn(lo, -hi)))));
  }
};

// (value, index) pairs, a = value and b = index held in the value's type: the larger
// (smaller) value wins, a NaN above all, and the later operand wins ties, so every output
// names the last index of its extreme (PyTorch's cummax, cummin).  Index -1 is the
// identity and loses every tie.
template <typename S, bool Larger>
struct ArgExtreme {
  using value_type = Pair<S>;
  __device__ static Pair<S> identity() {
    return Pair<S>{Larger ? Bounds<S>::lowest() : Bounds<S>::highest(), S(-1)};
  }
  __device__ Pair<S> operator()(Pair<S> x, Pair<S> y) const {
    if (y.b < S(0)) return x;
    if (x.b < S(0) || y.a != y.a) return y;
    if (x.a != x.a) return x;
    const bool beats = Larger ? !greater(x.a, y.a) : !greater(y.a, x.a);
    return beats ? y : x;
  }
};
template <typename S> struct ArgMax : ArgExtreme<S, true> {};
template <typename S> struct ArgMin : ArgExtreme<S, false> {};

// y_n = a_n*y_{n-1} + b_n: (a1, b1) then (a2, b2) is (a2*a1, a2*b1 + b2); identity (1, 0).
template <typename S>
struct Recurrence {
  using value_type = Pair<S>;
  __device__ static Pair<S> identity() { return Pair<S>{S(1), S(0)}; }
  __device__ Pair<S> operator()(Pair<S> x, Pair<S> y) const {
    return Pair<S>{mul_rn(y.a, x.a), add_rn(mul_rn(y.a, x.b), y.b)};
  }
};

// Segmented sum over head flags: (f1, v1) then (f2, v2) is (f2 ? f2 : f1, f2 ? v2 : v1 + v2);
// identity (0, 0).  Non-commutative, so a kernel that swaps operands is caught under it.
// Flags live in the value's type (one aligned Pair<S>); on flags of 0 and 1 the first
// part is their "or".
template <typename S>
struct SegmentedAdd {
  using value_type = Pair<S>;
  __device__ static Pair<S> identity() { return Pair<S>{S(0), S(0)}; }
  __device__ Pair<S> operator()(Pair<S> x, Pair<S> y) const {
    const bool head = y.a != S(0);
    return Pair<S>{head ? y.a : x.a, head ? y.b : add_rn(x.b, y.b)};
  }
};

// Interval of summation (Chong, Donaldson & Ketema, POPL 2014): [i, j] then [j+1, k]
// is [i, k]; (-1, -1) is the identity, (-2, -2) the absorbing error.
struct IntervalOp {
  using value_type = Interval;
  __device__ static Interval identity() { return Interval{-1, -1}; }
  __device__ Interval operator()(Interval x, Interval y) const {
    if (x.i == -1 && x.j == -1) return y;
    if (y.i == -1 && y.j == -1) return x;
    if (x.i >= 0 && y.i >= 0 && x.j + 1 == y.i) return Interval{x.i, y.j};
    return Interval{-2, -2};
  }
};

}  // namespace scancheck

// All kernels take their shared memory from this one dynamic allocation.
extern __shared__ __align__(16) unsigned char scancheck_smem[];

template <typename T>
__device__ __forceinline__ T* shared_as() {
  return reinterpret_cast<T*>(scancheck_smem);
}

namespace scancheck {

// Loads and stores that bypass the non-coherent L1 path, a 32-bit word at a time, for
// values other blocks publish (chained and look-back scans).  Paired with fences.
template <typename T>
__device__ __forceinline__ T load_volatile(const T* p) {
  T v;
  int* w = reinterpret_cast<int*>(&v);
  const volatile int* s = reinterpret_cast<const volatile int*>(p);
#pragma unroll
  for (int k = 0; k < int(sizeof(T) / 4); ++k) w[k] = s[k];
  return v;
}

template <typename T>
__device__ __forceinline__ void store_volatile(T* p, T v) {
  const int* w = reinterpret_cast<const int*>(&v);
  volatile int* d = reinterpret_cast<volatile int*>(p);
#pragma unroll
  for (int k = 0; k < int(sizeof(T) / 4); ++k) d[k] = w[k];
}

// Warp shuffles for any element type, one 32-bit word at a time: the hardware shuffles
// only built-in scalars, and the element types include pairs and intervals.
template <typename T, typename Shuffle>
__device__ __forceinline__ T shuffle_words(T v, Shuffle shuffle) {
  static_assert(sizeof(T) % 4 == 0, "shuffled types must be a whole number of 32-bit words");
  int* w = reinterpret_cast<int*>(&v);
#pragma unroll
  for (int k = 0; k < int(sizeof(T) / 4); ++k) w[k] = shuffle(w[k]);
  return v;
}

template <typename T>
__device__ __forceinline__ T shfl_up(T v, unsigned delta) {
  return shuffle_words(v, [delta](int w) { return __shfl_up_sync(0xffffffffu, w, delta); });
}

template <typename T>
__device__ __forceinline__ T shfl_down(T v, unsigned delta) {
  return shuffle_words(v, [delta](int w) { return __shfl_down_sync(0xffffffffu, w, delta); });
}

template <typename T>
__device__ __forceinline__ T shfl_idx(T v, int src) {
  return shuffle_words(v, [src](int w) { return __shfl_sync(0xffffffffu, w, src); });
}

}  // namespace scancheck
