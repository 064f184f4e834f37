// Negative control: a correct chained scan whose store guard is off by one (i < n - 1), so
// the last output is never written.  Run after run on one size, a memory pool hands back
// the same bytes, which may still hold a right answer from before: the harness fills every
// output with 0xff bytes first, and the unwritten output shows.
// Conformance-target signature (see scancheck/targets.py); scancheck prepends "typedef ... T;".
#include "chained_tile.cuh"

extern "C" __global__ void scan(const T* in, T* out, long long n, void* scratch) {
  __shared__ unsigned tile_s;
  if (threadIdx.x == 0) tile_s = atomicAdd(static_cast<unsigned*>(scratch), 1u);
  __syncthreads();
  chained_tile<long long, true, /*kStoreLast=*/false>(in, out, n, tile_s, scratch);  // the bug
}
