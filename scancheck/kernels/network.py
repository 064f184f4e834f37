"""Combine networks: the executable form of a scan schedule.

A :class:`Network` is the exact sequence of combines and copies a kernel performs,
written as vectorised steps over one flat memory (global arrays, shared memory,
registers).  Steps are grouped into barrier intervals.  From one network come:

* its result under any operator, bit for bit what the kernel computes
  (every read of a step happens before its writes, as in a race-free kernel);
* its work (combines), depth (longest chain of combines) and the summation-tree
  depth of every output, which sizes the rounding bound;
* its hazards: a location written by one thread and touched by another thread in
  the same barrier interval;
* a replay of a hazardous interval warp by warp in a chosen order, which shows the
  wrong answers a data race can produce.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ..core.arrays import dtype_name
from ..core.operators import Operator, get_operator

GLOBAL, SHARED, REGISTER = "global", "shared", "register"
WARP = 32


@dataclass
class Step:
    """Vectorised ops of one kind: ``dst = a (+) b`` (combine) or ``dst = b`` (copy)."""

    label: str
    combine: bool
    dst: np.ndarray
    a: np.ndarray | None
    b: np.ndarray
    thread: np.ndarray
    #: A barrier (or a kernel boundary, or a warp-synchronous shuffle) precedes this step.
    barrier: bool = True
    #: Ops run one after another, each after the previous (ordered by flags between
    #: blocks, as in a chained scan); hazard analysis leaves such steps out.
    serial: bool = False


@dataclass
class Hazard:
    """A location one thread writes and another thread touches between the same barriers."""

    step: str
    region: str
    index: int
    writer: int
    other: int
    kind: str  # "read-write" (order undetermined) or "write-write"

    def __str__(self) -> str:
        return (
            f"{self.kind} on {self.region}[{self.index}] in step '{self.step}': "
            f"thread {self.writer} writes, thread {self.other} also accesses"
        )


@dataclass
class Metrics:
    """Work and depth of a network and the tree depth of each output."""

    work: int
    depth: int
    output_depths: np.ndarray
    steps: int
    barriers: int


@dataclass
class Network:
    """A scan schedule over one flat memory; build it with :meth:`alloc`, :meth:`op`."""

    n: int
    inclusive: bool
    regions: dict[str, tuple[int, int, str]] = field(default_factory=dict)
    steps: list[Step] = field(default_factory=list)
    size: int = 0
    #: Buffers the seeds' worked examples inspect: name -> (region, after step index).
    snapshots: dict[str, tuple[str, int]] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.IDENT = self.alloc("identity", 1, REGISTER)
        self.IN = self.alloc("in", self.n, GLOBAL)
        self.OUT = self.alloc("out", self.n, GLOBAL)

    def alloc(self, name: str, size: int, space: str) -> int:
        """Reserve ``size`` elements named ``name``; returns the base offset."""
        if name in self.regions:
            raise ValueError(f"region {name!r} is allocated twice")
        base = self.size
        self.regions[name] = (base, int(size), space)
        self.size += int(size)
        return base

    def op(
        self,
        label: str,
        dst: np.ndarray,
        b: np.ndarray,
        thread: np.ndarray,
        a: np.ndarray | None = None,
        barrier: bool = True,
        serial: bool = False,
    ) -> None:
        """Append ``dst = a (+) b`` (or ``dst = b`` when ``a`` is None), one op per thread."""
        arrays = [dst, b, thread] + ([] if a is None else [a])
        arrays = [np.ravel(v).astype(np.int64) for v in np.broadcast_arrays(*arrays)]
        dst, b, thread = arrays[:3]
        a = arrays[3] if len(arrays) > 3 else None
        self.steps.append(Step(label, a is not None, dst, a, b, thread, barrier, serial))

    def load(self, label: str, dst: np.ndarray, elem: np.ndarray, thread: np.ndarray,
             barrier: bool = True) -> None:
        """``dst = in[elem]`` where ``elem < n``, else the identity (padding)."""
        elem = np.asarray(elem)
        src = np.where(elem < self.n, self.IN + np.minimum(elem, self.n - 1), self.IDENT)
        self.op(label, dst, src, thread, barrier=barrier)

    def store(self, label: str, src: np.ndarray, elem: np.ndarray, thread: np.ndarray,
              barrier: bool = False) -> None:
        """``out[elem] = src`` for the elements below n (the rest are never written)."""
        elem, src, thread = np.broadcast_arrays(np.asarray(elem), np.asarray(src), np.asarray(thread))
        keep = elem < self.n
        self.op(label, self.OUT + elem[keep], src[keep], thread[keep], barrier=barrier)

    def snapshot(self, name: str, region: str) -> None:
        """Record ``region`` as it stands after the last appended step, under ``name``."""
        self.snapshots[name] = (region, len(self.steps))

    # -- execution -----------------------------------------------------------------

    def run(
        self,
        x: np.ndarray,
        op: str | Operator = "add",
        warp_order: list[int] | None = None,
        keep_snapshots: bool = False,
    ) -> np.ndarray | tuple[np.ndarray, dict[str, np.ndarray]]:
        """The network's output on ``x`` under ``op``, bit for bit.

        With ``warp_order``, each barrier interval runs warp by warp in that order
        (lockstep inside a warp), as a GPU may schedule a racy kernel.
        """
        oper = get_operator(op)
        oper.check_elements(x)
        if x.shape[0] != self.n:
            raise ValueError(f"x has {x.shape[0]} elements; this network scans n={self.n}")
        mem = np.zeros((self.size,) + x.shape[1:], dtype=x.dtype)
        mem[self.IDENT] = oper.identity(dtype_name(x.dtype))
        mem[self.IN : self.IN + self.n] = x
        snaps: dict[str, np.ndarray] = {}
        pending = sorted((i, name) for name, (_, i) in self.snapshots.items())
        with np.errstate(all="ignore"):
            for i, step in enumerate(self.steps):
                while keep_snapshots and pending and pending[0][0] == i:
                    snaps[pending[0][1]] = self._read(mem, self.snapshots[pending[0][1]][0])
                    pending.pop(0)
                if step.serial:
                    for k in range(step.dst.size):
                        self._apply(mem, oper, step, slice(k, k + 1))
                elif warp_order is None:
                    self._apply(mem, oper, step, slice(None))
                else:
                    warp = step.thread // WARP
                    for w in warp_order:
                        self._apply(mem, oper, step, warp == w)
            while keep_snapshots and pending:
                snaps[pending[0][1]] = self._read(mem, self.snapshots[pending[0][1]][0])
                pending.pop(0)
        out = mem[self.OUT : self.OUT + self.n].copy()
        return (out, snaps) if keep_snapshots else out

    def _read(self, mem: np.ndarray, region: str) -> np.ndarray:
        base, size, _ = self.regions[region]
        return mem[base : base + size].copy()

    @staticmethod
    def _apply(mem: np.ndarray, oper: Operator, step: Step, sel: slice | np.ndarray) -> None:
        dst = step.dst[sel]
        if step.combine:
            mem[dst] = oper.combine(mem[step.a[sel]], mem[step.b[sel]])
        else:
            mem[dst] = mem[step.b[sel]]

    # -- analysis ------------------------------------------------------------------

    def metrics(self) -> Metrics:
        """Work, depth and per-output summation-tree depth (combines with the identity are exact)."""
        depth = np.zeros(self.size, dtype=np.int64)
        level = np.zeros(self.size, dtype=np.int64)
        ident = np.zeros(self.size, dtype=bool)
        ident[self.IDENT] = True
        work = 0
        for s in self._unrolled():
            if s.combine:
                ia, ib = ident[s.a], ident[s.b]
                da, db = depth[s.a], depth[s.b]
                d = np.where(ia, db, np.where(ib, da, np.maximum(da, db) + 1))
                lv = np.maximum(level[s.a], level[s.b]) + 1
                ident[s.dst], depth[s.dst], level[s.dst] = ia & ib, d, lv
                work += s.dst.size
            else:
                ident[s.dst], depth[s.dst], level[s.dst] = ident[s.b], depth[s.b], level[s.b]
        out = slice(self.OUT, self.OUT + self.n)
        return Metrics(
            work=work,
            depth=int(level[out].max()),
            output_depths=depth[out].copy(),
            steps=len(self.steps),
            barriers=sum(s.barrier for s in self.steps),
        )

    def _unrolled(self):
        """Steps with serial ones split into one step per op, in order."""
        for s in self.steps:
            if not s.serial:
                yield s
                continue
            for k in range(s.dst.size):
                sl = slice(k, k + 1)
                yield Step(s.label, s.combine, s.dst[sl], None if s.a is None else s.a[sl],
                           s.b[sl], s.thread[sl], s.barrier)

    def _region_of(self, loc: int) -> tuple[str, int]:
        for name, (base, size, _) in self.regions.items():
            if base <= loc < base + size:
                return name, loc - base
        raise IndexError(loc)

    def hazards(self, limit: int = 20) -> list[Hazard]:
        """Up to ``limit`` cross-thread conflicts inside barrier intervals (registers excluded)."""
        private = np.zeros(self.size, dtype=bool)
        for base, size, space in self.regions.values():
            if space == REGISTER:
                private[base : base + size] = True
        found: list[Hazard] = []
        interval: list[Step] = []
        for s in [*self.steps, None]:
            if s is None or (s.barrier and interval):
                found.extend(self._interval_hazards(interval, private, limit - len(found)))
                interval = []
                if len(found) >= limit:
                    break
            if s is not None and not s.serial:
                interval.append(s)
        return found

    def _interval_hazards(self, steps: list[Step], private: np.ndarray, limit: int) -> list[Hazard]:
        if not steps or limit <= 0:
            return []
        w_loc = np.concatenate([s.dst for s in steps])
        w_thr = np.concatenate([s.thread for s in steps])
        r_loc = np.concatenate([np.concatenate([s.b, s.a]) if s.combine else s.b for s in steps])
        r_thr = np.concatenate([np.concatenate([s.thread, s.thread]) if s.combine else s.thread
                                for s in steps])
        keep = ~private[w_loc]
        w_loc, w_thr = w_loc[keep], w_thr[keep]
        if w_loc.size == 0:
            return []
        order = np.argsort(w_loc, kind="stable")
        w_loc, w_thr = w_loc[order], w_thr[order]
        uniq, start = np.unique(w_loc, return_index=True)
        lo = np.minimum.reduceat(w_thr, start)
        hi = np.maximum.reduceat(w_thr, start)
        label = steps[0].label
        out: list[Hazard] = []
        for k in np.flatnonzero(lo != hi)[:limit]:
            region, idx = self._region_of(int(uniq[k]))
            out.append(Hazard(label, region, idx, int(lo[k]), int(hi[k]), "write-write"))
        pos = np.searchsorted(uniq, r_loc)
        pos_c = np.minimum(pos, uniq.size - 1)
        written = (pos < uniq.size) & (uniq[pos_c] == r_loc)
        clash = written & ((lo[pos_c] != r_thr) | (hi[pos_c] != r_thr))
        for k in np.flatnonzero(clash)[: max(0, limit - len(out))]:
            region, idx = self._region_of(int(r_loc[k]))
            writer = int(lo[pos_c[k]]) if lo[pos_c[k]] != r_thr[k] else int(hi[pos_c[k]])
            out.append(Hazard(label, region, idx, writer, int(r_thr[k]), "read-write"))
        return out
