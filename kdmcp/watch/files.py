"""Following the transcript and its session logs as ``tail -f`` does, refusing unsafe files.

Each file's offset is remembered and only what was appended since is read, at a bounded
interval; a session log that appears later is picked up on the next poll. Both kinds of file
hold everything the guest printed, so one that is not the reader's own and owner-only is
refused, not read (``file_problem``).
"""

from __future__ import annotations

import json
import os
import stat
import threading
import time
from collections.abc import Callable
from pathlib import Path

from kdmcp.transcript_files import ENV_TRANSCRIPT, session_log_path
from kdmcp.watch.state import WatchState

POLL_INTERVAL_S = 0.25
READ_CHUNK = 4 * 1024 * 1024  # per file per poll: one huge output cannot stall the refresh
LOG_TAIL_START = 256 * 1024  # a long log met for the first time is read from this far before its end


class WatchRefused(Exception):
    """The transcript cannot be watched: missing, or not safe to read. The message says why."""


def file_problem(st: os.stat_result) -> str | None:
    """Why a transcript file must not be read, or None.

    The server creates them 0600 (``open_private``); one readable by others was widened by
    someone, and one owned by another user is not the reader's to show. Windows files carry
    the directory's ACL instead of a mode, so there only the file type is checked.
    """
    if not stat.S_ISREG(st.st_mode):
        return "it is not a regular file"
    if hasattr(os, "getuid") and st.st_uid != os.getuid():
        return f"it is owned by uid {st.st_uid}, not by you (uid {os.getuid()})"
    if os.name == "posix" and st.st_mode & 0o077:
        return (
            f"others may read or write it (mode {stat.S_IMODE(st.st_mode):04o}), and it holds everything "
            "the guest printed: chmod 600 it"
        )
    return None


class Follower:
    """The bytes appended to one file since the last read; the file may appear later.

    Opened anew on every poll (never through a symlink, never blocking on a FIFO) and checked on
    the open descriptor, so what is checked is what is read. A file replaced (another inode) or
    cut shorter is read again from its start.
    """

    def __init__(self, path: Path, tail_start: int | None = None) -> None:
        self.path = path
        self.offset = 0
        self.size = 0
        self.problem: str | None = None
        self._tail_start = tail_start
        self._identity: tuple[int, int] | None = None
        self.skipped = False  # the first read began inside the file (tail_start)

    def read(self) -> bytes:
        flags = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)
        try:
            fd = os.open(self.path, flags)
        except FileNotFoundError:
            return b""
        except OSError as exc:  # ELOOP: a symlink planted where the log would be
            self.problem = f"cannot open it: {exc.strerror}"
            return b""
        try:
            st = os.fstat(fd)
            self.problem = file_problem(st)
            if self.problem is not None:
                return b""
            identity = (st.st_dev, st.st_ino)
            if identity != self._identity or st.st_size < self.offset:
                self._identity = identity
                self.offset = 0
                if self._tail_start is not None and st.st_size > self._tail_start:
                    self.offset, self.skipped = st.st_size - self._tail_start, True
            self.size = st.st_size
            os.lseek(fd, self.offset, os.SEEK_SET)
            data = os.read(fd, min(READ_CHUNK, max(0, st.st_size - self.offset)))
            self.offset += len(data)
            return data
        finally:
            os.close(fd)


class TranscriptReader:
    """Feeds a ``WatchState`` from the transcript and its session logs, one poll at a time."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.state = WatchState(path)
        self._records = Follower(path)
        self._logs: dict[str, Follower] = {}
        self._held = b""  # a record line still being written

    def check(self) -> None:
        """Refuse, with the reason, a transcript that is missing or unsafe to read."""
        try:
            st = os.stat(self.path, follow_symlinks=False)
        except FileNotFoundError:
            raise WatchRefused(
                f"no transcript at {self.path}: start the server with one (kd-mcp serve --transcript "
                f"{self.path}, or {ENV_TRANSCRIPT}={self.path} in the MCP client's server env)"
            ) from None
        problem = "it is a symbolic link" if stat.S_ISLNK(st.st_mode) else file_problem(st)
        if problem is not None:
            raise WatchRefused(f"refusing to read {self.path}: {problem}")

    def poll(self, now: float | None = None) -> bool:
        """Read what was appended to every file since the last poll; whether anything was."""
        data = self._records.read()
        if self._records.problem is not None:
            raise WatchRefused(f"refusing to read {self.path}: {self._records.problem}")
        changed = bool(data)
        *lines, self._held = (self._held + data).split(b"\n")
        for line in lines:
            try:
                record = json.loads(line)
            except (json.JSONDecodeError, UnicodeDecodeError):
                continue  # as read_records: a line that is not a record is skipped
            if isinstance(record, dict):
                self.state.ingest_record(record)
        for sid, view in self.state.sessions.items():
            follower = self._logs.get(sid)
            if follower is None:
                follower = self._logs[sid] = Follower(session_log_path(self.path, sid), tail_start=LOG_TAIL_START)
            chunk = follower.read()
            view.log_problem = follower.problem
            if chunk:
                if follower.skipped and view.log_bytes == 0:  # began mid-file: start at a whole line
                    chunk = chunk[chunk.find(b"\n") + 1 :]
                self.state.ingest_log(sid, chunk, now)
                view.log_bytes = follower.offset
                changed = True
        return changed


def follow(
    reader: TranscriptReader, on_tick: Callable[[bool], None], stop: threading.Event, interval: float = POLL_INTERVAL_S
) -> None:
    """Poll until ``stop`` is set, calling ``on_tick(changed)`` after each poll (every tick, so a
    resized terminal is redrawn too); the wait between polls is on ``stop``, bounded."""
    while not stop.is_set():
        changed = reader.poll(time.time())
        on_tick(changed)
        stop.wait(interval)
