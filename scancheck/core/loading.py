"""Python objects by name, and names for objects: ``package.module:ATTR`` and
``path/to/file.py:ATTR``, the forms a target and a user's operator are given in, and the
inverse, so that a child process can load again what the parent was handed as an object."""

from __future__ import annotations

import contextlib
import hashlib
import importlib
import importlib.util
import os
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

#: The prefix of the module name a Python file is loaded under (see :func:`module_from_file`).
FILE_MODULE = "_scancheck_file_"


def is_file_form(locator: str) -> bool:
    """Whether ``locator`` names an attribute of a Python file (``dir/file.py:ATTR``)."""
    return locator.rsplit(":", 1)[0].endswith(".py")


class LibraryMissing(ValueError):
    """A module imports a library this machine lacks: the machine's problem, not that of the
    target or of its name."""


#: Libraries a scan target may need that a machine may rightly lack (a GPU array library, a
#: JIT, a dataframe library): a module importing one that is missing cannot run here.  Any
#: other missing module is the user's to mend (a typo, a sibling not on sys.path).
OPTIONAL_LIBRARIES = frozenset({
    "cupy", "cupyx", "torch", "jax", "jaxlib", "triton", "numba", "cuda", "pyarrow", "pandas",
    "polars", "dask", "fla", "ml_dtypes", "tensorflow", "mlx", "einops",
})


def library_missing(exc: ModuleNotFoundError, module: str) -> str | None:
    """The optional library (:data:`OPTIONAL_LIBRARIES`) ``exc`` found missing while
    ``module`` was imported, where it is not installed; else None."""
    top = (exc.name or "").split(".")[0]
    if top not in OPTIONAL_LIBRARIES or top == module.split(".")[0]:
        return None
    return None if importlib.util.find_spec(top) is not None else top


def import_here(module: str) -> Any:
    """``importlib.import_module(module)``, modules of the working directory importable too
    (as under ``python -m``)."""
    if os.getcwd() not in sys.path:
        sys.path.append(os.getcwd())
    return importlib.import_module(module)


def shadowed_beside(file: str | Path) -> list[str]:
    """The top-level packages the Python file ``file`` imports that its folder, on sys.path,
    shadows: installed ones (found with that folder off the path) whose name is a directory
    there that is no package of its own (a clone of the package's repository, say), which
    an import finds first, as an empty namespace package, where the installed one is
    found by an editable install's finder."""
    import ast

    where = Path(file).resolve()
    try:
        tree = ast.parse(where.read_text())
    except (OSError, SyntaxError, ValueError, UnicodeDecodeError):
        return []
    names = {alias.name.split(".")[0] for node in ast.walk(tree)
             if isinstance(node, ast.Import) for alias in node.names}
    names |= {node.module.split(".")[0] for node in ast.walk(tree)
              if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module}
    beside = [n for n in sorted(names) if (where.parent / n).is_dir()
              and not (where.parent / n / "__init__.py").exists()]
    with _off_path(where.parent):
        return [n for n in beside if _installed(n)]


def _installed(name: str) -> bool:
    """Whether an import of ``name`` finds a module or a regular package."""
    if name in sys.modules:
        return getattr(sys.modules[name], "__file__", None) is not None
    try:
        found = importlib.util.find_spec(name)
    except (ImportError, ValueError):
        return False
    return found is not None and found.origin is not None


@contextlib.contextmanager
def _off_path(folder: str | Path) -> Iterator[None]:
    """sys.path without ``folder`` (every entry naming it, the current directory's ''
    too), for the block's length."""
    saved = sys.path[:]
    real = os.path.realpath(folder)
    sys.path[:] = [p for p in saved if os.path.realpath(p) != real]
    try:
        yield
    finally:
        sys.path[:] = saved


def import_unshadowed(packages: list[str], folder: str | Path) -> None:
    """Import ``packages`` with ``folder`` off sys.path: as installed, not as directories
    there (:func:`shadowed_beside`)."""
    with _off_path(folder):
        for package in packages:
            importlib.import_module(package)


def raised_at(exc: BaseException, file: str | None = None, module: str | None = None) -> str:
    """" at line N of F": where the code of ``file`` (or of the module named ``module``)
    raised ``exc`` last, F that file's name (a module raising as it loads, say in a spec of
    one of its functions); "" where no frame of its traceback is that code's."""
    tb, where = exc.__traceback__, None
    while tb is not None:
        code = tb.tb_frame.f_code
        if (file is not None and os.path.abspath(code.co_filename) == os.path.abspath(file)
                or module is not None and tb.tb_frame.f_globals.get("__name__") == module):
            where = (tb.tb_lineno, os.path.basename(code.co_filename))
        tb = tb.tb_next
    return "" if where is None else f" at line {where[0]} of {where[1]}"


def module_from_file(file: str, what: str) -> Any:
    """The module of the Python file ``file``, loaded once per process under a name of its
    own (its stem and a hash of its absolute path), so that it shadows no importable module
    and two files of one stem stay apart; the modules beside it importable as it loads, as
    under ``python file``; a leading ``~`` is the home folder.  A ValueError starting with
    ``what`` (the argument that named the file) where it is no file or cannot be imported."""
    where = Path(file).expanduser().resolve()
    if not where.is_file():
        # A path relative to the current folder is told whole: it is where the file was sought.
        looked = f" (looked for {where})" if str(where) != file else ""
        raise ValueError(f"{what}: {file} is not a file{looked}")
    stem = "".join(c if c.isalnum() else "_" for c in where.stem)
    name = f"{FILE_MODULE}{stem}_{hashlib.sha256(str(where).encode()).hexdigest()[:12]}"
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.spec_from_file_location(name, where)
    if spec is None or spec.loader is None:
        raise ValueError(f"{what}: {file} cannot be loaded as a Python module")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # dataclasses and pickling look a module up by its name
    # Its folder on the path while it loads, last: the modules beside it that it imports
    # load, and none shadows an installed module, nor, once it is loaded, any import after.
    # A directory there named as an installed package the file imports (not imported yet)
    # would be imported as an empty namespace package in its place: such packages are
    # imported first, with the folder off the path.
    folder = str(where.parent)
    added = folder not in sys.path
    try:
        if added:
            import_unshadowed(shadowed_beside(where), folder)
            sys.path.append(folder)
        spec.loader.exec_module(module)
    except Exception as exc:
        del sys.modules[name]
        lacking = library_missing(exc, name) if isinstance(exc, ModuleNotFoundError) else None
        if lacking:
            raise LibraryMissing(f"{what} cannot run here: {file} imports {lacking}, which is "
                                 f"not installed") from None
        raise ValueError(f"{what}: {file} cannot be imported "
                         f"({type(exc).__name__}{raised_at(exc, file=str(where))}: {exc})"
                         ) from None
    finally:
        if added and folder in sys.path:
            sys.path.remove(folder)
    return module


def locator_of(obj: object, home: str | None = None) -> str | None:
    """A name :func:`module_from_file` or an import loads ``obj`` back by, in another process:
    ``module:ATTR`` (or ``file.py:ATTR`` for a module loaded from a file, the script run as
    ``__main__`` included) for an object some loaded module holds as a top-level attribute;
    None where none does (an object made inside a function, say).  The module named
    ``home`` (where the object's code was defined) is looked in first."""
    modules = list(sys.modules.items())
    modules.sort(key=lambda item: item[0] != home)
    for name, module in modules:
        try:
            attrs = vars(module)
        except TypeError:
            continue
        attr = next((k for k, v in list(attrs.items()) if v is obj and not k.startswith("__")),
                    None)
        if attr is None:
            continue
        if name.startswith(FILE_MODULE) or name == "__main__":
            file = getattr(module, "__file__", None)
            if file:
                return f"{Path(file).resolve()}:{attr}"
            continue
        return f"{name}:{attr}"
    return None


def shadowed() -> str | None:
    """What is wrong where ``import scancheck`` found a folder of that name without an
    ``__init__.py`` (a clone's root) ahead of the installed package and imported it as a
    namespace package, and how to avoid it; None where scancheck is the installed package.
    Nothing can be checked then: the modules the install maps elsewhere
    (``scancheck.kernels``) are looked for in that folder."""
    package = sys.modules[__name__.split(".")[0]]
    if getattr(package, "__file__", None) is not None:
        return None
    folders = ", ".join(sorted(set(package.__path__)))
    return (f"'import scancheck' found the folder {folders} before the installed scancheck: "
            f"with no __init__.py there, Python took it for a namespace package, and "
            f"scancheck cannot run from it.  Python puts the working directory first on the "
            f"import path under 'python -m' and 'python -c', and a script's own folder under "
            f"'python script.py' (PYTHONPATH may name that folder too).  Run from another "
            f"folder, run the command itself ('scancheck ...', 'pytest ...') rather than "
            f"'python -m', start Python with -P (3.11+; or set PYTHONSAFEPATH=1), or rename "
            f"that folder")
