// Warp-shuffle scan, inclusive (seed 004, task 3): __shfl_up_sync inside each warp, the
// last lane's total through shared memory, warp 0 scans the totals.
#include "block_scan.cuh"

template <typename T, typename Op>
__global__ void warp_shuffle(const T* in, T* out, long long n) {
  Op op;
  const int t = threadIdx.x;
  T v = t < n ? in[t] : Op::identity();
  v = scancheck::block_scan_warps(v, shared_as<T>(), op);
  if (t < n) out[t] = v;
}
