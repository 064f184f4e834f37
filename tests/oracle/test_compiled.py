"""The Numba oracles compiled ahead (scancheck.oracle.compiled): each share calls its own."""

from __future__ import annotations

import pytest

from scancheck.oracle import exact, logsumexp, products
from scancheck.oracle.compiled import compile_oracles

EXACT = ("exact_scan", "exact_scan_axis")
REST = ("recurrence_enclosure", "recurrence_magnitudes", "judge_products", "judge_logsumexp")


@pytest.mark.parametrize("share, want", [(0, set(EXACT)), (1, set(REST)),
                                         (None, set(EXACT) | set(REST))])
def test_each_share_calls_its_oracles_and_all_of_them_together(share, want, monkeypatch):
    called = set()
    for module, names in ((exact, (*EXACT, *REST[:2])), (products, REST[2:3]),
                          (logsumexp, REST[3:])):
        for name in names:
            monkeypatch.setattr(module, name, lambda *a, name=name: called.add(name))
    compile_oracles(share)
    assert called == want


def test_the_oracles_compile_and_run_here():
    compile_oracles()  # raises where one of them cannot be called as the warm-ups call it
