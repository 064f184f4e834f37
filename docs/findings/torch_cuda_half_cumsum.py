"""torch.cumsum on CUDA rounds float16 and bfloat16 partial sums to 16 bits; on the CPU it
accumulates in float32 and rounds once.

Plain torch and NumPy, no scancheck.  Run on a GPU:  python docs/findings/torch_cuda_half_cumsum.py

The data are integers in [0, 64): every prefix is an integer below 2**24, so float32 holds
every partial sum exactly in any order, and the prefix rounded once to the 16-bit type is
the one answer a float32 accumulation can give.  A result that differs rounded some partial
sum to the 16-bit type on the way.
"""

import numpy as np
import torch

print("torch", torch.__version__, "| device:", torch.cuda.get_device_name(0))
rng = np.random.default_rng(11)
rounded_to_16_bits = False
for name, dtype, n in (("float16", torch.float16, 1023), ("bfloat16", torch.bfloat16, 4096)):
    ints = rng.integers(0, 64, n)
    x = torch.tensor(ints, dtype=dtype)  # exact: integers below 64
    # The exact prefixes (integers below 2**24, exact in float64 and float32), rounded once.
    once = torch.tensor(np.cumsum(ints).astype(np.float32)).to(dtype)
    results = {
        "CPU  torch.cumsum(x, 0)": torch.cumsum(x, 0),
        "CUDA torch.cumsum(x, 0)": torch.cumsum(x.cuda(), 0).cpu(),
        "CUDA torch.cumsum(x, 0, dtype=float32).to(x.dtype)":
            torch.cumsum(x.cuda(), 0, dtype=torch.float32).to(dtype).cpu(),
    }
    seq = x[:1].clone()  # every partial sum rounded to the 16-bit type, left to right
    seq_all = [seq.item()]
    for v in x[1:]:
        seq = (seq + v).to(dtype)
        seq_all.append(seq.item())
    results["sequential in the 16-bit type"] = torch.tensor(seq_all, dtype=dtype)
    print(f"\n{name}, n={n}, integers in [0, 64), last prefix {int(np.cumsum(ints)[-1])}:")
    for label, got in results.items():
        diff = (got.float() != once.float()).nonzero().flatten()
        err = (got.double() - torch.tensor(np.cumsum(ints), dtype=torch.float64)).abs().max()
        first = f"; first at {int(diff[0])}: got {got[diff[0]].item()}, rounded once " \
                f"{once[diff[0]].item()}" if len(diff) else ""
        print(f"  {label:52s} {len(diff):5d} of {n} outputs differ from the prefix rounded "
              f"once, max |error| {err.item():g}{first}")
        rounded_to_16_bits |= label == "CUDA torch.cumsum(x, 0)" and len(diff) > 0
print("still reproduces" if rounded_to_16_bits else f"fixed in {torch.__version__}")
