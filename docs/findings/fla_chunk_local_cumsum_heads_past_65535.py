"""fla's chunk_local_cumsum of a [B, T, H, D] tensor with B * H past 65,535 (CUDA's limit on
a grid's second axis), in plain fla (fla-core): the vector kernel's launch puts B * H there.
Compared with torch.cumsum within each chunk of 64 steps; the [B, T, H] (scalar) kernel and
chunk_global_cumsum, whose grids are one axis, beside it.  Prints what each returned or
raised, then "still reproduces" or "fixed in <fla-core version>".  Needs a CUDA GPU."""

from importlib.metadata import version

import torch
from fla.ops.utils.cumsum import chunk_global_cumsum, chunk_local_cumsum

print("fla-core", version("fla-core"), "torch", torch.__version__)
failed = {}
for heads in (65535, 65536):
    g = torch.randn(1, 128, heads, 2, device="cuda")
    chunks = g.view(1, 2, 64, heads, 2).cumsum(2).view(1, 128, heads, 2)
    for name, call, want in (
            ("chunk_local_cumsum [B, T, H, D]", lambda: chunk_local_cumsum(g, 64), chunks),
            ("chunk_local_cumsum [B, T, H]", lambda: chunk_local_cumsum(g[..., 0], 64),
             chunks[..., 0]),
            ("chunk_global_cumsum [B, T, H, D]", lambda: chunk_global_cumsum(g),
             g.cumsum(1))):
        try:
            err = (call() - want).abs().max().item()
            seen, bad = f"max |error| {err:.2e}", err > 1e-3
        except Exception as exc:  # noqa: BLE001 - what it raised is the finding
            seen, bad = f"raised {type(exc).__name__}: {str(exc)[:80]}", True
        print(f"H = {heads}: {name}: {seen}")
        failed[name] = failed.get(name, False) or bad
print("still reproduces" if failed["chunk_local_cumsum [B, T, H, D]"]
      else f"fixed in {version('fla-core')}")
