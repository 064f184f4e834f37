"""The command line: the main job runs without a GPU, bad arguments exit 2 with a message."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys

import numpy as np
import pytest

from scancheck.engine.diagnosis import Cause
from scancheck.faces.cli.main import main


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
    from scancheck.faces.jobs import bench

    rows = bench.oracle_throughput(sizes=(20_000,), mp_n=2000, reps=1)
    assert all(r["elements/s"] > 0 for r in rows) and rows[0]["x mpmath"] == 1.0


def test_bench_oracle_writes_its_json_without_a_gpu_too(capsys, monkeypatch, tmp_path):
    from scancheck.faces.jobs import bench

    rows = [{"input": "float32 normal(0, 1)", "n": 2**20, "elements/s": 2.5e7}]
    monkeypatch.setattr(bench, "oracle_throughput", lambda **kw: rows)
    monkeypatch.setattr("scancheck.core.devices.gpu_available", lambda: (False, "none here"))
    assert main(["bench", "--oracle", "--json", str(tmp_path / "o.json")]) == 0
    assert "No GPU (none here)" in capsys.readouterr().out
    assert json.loads((tmp_path / "o.json").read_text()) == {"cpu": rows, "device": []}


@pytest.mark.parametrize("argv, message", [
    (["precision", "--n", "0"], "scancheck precision: error: argument --n: 0 is not a positive integer"),
    (["check", "numpy.cumsum", "--max-n", "0"], "argument --max-n: 0 is not a positive integer"),
    (["check", "numpy.cumsum", "--examples", "-1"], "argument --examples: -1 is not a positive"),
    (["check", "numpy.cumsum", "--budget", "nan"], "argument --budget: nan is not a positive, finite"),
    (["check", "numpy.cumsum", "--timeout", "x"], "argument --timeout: 'x' is not a positive, finite"),
    (["check", "numpy.cumsum", "--sanitize", "leakcheck"], "argument --sanitize: invalid choice"),
    (["no-such-command"], "invalid choice: 'no-such-command'"),
    (["check", "numpy.cumsum", "--promote", "int8"], "argument --promote: 'int8' must be IN:OUT"),
    (["check", "numpy.cumsum", "--accumulates", "float32"],
     "argument --accumulates: 'float32' must be IN:ACC, as float32:float64"),
    # A model built at a block size that is no power of two computes no scan: refused, not
    # told as the reference kernels being wrong.
    (["verify", "--block", "96"], "argument --block: '96' is not a power of two from 2 to 1024"),
    (["verify", "--block", "0"], "argument --block: '0' is not a power of two"),
    (["verify", "--block", "2048"], "argument --block: '2048' is not a power of two from 2 to"),
    # At one thread a block no threads combine: verify would prove nothing of a schedule.
    (["verify", "--block", "1"], "argument --block: '1' is below 2; allowed: a power of two "
                                 "from 2 to 1024"),
    (["sanitize", "kogge_stone", "--block", "2048"], "'2048' is not a power of two from 1 to"),
    (["sanitize", "kogge_stone", "--block", "100"], "argument --block: '100' is not a power"),
    (["hunt", "--only", "("], "argument --only: '(' is no regular expression: missing )"),
    (["explain", "x.txt", "y.txt", "--dtype", "floaty"], "argument --dtype: invalid choice"),
    (["precision", "--sweep", "--max-log2", "8"], "argument --max-log2: '8' is not a whole "
                                                  "number from 10 to 30 (the sweep's sizes run"),
    (["precision", "--sweep", "--max-log2", "99"], "argument --max-log2: '99' is not a whole"),
    (["precision", "--seed", "-1"], "argument --seed: '-1' is not a whole number from 0 to"),
    (["bench", "--log2-sizes", "abc"], "argument --log2-sizes: 'abc' is not a whole number"),
])
def test_bad_options_exit_2_with_one_line_naming_the_argument(argv, message, capsys):
    with pytest.raises(SystemExit) as exc:
        main(argv)
    err = capsys.readouterr().err
    assert exc.value.code == 2 and message in err and err.count("\n") == 1, err


@pytest.mark.parametrize("argv, message", [
    (["precision", "--practical", "--n", "5"], "--n applies to the data of precision's own "
                                               "table; --practical judges the practical's data"),
    (["precision", "--distribution", "normal"], "argument --distribution: 'normal' is unknown; "
                                                "allowed: integers,"),
])
def test_precision_refuses_data_it_would_not_use_before_it_prints(argv, message, capsys):
    assert main(argv) == 2
    out, err = capsys.readouterr()
    assert message in err and err.count("\n") == 1 and not out, (out, err)


def test_a_control_name_matching_none_is_answered_with_the_closest(capsys):
    assert main(["check", "--controls", "--only", "keys narrowd"]) == 2
    err = capsys.readouterr().err
    assert ("argument --only: no control's name contains 'keys narrowd'; did you mean "
            "'segment keys narrowed to int8'?") in err and err.count("\n") == 1, err


def test_verify_refuses_a_block_that_is_no_power_of_two():
    from scancheck.core.cuda import LaunchError
    from scancheck.faces.jobs.verify import verify_variant
    from scancheck.kernels.registry import VARIANTS

    with pytest.raises(LaunchError, match="block=96 must be a power of two"):
        verify_variant(VARIANTS["blelloch"], 96)
    with pytest.raises(LaunchError, match="block=1: with one thread a block no two threads "
                       "combine.*allowed: a power of two from 2 to 1024"):
        verify_variant(VARIANTS["blelloch"], 1)


@pytest.mark.parametrize("gpu, sanitizer, message", [
    ((False, "no NVIDIA GPU is visible"), "/bin/compute-sanitizer",
     "sanitize runs a kernel on a CUDA GPU: no NVIDIA GPU is visible"),
    ((True, "GPU 0"), None, "compute-sanitizer is not on PATH nor under $CUDA_HOME/bin"),
])
def test_sanitize_says_what_this_machine_lacks_in_one_line(gpu, sanitizer, message, capsys,
                                                            monkeypatch):
    monkeypatch.setattr("scancheck.core.devices.gpu_available", lambda: gpu)
    monkeypatch.setattr("scancheck.isolation.sanitizer.find_sanitizer", lambda: sanitizer)
    assert main(["sanitize", "kogge_stone"]) == 2
    err = capsys.readouterr().err
    assert message in err and err.count("\n") == 1, err


def test_sanitize_refuses_a_launch_before_it_looks_for_the_tool(capsys):
    assert main(["sanitize", "kogge_stone", "--n", "5000"]) == 2
    assert "n=5000 is over the single-block limit of kogge_stone" in capsys.readouterr().err


@pytest.mark.parametrize("argv, message", [
    (["precision", "--plot", "p.png"], "--plot applies to the sweep alone: add --sweep"),
    (["precision", "--max-log2", "12"], "--max-log2 applies to the sweep alone: add --sweep"),
    (["precision", "--practical", "--sweep"], "--practical prints the practical's own figures "
                                              "alone; --sweep applies to the sweep"),
    (["bench", "--oracle", "--tune", "t.json"], "--tune applies to the look-back's table; --oracle "
                                                "times the exact oracle alone"),
    (["bench", "--oracle", "--log2-sizes", "20", "--reps", "3"],
     "--log2-sizes and --reps apply to the look-back's table"),
])
def test_a_flag_the_command_would_not_use_is_refused_naming_it(argv, message, capsys, tmp_path,
                                                               monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert main(argv) == 2
    out, err = capsys.readouterr()
    assert message in err and err.count("\n") == 1 and out == "", err
    assert not list(tmp_path.iterdir())  # nothing written


def test_a_cpu_sweep_past_the_machines_memory_is_refused_before_it_runs(capsys, monkeypatch):
    """The kernel kills a process out of memory before Python can raise: the sweep of the
    CPU models is measured against the machine's memory first, and the largest that fits
    named."""
    monkeypatch.setattr("scancheck.core.devices.gpu_available", lambda: (False, "none here"))
    monkeypatch.setattr("scancheck.isolation.watch.machine_memory", lambda: 2**30)
    assert main(["precision", "--sweep", "--max-log2", "24"]) == 2
    out, err = capsys.readouterr()
    assert "--max-log2 24: without a GPU the sweep runs the CPU models" in err, err
    assert "past this machine's 1.0 GiB; give at most 22" in err and out == ""


@pytest.mark.parametrize("argv", [["check", "numpy.cumsum", "--budg", "1"],
                                  ["bench", "--oracle-size", "20"]])
def test_a_flag_is_taken_whole_never_abbreviated(argv, capsys):
    """Refused, with the flag of the command that is nearest, and none where none is near."""
    assert main(argv) == 2
    meant = {"--budg": "--budget", "--oracle-size": "--oracle-sizes"}[argv[-2]]
    assert (f"unrecognized arguments: {argv[-2]} {argv[-1]} (did you mean {meant}?)"
            in capsys.readouterr().err)
    assert main(["check", "numpy.cumsum", "--zzzz", "1"]) == 2
    assert capsys.readouterr().err.endswith("unrecognized arguments: --zzzz 1\n")


def test_a_hunt_whose_only_matches_no_target_is_refused(capsys):
    assert main(["hunt", "--part", "cpu", "--only", "zzz"]) == 2
    err = capsys.readouterr().err
    assert "argument --only: no target of part 'cpu' matches 'zzz'" in err, err


def test_a_plot_without_matplotlib_is_refused_before_the_sweep(capsys, monkeypatch, tmp_path):
    import importlib.util

    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec",
                        lambda name, *a: None if name == "matplotlib" else real(name, *a))
    assert main(["precision", "--sweep", "--plot", str(tmp_path / "p.png")]) == 2
    out, err = capsys.readouterr()
    assert "--plot needs matplotlib, which is not installed" in err and err.count("\n") == 1
    assert out == ""  # refused before any table was computed


def test_a_reader_that_goes_away_ends_the_command_quietly(tmp_path):
    """As `scancheck explain ... | head -1` once the reader has gone: no traceback."""
    x = np.arange(1, 2001, dtype=np.float64)
    np.save(tmp_path / "x.npy", x)
    np.save(tmp_path / "y.npy", np.cumsum(x))
    read, write = os.pipe()
    os.close(read)  # no reader: the first write fails
    try:
        out = subprocess.run([sys.executable, "-m", "scancheck", "explain", str(tmp_path / "x.npy"),
                              str(tmp_path / "y.npy")], stdout=write, stderr=subprocess.PIPE,
                             text=True, timeout=120)
    finally:
        os.close(write)
    assert out.returncode == 128 + 13 and out.stderr == "", out.stderr


@pytest.mark.parametrize("target, message", [
    ("nope_mod:fn", "module 'nope_mod' cannot be imported"),
    ("scancheck.controls.sums:missing", "has no attribute 'missing'"),
    ("nothing", "is none of a built-in, a .cu file"),
    ("numpy.cumsun", "did you mean 'numpy.cumsum'"),
    ("cupy.cumsm", "did you mean 'cupy.cumsum (CUB)' or 'cupy.cumsum (CUB, strided)' or "
                   "'cupy.cumsum (no CUB)'"),
    ("myscans.py", "names a file but no function in it: give myscans.py:FUNCTION"),
    ("kernel:nosuch", "target 'kernel:nosuch': variant='nosuch' is unknown"),
    ("kernel:blelloch:abc", "the block size 'abc' is no whole number; allowed: a power of two"),
    ("model:kogge_stone:-64", "the block size '-64' is no whole number; allowed: a power of two"),
    ("model:kogge_stone:64:max:extra", "4 fields where model:VARIANT[:BLOCK[:OP]] has 3 at most"),
    # A model is held to its kernel's launches: Blelloch's tree at 100 threads computes no
    # scan, and was called a logic error; a kernel's launch refused at its first call, a fault.
    ("model:blelloch:100", "target 'model:blelloch:100': block=100 must be a power of two"),
    ("kernel:blelloch:2048", "block=2048 is over the limit of 1024 threads per block"),
    ("model:kogge_stone:256:logaddexp", "operator='logaddexp' is not supported by kogge_stone"),
    # A function scancheck cannot call as the spec says: its signature, not a fault.
    ("operator:add", "add(a, b, /) cannot be called as fn(x) (missing a required argument"),
    ("os:getcwd", "getcwd() cannot be called as fn(x) (too many positional arguments)"),
    ("numpy:", "target 'numpy:' names no function: give package.module:function"),
    (":cumsum", "target ':cumsum' names no module"),
    ("pyproject.toml:f", "pyproject.toml is a file but no module"),
])
def test_a_target_that_cannot_be_loaded_exits_2_not_1(target, message, capsys):
    """One line, once (one target's error is not echoed as its progress line), short: a
    typo is answered with the names it is closest to, not the list of every built-in."""
    assert main(["check", target, "--quick", "--budget", "1"]) == 2
    out, err = capsys.readouterr()
    assert message in err and err.count("\n") == 1 and len(err) < 400, err
    assert target not in out, out


@pytest.mark.parametrize("flags, call", [
    (["--segments", "flags"], "fn(x, flags)"), (["--combine"], "fn(elems, combine)"),
    (["--combine", "--axis", "arg"], "fn(elems, combine, axis)")])
def test_a_function_that_takes_not_what_its_flags_hand_is_told_so_not_faulted(
        tmp_path, capsys, flags, call):
    """--segments hands fn(x, offsets), --combine fn(elems, combine): a one-argument function
    is a usage error naming its signature, not a fault of the target on its first call."""
    (tmp_path / "one.py").write_text("import numpy as np\n\ndef scan(x):\n    return np.cumsum(x)\n")
    target = f"{tmp_path / 'one.py'}:scan"
    assert main(["check", target, *flags, "--quick", "--budget", "1"]) == 2
    err = capsys.readouterr().err
    assert f"scan(x) cannot be called as {call} (too many positional arguments)" in err, err
    assert err.count("\n") == 1, err


def test_a_name_of_no_target_form_is_refused_before_any_target_is_checked(capsys):
    """`check GOOD BAD` where BAD is none of the forms: told at once, GOOD left unchecked (not
    checked for its whole budget first and BAD told after)."""
    import time

    t0 = time.monotonic()
    assert main(["check", "numpy.cumsum", "numpy.cumsun", "--budget", "30"]) == 2
    out, err = capsys.readouterr()
    assert time.monotonic() - t0 < 20 and out == "", out
    assert err.startswith("scancheck check: error: argument TARGET: nothing was checked: "
                          "target 'numpy.cumsun' is none of") and err.count("\n") == 1, err


def test_check_says_how_far_it_looked_and_the_one_diagnosis(capsys):
    status = main(["check", "scancheck.controls.sums:exclusive_scan_with_wrong_first_output",
                   "--budget", "1", "--max-n", "4096", "--quick"])
    out = capsys.readouterr().out
    assert status == 1
    flat = " ".join(out.split())  # the verdict and causes are wrapped to 100 columns
    told = ("logic error: differs from the exact scan: the first output of an exclusive scan is "
            "the first input, ")
    assert f"verdict: DOES NOT CONFORM - {told}" in flat
    assert "largest n checked" in out
    # One cause, once, with every property it explains folded under it.
    assert f"causes, primary first: 1. {told}" in flat and "\n  2. " not in out
    assert ("(smallest case n=1, index 0) -- explains: integers exact, certified exact, floats "
            "within bound") in flat
    table = out[out.index("property"):out.index("verdict:")]
    assert all(len(line) <= 100 for line in table.splitlines())


def test_a_promotion_declared_on_the_command_line_reaches_the_oracle(capsys):
    argv = ["check", "numpy:cumsum", "--quick", "--budget", "1", "--max-n", "4096",
            "--dtypes", "int8"]
    assert main(argv) == 1  # undeclared: int64 comes back
    assert "returns int64 for int8 input: it promotes; declare --promote int8:int64" in (
        capsys.readouterr().out)
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


# -- spec flags: each names one field, and replaces only that field ----------------------

def _check_args(*argv: str):
    from scancheck.faces.cli.main import build_parser

    return build_parser().parse_args(["check", "some:target", *argv])


def test_every_spec_field_has_a_flag_of_its_name():
    from dataclasses import fields

    from scancheck.faces.cli.main import build_parser
    from scancheck.targets.spec import TargetSpec, spec_flag

    check = build_parser()._subparsers._group_actions[0].choices["check"]
    flags = {s for a in check._actions for s in a.option_strings}
    for f in fields(TargetSpec):
        flag = spec_flag(f.name)
        assert flag in flags, f"TargetSpec.{f.name} has no flag {flag}"
        want = "--accepts-max-n" if f.name == "max_n" else "--" + f.name.replace("_", "-")
        assert flag == want
    # --max-n stays the search's largest n, not the target's.
    assert _check_args("--max-n", "64").max_n == 64 and _spec_overrides() == {}


def test_a_budget_given_bounds_the_ladders_and_the_default_walks_them_whole():
    """--budget bounds every ladder of sizes; without it a check searches the default 30 s
    past ladders walked whole, so its claim reaches the device's largest n (bounded, correct
    GPU kernels ended "partial" short of 2**24 on an H200)."""
    from scancheck.faces.cli.check import DEFAULT_BUDGET, NOT_SEARCH, check_options

    options = check_options(_check_args())
    default = options.budget
    given = check_options(_check_args("--budget", "30")).budget
    # The default's 30 s are the command's wall time: its start and its report come out of them.
    assert DEFAULT_BUDGET == 30.0 and 0 < NOT_SEARCH < 3
    assert (default.seconds, default.bounded) == (30.0 - NOT_SEARCH, False)
    assert options.seconds == default.seconds
    assert (given.seconds, given.bounded) == (30.0, True)


def _spec_overrides(*argv: str) -> dict:
    from scancheck.faces.spec_flags import spec_overrides as overrides

    return overrides(_check_args(*argv))


@pytest.mark.parametrize("argv, fields", [
    ([], {}),
    (["--exclusive"], {"inclusive": False}),
    (["--inclusive"], {"inclusive": True}),
    (["--reverse", "--no-deterministic"], {"reverse": True, "deterministic": False}),
    (["--initial"], {"initial": True}),
    (["--op", "max", "--indices"], {"op": "max", "indices": True}),
    (["--promote", "bool:int64", "int8:int64"],
     {"promote": (("bool", "int64"), ("int8", "int64"))}),
    (["--promote"], {"promote": ()}),
    (["--axis", "arg"], {"axis": "arg"}),
    (["--axis", "-1"], {"axis": -1}),
    (["--axis", "none"], {"axis": None}),
    (["--device", "cpu", "--dtypes", "float32", "int8"],
     {"device": "cpu", "dtypes": ("float32", "int8")}),
    (["--accepts-max-n", "4096", "--no-allows-empty"], {"max_n": 4096, "allows_empty": False}),
    (["--zeros", "ordered", "--nans", "ignore", "--subnormals", "flush"],
     {"zeros": "ordered", "nans": "ignore", "subnormals": "flush"}),
    (["--subnormals", "flush:float32,bfloat16"], {"subnormals": "flush:float32,bfloat16"}),
    (["--segments", "offsets", "--axis", "0"], {"segments": "offsets", "axis": 0}),
    (["--segments", "none"], {"segments": None}),
    (["--segments", "offsets:int32"], {"segments": "offsets:int32"}),
])
def test_the_flags_given_and_only_those_become_overrides(argv, fields):
    assert _spec_overrides(*argv) == fields


@pytest.mark.parametrize("flag, table", [("--zeros", "rules.ZERO_ORDERS"),
                                         ("--nans", "rules.NAN_RULES"),
                                         ("--subnormals", "rules.SUBNORMAL_RULES"),
                                         ("--op", "operators.TARGET_OPERATORS")])
def test_rule_flags_take_the_operator_vocabularys_names(flag, table, capsys):
    import importlib

    module, attr = table.split(".")
    names = getattr(importlib.import_module(f"scancheck.core.{module}"), attr)
    for name in names:
        assert _spec_overrides(flag, name)
    with pytest.raises(SystemExit) as exc:
        _check_args(flag, "nonsense")
    err = capsys.readouterr().err
    assert exc.value.code == 2 and f"argument {flag}: invalid choice" in err
    assert all(repr(name) in err for name in names)


@pytest.mark.parametrize("argv, message", [
    (["--dtypes", "float128"], "argument --dtypes: invalid choice: 'float128'"),
    (["--promote", "int8:complex64"], "argument --promote: 'int8:complex64': IN must be one of"),
    (["--accepts-max-n", "0"], "argument --accepts-max-n: 0 is not a positive integer"),
    (["--axis", "rows"], "argument --axis: 'rows' is none of"),
    (["--device", "tpu"], "argument --device: invalid choice: 'tpu'"),
    (["--segments", "ragged"], "argument --segments: invalid choice: 'ragged' (choose from "
                               "'offsets', 'offsets:int32', 'offsets:int64', 'flags', 'keys', "
                               "'groups', 'none')"),
    # A field's two flags together contradict each other: refused, whichever comes last.
    (["--exclusive", "--inclusive"], "argument --inclusive/--no-inclusive: not allowed with "
                                     "argument --exclusive"),
    (["--reverse=flip", "--no-reverse"], "argument --no-reverse: not allowed with argument "
                                         "--reverse"),
])
def test_a_bad_spec_flag_value_exits_2_naming_it(argv, message, capsys):
    with pytest.raises(SystemExit) as exc:
        _check_args(*argv)
    err = capsys.readouterr().err
    assert exc.value.code == 2 and message in err and err.count("\n") == 1, err


# -- exit codes: 2 for the user's or the machine's problem, before any run ---------------

@pytest.mark.parametrize("flag", ["--json", "--report"])
def test_an_output_path_that_cannot_be_written_exits_2_before_the_run(flag, tmp_path, capsys,
                                                                    monkeypatch):
    import scancheck.isolation.parent

    def never(*args, **kwargs):
        raise AssertionError("the check ran")

    monkeypatch.setattr(scancheck.isolation.parent, "check_isolated", never)
    for where, message in ((tmp_path, "is a directory"),
                           (tmp_path / "no" / "r.json", "does not exist")):
        assert main(["check", "numpy.cumsum", flag, str(where)]) == 2
        err = capsys.readouterr().err
        assert f"argument {flag}: " in err and message in err and "Traceback" not in err


@pytest.mark.skipif(not os.path.isdir("/proc/self"), reason="needs Linux's /proc")
def test_a_path_access_would_pass_is_tried_and_a_probe_leaves_nothing_behind(tmp_path):
    from scancheck.faces.cli.check import output_path

    # As root, access() says /proc is writable; creating a file there still fails.
    with pytest.raises(ValueError, match=r"argument --json: /proc/r\.json cannot be written"):
        output_path("/proc/r.json", "--json")
    output_path(str(tmp_path / "new.json"), "--json")
    kept = tmp_path / "old.json"
    kept.write_text("kept")
    output_path(str(kept), "--report")
    assert [p.name for p in tmp_path.iterdir()] == ["old.json"] and kept.read_text() == "kept"


@pytest.mark.skipif(not os.path.isdir("/proc/self"), reason="needs Linux's /proc")
def test_a_write_failing_after_the_run_is_an_error_naming_the_flag():
    from scancheck.faces.cli.check import write_json

    with pytest.raises(ValueError, match=r"argument --json: /proc/r\.json cannot be written"):
        write_json("/proc/r.json", [])


def test_spec_flags_with_the_negative_controls_exit_2(capsys):
    assert main(["check", "--controls", "--op", "max", "--no-deterministic"]) == 2
    err = capsys.readouterr().err
    assert "argument --controls: spec flags apply to TARGETs" in err
    assert "(--op, --deterministic given)" in err


def test_targets_beside_the_negative_controls_are_refused_not_left_unchecked(capsys):
    assert main(["check", "--controls", "numpy.cumsum"]) == 2
    err = capsys.readouterr().err
    assert "argument --controls: it runs the negative controls alone (numpy.cumsum given)" in err
    assert "give --repeat N to check both" in err and err.count("\n") == 1


def test_an_unsafe_lock_directory_exits_2_not_a_traceback(capsys, monkeypatch):
    import scancheck.isolation.parent
    from scancheck.core.locks import LockRefused

    def refused(*args, **kwargs):
        raise LockRefused("/tmp/scancheck-locks-1 belongs to uid 0 with mode 777; it must be "
                          "this user's own directory, mode 700")

    monkeypatch.setattr(scancheck.isolation.parent, "check_isolated", refused)
    assert main(["check", "numpy.cumsum", "--quick"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("scancheck check: error: /tmp/scancheck-locks-1 belongs to uid 0")


def test_a_kernel_that_cannot_run_here_is_named_as_typed(capsys):
    from scancheck.core.devices import gpu_available

    if gpu_available()[0]:
        pytest.skip("a GPU is here: the kernel can run")
    assert main(["check", "kernel:blelloch", "--quick", "--budget", "1"]) == 2
    assert "target 'kernel:blelloch' (scancheck:blelloch) cannot run here" in \
        capsys.readouterr().err


def test_device_gpu_where_cupy_or_a_gpu_is_missing_exits_2(capsys):
    from scancheck.core.devices import gpu_available

    if gpu_available()[0]:
        pytest.skip("a GPU is here: --device gpu can run")
    argv = ["check", "numpy.cumsum", "--device", "gpu", "--quick", "--budget", "2",
            "--max-n", "64"]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert "target 'numpy.cumsum' cannot run here:" in err and "device='gpu'" in err
    assert "logic error" not in err and err.count("\n") == 1, err


def test_a_built_in_target_that_cannot_run_here_is_named_before_any_check(capsys,
                                                                          monkeypatch):
    """A long multi-target run is not spent to learn that one target's library is missing."""
    import scancheck.isolation.parent
    from scancheck.adapters import builtin_targets

    unrun = [name for name, t in builtin_targets().items() if t.unavailable]
    if not unrun:
        pytest.skip("every built-in target can run on this machine")

    def never(*args, **kwargs):
        raise AssertionError("a check started")

    monkeypatch.setattr(scancheck.isolation.parent, "check_isolated", never)
    assert main(["check", "numpy.cumsum", unrun[0], "--quick"]) == 2
    err = capsys.readouterr().err
    assert f"{unrun[0]!r} ({builtin_targets()[unrun[0]].unavailable})" in err
    assert "nothing was checked" in err


def test_a_target_found_unable_to_run_keeps_the_other_reports(capsys, monkeypatch):
    """A target whose child finds it cannot run is named at the end (exit 2); the targets
    checked beside it keep their reports."""
    import scancheck.isolation.parent

    real = scancheck.isolation.parent.check_isolated

    def check(name, options, **kwargs):
        if name == "gone.py:f":
            raise scancheck.isolation.parent.EnvironmentProblem(
                "target 'gone.py:f' cannot run here: cupy is not installed")
        return real(name, options, **kwargs)

    monkeypatch.setattr(scancheck.isolation.parent, "check_isolated", check)
    argv = ["check", "gone.py:f", "numpy.cumsum", "--quick", "--budget", "3", "--max-n", "64",
            "--jobs", "2"]
    assert main(argv) == 2
    out, err = capsys.readouterr()
    assert "numpy.cumsum" in out and "conforms" in out
    assert err.strip().endswith("target 'gone.py:f' cannot run here: cupy is not installed")


def test_a_file_target_needing_a_missing_library_cannot_run_here(tmp_path, capsys):
    """A user's module importing an optional library this machine lacks, or declaring a GPU
    scan where there is none, is the machine's problem; a typo in an import is the user's:
    each named, exit 2, the other target's report kept."""
    import importlib.util

    from scancheck.core.devices import gpu_available

    if importlib.util.find_spec("polars") is not None:
        pytest.skip("polars is installed here: no optional library to miss")
    lacking = tmp_path / "lacking.py"
    lacking.write_text("import polars\n\ndef scan(x):\n    return x\n")
    typo = tmp_path / "typo.py"
    typo.write_text("import nump\n\ndef scan(x):\n    return x\n")
    gpu = tmp_path / "gpu_scan.py"
    gpu.write_text("import numpy as np\nfrom scancheck.targets.spec import TargetSpec\n\n"
                   "def scan(x):\n    return np.cumsum(x, dtype=x.dtype)\n\n"
                   "scan.scan_spec = TargetSpec(device='gpu')\n")
    targets = [f"{lacking}:scan", "numpy.cumsum", f"{typo}:scan"]
    if not gpu_available()[0]:
        targets.append(f"{gpu}:scan")
    argv = ["check", *targets, "--quick", "--budget", "3", "--max-n", "64", "--jobs", "2"]
    assert main(argv) == 2
    out, err = capsys.readouterr()
    assert "numpy.cumsum" in out and "conforms" in out
    assert "imports polars, which is not installed" in err
    # A module no scan target needs as a library is the user's to mend, not the machine's.
    assert ("typo.py cannot be imported (ModuleNotFoundError at line 1 of typo.py: No module "
            "named 'nump')") in err
    if len(targets) == 4:
        assert f"target '{gpu}:scan' cannot run here" in err and "device='gpu'" in err


def test_check_hands_the_named_fields_alone_to_every_target(capsys, monkeypatch):
    import scancheck.isolation.parent

    seen = []

    def record(name, options, **kwargs):
        seen.append((name, options.spec, dict(options.overrides)))
        raise scancheck.isolation.parent.UsageError("stop here")

    monkeypatch.setattr(scancheck.isolation.parent, "check_isolated", record)
    assert main(["check", "a.py:f", "numpy.cumsum", "--dtypes", "float32", "--quick"]) == 2
    assert sorted(seen) == [("a.py:f", None, {"dtypes": ("float32",)}),
                            ("numpy.cumsum", None, {"dtypes": ("float32",)})]


def test_a_file_target_declared_segmented_on_the_command_line_is_checked_per_segment(
        tmp_path, capsys):
    """--segments offsets: the file's plain function is called as fn(x, offsets) in a
    child; a scan that ignores the offsets fails naming a segment, one that reads them
    conforms."""
    (tmp_path / "segscan.py").write_text(
        "import numpy as np\n"
        "def right(x, offsets):\n"
        "    out = np.empty_like(x)\n"
        "    for a, b in zip(offsets[:-1], offsets[1:]):\n"
        "        out[a:b] = np.cumsum(x[a:b], dtype=x.dtype)\n"
        "    return out\n"
        "def whole(x, offsets):\n"
        "    return np.cumsum(x, dtype=x.dtype)\n")
    common = ["--segments", "offsets", "--dtypes", "int32", "--budget", "1", "--max-n", "256"]
    assert main(["check", f"{tmp_path / 'segscan.py'}:right", *common]) == 0
    capsys.readouterr()
    assert main(["check", f"{tmp_path / 'segscan.py'}:whole", *common]) == 1
    out = capsys.readouterr().out
    assert "logic error: segment" in out, out


# -- help --------------------------------------------------------------------------------

def test_check_help_lists_the_builtin_targets_and_every_help_fits_100_columns(capsys,
                                                                             monkeypatch):
    from collections import Counter

    from scancheck.adapters import all_rows
    from scancheck.faces.cli.main import build_parser

    monkeypatch.setenv("COLUMNS", "200")
    parser = build_parser()
    commands = parser._subparsers._group_actions[0].choices
    for name, command in [("scancheck", parser), *commands.items()]:
        text = command.format_help()
        wide = [ln for ln in text.splitlines() if len(ln) > 100]
        assert not wide, f"{name} --help: {wide}"
    text = commands["check"].format_help()
    rows = all_rows()
    assert all(r.name in text for r in rows if not r.lacking() and not r.refused)
    # The rest counted by what each lacks (a target lacking two is counted under both).
    lacked = Counter(what for r in rows for what in r.lacking())
    assert all(f"{what} ({count})" in " ".join(text.split()) for what, count in lacked.items())
    assert "--accepts-max-n" in text and "not --max-n" in text


@pytest.mark.parametrize("argv, message", [
    (["--op", "nomod_zz:M"], "argument --op: op='nomod_zz:M' cannot be loaded"),
    (["--op", "scancheck.core.monoids:PROBES"], "is a dict, not a scancheck.Monoid"),
    (["--op", "sum"], "argument --op: invalid choice: 'sum'"),
    (["--reverse=backwards"], "argument --reverse: invalid choice: 'backwards'"),
    (["--combine", "--op", "max"], "combine=True with op='max'"),
    (["--combine", "--reverse"], "declare the convention"),
])
def test_bad_monoid_flags_exit_2_naming_the_flag(argv, message, capsys):
    try:  # argparse's own refusals exit; the spec's are returned
        status = main(["check", "sequential (generic)", "--budget", "1", *argv])
    except SystemExit as exc:
        status = exc.code
    assert status == 2
    assert message in capsys.readouterr().err


def test_a_generic_scan_is_checked_under_the_probes_from_the_command_line(capsys):
    status = main(["check", "scancheck.controls.tuples:combines_later_first", "--budget", "1"])
    out = capsys.readouterr().out
    assert status == 1 and "operand order" in out and "probe monoids" in out
    # Declared the other way round, the flag replaces only that field and the target conforms
    # to none of the reverse conventions either.
    assert main(["check", "--reverse", "suffix", "sequential (generic)", "--budget", "1"]) == 1
    assert "the target scans forward" in capsys.readouterr().out
    # A bare --reverse takes no target as its value.
    assert main(["check", "--reverse", "sequential (generic)", "--budget", "1"]) == 2
    assert "declare the convention" in capsys.readouterr().err


def test_a_users_monoid_is_named_by_op_module_attr(capsys):
    status = main(["check", "scancheck.controls.tuples:fold_of_the_declared_monoid",
                   "--op", "scancheck.controls.tuples:ONLINE_SOFTMAX_FORGETTING_A_RESCALE",
                   "--budget", "1"])
    assert status == 1
    assert "operator is no monoid" in capsys.readouterr().out


_USER_MONOID_FILE = (
    "import numpy as np\n"
    "from scancheck import Monoid, TargetSpec\n"
    "def _affine(a, b):\n"
    "    return (b[0] * a[0], b[0] * a[1] + b[1])\n"
    "AFFINE = Monoid(_affine, (np.uint32(1), np.uint32(0)), name='my affine')\n"
    "def _fold(elems, combine):\n"
    "    acc = tuple(v[:1].copy() for v in elems)\n"
    "    out = [acc]\n"
    "    for k in range(1, len(elems[0])):\n"
    "        acc = combine(acc, tuple(v[k:k + 1] for v in elems))\n"
    "        out.append(acc)\n"
    "    return tuple(np.concatenate([o[i] for o in out]) if out[0][0].size else v\n"
    "                 for i, v in enumerate(elems))\n"
    "def right(elems):\n"
    "    return _fold(elems, _affine)\n"
    "def plain(elems):\n"
    "    return _fold(elems, _affine)\n"
    "def swapped(elems):\n"
    "    return _fold(elems, lambda a, b: _affine(b, a))\n"
    "def _made_inside():\n"
    "    return Monoid(lambda a, b: (a[0] + b[0],), (np.int64(0),), name='made inside')\n"
    "def unnamed(elems):\n"
    "    return (np.cumsum(elems[0]),)\n"
    "right.scan_spec = swapped.scan_spec = TargetSpec(op=AFFINE)\n"
    "unnamed.scan_spec = TargetSpec(op=_made_inside())\n")


def test_a_file_targets_scan_spec_may_hold_a_users_monoid_object(tmp_path, capsys):
    """scan_spec = TargetSpec(op=MyMonoid) in a file: the child names the monoid by its file
    and attribute, the parent loads it back; a right fold conforms, a fold that combines
    (b, a) fails with that diagnosis, and a monoid no module holds is refused naming op."""
    (tmp_path / "mono.py").write_text(_USER_MONOID_FILE)
    common = ["--budget", "1", "--max-n", "64"]
    assert main(["check", f"{tmp_path / 'mono.py'}:right", *common]) == 0, capsys.readouterr()
    out = capsys.readouterr().out
    assert "monoid scan             pass" in out and "operator laws           pass" in out, out
    assert main(["check", f"{tmp_path / 'mono.py'}:swapped", *common]) == 1
    out = capsys.readouterr().out
    assert "logic error: my affine" in out and "operand order" in out, out
    assert main(["check", f"{tmp_path / 'mono.py'}:unnamed", *common]) == 2
    err = capsys.readouterr().err
    assert "op=Monoid('made inside'" in err and "cannot be rebuilt" in err, err


def test_op_names_a_monoid_in_a_python_file(tmp_path, capsys):
    """--op path/to/file.py:ATTR loads the monoid from that file, as module:ATTR does; a
    file that is not there is refused naming the flag."""
    (tmp_path / "mono.py").write_text(_USER_MONOID_FILE)
    assert main(["check", f"{tmp_path / 'mono.py'}:plain", "--op", f"{tmp_path / 'mono.py'}:AFFINE",
                 "--budget", "1", "--max-n", "64"]) == 0, capsys.readouterr()
    assert "monoid scan             pass" in capsys.readouterr().out
    with pytest.raises(SystemExit) as exc:
        main(["check", f"{tmp_path / 'mono.py'}:plain", "--op", f"{tmp_path / 'no.py'}:AFFINE"])
    assert exc.value.code == 2
    assert "argument --op" in capsys.readouterr().err


def test_op_names_a_monoid_of_the_working_directory_as_a_target_would(tmp_path, capsys,
                                                                     monkeypatch):
    """module:ATTR finds a module of the working directory for --op as for the TARGET; an
    attribute missing is told by the name given, not by the name the file was loaded under."""
    (tmp_path / "mono.py").write_text(_USER_MONOID_FILE)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(sys, "path", list(sys.path))
    monkeypatch.delitem(sys.modules, "mono", raising=False)
    assert main(["check", "mono:plain", "--op", "mono:AFFINE", "--budget", "1",
                 "--max-n", "64"]) == 0, capsys.readouterr()
    with pytest.raises(SystemExit) as exc:
        main(["check", "mono:plain", "--op", "mono.py:NOPE"])
    err = capsys.readouterr().err
    assert exc.value.code == 2 and "mono.py has no attribute 'NOPE'" in err, err
    assert "_scancheck_file_" not in err


def test_an_op_module_failing_at_import_is_a_usage_error(tmp_path, capsys, monkeypatch):
    (tmp_path / "badmono.py").write_text("import numpy as np\n\nnp.not_there\n")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(sys, "path", list(sys.path))
    monkeypatch.delitem(sys.modules, "badmono", raising=False)
    with pytest.raises(SystemExit) as exc:
        main(["check", "numpy.cumsum", "--op", "badmono:M"])
    err = capsys.readouterr().err
    assert exc.value.code == 2 and "op='badmono:M' cannot be loaded" in err, err


def test_a_module_target_beside_a_file_of_its_bare_name_loads(tmp_path, capsys, monkeypatch):
    """A built program `prefix` beside prefix.py: the module is what prefix:scan names."""
    (tmp_path / "prefix.py").write_text("import numpy as np\n\ndef scan(x):\n"
                                        "    return np.cumsum(x, dtype=x.dtype)\n")
    (tmp_path / "prefix").write_bytes(b"\x7fELF")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(sys, "path", list(sys.path))
    monkeypatch.delitem(sys.modules, "prefix", raising=False)
    assert main(["check", "prefix:scan", "--quick", "--budget", "1", "--max-n", "64"]) == 0, \
        capsys.readouterr()


def test_a_budget_that_runs_out_exits_3_saying_how_far_every_property_got(capsys):
    """--budget bounds the whole check: a right but slow target is "slow" with the n every
    property reached (no "conforms" past it), exit status 3, in about its seconds."""
    import time

    t0 = time.time()
    status = main(["check", "scancheck.testing:slow_scan", "--budget", "3", "--quick",
                   "--dtypes", "int64", "float64"])
    took = time.time() - t0
    out = capsys.readouterr().out
    assert status == 3 and "verdict: slow - no failure up to n = " in out, out
    assert "conforms" not in out.split("summary")[-1]
    rows = out[out.index("property"):out.index("verdict:")].splitlines()
    assert any(line.split()[2:3] == ["slow"] or " slow " in line for line in rows)
    assert took < 3 + 10  # its seconds, the children's start-up on a loaded 2-core machine
    # The header and the summary give one largest n: every property's reach.
    header = re.search(r"largest n checked ([\d,]+)\)", out)[1]
    summary = out.split("summary")[-1].splitlines()[3].split()[2]
    told = re.search(r"no failure up to n = ([\d,]+)", out)[1]
    assert header == summary == told, out


def test_what_a_passing_check_found_is_shown_whole_beside_the_verdict(capsys):
    """numpy.cumsum of float16 rounds its partial sums to float16: the table's detail column
    cuts that short, the lines under the verdict show it whole."""
    assert main(["check", "numpy.cumsum", "--dtypes", "float16", "--budget", "2", "--quick",
                 "--max-n", "4096"]) == 0
    out = capsys.readouterr().out
    flat = " ".join(out.split("found beside the verdict:")[1].split("time:")[0].split())
    assert re.fullmatch(r"- accumulation float16: some partial sums rounded to float16 "
                        r"\(\d+ of 1023 outputs not correctly rounded\)", flat), flat


def test_a_target_that_could_not_be_checked_outranks_an_unfinished_one(tmp_path, capsys):
    """Exit 2, not 3, where one target could not be checked and the other ran out of budget
    (no budget would check the first); the JSON names the target not checked, and why."""
    report = tmp_path / "out.json"
    argv = ["check", "numpy.cumsum", "nosuch.module:fn", "--quick", "--budget", "0.05",
            "--jobs", "2", "--json", str(report)]
    assert main(argv) == 2
    records = json.loads(report.read_text())
    assert [r["target"] for r in records] == ["numpy.cumsum", "nosuch.module:fn"]
    assert "cannot be imported" in records[1]["not checked"]
    # The summary has a row for every target named, the one not checked said to be so.
    summary = capsys.readouterr().out.split("\nsummary\n")[1].splitlines()
    rows = {line.split()[0]: line for line in summary[2:4]}
    assert list(rows) == ["numpy.cumsum", "nosuch.module:fn"]
    assert "not checked" in rows["nosuch.module:fn"]


# -- what the command line says of itself and of its own misuse --------------------------

def _commands():
    from scancheck.faces.cli.main import build_parser

    parser = build_parser()
    return parser, parser._subparsers._group_actions[0].choices


def test_the_advice_of_an_unfinished_check_names_only_flags_each_command_showing_it_takes():
    """A check whose budget ran out advises more --budget or a smaller --max-n: check, hunt
    and matrix each show that summary, and each takes every flag it names."""
    from scancheck.engine.diagnosis import PropertyResult
    from scancheck.engine.report import ConformanceReport

    rep = ConformanceReport("t", {}, [PropertyResult("integers exact", "partial", "...",
                                                     detail={"largest n": 299})])
    named = set(re.findall(r"(?<![\w-])--[a-z][a-z-]*", rep.summary))
    assert "--max-n" in named, rep.summary
    _, commands = _commands()
    for name in ("check", "hunt", "matrix"):
        takes = {s for a in commands[name]._actions for s in a.option_strings}
        assert named <= takes, f"scancheck {name} lacks {named - takes}: {rep.summary}"


def test_version_prints_the_installed_version_and_exits_0():
    import importlib.metadata

    out = subprocess.run([sys.executable, "-m", "scancheck", "--version"],
                         capture_output=True, text=True)
    assert (out.returncode, out.stderr) == (0, "")
    assert out.stdout == f"scancheck {importlib.metadata.version('scancheck')}\n"


def test_every_help_is_plain_text_without_rest_markup(monkeypatch):
    """The module docstring the main help shows is reST (for the guide): ``x`` and :role:`x`
    are shown as their text."""
    monkeypatch.setenv("COLUMNS", "100")
    parser, commands = _commands()
    for name, command in [("scancheck", parser), *commands.items()]:
        text = command.format_help()
        assert "``" not in text and not re.search(r":[a-z]+:`", text), f"{name} --help:\n{text}"
    assert "scancheck: the command line." in parser.format_help()


@pytest.mark.parametrize("word", ["sideways", "true", "flip,suffix"])
def test_a_word_after_reverse_that_is_no_target_is_told_as_its_bad_value(word, capsys):
    """A bare --reverse takes the next word as a target; where that word is left over (the
    targets came first), it was meant as a convention: told so, naming those there are."""
    assert main(["check", "numpy.cumsum", "--reverse", word]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1, err
    assert err.startswith(f"scancheck check: error: argument --reverse: invalid choice: {word!r}")
    assert "'flip'" in err and "'suffix'" in err and "--reverse alone" in err


@pytest.mark.parametrize("argv, left", [
    (["check", "--bogus", "numpy.cumsum"], "--bogus"), (["verify", "--bogus"], "--bogus"),
    (["verify", "numpy.cumsum"], "numpy.cumsum")])
def test_other_words_left_over_are_unrecognized_by_the_subcommand(argv, left, capsys):
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err == f"scancheck {argv[0]}: error: unrecognized arguments: {left}\n", err


def test_targets_after_the_options_are_checked_as_those_before(capsys):
    argv = ["check", "numpy.cumsum", "--budget", "1", "--max-n", "64", "numpy.cumprod"]
    assert main(argv) == 0
    out = capsys.readouterr().out
    assert re.search(r"^numpy\.cumsum +conforms", out, re.M), out
    assert re.search(r"^numpy\.cumprod +conforms", out, re.M), out
    # A word left after a convention is a target like any other: told as one not found.
    assert main(["check", "numpy.cumsum", "--reverse", "flip", "sideways"]) == 2
    assert "target 'sideways' is none of a built-in" in capsys.readouterr().err


@pytest.mark.parametrize("flag, value, looks", [
    ("--dtypes", "float32", "rev.py:rcumsum"),
    ("--dtypes", "float32", "rev.py"),
    ("--dtypes", "int8", "numpy.cumsum"),
    ("--sanitize", "racecheck", "scan.cu"),
    ("--dtypes", "float32", "EXISTING"),
])
def test_a_target_taken_for_a_value_of_a_multi_value_flag_is_told_where_to_go(
        flag, value, looks, capsys, tmp_path):
    if looks == "EXISTING":
        looks = str(tmp_path / "scans")
        (tmp_path / "scans").write_text("")
    with pytest.raises(SystemExit) as exc:
        main(["check", flag, value, looks])
    err = capsys.readouterr().err
    assert exc.value.code == 2 and err.count("\n") == 1, err
    assert f"argument {flag}: invalid choice: {looks!r}" in err
    assert f"{looks!r} looks like a TARGET: put TARGET first, or end {flag}'s values with --" in err
    # Both ways the hint gives are ones the parser takes.
    from scancheck.faces.cli.main import build_parser

    for argv in (["check", looks, flag, value], ["check", flag, value, "--", looks]):
        args = build_parser().parse_args(argv)
        assert args.targets == [looks] and value in getattr(args, "spec_dtypes", args.sanitize)


@pytest.mark.parametrize("flag, refusal, more", [
    ("--ndim", "is not a positive integer", ", or end --ndim's values with --"),
    ("--promote", "must be IN:OUT, as bool:int64", ", or end --promote's values with --"),
    ("--accumulates", "must be IN:ACC, as float32:float64", ", or end --accumulates's values with --"),
    ("--budget", "is not a positive, finite number", ""),
])
def test_a_target_taken_for_a_flags_value_of_another_type_is_told_where_to_go(
        flag, refusal, more, capsys):
    """The flags whose values are typed (numbers, IN:OUT pairs) give the same hint as those
    of choices: `check --ndim numpy.cumsum` was numpy.cumsum refused as a count."""
    with pytest.raises(SystemExit) as exc:
        main(["check", flag, "numpy.cumsum"])
    err = capsys.readouterr().err
    assert exc.value.code == 2 and err.count("\n") == 1, err
    assert err.endswith(f"argument {flag}: 'numpy.cumsum' {refusal}; 'numpy.cumsum' looks like "
                        f"a TARGET: put TARGET first{more}\n"), err


@pytest.mark.parametrize("argv", [
    ["check", "numpy.cumsum", "--promote", "bool:int65"],  # the flag's own form, a bad dtype
    ["check", "numpy.cumsum", "--ndim", "two"],
])
def test_a_bad_typed_value_that_is_no_misplaced_target_gets_no_hint(argv, capsys):
    with pytest.raises(SystemExit):
        main(argv)
    err = capsys.readouterr().err
    assert argv[-2] in err and "TARGET" not in err, err


@pytest.mark.parametrize("argv", [
    ["check", "numpy.cumsum", "--dtypes", "float128"],   # no target
    ["bench", "--dtypes", "rev.py:rcumsum"],             # a command that takes none
    ["check", "numpy.cumsum", "--device", "rev.py:f"],   # a flag of one value
])
def test_a_bad_value_that_is_no_misplaced_target_gets_no_hint(argv, capsys):
    with pytest.raises(SystemExit):
        main(argv)
    err = capsys.readouterr().err
    assert "invalid choice" in err and "TARGET" not in err, err


def test_explain_of_values_the_dtype_cannot_hold_is_one_error_line_without_a_warning(
        tmp_path, capsys):
    import warnings

    (tmp_path / "x.txt").write_text("1, nan, 3\n")
    (tmp_path / "r.txt").write_text("1, 3, 4\n")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert main(["explain", str(tmp_path / "x.txt"), str(tmp_path / "r.txt"),
                     "--dtype", "int32"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "int32 changes some of its values (nan to " in err, err


@pytest.mark.parametrize("argv, by", [
    (["numpy.cumsum", "--repeat", "2"], "--repeat"),
    (["--controls", "--only", "sums"], "--only"),
    (["--controls"], "--controls"),
])
def test_report_with_a_mode_that_writes_none_is_refused_not_ignored(argv, by, capsys, tmp_path):
    """--report beside --repeat, --only or --controls: those modes print stabilities or
    catches and write no Markdown report; saying so beats an asked-for file that never
    appears."""
    report = tmp_path / "r.md"
    assert main(["check", *argv, "--report", str(report), "--budget", "1"]) == 2
    err = capsys.readouterr().err
    assert err == (f"scancheck check: error: argument --report: {by} writes no report (a report "
                   f"is of TARGETs checked once); leave --report out, or take --json\n"), err
    assert not report.exists()


def test_the_summary_shows_long_target_names_whole_within_100_columns(capsys, tmp_path):
    """Two targets whose names differ only at their ends (48 characters) are told apart in
    the summary, its lines within 100 columns, a failure's diagnosis cut to fit."""
    (tmp_path / "longnames.py").write_text(
        "import numpy as np\n\n\ndef wrong_above_1000_elements_variant_a(x):\n"
        "    return np.cumsum(x, dtype=x.dtype)\n\n\n"
        "def wrong_above_1000_elements_variant_b(x):\n"
        "    return np.r_[x[:0], np.cumsum(x, dtype=x.dtype)[:-1] * 0 + 1]\n")
    names = [f"{tmp_path / 'longnames.py'}:wrong_above_1000_elements_variant_{v}" for v in "ab"]
    assert main(["check", *names, "--quick", "--budget", "1", "--max-n", "64"]) == 1
    out = capsys.readouterr().out
    summary = out[out.index("\nsummary"):].splitlines()[1:]
    assert all(len(line) <= 100 for line in summary), summary
    tails = [n[-40:] for n in names]  # each row shows its name's end whole
    assert [sum(t in line for line in summary) for t in tails] == [1, 1], summary


def test_the_primary_causes_smallest_case_is_printed_whole(capsys):
    """The table's column cuts a case short: the line under the causes gives the primary
    one's whole, with the element it got wrong and the value it should have held."""
    assert main(["check", "scancheck.controls.sums:off_by_one_at_block_boundaries", "--budget",
                 "2", "--max-n", "256", "--dtypes", "int32"]) == 1
    out = capsys.readouterr().out
    text = out[out.index("smallest case (cause 1): "):out.index("\ntime: ")]
    line = " ".join(text.split())
    case = dict(kv.split("=") for kv in line.split(": ", 1)[1].split(" (")[0].split(", "))
    assert {"n", "dtype", "data", "seed", "index", "got", "expected"} <= case.keys(), line
    assert int(case["n"]) >= 65 and case["dtype"] == "int32" and case["got"] != case["expected"]
    assert "(--report FILE.md writes a script that rebuilds it)" in line


def test_the_smallest_case_names_the_report_that_rebuilds_it_where_one_is_written(capsys,
                                                                                  tmp_path):
    report = tmp_path / "r.md"
    assert main(["check", "scancheck.controls.sums:off_by_one_at_block_boundaries", "--budget",
                 "2", "--max-n", "256", "--dtypes", "int32", "--report", str(report)]) == 1
    out = capsys.readouterr().out
    line = " ".join(out[out.index("smallest case (cause 1): "):out.index("\ntime: ")].split())
    assert f"({report} holds a script that rebuilds it)" in line and "FILE.md" not in line
    assert "python" in report.read_text()


def test_the_controls_score_names_what_it_left_out_and_a_miss_its_verdict(capsys, monkeypatch):
    """A 'control' that is a right scan is missed: its row says what the check found
    (conforms), the score line counts it, says how many GPU controls did not run, and that
    a budget below check's default was given."""
    import scancheck.controls as controls
    from scancheck.core.devices import gpu_available

    if gpu_available()[0]:
        pytest.skip("counts the controls a machine without a GPU leaves out")
    right = controls.Control("a right sum", "numpy.cumsum", Cause.LOGIC, "logic error", "-")
    caught = next(c for c in controls.CONTROLS if c.name == "max declared a sum")
    gpu = next(c for c in controls.CONTROLS if c.gpu)
    monkeypatch.setattr(controls, "CONTROLS", (right, caught, gpu))
    assert main(["check", "--controls", "--budget", "1", "--max-n", "64"]) == 1
    out = capsys.readouterr().out
    row = next(ln for ln in out.splitlines() if ln.startswith("a right sum  "))
    assert "conforms" in row and row.rstrip().endswith("NO"), row
    # A caught control's diagnosis is shown about the words it was expected to hold.
    row = next(ln for ln in out.splitlines() if ln.startswith("max declared a sum  "))
    assert row.count("declare --op max") == 2 and row.rstrip().endswith("yes"), row
    assert ("score: 1 of 2 negative controls caught with the right diagnosis (1 not run: no GPU)"
            in out), out
    assert "(at --budget 1, below check's default of 30 s at which the controls are scored" in \
        " ".join(out.split()), out


def test_every_option_of_every_command_says_what_it_does():
    """`scancheck COMMAND --help` describes each argument: none is a bare name."""
    import argparse

    from scancheck.faces.cli.main import build_parser

    (sub,) = [a for a in build_parser()._actions if isinstance(a, argparse._SubParsersAction)]
    bare = [f"{name} {a.option_strings or a.dest}" for name, command in sub.choices.items()
            for a in command._actions if not a.help and not isinstance(a, argparse._HelpAction)]
    assert not bare, bare


def test_a_known_bug_is_told_on_its_targets_line_as_the_target_ends(monkeypatch, capsys):
    """A long check tells a known bug as soon as its target's check ends, ahead of the
    diagnosis (which the line cuts), not only in the reports printed once all have ended."""
    from types import SimpleNamespace

    import scancheck.adapters as adapters
    from scancheck.adapters.known import KnownBug, Symptom
    from scancheck.engine.diagnosis import PropertyResult
    from scancheck.faces.cli.check import each

    bug = KnownBug("up/stream#1", "https://example.invalid/1", "a scan is wrong", "numpy",
                   ("numpy",), "1.0", None, ("numpy.cumsum",),
                   (Symptom("probe monoids", Cause.LOGIC),), "open", "docs/findings/x.py")
    monkeypatch.setattr(adapters, "known_for", lambda name: [bug] if name == "numpy.cumsum" else [])
    failed = PropertyResult("probe monoids", "fail", "wrong at output 3", smallest_case={"n": 9},
                            cause="LOGIC")
    other = PropertyResult("indices", "fail", "wrong index", smallest_case={"n": 2},
                           cause="LOGIC")
    reports = {name: SimpleNamespace(target=name.split()[0], passed=False, seconds=1.0,
                                     results=results, summary="logic error: wrong at output 3")
               for name, results in (("numpy.cumsum", [failed]), ("numpy.cumsum new", [
                   failed, other]), ("numpy.cumprod", [failed]))}
    each(list(reports), reports.get, 1)
    out = capsys.readouterr().out.splitlines()
    assert out[0].endswith("numpy.cumsum (1 s): known (up/stream#1): logic error: wrong at "
                           "output 3")
    # A failure no known bug explains is not hidden behind one that does.
    assert out[1].endswith("numpy.cumsum (1 s): new beside known (up/stream#1): logic error: "
                           "wrong at output 3")
    assert out[2].endswith("numpy.cumprod (1 s): logic error: wrong at output 3")


def test_an_output_whose_folder_is_a_file_is_told_so(tmp_path, capsys):
    afile = tmp_path / "afile"
    afile.write_text("")
    assert main(["check", "numpy.cumsum", "--json", str(afile / "out.json")]) == 2
    err = capsys.readouterr().err
    assert f"argument --json: {afile / 'out.json'}: {afile} is a file, not a directory" in err


def test_each_line_told_as_a_check_ends_fits_the_tables_width(capsys):
    """A long target's line, a long diagnosis's and a long error's are cut at a word's end
    with an ellipsis, to fit a terminal (the reports and errors come whole later)."""
    from types import SimpleNamespace

    from scancheck.faces.cli.check import each
    from scancheck.faces.tables import LINE_WIDTH
    from scancheck.isolation.parent import UsageError

    long = "/a/folder/" + "deep/" * 12 + "scans.py:fn"
    rep = SimpleNamespace(target=long, seconds=3.0, passed=False, findings=[],
                          summary="logic error: " + "output 7 differs from the exact scan " * 5)
    each([0, 1], lambda k: rep if k == 0 else UsageError(f"target {long!r}: " + "why " * 60), 1)
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == 2 and all(len(line) <= LINE_WIDTH for line in lines)
    assert all(line.endswith(" …") for line in lines)
