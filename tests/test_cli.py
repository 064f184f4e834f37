"""The command line: the main job runs without a GPU, bad arguments exit 2 with a message."""

from __future__ import annotations

import pytest

from scancheck.cli import main


def test_verify_runs_on_the_cpu_models(capsys):
    assert main(["verify", "--block", "32"]) == 0
    out = capsys.readouterr().out
    assert "13 of 13 variants verified" in out
    assert "hillis_steele_inplace" in out and "pass" in out


def test_precision_prints_the_table_and_the_conclusion(capsys):
    assert main(["precision", "--n", "70000"]) == 0
    out = capsys.readouterr().out
    assert "RMS vs exact" in out and "sequential" in out


def test_bench_oracle_prints_rates(capsys):
    from scancheck import bench

    rows = bench.oracle_throughput(n=20_000, mp_n=2000, reps=1)
    assert all(r["elements/s"] > 0 for r in rows) and rows[0]["x mpmath"] == 1.0


def test_bad_arguments_exit_2_with_a_message(capsys):
    assert main(["precision", "--n", "0"]) == 2
    assert "n=0" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        main(["no-such-command"])
