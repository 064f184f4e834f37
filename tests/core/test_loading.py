"""Loading a target's module: a file from any folder, with the modules beside it."""

from __future__ import annotations

import sys

import pytest

from scancheck.core.loading import module_from_file


def test_a_file_imports_the_modules_beside_it_from_any_working_folder(tmp_path, monkeypatch):
    """As under ``python file.py``: a module beside it imports, wherever the check runs."""
    (tmp_path / "lib").mkdir()
    (tmp_path / "elsewhere").mkdir()
    (tmp_path / "lib" / "sibling_helpers_for_scancheck.py").write_text("VALUE = 42\n")
    (tmp_path / "lib" / "uses.py").write_text(
        "from sibling_helpers_for_scancheck import VALUE\n")
    monkeypatch.chdir(tmp_path / "elsewhere")
    monkeypatch.setattr(sys, "path", list(sys.path))
    try:
        assert module_from_file(str(tmp_path / "lib" / "uses.py"), "target").VALUE == 42
        # On the path while it loads alone: nothing imported after it finds its neighbours.
        assert str(tmp_path / "lib") not in sys.path
    finally:
        sys.modules.pop("sibling_helpers_for_scancheck", None)


def test_a_file_that_is_not_there_is_named(tmp_path):
    with pytest.raises(ValueError, match=r"^target: .*nowhere\.py is not a file$"):
        module_from_file(str(tmp_path / "nowhere.py"), "target")
