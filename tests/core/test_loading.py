"""Loading a target's module: a file from any folder, with the modules beside it."""

from __future__ import annotations

import re
import subprocess
import sys
import textwrap

import pytest

from scancheck.core.loading import module_from_file, shadowed_beside


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


def test_a_relative_path_not_there_names_where_it_was_sought_and_a_tilde_is_home(
        tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    with pytest.raises(ValueError, match=r"^target: nowhere\.py is not a file \(looked for "
                                         + re.escape(str((tmp_path / "nowhere.py").resolve()))):
        module_from_file("nowhere.py", "target")
    monkeypatch.setenv("HOME", str(tmp_path))
    (tmp_path / "mine.py").write_text("def fn(x):\n    return x\n")
    assert module_from_file("~/mine.py", "target").fn(3) == 3


def test_a_directory_beside_named_as_an_installed_package_it_imports_is_found(tmp_path):
    (tmp_path / "numpy").mkdir()  # a clone of numpy's repository: no package of its own
    (tmp_path / "pytest").mkdir()
    (tmp_path / "pytest" / "__init__.py").write_text("")  # a package: imported as it is
    (tmp_path / "mine.py").write_text("import numpy as np\nfrom pytest import approx\n"
                                      "import json\n")
    assert shadowed_beside(tmp_path / "mine.py") == ["numpy"]
    (tmp_path / "broken.py").write_text("import numpy as\n")
    assert shadowed_beside(tmp_path / "broken.py") == []


def test_a_package_an_editable_install_finds_is_loaded_as_installed_beside_its_clone(tmp_path):
    """An editable install's finder comes after the path's: a directory of the package's
    name in the target's folder (its clone, no package of its own) would be imported as an
    empty namespace package in its place, the folder on the path, or the current one."""
    real = tmp_path / "site" / "editable_pkg_for_scancheck"
    real.mkdir(parents=True)
    (real / "__init__.py").write_text("VALUE = 42\n")
    (tmp_path / "work" / "editable_pkg_for_scancheck").mkdir(parents=True)
    (tmp_path / "work" / "mine.py").write_text(
        "from editable_pkg_for_scancheck import VALUE\n")
    script = textwrap.dedent(f"""
        import importlib.abc, importlib.util, sys

        class Editable(importlib.abc.MetaPathFinder):
            def find_spec(self, name, path, target=None):
                if name == "editable_pkg_for_scancheck":
                    return importlib.util.spec_from_file_location(
                        name, {str(real / "__init__.py")!r},
                        submodule_search_locations=[{str(real)!r}])

        sys.meta_path.append(Editable())
        sys.path.insert(0, "")
        from scancheck.core.loading import module_from_file
        print(module_from_file("mine.py", "target").VALUE)
    """)
    out = subprocess.run([sys.executable, "-c", script], cwd=tmp_path / "work",
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 0 and out.stdout.strip() == "42", out.stderr[-2000:]
