"""fla's chunk cumsums of a [B, T, H, D] tensor with D = 0 (no features), in plain fla
(fla-core): a scan of an empty tensor is an empty tensor, as torch.cumsum returns.  Each
kernel, forward and reverse, with and without cu_seqlens; prints what each returned or
raised, then "still reproduces" or "fixed in <fla-core version>".  Needs a CUDA GPU."""

from importlib.metadata import version

import torch
from fla.ops.utils.cumsum import chunk_global_cumsum, chunk_local_cumsum

print("fla-core", version("fla-core"), "torch", torch.__version__)
wrong = False
for shape in ((1, 2, 1, 0), (1, 2, 3, 0), (1, 2, 1, 4)):
    s = torch.randn(shape, device="cuda")
    cu = torch.tensor([0, 1, 2], dtype=torch.int32, device="cuda")
    for name, scan in (("chunk_global_cumsum", lambda s, r, c: chunk_global_cumsum(
                            s, reverse=r, cu_seqlens=c)),
                       ("chunk_local_cumsum", lambda s, r, c: chunk_local_cumsum(
                            s, 64, reverse=r, cu_seqlens=c))):
        for reverse in (False, True):
            for offsets in (None, cu):
                try:
                    got = tuple(scan(s, reverse, offsets).shape)
                    seen = f"shape {got}"
                    ok = got == shape
                except Exception as exc:  # noqa: BLE001 - what it raised is the finding
                    seen, ok = f"raised {type(exc).__name__}: {str(exc)[:80]}", False
                wrong |= not ok
                print(f"{name} {shape} reverse={reverse} cu_seqlens="
                      f"{'None' if offsets is None else offsets.tolist()}: {seen}")
print("still reproduces" if wrong else f"fixed in {version('fla-core')}")
