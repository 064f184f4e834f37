"""The command line's spec flags: one flag per :class:`~scancheck.targets.spec.TargetSpec`
field, with its name and validation, and the fields a command line names read back as the
overrides of a target's declared spec (a flag not given leaves its field as declared)."""

from __future__ import annotations

import argparse
import re
from collections.abc import Callable
from functools import partial
from typing import Any

from ..core.dtypes import DTYPES, FLOAT_DTYPES, INPUT_DTYPES
from ..core.operators import TARGET_OPERATORS
from ..core.rules import NAN_PREFIXES, NAN_RULES, SUBNORMAL_RULES, ZERO_ORDERS, flushed_dtypes
from ..oracle.monoid_scan import REVERSE_CONVENTIONS

__all__ = ["add_spec_flags", "misplaced_convention", "positive", "reverse_forms",
           "spec_overrides"]


def spec_overrides(args: argparse.Namespace) -> dict[str, Any]:
    """The TargetSpec fields the command line names, and their values: only these replace
    the target's own declared spec (a flag not given leaves its field as declared)."""
    from dataclasses import fields

    from ..targets.spec import TargetSpec

    given = {f.name: getattr(args, _SPEC_DEST + f.name) for f in fields(TargetSpec)
             if hasattr(args, _SPEC_DEST + f.name)}
    if given.get("axis") is not None:
        given["axis"] = {"arg": "arg", "none": None}.get(given["axis"], given["axis"])
        if isinstance(given["axis"], str) and given["axis"] != "arg":
            given["axis"] = int(given["axis"])
    if given.get("segments") == "none":
        given["segments"] = None
    for key in ("dtypes", "promote", "ndim", "accumulates"):
        if key in given:
            given[key] = tuple(given[key])
    return given


def did_you_mean(parser: argparse.ArgumentParser, left: list[str]) -> str:
    """" (did you mean --budget?)" for the flags among ``left`` that begin one of
    ``parser``'s own flags alone (an abbreviation) or are a typo away from one, or ""."""
    import difflib

    flags = [f for a in parser._actions for f in a.option_strings if f.startswith("--")]
    near = []
    for arg in (a.partition("=")[0] for a in left if a.startswith("--")):
        begun = [f for f in flags if f.startswith(arg)]
        near += begun if len(begun) == 1 else difflib.get_close_matches(arg, flags, n=1,
                                                                         cutoff=0.8)
    return f" (did you mean {' or '.join(dict.fromkeys(near))}?)" if near else ""


def block_size(text: str, least: int = 1) -> int:
    """An argparse type: threads per block, a power of two from ``least`` to ``MAX_THREADS``,
    else a one-line usage error (a model built at another size computes no scan)."""
    from ..core.cuda import MAX_THREADS, check_block

    try:
        value = int(text)
        check_block(value)  # the launcher's rule; a LaunchError is a ValueError
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text.strip()!r} is not a power of two from "
                                         f"{least} to {MAX_THREADS} threads") from None
    if value < least:
        raise argparse.ArgumentTypeError(f"{text.strip()!r} is below {least}; allowed: a "
                                         f"power of two from {least} to {MAX_THREADS} threads")
    return value


def pattern(text: str) -> str:
    """An argparse type: a regular expression, else a one-line usage error saying where it
    breaks."""
    try:
        re.compile(text)
    except re.error as exc:
        raise argparse.ArgumentTypeError(f"{text!r} is no regular expression: {exc}") from None
    return text


def positive(kind: type) -> Callable[[str], Any]:
    """An argparse type: a positive ``kind`` (int or float), else a one-line usage error."""
    def parse(text: str) -> Any:
        what = "a positive integer" if kind is int else "a positive, finite number"
        try:
            value = kind(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not {what}") from None
        if not 0 < value < float("inf"):  # NaN fails too
            # It parsed: only the spaces and newlines a number may carry are stripped.
            raise argparse.ArgumentTypeError(f"{text.strip()} is not {what}")
        return value

    parse.__name__ = f"positive {kind.__name__}"
    return parse


def whole(lo: int, hi: int, why: str = "") -> Callable[[str], int]:
    """An argparse type: a whole number from ``lo`` to ``hi``, else a one-line usage error
    naming the range (and ``why`` it ends there, where given)."""
    def parse(text: str) -> int:
        value: int | None
        try:
            value = int(text)
        except ValueError:
            value = None
        if value is None or not lo <= value <= hi:
            raise argparse.ArgumentTypeError(
                f"{text.strip()!r} is not a whole number from {lo} to {hi}"
                + (f" ({why})" if why else ""))
        return value

    parse.__name__ = f"whole number from {lo} to {hi}"
    return parse


def _axis(text: str) -> str:
    """An --axis value: an integer, 'arg', or 'none' (the target scans 1-D arrays)."""
    if text in ("arg", "none") or text.lstrip("-").isdigit():
        return text
    raise argparse.ArgumentTypeError(f"{text!r} is none of: an integer, 'arg', 'none'")


def _segments(text: str) -> str:
    """A --segments value: a segment kind, or 'none' (one unbroken sequence)."""
    from ..targets.spec import SEGMENT_KINDS

    if text in (*SEGMENT_KINDS, "none"):
        return text
    raise argparse.ArgumentTypeError(f"invalid choice: {text!r} (choose from "
                                     f"{', '.join(map(repr, (*SEGMENT_KINDS, 'none')))})")


def _dtype_pair(form: str, example: str) -> Callable[[str], tuple[str, str]]:
    """An argparse type for a value of two dtypes, ``form`` (IN:OUT for --promote, IN:ACC
    for --accumulates), the first an input dtype; an error shows ``example``."""
    first, second = form.split(":")

    def parse(text: str) -> tuple[str, str]:
        parts = tuple(text.split(":"))
        if len(parts) != 2 or not all(parts):
            raise argparse.ArgumentTypeError(f"{text!r} must be {form}, as {example}")
        if parts[0] not in INPUT_DTYPES or parts[1] not in DTYPES:
            raise argparse.ArgumentTypeError(
                f"{text!r}: {first} must be one of {', '.join(INPUT_DTYPES)}; {second} one "
                f"of {', '.join(DTYPES)}")
        return parts  # type: ignore[return-value]

    parse.__name__ = form
    return parse


def _operator(text: str) -> str:
    """An --op value: a built-in operator's name, or module:ATTR naming a scancheck.Monoid."""
    if ":" in text:
        from ..core.monoids import load_monoid

        try:
            load_monoid(text)
        except ValueError as exc:
            raise argparse.ArgumentTypeError(str(exc)) from None
        return text
    if text not in TARGET_OPERATORS:
        raise argparse.ArgumentTypeError(
            f"invalid choice: {text!r} (choose from {', '.join(map(repr, TARGET_OPERATORS))}, "
            f"or module:ATTR naming a scancheck.Monoid)")
    return text


def _reverse(text: str) -> str | bool:
    """A --reverse value: the convention of a reverse scan of a non-commutative operator
    (``true``: none named, the bare flag)."""
    if text == "true":
        return True
    if text not in REVERSE_CONVENTIONS:
        raise argparse.ArgumentTypeError(_no_convention(text))
    return text


def _no_convention(text: str) -> str:
    return (f"invalid choice: {text!r} (choose from "
            f"{', '.join(map(repr, REVERSE_CONVENTIONS))}, or none: --reverse alone)")


def _subnormal_rule(text: str) -> str:
    """A --subnormals value: a key of SUBNORMAL_RULES, or flush:DTYPE,... of float dtypes."""
    try:
        flushed_dtypes(text)
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"invalid choice: {text!r} (choose from {', '.join(map(repr, SUBNORMAL_RULES))}, "
            f"or 'flush:DTYPE,...' of {', '.join(FLOAT_DTYPES)})") from None
    return text


#: Where the spec flags keep their values: ``spec_<field>``, present only when given.
_SPEC_DEST = "spec_"


def add_spec_flags(p: argparse.ArgumentParser) -> None:
    """A flag per TargetSpec field (``--accepts-max-n`` for ``max_n``), each left unset
    unless given, so that only the fields named replace the target's declared spec."""
    from ..targets.contracts import OVERFLOW_RULES
    from ..targets.spec import DEVICES, SEGMENT_KINDS

    g = p.add_argument_group(
        "what the target computes", "each flag replaces that field of the target's own spec "
        "(built-in, scan_spec or SCAN_SPEC); fields not named stay as declared")
    add = partial(_spec_flag, g)
    add("op", type=_operator, metavar="OP", help=f"the operator it scans with: "
        f"{', '.join(TARGET_OPERATORS)}, or module:ATTR naming a scancheck.Monoid (the target "
        f"then takes and returns tuples of arrays)")
    # A field's two flags together are refused, not settled by their order.
    one = g.add_mutually_exclusive_group()
    _spec_flag(one, "inclusive", action=argparse.BooleanOptionalAction,
               help="inclusive (out[k] includes x[k]) or exclusive scan")
    one.add_argument("--exclusive", dest=_SPEC_DEST + "inclusive", action="store_const",
                     const=False, default=argparse.SUPPRESS, help="the same as --no-inclusive")
    add("dtypes", nargs="+", choices=INPUT_DTYPES, metavar="DTYPE",
        help=f"input dtypes it takes: {', '.join(INPUT_DTYPES)}")
    add("deterministic", action=argparse.BooleanOptionalAction,
        help="whether its bits must repeat from run to run")
    add("device", choices=DEVICES, help="cpu: NumPy arrays in and out; gpu: CuPy arrays")
    add("max_n", type=positive(int), metavar="N", help="largest n the target itself accepts "
        "(not --max-n, the largest n searched)")
    add("allows_empty", action=argparse.BooleanOptionalAction,
        help="whether it takes an empty input (and returns an empty scan)")
    add("zeros", choices=tuple(ZERO_ORDERS), help="max, min: how -0 and +0 are ordered")
    add("nans", choices=tuple(NAN_RULES), help="add, mul, max, min: what a NaN input does: "
        "propagate (IEEE), ignore (left out: fmax, nancumsum) or skip (NaN at the NaN, the "
        "rest scanned without it: pandas' skipna)")
    add("nan_prefix", choices=tuple(NAN_PREFIXES), help="with --nans ignore: what an output "
        "whose whole prefix is NaN holds, NaN or the identity (nancumsum, pyarrow)")
    add("subnormals", type=_subnormal_rule, metavar="RULE",
        help="floats: how the target treats subnormals: keep (IEEE, the default), flush "
             "(read as zero, in every float dtype) or flush:DTYPE,... (the dtypes that flush: "
             "flush:float32 for -ftz=true on NVIDIA GPUs); add, mul, logaddexp and the "
             "recurrence may flush, max, min and cummax/cummin must flush every one")
    add("promote", nargs="*", type=_dtype_pair("IN:OUT", "bool:int64"), metavar="IN:OUT",
        help="the target returns OUT for input of IN (bool:int64 int32:int64, as numpy.cumsum "
        "does without dtype=); the exact scan is taken in OUT; none given: no promotion")
    add("axis", type=_axis, metavar="AXIS", help="the target takes N-D arrays and scans this axis; 'arg': it "
        "is called as fn(x, axis); 'none': it scans 1-D arrays")
    one = g.add_mutually_exclusive_group()
    _spec_flag(one, "reverse", nargs="?", const=True, type=_reverse, metavar="flip|suffix",
               help="the target scans from the end; for a non-commutative operator in which "
                    "convention: flip (flip(scan(flip(x))), JAX's and Triton's) or suffix "
                    "(out[k] = x[k] + ... + x[n-1])")
    one.add_argument("--no-reverse", dest=_SPEC_DEST + "reverse", action="store_const",
                     const=False, default=argparse.SUPPRESS, help="the target scans from the start")
    add("indices", action=argparse.BooleanOptionalAction,
        help="max or min: the target returns (values, indices), as cummax and cummin do")
    add("combine", action=argparse.BooleanOptionalAction,
        help="the target takes the combine: called as fn(elems, combine), elems a tuple of "
             "arrays, and driven by scancheck's probe monoids (jax.lax.associative_scan's "
             "form)")
    add("initial", action=argparse.BooleanOptionalAction,
        help="the target takes an initial value: it is called as fn(x, initial=v)")
    add("segments", type=_segments, metavar="KIND",
        help=f"a segmented scan, called as fn(x, s), s one of {', '.join(SEGMENT_KINDS)} "
             f"(offsets: cu_seqlens, int32 and int64 drawn, offsets:int32 or offsets:int64 "
             f"where it takes one; flags: bool heads; keys: runs of equal "
             f"keys; groups: labels in any order), segments along axis 0; 'none': one sequence")
    add("overflow", choices=tuple(OVERFLOW_RULES), help="integer add, mul: wrap (two's "
        "complement) or raise (checked: raises exactly when some prefix overflows)")
    add("ndim", nargs="+", type=positive(int), metavar="RANK",
        help="with --axis: the ranks of array the target takes (2 for DataFrame.cumsum)")
    add("accumulates", nargs="*", type=_dtype_pair("IN:ACC", "float32:float64"),
        metavar="IN:ACC",
        help="float add, mul: input IN is accumulated in the wider ACC and each output "
        "rounded once (float32:float64 for polars); none given: not declared")


def _spec_flag(group: Any, field_name: str, **kw: Any) -> None:
    from ..targets.spec import spec_flag

    group.add_argument(spec_flag(field_name), dest=_SPEC_DEST + field_name,
                       default=argparse.SUPPRESS, **kw)


def reverse_forms(argv: list[str]) -> list[str]:
    """``argv`` with ``--reverse CONVENTION`` as ``--reverse=CONVENTION`` and a bare
    ``--reverse`` as ``--reverse=true``: a convention is optional, and the word after a bare
    ``--reverse`` is a target, never its value."""
    out: list[str] = []
    for i, arg in enumerate(argv):
        if arg == "--":
            return out + argv[i:]
        if out and out[-1] == "--reverse" and arg in REVERSE_CONVENTIONS:
            out[-1] = f"--reverse={arg}"
            continue
        if out and out[-1] == "--reverse":
            out[-1] = "--reverse=true"
        out.append(arg)
    if out and out[-1] == "--reverse":
        out[-1] = "--reverse=true"
    return out


def misplaced_convention(argv: list[str], left: list[str]) -> str | None:
    """The usage error of ``--reverse`` where a word of ``left`` (those the parser placed
    nowhere) followed a bare ``--reverse`` in ``argv``: a convention mistyped, not a target
    (the targets came before); None where none did."""
    end = argv.index("--") if "--" in argv else len(argv)  # past it, every word a target
    after = {word for flag, word in zip(argv[:end], argv[1:end]) if flag == "--reverse"}
    wrong = next((word for word in left if word in after), None)
    return None if wrong is None else f"argument --reverse: {_no_convention(wrong)}"
