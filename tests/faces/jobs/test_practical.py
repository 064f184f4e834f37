"""Seed 004's practical rebuilt: glibc's rand, the float32 data, scan_gold, the RMS, and
the verdicts on its two figures."""

from __future__ import annotations

import ctypes
import ctypes.util

import numpy as np
import pytest

from scancheck.controls.sums import multi_block_scan, scan_gold
from scancheck.explain import EXACT, PROVEN, ROUNDING, SUSPICIOUS
from scancheck.faces.jobs.practical import (
    SEED_FIGURES,
    glibc_rand,
    judge,
    judge_figure,
    practical_input,
    practical_rms,
    report,
)


def _libc():
    try:
        libc = ctypes.CDLL("libc.so.6")
        libc.gnu_get_libc_version.restype = ctypes.c_char_p
        libc.gnu_get_libc_version()
    except (OSError, AttributeError):
        pytest.skip("needs glibc: its rand() is the oracle here")
    return libc


@pytest.mark.parametrize("seed", [1, 12345, 2**31 + 7])
def test_the_generator_is_glibc_rand(seed):
    libc = _libc()
    libc.srand(ctypes.c_uint(seed))
    want = np.array([libc.rand() for _ in range(20_000)])
    np.testing.assert_array_equal(glibc_rand(20_000, seed), want)


def test_the_data_are_the_c_expression_in_float32():
    libc = _libc()
    libc.srand(1)
    r = [libc.rand() for _ in range(2000)]
    c = ctypes.c_float
    # floorf(1000 * (rand() / (float)RAND_MAX)), each step rounded to float as C does.
    want = [np.floor(c(1000 * c(c(v).value / c(2**31 - 1).value).value).value) for v in r]
    np.testing.assert_array_equal(practical_input(2000), np.array(want, dtype=np.float32))


def test_the_rms_sums_squares_in_float_as_the_practical_does():
    a = np.full(3, 2**12, dtype=np.float32)
    b = np.zeros(3, dtype=np.float32)
    assert practical_rms(a, b) == 2**12
    x = practical_input(4096)
    assert practical_rms(scan_gold(x), scan_gold(x)) == 0


def test_correct_multi_block_scans_are_rounding_and_the_block_total_bug_is_proven():
    rows = judge(200_000, {
        "correct": multi_block_scan(practical_input(200_000), 256),
        "bug": multi_block_scan(practical_input(200_000), 128, totals_from_exclusive=True)})
    assert rows[0].verdict in (ROUNDING, EXACT) and rows[1].verdict == PROVEN
    assert rows[1].rms_vs_gold > 100 * rows[0].rms_vs_gold


def test_the_seed_s_figures_judged():
    (n_big, big, _), (n_small, small, _) = SEED_FIGURES
    assert judge_figure(n_small, small)[0] == PROVEN
    assert judge_figure(n_small, 0.0)[0] == ROUNDING
    assert judge_figure(n_big, big)[0] == SUSPICIOUS


@pytest.mark.slow
def test_the_report_reproduces_the_2_1e6_with_blocks_of_128_and_not_the_755():
    text = report()
    assert "reproduced by: block totals from the exclusive scan, blocks of 128" in text
    assert "no bug tried reproduces it" in text
