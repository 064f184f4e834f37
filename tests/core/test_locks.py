"""Lock files: never opened through a symbolic link, never truncated, in a directory only
the user can write; shared locks share and exclusive ones exclude."""

from __future__ import annotations

import pytest


@pytest.fixture
def private_tmp(tmp_path, monkeypatch):
    """The temporary directory of this test alone, as scancheck's lock files see it."""
    import tempfile

    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    return tmp_path


def test_a_lock_is_never_taken_through_a_planted_symbolic_link(private_tmp):
    import os

    from scancheck.core.locks import LockRefused, file_lock, lock_dir

    victim = private_tmp / "victim.txt"
    victim.write_text("someone's data\n")
    # A fixed name in the shared temporary directory, where another user could plant a link.
    (private_tmp / "scancheck-large-host.lock").symlink_to(victim)
    with file_lock("scancheck-large-host.lock"):
        pass
    where = lock_dir()
    assert os.stat(where).st_mode & 0o777 == 0o700
    assert sorted(os.listdir(where)) == ["scancheck-large-host.lock"]
    # In the user's own directory too, a link is refused, not written through.
    os.symlink(victim, os.path.join(where, "scancheck-gpu-0.lock"))
    with pytest.raises(LockRefused, match="must be a plain file, not a symbolic link"):
        with file_lock("scancheck-gpu-0.lock", exclusive=False):
            pass
    assert victim.read_text() == "someone's data\n"


def test_shared_locks_share_and_exclusive_ones_exclude(private_tmp):
    import fcntl
    import os

    from scancheck.core.locks import file_lock, lock_dir

    def try_lock(kind):
        fd = os.open(os.path.join(lock_dir(), "gpu.lock"), os.O_RDWR)
        try:
            fcntl.flock(fd, kind | fcntl.LOCK_NB)
            return True
        except BlockingIOError:
            return False
        finally:
            os.close(fd)

    with file_lock("gpu.lock", exclusive=False):
        assert try_lock(fcntl.LOCK_SH) and not try_lock(fcntl.LOCK_EX)
    with file_lock("gpu.lock"):
        assert not try_lock(fcntl.LOCK_SH)
    assert try_lock(fcntl.LOCK_EX)
