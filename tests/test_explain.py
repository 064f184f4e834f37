"""explain: proven logic errors only where no correct scan can reach, rounding where real
orders round alike, and each negative control's verdict."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from scancheck.controls import declared, sums
from scancheck.engine.strategies import generate_data
from scancheck.explain import EXACT, PROVEN, ROUNDING, SUSPICIOUS, explain
from scancheck.faces.cli.commands import load_array
from scancheck.faces.cli.main import main
from scancheck.kernels.registry import VARIANTS
from scancheck.oracle.bounds import certified

_ADD_VARIANTS = [n for n, v in VARIANTS.items() if not v.racy and "add" in v.operators]


def _data(n, dtype, dist, seed=1):
    return generate_data(np.random.default_rng(seed), n, dtype, dist)


@given(st.integers(1, 3000), st.sampled_from(["float32", "float64"]),
       st.sampled_from(["dyadic", "integers", "steps"]), st.integers(0, 2**32 - 1),
       st.sampled_from(_ADD_VARIANTS), st.sampled_from([32, 64, 256]))
def test_no_correct_model_is_ever_called_proven_wrong(n, dtype, dist, seed, name, block):
    """Data that meet the certificate in long stretches; every model of a correct kernel is
    'exact' or 'rounding' there, never proven wrong nor suspicious."""
    var = VARIANTS[name]
    block = max(block, var.min_block)
    if var.capacity:
        n = min(n, var.capacity(block, var.resolve_params(None)))
    x = _data(n, dtype, dist, seed)
    got = var.build_model(n, block).run(x)
    e = explain(x, got, inclusive=var.inclusive)
    assert e.verdict in (EXACT, ROUNDING), (name, e.lines())


def test_the_certificate_proves_an_error_and_names_the_first_output():
    x = _data(1000, "float32", "integers")
    got = sums.off_by_one_at_block_boundaries(x)
    e = explain(x, got)
    assert e.verdict == PROVEN and e.first_wrong == 64 and certified(x)[64]
    assert "every summation order gives the exact sum there" in e.headline


# control -> (data, inclusive, op, verdict)
_CONTROL_VERDICTS = {
    "off_by_one_at_block_boundaries": ("integers", True, "add", PROVEN),
    "dropped_partial_block": ("integers", True, "add", PROVEN),
    "lower_precision_intermediate": ("integers", True, "add", PROVEN),
    "carry_8_bits_short": ("integers", True, "add", PROVEN),
    "exclusive_scan_with_wrong_first_output": ("uniform", False, "add", PROVEN),
    "block_totals_from_the_exclusive_scan": ("integers", False, "add", PROVEN),
    # Far from the threshold: magnitudes summing to 0.6 of max, where no order overflows.
    "overflow_guard_too_low": ("0.3 max", True, "add", PROVEN),
    "nan_dropping_max": ("specials", True, "max", PROVEN),
}


@pytest.mark.parametrize("name", list(_CONTROL_VERDICTS))
def test_each_negative_control_gets_its_verdict(name):
    dist, inclusive, op, verdict = _CONTROL_VERDICTS[name]
    x = (np.full(2, 0.3 * np.finfo(np.float32).max, dtype=np.float32) if dist == "0.3 max"
         else _data(5000, "float32", dist, seed=3))
    fn = getattr(sums, name, None) or getattr(declared, name)
    e = explain(x, fn(x), op=op, inclusive=inclusive)
    assert e.verdict == verdict, e.lines()


def test_lost_precision_inside_the_bound_is_suspicious_and_says_how_far():
    """The 8-bits-short carry on data no certificate covers: inside the any-order bound, but
    its error is many times what real orders round."""
    x = _data(100_000, "float32", "uniform", seed=2)
    e = explain(x, sums.carry_8_bits_short(x))
    assert e.verdict == SUSPICIOUS and e.error["bound fraction"] < 1, e.lines()
    assert "x the rounding of the roughest real order" in e.headline


def test_a_reference_s_own_rounding_is_measured():
    x = _data(200_000, "float32", "integers", seed=4)
    ref = np.add.accumulate(x, dtype=np.float32)
    tree = VARIANTS["decoupled_lookback"].build_model(x.size, 256).run(x)
    e = explain(x, tree, reference=ref)
    assert e.verdict in (EXACT, ROUNDING)
    r = e.reference
    assert r["verdict"] == ROUNDING and r["share"] > 0.9  # the disagreement is the reference's


def test_a_wider_reference_is_judged_in_its_own_dtype_and_a_narrower_refused(tmp_path):
    """A float64 reference of a float32 result (the usual one) is taken and judged with the
    input promoted; its own error is far below the float32 result's, so the disagreement is
    the result's.  A float16 reference holds too little, and is refused."""
    x = _data(100_000, "float32", "uniform", seed=2)
    result = np.cumsum(x, dtype=np.float32)
    e = explain(x, result, reference=np.cumsum(x, dtype=np.float64))
    r = e.reference
    assert r["dtype"] == "float64" and r["share"] < 1e-3, r
    assert any(ln.startswith("  against the reference (float64): ") for ln in e.lines())
    with pytest.raises(ValueError, match="a dtype that holds every float32 value"):
        explain(x, result, reference=result.astype(np.float16))
    np.save(tmp_path / "ref.npy", np.cumsum(x, dtype=np.float64))
    assert load_array(str(tmp_path / "ref.npy"), "float32", "--reference").dtype == np.float64


@pytest.mark.parametrize("ref_dtype, scans", [("float32", 1), ("float64", 2)])
def test_a_reference_costs_one_exact_scan_of_its_own_dtype_at_most(monkeypatch, ref_dtype,
                                                                     scans):
    """The exact scan is the costly step: a reference of the result's dtype is judged against
    the result's exact scan, a wider one against one more, of the promoted input."""
    import scancheck.oracle.explain as module

    dtypes = []
    real = module.exact_scan

    def counted(x, *args, **kwargs):
        dtypes.append(x.dtype.name)
        return real(x, *args, **kwargs)

    monkeypatch.setattr(module, "exact_scan", counted)
    x = _data(5_000, "float32", "uniform", seed=3)
    e = explain(x, np.cumsum(x, dtype=np.float32), reference=np.cumsum(x, dtype=ref_dtype))
    assert e.verdict in (EXACT, ROUNDING) and e.reference["dtype"] == ref_dtype
    assert dtypes == ["float32", "float64"][:scans]


def test_a_reference_s_share_is_over_the_same_finite_outputs_and_none_without_disagreement():
    """A sum kept in float16 overflows to inf past 65,504: its finite outputs agree with a
    float32 reference, so there is no finite disagreement to take a share of (none is
    printed, not "0.0%"), and the reference's own error is measured on the same outputs."""
    x = np.full(400, 256, np.float32)  # exact in float16 up to 255 * 256, then inf
    with np.errstate(over="ignore"):
        result = np.cumsum(x.astype(np.float16), dtype=np.float16).astype(np.float32)
    e = explain(x, result, reference=np.cumsum(x, dtype=np.float32))
    r = e.reference
    assert r["special disagreements"] > 0 and r["rms disagreement"] == 0.0, r
    assert r["share"] is None and r["reference rms"] == 0.0, r
    (line,) = [ln for ln in e.lines() if ln.startswith("  against the reference")]
    assert "% of the disagreement" not in line and "finite on every side" in line, line


def test_max_and_min_round_nothing():
    x = _data(300, "float64", "uniform")
    good = np.maximum.accumulate(x)
    assert explain(x, good, op="max").verdict == EXACT
    bad = good.copy()
    bad[200] = np.nextafter(bad[200], -np.inf)
    e = explain(x, bad, op="max")
    assert e.verdict == PROVEN and e.first_wrong == 200
    # A zero answer agrees in either sign that its prefix holds, and in no other.
    zeros = np.array([-1.0, -0.0, 0.0], np.float32)
    assert explain(zeros, np.array([-1.0, -0.0, -0.0], np.float32), op="max").verdict == EXACT
    e = explain(zeros, np.array([-1.0, 0.0, 0.0], np.float32), op="max")
    assert e.verdict == PROVEN and e.first_wrong == 1


def test_the_bound_fraction_is_told_only_where_some_order_rounds():
    """Where every output is certified exact the bound holds only underflow's slack: its
    fraction would be a number without meaning, and the line says the certificate instead."""
    x = np.array([1, 2, 3], np.float32)
    e = explain(x, np.array([1, 3, 7], np.float32))
    assert e.error["bound fraction"] is None
    assert any("none allowed: every output certified exact" in line for line in e.lines()), \
        e.lines()


def test_bad_arguments_name_what_is_wrong(tmp_path):
    x = np.arange(5, dtype=np.float32)
    with pytest.raises(ValueError, match="result has shape"):
        explain(x, x[:4])
    with pytest.raises(ValueError, match="op='recurrence'"):
        explain(x, x, op="recurrence")
    (tmp_path / "t.txt").write_text("1 2 0.1")
    with pytest.raises(ValueError, match=r"read as float64, and float32 changes some of its "
                                         r"values \(0.1 to 0.10000000149011612\)"):
        load_array(str(tmp_path / "t.txt"))
    assert load_array(str(tmp_path / "t.txt"), "float64").dtype == np.float64
    np.savez(tmp_path / "two.npz", a=x, b=x)
    with pytest.raises(ValueError, match="name one as"):
        load_array(str(tmp_path / "two.npz"))
    assert load_array(str(tmp_path / "two.npz") + ":b").size == 5


@pytest.mark.parametrize("name, content, message", [
    ("text.npy", b"1 2 3", r"RESULT: .*text.npy is no .npy file \(it does not begin as "
                           r"np.save writes one\)"),
    ("text.npz", b"1 2 3", r"RESULT: .*text.npz is no .npz file"),
    ("cut.npy", b"\x93NUMPY\x09\x09", r"RESULT: .*cut.npy is a damaged .npy file \(format "
                                       r"version \(9, 9\)"),
    ("objects.npy", None, r"RESULT: .*objects.npy holds Python objects, which explain does not "
                          r"load"),
    ("objects.npz", None, r"RESULT: .*objects.npz:a holds Python objects"),
    ("cut.npz", b"PK\x03\x04 no more", r"RESULT: .*cut.npz is a damaged .npz file"),
])
def test_a_file_that_is_no_saved_array_of_numbers_is_named_as_such(tmp_path, name, content,
                                                                    message):
    """NumPy's own words for these (an object array's "allow_pickle" advice, say) name
    neither the file nor anything explain takes."""
    path = tmp_path / name
    if content is None and name.endswith(".npz"):
        np.savez(path, a=np.array([1, "a"], dtype=object), b=np.arange(3))
    elif content is None:
        np.save(path, np.array([1, "a"], dtype=object), allow_pickle=True)
    else:
        path.write_bytes(content)
    with pytest.raises(ValueError, match=message):
        load_array(str(path), argname="RESULT")


def test_the_command_line_exit_status_follows_the_verdict(tmp_path, capsys):
    x = _data(3000, "float32", "integers")
    np.save(tmp_path / "x.npy", x)
    np.save(tmp_path / "good.npy", np.cumsum(x, dtype=np.float32))
    np.save(tmp_path / "bad.npy", sums.dropped_partial_block(x))
    assert main(["explain", str(tmp_path / "x.npy"), str(tmp_path / "good.npy")]) == 0
    assert capsys.readouterr().out.startswith("exact: ")
    assert main(["explain", str(tmp_path / "x.npy"), str(tmp_path / "bad.npy"),
                 "--json", str(tmp_path / "e.json")]) == 1
    assert capsys.readouterr().out.startswith("not rounding (proven): output 2944")
    assert main(["explain", str(tmp_path / "x.npy"), str(tmp_path / "none.npy")]) == 2


def test_an_infinity_no_order_reaches_is_told_so_not_as_a_multiple_of_the_bound():
    x = np.random.default_rng(0).uniform(0, 1, 100).astype(np.float32)
    got = np.cumsum(x, dtype=np.float32)
    got[50] = np.inf
    e = explain(x, got)
    assert e.verdict == PROVEN and e.first_wrong == 50
    assert ("an infinity where the exact sum is finite, which no summation order reaches; 1 "
            "output is beyond") in e.headline
    assert "inf" + "x" not in e.headline


def _nan_read_as(x, value):
    return np.cumsum(np.where(np.isnan(x), x.dtype.type(value), x), dtype=x.dtype)


@pytest.mark.parametrize("how", ["read as 2", "ignored", "skipped", "ignored, identity first"])
def test_a_finite_output_where_the_exact_scan_is_nan_says_the_nan_input_was_lost(how):
    """Not "an infinity or NaN that no summation order reaches": the output is a number where
    every order gives NaN, so the NaN input was skipped or read as one; where the result is
    a declared NaN rule's scan, the hint names the rule and its flags."""
    x = np.array([1, np.nan, 3, 4], np.float32)
    if how == "ignored, identity first":
        x[:2] = np.nan, 2
    ignored = _nan_read_as(x, 0)  # numpy.nancumsum: each NaN input's output repeats the last
    result = {"read as 2": _nan_read_as(x, 2), "ignored": ignored,
              "skipped": np.where(np.isnan(x), x, ignored),
              "ignored, identity first": ignored}[how]
    e = explain(x, result)
    k = int(np.flatnonzero(np.isnan(np.cumsum(x)) & ~np.isnan(result))[0])
    j = int(np.flatnonzero(np.isnan(x))[0])
    assert e.verdict == PROVEN and e.first_wrong == k, e.lines()
    assert (f"a finite output where the exact scan is NaN: the NaN input at index {j} was "
            f"skipped or read as some number") in e.headline, e.headline
    assert "no summation order reaches" not in e.headline
    flags = {"read as 2": None, "ignored": "--nans ignore", "skipped": "--nans skip",
             "ignored, identity first": "--nans ignore --nan-prefix identity"}[how]
    if flags is None:
        assert e.hint == ""
    else:
        assert e.hint.startswith("as a scan that ") and "it is exact: explain propagates NaN" \
            in e.hint and f"declare {flags} when checking it" in e.hint, e.hint
    # A NaN rule fits max too, and the same words tell a max that dropped the NaN.
    m = explain(x, np.fmax.accumulate(x), op="max")
    assert m.verdict == PROVEN and f"the NaN input at index {j} was skipped" in m.headline
    assert "--nans ignore" in m.hint, m.hint


def test_each_way_an_infinity_goes_wrong_is_told_as_it_is():
    """Finite where the exact sum is infinite (an infinite input lost), NaN or an infinity of
    the other sign where it is infinite, an infinity where +inf and -inf or a NaN input make
    NaN: no wording says the other direction."""
    x = np.array([1, np.inf, 3], np.float32)
    lost = _nan_read_as(np.where(np.isinf(x), np.float32(np.nan), x), 5)
    e = explain(x, lost)
    assert "a finite output where the exact sum is infinite: the infinite input at index 1 " \
           "was skipped or read as some number" in e.headline, e.headline
    flipped = np.cumsum(x)
    flipped[1:] = -flipped[1:]
    assert "an infinity of the other sign, which no summation order reaches" in explain(
        x, flipped).headline
    nan = np.cumsum(x)
    nan[1:] = np.nan
    assert "a NaN where the exact sum is infinite, which no summation order reaches" in \
        explain(x, nan).headline
    both = np.array([1, np.inf, -np.inf, 2], np.float32)
    e = explain(both, np.cumsum(np.where(both < 0, np.float32(0), both)))  # -inf lost
    assert e.verdict == PROVEN and "an infinity where the exact scan is NaN (+inf and -inf " \
        "meet in the prefix, at indices 1, 2): an infinity was skipped" in e.headline, e.headline
    y = np.array([1, np.nan, 3], np.float32)
    e = explain(y, np.cumsum(np.where(np.isnan(y), np.float32(np.inf), y)))
    assert "an infinity where the exact scan is NaN: the NaN input at index 1 was skipped" in \
        e.headline, e.headline


@pytest.mark.parametrize("convention", ["exclusive", "reverse", "max", "min", "wrong"])
def test_a_result_right_under_another_convention_says_which(convention):
    x = np.random.default_rng(1).integers(0, 1000, 500).astype(np.float32)
    inclusive = np.cumsum(x, dtype=np.float32)
    result = {"exclusive": np.r_[np.float32(0), inclusive[:-1]],
              "reverse": np.cumsum(x[::-1], dtype=np.float32)[::-1].copy(),
              "max": np.maximum.accumulate(x), "min": np.minimum.accumulate(x),
              "wrong": sums.dropped_partial_block(x)}[convention]
    e = explain(x, result)
    assert e.verdict == PROVEN
    hints = {"exclusive": "as the exclusive scan it is exact: pass --exclusive",
             "reverse": "as the reverse scan (output k from x[k] to the end) it is exact",
             "max": "as the running maximum it is exact: pass --op max",
             "min": "as the running minimum it is exact: pass --op min", "wrong": ""}
    assert e.hint.startswith(hints[convention]) and (not e.hint) == (convention == "wrong")
    assert ("  hint: " + e.hint in e.lines()) == bool(e.hint)
    assert explain(x, inclusive, inclusive=False).hint == ("as the inclusive scan it is exact: "
                                                         "leave --exclusive out")
    assert explain(x, inclusive, op="max").hint == "as the running sum it is exact: pass --op add"


def test_no_hint_on_one_output_nor_where_the_other_convention_is_merely_unproven():
    x = np.array([5.0], dtype=np.float32)
    assert explain(x, np.zeros(1, dtype=np.float32)).hint == ""  # exclusive [0]: thin evidence
    y = np.random.default_rng(2).uniform(0, 1, 4000).astype(np.float32)
    inclusive = np.cumsum(y, dtype=np.float32)
    noisy = np.r_[np.float32(0), inclusive[:-1]]
    noisy[1:] += (np.random.default_rng(5).standard_normal(3999) * 1e-4).astype(np.float32)
    as_exclusive = explain(y, noisy, inclusive=False)
    e = explain(y, noisy)
    assert e.verdict == PROVEN
    assert (e.hint != "") == (as_exclusive.verdict in (EXACT, ROUNDING)), (e.hint, as_exclusive)


def test_a_nan_on_one_side_of_the_reference_alone_is_counted_not_left_out():
    """The RMS figures are of finite differences: where the result or the reference holds a
    NaN the other does not, that is counted beside them, and told."""
    x = np.array([1, np.nan, 3], np.float32)
    dropped = np.array([1, 1, 4], np.float32)  # the NaN read as 0
    ieee = np.array([1, np.nan, np.nan], np.float32)
    e = explain(x, dropped, reference=ieee)
    assert e.reference["special disagreements"] == 2 and e.reference["reference special errors"] == 0
    assert "2 outputs NaN or infinite on one side alone" in "\n".join(e.lines())
    wrong_reference = explain(x, ieee, reference=dropped)
    assert wrong_reference.reference["reference special errors"] == 2
    assert explain(x, ieee, reference=ieee).reference["special disagreements"] == 0


def test_a_hint_tries_only_the_operators_of_the_inputs_dtype():
    """A wrong running max of bool: proven so, and no sum tried (add takes no bool)."""
    x = np.array([0, 1, 0, 0, 1, 1, 0, 1] * 8, dtype=bool)
    wrong = np.maximum.accumulate(x)
    wrong[5] = False
    e = explain(x, wrong, op="max")
    assert e.verdict == PROVEN and e.hint == "", e.lines()


def test_a_promoting_scan_is_judged_in_its_results_dtype(tmp_path, capsys):
    """A result of a dtype that holds every input value is judged with the input promoted to
    it: int32 sums past 2**31 right in int64, and a scan that wrapped in int32 first proven
    wrong; a narrower result, or a reference narrower than the result, refused."""
    x = np.full(4, 2**30, dtype=np.int32)
    right = explain(x, np.cumsum(x, dtype=np.int64))
    assert right.verdict == EXACT and right.promoted_from == "int32" and right.dtype == "int64"
    assert "(the int32 input promoted, as the result is)" in right.lines()[1]
    wrapped = explain(x, np.cumsum(x, dtype=np.int32).astype(np.int64))
    assert wrapped.verdict == PROVEN and wrapped.first_wrong == 1
    assert explain(x, np.cumsum(x, dtype=np.int32)).promoted_from == ""
    with pytest.raises(ValueError, match="a dtype that holds every int32 value"):
        explain(x, np.cumsum(x).astype(np.int16))
    np.save(tmp_path / "x.npy", x)
    np.save(tmp_path / "r.npy", np.cumsum(x, dtype=np.int64))
    np.save(tmp_path / "narrow.npy", np.cumsum(x).astype(np.int16))
    assert main(["explain", str(tmp_path / "x.npy"), str(tmp_path / "r.npy")]) == 0
    assert capsys.readouterr().out.startswith("exact: ")
    with pytest.raises(ValueError, match="RESULT: .* holds int16, INPUT int32: explain takes"):
        load_array(str(tmp_path / "narrow.npy"), "int32", "RESULT")
    with pytest.raises(ValueError, match="--reference: .* holds int32, RESULT int64"):
        load_array(str(tmp_path / "x.npy"), "int64", "--reference")


@pytest.mark.parametrize("dtype", ["int32", "int64"])
def test_outputs_whose_exact_sums_wrap_are_counted_and_said(dtype):
    """An integer sum judged wrapped says how many outputs passed the dtype's range (exact
    in int64 below 64 bits, in Python's integers at 64); one that stays in range says
    nothing of it, nor does max."""
    top = np.iinfo(dtype).max
    x = np.array([top, 1, 1, -3, 5], dtype=dtype)
    wrapped = np.cumsum(x, dtype=dtype)
    e = explain(x, wrapped)
    assert e.verdict == EXACT and e.wrapped == 3, e.lines()  # top+1, top+2, top+4
    assert any(ln.startswith("  3 outputs wrapped: their exact sums lie outside") for ln in
               e.lines())
    assert explain(x[1:], np.cumsum(x[1:], dtype=dtype)).wrapped == 0
    assert explain(x, np.maximum.accumulate(x), op="max").wrapped == 0
    assert "rounds nothing" in explain(x, np.maximum.accumulate(x), op="max").lines()[1]


@pytest.mark.parametrize("dtype, narrow", [("float32", "float16"), ("float32", "bfloat16"),
                                           ("float64", "float32")])
def test_a_sum_kept_in_a_narrower_type_is_named_in_the_hint(dtype, narrow):
    """A running sum kept in a narrower type, whose every output is a value of it while the
    inputs are not, is proven wrong and the hint names the type; a sum whose carry alone is
    rounded (most outputs no value of it) gets no such hint."""
    from scancheck.core.arrays import as_dtype

    x = np.random.default_rng(3).random(3000).astype(dtype)
    kept = np.cumsum(x.astype(as_dtype(narrow)), dtype=as_dtype(narrow)).astype(dtype)
    e = explain(x, kept)
    assert e.verdict == PROVEN and e.hint == (
        f"every output is a {narrow} value where some inputs or exact prefixes are not: "
        f"rounded in {narrow}, as if summed or stored in it, not in {dtype}"), e.hint
    carried = np.cumsum(x, dtype=dtype)
    carried[1000:] += (carried[999].astype(as_dtype(narrow)).astype(dtype) - carried[999]) * 64
    assert "value where some inputs" not in (explain(x, carried).hint or "")


def test_a_ratio_to_the_tree_floor_is_not_worded_as_one_to_the_roughest_order():
    """Where every real order tried rounds less than a tree's floor (one ulp a level), the
    headline's ratio is to that floor and says so, not to "the roughest real order"."""
    rng = np.random.default_rng(0)
    x = rng.standard_normal(1000).astype(np.float32)
    e = explain(x, np.cumsum(x, dtype=np.float32))
    assert "the rounding floor of a tree" in e.headline and "roughest" not in e.headline, (
        e.headline)
