"""torch.cumprod on CUDA rounds float16 and bfloat16 partial products to 16 bits; on the CPU
it multiplies in float32 and rounds once.

Plain torch and NumPy, no scancheck.  Run on a GPU:  python docs/findings/torch_cuda_half_cumprod.py

The data are signs, and 15 factors 3/4 or 3/2 at random places: every product of any of
them is a power of two times a power of 3 below 3**16 < 2**24, exact in float32 in any
order, so the prefix rounded once to the 16-bit type is the one answer a float32
accumulation can give.  A result that differs rounded some partial product on the way.
"""

import numpy as np
import torch

print("torch", torch.__version__, "| device:", torch.cuda.get_device_name(0))
rng = np.random.default_rng(11)
n = 1024
x64 = rng.choice([1.0, -1.0], n)
places = rng.choice(n // 2, 15, replace=False)
x64[places] *= rng.choice([0.75, 1.5], 15)
exact = np.cumprod(x64)  # exact in float64: odd parts below 3**16
for name, dtype in (("float16", torch.float16), ("bfloat16", torch.bfloat16)):
    x = torch.tensor(x64, dtype=dtype)  # exact: 3/4 and 3/2 need 2 bits
    once = torch.tensor(exact.astype(np.float32)).to(dtype)  # exact in float32, rounded once
    results = {
        "CPU  torch.cumprod(x, 0)": torch.cumprod(x, 0),
        "CUDA torch.cumprod(x, 0)": torch.cumprod(x.cuda(), 0).cpu(),
        "CUDA torch.cumprod(x, 0, dtype=float32).to(x.dtype)":
            torch.cumprod(x.cuda(), 0, dtype=torch.float32).to(dtype).cpu(),
    }
    print(f"\n{name}, n={n}, 15 factors 3/4 or 3/2 among signs:")
    for label, got in results.items():
        diff = (got.float() != once.float()).nonzero().flatten()
        first = f"; first at {int(diff[0])}: got {got[diff[0]].item()}, rounded once " \
                f"{once[diff[0]].item()}" if len(diff) else ""
        print(f"  {label:52s} {len(diff):5d} of {n} outputs differ from the product rounded "
              f"once{first}")
