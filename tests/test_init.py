"""The public API: every exported name resolves, and loads only the modules it needs."""

from __future__ import annotations

import importlib
import re
import subprocess
import sys
from pathlib import Path

import pytest

import scancheck


def test_every_exported_name_resolves_to_its_module():
    assert sorted(scancheck.__all__) == sorted(scancheck._MODULE_OF)
    for name in scancheck.__all__:
        value = getattr(scancheck, name)
        home = sys.modules[f"scancheck.{scancheck._MODULE_OF[name]}"]
        assert value is getattr(home, name)


def test_unknown_names_raise_attribute_error():
    with pytest.raises(AttributeError, match="no_such_thing"):
        scancheck.no_such_thing  # noqa: B018


def test_a_sanitizer_child_does_not_import_the_conformance_machinery():
    code = "import sys, scancheck.isolation.sanitizer, scancheck.kernels; print('hypothesis' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


ROOT = Path(__file__).resolve().parent.parent


def _pyproject_entry(section: str, key: str) -> str:
    text = (ROOT / "pyproject.toml").read_text()
    block = text[text.index(f"[{section}]"):]
    return re.search(rf'^{key} = "([^"]+)"', block, re.MULTILINE).group(1)


def test_the_console_script_and_the_pytest_plugin_load_from_where_pyproject_names_them():
    module, _, attr = _pyproject_entry("project.scripts", "scancheck").partition(":")
    assert callable(getattr(importlib.import_module(module), attr))
    plugin = importlib.import_module(_pyproject_entry("project.entry-points.pytest11", "scancheck"))
    assert callable(plugin.pytest_addoption)


@pytest.mark.parametrize("module", ["scancheck", "scancheck.gpusuite"])
def test_the_documented_python_dash_m_modules_run(module):
    out = subprocess.run([sys.executable, "-m", module, "--help"], capture_output=True, text=True,
                         check=False)
    assert out.returncode == 0 and "usage:" in out.stdout, out.stderr
