"""JAX's scans, enumerated from their modes, each with its contract and plain call:
``jax.numpy.cumsum``/``cumprod`` and ``jax.lax.associative_scan`` of add, eager and jitted,
in 32 and 64 bits; ``jax.lax.cumsum``, ``cumprod``, ``cumlogsumexp``, ``cummax`` and
``cummin`` forward and with ``reverse=True``, eager and jitted; ``jax.lax.associative_scan``
with the combine (scancheck's probe monoids drive it), eager and jitted, forward and reverse;
``jax.lax.scan`` from an initial value; and a cumsum sharded over virtual CPU devices.

JAX computes in 32 bits unless jax_enable_x64 is set: the 32-bit targets declare only those,
the x64 ones turn it on for their call.  On CPUs XLA reads subnormals as zero by design
(DAZ and FTZ; jax 0.10.2 returns zeros for the scan of [2**-126 - 2**-149, 2**-149]):
declared, not a finding.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Callable
from dataclasses import replace
from typing import Any

import numpy as np

from ..core.monoids import Leaves
from ..engine.diagnosis import Cause
from ..targets.spec import TargetSpec
from ..targets.target import PerCombine, tupled
from .known import KnownBug, Symptom
from .numpy_stdlib import PROMOTED
from .rows import Row, modes, told

_JAX = "import jax\nimport jax.numpy as jnp\n"
_X64 = "jax.config.update('jax_enable_x64', True)\n"


def load_jax() -> Any:
    """JAX, imported.  JAX takes 75% of GPU memory on first use unless told otherwise;
    conformance checks run side by side on one GPU (check --jobs, pytest -n), and the others
    then fault with out-of-memory.  A setting the user made wins."""
    os.environ.setdefault("XLA_PYTHON_CLIENT_PREALLOCATE", "false")
    import jax.numpy

    return jax


def x64(jax: Any, on: bool) -> Any:
    """A context in which JAX has 64-bit types (``on``), or one that changes nothing."""
    if not on:
        return contextlib.nullcontext()
    # jax.enable_x64 since JAX 0.8 (a config State, whose truth value raises); before it,
    # jax.experimental's.
    ctx = jax.enable_x64 if hasattr(jax, "enable_x64") else jax.experimental.enable_x64
    return ctx(True)


def jax_call(build: Callable[[Any, int, np.dtype], Callable[[Any], Any]], jitted: bool,
             wide: bool, front: bool = False) -> Callable[..., np.ndarray]:
    """A target calling ``build(jax, axis, dtype)`` on the input as a JAX array, jitted once
    per (axis, dtype) where ``jitted``, 64-bit types on where ``wide``; ``front``: the axis
    handed counted from the front (jax.lax takes no negative axis, by its design)."""
    functions: dict[tuple[int, str], Any] = {}

    def run(x: np.ndarray, axis: int = 0) -> np.ndarray:
        jax = load_jax()
        if front and x.ndim:
            axis %= x.ndim
        with x64(jax, wide):
            key = (axis, x.dtype.name)
            if key not in functions:
                fn = build(jax, axis, x.dtype)
                functions[key] = jax.jit(fn) if jitted else fn
            return np.asarray(functions[key](jax.numpy.asarray(x)))

    return run


def _jnp(name: str, keep: bool) -> Callable[[Any, int, np.dtype], Callable[[Any], Any]]:
    def build(jax: Any, axis: int, dtype: np.dtype) -> Callable[[Any], Any]:
        fn = getattr(jax.numpy, name)
        return lambda v: fn(v, axis=axis, dtype=dtype if keep else None)
    return build


def _lax(name: str, reverse: bool) -> Callable[[Any, int, np.dtype], Callable[[Any], Any]]:
    def build(jax: Any, axis: int, dtype: np.dtype) -> Callable[[Any], Any]:
        fn = getattr(jax.lax, name)
        return lambda v: fn(v, axis=axis, reverse=reverse)
    return build


def _associative_add(jax: Any, axis: int, dtype: np.dtype) -> Callable[[Any], Any]:
    return lambda v: jax.lax.associative_scan(jax.numpy.add, v)


def _plain(expr: str, jitted: bool) -> str:
    """``expr`` (of ``v``, a JAX array of x) as the plain call on ``x``, jitted or not."""
    fn = f"jax.jit(lambda v: {expr})" if jitted else f"(lambda v: {expr})"
    return f"np.asarray({fn}(jnp.asarray(x)))"


def jax_associative(reverse: bool, jitted: bool = True) -> Callable[..., Leaves]:
    """jax.lax.associative_scan with the combine and an axis, compiled once per combine and
    axis where ``jitted`` (eager otherwise), 64-bit types on for the call (the probes' int64
    and uint64 leaves stay so)."""
    def build(combine: Callable, axis: int) -> Any:
        jax = load_jax()
        def fn(e: Any) -> Any:
            return jax.lax.associative_scan(tupled(combine), e, reverse=reverse, axis=axis)

        return jax.jit(fn) if jitted else fn

    per_combine = PerCombine(build)

    def run(elems: Leaves, combine: Callable, axis: int = 0) -> Leaves:
        jax = load_jax()
        with x64(jax, True):
            out = per_combine(combine, axis)(tuple(jax.numpy.asarray(v) for v in elems))
            return tuple(np.asarray(v) for v in out)

    return run


def jax_lax_scan(op: str) -> Callable[..., np.ndarray]:
    """jax.lax.scan carrying a running sum or product from ``initial``: each step emits the
    carry it was given, an exclusive scan with an initial value."""
    def run(x: np.ndarray, initial: Any) -> np.ndarray:
        jax = load_jax()
        jnp = jax.numpy
        combine = jnp.add if op == "add" else jnp.multiply
        _, ys = jax.lax.scan(lambda c, v: (combine(c, v), c), jnp.asarray(initial, x.dtype),
                             jnp.asarray(x))
        return np.asarray(ys)

    return run


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


JAX_SPEC = TargetSpec(dtypes=("float32", "int32", "float16", "bfloat16", "int8", "int16", "uint8",
                              "uint16", "uint32"), subnormals="flush")
_JAX_X64 = ("float64", "int64", "uint64")
#: JAX widens bool alone, to its default integer (int32 unless jax_enable_x64 is set).
_JAX_PROMOTE = (("bool", "int32"),)
_OPS = {"cumsum": "add", "cumprod": "mul", "cumlogsumexp": "logaddexp", "cummax": "max",
        "cummin": "min"}

#: The mode products of JAX's scans.
JNP_MODES = {"api": ("cumsum", "cumprod"), "execution": ("eager", "jit"), "types": ("32-bit", "x64")}
LAX_MODES = {"api": tuple(_OPS), "execution": ("eager", "jit"), "reverse": (False, True)}
ASSOCIATIVE_MODES = {"execution": ("eager", "jit"), "types": ("32-bit", "x64")}
GENERIC_MODES = {"execution": ("jit", "eager"), "reverse": (False, True)}


def _tags(*tags: str) -> str:
    shown = [t for t in tags if t]
    return f" ({', '.join(shown)})" if shown else ""


def _jnp_row(mode: dict[str, Any]) -> Row:
    api, jitted, wide = mode["api"], mode["execution"] == "jit", mode["types"] == "x64"
    spec = replace(JAX_SPEC, op=_OPS[api], axis="arg", **({"dtypes": _JAX_X64} if wide else {}))
    return Row(f"jax.numpy.{api}{_tags('jit' if jitted else '', 'x64' if wide else '')}",
               jax_call(_jnp(api, True), jitted, wide), spec, needs=("jax",),
               call=(_JAX + (_X64 if wide else ""),
                     _plain(f"jnp.{api}(v, axis=AXIS, dtype=x.dtype)", jitted)),
               api=f"jax.numpy.{api}", mode=told(mode), variant=jitted, follows_device=True)


def _lax_row(mode: dict[str, Any]) -> Row:
    api, jitted, reverse = mode["api"], mode["execution"] == "jit", mode["reverse"]
    dtypes = (("float32", "float16", "bfloat16") if api == "cumlogsumexp"
              else JAX_SPEC.dtypes)
    # XLA on CPUs computes float16 in float32, where a float16 subnormal is a normal number:
    # a running max or min (which rounds nothing, so a flush shows) keeps float16's
    # subnormals and flushes those of float32 and bfloat16 (measured with jax 0.10.2).
    extreme = api in ("cummax", "cummin")
    flush = "flush:float32,bfloat16" if extreme else "flush"
    spec = replace(JAX_SPEC, op=_OPS[api], axis="arg", reverse=reverse, dtypes=dtypes,
                   max_n=2**16, subnormals=flush)
    return Row(f"jax.lax.{api}{_tags('jit' if jitted else '', 'reverse' if reverse else '')}",
               jax_call(_lax(api, reverse), jitted, False, front=True), spec, needs=("jax",),
               call=(_JAX, _plain(f"jax.lax.{api}(v, axis=AXIS % x.ndim, reverse={reverse})",
                                  jitted)),
               api=f"jax.lax.{api}", mode=told(mode), variant=True, follows_device=True,
               on_device=_subnormals_kept_on_gpu if extreme else None)


def _subnormals_kept_on_gpu(spec: TargetSpec) -> TargetSpec:
    """``spec`` with subnormals kept where JAX runs on a GPU: on an H100 (jax 0.11.2) a
    running max or min kept float32 subnormals, which the CPU flushes; elsewhere (the CPU,
    a backend not measured) the table's."""
    return replace(spec, subnormals="keep") if load_jax().default_backend() == "gpu" else spec


def _associative_row(mode: dict[str, Any]) -> Row:
    jitted, wide = mode["execution"] == "jit", mode["types"] == "x64"
    spec = replace(JAX_SPEC, dtypes=_JAX_X64) if wide else JAX_SPEC
    # Eager by default, as it was first checked: in the GPU suite on an H100 its slowest
    # test took 55 s jitted, 29 s eager (2026-11-25), though jitted was three times faster
    # on a 2-core CPU.
    return Row(f"jax.lax.associative_scan{_tags('jit' if jitted else '', 'x64' if wide else '')}",
               jax_call(_associative_add, jitted, wide), spec, needs=("jax",),
               call=(_JAX + (_X64 if wide else ""),
                     _plain("jax.lax.associative_scan(jnp.add, v)", jitted)),
               api="jax.lax.associative_scan", mode=told({"combine": "jnp.add", **mode}),
               variant=jitted, follows_device=True)


def _generic_row(mode: dict[str, Any]) -> Row:
    jitted, reverse = mode["execution"] == "jit", mode["reverse"]
    # JAX compiles every shape anew (about a second each on a 2-core CPU): checked to 2**7.
    return Row(f"jax.lax.associative_scan (generic{'' if jitted else ', eager'}"
               f"{', reverse' if reverse else ''})", jax_associative(reverse, jitted),
               TargetSpec(combine=True, axis="arg", max_n=2**7, reverse="flip" if reverse else False),
               needs=("jax",), api="jax.lax.associative_scan",
               mode=told({"combine": "probe monoids", **mode}), variant=not jitted,
               follows_device=True)


ROWS: tuple[Row, ...] = (
    *(_jnp_row(m) for m in modes(JNP_MODES)),
    Row("jax.numpy.cumsum (default dtype)", jax_call(_jnp("cumsum", False), False, False),
        replace(JAX_SPEC, dtypes=PROMOTED, promote=_JAX_PROMOTE, axis="arg"), needs=("jax",),
        call=(_JAX, "np.asarray(jnp.cumsum(jnp.asarray(x), axis=AXIS))"),
        api="jax.numpy.cumsum", mode=(("dtype", "default"),)),
    *(_lax_row(m) for m in modes(LAX_MODES)),
    *(_associative_row(m) for m in modes(ASSOCIATIVE_MODES)),
    *(_generic_row(m) for m in modes(GENERIC_MODES)),
    # lax.scan is a sequential loop, compiled anew for every length: checked to 2**12.
    Row("jax.lax.scan (add, initial)", jax_lax_scan("add"),
        replace(JAX_SPEC, inclusive=False, initial=True, max_n=2**12), needs=("jax",),
        call=(_JAX, "np.asarray(jax.lax.scan(lambda c, v: (c + v, c), jnp.asarray(x[0]), "
                    "jnp.asarray(x[1:]))[1])"), api="jax.lax.scan", mode=(("combine", "add"),)),
    Row("jax.lax.scan (mul, initial)", jax_lax_scan("mul"),
        replace(JAX_SPEC, op="mul", inclusive=False, initial=True, max_n=2**12), needs=("jax",),
        call=(_JAX, "np.asarray(jax.lax.scan(lambda c, v: (c * v, c), jnp.asarray(x[0]), "
                    "jnp.asarray(x[1:]))[1])"), api="jax.lax.scan", mode=(("combine", "mul"),)),
    # Compiled anew for every n: checked to 2**12, as jax.lax.scan is.
    Row(f"jax.numpy.cumsum (sharded over {JAX_DEVICES} CPU devices)", jax_sharded_cumsum(),
        TargetSpec(dtypes=("float32", "int32"), subnormals="flush", max_n=2**12), needs=("jax",),
        api="jax.numpy.cumsum", mode=(("sharding", f"{JAX_DEVICES} CPU devices"),)),
)

#: JAX's bugs that its targets' checks meet (docs/findings.md).
KNOWN: tuple[KnownBug, ...] = (
    KnownBug("jax-reverse-negative-axis", None,
             "jax.lax.associative_scan(reverse=True) refuses a negative axis", "jax", ("jax",),
             "0.10.2", None, ("jax.lax.associative_scan (generic, reverse)",
                              "jax.lax.associative_scan (generic, eager, reverse)"),
             (Symptom("probe monoids", Cause.FAULT),), "not reported upstream",
             "docs/findings/jax_associative_scan_reverse_negative_axis.py"),
)
