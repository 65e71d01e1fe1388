"""Files of records a tool wrote (a triage run's JSONL), readable through ``read_output`` like a session's output.

A triage run answers with its buckets and an ``output_id`` (``tr1:0-N``: the file's id and its
byte range, the form a command's output has) naming where every per-dump record is; the
records are pages of that file, so no tool of their own is needed (the surface budget). The
file belongs to the client whose run wrote it: another client's id reads as unknown, as a
session's does (docs/remote-listener.md). It lives here, not in the server's core, because
two tool families share it (the triage family adds, the output family reads) and families
share only what lies below them.
"""

from __future__ import annotations

import itertools
import threading

from kdmcp.errors import UnknownSession

__all__ = ["RecordFiles"]


class RecordFiles:
    """Id -> (path, owner) of the record files this server wrote; an app's one (``state_of``)."""

    PREFIX = "tr"

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._files: dict[str, tuple[str, str | None]] = {}
        self._ids = itertools.count(1)

    def add(self, path: str, owner: str | None) -> str:
        """The id of ``path`` for ``owner`` (the same id for the same file and owner)."""
        with self._lock:
            for file_id, (known, known_owner) in self._files.items():
                if known == path and known_owner == owner:
                    return file_id
            file_id = f"{self.PREFIX}{next(self._ids)}"
            self._files[file_id] = (path, owner)
            return file_id

    def path(self, file_id: str, owner: str | None) -> str | None:
        """The file behind ``file_id`` for ``owner``; None when the id is no record file's."""
        with self._lock:
            entry = self._files.get(file_id)
        if entry is None:
            return None
        if entry[1] != owner:
            raise UnknownSession(f"no session {file_id!r}", session_id=file_id)
        return entry[0]
