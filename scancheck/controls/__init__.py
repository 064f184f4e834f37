"""Negative controls: deliberately broken scans that scancheck must refuse, each with the one
diagnosis it must give at the default flags of ``scancheck check``.

The CPU ones are NumPy functions, a module per kind of scan: ``sums``, ``operators``
(recurrence, products, log-sum-exp, extremes with indices), ``rows`` (N-D inputs, initial
values), ``declared`` (the contracts a spec declares), ``segmented``, ``tuples`` (monoids
over tuples of arrays), ``bands``; the GPU ones are ``.cu`` targets under
``kernels/controls/`` with the documented ``scan`` signature, and CuPy functions.  Each
row says which check catches it, and why no weaker check would.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..core.cuda import KERNEL_DIR
from ..engine.diagnosis import Cause
from ..targets.spec import TargetSpec


@dataclass(frozen=True)
class Control:
    """A broken scan, its one expected cause, words its diagnosis must contain, and what
    catches it."""

    name: str
    locator: str
    #: None for a right scan that must be told slow (no cause: nothing fails).
    cause: Cause | None
    expect: str
    caught_by: str
    gpu: bool = False
    spec: TargetSpec | None = None
    #: Words each further cause must contain, one per cause, in the verdict's order: a
    #: control with two bugs must get both, each once.
    also: tuple[str, ...] = ()
    #: Seconds each property's search needs to catch it, where only the search's draws can
    #: (no size of the ladder shows it); None where the ladder catches it at any budget.
    seconds: float | None = None
    #: Its bug depends on what its process ran before (its first call): the tests check it
    #: in child processes of its own, as ``check --controls`` checks every control.
    process_state: bool = False
    #: The largest n the tests' quick (ci) profile walks its ladders to, past the n that
    #: catches it; ``check --controls`` and the thorough profile walk them whole.
    reach: int = 2**16
    #: Seconds one call may run before it is no answer, where the control needs its own
    #: (a slow one's calls pass it within a few seconds); None: the check's.
    timeout: float | None = None
    #: Words its primary diagnosis must not contain: the wrong reading it guards against,
    #: where that reading has the expected cause too ('' where the cause tells them apart).
    misread: str = ""
    #: It kills its process: the tests check it in child processes only.
    dies: bool = False

    @property
    def expected(self) -> str:
        """The verdict it must get, as the controls' table shows it."""
        return f"{self.cause.label if self.cause is not None else 'slow'}: {self.expect}"

    def check(self, isolated: bool = True, **kwargs: Any) -> tuple[Any, bool]:
        """Check this control in child processes at ``check_isolated``'s defaults (``kwargs``
        override them), or with ``isolated=False`` in this process as ``conformance.check``
        does (no fault or hang to survive, no child to start); the report, and whether its
        diagnosis is the expected one, with exactly the further causes it expects."""
        if isolated:
            from ..isolation.parent import check_isolated

            if self.timeout is not None:
                kwargs["timeout"] = self.timeout
            rep = check_isolated(self.locator, spec=self.spec, **kwargs)
        else:
            from ..engine.conformance import check
            from ..targets.resolve import resolve

            rep = check(resolve(self.locator, self.spec), **kwargs)
        verdict = rep.verdict
        if self.cause is None:  # no failure: every call right, some past the timeout
            return rep, (verdict.cause is None and rep.verdict_word == "slow"
                         and self.expect in rep.summary)
        head = verdict.findings[0].line if verdict.findings else ""
        return rep, (verdict.cause == self.cause and self.expect in head
                     and not (self.misread and self.misread in head)
                     and len(verdict.also) == len(self.also)
                     and all(w in a for w, a in zip(self.also, verdict.also)))


_CU = Path(KERNEL_DIR) / "controls"
_SUMS = "scancheck.controls.sums:"
_OPS = "scancheck.controls.operators:"
_ROWS = "scancheck.controls.rows:"
_CON = "scancheck.controls.declared:"
_SEG = "scancheck.controls.segmented:"
_TUP = "scancheck.controls.tuples:"
_BAND = "scancheck.controls.bands:"
_GPU_SPEC = TargetSpec(device="gpu", dtypes=("float32", "int32"))

CONTROLS: tuple[Control, ...] = (
    Control("off-by-one at block boundaries", _SUMS + "off_by_one_at_block_boundaries", Cause.LOGIC,
            "logic error", "integers exact and the bound, from n = 65"),
    Control("last partial block dropped", _SUMS + "dropped_partial_block", Cause.LOGIC,
            "logic error", "integers exact and the bound, from n = 65"),
    Control("block sums in the wrong order", _OPS + "block_sums_in_the_wrong_order", Cause.LOGIC,
            "operand order", "recurrence: only a non-commutative operator shows it"),
    Control("long blocks in the wrong order", _OPS + "long_blocks_in_the_wrong_order", Cause.LOGIC,
            "operand order", "recurrence past 1024 pairs: the interval enclosure, where exact "
            "rationals (300 pairs) cannot go"),
    Control("integer recurrence losing its products past 64", _OPS +
            "recurrence_products_lost_past_64", Cause.LOGIC, "running product of the a's",
            "recurrence, on odd a's half the time: even ones wrap the product to 0 within 64 "
            "pairs"),
    Control("recurrence leaving its a unscanned", _OPS + "recurrence_leaving_its_a_unscanned",
            Cause.LOGIC, "running product of the a's", "recurrence, which judges each output "
            "pair's first element as a cumprod: every y_k is right"),
    Control("recurrence dividing by the running product",
            _OPS + "recurrence_dividing_by_the_running_product", Cause.LOGIC, "not solved",
            "recurrence, on pairs with zero gates (an a of 0 resets y): without one every "
            "output is within the bound"),
    Control("block totals carried in float16", _SUMS + "lower_precision_intermediate",
            Cause.PRECISION, "precision lost", "the certificate and the bound; 'steps' data "
            "pass, so it is precision, not logic, with no integer dtype declared"),
    Control("carry kept 8 significand bits short", _SUMS + "carry_8_bits_short", Cause.PRECISION,
            "precision lost", "certified exact only: the error stays inside the any-order bound"),
    Control("compensated sum with its correction flipped",
            _SUMS + "compensated_sum_with_its_correction_flipped", Cause.PRECISION,
            "precision lost", "floats within bound on 'roundoff' data, where a running sum "
            "rounds the same way at every addition but the first; without them it was "
            "caught in 2 of 4 runs, on three elements the search happened upon"),
    Control("integers accumulated in float32", _SUMS + "integers_accumulated_in_float32",
            Cause.LOGIC, "as if accumulated in float32", "integers exact, which holds a wrong "
            "integer sum to the running sums of its inputs in float32 and float64"),
    Control("block sums scanned by one block", _SUMS + "block_sums_scanned_by_one_block",
            Cause.LOGIC, "logic error", "sizes past 262,144: the default largest n, not 5000",
            reach=2**19),
    Control("wrong first output of an exclusive scan", _SUMS + "exclusive_scan_with_wrong_first_output",
            Cause.LOGIC, "logic error", "every property at n = 1; one diagnosis, not three"),
    Control("reverse sum leaving out its first input", _SUMS +
            "reverse_sum_leaving_out_its_first_input", Cause.LOGIC, "leaves out its own input",
            "integers exact at n = 1: the one wrong output holds the scan of the inputs before "
            "it in scan order (it was told only 'differs from the exact scan')"),
    Control("exclusive max starting from 0", _OPS + "exclusive_max_starting_from_zero",
            Cause.LOGIC, "the identity of add", "integers exact at n = 1: the first output of "
            "an exclusive scan holds another operator's identity (it was told only 'differs "
            "from the exact scan')"),
    Control("empty input refused", _SUMS + "scan_refusing_empty_input", Cause.LOGIC, "empty input",
            "n = 0, which every property tries first where the spec allows it"),
    Control("empty input refused, wrong from n = 100",
            _SUMS + "empty_input_refused_and_wrong_from_100", Cause.LOGIC, "empty input",
            "n = 0, then the search from n = 1: an empty input refused ends no search",
            also=("(smallest case n=100",)),
    Control("workspace of n**2 elements", _SUMS + "quadratic_workspace", Cause.RESOURCE,
            "raised MemoryError", "any size past 11,585: out of memory is its own cause, and "
            "the search goes on below it, where the scan is right"),
    Control("tail wrong only at n in [1000, 1010] and [3000, 3010]",
            _SUMS + "tail_wrong_at_some_sizes", Cause.LOGIC, "logic error",
            "the search's draws, each scale given its share of the time and cheap cases run "
            "several to an example: no ladder size is there",
            # A fifth of the default 30 s: the share of each of five properties in one child.
            seconds=5.0),
    Control("blocked sum losing its last offset at some sizes",
            _BAND + "blocked_sum_losing_its_last_offset", Cause.LOGIC, "logic error",
            "the value properties' sizes k*2**j + r (blocks of 2**5 to 2**12, residues spread "
            "over each): 1/64 of the sizes past 5000, no tile edge among them; 'nan and inf' "
            "at such a size could read a NaN rule into it ('declare --nans skip', wrong): the "
            "same input with its NaNs made finite is wrong too", seconds=5.0),
    Control("float32 sum widened to float64 at some sizes",
            _BAND + "dtype_widened_at_some_sizes", Cause.LOGIC, "so declared, a longer case",
            "every property, at n > 5000 with n % 64 == 7: a promotion explains that case, but "
            "declared, a longer one returns float32 ('declare --promote "
            "float32:float64' would be wrong advice)", seconds=5.0),
    Control("underflow guard set too high", _BAND + "underflow_guard_too_high",
            Cause.PRECISION, "less exponent range", "floats within bound on 'subnormal' "
            "data, scaled by powers of two: the least that leaves no subnormal is still wrong "
            "(not 'subnormals read as zero': the totals it drops are normal numbers)"),
    # About half the sweep's cases at a size of the band put a special in those seven
    # elements: most searches meet it within a second, a few only in the sweep's second
    # round of sizes (12 runs on an idle 2-core machine: 0.2 to 1.2 s in 11, 10.2 s in 1).
    Control("sum reading NaN as zero in the last tile at some sizes",
            _BAND + "sum_reading_nan_as_zero_at_some_sizes", Cause.SPECIALS, "not propagated",
            "nan and inf, on the sweep's lone specials, which lie most often near the end of "
            "a block's last partial tile: the seven elements of that tile at 1/64 of the "
            "sizes past 5000", seconds=15.0),
    Control("integer sum checking overflow at some sizes",
            _BAND + "sum_raising_on_overflow_at_some_sizes", Cause.LOGIC,
            "keeps neither on every input: checks overflow", "integers exact, at n > 5000 with "
            "n % 64 == 7 on data "
            "whose prefixes leave the type: it raises there, as overflow='raise' would "
            "declare, but declared so, a longer case wraps ('declare --overflow raise' would "
            "be wrong advice)", seconds=5.0),
    Control("reverse scan flipped at some sizes", _BAND + "reverse_flipped_at_some_sizes",
            Cause.LOGIC, "'suffix' scan gives", "probe monoids, at n > 5000 with n % 64 == 7: "
            "there every output fits reverse='flip', at the other sizes the declared "
            "'suffix' (not 'follows reverse='flip'': a longer case does not)",
            seconds=5.0, misread="follows reverse="),
    Control("right but slow", _BAND + "slow_but_right", None, "slow, not hung",
            "the times of its calls at n/2 and n/4, which predict the timeout it passes at "
            "2**20 (not a hang)", timeout=1.0, reach=2**20),
    Control("right, allocating as it goes", _BAND + "allocating_but_right", None,
            "allocates as it goes", "its memory, grown by hundreds of MiB in the call past 3000 "
            "elements that passes the timeout, where the calls before it took microseconds "
            "(not a hang)", timeout=1.0),
    Control("hung past 3000 elements", _BAND + "hung_past_some_size", Cause.FAULT, "hang",
            "the ladder's first size past 3000, where the calls before it took microseconds: "
            "a hang, not a slow call", timeout=1.0),
    Control("aborting past 5000 elements", _BAND + "aborting_past_some_size", Cause.FAULT,
            "SIGABRT) at n = 5,001, called once in a fresh process", "the death bisected in "
            "fresh processes, each calling it once: each property meets it at a size of its "
            "own past 5000", dies=True),
    Control("hung after allocating", _BAND + "hung_after_allocating", Cause.FAULT, "hang",
            "its memory, grown by 256 MiB as its call past 3000 elements began and still as "
            "it is killed: a hang, not a call that allocates as it goes", timeout=1.0),
    Control("NaN-dropping max", _CON + "nan_dropping_max", Cause.CONTRACT,
            "declare --nans ignore", "nan and inf: the NaN rule it keeps (C fmax) is named, "
            "with its flag; the same data without NaNs pass"),
    Control("max ignoring NaN unless it comes first", _CON + "max_ignoring_nan_unless_first",
            Cause.LOGIC, "keeps neither on every input", "nan and inf: its NaNs among finite "
            "values read as 'declare --nans ignore', but so declared, an input that starts with "
            "NaNs comes back all NaN"),
    Control("sum reading a late NaN as zero", _CON + "sum_reading_a_late_nan_as_zero",
            Cause.SPECIALS, "not propagated", "nan and inf, on the sweep's lone specials past "
            "4000 elements: a NaN in the last tile after no other special (on data one element "
            "in 20 special the outputs there are NaN already)", seconds=5.0),
    Control("exclusive sum declared inclusive", _CON + "exclusive_sum", Cause.CONTRACT,
            "declare --exclusive", "integers exact and the float value properties: every "
            "output is the exclusive scan's, on its case and, so declared, on a longer one"),
    Control("reverse max declared forward", _CON + "reverse_running_max", Cause.CONTRACT,
            "declare --reverse", "integers exact and floats within bound: every output is the "
            "forward max of the input flipped, flipped back"),
    Control("sum declared reverse", _CON + "forward_running_sum", Cause.CONTRACT,
            "declare --no-reverse", "integers exact and the float value properties, on the "
            "forward view a reverse scan is judged by: every output of the view is its reverse "
            "scan's, so the target's own are the forward scan's (it was a logic error)"),
    Control("max declared a sum", _CON + "running_max", Cause.CONTRACT, "declare --op max",
            "integers exact and the float value properties: every output is the running "
            "maximum's, on its case and on fresh inputs of both signs; declared --op max, a "
            "longer case conforms"),
    Control("N-D sum flipping its accumulation type between calls", _CON +
            "rows_flipping_their_accumulation_type", Cause.NONDETERMINISM, "bits differ",
            "rows, which runs each right batched scan again where the spec is deterministic "
            "('deterministic' runs 1-D inputs only)"),
    Control("float32 rows declaring float64 accumulation (N-D)",
            _CON + "float32_rows_declaring_float64_accumulation", Cause.PRECISION,
            "accumulated in float64", "rows, under the declared accumulator's bound (it held "
            "rows to float32's own): its 1-D path keeps the declaration"),
    Control("float32 sum declaring float64 accumulation",
            _CON + "float32_sum_declaring_float64_accumulation", Cause.PRECISION,
            "accumulated in float64", "floats within bound under the declared accumulator's "
            "bound: float32's own bound holds"),
    Control("matrix scan refusing rank 3", _CON + "matrix_scan_refusing_rank_3", Cause.FAULT,
            "raised ValueError", "rows, on the 3-D arrays its declared ndim=(2, 3) allows"),
    Control("sum compensated past infinity", _CON + "sum_compensated_past_infinity",
            Cause.SPECIALS, "inf - inf, the running sum taken from itself",
            "floats within bound and nan and inf: NaN where the exact prefix is an infinity "
            "that inputs of one sign reach"),
    Control("checked sum missing the limit by one", _CON + "checked_sum_missing_the_limit_by_one",
            Cause.LOGIC, "a prefix at the limits",
            "integers exact under overflow='raise', on inputs whose prefix lands exactly on the "
            "type's limits and one past them: drawn data never do"),
    Control("checked sum testing the total only", _CON + "checked_sum_testing_the_total_only",
            Cause.LOGIC, "checks some prefixes only", "integers exact under overflow='raise', "
            "on the limits' inputs: it raises on some and wraps on others (neither "
            "'declare --overflow wrap' nor, under wrap, 'declare --overflow raise' fits it)"),
    Control("checked sum raising one element late", _CON + "checked_sum_raising_one_late",
            Cause.LOGIC, "checks overflow too late",
            "integers exact under overflow='raise': the smallest case overflows at its last "
            "output"),
    Control("integer sum refusing int8 past one tile", _CON + "sum_refusing_long_int8",
            Cause.FAULT, "raised TypeError", "integers exact: its int8 cases that long overflow "
            "and it raises there, but as well on an input of identities of that length (not "
            "'declare --overflow raise')"),
    Control("checked sum wrapping", _CON + "checked_sum_wrapping", Cause.CONTRACT,
            "declare --overflow wrap", "integers exact under overflow='raise'"),
    Control("NaN with its sign bit read as zero", _CON + "sum_reading_negative_nan_as_zero",
            Cause.SPECIALS, "NaN", "nan and inf, on data holding NaNs of either sign and with "
            "a payload: the quiet NaN propagates"),
    Control("NaN-ignoring sum ignoring the quiet NaN only", _CON +
            "sum_ignoring_quiet_nans_only", Cause.SPECIALS, "told apart by their bits",
            "nan and inf under the declared rule, every NaN made each NaN pattern in turn (neither "
            "'declare --nans propagate' nor, under that, 'declare --nans ignore' fits it)"),
    Control("max writing zero for NaN", _CON + "max_writing_zero_for_nan", Cause.SPECIALS, "NaN",
            "nan and inf; no NaN rule explains it and the same data without NaNs pass"),
    Control("max started from -1e30", _CON + "max_started_from_minus_1e30", Cause.LOGIC,
            "differs from the exact scan", "floats within bound on values below -1e30; at -inf "
            "(nan and inf) the twin that keeps the order, -inf made the most negative finite "
            "value, is wrong too: one cause, not a second told as NaN handling"),
    Control("sum declaring skip that propagates", _CON + "sum_declaring_skip_that_propagates",
            Cause.CONTRACT, "declare --nans propagate",
            "nan and inf under nans='skip': the outputs after a NaN are judged as the scan of "
            "the other inputs"),
    Control("product skipping NaN as one", _CON + "product_skipping_nan_as_one", Cause.CONTRACT,
            "declare --nans ignore --nan-prefix identity",
            "nan and inf under nans='skip': NaN inputs' outputs must be NaN"),
    Control("tile size varying between runs", _SUMS + "tile_size_varying_between_runs",
            Cause.NONDETERMINISM, "bits differ", "deterministic; every run is within the bound"),
    Control("tile size varying, one output buffer", _SUMS + "varying_tiles_into_one_buffer",
            Cause.NONDETERMINISM, "bits differ", "deterministic, which keeps a copy of each "
            "run: the array it returns is the same one every call"),
    Control("cumprod tile size varying between runs", _OPS + "cumprod_tile_varying_between_runs",
            Cause.NONDETERMINISM, "bits differ", "deterministic, for products (on factors "
            "near 1): every run is within the products' bound"),
    Control("segmented tile size varying between runs", _SEG + "tile_varying_between_runs",
            Cause.NONDETERMINISM, "bits differ", "segments, which runs a right scan again: "
            "every run is right segment by segment"),
    Control("wrong on its first call", _SUMS + "wrong_on_its_first_call", Cause.LOGIC,
            "logic error", "any property, on the first call of a process, which is never an "
            "empty input (n = 0 comes second): every later call is right", process_state=True),
    Control("tile carry read stale now and then", _SUMS + "stale_carry_now_and_then",
            Cause.LOGIC, "wrong in some runs only", "every value property, which runs its "
            "smallest case again: right in another run, no rounding, NaN rule or contract "
            "comes and goes (its NaN cases were told NaN semantics broken, and the bounds' "
            "probe on other data an error growing with the values)"),
    Control("sum started from the smallest normal", _SUMS + "sum_from_the_smallest_normal",
            Cause.LOGIC, "no lost precision explains it", "floats within bound on tiny data at "
            "n = 1, and on every seed the error within the type's own precision: no narrower "
            "type behaves like that (it was called precision lost, 24 bits of float32's 24)"),
    Control("least integer read as zero", _SUMS + "least_integer_read_as_zero", Cause.LOGIC,
            "differs from the exact", "integers exact, on data holding the type's limits: a "
            "uniform draw makes the least int32 once in 2**32 elements"),
    Control("sum reset at -0.0", _SUMS + "sum_reset_at_negative_zero", Cause.LOGIC,
            "treats -0.0 unlike +0.0", "floats within bound on data holding -0.0: right on "
            "the same input with each -0.0 made +0.0 (it was told an error growing with the "
            "values)", misread="grows with the values"),
    Control("overflow guard set too low", _CON + "overflow_guard_too_low", Cause.PRECISION,
            "no summation order can overflow", "floats within bound on 'overflow' data: an "
            "infinity is rounding only where the prefix's magnitudes reach the threshold"),
    Control("max keeping the earlier zero", _CON + "max_keeping_the_earlier_zero",
            Cause.CONTRACT, "declare --zeros either", "floats within bound on 'zeros' data, "
            "under the spec's IEEE 754-2019 zero order: every output, on its case and on "
            "fresh zeros data, is right under zeros='either'"),
    Control("max giving -0 for every zero", _CON + "max_giving_minus_zero_for_every_zero",
            Cause.LOGIC, "differs from the exact scan", "floats within bound on 'zeros' data: "
            "a -0 where the prefix holds only +0 is wrong under either zero order (not "
            "'declare --zeros either')", misread="--zeros"),
    Control("block totals from the exclusive scan (seed 004)",
            _SUMS + "block_totals_from_the_exclusive_scan", Cause.LOGIC, "logic error",
            "integers exact and the certificate, from n = 129: the seed's 'precision bug'"),
    Control("max answering a zero no input has", _CON + "max_adding_zero_to_each_output",
            Cause.LOGIC, "no zero of its prefix has", "floats within bound on 'zeros' data: "
            "-0 and +0 are equal under zeros='either', but a max returns one of its operands "
            "(it was called conforming)"),
    Control("max racing between equal zeros", _CON + "max_racing_between_equal_zeros",
            Cause.NONDETERMINISM, "bits differ", "deterministic, on 'zeros' data for max and "
            "min: each run is allowed (zeros='either'), no two alike"),
    Control("subnormal inputs read as zero", _CON + "subnormal_inputs_read_as_zero",
            Cause.PRECISION, "subnormals read as zero", "floats within bound on 'subnormal' "
            "data; declared subnormals='flush', the same scan conforms"),
    Control("max reading subnormals as zero", _CON + "max_reading_subnormals_as_zero",
            Cause.PRECISION, "subnormals read as zero", "floats within bound on 'subnormal' "
            "data; declared subnormals='flush', the same scan conforms"),
    Control("max declaring flush and keeping subnormals",
            _CON + "max_keeping_subnormals_declared_flushing", Cause.PRECISION, "subnormals kept",
            "floats within bound on 'subnormal' data, where 'flush' is exact for max: the same "
            "scan declaring subnormals='keep' conforms"),
    Control("cumprod reading subnormals as zero", _CON + "cumprod_reading_subnormals_as_zero",
            Cause.PRECISION, "subnormals read as zero", "products within bound on 'powers' "
            "data, by the products' exactness certificate; declared flush, it conforms"),
    Control("recurrence reading subnormals as zero",
            _CON + "recurrence_reading_subnormals_as_zero", Cause.PRECISION,
            "subnormals read as zero", "recurrence on 'subnormal' pairs, past the allowance of "
            "gradual underflow; declared flush, it conforms"),
    Control("leading axis of 3-D put back in C order (N-D)",
            _ROWS + "leading_axis_restored_in_c_order", Cause.LOGIC, "at other places",
            "rows along axis 0 of 3-D input: every value of the exact scan comes back at "
            "another place (it was told only 'differs from its exact scan')"),
    Control("strides ignored (N-D)", _ROWS + "strides_ignored", Cause.LOGIC, "layout",
            "rows only: every 1-D input is contiguous; a transposed, strided, reversed or "
            "Fortran-order view is not"),
    Control("reverse scan ignoring strides (N-D)", _ROWS + "reverse_strides_ignored", Cause.LOGIC,
            "layout", "rows, whose layouts reach a reverse scan as they are: it was handed "
            "each reversed row as a fresh C-contiguous copy"),
    Control("min propagating NaN", _CON + "min_propagating_nan", Cause.CONTRACT,
            "declare --nans propagate", "nan and inf, under the spec's NaN-ignoring rule; "
            "the rule it keeps is named"),
    Control("product carried in 8 bits", _OPS + "product_carried_in_8_bits", Cause.PRECISION,
            "significand bits", "products within bound: no other property checks a product"),
    Control("cumprod with two bugs: carry in 8 bits, a zero absorbing infinities", _OPS +
            "product_in_8_bits_zero_absorbing_infinities", Cause.PRECISION,
            "significand bits", "products within bound for the carry, nan and inf for the "
            "zero (they were one property: the wrong NaN, called a logic error, hid the carry)",
            also=("zero and an infinity",)),
    Control("sum with two tile bugs: infinities made NaN, the last element left out", _SUMS +
            "sum_with_two_tile_bugs", Cause.LOGIC, "differs from the exact", "integers exact "
            "for the last element, nan and inf for the infinities (the twin without them, "
            "wrong only at its last output, was taken to explain every wrong NaN before it)",
            also=("NaN where the exact prefix is",)),
    Control("logcumsumexp through exp", _OPS + "logcumsumexp_through_exp", Cause.PRECISION,
            "it overflows too", "logsumexp within bound: no other property checks a "
            "log-sum-exp; its rounding at n = 1 is found first, and its overflow past log(max) "
            "named beside it"),
    Control("cummax naming the first of equal maxima", _OPS + "cummax_first_index", Cause.LOGIC,
            "last position", "indices, on data with ties: its values are right"),
    Control("initial value in the first tile only", _ROWS + "initial_value_in_the_first_tile_only",
            Cause.LOGIC, "differs from the exact", "integers exact and the bounds, through the "
            "initial value each case draws as its element 0: from the identity it is right"),
    Control("initial value taken from the last element", _ROWS +
            "initial_value_from_the_last_element", Cause.LOGIC, "differs from the exact",
            "integers exact and the bounds: the element an exclusive scan never reads holds a "
            "value other than the initial value (it held the initial value itself)"),
    Control("N-D scan counting a negative axis from the front", _ROWS +
            "negative_axis_from_the_front", Cause.LOGIC, "axis -", "rows, which hands a target "
            "of any axis a negative one half the time (it handed 0 and up)"),
    Control("N-D scan along axis 0 whatever axis it is given", _ROWS +
            "first_axis_whatever_the_axis", Cause.LOGIC, "it scans axis 0 where it is given",
            "rows: each of its rows is right along axis 0, none along the axis it was given"),
    Control("2-D scan declared along its last axis that scans axis 0", _ROWS +
            "first_axis_declared_last", Cause.CONTRACT, "scans axis -2", "integers exact and "
            "each 1-D property: the row of shape (1, n) a 1-D case reaches it as comes back "
            "unchanged, and a fresh (2, 2) input is scanned along axis 0 (it was a logic error "
            "of the 1-D case beside the rows' contract)",
            spec=TargetSpec(axis=-1, ndim=(2,))),
    Control("N-D scan of its input flattened (numpy.cumsum without an axis)", _ROWS +
            "flattened_whatever_the_axis", Cause.CONTRACT, "flattened in C order", "rows: its "
            "1-D answer is the right scan of the input flattened, there and on a fresh input of "
            "two elements an axis (it was a logic error of the shape alone)"),
    Control("N-D scan refusing a negative axis", _ROWS + "negative_axis_refused", Cause.FAULT,
            "refuses a negative axis", "rows: the same call with the axis counted from the "
            "front (it was a fault of the case, shape and axis unnamed)"),
    Control("N-D scan saturating an overflow (satfinite store)", _ROWS +
            "saturating_along_an_axis", Cause.LOGIC, "saturating store", "rows on overflow "
            "data, which rows did not draw (1-D input is right: 'floats within bound' "
            "passes)"),
    Control("integer cumprod losing its carry past 256", _OPS + "cumprod_losing_its_carry_past_256",
            Cause.LOGIC, "differs from the exact", "integers exact on odd factors: even ones "
            "wrap to 0 within 64 factors, where writing zeros agrees"),
    Control("integer cumprod kept in int16", _OPS + "integer_product_kept_in_int16",
            Cause.LOGIC, "as if accumulated in int16", "integers exact, which holds a wrong "
            "integer sum or product to its scan in each narrower integer type"),
    Control("sum promoted after it is taken", _CON + "promoted_after_the_sum", Cause.LOGIC,
            "the promotion must come before", "integers exact, scanned in the promoted type: "
            "the dtype is right, and the same scan of int64 input conforms"),
    Control("cumprod carried across rows (N-D)", _ROWS + "cumprod_carried_across_rows",
            Cause.LOGIC, "mixes rows", "rows, with products judged by their bound: a 1-D input "
            "is one row, and right"),
    Control("cummax indices counted from the batch's start (N-D)", _ROWS + "cummax_flat_indices",
            Cause.LOGIC, "an index other than", "rows, with indices checked: a 1-D input is one "
            "row, and right; the values are right"),
    Control("zeroing its input", _SUMS + "zeroing_its_input", Cause.INPUT_WRITTEN,
            "after the call", "every value property: the target is handed a copy, compared "
            "bit for bit with its input after the call, and judged on the input as it was"),
    Control("adding 1 to its last input and output",
            _SUMS + "adding_one_to_its_last_input_and_output", Cause.INPUT_WRITTEN, "after the call",
            "every value property, as for the zeroing one: its output is the right scan of the "
            "input it leaves"),
    Control("carry not reset after an empty segment",
            _SEG + "carry_not_reset_after_empty_segment", Cause.LOGIC, "segment",
            "segments, on layouts with empty segments (repeated offsets): without one it is "
            "right"),
    Control("segment walk stuck at an empty segment",
            _SEG + "walk_stuck_at_an_empty_segment", Cause.LOGIC, "differs from the exact",
            "segments, on layouts with an empty segment: handed the same segments as flags, "
            "read as offsets, it can come out right by chance on a small layout, which was "
            "told a contract kept on some inputs only ('keeps neither'); a reading of another "
            "kind is held to the same segments twice over too"),
    Control("segment reset one element late on a tile boundary",
            _SEG + "reset_one_late_on_a_tile_boundary", Cause.LOGIC, "segment",
            "segments, on layouts whose segments start exactly on tiles of 128"),
    Control("reverse segmented scan flipping the data, not the offsets",
            _SEG + "reverse_flipping_data_not_offsets", Cause.LOGIC, "segment",
            "segments, judging the reverse scan itself: right on symmetric segments"),
    Control("chunked scan dropping the carry of a chunk whose last segment is empty",
            _SEG + "chunked_dropping_carry_after_empty_last_segment", Cause.LOGIC, "segment",
            "segments, on an empty segment just before a segment that spans a chunk of 64"),
    Control("segmented sum reading offsets where flags are declared",
            _SEG + "offsets_where_flags_are_declared", Cause.CONTRACT,
            "declare --segments offsets", "segments, which hands the same segments as each "
            "other kind of description where the declared one fails (it was told a logic "
            "error in a segment)"),
    Control("segmented sum indexing by offsets where flags are declared",
            _SEG + "offsets_as_indices_where_flags_are_declared", Cause.CONTRACT,
            "raised IndexError on these flags", "segments, which hands a case the target "
            "raised on the same segments as each other kind of description"),
    Control("segmented (T, H) scan reading its input as C-contiguous",
            _SEG + "strides_ignored_along_segments", Cause.LOGIC, "segment", "segments, whose "
            "(T, H, ...) inputs come in the rows' memory layouts (they came C-contiguous)"),
    Control("segmented (T, H) scan resetting only its first 8 heads",
            _SEG + "heads_past_the_first_tile_never_reset", Cause.LOGIC, "column [8]",
            "segments, whose (T, H) inputs now have 9 and 33 heads too (they had 6 at most)"),
    Control("segmented sum turning an infinite total NaN", _SEG + "infinity_plus_finite_as_nan",
            Cause.SPECIALS, "where IEEE arithmetic gives", "segments, which tells a wrong NaN "
            "or infinity by whether finite data in the same segments are right (it was told "
            "'precision lost' beside it)", misread="precision lost",
            # An infinity then a finite value in one segment, no NaN before: the search's
            # 'specials' draws meet it, not the ladder's few cases.
            seconds=5.0),
    Control("segment keys narrowed to int8", _SEG + "keys_narrowed_to_int8", Cause.LOGIC,
            "differ only past their low", "segments, on keys whose neighbours differ only "
            "past their low 8, 16 or 24 bits, and which hands a failing case its keys "
            "narrowed, holding the output to the same bits"),
    Control("group labels narrowed to int32", _SEG + "group_labels_narrowed_to_int32",
            Cause.LOGIC, "differ only past their low 32 bits", "segments, on labels that "
            "differ only past their low 32 bits, and which hands a failing case its labels "
            "narrowed, holding the output to the same bits"),
    Control("groups summed after an unstable sort", _SEG + "groups_after_an_unstable_sort",
            Cause.LOGIC, "in another order than its elements'", "segments, which reads the "
            "order a failing group was scanned in from its outputs, each the running sum up "
            "to it in that order"),
    Control("Blelloch down-sweep with swapped operands", _TUP + "blelloch_down_sweep_swapped",
            Cause.LOGIC, "operand order", "probe monoids: add, max and min forgive the swap"),
    Control("reverse scan in the wrong convention", _TUP + "reverse_in_the_flip_convention",
            Cause.LOGIC, "follows reverse='flip'", "probe monoids: both conventions agree "
                                                     "for a commutative operator"),
    Control("a scan that combines (b, a)", _TUP + "combines_later_first", Cause.LOGIC,
            "operands swapped", "probe monoids: only a non-commutative operator shows it"),
    Control("generic scan storing its carry in int64", _TUP + "carried_in_int64", Cause.LOGIC,
            "its fraction lost", "probe monoids, the signed affine one: only its float "
            "offsets' fractions are lost (every integer leaf survives int64)"),
    Control("generic scan storing its carry in float32", _TUP + "carried_in_float32",
            Cause.LOGIC, "carried in float32", "probe monoids, the signed affine one: only "
            "its float64 offsets have bits that float32 loses"),
    Control("generic scan carrying unsigned leaves as signed", _TUP +
            "unsigned_leaves_as_signed", Cause.LOGIC, "min (uint32)", "probe monoids, the "
            "uint32 min: + and * wrap alike in either type, a compare does not"),
    Control("generic N-D scan reading its leaves as C-contiguous", _TUP +
            "leaves_read_as_c_contiguous", Cause.LOGIC, "memory layouts", "probe monoids, "
            "whose N-D leaves come in the rows' memory layouts (they came C-contiguous)"),
    Control("generic reverse scan refusing a negative axis", _TUP +
            "reverse_refusing_a_negative_axis", Cause.FAULT, "refuses a negative axis",
            "probe monoids, N-D: the same call with the axis counted from the front (as "
            "jax.lax.associative_scan(reverse=True) refused one)"),
    Control("generic N-D scan stacking its rows' scans", _TUP + "rows_stacked", Cause.LOGIC,
            "an empty batch", "probe monoids, whose N-D cases empty one other dimension on "
            "every twelfth seed (they drew none)"),
    Control("identity dropped on one leaf of a tuple", _TUP + "identity_on_the_first_leaf_only",
            Cause.LOGIC, "identity's role dropped", "probe monoids: the sequence hash, whose "
            "second leaf's identity is 1"),
    Control("generic exclusive scan declared inclusive", _TUP + "exclusive_declared_inclusive",
            Cause.CONTRACT, "declare --exclusive", "probe monoids, which hold a wrong scan to "
            "the other inclusivity's exact scan too, on the case and a longer one"),
    Control("generic Hillis-Steele scan one step short", _TUP +
            "hillis_steele_skipping_its_last_step", Cause.LOGIC, "none of the elements before "
            "it combined in", "probe monoids, which hold an output that is its own element "
            "alone to that element"),
    Control("running argmax taking the later of equal maxima", _TUP +
            "running_argmax_taking_the_later_of_equal_maxima", Cause.LOGIC,
            "a tie taken by the later element", "monoid scan, on the monoid's own elements: "
            "the output at a tie is its own element, as a skipped step's is; the result "
            "before it, which the monoid keeps, and the element share their maximum"),
    Control("an operator that is no monoid", _TUP + "fold_of_the_declared_monoid", Cause.OPERATOR,
            "is no monoid", "operator laws, before any scan is judged"),
    Control("missing barrier", f"cu:{_CU / 'missing_barrier.cu'}:1024", Cause.RACE, "data race",
            "racecheck", gpu=True,
            spec=TargetSpec(device="gpu", max_n=1024, dtypes=("float32", "int32"))),
    Control("32-bit index overflow", f"cu:{_CU / 'index_overflow.cu'}:256", Cause.FAULT,
            "past 2**31", "the check past 2**31: an illegal address", gpu=True, spec=_GPU_SPEC),
    Control("unsigned 32-bit index", f"cu:{_CU / 'unsigned_index.cu'}:256", Cause.INDEX_OVERFLOW,
            "past 2**32", "the check past 2**32 only: right at 2**31 + 17, no fault", gpu=True,
            spec=_GPU_SPEC),
    Control("row offsets in 32 bits (N-D)", _ROWS + "row_offsets_in_32_bits", Cause.INDEX_OVERFLOW,
            "product of dimension sizes", "the batch past 2**32 only: the 1-D checks see one "
            "row, the rows property stays below 2**25 elements", gpu=True),
    Control("segment starts times heads in int32 (bos * H)",
            _SEG + "offsets_times_heads_in_32_bits", Cause.INDEX_OVERFLOW, "offsets x heads",
            "segments past 2**31 only: a (T, H) input of 2**31 + 68 elements, int32 offsets "
            "starting segments where bos * H passes 2**31; right in 'segments' and below 2**31",
            # CuPy's elementwise kernels flush float32 subnormals: declared, as CuPy does.
            gpu=True, spec=TargetSpec(segments="offsets", axis=0, device="gpu",
                                      dtypes=("float32", "int32"), subnormals="flush")),
    Control("sign lost past 2**31", f"cu:{_CU / 'sign_lost_past_2_31.cu'}:256", Cause.LOGIC,
            "random integer data", "the random data past 2**31: step data have no sign",
            gpu=True, spec=_GPU_SPEC),
    Control("deadlock-prone chained scan", f"cu:{_CU / 'chained_in_launch_order.cu'}:256",
            Cause.FAULT, "hang", "any size with more tiles than fit on the GPU", gpu=True,
            spec=_GPU_SPEC),
    Control("bounded look-back window", f"cu:{_CU / 'bounded_lookback.cu'}:256", Cause.LOGIC,
            "logic error", "sizes past 262,144: the default largest n of a GPU target", gpu=True,
            spec=_GPU_SPEC),
    Control("out-of-bounds read in the last tile", f"cu:{_CU / 'out_of_bounds_read.cu'}:256",
            Cause.FAULT, "memory error", "memcheck with CuPy's pool off, at a size with a tail",
            gpu=True, spec=_GPU_SPEC),
    Control("output never written", f"cu:{_CU / 'output_never_written.cu'}:256", Cause.LOGIC,
            "never written", "the harness's 0xff fill of every output", gpu=True, spec=_GPU_SPEC),
    Control("padded tail read uninitialised", _SUMS + "padded_tail_read_uninitialised", Cause.FAULT,
            "uninitialised", "initcheck with CuPy's pool off", gpu=True),
)
