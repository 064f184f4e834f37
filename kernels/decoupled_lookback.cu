// Single-pass scan with decoupled look-back (Merrill & Garland, "Single-pass Parallel
// Prefix Scan with Decoupled Look-back", NVIDIA TR 2016-002).  Each tile publishes its
// aggregate at once, then its inclusive prefix once known; warp 0 looks back over
// 32 * span predecessors at a time, folding aggregates until it meets an inclusive prefix.
// Tiles are numbered by an atomic counter in the order blocks start, so a tile never
// waits on a block that has not been scheduled.
#include "block_scan.cuh"

namespace {
// What poll reports of a tile; publish takes kAggregate or kInclusive.
enum : int { kInvalid = 0, kAggregate = 1, kInclusive = 2 };

// One padding element every 32 (every 16 for 8-byte elements, which take two banks each)
// keeps both the striped and the per-thread accesses to a warp's staging area free of
// bank conflicts (scancheck.core.cuda.lookback_smem sizes it the same way).
template <typename T>
__host__ __device__ constexpr int pad(int i) { return sizeof(T) == 8 ? i + (i >> 4) : i + (i >> 5); }

// A tile's flag as stored: 2 * epoch for an aggregate, 2 * epoch + 1 for an inclusive
// prefix.  Each launch on the same status array takes the next epoch, so flags left by an
// earlier launch read as invalid and the array is zeroed once, not before every launch
// (at 2^16..2^20 elements that fill costs as much as the scan).
__device__ __forceinline__ unsigned encode(int flag, unsigned epoch) {
  return 2u * epoch + (flag == kInclusive ? 1u : 0u);
}
__device__ __forceinline__ int decode(unsigned stored, unsigned epoch) {
  return stored < 2u * epoch ? kInvalid : (stored & 1u) ? kInclusive : kAggregate;
}

// Per-tile status.  Packing 1: a 4-byte element and its flag share one 64-bit word, so
// one load sees both and no fence is needed between them.  Packing 2: an 8-byte element
// and its flag share one 16-byte word, written and read by single 16-byte accesses (as
// CUB's ScanTileState does for 8-byte primitives).  Packing 0: a flag array and value
// arrays, ordered by fences on both sides.  epoch >= 1; a status array zeroed before the
// launch works at epoch 1.
template <typename T, int Packing = sizeof(T) == 4 ? 1 : 0>
struct TileStatus {
  int* flags;
  T* aggregates;
  T* inclusives;
  unsigned long long* words;
  unsigned epoch = 1;

  __device__ void publish(long long tile, int flag, T value) const {
    scancheck::store_volatile(flag == kInclusive ? &inclusives[tile] : &aggregates[tile], value);
    __threadfence();
    atomicExch(&flags[tile], static_cast<int>(encode(flag, epoch)));
  }
  __device__ int poll(long long tile, T& value) const {
    const int f = decode(*reinterpret_cast<volatile unsigned*>(&flags[tile]), epoch);
    if (f != kInvalid) {
      __threadfence();
      value = scancheck::load_volatile(f == kInclusive ? &inclusives[tile] : &aggregates[tile]);
    }
    return f;
  }
};

template <typename T>
struct TileStatus<T, 1> {
  int* flags;
  T* aggregates;
  T* inclusives;
  unsigned long long* words;
  unsigned epoch = 1;

  __device__ void publish(long long tile, int flag, T value) const {
    const unsigned long long w = (static_cast<unsigned long long>(encode(flag, epoch)) << 32) |
                                 *reinterpret_cast<const unsigned*>(&value);
    atomicExch(&words[tile], w);
  }
  __device__ int poll(long long tile, T& value) const {
    const unsigned long long w = *reinterpret_cast<volatile unsigned long long*>(&words[tile]);
    const unsigned bits = static_cast<unsigned>(w);
    value = *reinterpret_cast<const T*>(&bits);
    return decode(static_cast<unsigned>(w >> 32), epoch);
  }
};

template <typename T>
struct TileStatus<T, 2> {
  int* flags;
  T* aggregates;
  T* inclusives;
  unsigned long long* words;  // two per tile: the flag, then the value's bits
  unsigned epoch = 1;

  __device__ void publish(long long tile, int flag, T value) const {
    const unsigned long long f = encode(flag, epoch);
    const unsigned long long bits = *reinterpret_cast<const unsigned long long*>(&value);
    asm volatile("st.relaxed.gpu.global.v2.u64 [%0], {%1, %2};"
                 :: "l"(words + 2 * tile), "l"(f), "l"(bits) : "memory");
  }
  __device__ int poll(long long tile, T& value) const {
    unsigned long long f, bits;
    asm volatile("ld.relaxed.gpu.global.v2.u64 {%0, %1}, [%2];"
                 : "=l"(f), "=l"(bits) : "l"(words + 2 * tile) : "memory");
    value = *reinterpret_cast<const T*>(&bits);
    return decode(static_cast<unsigned>(f), epoch);
  }
};

// How the plain scan keeps tile status: packed with the flag for 4- and 8-byte elements.
template <typename T>
constexpr int kPacking = sizeof(T) == 4 ? 1 : sizeof(T) == 8 ? 2 : 0;

// Elements of T per 16-byte access, or 0 where a thread's ITEMS do not split into them.
template <typename T, int ITEMS>
constexpr int kVector = (sizeof(T) == 4 || sizeof(T) == 8 || sizeof(T) == 16) &&
                                ITEMS % (sizeof(T) <= 16 ? 16 / sizeof(T) : 1) == 0
                            ? 16 / sizeof(T) : 0;

// Moves a warp's 32*ITEMS elements between global memory (coalesced) and the warp's
// staging area; full segments at a 16-byte aligned base go 16 bytes per thread per access
// (ld.global.cs / st.global.cs: the data is touched once), the rest element by element.
// HOIST issues all of a thread's 16-byte loads before it stores any to shared memory: left
// to itself, ptxas 13 issues 3 or 4 of them (float32 at items 32 has 8, sm_90), waits, then
// the next few, so a fraction of the tile's bytes is in flight at once; hoisted, all are, for
// more registers a thread.  The order of the source does not hold ptxas to it: the stores'
// index takes a term made of every loaded vector that is zero for every n >= 0, so none can
// be stored before all have arrived.  The same values land in the same places either way.
template <typename T, int ITEMS, bool HOIST = false>
__device__ __forceinline__ void load_striped(T* stage, const T* in, long long seg, long long n,
                                             bool full, T pad_value) {
  const int lane = threadIdx.x % 32;
  constexpr int V = kVector<T, ITEMS>;
  if constexpr (V > 0) {
    if (full && (reinterpret_cast<unsigned long long>(in) % 16) == 0) {
      const int4* src = reinterpret_cast<const int4*>(in + seg);
      if constexpr (HOIST) {
        int4 v[ITEMS / V];
#pragma unroll
        for (int i = 0; i < ITEMS / V; ++i) v[i] = __ldcs(&src[i * 32 + lane]);
        int fold = 0;
#pragma unroll
        for (int i = 0; i < ITEMS / V; ++i) fold ^= v[i].x;
        const int zero = static_cast<int>(n >> 63) & fold;  // n >= 0: 0
#pragma unroll
        for (int i = 0; i < ITEMS / V; ++i) {
          const T* vals = reinterpret_cast<const T*>(&v[i]);
#pragma unroll
          for (int k = 0; k < V; ++k) stage[pad<T>((i * 32 + lane) * V + k) + zero] = vals[k];
        }
      } else {
#pragma unroll
        for (int i = 0; i < ITEMS / V; ++i) {
          const int4 v = __ldcs(&src[i * 32 + lane]);
          const T* vals = reinterpret_cast<const T*>(&v);
#pragma unroll
          for (int k = 0; k < V; ++k) stage[pad<T>((i * 32 + lane) * V + k)] = vals[k];
        }
      }
      return;
    }
  }
#pragma unroll
  for (int i = 0; i < ITEMS; ++i) {
    const long long e = seg + i * 32 + lane;
    stage[pad<T>(i * 32 + lane)] = (full || e < n) ? in[e] : pad_value;
  }
}

template <typename T, int ITEMS>
__device__ __forceinline__ void store_striped(T* out, const T* stage, long long seg, long long n,
                                              bool full) {
  const int lane = threadIdx.x % 32;
  constexpr int V = kVector<T, ITEMS>;
  if constexpr (V > 0) {
    if (full && (reinterpret_cast<unsigned long long>(out) % 16) == 0) {
      int4* dst = reinterpret_cast<int4*>(out + seg);
#pragma unroll
      for (int i = 0; i < ITEMS / V; ++i) {
        int4 v;
        T* vals = reinterpret_cast<T*>(&v);
#pragma unroll
        for (int k = 0; k < V; ++k) vals[k] = stage[pad<T>((i * 32 + lane) * V + k)];
        __stcs(&dst[i * 32 + lane], v);
      }
      return;
    }
  }
#pragma unroll
  for (int i = 0; i < ITEMS; ++i) {
    const long long e = seg + i * 32 + lane;
    if (full || e < n) out[e] = stage[pad<T>(i * 32 + lane)];
  }
}
}  // namespace

// What a tile reads and writes around the scan: the plain scan reads and writes T itself;
// scancheck's exact oracle (kernels/oracle/exact_scan.cu) reads float bits, scans exact
// fixed-point integers and writes the rounded bits, in the same single pass.
// A conversion whose T is wide may set kRecompute: a thread then keeps only its running
// sum and converts each input twice (once for the tile's sums, once for the outputs), so
// ITEMS wide values never sit in registers and more blocks fit on an SM.  Its outputs run
// on from the thread's prefix (prefix + x0 + x1 ...), an order only exact sums may take.
// kStaged keeps values out of registers too, in the model's order: each output is
// prefix (+) (x0 (+) ... (+) xi), the thread's running sum taken again from the staging area.
template <typename T, typename Op>
struct Plain {
  using In = T;
  using Out = T;
  static constexpr bool kRecompute = false;
  // 4- and 8-byte values wait in the staging area, which holds the tile anyway from the
  // loads to the stores, and not in registers as well: a thread needs 40 registers, not 64
  // (float64 at items 16, float32 at items 32), so the staging area, not the register file,
  // bounds the blocks an SM holds (float64 at 256 threads: 6, not 4; float32 at 128: 12, not
  // 8) and more of the tile's bytes are in flight.  One H100, scancheck bench at the tuned
  // launches, x memcpy at 2^28: float64 0.88 -> 0.915, int64 0.87-0.89 -> 0.916, float32
  // 0.979 -> 0.99-1.01, int32 0.974 -> 0.998.  Other sizes keep the register path (unmeasured).
  static constexpr bool kStaged = sizeof(T) == 8 || sizeof(T) == 4;
  __device__ static In pad() { return Op::identity(); }
  __device__ T load(In v) const { return v; }
  __device__ Out store(T v) const { return v; }
};

// Shared memory: 33 T (warp totals, the tile's prefix), then each warp's staging area of
// pad(32 * ITEMS) elements of In or of Out, whichever takes more bytes.  HOIST: as
// load_striped's.  span (1..MAX_SPAN): predecessors each lane polls per round of the
// look-back.  Returns the tile the block scanned.
template <typename T, typename Op, int ITEMS, bool HOIST = false, int MAX_SPAN = 1,
          typename Convert, typename Status>
__device__ __forceinline__ long long lookback_scan(const typename Convert::In* __restrict__ in,
                                              typename Convert::Out* __restrict__ out, long long n,
                                              unsigned* counter, const Status& status,
                                              const Convert& convert,
                                              long long prefetch_tiles = 0,
                                              unsigned backoff_ns = 0, int span = 1) {
  using namespace scancheck;
  using In = typename Convert::In;
  using Out = typename Convert::Out;
  Op op;
  __shared__ unsigned tile_shared;
  T* warp_totals = shared_as<T>();
  T* prefix_shared = warp_totals + kWarp;
  const int t = threadIdx.x, lane = t % kWarp, warp = t / kWarp, nwarps = blockDim.x / kWarp;
  constexpr int kInBytes = pad<In>(kWarp * ITEMS) * sizeof(In);
  constexpr int kOutBytes = pad<Out>(kWarp * ITEMS) * sizeof(Out);
  unsigned char* stage_bytes = reinterpret_cast<unsigned char*>(prefix_shared + 1) +
                               warp * (kInBytes > kOutBytes ? kInBytes : kOutBytes);
  In* stage_in = reinterpret_cast<In*>(stage_bytes);
  Out* stage_out = reinterpret_cast<Out*>(stage_bytes);
  if (t == 0) {
    tile_shared = atomicAdd(counter, 1u);
    // The last ticket is drawn after every other: the counter is free to reset for the
    // next launch, which then needs no fill of its own.
    if (tile_shared == gridDim.x - 1) atomicExch(counter, 0u);
  }
  __syncthreads();
  const long long tile = tile_shared;
  const long long seg = (tile * blockDim.x + (long long)warp * kWarp) * ITEMS;
  const bool full = (tile + 1) * blockDim.x * ITEMS <= n;
  if (prefetch_tiles > 0) {
    // Ask L2 for the tile prefetch_tiles tickets ahead, one 128-byte line a thread.  While
    // warp 0 looks back, the block's other warps wait at a barrier holding its shared
    // memory, and the SM starts no loads of its own: at 8-byte elements that left DRAM
    // about 80% busy (ncu, H100, 2^28).  Tiles already asked for keep it busy meanwhile;
    // their loads then hit L2.  A hint only: no value read or written changes.
    const long long ahead = (tile + prefetch_tiles) * blockDim.x * ITEMS;
    if (ahead + static_cast<long long>(blockDim.x) * ITEMS <= n) {
      const char* base = reinterpret_cast<const char*>(in + ahead);
      const int bytes = blockDim.x * ITEMS * static_cast<int>(sizeof(In));
      for (int off = t * 128; off < bytes; off += blockDim.x * 128)
        asm volatile("prefetch.global.L2 [%0];" ::"l"(base + off));
    }
  }

  load_striped<In, ITEMS, HOIST>(stage_in, in, seg, n, full, Convert::pad());
  __syncwarp();
  constexpr bool kRecompute = Convert::kRecompute, kStaged = Convert::kStaged;
  static_assert(!(kRecompute || kStaged) || sizeof(In) == sizeof(Out),
                "outputs overwrite inputs in place");
  T items[kRecompute || kStaged ? 1 : ITEMS];
  if constexpr (kRecompute || kStaged) {  // the same sum either way: x0 (+) x1 (+) ...
    items[0] = convert.load(stage_in[pad<In>(lane * ITEMS)]);
#pragma unroll
    for (int i = 1; i < ITEMS; ++i)
      items[0] = op(items[0], convert.load(stage_in[pad<In>(lane * ITEMS + i)]));
  } else {
#pragma unroll
    for (int i = 0; i < ITEMS; ++i) items[i] = convert.load(stage_in[pad<In>(lane * ITEMS + i)]);
#pragma unroll
    for (int i = 1; i < ITEMS; ++i) items[i] = op(items[i - 1], items[i]);
  }
  const T wi = warp_inclusive(items[kRecompute || kStaged ? 0 : ITEMS - 1], op);
  if (lane == kWarp - 1) warp_totals[warp] = wi;
  __syncthreads();
  scan_warp_totals(warp_totals, op);
  __syncthreads();
  T lane_prefix = shfl_up(wi, 1);
  if (lane == 0) lane_prefix = Op::identity();
  const T warp_prefix = warp > 0 ? warp_totals[warp - 1] : Op::identity();
  const T thread_prefix = op(warp_prefix, lane_prefix);
  const T tile_total = warp_totals[nwarps - 1];

  if (warp == 0) {
    if (tile == 0) {
      if (lane == 0) status.publish(0, kInclusive, tile_total);
    } else {
      if (lane == 0) status.publish(tile, kAggregate, tile_total);
      T prefix = Op::identity();
      bool first = true;
      // Each round polls 32 * span predecessors, lane l the span tiles just before lane
      // l-1's.  The inclusive prefixes advance by at most one round's tiles per trip through
      // L2, so tiles that stream faster than 32 per trip (small tiles, fast memory) wait on
      // the chain, not on DRAM; a wider round keeps the chain ahead.
      for (long long end = tile - 1;; end -= static_cast<long long>(kWarp) * span) {
        const long long first_j = end - static_cast<long long>(lane) * span;  // nearest
        int f[MAX_SPAN];
        T val[MAX_SPAN];
        for (;;) {
          bool invalid = false;
#pragma unroll
          for (int k = 0; k < MAX_SPAN; ++k) {
            f[k] = kInclusive;  // past tile 0, or past span: read as the identity
            val[k] = Op::identity();
            if (k < span && first_j - k >= 0) f[k] = status.poll(first_j - k, val[k]);
            invalid |= f[k] == kInvalid;
          }
          if (!__any_sync(0xffffffffu, invalid)) break;
          // A warp that polls again at once keeps a request to L2 in flight all the while it
          // waits, beside the tiles' loads and stores (CUB's look-back waits likewise, tuned
          // per architecture).  A wait moves time only: the flags read are the same.
          if (backoff_ns) __nanosleep(backoff_ns);
        }
        // The lane's part: its tiles from its nearest inclusive one (or its farthest) to its
        // nearest, earlier tiles on the left.
        T part = val[0];
        bool inclusive = f[0] == kInclusive && first_j >= 0;
#pragma unroll
        for (int k = 1; k < MAX_SPAN; ++k) {
          if (k < span && !inclusive) {
            part = op(val[k], part);
            inclusive = f[k] == kInclusive && first_j - k >= 0;
          }
        }
        const unsigned inclusive_lanes = __ballot_sync(0xffffffffu, inclusive);
        const int stop = inclusive_lanes ? __ffs(inclusive_lanes) - 1 : kWarp - 1;
        // Fold lanes stop..0 (earliest tiles first) as a tree: lane l takes lane l+off's
        // partial, which covers earlier tiles, on its left.
#pragma unroll
        for (int off = 1; off < kWarp; off *= 2) {
          const T other = shfl_down(part, off);
          if (lane + off <= stop) part = op(other, part);
        }
        const T window = shfl_idx(part, 0);
        prefix = first ? window : op(window, prefix);
        first = false;
        if (inclusive_lanes) break;
      }
      if (lane == 0) {
        status.publish(tile, kInclusive, op(prefix, tile_total));
        *prefix_shared = prefix;
      }
    }
  }
  __syncthreads();
  const T full_prefix = op(tile > 0 ? *prefix_shared : Op::identity(), thread_prefix);
  if constexpr (kStaged) {
    // Output i is full_prefix (+) (x0 (+) ... (+) xi), as the model and the register path
    // combine it; each slot is read before it is overwritten, by the thread that owns it.
    T run = convert.load(stage_in[pad<In>(lane * ITEMS)]);
    stage_out[pad<Out>(lane * ITEMS)] = convert.store(op(full_prefix, run));
#pragma unroll
    for (int i = 1; i < ITEMS; ++i) {
      run = op(run, convert.load(stage_in[pad<In>(lane * ITEMS + i)]));
      stage_out[pad<Out>(lane * ITEMS + i)] = convert.store(op(full_prefix, run));
    }
  } else if constexpr (kRecompute) {
    T run = full_prefix;
#pragma unroll
    for (int i = 0; i < ITEMS; ++i) {
      run = op(run, convert.load(stage_in[pad<In>(lane * ITEMS + i)]));
      stage_out[pad<Out>(lane * ITEMS + i)] = convert.store(run);
    }
  } else {
#pragma unroll
    for (int i = 0; i < ITEMS; ++i) items[i] = op(full_prefix, items[i]);
#pragma unroll
    for (int i = 0; i < ITEMS; ++i) stage_out[pad<Out>(lane * ITEMS + i)] = convert.store(items[i]);
  }
  __syncwarp();
  store_striped<Out, ITEMS>(out, stage_out, seg, n, full);
  return tile;
}

template <typename T, typename Op, int ITEMS, int HOIST>
__global__ void decoupled_lookback(const T* __restrict__ in, T* __restrict__ out, long long n,
                                   unsigned* counter, int* flags, T* aggregates, T* inclusives,
                                   unsigned long long* words, long long prefetch_tiles,
                                   unsigned backoff_ns, int span, unsigned epoch) {
  // The most predecessors a lane polls per round (the registry's largest span): more would
  // hold 8-byte elements' polls in registers enough to cut the blocks an SM holds.
  constexpr int kMaxSpan = 2;
  const TileStatus<T, kPacking<T>> status{flags, aggregates, inclusives, words, epoch};
  lookback_scan<T, Op, ITEMS, HOIST != 0, kMaxSpan>(in, out, n, counter, status,
                                                    Plain<T, Op>{}, prefetch_tiles, backoff_ns,
                                                    span);
}
