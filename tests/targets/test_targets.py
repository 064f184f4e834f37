"""Target resolution, specs and their errors."""

from __future__ import annotations

import re
import sys
from dataclasses import replace

import numpy as np
import pytest

from scancheck.adapters import builtin_targets
from scancheck.core.cuda import KERNEL_DIR
from scancheck.targets.resolve import load_import_path, resolve
from scancheck.targets.spec import TargetSpec
from scancheck.targets.target import Target


def test_builtins_include_the_libraries_and_scanchecks_own_kernels():
    names = set(builtin_targets())
    assert {"numpy.cumsum", "cupy.cumsum (CUB)", "torch.cumsum (CUDA)",
            "jax.lax.associative_scan", "scancheck:decoupled_lookback",
            "model:decoupled_lookback"} <= names


def test_import_path_takes_the_functions_declared_spec():
    t = load_import_path("scancheck.controls.declared:nan_dropping_max")
    assert t.spec.op == "max" and t.spec.dtypes == ("float32", "float64")
    np.testing.assert_array_equal(t(np.array([1.0, 3.0, 2.0])), [1.0, 3.0, 3.0])


def test_model_target_runs_the_model():
    t = resolve("model:blelloch")
    assert not t.spec.inclusive
    assert t(np.arange(1, 5, dtype=np.int32)).tolist() == [0, 1, 3, 6]


_CONTROL = KERNEL_DIR / "controls" / "missing_barrier.cu"


def test_a_float_rule_given_where_no_float_is_checked_is_refused():
    """A flag no input could trigger would pass unread; a library's own rule stays where its
    dtypes are narrowed to integers (the matrix's integer cells)."""
    from scancheck.targets.spec import with_overrides

    spec = TargetSpec(op="max", dtypes=("float32", "int32"), nans="ignore")
    assert with_overrides(spec, {"dtypes": ["int32"]}).nans == "ignore"
    for given in ({"nans": "skip", "dtypes": ["int32"]}, {"zeros": "ordered",
                                                         "dtypes": ["int8", "bool"]}):
        with pytest.raises(ValueError, match="declares what float inputs do"):
            with_overrides(spec, given)
    assert with_overrides(spec, {"nans": "skip", "dtypes": ["bfloat16"]}).nans == "skip"


@pytest.mark.parametrize(
    "call, message",
    [
        (lambda: resolve("nothing"), "is none of a built-in"),
        (lambda: resolve("/no/such/file.cu"), "is not a file"),
        (lambda: load_import_path("numpy"), "package.module:function"),
        (lambda: TargetSpec(op="interval"), "proof device"),
        (lambda: TargetSpec(dtypes=("complex64",)), "allowed dtypes"),
        (lambda: TargetSpec(device="tpu"), "device='tpu'"),
        (lambda: resolve(f"cu:{_CONTROL}:48"), "block=48 must be a power of two"),
        (lambda: resolve(f"cu:{_CONTROL}:2048"), "limit of 1024 threads"),
        (lambda: TargetSpec(initial=True, axis="arg"), "initial value is checked on forward"),
        (lambda: TargetSpec(dtypes=("bool",)), "in bool, \\+ and \\* are a logical or"),
        (lambda: TargetSpec(op="recurrence", dtypes=("bool",), promote=(("bool", "int64"),)),
         "allowed dtypes"),
        (lambda: TargetSpec(dtypes=("float8",)), "float8 unknown"),
        (lambda: TargetSpec(initial=True, reverse=True), "initial value is checked on forward"),
        (lambda: TargetSpec(op="max", indices=True, zeros="ordered"), "indices are checked"),
        (lambda: TargetSpec(op="min", indices=True, nans="ignore"), "indices are checked"),
    ],
)
def test_bad_targets_are_refused_with_a_reason(call, message):
    with pytest.raises(ValueError, match=message):
        call()


def test_dtypes_given_as_one_string_are_refused_with_the_tuple_meant():
    with pytest.raises(ValueError, match=r"dtypes='float32' must be a tuple of dtype names, "
                       r"as dtypes=\('float32',\)"):
        TargetSpec(dtypes="float32")


@pytest.mark.parametrize("field", ["inclusive", "deterministic", "allows_empty", "indices",
                                   "initial", "combine", "reverse"])
@pytest.mark.parametrize("value", ["no", "False", 0, 1, None, np.True_])
def test_a_flag_field_takes_a_bool_alone(field, value):
    """inclusive="no" is truthy: accepted, it would be checked (and told) as declared."""
    allowed = ("False, True, 'flip'" if field == "reverse" else "True or False")
    with pytest.raises(ValueError, match=rf"^{field}={re.escape(repr(value))}\W.*"
                       rf"{re.escape(allowed)}"):
        TargetSpec(**{field: value})
    assert getattr(TargetSpec(**{field: False}), field) is False


@pytest.mark.parametrize("value", ["big", 0, -3, True, 2.5])
def test_max_n_takes_none_or_a_positive_integer_alone(value):
    """A max_n the search cannot compare with n would fail the check as the target's fault."""
    with pytest.raises(ValueError, match=rf"^max_n={re.escape(repr(value))} must be None"):
        TargetSpec(max_n=value)
    assert TargetSpec(max_n=np.int64(7)).max_n == 7 and TargetSpec().max_n is None


def test_an_unknown_op_is_named_as_the_field_it_was_given_by():
    with pytest.raises(ValueError, match=r"^op='plus' is unknown; allowed: add, "):
        TargetSpec(op="plus")


def test_every_built_in_target_s_spec_declares_its_flags_as_bools():
    from scancheck.targets.spec import _BOOL_FIELDS

    for name, t in builtin_targets().items():
        assert all(type(getattr(t.spec, f)) is bool for f in _BOOL_FIELDS), name
        assert type(t.spec.reverse) is bool or t.spec.reverse in ("flip", "suffix"), name


@pytest.mark.parametrize("op", ["add", "mul", "logaddexp"])
def test_a_zero_order_is_declared_for_max_and_min_alone(op):
    with pytest.raises(ValueError, match=f"zeros='ordered' with op='{op}': a zero order"):
        TargetSpec(op=op, dtypes=("float32",), zeros="ordered")
    assert TargetSpec(op="max", zeros="ordered").zeros == "ordered"


def test_a_promotion_must_widen_and_name_known_dtypes():
    with pytest.raises(ValueError, match="no promotion"):
        TargetSpec(promote=(("int64", "int32"),))
    with pytest.raises(ValueError, match="no promotion"):
        TargetSpec(promote=(("int32", "float64"),))
    with pytest.raises(ValueError, match="promote="):
        TargetSpec(promote=(("int8", "complex64"),))
    assert TargetSpec(promote=(("int32", "int64"),)).output_dtype("int32") == "int64"
    assert TargetSpec().output_dtype("float16") == "float16"


def test_a_reverse_scan_is_checked_as_the_forward_scan_it_mirrors(budget):
    from scancheck.engine.conformance import check

    rev = TargetSpec(axis="arg", reverse=True, dtypes=("float32", "int32"))
    flipped = Target("reverse cumsum", lambda x, axis: np.flip(np.cumsum(
        np.flip(x, axis), axis=axis, dtype=x.dtype), axis), rev)
    assert check(flipped, ("integers exact", "floats within bound", "rows"),
                 budget=replace(budget, max_n=2**16)).passed
    def last_off(x):
        out = np.cumsum(x[::-1], dtype=x.dtype)[::-1].copy()
        out[1:][-1:] += 1  # from n = 2 on, its last output (x[n-1] alone) is 1 high
        return out
    rep = check(Target("reverse cumsum, last output off", last_off, TargetSpec(reverse=True)),
                properties=("integers exact",), budget=budget)
    case = rep.verdict.smallest_case
    # Reported in the target's own indices: output n-1 of a reverse scan is x[n-1] alone.
    assert not rep.passed and case["n"] == 2 and case["index"] == 1
    with pytest.raises(ValueError, match="reverse=True with op='recurrence'"):
        TargetSpec(op="recurrence", reverse=True)


@pytest.mark.parametrize("inclusive", [True, False])
@pytest.mark.parametrize("dtype", ["int32", "float64"])
def test_a_scan_from_an_initial_value_is_seen_as_the_scan_of_initial_then_data(inclusive, dtype):
    from scancheck.targets.target import seeded

    def from_initial(x, initial):
        full = np.cumsum(np.r_[np.asarray(initial, x.dtype), x], dtype=x.dtype)
        return full[1:] if inclusive else full[:-1]

    t = seeded(Target("t", from_initial, TargetSpec(inclusive=inclusive, initial=True)))
    assert t.spec.inclusive and not t.spec.initial
    y = np.array([5, 1, 2, 3, 4], dtype=dtype)
    np.testing.assert_array_equal(t(y), np.cumsum(y))
    assert t(y[:0]).shape == (0,)


def test_scans_from_an_initial_value_conform_and_one_that_drops_it_past_a_tile_does_not(budget):
    """itertools.accumulate from initial= conforms; a scan whose initial value reaches only
    its first tile fails, at the first output of the second tile, and conforms when given
    the identity: only the initial values the cases draw catch it."""
    from scancheck.controls.rows import initial_value_in_the_first_tile_only as first_tile
    from scancheck.engine.conformance import check

    # Whole checks of both, and of the control, are test_conformance's and test_controls'.
    small = replace(budget, max_n=2**12)
    for name in ("itertools.accumulate(initial=)", "itertools.accumulate(operator.mul, initial=)"):
        rep = check(resolve(name), ("integers exact", "floats within bound",
                                    "products within bound"), budget=small)
        assert rep.passed, rep.rows()
        assert any("initial value" in r.detail for r in rep.results if r.status == "pass")
    rep = check(resolve("scancheck.controls.rows:initial_value_in_the_first_tile_only"),
                ("integers exact",), budget=small)
    assert not rep.passed and rep.verdict.cause.name == "LOGIC"
    assert rep.verdict.smallest_case["index"] == 64  # the second tile's first output
    from_identity = Target("from 0", lambda x: first_tile(x, 0), TargetSpec(inclusive=False))
    assert check(from_identity, ("integers exact", "floats within bound"), budget=small).passed


def test_an_initial_value_scans_failure_names_one_output_in_its_own_terms(budget):
    """An inclusive scan from an initial value that adds it to output 0 alone: the smallest
    case and the 'steps' probe both name output 1, the first without it (the view the
    properties check counts the initial value as its output 0)."""
    from scancheck.engine.conformance import check

    def first_only(x, initial):
        out = np.cumsum(x, dtype=x.dtype)
        out[:1] += x.dtype.type(initial)
        return out

    t = Target("first only", first_only, TargetSpec(initial=True, dtypes=("float32",)))
    rep = check(t, ("floats within bound",), budget=replace(budget, max_n=2**10))
    assert rep.verdict.smallest_case["index"] == 1, rep.diagnosis
    assert "('steps' data, n=3, index 1)" in rep.diagnosis, rep.diagnosis


# -- the target is handed a copy, and a write into it is its own verdict ------------------


def _root(a):
    while isinstance(a.base, np.ndarray):
        a = a.base
    return a


def _offset(a):
    return a.__array_interface__["data"][0] - _root(a).__array_interface__["data"][0]


def test_a_target_is_handed_a_copy_in_the_layout_it_was_meant_to_get():
    """Every layout of the rows property (C, F, transposed, strided, reversed, offset, zero
    size) reaches the target with its strides and its offset into a buffer like its own,
    and whatever the target does to it, the caller's array stays as it was."""
    from scancheck.engine.cases import Case
    from scancheck.engine.layouts import LAYOUTS, batch

    seen = {}

    def scribbles(x, axis):
        seen.update(strides=x.strides, offset=_offset(x), root=_root(x).shape, at=x)
        out = np.cumsum(x, axis=axis, dtype=x.dtype)
        x[...] = 7
        return out

    t = Target("scribbles", scribbles, TargetSpec(axis="arg"))
    layouts = set()
    for seed in range(40):
        b = batch(Case(60, "float32", "integers", seed))
        before = b.x.copy()
        try:
            t(b.x, b.axis)
        except Exception as exc:
            assert b.x.size and "writes into its input" in str(exc)
        else:
            assert b.x.size == 0
        assert (b.x == before).all() and not np.shares_memory(seen["at"], b.x)
        assert seen["strides"] == b.x.strides, b.layout
        if b.x.size:
            assert seen["offset"] == _offset(b.x) and seen["root"] == _root(b.x).shape, b.layout
        layouts.add(b.layout)
    assert layouts == set(LAYOUTS)


def test_a_write_into_the_input_is_named_with_its_element_and_bits():
    from scancheck.targets.target import InputWritten

    x = np.arange(20, dtype=np.float32)
    x[17] = 3.0
    x[5] = -0.0
    x[9] = np.float32(np.nan)

    def run(fn, y=x, spec=None):
        try:
            Target("t", fn, spec or TargetSpec()).run(y)
        except InputWritten as exc:
            return str(exc), exc.where()
        return None

    def zero_from_17(a):
        a[17:] = 0
        return np.cumsum(a)

    def flip_zero_sign(a):
        a[5] = 0.0
        return np.cumsum(a)

    def quiet_payload(a):
        a.view(np.uint32)[9] ^= 1
        return np.cumsum(a)

    assert run(zero_from_17) == ("writes into its input: x[17] was 3.0, is 0.0 after the call",
                                 {"input index": 17, "was": "3.0", "is": "0.0"})
    assert run(flip_zero_sign)[0].endswith("x[5] was -0.0, is 0.0 after the call")
    assert "x[9] was nan (bits 0x7fc00000), is nan (bits 0x7fc00001)" in run(quiet_payload)[0]
    # An in-place scan writes into its input (no spec declares one); returning the input
    # untouched is no write.
    assert run(lambda a: np.cumsum(a, out=a))[0].endswith("x[2] was 2.0, is 3.0 after the call")
    assert run(lambda a: a if a.size == 1 else np.cumsum(a), x[:1]) is None
    grid = np.arange(12, dtype=np.int64).reshape(3, 4)[:, ::-1]

    def bump(a, axis):
        a[2, 1] += 1
        return np.cumsum(a, axis=axis)

    told, where = run(bump, grid, TargetSpec(axis="arg"))
    assert told.endswith("x[2, 1] was 10, is 11 after the call") and where["input index"] == [2, 1]
    assert x[17] == 3.0 and np.signbit(x[5]) and grid[2, 1] == 10


def test_the_first_write_is_found_chunk_by_chunk(monkeypatch):
    """A check past 2**32 compares in chunks (no temporary as large as its input); the
    first write in C order is named whatever the chunk size."""
    import scancheck.targets.target as targets

    monkeypatch.setattr(targets, "_COMPARE_CHUNK", 7)
    x = np.zeros((40, 3), dtype=np.int32)
    given = x.copy()
    given[25, 2] = given[31, 0] = 1
    assert targets.first_write(x, given).index == (25, 2)
    flat = np.zeros(100, dtype=np.float64)
    assert targets.first_write(flat, flat.copy()) is None
    given = flat.copy()
    given[[64, 99]] = -0.0
    assert targets.first_write(flat, given).index == (64,)


def test_reverse_and_seeded_views_catch_a_write_in_the_targets_own_indices():
    """forward() and seeded() hand the target arrays of their own: the write is caught at
    the target's own call, and named in the array the target saw."""
    from scancheck.targets.target import InputWritten, forward, seeded

    def zero_first(x, *args, **kwargs):
        out = np.cumsum(x, dtype=x.dtype)
        x[0] = 0
        return out

    y = np.array([5, 1, 2, 3], dtype=np.int32)
    reverse = forward(Target("r", zero_first, TargetSpec(reverse=True)))
    with pytest.raises(InputWritten, match=r"x\[0\] was 3, is 0 after the call"):
        reverse(y)
    for inclusive, first in ((True, 1), (False, 1)):
        t = seeded(Target("s", zero_first, TargetSpec(inclusive=inclusive, initial=True)))
        with pytest.raises(InputWritten, match=rf"x\[0\] was {first}, is 0 after the call"):
            t(y)
    assert y.tolist() == [5, 1, 2, 3]


_RIGHT_ON_THE_CPU = ("numpy.cumsum", "numpy.cumprod", "numpy.maximum.accumulate",
                     "numpy.minimum.accumulate", "numpy.logaddexp.accumulate",
                     "numpy.cumsum (default dtype)", "itertools.accumulate(initial=)",
                     "itertools.accumulate(operator.mul, initial=)", "model:blelloch",
                     "model:decoupled_lookback")


@pytest.mark.parametrize("name", _RIGHT_ON_THE_CPU)
def test_no_right_cpu_scan_is_taken_for_one_that_writes_into_its_input(name):
    """Every property these run (rows, products, log-sum-exp, scans from an initial value
    included) hands them copies and compares each after the call: none is refused."""
    from scancheck.engine.cases import Budget
    from scancheck.engine.conformance import check

    rep = check(resolve(name), budget=Budget(0.05, max_n=64))
    assert rep.passed, rep.rows()


# -- file.py:function targets, and spec overrides on top of what a target declares -------

_USER_SCANS = """
import numpy as np
from scancheck import TargetSpec

def running_max(x):
    return np.maximum.accumulate(x)

running_max.scan_spec = TargetSpec(op="max", dtypes=("float32", "int32"))

def as_list(x):
    return np.cumsum(x, dtype=x.dtype).tolist()
"""


@pytest.fixture
def user_file(tmp_path):
    """A Python file of scans in a directory that is not on sys.path (its name no module's)."""
    where = tmp_path / "my scans" / "user-scans.py"
    where.parent.mkdir()
    where.write_text(_USER_SCANS)
    return where


def test_a_file_target_is_loaded_by_path_with_its_declared_spec(user_file):
    import sys

    t = resolve(f"{user_file}:running_max")
    assert t.spec.op == "max" and t.locator == f"import:{user_file}:running_max"
    np.testing.assert_array_equal(t(np.array([1.0, 3.0, 2.0], np.float32)), [1.0, 3.0, 3.0])
    assert str(user_file.parent) not in sys.path
    name = t.fn.__module__
    assert name.isidentifier() and name.startswith("_scancheck_file_user_scans_")
    assert resolve(f"{user_file}:running_max").fn is t.fn  # loaded once per process


def test_two_files_of_one_name_stay_apart(tmp_path):
    for k in (1, 2):
        (tmp_path / str(k)).mkdir()
        (tmp_path / str(k) / "scan.py").write_text(f"def which(x):\n    return {k}\n")
    assert [resolve(f"{tmp_path / str(k) / 'scan.py'}:which").fn(None) for k in (1, 2)] == [1, 2]


@pytest.mark.parametrize("tail, message", [
    ("missing.py:fn", "missing.py is not a file"),
    ("user-scans.py:nothing", "has no attribute 'nothing'$"),
    ("user-scans.py:running_maxx", "has no attribute 'running_maxx'; did you mean "
                                   "'running_max'\\?"),
])
def test_a_missing_file_or_function_is_a_usage_error_naming_it(user_file, tail, message):
    with pytest.raises(ValueError, match=message):
        resolve(f"{user_file.parent / tail}")


@pytest.mark.parametrize("form", ["file", "module"])
def test_a_module_that_raises_as_it_loads_is_told_with_its_line(tmp_path, monkeypatch, form):
    """A spec one of its functions cannot have raises as the module loads: the error names
    that line of the module, whichever of its functions was asked for."""
    (tmp_path / "two_specs.py").write_text(
        "from scancheck import TargetSpec\n\ndef good(x):\n    return x\n\ndef bad(x):\n"
        "    return x\n\nbad.scan_spec = TargetSpec(op='logaddexp', dtypes=('int32',))\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    name = f"{tmp_path / 'two_specs.py'}:good" if form == "file" else "two_specs:good"
    with pytest.raises(ValueError, match=r"cannot be imported \(ValueError at line 9 of "
                                         r"two_specs.py: dtypes=\('int32',\) with op='logaddexp'"):
        resolve(name)
    sys.modules.pop("two_specs", None)


def test_a_package_that_raises_as_it_loads_is_a_usage_error_imported_once(tmp_path,
                                                                            monkeypatch):
    (tmp_path / "raising_pkg").mkdir()
    (tmp_path / "raising_pkg" / "__init__.py").write_text(
        "import builtins\nbuiltins.raising_pkg_loads = getattr(builtins, 'raising_pkg_loads', 0) "
        "+ 1\nraise RuntimeError('boom')\n")
    (tmp_path / "raising_pkg" / "mod.py").write_text("def fn(x):\n    return x\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    import builtins

    with pytest.raises(ValueError, match=r"module 'raising_pkg.mod' cannot be imported "
                                         r"\(RuntimeError: boom\)"):
        resolve("raising_pkg.mod:fn")
    assert builtins.raising_pkg_loads == 1
    del builtins.raising_pkg_loads


def test_overrides_replace_only_the_fields_they_name(user_file):
    t = resolve(f"{user_file}:running_max", overrides={"dtypes": ["float32"], "nans": "propagate"})
    assert (t.spec.op, t.spec.dtypes) == ("max", ("float32",))
    cumsum = resolve("numpy.cumsum", overrides={"dtypes": ("int32",)})
    assert cumsum.spec.axis == "arg" and cumsum.spec.dtypes == ("int32",)


def test_a_declared_max_scan_checked_under_dtypes_conforms(user_file):
    from scancheck.engine.cases import Budget
    from scancheck.engine.conformance import check_property

    t = resolve(f"{user_file}:running_max", overrides={"dtypes": ("float32",)})
    assert check_property(t, "nan and inf", Budget(0.3, max_n=64)).status == "pass"


def test_an_override_making_no_valid_spec_names_the_flags(user_file):
    with pytest.raises(ValueError, match=r"--reverse --indices: on .*running_max's declared "
                       r"spec \(op='max', .*only forward max and min scans return indices"):
        resolve(f"{user_file}:running_max", overrides={"reverse": True, "indices": True})
    with pytest.raises(ValueError, match="colour is no TargetSpec field"):
        resolve("numpy.cumsum", overrides={"colour": "red"})


@pytest.mark.parametrize("name, axis", [("numpy.cumsum", 0), ("numpy.cumsum", None),
                                        ("model:blelloch", 0), ("model:blelloch", "arg")])
def test_an_axis_override_cannot_change_how_a_built_in_is_called(name, axis):
    """A built-in's axis is how scancheck calls it (fn(x, axis), or fn(x)), not a claim about
    it: another would hand it what it does not take and blame it for the error."""
    declared = resolve(name).spec.axis
    given = "none" if axis is None else axis
    with pytest.raises(ValueError, match=rf"--axis {given}: {re.escape(name)} is called .*so "
                       rf"--axis can only be {'none' if declared is None else declared}"):
        resolve(name, overrides={"axis": axis})
    assert resolve(name, overrides={"axis": declared}).spec.axis == declared


def test_an_axis_override_on_a_function_of_ones_own_declares_how_it_is_called(user_file):
    t = resolve(f"{user_file}:running_max", overrides={"axis": 0})
    assert t.spec.axis == 0


@pytest.mark.parametrize("declared", ['{"op": "add"}', '"add"', "TargetSpec"])
@pytest.mark.parametrize("where", ["fn.scan_spec", "SCAN_SPEC"])
def test_a_declared_spec_that_is_no_target_spec_is_refused_naming_it(tmp_path, declared, where):
    path = tmp_path / "specs.py"
    path.write_text("import numpy as np\nfrom scancheck import TargetSpec\n\n"
                    "def fn(x):\n    return np.cumsum(x)\n\n"
                    f"{where} = {declared}\n")
    name = where.split(".")[-1]
    with pytest.raises(ValueError, match=rf"its {name} is a \w+; it must be a "
                       r"scancheck.TargetSpec"):
        resolve(f"{path}:fn")
    # A spec given in its place is the one checked: the declared one is not read.
    assert resolve(f"{path}:fn", TargetSpec(op="max")).spec.op == "max"


def test_an_op_override_builds_the_kernel_for_that_operator():
    t = resolve("model:blelloch", overrides={"op": "max"})
    assert t.spec.op == "max" and t.locator.endswith(":max")
    assert t(np.array([3, 1, 2], np.int32)).tolist()[1:] == [3, 3]


def test_a_model_is_held_to_the_types_its_kernels_are_built_for():
    """A model checked at a type no kernel of its variant takes would conform for a launch
    that cannot happen."""
    with pytest.raises(ValueError, match=r"--dtypes uint8: model:blelloch's kernels are built "
                       r"for float32, float64, int32, int64 under add"):
        resolve("model:blelloch", overrides={"dtypes": ("uint8", "int32")})
    assert resolve("model:blelloch", overrides={"dtypes": ("int32",)}).spec.dtypes == ("int32",)


@pytest.mark.parametrize("prefix", ["model", "kernel"])
def test_launches_of_one_kernel_are_told_apart_by_name(prefix):
    """Checked together, two blocks or operators of one variant are two rows of a summary."""
    names = [resolve(f"{prefix}:kogge_stone{tail}").name
             for tail in ("", ":128", ":128:max", ":64", ":256")]
    assert len(set(names[:3])) == 3
    assert names[3] != names[4]  # one of them is the default block, named bare
    assert min(names, key=len) in (names[3], names[4])


def test_device_gpu_on_a_cpu_target_without_a_gpu_leaves_it_unavailable():
    from scancheck.core.devices import gpu_available

    t = resolve("numpy.cumsum", overrides={"device": "gpu"})
    assert (t.unavailable is None) == gpu_available()[0]


def test_a_target_returning_a_list_gets_a_verdict_naming_it(user_file):
    from scancheck.engine.cases import Budget
    from scancheck.engine.conformance import check_property

    r = check_property(resolve(f"{user_file}:as_list"), "integers exact", Budget(0.3, max_n=64))
    assert r.status == "fail" and r.cause == "LOGIC"
    assert r.diagnosis.startswith("returned a list of 1 item, not an array: a target returns")


def test_a_target_returning_a_number_or_nothing_is_named_so():
    from scancheck.targets.target import NotAnArray, Target

    x = np.zeros(3, np.int32)
    with pytest.raises(NotAnArray, match=r"^returned an int \(3\), not an array"):
        Target("t", lambda x: 3)(x)
    with pytest.raises(NotAnArray, match=r"^returned NoneType, not an array"):
        Target("t", lambda x: None)(x)


def test_a_file_target_and_its_overrides_reach_a_child_process(user_file):
    from scancheck.isolation.parent import check_isolated

    rep = check_isolated(f"{user_file}:running_max", properties=(), large=False, sanitize=(),
                         overrides={"dtypes": ("float32",), "zeros": "ordered"})
    assert rep.target == f"{user_file}:running_max"
    assert (rep.spec["op"], tuple(rep.spec["dtypes"]), rep.spec["zeros"]) == (
        "max", ("float32",), "ordered")


def test_an_operator_a_target_may_not_declare_is_refused_with_the_table_s_reason():
    from scancheck.core.operators import ELEMENT_KINDS, OPERATORS, TARGET_OPERATORS

    assert all(op.elements in ELEMENT_KINDS for op in OPERATORS.values())
    refused = [op for op in OPERATORS.values() if op.name not in TARGET_OPERATORS]
    assert {op.name for op in refused} == {"interval", "argmax", "argmin", "segmented_add"}
    for op in refused:
        with pytest.raises(ValueError, match=re.escape(op.not_a_target)):
            TargetSpec(op=op.name)


def test_a_kernel_built_for_another_operator_is_named_by_it_in_reports():
    assert resolve("kernel:decoupled_lookback").name == "scancheck:decoupled_lookback"
    assert resolve("kernel:decoupled_lookback:256:mul").name == "scancheck:decoupled_lookback (mul)"


def test_a_jit_target_compiles_each_combine_once_however_a_check_alternates():
    """PerCombine: one build per (combine, axis) while the last ``kept`` are held, the least
    recently used dropped first, and each combine held so that its id stays its own."""
    import gc
    import weakref

    from scancheck.targets.target import PerCombine

    builds = []

    def build(combine, axis):  # what it returns holds nothing of the combine
        builds.append((combine, axis))
        return len(builds) - 1

    cache = PerCombine(build, kept=3)
    combines = [lambda a, b, k=k: a + b + k for k in range(3)]
    for _ in range(4):  # a check's examples switching among its probe monoids
        for c in combines:
            assert builds[cache(c, 0)] == (c, 0)
    assert builds == [(c, 0) for c in combines]
    assert builds[cache(combines[0], 1)] == (combines[0], 1)  # another axis: another function,
    assert len(builds) == 4  # for which the least recently used, combines[0]'s, made room
    cache(combines[2], 0)
    cache(combines[1], 0)
    assert len(builds) == 4  # both still held
    cache(combines[0], 0)
    assert builds[-1] == (combines[0], 0)  # dropped above: built again
    cache(combines[2], 0)  # the least recent is now combines[1]'s (at axis 0)
    cache(combines[0], 2)
    cache(combines[2], 0)
    cache(combines[0], 0)
    assert len(builds) == 6  # only combines[1]'s was dropped for the new axis
    held = weakref.ref(combines[2])
    del combines, c, builds[:]
    gc.collect()
    assert held() is not None


def test_a_buffer_the_target_returns_on_every_call_is_copied_for_each_call():
    """A scan may hand back one cached workspace every call: the output kept from a first
    call must not turn into the second's (two runs compared would be one array)."""
    buf = np.zeros(4, np.float32)

    def scan(x):
        buf[:] = np.cumsum(x, dtype=x.dtype)
        return buf

    t = Target("cached", scan)
    first = t(np.ones(4, np.float32))
    second = t(np.full(4, 2, np.float32))
    assert first.tolist() == [1, 2, 3, 4] and second.tolist() == [2, 4, 6, 8]


def test_a_reverse_target_is_handed_its_input_in_the_layout_drawn():
    """Reversed in place of the input's own layout: a Fortran-order input reaches a reverse
    scan in Fortran order (it once got a C-contiguous copy of every input)."""
    from scancheck.targets.target import forward

    seen = []

    def suffix_sums(x, axis):
        seen.append(x.flags.f_contiguous and not x.flags.c_contiguous)
        return np.flip(np.cumsum(np.flip(x, axis), axis=axis, dtype=x.dtype), axis)

    target = forward(Target("suffix", suffix_sums, TargetSpec(axis="arg", reverse=True)))
    x = np.asfortranarray(np.arange(6.0).reshape(2, 3))
    np.testing.assert_array_equal(target(x, 1), np.cumsum(x, axis=1))
    assert seen == [True]
