// Single-pass chained scan with adjacent synchronization (seed 002, 11.6), made safe:
// tiles are numbered by an atomic counter in the order blocks start, so a tile only
// ever waits on a tile whose block is already running.  (Numbered by blockIdx, as in
// the seed, a tile can wait forever on a block the scheduler has not started.)
#include "block_scan.cuh"

template <typename T, typename Op>
__global__ void chained(const T* in, T* out, long long n, unsigned* counter, T* inclusive,
                        int* flags) {
  Op op;
  __shared__ unsigned tile_shared;
  T* warp_sums = shared_as<T>();
  T* prev_shared = warp_sums + scancheck::kWarp;
  if (threadIdx.x == 0) tile_shared = atomicAdd(counter, 1u);
  __syncthreads();
  const long long tile = tile_shared;
  const long long g = tile * blockDim.x + threadIdx.x;
  T v = g < n ? in[g] : Op::identity();
  v = scancheck::block_scan_warps(v, warp_sums, op);
  if (threadIdx.x == blockDim.x - 1) {
    if (tile == 0) {
      scancheck::store_volatile(&inclusive[0], v);
    } else {
      while (*reinterpret_cast<volatile int*>(&flags[tile - 1]) == 0) {
      }
      __threadfence();
      const T prev = scancheck::load_volatile(&inclusive[tile - 1]);
      *prev_shared = prev;
      scancheck::store_volatile(&inclusive[tile], op(prev, v));
    }
    __threadfence();
    atomicExch(&flags[tile], 1);
  }
  __syncthreads();
  if (tile > 0) v = op(*prev_shared, v);
  if (g < n) out[g] = v;
}
