// Negative control: a single-pass chained scan, 16 elements a thread, with 64-bit indices,
// whose elements past 2**31 are read as magnitudes -- a stand-in for a large-n code path
// that loads through an unsigned or magnitude type.  Right everywhere below 2**31, and on
// the step data past it (zeros and ones have no sign): only random data past 2**31, with
// its negative values, shows it.
// Conformance-target signature (see scancheck/targets.py); scancheck prepends "typedef ... T;".
#include "chained_tile.cuh"

struct MagnitudePast2To31 {
  __device__ T operator()(const T* in, long long e) const {
    const T v = in[e];
    return e >= (1LL << 31) && v < T(0) ? -v : v;  // the bug
  }
};

extern "C" __global__ void scan(const T* in, T* out, long long n, void* scratch) {
  chained_tile16<long long, MagnitudePast2To31>(in, out, n, scratch);
}
