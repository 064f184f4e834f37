// Negative control: a single-pass chained scan, 16 elements a thread, whose element index
// is unsigned 32-bit arithmetic.  Right up to 2**32 elements; past it the index wraps: the
// tiles beyond overwrite the first outputs and the last ones are never written.  No access
// leaves the arrays, so nothing faults -- a common real failure that only n > 2**32 shows.
// Conformance-target signature (see scancheck/targets.py); scancheck prepends "typedef ... T;".
// The harness launches one block per blockDim.x elements; a tile here holds 16 times that,
// so the blocks past the last tile return at once.
#include "chained_tile.cuh"

enum { kItems = 16 };

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
  const unsigned base = static_cast<unsigned>(tile * tile_size) + t * kItems;  // the bug
  T items[kItems];
  T run = T(0);
#pragma unroll
  for (int k = 0; k < kItems; ++k) {
    const unsigned e = base + k;
    run += e < n ? in[e] : T(0);
    items[k] = run;
  }
  totals[t] = run;
  tile_kogge_stone(totals, t);
  if (t == blockDim.x - 1) prev_s = pass_on(flags, sums, tile, totals[t]);
  __syncthreads();
  const T offset = prev_s + (t > 0 ? totals[t - 1] : T(0));
#pragma unroll
  for (int k = 0; k < kItems; ++k) {
    const unsigned e = base + k;
    if (e < n) out[e] = offset + items[k];
  }
}
