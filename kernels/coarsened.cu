// Three-phase coarsened scan, inclusive (seed 002, 11.4): COARSE elements per thread.
// Phase 1 scans each thread's run sequentially, phase 2 is a Kogge-Stone scan of the
// run totals, phase 3 adds the previous run's total.
#include "scan_ops.cuh"

template <typename T, typename Op, int COARSE>
__global__ void coarsened(const T* in, T* out, long long n) {
  Op op;
  T* sec = shared_as<T>();
  const int t = threadIdx.x, nt = blockDim.x;
  for (int j = 0; j < COARSE; ++j) {  // coalesced: consecutive threads, consecutive elements
    const int e = j * nt + t;
    sec[e] = e < n ? in[e] : Op::identity();
  }
  __syncthreads();
  T* run = sec + t * COARSE;
  for (int i = 1; i < COARSE; ++i) run[i] = op(run[i - 1], run[i]);
  for (int stride = 1; stride < nt; stride *= 2) {
    __syncthreads();
    T temp;
    if (t >= stride) temp = op(sec[(t - stride) * COARSE + COARSE - 1], run[COARSE - 1]);
    __syncthreads();
    if (t >= stride) run[COARSE - 1] = temp;
  }
  __syncthreads();
  if (t > 0) {
    const T prev = sec[(t - 1) * COARSE + COARSE - 1];
    for (int i = 0; i < COARSE - 1; ++i) run[i] = op(prev, run[i]);
  }
  __syncthreads();
  for (int j = 0; j < COARSE; ++j) {
    const int e = j * nt + t;
    if (e < n) out[e] = sec[e];
  }
}
