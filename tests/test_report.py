"""The Markdown report: verdicts, and snippets that reproduce each failure with NumPy alone."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import textwrap

import numpy as np
import pytest

from scancheck.engine.conformance import check
from scancheck.engine.resolve import load_import_path
from scancheck.engine.spec import TargetSpec
from scancheck.report import markdown

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
    assert out.returncode == 0, out.stderr
    return out.stdout


@pytest.mark.parametrize("fn, spec, prop", [
    ("blocked", TargetSpec(), "integers exact"),
    ("blocked", TargetSpec(dtypes=("bfloat16", "float16")), "certified exact"),
    ("rows_c_only", TargetSpec(dtypes=("int32",), axis="arg"), "rows"),
    ("widened_after", TargetSpec(dtypes=("int8", "bool"), promote=(("int8", "int64"),
                                                                   ("bool", "int64"))),
     "integers exact"),
    ("restarting_product", TargetSpec(op="mul", dtypes=("int32",)), "integers exact"),
    ("restarting_product", TargetSpec(op="mul", dtypes=("float64",)), "products within bound"),
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


def test_a_conforming_target_gets_no_snippet(tmp_path, budget):
    rep = check(load_import_path("numpy:cumsum", TargetSpec(dtypes=("float64",))),
                properties=("floats within bound",), budget=budget)
    text = markdown([rep], tmp_path / "r.md")
    assert "Conforms" in text and "```python" not in text


def test_a_large_input_is_written_beside_the_report(user_module, budget, monkeypatch):
    monkeypatch.setattr("scancheck.report.INLINE_BYTES", 64)
    rep = check(load_import_path("userscans:blocked", TargetSpec(dtypes=("float32",))),
                properties=("certified exact",), budget=budget)
    text = markdown([rep], user_module / "report.md")
    assert "np.load(" in text and list((user_module / "report-inputs").glob("case-0.npy"))
    assert "output" in _snippet_output(text, user_module)


def test_a_failure_under_a_probe_monoid_is_reproduced_by_drawing_it_again(tmp_path, budget):
    """The snippet draws the case again from its monoid and seed and calls the target: the
    wrong output it prints is the one the report names."""
    target = load_import_path("scancheck.controls.tuples:combines_later_first", None)
    rep = check(target, properties=("probe monoids",), budget=budget)
    text = markdown([rep], tmp_path / "report.md")
    assert "the case drawn again from its monoid and seed" in text
    snippet = text.split("```python\n")[1].split("```")[0]
    out = subprocess.run([sys.executable, "-c", snippet], capture_output=True, text=True,
                         timeout=120, cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    got = [int(v) for v in re.findall(r"array\((\d+)", out.stdout)]
    assert got == rep.verdict.smallest_case["got"]
