"""torch's eager associative_scan on a batch with no rows (combine_mode="generic", and
"pointwise", which eager mode runs on CUDA tensors only): the shape it returns along the
scanned dimension.  Plain torch; prints the version and each shape."""

import torch
from torch._higher_order_ops.associative_scan import associative_scan


def add(a, b):
    return a + b


def affine(x, y):  # (a, b) pairs: y after x
    return (x[0] * y[0], x[1] * y[0] + y[1])


print("torch", torch.__version__)
wrong = False
devices = ["cpu"] + (["cuda"] if torch.cuda.is_available() else [])
for device, mode in [(d, "generic") for d in devices] + [(d, "pointwise") for d in devices[1:]]:
    for shape, dim in (((0, 3), 1), ((0, 2, 3, 3), 3), ((2, 0, 5), 2), ((3, 0), 0),
                       ((0, 2, 3, 3), -1), ((2, 3), 1)):
        for reverse in (False, True):
            x = torch.ones(shape, device=device)
            seen = []
            for fn, xs in ((add, x), (affine, (x, x.double()))):
                try:
                    out = associative_scan(fn, xs, dim, reverse=reverse, combine_mode=mode)
                    seen.append(str([tuple(o.shape) for o in out] if isinstance(out, tuple)
                                    else tuple(out.shape)))
                except Exception as exc:  # noqa: BLE001 - what it raised is the finding
                    seen.append(f"raised {type(exc).__name__}: {str(exc)[:90]}")
            print(f"{device} {mode} shape {tuple(shape)} dim {dim} reverse {reverse}: add -> "
                  f"{seen[0]}; affine pair -> {seen[1]}")
            wrong |= seen != [str(tuple(shape)), str([tuple(shape)] * 2)]
print("still reproduces" if wrong else f"fixed in {torch.__version__}")
