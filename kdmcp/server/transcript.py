"""The transcript: an append-only JSONL record of what the server did, and each session's console.

One line per record — ``start`` (version, pid), each tool ``request`` (arguments redacted) and
``result`` (status, category, timings, output ids), session lifecycle, and the debugger events
reported — so a run can be audited or replayed after the fact (``kd-mcp transcript show`` and
``cast``). Every string goes through the server's redaction first, and every field is capped
with an explicit ``truncated`` marker so one huge output cannot balloon the file. The raw
console stream of each session goes to its own ``<transcript>.<session>.log``, masked the
same way, written as the session's output grows.
"""

from __future__ import annotations

import json
import os
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from kdmcp import __version__

FIELD_LIMIT = 4096
ENV_TRANSCRIPT = "KDMCP_TRANSCRIPT"


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
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._file = open(self.path, "a", encoding="utf-8", buffering=1)  # noqa: SIM115 (lives as long as we do)
        self.record("start", version=__version__, pid=os.getpid())

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
        return self.path.with_name(f"{self.path.name}.{session_id}.log")

    def close(self) -> None:
        with self._lock:
            if not self._file.closed:
                self._file.close()


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
