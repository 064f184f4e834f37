"""The package's floor plan, read from its source: each layer imports only from the layers
beneath it, and no modules import each other in a circle (lazy imports included)."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "scancheck"

#: Floors from the ground up, each a folder (a module's floor is that of the longest folder
#: its name begins with); the package's top level (``__init__``, ``__main__`` and the public
#: modules) is the top floor.
FLOORS = ("core", "oracle", "kernels", "targets", "engine", "isolation", "adapters", "controls",
          "faces", "faces.jobs", "faces.reports", "faces.plugin", "faces.cli", "")


def _module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _floor(module: str) -> int:
    folders = [f for f in FLOORS[:-1] if module == f or module.startswith(f + ".")]
    return FLOORS.index(max(folders, key=len)) if folders else len(FLOORS) - 1


def _imports(path: Path, modules: set[str]) -> dict[str, set[str]]:
    """Module -> the names this file takes from it, for every import of the package's own
    modules in ``path`` (at any depth: lazy imports inside functions count)."""
    module = _module_name(path)
    package = [part for part in module.split(".") if part]
    if path.name != "__init__.py":
        package = package[:-1]
    found: dict[str, set[str]] = {}
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = package[:len(package) - node.level + 1]
                target = ".".join([*base, *([node.module] if node.module else [])])
            elif (node.module or "").startswith("scancheck."):
                target = node.module[len("scancheck."):]
            else:
                continue
            for alias in node.names:  # ``from . import models`` imports a module
                sub = f"{target}.{alias.name}".strip(".")
                name = sub if sub in modules else target
                found.setdefault(name, set()).add(alias.name)
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.startswith("scancheck."):
                    found.setdefault(alias.name[len("scancheck."):], set()).add("*")
    missing = sorted(m for m in found if m not in modules and m != "")
    assert not missing, f"{module} imports modules that do not exist: {missing}"
    return {m: names for m, names in found.items() if m != module and m in modules}


@pytest.fixture(scope="module")
def graph() -> dict[str, dict[str, set[str]]]:
    paths = list(PACKAGE.rglob("*.py"))
    modules = {_module_name(p) for p in paths}
    return {_module_name(p): _imports(p, modules) for p in paths}


def test_the_graph_is_read_from_the_source(graph):
    """The reader sees the imports it must: a lazy one, a relative one from a sub-package,
    and the floors have the modules they are named for."""
    assert "core.dtypes" in graph["engine.properties"]
    assert "kernels.registry" in graph["kernels.launch"]
    assert "core.cuda" in graph["oracle.exact_device"]
    assert {_floor(m) for m in graph} == set(range(len(FLOORS)))


def test_no_module_imports_from_a_floor_above_its_own(graph):
    upward = [f"{m} (floor {FLOORS[_floor(m)] or 'top'}) imports {', '.join(sorted(names))} "
              f"from {dep} (floor {FLOORS[_floor(dep)] or 'top'})"
              for m, deps in graph.items() for dep, names in deps.items()
              if _floor(dep) > _floor(m)]
    assert not upward, "imports from a higher floor:\n" + "\n".join(upward)


def test_no_modules_import_each_other_in_a_circle(graph):
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    circles: list[list[str]] = []

    def visit(m: str) -> None:  # Tarjan's strongly connected components
        index[m] = low[m] = len(index)
        stack.append(m)
        for dep in graph[m]:
            if dep not in index:
                visit(dep)
                low[m] = min(low[m], low[dep])
            elif dep in stack:
                low[m] = min(low[m], index[dep])
        if low[m] == index[m]:
            component = []
            while True:
                top = stack.pop()
                component.append(top)
                if top == m:
                    break
            if len(component) > 1:
                circles.append(sorted(component))

    for m in graph:
        if m not in index:
            visit(m)
    ties = [f"{a} -> {b}: {', '.join(sorted(graph[a][b]))}"
            for circle in circles for a in circle for b in circle if b in graph[a]]
    assert not circles, f"modules importing each other in a circle: {circles}\n" + "\n".join(ties)


def test_every_package_folder_ships_in_the_wheel():
    """A folder missing from pyproject's package list imports in an editable install and
    is absent from a wheel: the failure only a user who installed the wheel would see."""
    text = (PACKAGE.parent / "pyproject.toml").read_text()
    listed = text[text.index("packages = ["):text.index("]", text.index("packages = ["))]
    # A folder of data files alone (the launch tables) is a namespace package to setuptools:
    # listed too, or it ships only while setuptools still guesses it.
    folders = {".".join(("scancheck", *p.parent.relative_to(PACKAGE).parts))
               for p in PACKAGE.rglob("*") if p.is_file() and "__pycache__" not in p.parts}
    missing = sorted(f for f in folders if f'"{f}"' not in listed)
    assert not missing, f"package folders missing from pyproject.toml's packages: {missing}"
