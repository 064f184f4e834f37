// The body the chained-scan negative controls share: a Kogge-Stone tile scan, then the
// tile's inclusive prefix passed on through a flag and a value per tile, as seed 002
// (11.6) does.  Each template switch is one control's bug, off by default:
//   Index        the type of the element index (int: index_overflow.cu);
//   kGuardLoads  false reads past the end in the last tile (out_of_bounds_read.cu);
//   kStoreLast   false never writes the last output (output_never_written.cu).
// chained_tile16 is the same scan with 16 elements a thread, for the controls that need
// 2**32 elements to run fast; its bugs are the element index's type and how an element
// is loaded (unsigned_index.cu, sign_lost_past_2_31.cu).
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

// An element as it is read: plainly, unless a control says otherwise.
struct PlainLoad {
  __device__ T operator()(const T* in, long long e) const { return in[e]; }
};

// The chained scan at 16 elements a thread: the block takes the next tile from the atomic
// counter in scratch, and the blocks past the last tile return at once (the harness
// launches one block per blockDim.x elements).
template <typename Index, typename Load = PlainLoad>
__device__ void chained_tile16(const T* in, T* out, long long n, void* scratch) {
  constexpr int kItems = 16;
  extern __shared__ __align__(16) unsigned char raw[];
  T* totals = reinterpret_cast<T*>(raw);
  __shared__ unsigned tile_s;
  __shared__ T prev_s;
  const int t = threadIdx.x;
  if (t == 0) tile_s = atomicAdd(static_cast<unsigned*>(scratch), 1u);
  __syncthreads();
  const long long tile = tile_s, tile_size = static_cast<long long>(blockDim.x) * kItems;
  if (tile * tile_size >= n) return;
  int* flags = reinterpret_cast<int*>(static_cast<char*>(scratch) + 16);
  T* sums = reinterpret_cast<T*>(static_cast<char*>(scratch) + 16 + 4 * ((gridDim.x + 1LL) & ~1LL));
  const Index base = static_cast<Index>(tile * tile_size) + t * kItems;
  const Load load;
  T items[kItems];
  T run = T(0);
#pragma unroll
  for (int k = 0; k < kItems; ++k) {
    const Index e = base + k;
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
    const Index e = base + k;
    if (e < n) out[e] = offset + items[k];
  }
}
