"""This user's private directories in the temporary directory, where scancheck keeps what its
processes share on one machine: caches (bytecode, JAX's programs, Hypothesis's constants).

A directory is used only where it is the user's own and no one else can reach it: a cache
there is loaded and run, and one another user could write would let them plant code.
"""

from __future__ import annotations

import os
import stat
import sys
import tempfile
from collections.abc import MutableMapping
from pathlib import Path


def private_dir(name: str) -> Path | None:
    """``<tmp>/<name>-<uid>``, made if missing; None where it cannot be, or is a link, not a
    directory, not this user's, open to group or others in any way, or in a directory others
    may write without the sticky bit (where they could swap it for their own)."""
    if not hasattr(os, "getuid"):
        return None
    path = Path(tempfile.gettempdir()) / f"{name}-{os.getuid()}"
    try:
        parent = path.parent.stat()
        path.mkdir(mode=0o700, exist_ok=True)
        st = path.lstat()
    except OSError:
        return None
    if parent.st_mode & 0o022 and not parent.st_mode & stat.S_ISVTX:
        return None
    ok = stat.S_ISDIR(st.st_mode) and st.st_uid == os.getuid() and not st.st_mode & 0o077
    return path if ok else None


def bytecode_cache() -> Path | None:
    """This user's private cache of Python's bytecode (None where it cannot be had): where
    bytecode may not be written beside the sources, without it every process compiles every
    module it imports (importing torch's dynamo and Inductor without their bytecode: 15 s a
    process on an H100 machine, 5 s from this cache)."""
    return private_dir("scancheck-pycache")


def cache_bytecode(environ: MutableMapping[str, str]) -> str | None:
    """Where ``environ`` keeps Python from writing bytecode beside the sources
    (``PYTHONDONTWRITEBYTECODE``) and names no cache of its own, point it at
    :func:`bytecode_cache` instead, which keeps the setting's intent (nothing written beside
    anyone's sources); returns that cache, or None where ``environ`` is left as it was."""
    if not environ.get("PYTHONDONTWRITEBYTECODE") or environ.get("PYTHONPYCACHEPREFIX"):
        return None
    cache = bytecode_cache()
    if cache is None:
        return None
    del environ["PYTHONDONTWRITEBYTECODE"]
    environ["PYTHONPYCACHEPREFIX"] = str(cache)
    return str(cache)


def redirect_bytecode() -> str | None:
    """Where this process may not write bytecode beside the sources (``-B`` or
    ``PYTHONDONTWRITEBYTECODE``) and names no cache of its own, it and the processes it
    starts keep bytecode in :func:`bytecode_cache` from here on; returns that cache, or None
    where nothing was changed."""
    if not sys.dont_write_bytecode or sys.pycache_prefix:
        return None
    cache = bytecode_cache()
    if cache is None:
        return None
    sys.pycache_prefix = os.environ["PYTHONPYCACHEPREFIX"] = str(cache)
    sys.dont_write_bytecode = False
    os.environ.pop("PYTHONDONTWRITEBYTECODE", None)
    for site in {p for p in sys.path if p.endswith("site-packages") and os.path.isdir(p)}:
        seed_bytecode(site)
    return str(cache)


def seed_bytecode(site: str) -> None:
    """Link the bytecode the installer wrote in ``site``'s ``__pycache__`` folders into the
    cache :data:`sys.pycache_prefix` names, once per ``site`` (a stamp marks it done).

    With a cache named, Python reads no ``__pycache__``: without the links, every process in a
    fresh environment compiles every installed package it imports anew (about 20 CPU-s of a
    2-core CI run).  A link is a name, not a copy: Python replaces a stale entry, never
    rewrites it."""
    from importlib.util import cache_from_source

    stamp = Path(cache_from_source(os.path.join(site, "x.py"))).parent / ".scancheck-seeded"
    if stamp.exists():
        return
    tag = f".{sys.implementation.cache_tag}.pyc"
    for folder, _, files in os.walk(site):
        if os.path.basename(folder) != "__pycache__":
            continue
        for name in files:
            if not name.endswith(tag):  # optimised (.opt-1) and other interpreters' bytecode
                continue
            dest = cache_from_source(os.path.join(os.path.dirname(folder),
                                                  name[:-len(tag)] + ".py"))
            if os.path.exists(dest):
                continue
            os.makedirs(os.path.dirname(dest), exist_ok=True)
            try:
                os.link(os.path.join(folder, name), dest)
            except OSError:  # another file system, or a race with a process that wrote it
                continue
    stamp.parent.mkdir(parents=True, exist_ok=True)
    stamp.touch()
