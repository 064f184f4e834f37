"""Lock files that take turns across the processes of one user on one machine (the checks
past 2**31 hold a device alone; GPU checks share or hold a device), opened so that no one
can make them truncate or write through a planted symbolic link."""

from __future__ import annotations

import contextlib
import fcntl
import os
import stat
import tempfile
from collections.abc import Iterator

__all__ = ["LockRefused", "file_lock", "lock_dir"]


class LockRefused(PermissionError):
    """A lock file or its directory is not safe to open: what was wrong, and what is allowed."""


def lock_dir() -> str:
    """The directory of scancheck's lock files, ``scancheck-locks-<uid>`` in the temporary
    directory, created with mode 0o700; :class:`LockRefused` where it is a symbolic link, not
    a directory, not the user's own, or writable by others (where a link could be planted
    in a lock file's place)."""
    path = os.path.join(tempfile.gettempdir(), f"scancheck-locks-{os.getuid()}")
    with contextlib.suppress(FileExistsError):
        os.mkdir(path, 0o700)
    os.close(_open_private_dir(path))
    return path


def _open_private_dir(path: str) -> int:
    """``path`` opened without following a link, and checked as :func:`lock_dir` says."""
    allowed = ("lock files live only in a directory of the user's own that no one else can "
               f"write; remove {path} or set TMPDIR to another directory")
    try:
        fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW)
    except OSError as exc:  # ELOOP: a symbolic link; ENOTDIR: not a directory
        raise LockRefused(f"{path} is not a directory ({exc.strerror}); {allowed}") from None
    st = os.fstat(fd)
    if st.st_uid != os.getuid() or st.st_mode & 0o022:
        os.close(fd)
        raise LockRefused(f"{path} belongs to uid {st.st_uid} with mode "
                          f"{stat.S_IMODE(st.st_mode):o}; {allowed}")
    return fd


@contextlib.contextmanager
def file_lock(name: str, exclusive: bool = True) -> Iterator[None]:
    """Hold the lock file ``name`` in :func:`lock_dir`, shared or exclusive, across every
    process of this user on this machine.  It is opened without following a symbolic link
    and never truncated: a link in its place is refused (:class:`LockRefused`), not followed."""
    name = name.replace(os.sep, "_")  # a device key may hold one (old MIG UUIDs do)
    if name in ("", ".", ".."):
        raise ValueError(f"lock name {name!r} must name a file")
    where = lock_dir()
    dir_fd = _open_private_dir(where)
    try:
        fd = os.open(name, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW, 0o600, dir_fd=dir_fd)
    except OSError as exc:
        raise LockRefused(f"{os.path.join(where, name)} cannot be a lock file ({exc.strerror}): "
                          f"it must be a plain file, not a symbolic link") from None
    finally:
        os.close(dir_fd)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX if exclusive else fcntl.LOCK_SH)
        try:
            yield
        finally:
            fcntl.flock(fd, fcntl.LOCK_UN)
    finally:
        os.close(fd)
