// Recursive multi-level scan, exclusive (seed 003): every level scans its input in
// blocks (seed 001's double-buffered scan) and writes one total per block; the totals
// are the next level's input until one block remains.  Then, top level first, each
// level's scanned totals are added to the level below as block offsets.
#include "block_scan.cuh"

template <typename T, typename Op>
__global__ void recursive_level(const T* in, T* prefix, T* block_sums, long long m) {
  Op op;
  const int t = threadIdx.x;
  const long long e = (long long)blockIdx.x * blockDim.x + t;
  const T prev = (t > 0 && e - 1 < m) ? in[e - 1] : Op::identity();
  const T r = scancheck::hillis_steele_exclusive(prev, shared_as<T>(), op);
  if (e < m) prefix[e] = r;
  if (t == blockDim.x - 1) block_sums[blockIdx.x] = op(r, e < m ? in[e] : Op::identity());
}

template <typename T, typename Op>
__global__ void recursive_add(T* prefix, const T* offsets, long long m, int block) {
  Op op;
  const long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
  if (i < m) prefix[i] = op(offsets[i / block], prefix[i]);
}
