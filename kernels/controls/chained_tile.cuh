// The body the chained-scan negative controls share: a Kogge-Stone tile scan, then the
// tile's inclusive prefix passed on through a flag and a value per tile, as seed 002
// (11.6) does.  Index is the type of the element index: the bug of index_overflow.cu.
#pragma once

template <typename Index>
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
  xy[t] = i < n ? in[i] : T(0);
  for (int s = 1; s < blockDim.x; s *= 2) {
    __syncthreads();
    const T v = t >= s ? xy[t - s] + xy[t] : xy[t];
    __syncthreads();
    xy[t] = v;
  }
  __syncthreads();
  if (t == blockDim.x - 1) {
    T prev = T(0);
    if (tile > 0) {
      while (*reinterpret_cast<volatile int*>(&flags[tile - 1]) == 0) {
      }
      __threadfence();
      prev = *reinterpret_cast<volatile T*>(&sums[tile - 1]);
    }
    *reinterpret_cast<volatile T*>(&sums[tile]) = prev + xy[t];
    __threadfence();
    atomicExch(&flags[tile], 1);
    prev_s = prev;
  }
  __syncthreads();
  if (i < n) out[i] = prev_s + xy[t];
}
