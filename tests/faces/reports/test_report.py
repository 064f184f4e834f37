"""The Markdown report: verdicts, and snippets that reproduce each failure with NumPy alone."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import textwrap
from dataclasses import replace

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from scancheck.engine.cases import Budget
from scancheck.engine.conformance import check
from scancheck.faces.reports.markdown import markdown
from scancheck.targets.resolve import load_import_path, resolve
from scancheck.targets.spec import TargetSpec

_USER_SCANS = textwrap.dedent('''
    import numpy as np

    def blocked(x):
        """Each block of 64 outputs misses the previous block's last element."""
        out = np.cumsum(x, dtype=x.dtype)
        for lo in range(64, x.size, 64):
            out[lo:] -= x[lo - 1]
        return out

    def widened_after(x):
        """Sums in the input's own type, then widens to int64."""
        return np.cumsum(x, dtype=x.dtype).astype(np.int64)

    def restarting_product(x):
        """The product starts again at element 64."""
        out = np.cumprod(x, dtype=x.dtype)
        out[64:] = np.cumprod(x[64:], dtype=x.dtype)
        return out

    def reverse_max_first_off(x):
        """A reverse max whose output 0 is x[0] alone."""
        out = np.maximum.accumulate(x[::-1])[::-1].copy()
        out[:1] = x[:1]
        return out

    def padded_max(x):
        """A max that leaves NaN out, over one block of lanes that holds -inf past n: -inf
        where the whole prefix is NaN, but NaN where no lane lies past n (n a power of two
        from 16)."""
        out = np.fmax.accumulate(x)
        if not (x.size >= 16 and x.size & (x.size - 1) == 0):
            out[np.isnan(out)] = -np.inf
        return out

    def padded_max_reverse(x):
        """padded_max of a reverse scan: the lanes past n lie after every suffix."""
        return padded_max(x[::-1])[::-1].copy()

    def infinities_dropped(x):
        """A sum reading infinities as 0."""
        return np.cumsum(np.where(np.isinf(x), 0, x), dtype=x.dtype)

    def initial_added_twice(x, initial):
        """An inclusive sum from an initial value that adds it twice past output 1."""
        out = np.cumsum(x, dtype=x.dtype) + x.dtype.type(initial)
        out[2:] += x.dtype.type(initial)
        return out

    def naive_logsumexp(x):
        """log(cumsum(exp(x))) in float32: -inf where exp underflows, as for -1000."""
        with np.errstate(divide="ignore", over="ignore", invalid="ignore"):
            return np.log(np.cumsum(np.exp(x.astype(np.float32)), dtype=np.float32)
                          ).astype(x.dtype)

    def rows_c_only(x, axis):
        """Reads its input as C-contiguous, whatever its strides."""
        flat = np.frombuffer(np.ascontiguousarray(x).tobytes(), dtype=x.dtype)
        if not x.flags.c_contiguous and x.size:
            flat = np.ascontiguousarray(x.T).ravel()[: x.size]
        return np.cumsum(flat.reshape(x.shape), axis=axis, dtype=x.dtype)
''')


@pytest.fixture
def user_module(tmp_path, monkeypatch):
    (tmp_path / "userscans.py").write_text(_USER_SCANS)
    monkeypatch.syspath_prepend(str(tmp_path))
    yield tmp_path
    sys.modules.pop("userscans", None)


def _snippet_output(report_text: str, where) -> str:
    snippet = re.search(r"```python\n(.*?)```", report_text, re.S).group(1)
    assert "scancheck" not in snippet
    env = dict(os.environ, PYTHONPATH=str(where))
    out = subprocess.run([sys.executable, "-c", snippet], capture_output=True, text=True,
                         env=env, cwd=where, timeout=120)
    _reproduced(snippet, out)
    return out.stdout


def _reproduced(snippet: str, out: subprocess.CompletedProcess) -> None:
    """A snippet holding the output to what the check saw says "still reproduces" last and
    exits 1; one with no value to hold (a shape, say) exits 0."""
    if "seen = " in snippet or "raise SystemExit(status)" in snippet:
        assert out.returncode == 1, out.stderr
        assert out.stdout.strip().splitlines()[-1] == "still reproduces", out.stdout
    else:
        assert out.returncode == 0, out.stderr


@pytest.mark.parametrize("fn, spec, prop", [
    ("blocked", TargetSpec(), "integers exact"),
    ("blocked", TargetSpec(dtypes=("bfloat16", "float16")), "certified exact"),
    ("rows_c_only", TargetSpec(dtypes=("int32",), axis="arg"), "rows"),
    ("widened_after", TargetSpec(dtypes=("int8", "bool"), promote=(("int8", "int64"),
                                                                   ("bool", "int64"))),
     "integers exact"),
    ("restarting_product", TargetSpec(op="mul", dtypes=("int32",)), "integers exact"),
    ("restarting_product", TargetSpec(op="mul", dtypes=("float64",)), "products within bound"),
    # The answer of a reverse scan from output k to the end, of a prefix holding an infinity
    # as IEEE has it, of a scan from an initial value with it (the target called with it).
    ("reverse_max_first_off", TargetSpec(op="max", reverse=True, dtypes=("float32",)),
     "floats within bound"),
    ("infinities_dropped", TargetSpec(dtypes=("float64",)), "nan and inf"),
    ("initial_added_twice", TargetSpec(initial=True, dtypes=("int64",)), "integers exact"),
    # Judged on the input with its specials replaced, which the snippet makes as the check did.
    ("naive_logsumexp", TargetSpec(op="logaddexp", dtypes=("float64",)), "nan and inf"),
])
def test_each_failure_comes_with_a_snippet_that_reproduces_it(user_module, budget, fn, spec, prop):
    target = load_import_path(f"userscans:{fn}", spec)
    rep = check(target, properties=(prop,), budget=budget)
    assert not rep.passed
    text = markdown([rep], user_module / "report.md")
    assert "does not conform" in text and "## Environment" in text
    assert f"Causes, primary first:\n\n1. {rep.verdict.findings[0].line}" in text
    got, exact = re.search(r"output \d+: got (\S+) exact (\S+)", _snippet_output(text, user_module)
                           ).groups()
    want = float(rep.verdict.smallest_case["expected"])
    assert float(got) != float(exact) or np.isnan(float(got)) != np.isnan(want)
    assert float(exact) == want or np.isnan(float(exact)) and np.isnan(want)


def _snippet_of(rep, path) -> str:
    """The first snippet of the Markdown report of ``rep`` written to ``path``."""
    return re.search(r"```python\n(.*?)```", markdown([rep], path), re.S).group(1)


def _told_after(snippet: str, where, write, steps) -> None:
    """The snippet's verdict after each rewrite of its target: ``steps`` of (what ``write``
    makes the target, (exit status, last line))."""
    for body, told in steps:
        write(body)
        assert _run_snippet(snippet, where) == told, body


def _run_snippet(snippet: str, where) -> tuple[int, str]:
    out = subprocess.run([sys.executable, "-c", snippet], capture_output=True, text=True,
                         env=dict(os.environ, PYTHONPATH=str(where)), cwd=where, timeout=120)
    return out.returncode, out.stdout.strip().splitlines()[-1]


@pytest.mark.parametrize("wrong", ["np.cumsum(x, dtype=x.dtype, out=x)", "None"],
                         ids=["writes its input", "returns None"])
def test_a_snippet_of_a_call_that_writes_its_input_or_returns_no_array_holds_it(
        tmp_path, budget, wrong):
    """The snippet of a target that writes into its input, or returns no array, says "still
    reproduces" and exits 1 while it does (git bisect run's bad), 0 once mended."""
    path = tmp_path / "written.py"

    def write(body: str) -> None:
        path.write_text(f"import numpy as np\n\n\ndef scan(x):\n    return {body}\n")

    write(wrong)
    rep = check(load_import_path(f"{path}:scan", TargetSpec(dtypes=("int32",))),
                properties=("integers exact",), budget=budget)
    assert rep.failed, rep.rows()
    _told_after(_snippet_of(rep, tmp_path / "report.md"), tmp_path, write,
                [(wrong, (1, "still reproduces")),
                 ("np.cumsum(x, dtype=x.dtype)", (0, "does not reproduce"))])


_MENDED = {
    # A right answer other than the exact one's rounding: the sequential sum moved up an ulp,
    # within the bound the check allows at an output past 64 terms.
    "float64": "return np.nextafter(np.cumsum(x), np.inf)",
    "int64": "return np.cumsum(x, dtype=x.dtype)",
}


@pytest.mark.parametrize("dtype, prop", [("int64", "integers exact"),
                                         ("float64", "floats within bound")])
def test_a_snippet_tells_a_mended_target_from_one_wrong_with_another_value(
        user_module, budget, dtype, prop):
    """The snippet judges the output as it is now: the value seen, a right one (exact, or
    within the error the check allows there) or another wrong one, each by its own exit
    status; a target mended with another rounding is not called wrong."""
    spec = TargetSpec(dtypes=(dtype,))
    rep = check(load_import_path("userscans:blocked", spec), properties=(prop,), budget=budget)
    assert not rep.passed
    snippet = _snippet_of(rep, user_module / "report.md")
    assert ("allowed = " in snippet) == (dtype == "float64")
    assert _run_snippet(snippet, user_module) == (1, "still reproduces")
    body = "def blocked(x):\n    return np.cumsum(x, dtype=x.dtype) + x.dtype.type(7)\n"
    (user_module / "userscans.py").write_text("import numpy as np\n\n" + body)
    assert _run_snippet(snippet, user_module) == (1, "still wrong, with another value")
    body = f"def blocked(x):\n    {_MENDED[dtype]}\n"
    (user_module / "userscans.py").write_text("import numpy as np\n\n" + body)
    assert _run_snippet(snippet, user_module) == (0, "does not reproduce")


_MENDS = {
    # A max declared zeros='ordered' (-0 < +0) that keeps -0 on a tie: the mend returns +0,
    # which equals the -0 seen.
    "max": (TargetSpec(op="max", dtypes=("float64",), zeros="ordered"),
            "out = np.maximum.accumulate(x)\n    z = np.maximum.accumulate(x == 0)\n"
            "    out[(out == 0) & z] = -0.0\n    return out",
            "return np.maximum.accumulate(x) + 1.0",
            "out = np.maximum.accumulate(x)\n    pos = np.maximum.accumulate((x == 0) & "
            "~np.signbit(x))\n    out[(out == 0) & pos] = 0.0\n    return out"),
    # A product declared overflow='raise' that wraps: the mend raises, the one right answer
    # where a prefix leaves the type.
    # A check off by one (> max + 1): it fails on an input at the type's limits, which the
    # snippet rebuilds, not the case drawn beside it.
    "add": (TargetSpec(op="add", dtypes=("int32",), overflow="raise"),
            "exact = np.cumsum(x.astype(object))\n    if any(v > 2**31 or v < -2**31 - 1 for v "
            "in exact):\n        raise OverflowError('int32 sum overflows')\n"
            "    return np.cumsum(x, dtype=x.dtype)",
            "return np.cumsum(x, dtype=x.dtype) + 1",
            "exact = np.cumsum(x.astype(object))\n    if any(abs(v + 0.5) > 2**31 for v in "
            "exact):\n        raise OverflowError('int32 sum overflows')\n"
            "    return exact.astype(x.dtype)"),
    "mul": (TargetSpec(op="mul", dtypes=("int32",), overflow="raise"),
            "return np.cumprod(x, dtype=x.dtype)",
            "return np.cumprod(x, dtype=x.dtype) + 1",
            "exact = np.cumprod(x.astype(object))\n    if any(abs(v) > 2**31 - 1 for v in "
            "exact):\n        raise OverflowError('int32 product overflows')\n"
            "    return exact.astype(x.dtype)"),
}


@pytest.mark.parametrize("op", _MENDS)
def test_a_snippet_reads_a_mend_as_mended_where_only_one_answer_is_right(user_module, budget,
                                                                         op):
    """A zero of the other sign, where the spec orders zeros, is not the value seen, and a
    call that raises where overflow='raise' is declared and a prefix leaves the type is the
    right answer: each mend reads "does not reproduce", another wrong answer "still wrong"."""
    spec, buggy, other, mended = _MENDS[op]
    module = user_module / "mendable.py"
    module.write_text(f"import numpy as np\n\ndef scan(x):\n    {buggy}\n")
    rep = check(load_import_path("mendable:scan", spec), budget=budget)
    sys.modules.pop("mendable", None)
    assert not rep.passed
    snippet = _snippet_of(rep, user_module / "report.md")
    assert _run_snippet(snippet, user_module) == (1, "still reproduces")
    module.write_text(f"import numpy as np\n\ndef scan(x):\n    {other}\n")
    assert _run_snippet(snippet, user_module) == (1, "still wrong, with another value")
    module.write_text(f"import numpy as np\n\ndef scan(x):\n    {mended}\n")
    assert _run_snippet(snippet, user_module) == (0, "does not reproduce")
    if op != "max":  # a raise for another reason, on any input, mends nothing
        module.write_text("def scan(x):\n    raise TypeError('scan() takes no arrays now')\n")
        assert _run_snippet(snippet, user_module) == (
            125, "raised where no prefix leaves int32 too: check the target again to judge it")


_JUDGED = {
    # A cummax with indices keeping the first of tied maxima: the snippet holds the indices,
    # not the values, to the last position of the running max.
    "indices": (TargetSpec(op="max", dtypes=("int64",), indices=True),
                "v = np.maximum.accumulate(x)\n    first = np.array([int(np.flatnonzero("
                "x[:i + 1] == v[i])[{pick}]) for i in range(x.size)], dtype=np.int64)\n"
                "    return v, first",
                {"buggy": "0", "mended": "-1"}, None),
    # A sum returning int64 for int32 (NumPy's default): the snippet holds the call to the
    # declared dtype.
    "dtype": (TargetSpec(op="add", dtypes=("int32",)), "return np.cumsum(x{pick})",
              {"buggy": "", "other": ").astype(np.float64", "mended": ", dtype=x.dtype"},
              "still wrong, with another shape or dtype"),
    # Declared NaN rules: NaN at a NaN input (skip), NaN where the whole prefix is NaN
    # (ignore): the snippet's exact answer follows them.
    "skip": (TargetSpec(op="add", dtypes=("float64",), nans="skip"),
             "out = np.cumsum(np.where(np.isnan(x), 0, x))\n    {pick}return out",
             {"buggy": "", "mended": "out[np.isnan(x)] = np.nan\n    "}, None),
    "ignore": (TargetSpec(op="max", dtypes=("float64",), nans="ignore"),
               "out = np.fmax.accumulate(x)\n    {pick}return out",
               {"buggy": "out[np.isnan(out)] = -np.inf\n    ", "mended": ""}, None),
}


@pytest.mark.parametrize("what", _JUDGED)
def test_a_snippet_judges_an_index_or_a_dtype_as_the_check_did(user_module, budget, what):
    spec, body, picks, other_told = _JUDGED[what]
    module = user_module / "judged.py"

    def write(state: str) -> None:
        module.write_text("import numpy as np\n\ndef scan(x):\n    "
                          + body.replace("{pick}", picks[state]) + "\n")

    write("buggy")
    rep = check(load_import_path("judged:scan", spec),
                budget=replace(budget, seconds=max(budget.seconds, 1.0)))
    sys.modules.pop("judged", None)
    assert not rep.passed
    snippet = _snippet_of(rep, user_module / "report.md")
    assert _run_snippet(snippet, user_module) == (1, "still reproduces")
    write("mended")
    assert _run_snippet(snippet, user_module) == (0, "does not reproduce")
    if other_told is not None:
        write("other")
        assert _run_snippet(snippet, user_module) == (1, other_told)


def test_a_must_raise_case_right_in_other_runs_is_called_until_it_returns(tmp_path):
    """A case the check saw raise rightly in other runs: the lines call the target until it
    returns (here on its third call), then judge that output."""
    from scancheck.faces.reports.markdown import _raise_expected

    lines = _raise_expected({"got": -2, "reruns right": "2 of 4"}, "scan(x)", "x", "got", 1,
                            "exact = 2**40  # outside int32\n", "int32", 1)
    script = ("import itertools\nimport numpy as np\n_calls = itertools.count(1)\n\n\n"
              "def scan(x):\n    if next(_calls) % 3:\n        raise OverflowError('int32')\n"
              "    return np.array([7, -2], dtype=np.int32)\n\n\n"
              "x = np.array([2**20, 2**20], dtype=np.int32)\n" + "".join(lines))
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                         cwd=tmp_path, timeout=60)
    assert out.returncode == 1 and "calls: 3\noutput 1: got -2\nstill reproduces" in out.stdout, out


def _per_offsets(scan_of: str) -> str:
    """The source of ``scan(x, offsets)`` filling ``out`` segment by segment with the
    expression ``scan_of`` of each segment (``{}`` stands for it), ``out`` not returned."""
    return ("def scan(x, offsets):\n    out = np.empty_like(x)\n"
            "    for a, b in zip(offsets[:-1], offsets[1:]):\n"
            f"        out[a:b] = {scan_of.format('x[a:b]')}\n")


#: A scan whose fifth call in a process adds 7 to its last output: 1-D, and by offsets.
_NOW_AND_THEN = {
    "integers exact": ("def scan(x):\n    out = np.cumsum(x, dtype=x.dtype)\n",
                       TargetSpec(dtypes=("int64",))),
    "segments": (_per_offsets("np.cumsum({}, dtype=x.dtype)"),
                 TargetSpec(segments="offsets", dtypes=("int64",))),
}


@pytest.mark.parametrize("prop", list(_NOW_AND_THEN))
def test_a_failure_right_in_another_run_is_called_again_until_it_shows(user_module, budget,
                                                                       prop):
    """A case the check saw right in another run: its snippet calls the target until the
    output is wrong (the fifth call of a process, one wrong value), then prints and judges
    that output, not the first call's right one."""
    head, spec = _NOW_AND_THEN[prop]
    (user_module / "now_and_then.py").write_text(
        "import itertools\nimport numpy as np\n\n_calls = itertools.count(1)\n\n\n" + head +
        "    if next(_calls) % 5 == 0:\n        out[-1:] += x.dtype.type(7)\n    return out\n")
    rep = check(load_import_path("now_and_then:scan", spec), properties=(prop,), budget=budget)
    sys.modules.pop("now_and_then", None)
    assert rep.verdict.smallest_case["reruns right"].endswith(" of 4"), rep.verdict.smallest_case
    snippet = _snippet_of(rep, user_module / "report.md")
    out = subprocess.run([sys.executable, "-c", snippet], capture_output=True, text=True,
                         env=dict(os.environ, PYTHONPATH=str(user_module)), cwd=user_module,
                         timeout=120)
    shown = re.search(r"calls: \d+\noutput \d+: got (\S+) exact (\S+)\nstill reproduces\n$",
                      out.stdout)
    assert out.returncode == 1 and shown, out
    assert int(shown[1]) == int(shown[2]) + 7, out.stdout


def test_a_file_targets_snippet_runs_from_any_folder_and_skips_where_the_file_is_gone(
        tmp_path, budget, monkeypatch):
    """A target named by a relative path: its snippet loads the file the check loaded (and
    the module beside it that the file imports), run from another folder too, where a file
    of that name is another's (exit 1, still reproduces); with NumPy alone importable (no
    mpmath, which an integer sum never needs); and where the file is gone it exits 125,
    which ``git bisect run`` skips."""
    (tmp_path / "mine").mkdir()
    (tmp_path / "other").mkdir()
    # The scans in a module beside the target's file, which imports them from there.
    (tmp_path / "mine" / "scans_beside_the_target.py").write_text(_USER_SCANS)
    (tmp_path / "mine" / "scans.py").write_text("from scans_beside_the_target import blocked\n")
    (tmp_path / "other" / "scans.py").write_text("raise RuntimeError('not this one')\n")
    monkeypatch.chdir(tmp_path / "mine")
    monkeypatch.setattr(sys, "path", list(sys.path))  # the check puts the file's folder there
    monkeypatch.delitem(sys.modules, "scans_beside_the_target", raising=False)
    rep = check(load_import_path("scans.py:blocked", TargetSpec(dtypes=("int64",))),
                properties=("integers exact",), budget=budget)
    assert not rep.passed
    snippet = _snippet_of(rep, tmp_path / "report.md")
    assert "mpmath" not in snippet
    numpy_alone = "import sys; sys.modules['mpmath'] = None\n" + snippet
    assert _run_snippet(numpy_alone, tmp_path / "other") == (1, "still reproduces")
    (tmp_path / "mine" / "scans.py").unlink()
    status, last = _run_snippet(snippet, tmp_path / "other")
    assert status == 125 and last.startswith("the target cannot be loaded: FileNotFoundError")


def test_a_file_targets_snippet_runs_beside_a_clone_named_as_a_package_it_imports(
        tmp_path, budget, monkeypatch):
    """A target file importing scancheck (for its SCAN_SPEC) beside a clone of scancheck's
    repository, a directory ``scancheck/`` that is no package: the snippet, run in that
    folder, imports the installed scancheck, not an empty namespace package of that name
    (exit 1, still reproduces, not 125 for a target it could not load)."""
    (tmp_path / "scancheck").mkdir()
    (tmp_path / "mine.py").write_text("from scancheck import TargetSpec\n" + _USER_SCANS +
                                      "SCAN_SPEC = TargetSpec(dtypes=('int64',))\n")
    monkeypatch.setattr(sys, "path", list(sys.path))
    rep = check(load_import_path(f"{tmp_path / 'mine.py'}:blocked", TargetSpec(dtypes=("int64",))),
                properties=("integers exact",), budget=budget)
    assert not rep.passed
    snippet = _snippet_of(rep, tmp_path / "report.md")
    assert "import scancheck\n" in snippet
    assert _run_snippet(snippet, tmp_path) == (1, "still reproduces")


def test_each_cause_of_a_report_comes_with_a_snippet_of_its_own(tmp_path, budget, monkeypatch):
    """A scan that raises on an empty input and is wrong from 41 elements on: two causes,
    two snippets, the first raising as the target did on nothing, the second showing the
    wrong output (exit 1, still reproduces)."""
    (tmp_path / "two_bugs.py").write_text(textwrap.dedent("""
        import numpy as np

        def scan(x):
            if x.size == 0:
                raise ValueError("nothing to scan")
            out = np.cumsum(x, dtype=x.dtype)
            out[40:] += 1
            return out
    """))
    monkeypatch.setattr(sys, "path", list(sys.path))
    rep = check(load_import_path(f"{tmp_path / 'two_bugs.py'}:scan", TargetSpec(dtypes=("int64",))),
                properties=("integers exact",), budget=budget)
    assert len(rep.verdict.findings) == 2, rep.verdict.findings
    text = markdown([rep], tmp_path / "report.md")
    snippets = re.findall(r"Reproduce cause (\d) .*?```python\n(.*?)```", text, re.S)
    assert [k for k, _ in snippets] == ["1", "2"]
    out = subprocess.run([sys.executable, "-c", snippets[0][1]], capture_output=True, text=True,
                         cwd=tmp_path, timeout=120)
    assert out.returncode == 1 and "ValueError: nothing to scan" in out.stderr
    assert _run_snippet(snippets[1][1], tmp_path) == (1, "still reproduces")


def test_a_crash_is_reproduced_on_the_input_it_crashed_on(tmp_path, budget):
    """A target that aborts: its report's snippet rebuilds the case the process died in (its
    data drawn again, not n alone), says so, and the call aborts again in a child process:
    the script exits 1, "still reproduces", which git bisect run reads as a bad revision
    (the abort's own 134 would stop it)."""
    from scancheck.isolation.parent import check_isolated

    rep = check_isolated("scancheck.testing:crashing_scan", properties=("integers exact",),
                         budget=budget, timeout=30)
    assert rep.verdict.findings[0].status == "fault"
    snippet = _snippet_of(rep, tmp_path / "report.md")
    assert "# In the check this call did not return: fault in 'integers exact'" in snippet
    out = subprocess.run([sys.executable, "-c", snippet], capture_output=True, text=True,
                         timeout=120)
    assert out.returncode == 1 and out.stdout.splitlines()[-1] == "still reproduces", out
    assert f"killed by signal {int(signal.SIGABRT)}" in out.stdout


def test_a_crash_mended_reads_as_not_reproduced(tmp_path, budget):
    """The child that made the call returned: "does not reproduce", exit 0."""
    from scancheck.isolation.parent import check_isolated

    module = tmp_path / "aborting.py"
    module.write_text("import os\nimport numpy as np\n\ndef scan(x):\n    if len(x) > 3:\n"
                      "        os.abort()\n    return np.cumsum(x, dtype=x.dtype)\n")
    rep = check_isolated(f"{module}:scan", properties=("integers exact",), budget=budget,
                         timeout=30, spec=TargetSpec(dtypes=("int64",)))
    assert rep.verdict.findings[0].status == "fault", rep.rows()
    snippet = _snippet_of(rep, tmp_path / "report.md")
    assert _run_snippet(snippet, tmp_path) == (1, "still reproduces")
    module.write_text("import numpy as np\n\ndef scan(x):\n    return np.cumsum(x, dtype=x.dtype)\n")
    assert _run_snippet(snippet, tmp_path) == (0, "does not reproduce")


def test_a_crash_script_without_fork_makes_the_call_in_its_own_process(tmp_path, budget):
    """Where the platform has no fork (Windows) the script makes the call itself: one that
    raises still reads "still reproduces" (1), one that returns "does not reproduce" (0)."""
    from scancheck.isolation.parent import check_isolated

    module = tmp_path / "aborting.py"
    module.write_text("import os\nimport numpy as np\n\ndef scan(x):\n    if len(x) > 3:\n"
                      "        os.abort()\n    return np.cumsum(x, dtype=x.dtype)\n")
    rep = check_isolated(f"{module}:scan", properties=("integers exact",), budget=budget,
                         timeout=30, spec=TargetSpec(dtypes=("int64",)))
    no_fork = "import os\ndel os.fork\n" + _snippet_of(rep, tmp_path / "report.md")
    module.write_text("import numpy as np\n\ndef scan(x):\n    if len(x) > 3:\n"
                      "        raise MemoryError('out of memory')\n    return np.cumsum(x)\n")
    assert _run_snippet(no_fork, tmp_path) == (1, "still reproduces")
    module.write_text("import numpy as np\n\ndef scan(x):\n    return np.cumsum(x, dtype=x.dtype)\n")
    assert _run_snippet(no_fork, tmp_path) == (0, "does not reproduce")


def test_a_builtin_variant_is_called_through_the_resolver_not_imported():
    """scancheck's own variants ("scancheck:NAME") have no module of that name to import
    from: a script loads them as the check did, through the resolver."""
    from scancheck.faces.reports.markdown import _call, _loaded

    for name in ("scancheck:blelloch", "kernel:blelloch:256", "import:userscans:blocked"):
        imports, call = _call(name, {}, None)
        user = name.startswith("import:")
        assert ("from scancheck.targets.resolve import resolve" in imports) != user, imports
        assert ("from scancheck.targets.resolve import resolve" in _loaded(name)[0]) != user


def test_an_initial_value_snippet_says_how_x_splits(user_module, budget):
    """A target called as fn(x[1:], initial=x[0]): the snippet says what x holds."""
    rep = check(load_import_path("userscans:initial_added_twice",
                                 TargetSpec(initial=True, dtypes=("int64",))),
                properties=("integers exact",), budget=budget)
    snippet = _snippet_of(rep, user_module / "report.md")
    assert "# x below: x[0] is the initial value, x[1:] the data\n" in snippet
    assert _run_snippet(snippet, user_module) == (1, "still reproduces")


def test_an_exclusive_max_snippet_holds_output_0_to_the_identity(user_module, budget):
    """An exclusive max whose output 0 is x[0]: the snippet's max of no values is the type's
    identity, so the mend reads "does not reproduce" and another value "still wrong"."""
    (user_module / "maxes.py").write_text(
        "import numpy as np\n\ndef excl(x):\n"
        "    out = np.r_[x[:1], np.maximum.accumulate(x)[:-1]].astype(x.dtype)\n"
        "    return out\n")
    spec = TargetSpec(op="max", inclusive=False, dtypes=("int64",))
    rep = check(load_import_path("maxes:excl", spec), properties=("integers exact",),
                budget=budget)
    assert not rep.passed and rep.verdict.smallest_case["index"] == 0
    snippet = _snippet_of(rep, user_module / "report.md")
    assert "exact = max((int(v) for v in" in snippet  # integers compared as integers
    for first, told in (("np.iinfo(x.dtype).min", (0, "does not reproduce")),
                        ("np.iinfo(x.dtype).min + 1", (1, "still wrong, with another value"))):
        (user_module / "maxes.py").write_text(
            f"import numpy as np\n\ndef excl(x):\n    lo = {first}\n"
            "    return np.r_[[lo], np.maximum.accumulate(x)[:-1]].astype(x.dtype)\n")
        sys.modules.pop("maxes", None)
        assert _run_snippet(snippet, user_module) == told


def test_a_max_snippet_takes_only_a_zero_its_prefix_holds(tmp_path):
    """Under zeros='either' a max returns one of its operands: +0 where the prefix holds
    only -0 is still wrong, -0 there is right."""
    from scancheck.faces.reports.markdown import _exact_of, _still

    lines = _exact_of("max", True, "float64", 2) + _still({"got": -1.0}, "got_row[2]", True,
                                                           zero="held")
    for now, told in ((0.0, (1, "still wrong, with another value")),
                      (-0.0, (0, "does not reproduce")), (-1.0, (1, "still reproduces"))):
        script = ("import math\nimport numpy as np\n"
                  f"row = np.array([-0.0, -3.0, -0.0])\ngot_row = np.array([-0.0, -0.0, {now!r}])\n"
                  + lines)
        (tmp_path / "held.py").write_text(script)
        assert _run_snippet(f"exec(open({str(tmp_path / 'held.py')!r}).read())", tmp_path) == told


def test_a_snippet_without_a_criterion_of_its_own_does_not_call_a_mended_scan_wrong(
        user_module, budget):
    """A max whose float32 subnormals may flush (a flushed answer is right, the unflushed
    exact one too): the snippet has no criterion for another value, which it leaves to a
    check (125, skipped by git bisect), not wrong."""
    (user_module / "maxes.py").write_text(
        "import numpy as np\n\ndef restart(x):\n    out = np.maximum.accumulate(x)\n"
        "    out[64:] = np.maximum.accumulate(x[64:])\n    return out\n")
    spec = TargetSpec(op="max", dtypes=("float32",), subnormals="flush")
    rep = check(load_import_path("maxes:restart", spec), properties=("floats within bound",),
                budget=budget)
    assert not rep.passed
    snippet = _snippet_of(rep, user_module / "report.md")
    (user_module / "maxes.py").write_text(
        "import numpy as np\n\ndef restart(x):\n    return np.maximum.accumulate(x) + 1\n")
    sys.modules.pop("maxes", None)
    assert _run_snippet(snippet, user_module) == (
        125, "another value, not the exact one: check the target again to judge it")


def test_a_logsumexp_snippet_holds_a_mend_to_the_checks_bound(user_module, budget):
    """A log-cumsum-exp that counts the term at 64 twice: its snippet reads the value seen,
    a float64 scan rounded once (within the bound, not the exact answer's rounding) as
    mended, another value as still wrong."""
    module = user_module / "lse.py"

    def write(body: str) -> None:
        module.write_text(f"import numpy as np\n\ndef scan(x):\n    {body}\n")
        sys.modules.pop("lse", None)

    write("y = np.r_[x[:65], x[64:]]\n    out = np.logaddexp.accumulate(y)\n"
          "    return np.r_[out[:64], out[65:]].astype(x.dtype)")
    rep = check(load_import_path("lse:scan", TargetSpec(op="logaddexp", dtypes=("float32",))),
                properties=("logsumexp within bound",), budget=budget)
    assert not rep.passed and rep.verdict.smallest_case.get("allowed error") is not None
    snippet = _snippet_of(rep, user_module / "report.md")
    assert _run_snippet(snippet, user_module) == (1, "still reproduces")
    _told_after(snippet, user_module, write, [
        ("return (np.logaddexp.accumulate(x.astype(np.float64)) + 1e-3).astype(x.dtype)",
         (1, "still wrong, with another value")),
        ("return np.logaddexp.accumulate(x.astype(np.float64)).astype(x.dtype)",
         (0, "does not reproduce"))])


@pytest.mark.parametrize("fn, reverse", [("padded_max", False), ("padded_max_reverse", True)])
def test_a_nan_rule_broken_on_an_input_opened_with_nan_is_reproduced_on_that_input(
        user_module, budget, fn, reverse):
    # The data rarely open with NaN: the check opens the case's input with NaN itself (n = 16
    # here, where no lane lies past n), and the snippet must call the target on that input.
    spec = TargetSpec(op="max", reverse=reverse, dtypes=("float64",), nans="ignore",
                      nan_prefix="identity")
    rep = check(load_import_path(f"userscans:{fn}", spec), properties=("nan and inf",),
                budget=budget)
    case = rep.verdict.smallest_case
    assert not rep.passed and case.get("lead nans") and case["n"] == 16, rep.verdict
    out = _snippet_output(markdown([rep], user_module / "report.md"), user_module)
    assert f"output {case['index']}: got nan" in out


def test_a_conforming_target_gets_no_snippet(tmp_path, budget):
    rep = check(load_import_path("numpy:cumsum", TargetSpec(dtypes=("float64",))),
                properties=("floats within bound",), budget=budget)
    text = markdown([rep], tmp_path / "r.md")
    assert "Conforms" in text and "```python" not in text


def test_what_a_passing_property_found_is_stated_whole_beside_the_verdict(tmp_path, budget):
    rep = check(load_import_path("numpy:cumsum", TargetSpec(dtypes=("float16",))),
                properties=("floats within bound",), budget=replace(budget, max_n=4096))
    (note,) = rep.notes
    assert note.startswith("accumulation float16: some partial sums rounded to float16 (")
    text = markdown([rep], tmp_path / "r.md")
    assert f"Found beside the verdict:\n\n- {note}\n" in text
    assert json.loads(rep.to_json())["verdict"]["notes"] == [note]


def test_a_large_input_is_written_beside_the_report(user_module, budget, monkeypatch):
    monkeypatch.setattr("scancheck.faces.reports.markdown.INLINE_BYTES", 64)
    monkeypatch.setattr("scancheck.faces.reports.markdown.SHOWN_ELEMENTS", 0)
    rep = check(load_import_path("userscans:blocked", TargetSpec(dtypes=("float32",))),
                properties=("certified exact",), budget=budget)
    text = markdown([rep], user_module / "report.md")
    assert "np.load(" in text and list((user_module / "report-inputs").glob("case-0.npy"))
    assert "output" in _snippet_output(text, user_module)


def test_a_small_input_is_written_as_its_values(user_module, budget):
    rep = check(load_import_path("userscans:initial_added_twice",
                                 TargetSpec(initial=True, dtypes=("int64",))),
                properties=("integers exact",), budget=budget)
    n = rep.verdict.smallest_case["n"]
    text = markdown([rep], user_module / "report.md")
    values = r"(-?\d+, ){" + str(n - 1) + r"}-?\d+"
    assert n <= 32 and re.search(r"x = np\.array\(\[" + values + r'\], dtype=np\.dtype\("int64"\)\)',
                                 text), text
    assert "base64" not in text and "output" in _snippet_output(text, user_module)


_SHOWN_DTYPES = ("float16", "float32", "float64", "int8", "uint16", "int64", "uint64", "bool")


@given(st.sampled_from(_SHOWN_DTYPES).flatmap(lambda d: hnp.arrays(
    np.dtype(d), hnp.array_shapes(min_dims=1, max_dims=2, max_side=6))))
def test_values_written_out_rebuild_the_input_bit_for_bit(x):
    """Every value, -0.0, infinities and subnormals included; none where a NaN's payload
    would be lost or the input is past the size a reader reads."""
    from scancheck.faces.reports.markdown import SHOWN_ELEMENTS, _shown

    shown = _shown(x)
    has_nan = x.dtype.kind == "f" and bool(np.isnan(x).any())
    assert (shown is None) == (has_nan or x.size > SHOWN_ELEMENTS)
    if shown is not None:
        back = eval(shown, {"np": np})
        assert back.dtype == x.dtype and back.shape == x.shape
        assert back.tobytes() == x.tobytes()


def test_a_failure_under_a_probe_monoid_is_reproduced_by_drawing_it_again(tmp_path, budget):
    """The snippet draws the case again from its monoid and seed, calls the target and holds
    the output the report names to the value seen: "still reproduces", exit status 1."""
    target = load_import_path("scancheck.controls.tuples:combines_later_first", None)
    rep = check(target, properties=("probe monoids",), budget=budget)
    text = markdown([rep], tmp_path / "report.md")
    assert "the case drawn again from its monoid and seed" in text
    snippet = text.split("```python\n")[1].split("```")[0]
    out = subprocess.run([sys.executable, "-c", snippet], capture_output=True, text=True,
                         timeout=120, cwd=tmp_path)
    assert (out.returncode, out.stdout.splitlines()[-1]) == (1, "still reproduces"), out
    got = re.search(r"got \(([^)]*)\)", out.stdout).group(1)
    assert [int(v) for v in got.split(",") if v.strip()] == rep.verdict.smallest_case["got"]


_MATRICES = textwrap.dedent('''
    import numpy as np
    from scancheck import Monoid, TargetSpec

    def matmul2(a, b):
        """2x2 matrices mod 2**32, row-major leaves."""
        a0, a1, a2, a3 = a
        b0, b1, b2, b3 = b
        return (a0 * b0 + a1 * b2, a0 * b1 + a1 * b3, a2 * b0 + a3 * b2, a2 * b1 + a3 * b3)

    one = np.uint32(1)
    MAT2 = Monoid(matmul2, (one, np.uint32(0), np.uint32(0), one), name="2x2 mod 2**32")

    def scan(elems):
        leaves = [np.array(v) for v in elems]
        for k in range(1, len(leaves[0])):
            a, b = (tuple(v[k - 1] for v in leaves), tuple(v[k] for v in leaves))
            for v, w in zip(leaves, matmul2(*ORDER(a, b))):
                v[k] = w
        return tuple(leaves)

    scan.scan_spec = TargetSpec(op=MAT2)
''')


def test_a_monoid_snippet_judges_a_mend_from_any_folder(tmp_path, budget):
    """A user's monoid scan in a file, its operands swapped: the snippet, run from another
    folder, says "still reproduces" (1), then "does not reproduce" (0) once the file is
    mended, "still wrong, with another value" (1) for another wrong scan."""
    home, elsewhere = tmp_path / "home", tmp_path / "elsewhere"
    home.mkdir(), elsewhere.mkdir()
    module = home / "mats.py"

    def write(order: str) -> None:
        module.write_text(_MATRICES.replace("ORDER(a, b)", order))

    write("(b, a)")
    rep = check(load_import_path(f"{module}:scan", None), properties=("monoid scan",),
                budget=budget)
    assert not rep.passed
    snippet = _snippet_of(rep, home / "report.md")
    assert _run_snippet(snippet, elsewhere) == (1, "still reproduces")
    # Each body of a length of its own: a module's cached bytecode is checked by its
    # source's size and mtime, which a rewrite within the same second leaves as it was.
    _told_after(snippet, elsewhere, write, [
        ("(a, a)[:2]", (1, "still wrong, with another value")),
        ("tuple((a, b))", (0, "does not reproduce"))])


def test_a_broken_law_snippet_exits_1_while_it_breaks_from_any_folder(tmp_path, budget,
                                                                       monkeypatch):
    """A user's operator that is no monoid, named by a path relative to the check's folder:
    its snippet, run from another folder, loads the same file, prints the law and exits 1
    while the law breaks, 0 once the operator is mended."""
    home, elsewhere = tmp_path / "home", tmp_path / "elsewhere"
    home.mkdir(), elsewhere.mkdir()
    module = home / "ops.py"
    body = ("import numpy as np\nfrom scancheck import Monoid\n\n"
            "OP = Monoid(lambda a, b: (a[0] {op} b[0],), (np.int64(0),), name='op')\n\n"
            "def scan(elems):\n    return (np.cumsum(elems[0], dtype=elems[0].dtype),)\n")
    module.write_text(body.format(op="-"))
    monkeypatch.chdir(home)
    rep = check(load_import_path("ops.py:scan", TargetSpec(op="ops.py:OP")),
                properties=("operator laws",), budget=budget)
    sys.modules.pop("ops", None)
    assert rep.verdict.findings[0].source == "operator laws", rep.rows()
    snippet = _snippet_of(rep, home / "report.md")
    assert _run_snippet(snippet, elsewhere) == (1, "still reproduces")
    module.write_text(body.format(op="+  "))
    assert _run_snippet(snippet, elsewhere) == (0, "does not reproduce")
    module.unlink()
    assert _run_snippet(snippet, elsewhere)[0] == 125


def test_a_seen_value_that_is_no_finite_number_is_written_as_one():
    from scancheck.faces.reports.markdown import _tuple_literal

    values = (float("inf"), -float("inf"), float("nan"), 1.5)
    assert eval(_tuple_literal(values))[:2] == values[:2]  # noqa: S307 - our own literal
    assert _tuple_literal((float("inf"),)) == "(float('inf'),)"


_SEGMENTED_SCANS = textwrap.dedent('''
    import numpy as np

    def ignores(x, seg):
        """One scan over the whole of axis 0: right on the first segment only."""
        return np.cumsum(x, axis=0, dtype=x.dtype)

    def ignores_reverse(x, seg):
        return np.flip(np.cumsum(np.flip(x, 0), axis=0, dtype=x.dtype), 0)
''')


def _segment_snippet_run(report_text: str, where) -> tuple[str, str]:
    snippet = re.search(r"```python\n(.*?)```", report_text, re.S).group(1)
    out = subprocess.run([sys.executable, "-c", snippet], capture_output=True, text=True,
                         cwd=where, timeout=120)
    assert "seen = " in snippet, snippet
    _reproduced(snippet, out)
    column, got, exact = re.search(r"output \d+(, column \d+)?: got (\S+) exact (\S+)",
                                   out.stdout).groups()
    return snippet, (got, exact, column is not None)


def _same_as_case(rep, got: str, exact: str, column: bool) -> None:
    """The snippet's output is the report's wrong one, and its exact value the oracle's; it
    names a column where the input has more than one dimension."""
    case = rep.verdict.smallest_case
    assert column == (len(case["shape"]) > 1), case["shape"]
    dt = np.dtype(case["dtype"])
    read = int if dt.kind in "iu" else float  # int64 values past 2**53
    assert np.asarray(read(got)).astype(dt) == np.asarray(case["got"]).astype(dt), (got, case)
    assert np.asarray(read(exact)).astype(dt) == np.asarray(case["expected"]).astype(dt)
    assert read(got) != read(exact)


@pytest.mark.parametrize("fn, spec", [
    ("ignores", TargetSpec(segments="flags", dtypes=("int64",))),
    ("ignores", TargetSpec(segments="keys", dtypes=("float64",))),
    ("ignores", TargetSpec(segments="offsets", axis=0, dtypes=("float32",))),
    ("ignores_reverse", TargetSpec(segments="groups", reverse=True, dtypes=("int32",))),
])
def test_a_segmented_failure_is_reproduced_with_its_segments(tmp_path, budget, fn, spec):
    """The snippet holds the shrunk input and its description (flags, keys, offsets of a
    (T, H) input, groups of a reverse scan), loads the file's function, calls fn(x, seg)
    and prints the failing output beside the exact scan of its segment alone: the report's
    wrong value, and the oracle's."""
    (tmp_path / "segscans.py").write_text(_SEGMENTED_SCANS)
    rep = check(load_import_path(f"{tmp_path / 'segscans.py'}:{fn}", spec),
                properties=("segments",), budget=budget)
    assert not rep.passed and rep.verdict.source == "segments"
    text = markdown([rep], tmp_path / "report.md")
    snippet, told = _segment_snippet_run(text, tmp_path)
    assert "scancheck" not in snippet and "seg = np.array(" in snippet
    _same_as_case(rep, *told)


def test_a_segmented_case_handed_as_another_kind_is_rebuilt_as_it_was_handed(tmp_path, budget):
    """A smallest case the check handed as another kind of description than the spec's (as
    it does under a contract it tries, flags where offsets are declared) is rebuilt as
    that kind: the snippet reproduces it (read as the spec's kind, it raised)."""
    (tmp_path / "segscans.py").write_text(_SEGMENTED_SCANS)
    rep = check(load_import_path(f"{tmp_path / 'segscans.py'}:ignores",
                                 TargetSpec(segments="flags", dtypes=("int64",))),
                properties=("segments",), budget=budget)
    assert rep.verdict.smallest_case["segments"] == "flags"
    rep = replace(rep, spec={**rep.spec, "segments": "offsets"})
    snippet, told = _segment_snippet_run(markdown([rep], tmp_path / "report.md"), tmp_path)
    assert "dtype=np.bool)  # flags" in snippet, snippet
    _same_as_case(rep, *told)


def test_a_segmented_snippet_orders_zeros_as_the_spec_declares(tmp_path, budget):
    """A segmented max declared zeros='ordered' that keeps -0 over a later +0: the exact
    answer printed is +0, and the mended target does not reproduce."""
    keeps_first = ("def segmax(x, flags):\n    out, acc = np.empty_like(x), None\n"
                   "    for i, v in enumerate(x):\n"
                   "        acc = v if i == 0 or flags[i] or v > acc or np.isnan(v) else acc\n"
                   "        out[i] = acc\n    return out\n")
    (tmp_path / "segz.py").write_text("import numpy as np\n\n\n" + keeps_first)
    spec = TargetSpec(op="max", dtypes=("float64",), segments="flags", zeros="ordered")
    rep = check(load_import_path(f"{tmp_path / 'segz.py'}:segmax", spec),
                properties=("segments",), budget=budget)
    assert not rep.passed and rep.verdict.source == "segments"
    snippet = _snippet_of(rep, tmp_path / "report.md")
    out = subprocess.run([sys.executable, "-c", snippet], capture_output=True, text=True,
                         cwd=tmp_path, timeout=120)
    assert out.returncode == 1 and re.search(r"got -0\.0 exact 0\.0\nstill reproduces", out.stdout)
    mended = keeps_first.replace("v > acc", "(v, not np.signbit(v)) > (acc, not np.signbit(acc))")
    (tmp_path / "segz.py").write_text("import numpy as np\n\n\n" + mended)
    assert _run_snippet(snippet, tmp_path) == (0, "does not reproduce")


_SEGMENTED_FAULTS = """
import numpy as np


def one_past(x, offsets):
    heads = np.zeros(len(x), dtype=bool)
    heads[offsets[:-1]] = True  # an offset equal to len(x): an IndexError
    return np.cumsum(x, dtype=x.dtype)
"""


def test_a_segmented_fault_is_reproduced_from_the_input_its_seed_drew(tmp_path, capsys):
    """A target raising on its segments keeps no shrunk input: the snippet rebuilds the one
    the case's seed drew and makes the call that raised; the terminal says so only where a
    snippet is written."""
    from scancheck.faces.cli.main import main

    (tmp_path / "segfault.py").write_text(_SEGMENTED_FAULTS)
    target = f"{tmp_path / 'segfault.py'}:one_past"
    report = tmp_path / "report.md"
    main(["check", target, "--segments", "offsets", "--dtypes", "int32", "--no-allows-empty",
          "--budget", "2", "--max-n", "64", "--report", str(report)])
    out = capsys.readouterr().out
    assert "fault in 'segments': raised IndexError" in out, out
    assert f"({report} holds a script that rebuilds it)" in " ".join(out.split()), out
    snippet = re.search(r"```python\n(.*?)```", report.read_text(), re.S).group(1)
    done = subprocess.run([sys.executable, "-c", snippet], capture_output=True, text=True,
                          cwd=tmp_path, timeout=120)
    assert done.returncode == 1 and "IndexError" in done.stderr, (done.stdout, done.stderr)


SEG_CONTROLS = ["carry_not_reset_after_empty_segment", "reset_one_late_on_a_tile_boundary",
                "reverse_flipping_data_not_offsets",
                "chunked_dropping_carry_after_empty_last_segment"]


@pytest.mark.parametrize("name", SEG_CONTROLS)
def test_each_segmented_control_is_reproduced_standalone(tmp_path, name):
    """The controls' shrunk cases (129 elements for the tile boundary one) reproduce too."""
    from scancheck.controls import CONTROLS

    (control,) = [c for c in CONTROLS if c.locator.endswith(":" + name)]
    rep, caught = control.check(isolated=False, budget=Budget(3))
    assert caught
    _, told = _segment_snippet_run(markdown([rep], tmp_path / "report.md"), tmp_path)
    _same_as_case(rep, *told)


# -- the plain library call of every built-in library target ----------------------------

from scancheck.adapters import builtin_targets, reproducer_call  # noqa: E402

_BUILTINS = builtin_targets()
#: Library targets with a call to show: scancheck's kernels and models, scans over tuples
#: (their reproducer draws the monoid again), segmented ones (the report shows the shrunk
#: input and its description), the sharded JAX scan (scancheck's own stitching) and fla's
#: chunk cumsums (a [1, T, H] layout, a pinned autotuning configuration and, for the local
#: one, carries added on the host: no one-line call) aside.
_LIBRARY = [name for name, t in _BUILTINS.items()
            if not name.startswith(("scancheck:", "model:", "fla ")) and not t.spec.combine
            and t.spec.segments is None and "sharded" not in name]
#: What names each library's call in its snippet.
_LIBRARY_WORDS = {"numpy": "np.", "cupy": "cp.", "torch": "torch.", "jax": "jax",
                  "itertools": "itertools.accumulate", "dask": "da.cumsum", "pandas": "pd.",
                  "polars": "pl.Series", "pyarrow": "pc.", "numba": "numba.njit",
                  "triton": "import triton"}


def test_the_library_targets_are_many_and_each_library_is_among_them():
    libraries = {re.split(r"[. ]", name)[0] for name in _LIBRARY}
    assert libraries == set(_LIBRARY_WORDS), libraries


@pytest.mark.parametrize("name", _LIBRARY)
def test_every_builtin_library_targets_snippet_is_its_library_call_and_gives_its_answer(name):
    """The reproducer shows the library's own call (no adapter of scancheck's), and that call
    returns bit for bit what the target's adapter returns, on its own input."""
    imports, call = reproducer_call(name)
    text = imports + call
    assert "scancheck" not in text and "resolve(" not in text
    assert _LIBRARY_WORDS[re.split(r"[. ]", name)[0]] in text
    verb = re.search(r"cum\w+|accumulate|associative_scan|scan", name).group(0)
    assert verb.rstrip("()") in call, (verb, call)
    target = _BUILTINS[name]
    if target.unavailable:
        pytest.skip(f"{name}: {target.unavailable}")
    spec = target.spec
    dtype = next((d for d in ("float64", "int64", "float32", "int32") if d in spec.dtypes),
                 spec.dtypes[0])
    x = np.random.default_rng(0).integers(-5, 6, (5, 3) if spec.ndim else 17).astype(dtype)
    try:
        if spec.initial:
            want = target.fn(x[1:], x[0])
        else:
            want = target.fn(x, 0) if spec.axis == "arg" else target.fn(x)
    except Exception as exc:  # a library's known bug on this input: the call raises it too
        want = exc
    space: dict = {"np": np}
    x64 = "jax_enable_x64" in imports
    try:
        exec(imports, space)
        if isinstance(want, Exception):
            with pytest.raises(type(want)):
                eval(call.replace("AXIS", "0"), space | {"x": x.copy()})
            return
        got = eval(call.replace("AXIS", "0"), space | {"x": x.copy()})
    finally:
        if x64:  # the snippet turns it on for its own process; this one goes on without
            import jax

            jax.config.update("jax_enable_x64", False)
    for g, w in zip(*((got, want) if isinstance(want, tuple) else ((got,), (want,)))):
        g, w = np.asarray(g), np.asarray(w)
        assert g.dtype == w.dtype and g.shape == w.shape and np.array_equal(g, w), (g, w)


def test_a_pandas_deviation_is_reproduced_with_pandas_own_call(tmp_path):
    """pandas' skipna, left undeclared, is a contract difference; the report reproduces it
    with ``pd.Series(x).cumsum()``, not scancheck's adapter."""
    from dataclasses import replace

    from scancheck.targets.resolve import resolve

    target = _BUILTINS["pandas Series.cumsum()"]
    if target.unavailable:
        pytest.skip(f"pandas Series.cumsum(): {target.unavailable}")
    target = resolve("pandas Series.cumsum()")
    target = replace(target, spec=replace(target.spec, nans="propagate", dtypes=("float64",)))
    rep = check(target, budget=Budget(0.1, max_n=256))
    assert not rep.passed and rep.verdict.cause.name == "CONTRACT", rep.diagnosis
    text = markdown([rep], tmp_path / "r.md")
    assert "pd.Series(x).cumsum().to_numpy()" in text and "resolve(" not in text


def test_the_json_report_is_standard_json_its_infinities_named(tmp_path, budget, monkeypatch):
    """A scan whose first output is -inf: the failing case's values hold it, and the report's
    JSON names it "-inf", as standard JSON (and every parser but Python's default) requires,
    not as the bare -Infinity json writes."""
    (tmp_path / "minus.py").write_text("import numpy as np\n\n\ndef scan(x):\n"
                                       "    y = np.cumsum(x)\n    y[:1] = -np.inf\n    return y\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    rep = check(load_import_path("minus:scan", TargetSpec(dtypes=("float32",))),
                properties=("floats within bound",), budget=budget)
    assert not rep.passed

    def refuse(name):
        raise ValueError(f"{name} is no JSON number")

    text = rep.to_json()
    data = json.loads(text, parse_constant=refuse)
    assert '"-inf"' in text, text[:2000]
    assert data["verdict"]["word"] == "DOES NOT CONFORM"


#: A float sum in blocks of ``{block}`` elements, each block's total carried on: 1-D, and
#: each segment alike under offsets.
_VARYING = {
    "deterministic": ("def scan(x):\n    return _blocked(x)\n", TargetSpec(dtypes=("float32",))),
    "segments": (_per_offsets("_blocked({})") + "    return out\n",
                 TargetSpec(segments="offsets", dtypes=("float32",))),
}


@pytest.mark.parametrize("prop", list(_VARYING))
def test_a_snippet_of_a_non_deterministic_scan_holds_runs_to_each_other(user_module, budget,
                                                                        prop):
    """No value is wrong where bits differ between runs: the snippet compares runs of one
    input (and segments), "still reproduces" while they differ and "does not reproduce"
    once they agree, whatever value each run returns; the case names each run's value, none
    of them expected."""
    module = user_module / "varying.py"
    body, spec = _VARYING[prop]
    varying = ("import numpy as np\n_rng = np.random.default_rng()\n\ndef _blocked(x):\n"
               "    b = {block}\n    out, carry = np.empty_like(x), x.dtype.type(0)\n"
               "    for s in range(0, len(x), b):\n"
               "        out[s:s + b] = np.cumsum(x[s:s + b], dtype=x.dtype) + carry\n"
               "        carry = out[min(s + b, len(x)) - 1]\n    return out\n\n" + body)
    module.write_text(varying.format(block="int(_rng.choice([2, 3, 5, 7]))"))
    rep = check(load_import_path("varying:scan", spec), properties=(prop,), budget=budget)
    sys.modules.pop("varying", None)
    assert rep.verdict.cause is not None and rep.verdict.cause.name == "NONDETERMINISM", rep.rows()
    case = rep.verdict.smallest_case
    assert {"run 1", "run 2"} <= set(case) and "expected" not in case, case
    snippet = _snippet_of(rep, user_module / "report.md")
    assert _run_snippet(snippet, user_module) == (1, "still reproduces")
    module.write_text(varying.format(block="3"))  # one order every run, another rounding
    assert _run_snippet(snippet, user_module) == (0, "does not reproduce in 50 runs")


@pytest.mark.parametrize("locator", ["model:kogge_stone:128:add", "model:kogge_stone:64:max"])
def test_a_snippet_of_a_kernel_at_another_block_or_operator_loads_that_launch(tmp_path,
                                                                               locator):
    """Its shown name says the block and operator in words the resolver does not read: the
    script loads it by the name it was checked by, and holds its output (right: a model) to
    the case."""
    from scancheck.engine.diagnosis import PropertyResult
    from scancheck.engine.report import ConformanceReport

    target = resolve(locator)
    assert target.name != locator.rsplit(":", 2)[0]  # named by its block or operator
    rep = ConformanceReport(target.name, {**vars(target.spec)}, [
        PropertyResult("integers exact", "fail", "differs from the exact scan",
                       {"n": 5, "dtype": "int32", "data": "integers", "seed": 1, "index": 4,
                        "got": 7, "expected": 8}, cause="LOGIC", reason="WRONG_VALUE")],
        locator=locator)
    assert _run_snippet(_snippet_of(rep, tmp_path / "report.md"), tmp_path) == (
        0, "does not reproduce")


def test_a_snippet_of_a_hang_exits_1_once_the_checks_timeout_has_passed(user_module):
    """A call that never returns ends the snippet with status 1 after the check's timeout
    (git bisect run reads a bad revision), and a mended target's returns with 0."""
    from scancheck.engine.diagnosis import PropertyResult
    from scancheck.engine.report import ConformanceReport

    module = user_module / "hanging.py"
    module.write_text("import time\n\ndef scan(x):\n    while True:\n        time.sleep(1)\n")
    rep = ConformanceReport("hanging:scan", {**vars(TargetSpec(dtypes=("int64",)))}, [
        PropertyResult("integers exact", "hang", "the target gave no answer in 2 s at n = 5",
                       {"n": 5, "dtype": "int64", "data": "integers", "seed": 1},
                       cause="FAULT", timeout=2.0)])
    snippet = _snippet_of(rep, user_module / "report.md")
    assert "faulthandler.dump_traceback_later(2, exit=True)" in snippet
    ran = subprocess.run([sys.executable, "-c", snippet], capture_output=True, text=True,
                         env=dict(os.environ, PYTHONPATH=str(user_module)), cwd=user_module,
                         timeout=60)
    assert ran.returncode == 1 and "Timeout" in ran.stderr, ran.stderr
    module.write_text("import numpy as np\n\ndef scan(x):\n    return np.cumsum(x)\n")
    assert subprocess.run([sys.executable, "-c", snippet], capture_output=True,
                          env=dict(os.environ, PYTHONPATH=str(user_module)), cwd=user_module,
                          timeout=60).returncode == 0


def test_a_snippet_of_a_segment_description_read_as_another_kind_judges_its_output(
        user_module, budget):
    """Told 'reads its segments as offsets' where flags are declared, the script rebuilds the
    wrong output of the flags and holds it to the exact scan of its segment: "still
    reproduces" (1) while the target reads offsets, "does not reproduce" (0) once it reads
    its flags."""
    module = user_module / "segscan.py"
    runs = ("import numpy as np\n\ndef scan(x, seg):\n{heads}"
            "    starts = [0, *(int(i) for i in np.flatnonzero(heads) if i > 0), len(x)]\n"
            "    out = np.zeros_like(x)\n    for a, b in zip(starts, starts[1:]):\n"
            "        out[a:b] = np.cumsum(x[a:b], axis=0, dtype=x.dtype)\n    return out\n")
    as_offsets = ("    heads = np.zeros(len(x), bool)\n    o = np.asarray(seg, np.int64)\n"
                  "    live = (o[:-1] < len(x)) & (np.diff(o) > 0)\n    heads[o[:-1][live]] = True\n")
    module.write_text(runs.format(heads=as_offsets))
    spec = TargetSpec(dtypes=("int64",), segments="flags")
    rep = check(load_import_path("segscan:scan", spec), properties=("segments",), budget=budget)
    sys.modules.pop("segscan", None)
    assert rep.verdict.cause is not None and rep.verdict.cause.name == "CONTRACT", rep.rows()
    assert "reads its segments as offsets" in rep.diagnosis
    snippet = _snippet_of(rep, user_module / "report.md")
    assert _run_snippet(snippet, user_module) == (1, "still reproduces")
    module.write_text(runs.format(heads="    heads = np.asarray(seg, bool)\n"))
    assert _run_snippet(snippet, user_module) == (0, "does not reproduce")
