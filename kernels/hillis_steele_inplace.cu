// Hillis-Steele in place, one buffer: the racy negative control (seed 001, "Algorithm 1").
// Thread t reads x[t-d] while thread t-d may already be writing it in the same barrier
// interval.  compute-sanitizer racecheck must report it; models report its hazards.
#include "scan_ops.cuh"

template <typename T, typename Op>
__global__ void hillis_steele_inplace(const T* in, T* out, long long n) {
  Op op;
  T* x = shared_as<T>();
  const int t = threadIdx.x;
  x[t] = t < n ? in[t] : Op::identity();
  __syncthreads();
  for (int d = 1; d < blockDim.x; d *= 2) {
    if (t >= d) x[t] = op(x[t - d], x[t]);  // the race: no temporary, no second barrier
    __syncthreads();
  }
  if (t < n) out[t] = x[t];
}
