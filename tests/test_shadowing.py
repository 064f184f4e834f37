"""scancheck runs from any folder, the one holding a clone of the project included: a folder
named ``scancheck`` there (no ``__init__.py`` at its root) never takes the installed package's
place in scancheck's own processes, and where Python imported it all the same (``python -m``
puts the working directory first) the command line says so before any target is loaded."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import types
from pathlib import Path

import pytest

from scancheck.core.loading import shadowed
from scancheck.isolation.child import python_command

ROOT = Path(__file__).resolve().parent.parent

_MINE = ("import numpy as np\n\n\n"
         "def scan(x):\n"
         "    return np.cumsum(x, dtype=x.dtype)\n\n\n"
         "def wrong(x):\n"
         "    y = np.cumsum(x, dtype=x.dtype)\n"
         "    y[-1:] += 1\n"
         "    return y\n")


@pytest.fixture
def clone_parent(tmp_path: Path) -> Path:
    """A folder holding the project as ``scancheck`` (a link to its root) and a user's module."""
    (tmp_path / "scancheck").symlink_to(ROOT, target_is_directory=True)
    (tmp_path / "mine.py").write_text(_MINE)
    return tmp_path


def _check(cmd: list[str], where: Path) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONSAFEPATH")}
    return subprocess.run([*cmd, "check", "numpy.cumsum", "mine:scan", "mine:wrong", "--quick",
                           "--max-n", "64", "--budget", "3", "--json", "r.json"],
                          cwd=where, env=env, capture_output=True, text=True, timeout=240)


def _shadowed_in(where: Path) -> bool:
    """Whether ``import scancheck`` under ``python -c`` in ``where`` finds a namespace package:
    with an editable install yes (its finder comes after the folder), with a regular one no."""
    out = subprocess.run([sys.executable, "-c", "import scancheck; print(scancheck.__file__)"],
                         cwd=where, capture_output=True, text=True, check=True)
    return out.stdout.strip() == "None"


def _verdicts(where: Path) -> dict[str, str]:
    return {r["target"]: r["verdict"]["word"] for r in json.loads((where / "r.json").read_text())}


@pytest.mark.slow
def test_the_command_line_checks_from_the_folder_holding_the_clone(clone_parent):
    """The console script there: the built-in target and the user's module of that folder
    are judged, the wrong one failing."""
    script = shutil.which("scancheck", path=os.path.dirname(sys.executable))
    out = _check([script] if script else python_command("scancheck"), clone_parent)
    assert out.returncode == 1, out.stderr
    assert _verdicts(clone_parent) == {"numpy.cumsum": "conforms", "mine:scan": "conforms",
                                       "mine:wrong": "DOES NOT CONFORM"}, out.stdout


@pytest.mark.slow
def test_python_dash_m_there_says_what_shadows_the_package_or_checks(clone_parent):
    """``python -m scancheck`` puts that folder first: where Python then imports it as a
    namespace package (an editable install's finder comes after it), the command line says
    which folder and how to avoid it, naming no target; where the installed package still
    wins (a regular install), the check runs."""
    out = _check([sys.executable, "-m", "scancheck"], clone_parent)
    if _shadowed_in(clone_parent):
        assert out.returncode == 2, out.stderr
        assert str(clone_parent / "scancheck") in out.stderr and "namespace package" in out.stderr
        assert "-P" in out.stderr and "another folder" in out.stderr
        assert "numpy.cumsum" not in out.stderr and "mine" not in out.stderr
        assert not (clone_parent / "r.json").exists()
    else:
        assert out.returncode == 1, out.stderr
        assert _verdicts(clone_parent)["mine:wrong"] == "DOES NOT CONFORM"


@pytest.mark.slow
def test_the_plugin_there_says_what_shadows_the_package_or_checks(clone_parent):
    """``python -m pytest --scan-target`` in that folder: a usage error naming the folder where
    Python imported it in the package's place, else the target's tests."""
    (clone_parent / "test_mine.py").write_text("def test_mine():\n    pass\n")
    out = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                          "-p", "no:xdist", "--scan-target=mine:wrong", "--scan-budget=0.5",
                          "--scan-max-n=16", "test_mine.py"], cwd=clone_parent,
                         capture_output=True, text=True, timeout=240)
    if _shadowed_in(clone_parent):
        assert out.returncode == pytest.ExitCode.USAGE_ERROR, out.stdout + out.stderr
        assert "namespace package" in out.stderr and "mine:wrong" not in out.stderr
    else:
        assert out.returncode == pytest.ExitCode.TESTS_FAILED, out.stdout + out.stderr


def test_a_namespace_package_in_the_installed_ones_place_is_told(monkeypatch):
    assert shadowed() is None  # the test session's own scancheck
    stand_in = types.ModuleType("scancheck")
    stand_in.__path__ = ["/somewhere/scancheck"]  # what a namespace package has, and no __file__
    monkeypatch.setitem(sys.modules, "scancheck", stand_in)
    words = shadowed()
    assert words is not None and "/somewhere/scancheck" in words and "namespace package" in words


_PROBE = "import json, os, sys\nprint(json.dumps([sys.path, sys.argv[1:]]))\n"


@pytest.mark.parametrize("safe_path", [False, *([True] if sys.version_info >= (3, 11) else [])])
def test_a_child_is_run_as_python_m_runs_it_without_the_working_directory(
        tmp_path, safe_path):
    """Both ways a child starts (-P, and runpy where Python lacks it) run the module as
    ``__main__`` with its arguments, and leave the working directory off the import path."""
    mods, work = tmp_path / "mods", tmp_path / "work"
    mods.mkdir()
    work.mkdir()
    (mods / "pathprobe.py").write_text(_PROBE)
    (work / "pathprobe.py").write_text("raise SystemExit('the working directory came first')\n")
    env = {**os.environ, "PYTHONPATH": str(mods)}
    env.pop("PYTHONSAFEPATH", None)
    out = subprocess.run([*python_command("pathprobe", safe_path), "a", "b"], cwd=work, env=env,
                         capture_output=True, text=True, check=True)
    path, argv = json.loads(out.stdout)
    assert argv == ["a", "b"] and str(mods) in path
    assert str(work) not in path and "" not in path
