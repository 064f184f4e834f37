// The operator vocabulary of scancheck on the device; scancheck/operators.py is its
// Python side (the names, identities and evaluation order match row for row).
// Every combine is op(earlier, later).  Kernels are compiled with --fmad=false so that
// a*b + c is two roundings, exactly as NumPy evaluates the CPU models.
#pragma once

namespace scancheck {

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

template <typename T>
struct Add {
  using value_type = T;
  __device__ static T identity() { return T(0); }
  __device__ T operator()(T a, T b) const { return a + b; }
};

// NaN-propagating; on ties the earlier operand wins (so -0.0/+0.0 resolve the same
// way on every schedule).  For integers the NaN tests fold away.
template <typename T>
struct Max {
  using value_type = T;
  __device__ static T identity() { return Bounds<T>::lowest(); }
  __device__ T operator()(T a, T b) const {
    return (a != a) ? a : ((b != b || b > a) ? b : a);
  }
};

template <typename T>
struct Min {
  using value_type = T;
  __device__ static T identity() { return Bounds<T>::highest(); }
  __device__ T operator()(T a, T b) const {
    return (a != a) ? a : ((b != b || b < a) ? b : a);
  }
};

// y_n = a_n*y_{n-1} + b_n: (a1, b1) then (a2, b2) is (a2*a1, a2*b1 + b2); identity (1, 0).
template <typename S>
struct Recurrence {
  using value_type = Pair<S>;
  __device__ static Pair<S> identity() { return Pair<S>{S(1), S(0)}; }
  __device__ Pair<S> operator()(Pair<S> x, Pair<S> y) const {
    return Pair<S>{y.a * x.a, y.a * x.b + y.b};
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

// __shfl_up_sync for any element type, one 32-bit word at a time.
template <typename T>
__device__ __forceinline__ T shfl_up(T v, unsigned delta) {
  static_assert(sizeof(T) % 4 == 0, "shuffled types must be a whole number of 32-bit words");
  int* w = reinterpret_cast<int*>(&v);
#pragma unroll
  for (int k = 0; k < int(sizeof(T) / 4); ++k) w[k] = __shfl_up_sync(0xffffffffu, w[k], delta);
  return v;
}

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

template <typename T>
__device__ __forceinline__ T shfl_idx(T v, int src) {
  int* w = reinterpret_cast<int*>(&v);
#pragma unroll
  for (int k = 0; k < int(sizeof(T) / 4); ++k) w[k] = __shfl_sync(0xffffffffu, w[k], src);
  return v;
}

}  // namespace scancheck
