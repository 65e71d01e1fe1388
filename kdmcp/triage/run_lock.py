"""One triage run per records file, across processes and servers: an OS lock held for the run.

Two runs on one JSONL would both triage every dump (each read the file before the other wrote),
and a retry's rewrite (``ResultStore.forget``: a new file swapped in) would drop the other's
lines. So a run holds an exclusive, non-blocking OS lock on a sidecar, ``<out>.lock``, from before
it reads the file to its end; a second run fails at once with ``busy``. The lock is on the
sidecar, not the JSONL, because the rewrite replaces the JSONL's inode (a lock on it would then
guard a file nobody names).

The OS lock, not a pid in a file: the kernel drops it when its holder dies (a kill, a crash, a lost
machine's NFS lease aside), so a lock file left behind never blocks a run — there is nothing to
judge stale. POSIX: ``flock`` (per open file, so two runs in one process exclude each other too).
Windows: ``msvcrt.locking`` on the file's first byte (``LK_NBLCK``: "if the bytes cannot be
locked, the constant raises an OSError" — per handle, so again within one process too).

The sidecar is removed at the end. POSIX removes it while still holding the lock, so a run that
opened the old file before the removal finds, once it has the lock, that the path is no longer
its file (the inode check below) and tries the path again. Windows cannot remove a file it has
open; it unlocks and closes first, then removes it, which fails (and is left) while another run
has it open (Python opens without ``FILE_SHARE_DELETE``): that run's file, not ours to remove.
"""

from __future__ import annotations

import contextlib
import errno
import importlib
import os
from collections.abc import Iterator

from kdmcp.errors import InvalidArgument, SessionBusy

__all__ = ["LOCK_SUFFIX", "run_lock"]

LOCK_SUFFIX = ".lock"
_HELD = {errno.EACCES, errno.EAGAIN, errno.EWOULDBLOCK, errno.EDEADLK}  # flock: EWOULDBLOCK; msvcrt: EACCES, EDEADLOCK
_ATTEMPTS = 3  # the holder removed the file between our open and our lock this many times: it is busy


@contextlib.contextmanager
def run_lock(out: str, *, windows: bool | None = None) -> Iterator[str]:
    """Hold the lock of the records file ``out`` for the block (its path yielded); ``busy`` when
    another run holds it. ``windows``: which OS call (default: this machine's; tests fake msvcrt)."""
    windows = os.name == "nt" if windows is None else windows
    records = os.path.realpath(out)  # one lock however the file is named (a symlink, a relative path)
    path = records + LOCK_SUFFIX
    fd = _acquire(path, records, windows)
    try:
        yield path
    finally:
        _release(fd, path, windows)


def _acquire(path: str, records: str, windows: bool) -> int:
    for _ in range(_ATTEMPTS):
        fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            _lock(fd, windows)
        except OSError as exc:
            os.close(fd)
            if exc.errno not in _HELD:
                raise InvalidArgument(f"out: {records}: cannot lock {path}: {exc.strerror or exc}") from exc
            break
        if _names(path, fd):
            return fd
        _unlock(fd, windows)  # the holder removed it after our open: ours is no one's file now
        os.close(fd)
    raise SessionBusy(f"out: {records} is being written by another triage run (it holds {path}); "
                      "wait for it, or name another file")


def _release(fd: int, path: str, windows: bool) -> None:
    if not windows:
        with contextlib.suppress(OSError):
            os.unlink(path)  # still held: a run that opened it meanwhile sees it is no longer the path's file
    _unlock(fd, windows)
    os.close(fd)
    if windows:
        with contextlib.suppress(OSError):
            os.unlink(path)  # refused while another run has it open: then it is that run's


def _names(path: str, fd: int) -> bool:
    """Whether ``path`` still names the file open as ``fd``."""
    try:
        there = os.stat(path)
    except FileNotFoundError:
        return False
    mine = os.fstat(fd)
    return (there.st_dev, there.st_ino) == (mine.st_dev, mine.st_ino)


def _lock(fd: int, windows: bool) -> None:
    if windows:
        msvcrt = importlib.import_module("msvcrt")  # Windows only; by name so mypy on POSIX reads it too
        os.lseek(fd, 0, os.SEEK_SET)  # locking() locks from the file position: the first byte, past EOF allowed
        msvcrt.locking(fd, msvcrt.LK_NBLCK, 1)
    else:
        import fcntl

        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)


def _unlock(fd: int, windows: bool) -> None:
    if windows:
        msvcrt = importlib.import_module("msvcrt")
        os.lseek(fd, 0, os.SEEK_SET)
        msvcrt.locking(fd, msvcrt.LK_UNLCK, 1)
    else:
        import fcntl

        fcntl.flock(fd, fcntl.LOCK_UN)
