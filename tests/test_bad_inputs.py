"""Bad input through the public API and the command line: a clear error or the right answer,
nothing else -- never a crash of ours, never a silently wrong answer (as big-endian input once
gave: ``exact_scan(np.arange(5, dtype='>f4'))`` returned 4.6e-41 where 1 belongs)."""

from __future__ import annotations

import re

import numpy as np
import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from scancheck import CheckOptions, Target, check, check_isolated
from scancheck.core.dtypes import DTYPES, INPUT_DTYPES
from scancheck.core.operators import sequential_scan
from scancheck.engine.cases import Budget
from scancheck.faces.cli.main import main
from scancheck.oracle.bounds import certified, classify, sequential_depths
from scancheck.oracle.exact import exact_scan, exact_scan_mpmath
from scancheck.targets.spec import TargetSpec

_DTYPES = ["float32", "float64", "int32", "int64", ">f4", ">f8", ">i4", ">i8", "<f4",
           "float16", "int8", "uint32", "bool", "complex64", "object"]
_LAYOUTS = ["contiguous", "strided", "reversed", "offset", "2-D", "0-D", "list"]


@st.composite
def arrays(draw):
    """An array of any of many dtypes, byte orders, shapes and memory layouts."""
    dtype = np.dtype(draw(st.sampled_from(_DTYPES)))
    n = draw(st.integers(0, 40))
    layout = draw(st.sampled_from(_LAYOUTS))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    base = (rng.integers(-50, 50, 2 * n + 2) * rng.choice([1, 0.25, 1e3], 2 * n + 2))
    if dtype.kind == "f" and draw(st.booleans()):
        base[rng.random(base.size) < 0.1] = rng.choice([np.nan, np.inf, -np.inf])
    with np.errstate(invalid="ignore"):
        full = base.astype(dtype)
    return {"contiguous": full[:n], "strided": full[: 2 * n : 2], "reversed": full[n - 1 :: -1][:n],
            "offset": full[1 : n + 1], "2-D": full[: 2 * (n // 2)].reshape(-1, 2).T,
            "0-D": full[:1].reshape(()), "list": full[:n].tolist()}[layout]


def _reference(x: np.ndarray, op: str) -> list:
    """The scan in Python numbers, independently of scancheck's oracle: ints wrap."""
    values = x.tolist()
    out, acc = [], None
    for v in values:
        if op == "add":
            acc = v if acc is None else acc + v
        else:
            acc = v if acc is None else (max if op == "max" else min)(acc, v)
        out.append(acc)
    bits = 8 * x.dtype.itemsize
    if x.dtype.kind == "i":
        out = [(v + 2 ** (bits - 1)) % 2**bits - 2 ** (bits - 1) for v in out]
    if x.dtype.kind == "u":
        out = [v % 2**bits for v in out]
    return out


@given(arrays(), st.sampled_from(["add", "max", "min"]), st.booleans())
def test_the_oracle_answers_right_or_refuses_clearly(x, op, inclusive):
    try:
        got = exact_scan(x, op, inclusive)
    except (TypeError, ValueError) as exc:
        text = str(exc)
        assert text.startswith("x") or "operator" in text, text
        x = np.asarray(x)
        assert x.ndim != 1 or x.dtype.name not in DTYPES
        return
    x = np.asarray(x)
    assert x.ndim == 1 and got.shape == x.shape and got.dtype.isnative
    native = np.ascontiguousarray(x).astype(x.dtype.newbyteorder("="))
    if x.dtype.kind == "f" and op == "add":
        want = exact_scan_mpmath(native, inclusive)  # an independent exact path
        np.testing.assert_array_equal(got, want)
        return
    if x.dtype.kind == "f" and not np.isfinite(native).all():
        return  # max/min with NaN: tested in test_operators against the functors
    ref = _reference(native, op)
    want = ref if inclusive else ([0 if op == "add" else None] + ref[:-1] if ref else [])
    for k, (g, w) in enumerate(zip(got.tolist(), want)):
        if w is not None:
            assert g == w, (k, g, w)


@given(arrays())
def test_the_certificate_and_the_classifier_answer_right_or_refuse_clearly(x):
    x = np.asarray(x)
    try:
        where = certified(x)
    except (TypeError, ValueError) as exc:
        assert "x" in str(exc) or "dtype" in str(exc)
        return
    native = np.ascontiguousarray(x).astype(x.dtype.newbyteorder("="))
    np.testing.assert_array_equal(where, certified(native))
    rep = classify(x, sequential_scan(native), sequential_depths(x.shape[0]))
    assert rep.verdict.name in ("EXACT", "WITHIN_BOUND", "OVERFLOWED")  # float16 overflows soon
    # Where the certificate holds the sequential sum is the exact one.
    np.testing.assert_array_equal(sequential_scan(native)[where], exact_scan(native)[where])


#: The values of each spec field a text may hit that a spec takes (Hypothesis draws the
#: constants of the code under test into its text: "float64" came up); the operators are
#: those a spec of the default dtypes takes (logaddexp is refused there, naming op).
_VALID = {"op": {"add", "max", "min", "mul", "recurrence"}, "dtypes": set(INPUT_DTYPES),
          "device": {"cpu", "gpu"}, "max_n": set()}


@given(st.sampled_from(["op", "dtypes", "device", "max_n"]), st.text(max_size=8))
@example("dtypes", "float64")
def test_bad_specs_are_refused_naming_the_field(field, value):
    kw = {"dtypes": (value,)} if field == "dtypes" else {field: value}
    if value in _VALID[field]:
        return
    try:
        TargetSpec(**kw)
    except (TypeError, ValueError) as exc:
        assert field.rstrip("s") in str(exc) or "operator" in str(exc), str(exc)
        return
    assert field == "max_n"  # a max_n of any type is taken as given; the others are checked


@given(st.one_of(st.floats(allow_nan=True), st.integers(-5, 5), st.text(max_size=3)))
def test_bad_budgets_are_refused(value):
    try:
        b = Budget(seconds=value)
    except ValueError as exc:
        assert "budget=" in str(exc)
        return
    assert isinstance(value, int | float) and 0 < value < float("inf")
    assert b.seconds == value


_OPTIONS = ["--budget", "--examples", "--max-n", "--timeout", "--jobs", "--workers"]


@given(st.sampled_from(_OPTIONS),
       st.one_of(st.text(min_size=1, max_size=6).filter(lambda s: not s.startswith("-")),
                 st.integers(-3, 3).map(str), st.sampled_from(["nan", "inf", "1e400", "0.0"])))
@example("--budget", "0\n")  # parses as 0: the thorough profile found it echoed on two lines
def test_bad_option_values_exit_2_with_one_line(option, value):
    import contextlib
    import io

    err = io.StringIO()
    with contextlib.redirect_stderr(err), pytest.raises(SystemExit) as exc:
        # --help stands in for the run itself: a value that parses must not be refused.
        main(["check", "numpy.cumsum", option, value, "--controls", "--help"])
    text = err.getvalue()
    if exc.value.code == 2:
        assert text.count("\n") == 1 and option in text and "is not a positive" in text, text
    else:
        assert exc.value.code == 0 and float(value) > 0


def _fine():
    return Target("cumsum", np.cumsum)


#: Calls of the public API with an argument of the wrong type, the error each must raise and
#: the words that name the argument.
_MISUSES = {
    "check of a function": (lambda: check(np.cumsum), TypeError, "target=<function cumsum"),
    "check of None": (lambda: check(None), TypeError, "target=None must be a Target"),
    "options as a dict": (lambda: check(_fine(), options={"timeout": 1}), TypeError,
                          "options={'timeout': 1} must"),
    "check_isolated of None": (lambda: check_isolated(None), TypeError,
                               "locator=None must name the target"),
    "check_isolated of a number": (lambda: check_isolated(42, CheckOptions()), TypeError,
                                   "locator=42 must name"),
    # Named by its name, not by a repr that holds its whole spec.
    "check_isolated of a Target": (lambda: check_isolated(_fine()), TypeError,
                                   "locator=<Target 'cumsum'> must name the target, as "
                                   "'numpy.cumsum'"),
    "fn not callable": (lambda: Target("x", 42), TypeError, "fn=42 is not callable"),
    "spec as a string": (lambda: Target("x", np.cumsum, "add"), TypeError,
                         "spec='add' must be a TargetSpec"),
    "ndim as an int": (lambda: TargetSpec(ndim=2, axis=0), ValueError,
                       "ndim=2 must be a tuple of ranks"),
}


@pytest.mark.parametrize("name", _MISUSES)
def test_the_api_refuses_a_wrong_type_naming_the_argument(name):
    call, kind, message = _MISUSES[name]
    with pytest.raises(kind, match=re.escape(message)):
        call()


def test_the_oracle_refuses_an_unknown_rule_or_a_flag_that_is_no_bool():
    from scancheck import exact_scan
    from scancheck.explain import explain

    x = np.ones(5, dtype=np.float32)
    with pytest.raises(ValueError, match=re.escape("nans='bogus' is unknown; allowed: propag")):
        exact_scan(x, "add", nans="bogus")
    for call in (lambda: exact_scan(x, "add", "no"),
                 lambda: explain(x, np.cumsum(x), inclusive="no")):
        with pytest.raises(ValueError, match=re.escape("inclusive='no' must be True or False")):
            call()
