"""The child process of an isolated check: the launches a sanitizer run watches."""

from __future__ import annotations

from dataclasses import replace

import pytest

from scancheck.isolation.child import smoke
from scancheck.targets.resolve import resolve


def test_a_sanitizer_run_leaves_a_write_into_the_input_to_the_value_properties(capsys):
    """Its child launches the target at a few sizes for the sanitizer to watch: a write
    into the input is no fault there (the value properties refuse it, with its own cause)."""
    smoke(resolve("scancheck.controls.sums:zeroing_its_input"), [1, 33])
    assert capsys.readouterr().out.split() == ["scancheck-sanitize:", "n=1",
                                               "scancheck-sanitize:", "n=33"]


@pytest.mark.parametrize("name", ["scancheck.controls.segmented:offsets_times_heads_in_32_bits",
                                  "numpy segmented cumsum (groups)"])
def test_a_sanitizer_run_hands_a_segmented_target_its_segments(name):
    """A segmented target is launched as fn(x, segments) (a (T, 1) input for one along axis
    0): called as fn(x) it would fail in every sanitizer run, a fault that is not its own."""
    seen = []
    target = resolve(name)
    fn = target.fn
    smoke(replace(target, fn=lambda x, s: (seen.append((x.shape, s.dtype.name)), fn(x, s))[1]),
           [1, 33, 257])
    assert [shape for shape, _ in seen] == (
        [(1,), (33,), (257,)] if target.spec.axis is None else [(1, 1), (33, 1), (257, 1)])
