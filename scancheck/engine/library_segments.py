"""Built-in segmented and chunked scans: scancheck's own NumPy segmented references (one per
segment description), pandas' ``groupby().cum*()``, and ``dask.array.cumsum`` over several
chunkings (one scan split across chunks, the carries stitched)."""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any

import numpy as np

from ..oracle.segmented import segment_ids, segment_rows
from .spec import TargetSpec
from .targets import Target, builtin

#: The NumPy ufunc that scans with each operator.
_UFUNCS = {"add": np.add, "mul": np.multiply, "max": np.maximum, "min": np.minimum,
           "logaddexp": np.logaddexp}


def numpy_segmented(kind: str, op: str = "add", inclusive: bool = True, reverse: bool = False
                    ) -> Callable[[np.ndarray, Any], np.ndarray]:
    """A segmented scan of NumPy's ufunc ``accumulate``, one segment at a time along axis 0,
    the segments told as ``kind`` says: the plain reference a segmented kernel is compared
    with."""
    ufunc = _UFUNCS[op]

    def run(x: np.ndarray, segments: Any) -> np.ndarray:
        out = np.empty_like(x)
        ids = segment_ids(kind, np.asarray(segments), x.shape[0])
        for index in segment_rows(ids, reverse).index:
            for row in index:
                at = row[row >= 0]
                acc = ufunc.accumulate(x[at], axis=0, dtype=x.dtype)
                if not inclusive:
                    ident = np.full((1, *x.shape[1:]), ufunc.identity if ufunc.identity
                                    is not None else _identity(op, x.dtype), x.dtype)
                    acc = np.concatenate([ident, acc[:-1]])
                out[at] = acc
        return out

    return run


def _identity(op: str, dtype: np.dtype) -> Any:
    from ..core.operators import get_operator

    return get_operator(op).identity(dtype.name)[()]


def pandas_groupby(method: str) -> Callable[[np.ndarray, Any], np.ndarray]:
    """pandas ``Series.groupby(labels).<method>(skipna=False)`` (cumsum, cumprod, cummax,
    cummin): NaNs propagate, as a scan's do."""
    def run(x: np.ndarray, labels: Any) -> np.ndarray:
        import pandas as pd

        return getattr(pd.Series(x).groupby(np.asarray(labels)), method)(skipna=False).to_numpy()

    return run


def dask_cumsum(chunks: Any, method: str) -> Callable[[np.ndarray, int], np.ndarray]:
    """``dask.array.cumsum`` of the array cut into ``chunks`` along every axis, with the
    carry across chunks ``method`` ("sequential" or "blelloch"), computed in this thread."""
    def run(x: np.ndarray, axis: int) -> np.ndarray:
        import dask.array as da

        cut = chunks if chunks != "irregular" else tuple(_irregular(d) for d in x.shape)
        return da.cumsum(da.from_array(x, chunks=cut), axis=axis, dtype=x.dtype,
                         method=method).compute(scheduler="synchronous")

    return run


#: Chunk sizes cycled through along each axis for chunks="irregular".
IRREGULAR = (1, 7, 64, 100, 3, 33)


def _irregular(size: int) -> tuple[int, ...]:
    """Chunks of :data:`IRREGULAR` sizes in turn, the last cut to end at ``size``."""
    out: list[int] = []
    while sum(out) < size:
        out.append(min(IRREGULAR[len(out) % len(IRREGULAR)], size - sum(out)))
    return tuple(out) or (0,)


#: The virtual CPU devices a JAX scan is sharded over (``--xla_force_host_platform_device_count``).
JAX_DEVICES = 4


def jax_sharded_cumsum(devices: int = JAX_DEVICES) -> Callable[[np.ndarray], np.ndarray]:
    """jax.numpy.cumsum of each shard of a 1-D array split over ``devices`` virtual CPU
    devices (``jax.shard_map``), each shard's carry the sum of the totals of the shards
    before it (``all_gather``): one scan stitched across device seams.  The devices exist
    only if XLA_FLAGS asks for them before JAX starts, so this sets them before importing
    JAX and refuses to run in a process where JAX started with fewer."""
    def run(x: np.ndarray) -> np.ndarray:
        flags = os.environ.get("XLA_FLAGS", "")
        if "xla_force_host_platform_device_count" not in flags:
            os.environ["XLA_FLAGS"] = (f"{flags} --xla_force_host_platform_device_count="
                                       f"{devices}").strip()
        # CPU devices only: asking JAX for them starts every backend, and a GPU's takes 75% of
        # its memory, so checks beside this one on that GPU ran out of it (seen on an H100).
        os.environ.setdefault("JAX_PLATFORMS", "cpu")
        import jax
        import jax.numpy as jnp
        from jax.sharding import Mesh, PartitionSpec

        cpus = jax.devices("cpu")
        if len(cpus) < devices:
            raise RuntimeError(f"JAX started in this process with {len(cpus)} CPU device(s) "
                               f"before XLA_FLAGS could ask for {devices}: run this target in "
                               f"a process of its own (scancheck check isolates it)")
        n = x.shape[0]
        if n == 0:
            return np.asarray(jnp.cumsum(jnp.asarray(x), dtype=x.dtype))
        padded = np.concatenate([x, np.zeros(-n % devices, x.dtype)])  # after: no prefix reads it

        def local(a: Any) -> Any:
            c = jnp.cumsum(a, dtype=a.dtype)
            totals = jax.lax.all_gather(c[-1], "d")
            before = jnp.arange(devices) < jax.lax.axis_index("d")
            return c + jnp.sum(jnp.where(before, totals, jnp.zeros_like(totals)), dtype=a.dtype)

        mesh = Mesh(np.array(cpus[:devices]), ("d",))
        spec = PartitionSpec("d")
        f = jax.jit(jax.shard_map(local, mesh=mesh, in_specs=spec, out_specs=spec))
        return np.asarray(f(jnp.asarray(padded)))[:n]

    return run


def segment_targets(not_installed: Callable[[str], str | None]) -> list[Target]:
    """The built-in segmented and chunked targets (``not_installed(module)`` says why one
    whose library is missing cannot run)."""
    floats_ints = ("float32", "float64", "int32", "int64")
    out = []
    for kind in ("offsets", "flags", "keys", "groups"):
        out.append(builtin(f"numpy segmented cumsum ({kind})", numpy_segmented(kind),
                           TargetSpec(segments=kind, dtypes=floats_ints)))
    out += [
        builtin("numpy segmented cumsum (offsets, exclusive, reverse, T x H)",
                numpy_segmented("offsets", inclusive=False, reverse=True),
                TargetSpec(segments="offsets", inclusive=False, reverse=True, axis=0,
                           dtypes=floats_ints)),
        builtin("numpy segmented cummax (flags, reverse)",
                numpy_segmented("flags", "max", reverse=True),
                TargetSpec(op="max", segments="flags", reverse=True, dtypes=floats_ints)),
        builtin("numpy segmented cumprod (keys)", numpy_segmented("keys", "mul"),
                TargetSpec(op="mul", segments="keys", dtypes=floats_ints)),
        builtin("numpy segmented logcumsumexp (offsets, T x H)",
                numpy_segmented("offsets", "logaddexp"),
                TargetSpec(op="logaddexp", segments="offsets", axis=0,
                           dtypes=("float32", "float64"))),
    ]
    # pandas 3.1 returns int64 for int32 sums and products that overflow int32, and int32
    # where they do not (measured 2026-11-25): a dtype that depends on the values, so int32
    # is declared for max and min alone.
    for method, op in (("cumsum", "add"), ("cumprod", "mul"), ("cummax", "max"),
                       ("cummin", "min")):
        dtypes = floats_ints if op in ("max", "min") else ("float32", "float64", "int64")
        out.append(builtin(f"pandas groupby().{method}()", pandas_groupby(method),
                           TargetSpec(op=op, segments="groups", dtypes=dtypes),
                           not_installed("pandas")))
    # Chunks of 64 reach the seams of a GPU tile; 1000 and irregular chunks those of no
    # power of two.  Many chunks are many tasks: the small ones are checked to fewer elements.
    for chunks, cap in ((64, 2**14), (1000, 2**18), ("irregular", 2**13)):
        for method in ("sequential", "blelloch"):
            spec = TargetSpec(dtypes=floats_ints, axis="arg", max_n=cap)
            out.append(builtin(f"dask.array.cumsum (chunks={chunks}, method={method})",
                               dask_cumsum(chunks, method), spec, not_installed("dask")))
    # Compiled anew for every n: checked to 2**12, as jax.lax.scan is.  XLA on CPUs reads
    # subnormals as zero (see the other JAX targets).
    out.append(builtin(f"jax.numpy.cumsum (sharded over {JAX_DEVICES} CPU devices)",
                       jax_sharded_cumsum(), TargetSpec(dtypes=("float32", "int32"),
                                                        subnormals="flush", max_n=2**12),
                       not_installed("jax")))
    return out
