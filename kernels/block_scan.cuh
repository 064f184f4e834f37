// Block-level scans that the multi-block kernels are built from.  Each mirrors a
// helper of scancheck/kernels/models.py combine for combine.
#pragma once
#include "scan_ops.cuh"

namespace scancheck {

enum : int { kWarp = 32 };

// Inclusive scan of one value per lane across a warp (models._warp_inclusive).
template <typename T, typename Op>
__device__ __forceinline__ T warp_inclusive(T v, Op op) {
  const unsigned lane = threadIdx.x % kWarp;
#pragma unroll
  for (unsigned d = 1; d < kWarp; d *= 2) {
    T y = shfl_up(v, d);
    if (lane >= d) v = op(y, v);
  }
  return v;
}

// After a barrier, warp 0 scans the block's warp totals in place; lanes past the last
// warp hold the identity (models._scan_warp_totals).
template <typename T, typename Op>
__device__ __forceinline__ void scan_warp_totals(T* sums, Op op) {
  const unsigned lane = threadIdx.x % kWarp, nwarps = blockDim.x / kWarp;
  if (threadIdx.x / kWarp == 0) {
    T s = lane < nwarps ? sums[lane] : Op::identity();
    s = warp_inclusive(s, op);
    if (lane < nwarps) sums[lane] = s;
  }
}

// Inclusive scan of one value per thread across the block (models._block_scan_warps).
// sums: 32 elements of shared memory.  The caller syncs before reusing sums.
template <typename T, typename Op>
__device__ __forceinline__ T block_scan_warps(T v, T* sums, Op op) {
  const unsigned lane = threadIdx.x % kWarp, warp = threadIdx.x / kWarp;
  v = warp_inclusive(v, op);
  if (lane == kWarp - 1) sums[warp] = v;
  __syncthreads();
  scan_warp_totals(sums, op);
  __syncthreads();
  if (warp > 0) v = op(sums[warp - 1], v);
  return v;
}

// Seed 001's double-buffered exclusive scan of one block (models._hillis_steele_exclusive).
// temp: 2*blockDim.x elements of shared memory; x_prev is element t-1 of the block (the
// identity for t = 0 or past the end).  Returns the exclusive prefix of element t.
template <typename T, typename Op>
__device__ __forceinline__ T hillis_steele_exclusive(T x_prev, T* temp, Op op) {
  const int t = threadIdx.x, nt = blockDim.x;
  int pout = 0, pin = 1;
  temp[pout * nt + t] = x_prev;
  __syncthreads();
  for (int offset = 1; offset < nt; offset *= 2) {
    pout = 1 - pout;
    pin = 1 - pout;
    if (t >= offset)
      temp[pout * nt + t] = op(temp[pin * nt + t - offset], temp[pin * nt + t]);
    else
      temp[pout * nt + t] = temp[pin * nt + t];
    __syncthreads();
  }
  return temp[pout * nt + t];
}

}  // namespace scancheck
