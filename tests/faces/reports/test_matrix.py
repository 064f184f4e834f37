"""The library matrix: every declared contract is one the command line and the spec accept,
and its one table fits 100 columns, with whatever libraries are installed here."""

from __future__ import annotations

import dataclasses

import pytest

from scancheck.adapters import builtin_targets
from scancheck.faces.cli.main import build_parser
from scancheck.faces.reports.matrix import (
    LIBRARY_DTYPES,
    LIBRARY_SCANS,
    LibraryCell,
    library_cell,
    library_jobs,
    library_table,
)
from scancheck.faces.spec_flags import spec_overrides
from scancheck.targets.spec import CONTRACT_FIELDS, TargetSpec, contract_flags, with_overrides

_BUILTINS = builtin_targets()


def test_the_matrix_has_every_library_and_two_chunkings_both_methods_of_dask():
    assert {lib for lib, _, _ in LIBRARY_SCANS} == {"pandas", "polars", "pyarrow", "dask",
                                                    "numba", "jax"}
    dask = [name for lib, _, name in LIBRARY_SCANS if lib == "dask"]
    assert len(dask) == 4 and len({n.split(",")[0] for n in dask}) == 2


@pytest.mark.parametrize("name", [name for _, _, name in LIBRARY_SCANS])
def test_every_declared_contract_is_one_the_command_line_and_the_spec_accept(name):
    """The flags the table shows, typed on the command line over the plain spec of the same
    operator and dtypes, give back exactly the declared contract."""
    spec = _BUILTINS[name].spec
    assert spec.device == "cpu" and set(spec.dtypes) & set(LIBRARY_DTYPES)
    flags = contract_flags(spec).split()
    args = build_parser().parse_args(["check", name, *flags])
    plain = TargetSpec(op=spec.op, dtypes=spec.dtypes, axis=spec.axis, inclusive=spec.inclusive,
                       initial=spec.initial, max_n=spec.max_n)
    declared = with_overrides(plain, spec_overrides(args), name)
    for field in CONTRACT_FIELDS:
        assert getattr(declared, field) == getattr(spec, field), (field, flags)
    # Each field it names is a TargetSpec field the spec validates (a spec built anew).
    assert TargetSpec(**dataclasses.asdict(spec)) == spec


def test_the_library_table_fits_100_columns_however_long_its_cells():
    cells = [LibraryCell("pyarrow", "cumulative_sum_checked and a long tail", "float32",
                         "--nans ignore --nan-prefix identity --promote int32:int64",
                         "NaN/inf semantics broken", 1_048_576, 123.4,
                         "a diagnosis far longer than a line " * 8),
             LibraryCell("jax", "numpy.cumsum", "int32", "-", "conforms", 16, 0.5)]
    text = library_table(cells)
    lines = text.splitlines()
    assert all(len(line) <= 100 for line in lines), max(map(len, lines))
    assert lines[0].split() == ["library", "function", "dtype", "contract", "verdict",
                                "largest", "n", "s"]
    table = text.split("\n\n")[0].splitlines()
    assert sum(line.startswith(("pyarrow ", "jax ")) for line in table) == 2
    assert "diagnosis far longer" in text  # below the table, wrapped
    assert "scancheck hunt --part cpu" in text  # where the further modes are checked
    assert "pip install -e '.[libs]'" in library_table([])
    assert "pandas" not in text
    named = library_table(cells, ["pandas", "dask"]).splitlines()[-1]
    assert named.startswith("not installed here, so not in the table: pandas, dask")


def test_the_libraries_not_installed_are_those_whose_scans_cannot_run_here():
    from scancheck.faces.reports.matrix import LIBRARY_SCANS, missing_libraries

    here, missing = {job[0] for job in library_jobs()}, set(missing_libraries())
    assert here | missing == {lib for lib, _, _ in LIBRARY_SCANS} and not here & missing


def test_the_library_matrix_runs_on_the_libraries_installed_here():
    """One cell of each installed library, checked briefly: a row each, every line of the
    table within 100 columns, a verdict the table knows."""
    jobs = library_jobs()
    if not jobs:
        pytest.skip("no library of the matrix (pandas, polars, pyarrow, dask, numba, jax) "
                    "is installed here: pip install -e '.[libs]'")
    firsts = list({job[0]: job for job in reversed(jobs)}.values())
    cells = [library_cell(job, seconds=1.0, max_n=2**10) for job in firsts]
    lines = library_table(cells).splitlines()
    assert all(len(line) <= 100 for line in lines)
    assert len([ln for ln in lines if ln.split() and ln.split()[0] in
                {c.library for c in cells}]) >= len(cells)
    for c in cells:
        assert c.verdict in ("conforms", "slow", "partial") or c.diagnosis, c
        assert 0 <= c.largest_n <= 2**10


def test_a_matrix_exits_as_check_does_a_cell_out_of_budget_is_no_failure():
    """A cell whose budget ran out before the top of its ladder (the library table's "partial")
    makes the matrix exit 3, as `check` does, not 1; a cell that fails makes it 1 whatever
    else the matrix holds; all conforming, 0."""
    from scancheck.faces.reports.matrix import library_cell, matrix_status

    short = library_cell(("numpy", "cumsum", "numpy.cumsum", "float32"), 0.01)
    assert short.status == 3 and short.verdict != "conforms", short
    wrong = library_cell(("scancheck", "exclusive", "scancheck.controls.sums:"
                          "exclusive_scan_with_wrong_first_output", "float32"), 0.5, max_n=64)
    assert wrong.status == 1, wrong
    assert matrix_status([short]) == 3 and matrix_status([short, wrong]) == 1
    assert matrix_status([]) == 0
    # A cell with nothing checked is no conforming one: 2, as check exits for it.
    assert matrix_status([dataclasses.replace(short, status=2), short]) == 2


def test_the_markdown_matrix_checks_up_to_the_max_n_it_is_given(capsys, tmp_path):
    """`matrix --markdown --max-n N` checks each cell up to N elements, no further (it took
    the default largest n whatever N was)."""
    from scancheck.faces.cli.main import main

    (tmp_path / "one.py").write_text(
        "import numpy as np\nfrom scancheck import TargetSpec\n\n\n"
        "def scan(x):\n    return np.cumsum(x, dtype=x.dtype)\n\n\n"
        "scan.scan_spec = TargetSpec(dtypes=('int32',))\n")
    assert main(["matrix", "--markdown", f"{tmp_path / 'one.py'}:scan", "--max-n", "256",
                 "--budget", "1", "--workers", "1"]) == 0
    table = capsys.readouterr().out
    assert "256" in table and "1,048,576" not in table and "1048576" not in table, table
