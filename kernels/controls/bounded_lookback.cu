// Negative control: a single-pass scan whose tiles fold the aggregates of at most 1024
// predecessors, as a look-back that assumes its window always reaches a tile that already
// knows its inclusive prefix.  With 256 threads it is right for n <= 262,144 (1024 tiles)
// and wrong past it: a logic error that only sizes of many tiles show.
// Conformance-target signature (see scancheck/targets.py); scancheck prepends "typedef ... T;".
#include "chained_tile.cuh"

enum { kWindow = 1024 };

extern "C" __global__ void scan(const T* in, T* out, long long n, void* scratch) {
  extern __shared__ __align__(16) unsigned char tile_raw[];
  T* xy = reinterpret_cast<T*>(tile_raw);
  T* fold = xy + blockDim.x;
  __shared__ unsigned tile_s;
  const int t = threadIdx.x;
  if (t == 0) tile_s = atomicAdd(static_cast<unsigned*>(scratch), 1u);
  __syncthreads();
  const long long tile = tile_s, blocks = gridDim.x;
  int* flags = reinterpret_cast<int*>(static_cast<char*>(scratch) + 16);
  T* aggregates =
      reinterpret_cast<T*>(static_cast<char*>(scratch) + 16 + 4 * ((blocks + 1) & ~1LL));
  const long long i = tile * blockDim.x + t;
  xy[t] = i < n ? in[i] : T(0);
  tile_kogge_stone(xy, t);
  if (t == blockDim.x - 1) {  // the aggregate needs no predecessor: publish it at once
    *reinterpret_cast<volatile T*>(&aggregates[tile]) = xy[t];
    __threadfence();
    atomicExch(&flags[tile], 1);
  }
  // Thread t folds predecessors tile-1-t, tile-1-t-blockDim.x, ... inside the window.
  const long long reach = tile < kWindow ? tile : kWindow;  // the bug: older tiles are lost
  T acc = T(0);
  for (long long j = t; j < reach; j += blockDim.x) {
    const long long p = tile - 1 - j;
    while (*reinterpret_cast<volatile int*>(&flags[p]) == 0) {
    }
    __threadfence();
    acc += *reinterpret_cast<volatile T*>(&aggregates[p]);
  }
  fold[t] = acc;
  for (int s = blockDim.x / 2; s > 0; s /= 2) {
    __syncthreads();
    if (t < s) fold[t] += fold[t + s];
  }
  __syncthreads();
  if (i < n) out[i] = fold[0] + xy[t];
}
