"""torch.compile (fullgraph) cannot trace ``isinstance(x, np.ndarray | np.generic)`` written in
the traced function: building the union of two NumPy types, a PEP 604 union Python has taken
since 3.10, raises inside dynamo's trace (TypeError: unsupported operand type(s) for |:
'type' and 'type'), where the tuple (np.ndarray, np.generic), the union list | tuple, the
union int | np.ndarray, and the same NumPy union built outside the function all trace.
Plain torch and NumPy; prints each and then "still reproduces" or "fixed in <version>".
"""

import numpy as np
import torch

UNION = np.ndarray | np.generic


def numpy_union(a):
    return a if isinstance(a, np.ndarray | np.generic) else a + 1


def numpy_tuple(a):
    return a if isinstance(a, (np.ndarray, np.generic)) else a + 1


def builtin_union(a):
    return a if isinstance(a, list | tuple) else a + 1


def mixed_union(a):
    return a if isinstance(a, int | np.ndarray) else a + 1


def union_built_outside(a):
    return a if isinstance(a, UNION) else a + 1


failed = {}
print("torch", torch.__version__, "numpy", np.__version__)
for fn in (numpy_union, numpy_tuple, builtin_union, mixed_union, union_built_outside):
    torch._dynamo.reset()
    try:
        out = torch.compile(fn, fullgraph=True, backend="eager")(torch.ones(2))
        print(f"{fn.__name__}: traced, {out.tolist()}")
        failed[fn.__name__] = False
    except Exception as exc:  # noqa: BLE001 - what it raised is the finding
        cause = next((ln.strip() for ln in str(exc).splitlines() if "raised exception" in ln),
                     str(exc).splitlines()[0])
        print(f"{fn.__name__}: {type(exc).__name__}: {cause}")
        failed[fn.__name__] = True
print("still reproduces" if failed["numpy_union"] else f"fixed in {torch.__version__}")
