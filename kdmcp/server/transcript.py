"""The transcript: an append-only JSONL record of what the server did, and each session's console.

One line per record — ``start`` (version, pid), each tool ``request`` (arguments redacted) and
``result`` (status, category, timings, output ids), session lifecycle, and the debugger events
reported — so a run can be audited or replayed after the fact (``kd-mcp transcript show`` and
``cast``). Every string goes through the server's redaction first, and every field is capped
with an explicit ``truncated`` marker so one huge output cannot balloon the file. The raw
console stream of each session goes to its own ``<transcript>.<session>.log``, masked the
same way, written as the session's output grows. Both hold everything the guest printed, so
both are created owner-only (``open_private``).

Every run has an id (``start``'s ``run``): session ids restart at ``s1`` with each server, so a
session log that already exists gets a header line naming the run before this run's bytes,
and the ``session created`` record says where they start (``log_offset``).
"""

from __future__ import annotations

import errno
import json
import logging
import os
import stat
import threading
import time
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any, TextIO

from kdmcp import __version__
from kdmcp.transcript_files import ENV_TRANSCRIPT, session_log_path

__all__ = ["ENV_TRANSCRIPT", "FIELD_LIMIT", "LogFlusher", "Transcript", "cap", "open_private", "read_records",
           "session_log_path"]

FIELD_LIMIT = 4096
FLUSH_INTERVAL_S = 0.5

_log = logging.getLogger(__name__)


def cap(value: Any, limit: int = FIELD_LIMIT) -> tuple[Any, bool]:
    """``value`` with strings longer than ``limit`` cut (recursively), and whether anything was."""
    if isinstance(value, str):
        return (value[:limit], True) if len(value) > limit else (value, False)
    if isinstance(value, dict):
        out: dict[str, Any] = {}
        cut = False
        for key, item in value.items():
            out[key], item_cut = cap(item, limit)
            cut = cut or item_cut
        return out, cut
    if isinstance(value, list):
        items = [cap(item, limit) for item in value[:200]]
        return [item for item, _ in items], len(value) > 200 or any(c for _, c in items)
    return value, False


class Transcript:
    """Appends redacted, capped JSON records to one file; thread-safe."""

    def __init__(self, path: str | os.PathLike[str], redact: Callable[[str], str]) -> None:
        self.path = Path(path)
        self._redact = redact
        self._lock = threading.Lock()
        # Held by whoever copies session output into the logs (``KdMcpApp.flush_session_logs``,
        # after each tool call and from ``LogFlusher``): the copy reads a position, writes, then
        # moves the position, so two copies at once would write the same bytes twice. Re-entrant:
        # shutdown flushes from inside a flush's caller.
        self.session_logs_lock = threading.RLock()
        # The folder must exist: a typo in --transcript or KDMCP_TRANSCRIPT would otherwise make a
        # tree somewhere nobody looks, and the person running `kd-mcp watch` would wait for ever.
        if not self.path.parent.is_dir():
            raise FileNotFoundError(errno.ENOENT, "no such folder for the transcript (kd-mcp creates none: make it "
                                    "first)", str(self.path.parent))
        self._file = open_private(self.path, buffering=1)  # lives as long as we do
        self.run_id = uuid.uuid4().hex[:12]
        self._logs: dict[str, TextIO] = {}  # this run's open session logs
        self.record("start", version=__version__, pid=os.getpid(), run=self.run_id)

    def record(self, kind: str, **fields: Any) -> None:
        data, truncated = cap(fields)
        entry = {"t": round(time.time(), 6), "kind": kind, **data}
        if truncated:
            entry["truncated"] = True
        line = self._redact(json.dumps(entry, default=str))
        with self._lock:
            if not self._file.closed:
                self._file.write(line + "\n")

    def session_log_path(self, session_id: str) -> Path:
        return session_log_path(self.path, session_id)

    def open_session_log(self, session_id: str) -> TextIO:
        """The session's console log, opened for appending, owner-only (see ``open_private``)."""
        return open_private(self.session_log_path(session_id))

    def session_log(self, session_id: str) -> TextIO:
        """This run's handle on the session's log (caller holds ``session_logs_lock``), opened on
        first use with a header line when the file already holds an earlier run's session."""
        log = self._logs.get(session_id)
        if log is None:
            log = self._logs[session_id] = self.open_session_log(session_id)
            if log.tell() > 0:
                log.write(self.log_header(session_id))
        return log

    def log_offset(self, session_id: str) -> int:
        """Where this run's part of the session's log will start (after the header, if one is due)."""
        path = self.session_log_path(session_id)
        size = path.stat().st_size if path.exists() else 0
        return size + len(self.log_header(session_id).encode()) if size else 0

    def log_header(self, session_id: str) -> str:
        return f"\n==== kd-mcp run {self.run_id} (pid {os.getpid()}): session {session_id} ====\n"

    def close(self) -> None:
        with self.session_logs_lock:
            for log in self._logs.values():
                log.close()
            self._logs.clear()
        with self._lock:
            if not self._file.closed:
                self._file.close()


class LogFlusher:
    """Copies each session's new console output into its log every ``interval`` seconds.

    Without it a session log grows only after a tool call, so what the target prints while it
    runs between calls (DbgPrint, a bugcheck banner) reaches ``kd-mcp watch`` only when the
    agent next calls a tool. A daemon thread waits on an Event with a timeout (no busy loop, and
    ``stop`` wakes it at once); a failing copy is logged and retried on the next tick, never
    fatal to the server.
    """

    def __init__(self, flush: Callable[[], None], lock: threading.RLock, interval: float = FLUSH_INTERVAL_S) -> None:
        self._flush = flush
        self._lock = lock
        self.interval = interval
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="kdmcp-log-flusher", daemon=True)
        self._failing = False

    def start(self) -> None:
        self._thread.start()

    def stop(self, timeout: float = 5.0) -> None:
        """Stop the thread and wait (bounded) for a copy in progress to finish."""
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join(timeout)

    def _run(self) -> None:
        while not self._stop.wait(self.interval):
            try:
                with self._lock:
                    self._flush()
            except Exception:  # keep serving; say it once, not twice a second
                if not self._failing:
                    _log.exception("copying session output to the transcript logs failed (retrying)")
                self._failing = True
            else:
                self._failing = False


def open_private(path: Path, buffering: int = -1) -> TextIO:
    """Open ``path`` to append text, as a regular file only its owner can read, whatever the umask.

    Created 0600; an existing file (left wider by an older version, or by hand) is narrowed with
    ``fchmod``. Never through a symlink (``O_NOFOLLOW``: a planted link must not make us append
    guest output to, and narrow, someone else's file), and never blocking on a FIFO.
    """
    flags = (
        os.O_WRONLY | os.O_APPEND | os.O_CREAT
        | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)
    )
    fd = os.open(path, flags, 0o600)
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise OSError(f"{path} is not a regular file")
        if hasattr(os, "fchmod"):  # POSIX; Windows files inherit the directory's ACL
            os.fchmod(fd, 0o600)
        return open(fd, "a", encoding="utf-8", buffering=buffering)
    except BaseException:
        os.close(fd)
        raise


def read_records(path: str | os.PathLike[str]) -> list[dict[str, Any]]:
    """The records of a transcript file (unparsable lines are skipped, not fatal)."""
    records = []
    with open(path, encoding="utf-8") as handle:
        for line in handle:
            try:
                record = json.loads(line)
            except json.JSONDecodeError:
                continue
            if isinstance(record, dict):
                records.append(record)
    return records
