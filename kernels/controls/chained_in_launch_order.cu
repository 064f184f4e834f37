// Negative control: a chained scan whose tiles are numbered by launch position, as
// seed 002 (11.6) numbers them by blockIdx.x.  That assumes an order in which the GPU
// starts blocks, which CUDA does not promise.  This control assumes the blocks start
// from the last one down; the hardware starts them roughly in blockIdx order, so with
// more blocks than fit on the GPU at once, resident blocks wait forever on tiles whose
// blocks cannot start: a hang.
// Conformance-target signature (see scancheck/targets.py); scancheck prepends "typedef ... T;".
#include "chained_tile.cuh"

extern "C" __global__ void scan(const T* in, T* out, long long n, void* scratch) {
  const long long tile = gridDim.x - 1 - blockIdx.x;  // the bug: an assumed scheduling order
  chained_tile<long long>(in, out, n, tile, scratch);
}
