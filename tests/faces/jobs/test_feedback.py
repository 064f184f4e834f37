"""The feedback benchmark reads what a pytest run did: its outcomes and its Hypothesis
examples (the timings themselves are the benchmark's, not a test's)."""

from __future__ import annotations

from scancheck.faces.jobs.feedback import Timing, counted

pytest_plugins = ["pytester"]


def test_the_examples_of_every_given_test_are_counted(pytester):
    pytester.makepyfile(
        """
        from hypothesis import given, settings, strategies as st

        @settings(max_examples=7, database=None)
        @given(st.integers())
        def test_seven(n):
            pass

        @settings(max_examples=5, database=None)
        @given(st.text())
        def test_five(s):
            pass

        def test_plain():
            pass
        """
    )
    result = pytester.runpytest_inprocess("-p", "no:cacheprovider", "--noconftest",
                                          "--hypothesis-show-statistics")
    counts, examples = counted(result.stdout.str())
    assert counts == "3 passed" and examples == 7 + 5, result.stdout.str()


def test_a_row_says_whether_the_part_met_its_goal():
    fast = Timing("tests", "pytest -n auto", 80.0, 90.0, "1 passed, 0 examples", cpu=150.0)
    assert fast.row()["within"] == "yes" and fast.row()["cpu s"] == 150.0
    assert Timing("tests", "", 95.0, 90.0, "").row()["within"] == "NO"
    assert Timing("tests", "", 10.0, 90.0, "", ok=False).row()["within"] == "NO"
