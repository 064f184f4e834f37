"""``verify``: each variant's model checked at hard sizes, and what the kernel column says."""

from __future__ import annotations

from scancheck.kernels.registry import VARIANTS
from scancheck.verify import verify_variant


def test_kernels_that_are_not_compared_say_why_even_on_a_gpu():
    racy = verify_variant(VARIANTS["hillis_steele_inplace"], gpu=True)
    assert racy.kernel.startswith("not run (racy") and racy.hazards > 0 and racy.ok
    no_add = verify_variant(VARIANTS["recurrence_float2"], gpu=True)
    assert no_add.kernel == "not run (no add)" and no_add.ok


def test_without_a_gpu_every_variant_is_verified_on_its_model():
    for var in VARIANTS.values():
        result = verify_variant(var)
        assert result.ok and result.kernel == "not run (no GPU)", result
