"""torch.compile'd associative_scan(combine_mode="generic", reverse=True) under a min combine
(pytorch/pytorch#137943), in plain torch.

The reverse scan of min is the running minimum of each suffix: out[k] = min(x[k:]).  Each
call is compiled (fullgraph, static and dynamic shapes) and compared with that, computed by
torch.cummin of the flipped input; eager generic and compiled forward are compared too.
Prints the wrong outputs of each, then "still reproduces" or "fixed in <torch version>".
CUDA where a GPU is found (where the bug was seen), else the CPU.
"""

import torch
from torch._higher_order_ops.associative_scan import associative_scan


def smaller(a, b):
    return torch.minimum(a, b)


device = "cuda" if torch.cuda.is_available() else "cpu"
print("torch", torch.__version__, "device", device)
torch._dynamo.config.cache_size_limit = 64
gen = torch.Generator().manual_seed(0)
seen = False
for n in (9, 1025):
    x = torch.randint(0, 2**32, (n,), generator=gen, dtype=torch.int64).to(device)
    want = torch.flip(torch.cummin(torch.flip(x, [0]), 0).values, [0])
    for how, reverse, dynamic in (("compiled generic, reverse", True, False),
                                  ("compiled generic, reverse", True, True),
                                  ("compiled generic, forward", False, True),
                                  ("eager generic, reverse", True, None)):
        def scan(v, reverse=reverse):
            return associative_scan(smaller, v, 0, reverse=reverse, combine_mode="generic")

        fn = scan if dynamic is None else torch.compile(scan, fullgraph=True, dynamic=dynamic)
        got = fn(x)
        ref = want if reverse else torch.cummin(x, 0).values
        wrong = (got != ref).nonzero().flatten().tolist()
        shapes = "" if dynamic is None else (" dynamic" if dynamic else " static")
        print(f"n={n} {how}{shapes}: {len(wrong)} of {n} outputs wrong {wrong[:8]}")
        seen |= bool(wrong) and how.startswith("compiled generic, reverse")
print("still reproduces" if seen else f"fixed in {torch.__version__} ({device})")
