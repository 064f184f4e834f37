"""``verify``: each variant's model checked at hard sizes, and what the kernel column says."""

from __future__ import annotations

from scancheck.faces.jobs.verify import verify_variant
from scancheck.kernels.registry import VARIANTS


def test_kernels_that_are_not_compared_say_why_even_on_a_gpu():
    racy = verify_variant(VARIANTS["hillis_steele_inplace"], gpu=True)
    assert racy.kernel.startswith("not run (racy") and racy.hazards > 0 and racy.ok
    assert "racy by design" in str(racy.row()["hazards"])  # why 50 hazards are "ok"
    assert verify_variant(VARIANTS["kogge_stone"]).row()["hazards"] == 0
    no_add = verify_variant(VARIANTS["recurrence_float2"], gpu=True)
    assert no_add.kernel == "not run (no add)" and no_add.ok


def test_the_racy_control_races_from_the_block_its_race_needs():
    """With two threads no thread of the in-place Hillis-Steele reads a cell another writes:
    its model shows no race there, and verify says so instead of calling it wrong; from four
    threads its race is there, and must be."""
    var = VARIANTS["hillis_steele_inplace"]
    for block in (2, 4, 64):
        got = verify_variant(var, block=block)
        assert (got.hazards > 0) == (block >= var.racy) and got.ok, (block, got)
    assert verify_variant(var, block=2).row()["hazards"] == f"0 (races from block {var.racy})"


def test_without_a_gpu_every_variant_is_verified_on_its_model():
    from scancheck.faces.tables import format_table

    results = [verify_variant(var) for var in VARIANTS.values()]
    for result in results:
        assert result.ok and result.kernel == "not run (no GPU)", result
    # A GPU's longest kernel word ("no add: not run") is 9 columns wider than "no GPU".
    widest = max(len(line) for line in format_table([r.row() for r in results]).splitlines())
    assert widest + 9 <= 120, widest


def test_the_segmented_kernel_is_compared_with_its_model_bit_for_bit(monkeypatch):
    """verify's segmented_add comparison (its GPU launch replaced by the model, then by the
    model with one bit changed): equal passes, one ulp off is reported with its n."""
    import numpy as np

    import scancheck.kernels.launch as launch
    from scancheck.faces.jobs.verify import _segmented_check

    var = VARIANTS["blelloch"]

    class Fake:
        def __init__(self, a):
            self.a = a

        def get(self):
            return self.a

    def model_scan(pairs, v, op, block):
        return Fake(v.build_model(pairs.shape[0], block).run(pairs, op))

    monkeypatch.setattr(launch, "scan", model_scan)
    assert _segmented_check(var, 100, 64, "equal to model") == "equal to model"

    def off_by_an_ulp(pairs, v, op, block):
        out = model_scan(pairs, v, op, block).a.copy()
        out[-1, 1] = np.nextafter(out[-1, 1], np.float32(np.inf))
        return Fake(out)

    monkeypatch.setattr(launch, "scan", off_by_an_ulp)
    assert _segmented_check(var, 100, 64, "equal to model") == "segmented_add DIFFERS at n=100"


def test_a_candidate_this_device_cannot_launch_is_passed_over_not_the_default(monkeypatch):
    """A tuning candidate whose shared memory passes the device's limit for one dtype is no
    launch a table here may name (the tuner passes it over too); the default launch refused
    is an error."""
    import numpy as np
    import pytest

    import scancheck.kernels.launch as launch
    from scancheck.core.cuda import LaunchError
    from scancheck.faces.jobs.verify import _kernel_check

    def refused(*args, **kwargs):
        raise LaunchError("needs 278792 bytes of shared memory, over the device limit")
    monkeypatch.setattr(launch, "scan", refused)
    var = VARIANTS["decoupled_lookback"]
    x = np.ones(8)
    block, params = var.candidates[-1]
    assert _kernel_check(var, x, block, dict(params), x, "equal to model", True) == (
        "equal to model")
    with pytest.raises(LaunchError):
        _kernel_check(var, x, 256, None, x, "equal to model")
