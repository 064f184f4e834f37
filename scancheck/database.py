"""Where Hypothesis keeps the failing examples it finds, so that a fleet of runners shares them.

``SCANCHECK_HYPOTHESIS_DB`` names the store: ``redis://host:port/N`` (Hypothesis's Redis
example database, ``pip install 'hypothesis[redis]'``) or a directory.  Unset, conformance
searches keep nothing and the test suite keeps Hypothesis's default directory.  With a
shared store, a failure one runner found is replayed first by every other.
"""

from __future__ import annotations

import os
from typing import Any

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
