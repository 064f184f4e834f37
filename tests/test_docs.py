"""Every Python and shell example in README.md and docs/ runs, and prints what the page shows.

A ```python block runs in its page's namespace (a block of ``>>>`` lines is a doctest, its
output compared with ``...`` matching anything); a ```bash block runs in bash with ``set -e``,
in the page's own temporary directory, with this environment's ``scancheck``, ``python`` and
``pytest`` first on the PATH.  Where a ```text block follows a bash block with nothing but
blank lines between, it is that block's standard output: compared line by line, trailing
spaces ignored, ``...`` matching anything (doctest's ELLIPSIS).

An HTML comment before a block, invisible on the rendered page, says when it does not run
(Sybil's skip directive): ``<!-- skip: next "why" -->`` never (installing, the whole suite),
``<!-- skip: next if(not gpu, reason="needs a CUDA GPU and CuPy") -->`` where no GPU is.

Each example is one test; a page's examples run in order once per process, whichever of its
tests comes first, so that a later example finds the files and names the earlier ones made.
"""

from __future__ import annotations

import doctest
import os
import re
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from unittest import SkipTest

import pytest
from sybil import Document, Example
from sybil.example import NotEvaluated
from sybil.parsers.markdown import CodeBlockParser, PythonCodeBlockParser, SkipParser

ROOT = Path(__file__).resolve().parent.parent
PAGES = [ROOT / "README.md", *sorted(p for p in (ROOT / "docs").rglob("*.md")
                                     if "_build" not in p.parts)]
#: Fence languages that would look runnable but are not run: name them bash or python.
UNRUN = {"sh", "shell", "console", "zsh", "py", "python3", "pycon", "ipython"}
#: Seconds one shell example may take.
SHELL_TIMEOUT = 300
_OUTPUT = re.compile(r"\s*```text\n(.*?)^```", re.DOTALL | re.MULTILINE)
_FENCE = re.compile(r"^```([^\s`]*)", re.MULTILINE)


class ShellFailed(AssertionError):
    """A shell example exited non-zero, or printed other than its page shows."""


def run_shell(example: Example) -> None:
    """Run a ```bash block in its page's directory; compare its output with the ```text block
    right after it, where there is one."""
    ns = example.namespace
    env = {**os.environ, "PATH": os.path.dirname(sys.executable) + os.pathsep + os.environ["PATH"],
           "COLUMNS": "100"}
    proc = subprocess.run(["bash", "-e", "-o", "pipefail", "-c", example.parsed], cwd=ns["workdir"],
                          env=env, capture_output=True, text=True, timeout=SHELL_TIMEOUT)
    where = f"{example.path}, line {example.line}"
    if proc.returncode:
        raise ShellFailed(f"{where}: exit status {proc.returncode}\n--- stdout\n{proc.stdout[-3000:]}"
                          f"\n--- stderr\n{proc.stderr[-3000:]}")
    shown = _OUTPUT.match(example.document.text, example.end)
    if shown is None:
        return
    want = "\n".join(line.rstrip() for line in shown.group(1).splitlines()) + "\n"
    got = "\n".join(line.rstrip() for line in proc.stdout.splitlines()) + "\n"
    if not doctest.OutputChecker().check_output(want, got, doctest.ELLIPSIS):
        raise ShellFailed(f"{where}: printed other than the page shows\n--- page\n{want}"
                          f"--- printed\n{got}")


PARSERS = [SkipParser(), PythonCodeBlockParser(doctest_optionflags=doctest.ELLIPSIS),
           CodeBlockParser(language="bash", evaluator=run_shell)]


def _parse(page: Path) -> Document:
    return Document.parse(str(page), *PARSERS)


def _runnable(example: Example) -> bool:
    """A code example, not a skip directive."""
    return not isinstance(example.parsed, tuple)


def _cases() -> tuple[list[tuple[Path, int]], list[str]]:
    """Each page's code examples (page, index among its examples) and their test ids."""
    cases, ids = [], []
    for page in PAGES:
        for i, ex in enumerate(_parse(page).examples()):
            if _runnable(ex):
                cases.append((page, i))
                ids.append(f"{page.relative_to(ROOT)}:{ex.line}")
    return cases, ids


CASES, IDS = _cases()


@dataclass
class _PageRun:
    """One page's examples, run in order up to the one a test asks for, each outcome kept."""

    document: Document
    examples: list[Example]
    outcomes: dict[int, BaseException | None] = field(default_factory=dict)

    def upto(self, index: int) -> BaseException | None:
        for i in range(len(self.outcomes), index + 1):
            try:
                self.examples[i].evaluate()
                self.outcomes[i] = None
            except NotEvaluated:
                self.outcomes[i] = SkipTest("not evaluated")
            except Exception as exc:  # kept, and raised by that example's own test
                self.outcomes[i] = exc
        return self.outcomes[index]


_RUNS: dict[Path, _PageRun] = {}


def _gpu() -> bool:
    from scancheck.core.devices import gpu_available

    return gpu_available()[0]


def _page_run(page: Path) -> _PageRun:
    if page not in _RUNS:
        doc = _parse(page)
        doc.namespace.update(gpu=_gpu(), workdir=tempfile.mkdtemp(prefix=f"docs-{page.stem}-"))
        _RUNS[page] = _PageRun(doc, list(doc.examples()))
    return _RUNS[page]


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_example_runs_as_shown(case: tuple[Path, int]) -> None:
    page, index = case
    run = _page_run(page)
    workdir = run.document.namespace["workdir"]
    before = os.getcwd()
    # A Python example's files go where the shell's do, and it imports the modules they made.
    os.chdir(workdir)
    sys.path.insert(0, workdir)
    try:
        outcome = run.upto(index)
    finally:
        os.chdir(before)
        sys.path.remove(workdir)
        for name, module in list(sys.modules.items()):  # another page may have a module so named
            if (getattr(module, "__file__", None) or "").startswith(workdir):
                del sys.modules[name]
    if isinstance(outcome, SkipTest):
        pytest.skip(str(outcome))
    if outcome is not None:
        raise outcome


@pytest.mark.parametrize("page", PAGES, ids=[str(p.relative_to(ROOT)) for p in PAGES])
def test_every_example_is_one_that_runs(page: Path) -> None:
    """A block fenced as sh, console or py would be shown as code and never run: examples
    are bash or python, output and other files text (or their own language)."""
    unrun = sorted({lang for lang in _FENCE.findall(page.read_text()) if lang in UNRUN})
    assert not unrun, f"{page.relative_to(ROOT)}: fenced as {', '.join(unrun)}: use bash or python"


#: A path under docs/ as the package, the tests and the pages name it in prose.
_DOCS_PATH = re.compile(r"\bdocs/[A-Za-z0-9_./-]*\.(?:md|txt|json|png|py)\b")
#: The made-up reproducer of a made-up bug in the known-bug registry's tests.
_MADE_UP = {"docs/findings/x.py"}


def test_every_docs_path_named_in_the_code_and_the_pages_exists():
    """A docstring, comment, message or page that points into docs/ points at a file there: a
    page moved or removed leaves no reader looking for it."""
    named = [p for p in (ROOT / "scancheck").rglob("*.py")]
    named += [p for p in (ROOT / "tests").rglob("*.py") if p.name != "test_docs.py"]
    named += [ROOT / "CONTRIBUTING.md", *PAGES]
    missing = sorted({f"{p.relative_to(ROOT)}: {m}" for p in named
                      for m in _DOCS_PATH.findall(p.read_text(encoding="utf-8"))
                      if m not in _MADE_UP and not (ROOT / m).exists()})
    assert not missing, missing


def test_each_reference_page_gets_its_generated_part_in_place_of_the_note():
    """Sphinx's source-read fills a reference page: the marker and the note that tells a
    reader of the Markdown source how to print the part are both replaced by it."""
    import importlib.util

    spec = importlib.util.spec_from_file_location(
        "scancheck_reference", ROOT / "docs" / "_ext" / "scancheck_reference.py")
    ext = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(ext)
    page = ROOT / "docs" / "reference" / "operators.md"
    source = [page.read_text()]
    assert "> *The reference here is generated" in source[0]
    ext._fill(None, "reference/operators", source)
    assert "<!-- generated" not in source[0] and "> *The reference here" not in source[0]
    assert "| operator | family |" in source[0]


def _reference_ext():
    import importlib.util

    spec = importlib.util.spec_from_file_location(
        "scancheck_reference", ROOT / "docs" / "_ext" / "scancheck_reference.py")
    ext = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(ext)
    return ext


def test_a_reference_page_read_in_part_stops_quietly():
    """`... scancheck_reference.py operators | head -c 0`: the reader has gone before the page
    is written, and the script stops without a traceback, as one killed by SIGPIPE would."""
    script = ROOT / "docs" / "_ext" / "scancheck_reference.py"
    proc = subprocess.Popen([sys.executable, str(script), "operators"], cwd=ROOT,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    proc.stdout.close()  # long before the script has imported scancheck and made the page
    err = proc.stderr.read().decode()
    proc.stderr.close()
    assert proc.wait(timeout=60) == 141 and not err, err


@pytest.mark.parametrize("page", sorted(_reference_ext().GENERATORS))
def test_every_reference_page_prints_from_the_command_line_or_names_what_it_needs(page):
    """`python docs/_ext/scancheck_reference.py NAME` after `pip install -e '.[test]'`, which
    installs no Sphinx: a page prints as the guide has it, or (the pages that read the code's
    ``#:`` comments as autodoc does) says in one line that it needs the docs extra."""
    script = ROOT / "docs" / "_ext" / "scancheck_reference.py"
    blocked = ("import runpy, sys; sys.modules['sphinx'] = None; "
               f"sys.argv = [{str(script)!r}, {page!r}]; runpy.run_path(sys.argv[0], "
               "run_name='__main__')")
    done = subprocess.run([sys.executable, "-c", blocked], capture_output=True, text=True,
                          cwd=ROOT)
    if page in ("spec", "diagnoses"):
        assert done.returncode == 2 and done.stderr.count("\n") == 1, done.stderr
        assert done.stderr.endswith("is not installed: pip install -e '.[docs]'\n")
        note = (ROOT / "docs" / "reference" / f"{page}.md").read_text()
        assert "pip install -e '.[docs]'" in note  # the page's note says so too
    else:
        assert done.returncode == 0, done.stderr
        assert done.stdout == _reference_ext().GENERATORS[page]() + "\n"
