"""A case on which the target gave no answer: it raised (the empty input refused, too), or
ran out of memory.  Such a failure moves its property's search to where the target
answers instead of ending it.
"""

from __future__ import annotations

import sys
import sysconfig
import traceback
from collections.abc import Callable
from pathlib import Path

import numpy as np

from ..core.devices import gpu_memory
from ..targets.spec import spec_flag
from ..targets.target import InputWritten, NotAnArray, Target, raised_by_target
from .cases import Case
from .diagnosis import Cause, Reason, is_device_memory_error, is_resource_error
from .properties import Failure


class NoAnswer(Failure):
    """A case on which the target gave no answer: it raised (the empty input refused, too),
    or ran out of memory.  It moves its property's search to where the target answers (from
    n = 1, or below its size) instead of ending it."""



def raised(target: Target, exc: Exception, n: int) -> Failure | None:
    """The failure of a case on which the target's own code raised ``exc``: out of memory
    on any device (also scancheck's, placing the input on a GPU whose memory others took),
    the empty input refused (a logic error: the scan of nothing is an empty
    array), and any other exception of a CPU target (a fault of that case alone).  None
    where scancheck raised it, or where a GPU target did at n >= 1: that may leave its CUDA
    context unusable for every later call, so it ends the process (in a child, one that
    starts afresh below its size takes over)."""
    taken = memory_taken(target) if n and is_device_memory_error(exc) else None
    if taken is not None:  # the target's own allocation, or the case's input placed for it
        return NoAnswer(Cause.RESOURCE, f"raised {type(exc).__name__} at n = {n:,} "
                         f"({str(exc)[:120]}); {taken}", independent=True,
                         detail={"memory taken": taken}, reason=Reason.MEMORY_TAKEN)
    if not raised_by_target(exc):
        return None
    ranks = ranks_taken(target) if (target.spec.axis is not None and not target.spec.ndim
                                     and target.spec.device == "cpu") else ()
    if ranks:
        flag = "--ndim " + " ".join(map(str, ranks))
        return Failure(Cause.CONTRACT, f"raised {type(exc).__name__} ({str(exc)[:120]}); it "
                       f"takes arrays of rank {', '.join(map(str, ranks))} only, where its spec "
                       f"declares any: declare {flag}", detail={"contract": flag},
                       reason=Reason.UNDECLARED)
    if is_resource_error(exc):
        where = " on an empty input" if n == 0 else ""
        return NoAnswer(Cause.RESOURCE, f"raised {type(exc).__name__} ({str(exc)[:200]})"
                         f"{where}", independent=True, reason=Reason.OUT_OF_MEMORY)
    if n == 0:
        return NoAnswer(Cause.LOGIC, f"raised {type(exc).__name__} on an empty input "
                         f"({str(exc)[:120]}); the scan of nothing is an empty array, or "
                         f"declare {spec_flag('allows_empty').replace('--', '--no-', 1)}",
                         reason=Reason.EMPTY_REFUSED)
    if target.spec.device == "gpu":
        return None
    return NoAnswer(Cause.FAULT, f"raised {type(exc).__name__} ({str(exc)[:200]})",
                    reason=Reason.RAISED)



def size_limit(check: Callable[[Case], Failure | None], raised_at: Case) -> str:
    """A hint for a target that raised at ``raised_at`` and answered every n below it: where
    it raises at n + 1 and 2n on the same data too, the flag that declares the largest n it
    takes (past one element: at one, a scan combines nothing); "" where it answers at either
    (it raises at some sizes only: n % 7 == 3, say)."""
    for m in (raised_at.n + 1, 2 * raised_at.n):
        f = check(Case(m, raised_at.dtype, raised_at.distribution, raised_at.seed))
        if not (isinstance(f, NoAnswer) and f.reason == Reason.RAISED):
            return ""
    cap = raised_at.n - 1
    if cap < 2:
        # One element combines nothing: what raises is the first combine, not a size.
        return ("; it answered one element, where a scan combines nothing, and raised at "
                "each larger n tried: the first combine raises")
    return (f"; it answered every case of 1 to {cap:,} elements and raised at each larger n "
            f"tried: where that is its limit, declare {spec_flag('max_n')} {cap}")


def memory_taken(target: Target) -> str | None:
    """Why a GPU target's out of memory is no evidence about it: other processes held at
    least half of the GPU then (a check beside it, another user's job) and less than an
    eighth was free; None where not, or this process cannot tell."""
    if target.spec.device != "gpu":
        return None
    mem = gpu_memory()
    # Little free, and most of the rest held outside: where much is free, a request that
    # did not fit is the target's own, whatever others hold.
    if mem is None or 2 * mem.elsewhere < mem.total or 8 * mem.free > mem.total:
        return None
    return (f"the GPU's memory was taken ({mem.told()}): not this target's doing; check it "
            f"again with the GPU to itself")



def ranks_taken(target: Target) -> tuple[int, ...]:
    """The ranks 1 to 4 of small float arrays a target with an axis answers, where it
    refuses some (a DataFrame method takes 2-D arrays only); () where it takes all, or none."""
    spec = target.spec
    dtype = next((d for d in spec.dtypes if d in ("float64", "float32", "int64", "int32")),
                 spec.dtypes[0])
    took, held = [], 0
    for rank in range(1, 5):
        shape = [3] + [2] * (rank - 1)
        axis = spec.axis % rank if isinstance(spec.axis, int) else 0
        if isinstance(spec.axis, int) and not -rank <= spec.axis < rank:
            continue  # a rank without the axis is none a target of it takes
        held += 1
        x = Case(int(np.prod(shape)), dtype, "integers", 0).data(spec.op).reshape(
            shape + list(np.shape(Case(1, dtype, "integers", 0).data(spec.op))[1:]))
        try:
            target(x, axis)
        except Exception:  # noqa: BLE001 - any refusal of a rank counts as one
            continue
        took.append(rank)
    return tuple(took) if took and len(took) < held else ()


#: The folders of scancheck's package that hold targets' code (built-in adapters, the
#: negative controls and the testing targets): a frame there may be the target's.
_TARGET_CODE = ("adapters", "controls", "targets", "testing.py")
#: The libraries scancheck's own checks call: a frame in them is not the target's.
_OWN_LIBRARIES = ("numpy", "mpmath", "hypothesis", "ml_dtypes")


def own_error(target: Target, exc: BaseException) -> str | None:
    """Where scancheck's own code raised ``exc`` (``file:line`` of the raise), None where the
    target may have: the target's own call marked it, it says what the target returned or
    wrote, some frame of it or of the exceptions it chains is outside scancheck's checks and
    the libraries they call (a user's monoid, say; CuPy too, where a device error of the
    target's may surface), or, on a GPU target, the device holds an error."""
    package = Path(__file__).resolve().parents[1]
    paths = sysconfig.get_paths()
    stdlib = {Path(paths[k]).resolve() for k in ("stdlib", "platstdlib")}
    installed = {Path(paths[k]).resolve() for k in ("purelib", "platlib")}
    libraries = [Path(m.__file__).resolve().parent for name in _OWN_LIBRARIES
                 if (m := sys.modules.get(name)) is not None and getattr(m, "__file__", None)]
    seen: set[int] = set()
    link: BaseException | None = exc
    while link is not None and id(link) not in seen:
        seen.add(id(link))
        if raised_by_target(link) or isinstance(link, InputWritten | NotAnArray):
            return None
        for frame in traceback.extract_tb(link.__traceback__):
            path = Path(frame.filename).resolve()
            if path.is_relative_to(package):
                if path.relative_to(package).parts[0] in _TARGET_CODE:
                    return None
            elif not (any(path.is_relative_to(p) for p in libraries) or (
                    any(path.is_relative_to(p) for p in stdlib)
                    and not any(path.is_relative_to(p) for p in installed))):
                return None
        link = link.__cause__ or link.__context__
    # The device is asked last, where the traceback alone says scancheck's: a synchronize
    # on every exception of a GPU target's own would wait on its work for nothing.
    if target.spec.device != "cpu" and _device_faulted():
        return None
    last = traceback.extract_tb(exc.__traceback__)[-1:]
    raised_in = Path(last[0].filename).resolve() if last else None
    return (f"{raised_in.relative_to(package.parent)}:{last[0].lineno}"
            if raised_in is not None and raised_in.is_relative_to(package) else "scancheck")


def _device_faulted() -> bool:
    """Whether the GPU's context holds an error a kernel left there (a sticky one, which
    every later call raises): True where that cannot be asked (no CuPy imported)."""
    cp = sys.modules.get("cupy")
    if cp is None:
        return True
    try:
        cp.cuda.Device().synchronize()
    except Exception:  # noqa: BLE001 - any error of the device's is one it holds
        return True
    return False
