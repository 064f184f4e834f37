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


@pytest.mark.parametrize("argv, message", [
    (["precision", "--n", "0"], "scancheck precision: error: argument --n: 0 is not a positive integer"),
    (["check", "numpy.cumsum", "--max-n", "0"], "argument --max-n: 0 is not a positive integer"),
    (["check", "numpy.cumsum", "--examples", "-1"], "argument --examples: -1 is not a positive"),
    (["check", "numpy.cumsum", "--budget", "nan"], "argument --budget: nan is not a positive, finite"),
    (["check", "numpy.cumsum", "--timeout", "x"], "argument --timeout: 'x' is not a positive, finite"),
    (["check", "numpy.cumsum", "--sanitize", "leakcheck"], "argument --sanitize: invalid choice"),
    (["no-such-command"], "invalid choice: 'no-such-command'"),
    (["check", "numpy.cumsum", "--promote", "int8"], "argument --promote: 'int8' must be IN:OUT"),
])
def test_bad_options_exit_2_with_one_line_naming_the_argument(argv, message, capsys):
    with pytest.raises(SystemExit) as exc:
        main(argv)
    err = capsys.readouterr().err
    assert exc.value.code == 2 and message in err and err.count("\n") == 1, err


@pytest.mark.parametrize("target, message", [
    ("nope_mod:fn", "module 'nope_mod' cannot be imported"),
    ("scancheck.controls:missing", "has no attribute 'missing'"),
    ("nothing", "is not a built-in"),
])
def test_a_target_that_cannot_be_loaded_exits_2_not_1(target, message, capsys):
    assert main(["check", target, "--quick", "--budget", "1"]) == 2
    err = capsys.readouterr().err
    assert message in err and err.count("\n") == 1, err


def test_check_says_how_far_it_looked_and_the_one_diagnosis(capsys):
    status = main(["check", "scancheck.controls:exclusive_scan_with_wrong_first_output",
                   "--budget", "1", "--quick"])
    out = capsys.readouterr().out
    assert status == 1
    assert "verdict: DOES NOT CONFORM - logic error: differs from the exact scan (smallest case n=1" in out
    assert "largest n checked" in out


def test_a_promotion_declared_on_the_command_line_reaches_the_oracle(capsys):
    argv = ["check", "numpy:cumsum", "--quick", "--budget", "1", "--dtypes", "int8"]
    assert main(argv) == 1  # undeclared: int64 comes back
    assert "expected dtype int8" in capsys.readouterr().out
    assert main([*argv, "bool", "--promote", "bool:int64", "int8:int64"]) == 0
    capsys.readouterr()
    assert main([*argv, "bool"]) == 2  # a sum of booleans, in bool: refused, saying why
    assert "in bool, + and * are a logical or and and" in capsys.readouterr().err


def test_python_dash_m_scancheck_is_the_console_script():
    import subprocess
    import sys

    out = subprocess.run([sys.executable, "-m", "scancheck", "check", "--max-n", "0"],
                         capture_output=True, text=True)
    assert out.returncode == 2 and "--max-n" in out.stderr
    out = subprocess.run([sys.executable, "-m", "scancheck", "--help"], capture_output=True,
                         text=True)
    assert out.returncode == 0 and "explain" in out.stdout


# -- the spec flags override only what they name ---------------------------------------


def test_every_spec_field_has_a_flag_of_its_own():
    from dataclasses import fields

    from scancheck.cli import SPEC_FLAGS, build_parser
    from scancheck.targets import TargetSpec

    assert set(SPEC_FLAGS) == {f.name for f in fields(TargetSpec)}
    args = build_parser().parse_args(["check", "t"])
    assert all(hasattr(args, dest) for dest in SPEC_FLAGS.values())


def test_flags_override_only_the_fields_they_name():
    from scancheck.cli import build_parser, spec_overrides
    from scancheck.targets import resolve

    parse = build_parser().parse_args
    assert spec_overrides(parse(["check", "t"])) == {}
    assert spec_overrides(parse(["check", "t", "--dtypes", "float32", "--no-allows-empty",
                                 "--zeros", "ordered", "--exclusive"])) == {
        "dtypes": ("float32",), "allows_empty": False, "zeros": "ordered", "inclusive": False}
    # A built-in max scan keeps its operator when only its dtypes are named.
    t = resolve("numpy.maximum.accumulate", overrides={"dtypes": ("float32",)})
    assert (t.spec.op, t.spec.dtypes) == ("max", ("float32",))


def test_a_declared_max_scan_with_one_flag_conforms_and_bad_combinations_are_usage_errors(
        capsys):
    from scancheck.cli import main

    rc = main(["check", "numpy.maximum.accumulate", "--dtypes", "float32", "--budget", "3",
               "--max-n", "4096", "--quick"])
    assert rc == 0, capsys.readouterr().out[-2000:]
    assert main(["check", "numpy.cumsum", "--indices", "--quick"]) == 2
    assert "indices=True with op='add'" in capsys.readouterr().err


def test_output_paths_are_checked_before_the_run(tmp_path, capsys):
    from scancheck.cli import main

    assert main(["check", "numpy.cumsum", "--json", str(tmp_path) + "/"]) == 2
    assert "is a directory" in capsys.readouterr().err
    assert main(["check", "numpy.cumsum", "--report", str(tmp_path / "no" / "r.md")]) == 2
    assert "not a directory this user can write" in capsys.readouterr().err
