"""The log-sum-exp judge (scancheck.oracle.logsumexp): NumPy's logaddexp.accumulate passes in every
float type it has, log(cumsum(exp(x))) does not, and -inf, +inf and NaN are exact."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from scancheck.engine.cases import Case
from scancheck.oracle.logsumexp import judge_logsumexp


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16"])
@pytest.mark.parametrize("dist", ["uniform", "integers", "wide", "cancellation", "specials"])
@given(seed=st.integers(0, 2**32 - 1), n=st.integers(1, 2000))
def test_numpy_logaddexp_accumulate_is_within_the_bound(dtype, dist, seed, n):
    x = Case(n, dtype, dist, seed).data("logaddexp")
    with np.errstate(all="ignore"):
        got = np.logaddexp.accumulate(x)
    judged = judge_logsumexp(x, got)
    assert judged.ok.all(), (judged.reason[~judged.ok][:1], np.flatnonzero(~judged.ok)[:3])


def test_log_of_cumsum_of_exp_overflows_where_the_answer_is_finite():
    x = np.array([100.0, 1.0, 2.0], dtype=np.float32)
    with np.errstate(all="ignore"):
        naive = np.log(np.cumsum(np.exp(x), dtype=x.dtype))
    judged = judge_logsumexp(x, naive)
    assert not judged.ok[0] and "+inf where the log-sum-exp is finite" in judged.reason[0]


def test_a_term_counted_twice_is_far_beyond_the_bound():
    x = np.linspace(-1, 1, 50).astype(np.float32)
    got = np.logaddexp.accumulate(x)
    got[10:] = np.logaddexp(got[10:], x[10])  # x[10] counted twice from there on
    judged = judge_logsumexp(x, got)
    assert np.flatnonzero(~judged.ok)[0] == 10


def test_infinities_and_nan_are_exact():
    x = np.array([-np.inf, -np.inf, 0.0, np.inf, 1.0, np.nan], dtype=np.float32)
    right = np.array([-np.inf, -np.inf, 0.0, np.inf, np.inf, np.nan], dtype=np.float32)
    assert judge_logsumexp(x, right).ok.all()
    for k, wrong in ((0, np.nan), (3, 1e30), (5, np.inf)):
        bad = right.copy()
        bad[k] = wrong
        assert not judge_logsumexp(x, bad).ok[k]
    np.testing.assert_array_equal(judge_logsumexp(x, right).reference[:3], [-np.inf, -np.inf, 0.0])
