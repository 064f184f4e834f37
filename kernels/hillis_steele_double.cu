// Hillis-Steele double-buffered, exclusive (seed 001, "Algorithm 2"): reads from one
// buffer, writes the other, a barrier between rounds.
#include "block_scan.cuh"

template <typename T, typename Op>
__global__ void hillis_steele_double(const T* in, T* out, long long n) {
  Op op;
  const int t = threadIdx.x;
  const T prev = (t > 0 && t - 1 < n) ? in[t - 1] : Op::identity();
  const T r = scancheck::hillis_steele_exclusive(prev, shared_as<T>(), op);
  if (t < n) out[t] = r;
}
