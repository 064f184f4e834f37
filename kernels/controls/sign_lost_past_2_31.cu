// Negative control: a single-pass chained scan, 16 elements a thread, with 64-bit indices,
// whose elements past 2**31 are read as magnitudes -- a stand-in for a large-n code path
// that loads through an unsigned or magnitude type.  Right everywhere below 2**31, and on
// the step data past it (zeros and ones have no sign): only random data past 2**31, with
// its negative values, shows it.
// Conformance-target signature (see scancheck/targets.py); scancheck prepends "typedef ... T;".
// The harness launches one block per blockDim.x elements; a tile here holds 16 times that,
// so the blocks past the last tile return at once.
#include "chained_tile.cuh"

enum { kItems = 16 };

__device__ __forceinline__ T load(const T* in, long long e) {
  const T v = in[e];
  return e >= (1LL << 31) && v < T(0) ? -v : v;  // the bug
}

extern "C" __global__ void scan(const T* in, T* out, long long n, void* scratch) {
  extern __shared__ __align__(16) unsigned char tile_raw[];
  T* totals = reinterpret_cast<T*>(tile_raw);
  __shared__ unsigned tile_s;
  __shared__ T prev_s;
  const int t = threadIdx.x;
  if (t == 0) tile_s = atomicAdd(static_cast<unsigned*>(scratch), 1u);
  __syncthreads();
  const long long tile = tile_s, tile_size = static_cast<long long>(blockDim.x) * kItems;
  if (tile * tile_size >= n) return;
  int* flags = reinterpret_cast<int*>(static_cast<char*>(scratch) + 16);
  T* sums = reinterpret_cast<T*>(static_cast<char*>(scratch) + 16 + 4 * ((gridDim.x + 1LL) & ~1LL));
  const long long base = tile * tile_size + t * kItems;
  T items[kItems];
  T run = T(0);
#pragma unroll
  for (int k = 0; k < kItems; ++k) {
    const long long e = base + k;
    run += e < n ? load(in, e) : T(0);
    items[k] = run;
  }
  totals[t] = run;
  tile_kogge_stone(totals, t);
  if (t == blockDim.x - 1) prev_s = pass_on(flags, sums, tile, totals[t]);
  __syncthreads();
  const T offset = prev_s + (t > 0 ? totals[t - 1] : T(0));
#pragma unroll
  for (int k = 0; k < kItems; ++k) {
    const long long e = base + k;
    if (e < n) out[e] = offset + items[k];
  }
}
