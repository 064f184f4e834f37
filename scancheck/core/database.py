"""Where Hypothesis keeps the failing examples it finds, so that a fleet of runners shares them.

``SCANCHECK_HYPOTHESIS_DB`` names the store: ``redis://host:port/N`` (Hypothesis's Redis
example database, ``pip install 'hypothesis[redis]'``) or a directory.  Unset, conformance
searches keep nothing and the test suite keeps Hypothesis's default directory.  With a
shared store, a failure one runner found is replayed first by every other.

Hypothesis also keeps files of its own in ``.hypothesis`` of the working directory (a cache
of the constants it reads from local modules); scancheck's searches run under
:func:`private_storage`, so that a check writes nothing where it was started but the
store it was given.  The constants' cache is kept instead in a directory of this user's in
the temporary directory (:func:`constants_cache`), shared by every check and every child
process: each would otherwise parse every local module again at its first draw.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from .private import private_dir

VARIABLE = "SCANCHECK_HYPOTHESIS_DB"


def example_database(value: str | None = None) -> Any:
    """The Hypothesis example database ``value`` (default: the environment variable) names,
    or None where it names none; a ValueError naming the variable where it cannot be used."""
    value = os.environ.get(VARIABLE, "") if value is None else value
    if not value:
        return None
    if value.startswith(("redis://", "rediss://", "unix://")):
        try:
            import redis
            from hypothesis.extra.redis import RedisExampleDatabase
        except ImportError:
            raise ValueError(f"{VARIABLE}={value!r} needs the redis client: "
                             f"pip install 'hypothesis[redis]'") from None
        try:
            client = redis.Redis.from_url(value)
        except ValueError as exc:
            raise ValueError(f"{VARIABLE}={value!r} is not a Redis URL ({exc})") from None
        return RedisExampleDatabase(client)
    from hypothesis.database import DirectoryBasedExampleDatabase

    return DirectoryBasedExampleDatabase(value)


def constants_cache() -> Path | None:
    """The directory where Hypothesis's cache of the constants it reads from local modules is
    kept while :func:`private_storage` is held: this user's alone, in the temporary
    directory (None where it cannot be, or is not this user's private directory: then each
    home parses every module anew).

    Hypothesis draws some integers and floats from the constants of the local modules
    loaded (the target's, and scancheck's own where it is not installed in site-packages);
    it reads them once per process, parsing each module's source (about 0.4 CPU-s in a
    child of an isolated check, taken out of its first property's seconds), unless its cache
    has the file's hash.  A fresh home every search would parse them anew in every child; a
    shared cache gives each the same constants at a file read.  The files are read as
    literals, never run, and the directory is refused unless it is this user's alone."""
    return private_dir("scancheck-hypothesis-constants")


_storage_lock = threading.Lock()
_storage: dict[str, Any] = {"users": 0}


@contextlib.contextmanager
def private_storage() -> Iterator[None]:
    """While held (by any thread), Hypothesis keeps its own files in a fresh temporary
    directory, removed when the last holder leaves, and then finds its home where it did
    before: nothing in the working directory's ``.hypothesis``.  Its cache of the constants
    of local modules is this user's shared one (:func:`constants_cache`), linked in."""
    from hypothesis import configuration

    with _storage_lock:
        if _storage["users"] == 0:
            # Hypothesis's home once resolved (None: not yet), to be put back as it was.
            _storage["saved"] = vars(configuration).get("__hypothesis_home_directory")
            _storage["dir"] = tempfile.TemporaryDirectory(prefix="scancheck-hypothesis-")
            shared = constants_cache()
            if shared is not None:
                os.symlink(shared, Path(_storage["dir"].name) / "constants")
            configuration.set_hypothesis_home_dir(_storage["dir"].name)
        _storage["users"] += 1
    try:
        yield
    finally:
        with _storage_lock:
            _storage["users"] -= 1
            if _storage["users"] == 0:
                configuration.set_hypothesis_home_dir(_storage.pop("saved"))
                _storage.pop("dir").cleanup()
