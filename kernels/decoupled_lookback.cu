// Single-pass scan with decoupled look-back (Merrill & Garland, "Single-pass Parallel
// Prefix Scan with Decoupled Look-back", NVIDIA TR 2016-002).  Each tile publishes its
// aggregate at once (flag 1), then its inclusive prefix (flag 2) once known; warp 0
// looks back over 32 predecessors at a time, folding aggregates until it meets an
// inclusive prefix.  Tiles are numbered by an atomic counter in the order blocks start.
#include "block_scan.cuh"

namespace {
enum : int { kInvalid = 0, kAggregate = 1, kInclusive = 2 };

// One padding word every 32 elements keeps the blocked reads conflict-free.
__device__ __forceinline__ int pad(int i) { return i + (i >> 5); }
}  // namespace

template <typename T, typename Op, int ITEMS>
__global__ void decoupled_lookback(const T* __restrict__ in, T* __restrict__ out, long long n,
                                   unsigned* counter, T* aggregates, T* inclusives, int* flags) {
  using namespace scancheck;
  Op op;
  __shared__ unsigned tile_shared;
  T* warp_totals = shared_as<T>();
  T* prefix_shared = warp_totals + kWarp;
  const int t = threadIdx.x, lane = t % kWarp, warp = t / kWarp, nwarps = blockDim.x / kWarp;
  T* stage = prefix_shared + 1 + warp * pad(kWarp * ITEMS);
  if (t == 0) tile_shared = atomicAdd(counter, 1u);
  __syncthreads();
  const long long tile = tile_shared;
  const long long seg = (tile * blockDim.x + (long long)warp * kWarp) * ITEMS;

  T items[ITEMS];
#pragma unroll
  for (int i = 0; i < ITEMS; ++i) {  // coalesced, warp-striped
    const long long e = seg + i * kWarp + lane;
    stage[pad(i * kWarp + lane)] = e < n ? in[e] : Op::identity();
  }
  __syncwarp();
#pragma unroll
  for (int i = 0; i < ITEMS; ++i) items[i] = stage[pad(lane * ITEMS + i)];
#pragma unroll
  for (int i = 1; i < ITEMS; ++i) items[i] = op(items[i - 1], items[i]);

  const T wi = warp_inclusive(items[ITEMS - 1], op);
  if (lane == kWarp - 1) warp_totals[warp] = wi;
  __syncthreads();
  if (warp == 0) {
    T s = lane < nwarps ? warp_totals[lane] : Op::identity();
    s = warp_inclusive(s, op);
    if (lane < nwarps) warp_totals[lane] = s;
  }
  __syncthreads();
  T lane_prefix = shfl_up(wi, 1);
  if (lane == 0) lane_prefix = Op::identity();
  const T warp_prefix = warp > 0 ? warp_totals[warp - 1] : Op::identity();
  const T thread_prefix = op(warp_prefix, lane_prefix);
  const T tile_total = warp_totals[nwarps - 1];

  if (warp == 0) {
    if (tile == 0) {
      if (lane == 0) {
        store_volatile(&inclusives[0], tile_total);
        __threadfence();
        atomicExch(&flags[0], kInclusive);
      }
    } else {
      if (lane == 0) {
        store_volatile(&aggregates[tile], tile_total);
        __threadfence();
        atomicExch(&flags[tile], kAggregate);
      }
      T prefix = Op::identity();
      bool first = true;
      for (long long end = tile - 1;; end -= kWarp) {
        const long long j = end - lane;  // lane 0 is the nearest predecessor
        int f = kInclusive;
        do {
          if (j >= 0) f = *reinterpret_cast<volatile int*>(&flags[j]);
        } while (__any_sync(0xffffffffu, f == kInvalid));
        __threadfence();
        T val = Op::identity();
        if (j >= 0) val = f == kInclusive ? load_volatile(&inclusives[j]) : load_volatile(&aggregates[j]);
        const unsigned inclusive_lanes = __ballot_sync(0xffffffffu, f == kInclusive && j >= 0);
        const int stop = inclusive_lanes ? __ffs(inclusive_lanes) - 1 : kWarp - 1;
        T window = shfl_idx(val, stop);  // farthest first: earlier tiles on the left
        for (int k = stop - 1; k >= 0; --k) window = op(window, shfl_idx(val, k));
        prefix = first ? window : op(window, prefix);
        first = false;
        if (inclusive_lanes) break;
      }
      if (lane == 0) {
        store_volatile(&inclusives[tile], op(prefix, tile_total));
        __threadfence();
        atomicExch(&flags[tile], kInclusive);
        *prefix_shared = prefix;
      }
    }
  }
  __syncthreads();
  const T full = op(tile > 0 ? *prefix_shared : Op::identity(), thread_prefix);
#pragma unroll
  for (int i = 0; i < ITEMS; ++i) items[i] = op(full, items[i]);
#pragma unroll
  for (int i = 0; i < ITEMS; ++i) stage[pad(lane * ITEMS + i)] = items[i];
  __syncwarp();
#pragma unroll
  for (int i = 0; i < ITEMS; ++i) {
    const long long e = seg + i * kWarp + lane;
    if (e < n) out[e] = stage[pad(i * kWarp + lane)];
  }
}
