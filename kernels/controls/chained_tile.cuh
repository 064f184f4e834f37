// The body the chained-scan negative controls share: a Kogge-Stone tile scan, then the
// tile's inclusive prefix passed on through a flag and a value per tile, as seed 002
// (11.6) does.  Each template switch is one control's bug, off by default:
//   Index        the type of the element index (int: index_overflow.cu);
//   kGuardLoads  false reads past the end in the last tile (out_of_bounds_read.cu);
//   kStoreLast   false never writes the last output (output_never_written.cu).
#pragma once

// Kogge-Stone over the block, in place in xy[0, blockDim.x): thread t ends with xy[t] the
// inclusive sum of xy[0..t].
__device__ void tile_kogge_stone(T* xy, int t) {
  for (int s = 1; s < blockDim.x; s *= 2) {
    __syncthreads();
    const T v = t >= s ? xy[t - s] + xy[t] : xy[t];
    __syncthreads();
    xy[t] = v;
  }
  __syncthreads();
}

// One thread of the tile: waits for the predecessor's inclusive prefix, publishes its own
// (prefix + total) with a fence before the flag, and returns the predecessor's.
__device__ T pass_on(int* flags, T* sums, long long tile, T total) {
  T prev = T(0);
  if (tile > 0) {
    while (*reinterpret_cast<volatile int*>(&flags[tile - 1]) == 0) {
    }
    __threadfence();
    prev = *reinterpret_cast<volatile T*>(&sums[tile - 1]);
  }
  *reinterpret_cast<volatile T*>(&sums[tile]) = prev + total;
  __threadfence();
  atomicExch(&flags[tile], 1);
  return prev;
}

template <typename Index, bool kGuardLoads = true, bool kStoreLast = true>
__device__ void chained_tile(const T* in, T* out, long long n, long long tile,
                             void* scratch) {
  extern __shared__ __align__(16) unsigned char raw[];
  T* xy = reinterpret_cast<T*>(raw);
  __shared__ T prev_s;
  const long long blocks = gridDim.x;
  int* flags = reinterpret_cast<int*>(static_cast<char*>(scratch) + 16);
  T* sums = reinterpret_cast<T*>(static_cast<char*>(scratch) + 16 + 4 * ((blocks + 1) & ~1LL));
  const int t = threadIdx.x;
  const Index i = tile * blockDim.x + t;
  xy[t] = (!kGuardLoads || i < n) ? in[i] : T(0);
  tile_kogge_stone(xy, t);
  if (t == blockDim.x - 1) prev_s = pass_on(flags, sums, tile, xy[t]);
  __syncthreads();
  if (i < n - (kStoreLast ? 0 : 1)) out[i] = prev_s + xy[t];
}
