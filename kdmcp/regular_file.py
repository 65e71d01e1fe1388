"""Read a file someone else named: only a regular file, only so many bytes, only so long.

The state file's path is a tool argument, so the least-privileged client chooses what the
server opens. ``open()`` on a FIFO blocks until a writer comes; ``/proc/self/fd/1`` is the
server's own MCP stdout (a pipe: the read never returns); ``/dev/zero`` never ends; procfs
files claim to be regular and empty and hold things like our environment. One such call
held a worker thread forever, and 45 of them starved every tool of every client.

So, in this order: refuse paths under ``/proc`` or ``/sys`` (as given and as resolved);
``stat`` the resolved path and refuse anything but a regular file *before* opening it
(opening a device can have side effects); refuse a size over the cap; open it with
``O_NONBLOCK`` (a FIFO swapped in after the ``stat`` cannot block the open) and
``O_NOFOLLOW`` (the resolved last component must not turn into a symlink meanwhile);
``fstat`` the descriptor and check it is still a regular file, the same one that was
checked; read at most ``max_bytes + 1`` bytes. Symlinks are followed on purpose: a
symlinked dotfile is normal, and what they point at is what gets checked.

A regular file can still hang a read on a dead network or FUSE filesystem, in the kernel
where no flag helps. The read therefore runs in a daemon thread and the caller waits at
most ``READ_DEADLINE_S``; a thread stuck past it is abandoned, and once
``MAX_STUCK_READS`` are stuck further reads are refused at once instead of piling up.

Such a file may hold a KDNET key, so :func:`others_can_read` is here too: the readers warn
when the group or other users could read it.
"""

from __future__ import annotations

import errno
import os
import stat
import threading
from pathlib import Path
from typing import Final

__all__ = ["MAX_STUCK_READS", "READ_DEADLINE_S", "FileRefused", "others_can_read", "read_regular_file"]

READ_DEADLINE_S: Final = 5.0
MAX_STUCK_READS: Final = 4
# The kernel's pseudo-filesystems: nothing there is a file anyone meant to hand us.
_PSEUDO_ROOTS = ("/proc", "/sys")
_OPEN_FLAGS = (
    os.O_RDONLY
    | getattr(os, "O_NONBLOCK", 0)
    | getattr(os, "O_NOFOLLOW", 0)
    | getattr(os, "O_CLOEXEC", 0)
    | getattr(os, "O_BINARY", 0)  # Windows: no newline translation
)

_stuck_lock = threading.Lock()
_stuck = 0


class FileRefused(Exception):
    """The path is not something we read; the message says why, in words for the caller."""


def read_regular_file(
    path: str | os.PathLike[str], max_bytes: int, *, deadline_s: float | None = None, head: bool = False
) -> bytes:
    """The contents of the regular file at ``path`` (at most ``max_bytes``); with ``head``, its
    first ``max_bytes`` bytes, whatever its size (a dump's signature: dumps are gigabytes).

    Raises ``FileRefused`` for anything that is not a regular file, too large, or too slow,
    and ``OSError`` (``FileNotFoundError``, ``PermissionError``, ...) as opening raises it.
    """
    global _stuck  # noqa: PLW0603 - one count per process, guarded by _stuck_lock
    deadline = READ_DEADLINE_S if deadline_s is None else deadline_s
    with _stuck_lock:
        if _stuck >= MAX_STUCK_READS:
            raise FileRefused(
                f"cannot be read now: {_stuck} earlier reads are still stuck in the filesystem "
                "(a hung network or FUSE mount?)"
            )
    box: dict[str, bytes | BaseException] = {}
    done = threading.Event()
    abandoned = threading.Event()

    def work() -> None:
        global _stuck  # noqa: PLW0603
        try:
            box["data"] = _read(Path(path), max_bytes, head)
        except BaseException as exc:  # handed to the waiting caller, whatever it is
            box["error"] = exc
        finally:
            with _stuck_lock:
                done.set()
                if abandoned.is_set():
                    _stuck -= 1

    threading.Thread(target=work, name="kdmcp-read-file", daemon=True).start()
    if not done.wait(deadline):
        with _stuck_lock:
            if not done.is_set():
                abandoned.set()
                _stuck += 1
        if abandoned.is_set():
            raise FileRefused(f"did not finish reading within {deadline:g} s (a hung network or FUSE mount?)")
    error = box.get("error")
    if isinstance(error, BaseException):
        raise error
    data = box["data"]
    assert isinstance(data, bytes)
    return data


def _read(path: Path, max_bytes: int, head: bool = False) -> bytes:
    given = os.path.abspath(path)
    if _under_pseudo_root(given):
        raise FileRefused("is under /proc or /sys (kernel pseudo-files), not a regular file")
    real = os.path.realpath(given)
    if _under_pseudo_root(real):
        raise FileRefused("resolves to a path under /proc or /sys (kernel pseudo-files), not a regular file")
    checked = os.stat(real)
    _require_regular(checked.st_mode)
    if checked.st_size > max_bytes and not head:
        raise _too_large(max_bytes)
    try:
        fd = os.open(real, _OPEN_FLAGS)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise FileRefused("was replaced by a symbolic link while being opened") from None
        raise
    try:
        opened = os.fstat(fd)
        _require_regular(opened.st_mode)
        if (opened.st_dev, opened.st_ino) != (checked.st_dev, checked.st_ino):
            raise FileRefused("was replaced while being opened")
        if opened.st_dev in _pseudo_devices():
            raise FileRefused("is on /proc or /sys (kernel pseudo-files), not a regular file")
        chunks: list[bytes] = []
        total = 0
        while total <= max_bytes:
            chunk = os.read(fd, max_bytes - total if head else max_bytes + 1 - total)
            if not chunk:
                break
            chunks.append(chunk)
            total += len(chunk)
            if head and total >= max_bytes:
                break
    finally:
        os.close(fd)
    if total > max_bytes:
        raise _too_large(max_bytes)
    return b"".join(chunks)


def _too_large(max_bytes: int) -> FileRefused:
    return FileRefused(f"is larger than {max_bytes // 1024} KiB, too large to be this file")


def _require_regular(mode: int) -> None:
    if stat.S_ISREG(mode):
        return
    if stat.S_ISDIR(mode):
        raise FileRefused("is a directory, not a file")
    if stat.S_ISFIFO(mode):
        kind = "a FIFO (named pipe)"
    elif stat.S_ISCHR(mode):
        kind = "a character device"
    elif stat.S_ISBLK(mode):
        kind = "a block device"
    elif stat.S_ISSOCK(mode):
        kind = "a socket"
    else:
        kind = "something"
    raise FileRefused(f"is {kind}, not a regular file")


def _under_pseudo_root(path: str) -> bool:
    if os.name != "posix":
        return False
    return any(path == root or path.startswith(root + "/") for root in _PSEUDO_ROOTS)


def _pseudo_devices() -> set[int]:
    """The device numbers of /proc and /sys, for the check on the opened descriptor."""
    devices: set[int] = set()
    if os.name != "posix":
        return devices
    for root in _PSEUDO_ROOTS:
        try:
            devices.add(os.stat(root).st_dev)
        except OSError:
            continue  # not mounted here
    return devices


def others_can_read(mode: int) -> bool:
    """POSIX mode bits: may the group or other users read the file? (A file holding a key should not.)"""
    return bool(mode & (stat.S_IRGRP | stat.S_IROTH))
