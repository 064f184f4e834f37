// Hierarchical three-kernel scan, inclusive (seed 004, task 2; seed 002, 11.5):
// 1. each block scans its elements and writes its total to block_sums;
// 2. one block scans block_sums in place, chunk by chunk, carrying the running total;
// 3. every block after the first adds the scanned total of the blocks before it.
#include "block_scan.cuh"

template <typename T, typename Op>
__global__ void hierarchical_block_scan(const T* in, T* out, T* block_sums, long long n) {
  Op op;
  const long long g = (long long)blockIdx.x * blockDim.x + threadIdx.x;
  T v = g < n ? in[g] : Op::identity();
  v = scancheck::block_scan_warps(v, shared_as<T>(), op);
  if (g < n) out[g] = v;
  if (threadIdx.x == blockDim.x - 1) block_sums[blockIdx.x] = v;
}

template <typename T, typename Op>
__global__ void hierarchical_scan_sums(T* sums, long long count) {
  Op op;
  T* warp_sums = shared_as<T>();
  T* carry_shared = warp_sums + scancheck::kWarp;
  T carry = Op::identity();
  for (long long base = 0; base < count; base += blockDim.x) {
    __syncthreads();  // the previous chunk's readers of warp_sums are done
    const long long i = base + threadIdx.x;
    T v = i < count ? sums[i] : Op::identity();
    v = scancheck::block_scan_warps(v, warp_sums, op);
    v = op(carry, v);
    if (i < count) sums[i] = v;
    if (threadIdx.x == blockDim.x - 1) *carry_shared = v;
    __syncthreads();
    carry = *carry_shared;
  }
}

template <typename T, typename Op>
__global__ void hierarchical_add(T* out, const T* sums, long long n) {
  Op op;
  const long long g = (long long)blockIdx.x * blockDim.x + threadIdx.x;
  if (blockIdx.x > 0 && g < n) out[g] = op(sums[blockIdx.x - 1], out[g]);
}
