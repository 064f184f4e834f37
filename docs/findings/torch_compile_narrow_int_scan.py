"""torch.compile(dynamic=True) of a scan over 8- and 16-bit integers (and bool for cummax and
cummin) on CUDA fails to compile: Inductor's looped scan picks its last element with
``triton_helpers.select_one``, which bitcasts a 32-bit sum back to the narrow type
("Cannot bitcast data-type of size 32 to data-type of size 8").  Static shapes compile.

Plain torch, no scancheck.  Run on a GPU:  python docs/findings/torch_compile_narrow_int_scan.py

Each scan is compiled for each dtype with dynamic shapes and with static ones, on a tensor of
5 elements, and compared with the eager call.  Prints what each did, then "still reproduces"
(some dynamic compile raised) or "fixed in <torch version>".
"""

import torch

print("torch", torch.__version__, "| device:", torch.cuda.get_device_name(0))
scans = {
    "cumsum(x, 0, dtype=x.dtype)": (lambda t: torch.cumsum(t, 0, dtype=t.dtype), False),
    "cumprod(x, 0, dtype=x.dtype)": (lambda t: torch.cumprod(t, 0, dtype=t.dtype), False),
    "cummax(x, 0)": (lambda t: torch.cummax(t, 0), True),
    "cummin(x, 0)": (lambda t: torch.cummin(t, 0), True),
}
raised = False
for name, (scan, takes_bool) in scans.items():
    for dtype in (torch.bool, torch.int8, torch.uint8, torch.int16):
        if dtype == torch.bool and not takes_bool:
            continue
        x = (torch.arange(1, 6) % 2).to(dtype).cuda()
        want = scan(x)
        for dynamic in (True, False):
            torch._dynamo.reset()
            try:
                got = torch.compile(scan, dynamic=dynamic)(x)
            except Exception as exc:  # torch._inductor.exc.InductorError
                cause = str(exc).strip().splitlines()
                why = next((line for line in cause if "bitcast" in line), cause[0])[:100]
                print(f"{name:30s} {str(dtype)[6:]:6s} dynamic={dynamic!s:5s} raised "
                      f"{type(exc).__name__}: {why}")
                raised |= dynamic
                continue
            same = all(torch.equal(a, b) for a, b in zip(
                got if isinstance(got, tuple) else (got,), want if isinstance(want, tuple)
                else (want,)))
            print(f"{name:30s} {str(dtype)[6:]:6s} dynamic={dynamic!s:5s} "
                  f"{'as eager' if same else 'DIFFERS from eager'}")
print("still reproduces" if raised else f"fixed in {torch.__version__}")
