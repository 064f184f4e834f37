"""Triton's one-block scans as scancheck wraps them: the contract its rows declare holds at the
sizes where the block has no lane to spare (marked ``gpu``; Triton and torch needed)."""

from __future__ import annotations

import importlib.util

import numpy as np
import pytest

pytestmark = [pytest.mark.gpu,
              pytest.mark.skipif(importlib.util.find_spec("triton") is None
                                 or importlib.util.find_spec("torch") is None,
                                 reason="Triton and torch are not installed")]


@pytest.mark.parametrize("op, identity", [("max", -np.inf), ("min", np.inf)])
@pytest.mark.parametrize("n", [15, 16])
def test_a_reverse_scan_whose_whole_suffix_is_nan_gives_the_identity_at_every_n(op, identity, n):
    # n = 16 fills a block of 16 lanes: the rows declare nan_prefix="identity" for reverse
    # max and min, which holds only where a lane past n (the identity) meets every suffix.
    import torch

    from scancheck.adapters.triton_kernels import scan

    x = np.random.default_rng(n).standard_normal(n).astype(np.float32)
    x[-2:] = np.nan
    got = scan(torch.from_numpy(x).cuda(), "tl.associative_scan", op, True).cpu().numpy()
    want = getattr(np, f"f{op}").accumulate(x[::-1])[::-1]
    want[-2:] = identity
    np.testing.assert_array_equal(got, want)
