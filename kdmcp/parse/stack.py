"""``k``, ``kb``, ``kv``, ``kn``, ``kp``, ``kP``, ``kc``, ``kL``, ``knL`` and ``~*k``.

The frame grammar is in ``frames``; this module adds what only ``k`` output has: the
``*** Stack trace for last set context`` note and, for ``~*k``/``~*kb``, one section per
thread headed by the thread's ``~`` line::

    . 2  id: 570.598   Suspend: 1 Teb 7ffdc000 Unfrozen
    ChildEBP RetAddr
     009fdd0c 71a32520 COMCTL32!_chkstk+0x25
"""

from __future__ import annotations

from typing import Any

from kdmcp.parse._text import split_lines
from kdmcp.parse.frames import frames_from_lines, frames_from_text
from kdmcp.parse.models import StackRecord
from kdmcp.parse.threads import USER_THREAD_RE, user_thread_fields

# Notes kd prints above a stack ("*** Stack trace for last set context - .thread/.cxr resets it").
_NOTE_PREFIX = "*** Stack trace"


def parse_stack(command: str, raw: str, per_thread: bool = False) -> StackRecord | None:
    """A ``StackRecord``; ``per_thread`` (``~*k``) splits frames by thread header lines."""
    notes = [ln.strip() for ln in split_lines(raw) if _NOTE_PREFIX in ln] if _NOTE_PREFIX in raw else []
    if per_thread or _has_thread_headers(split_lines(raw[:1024])):
        threads = _per_thread(split_lines(raw))
        if threads:
            return StackRecord.model_validate({"command": command, "raw": raw, "threads": threads, "notes": notes})
    frames = frames_from_text(raw)
    if not frames:
        return None
    return StackRecord.model_validate({"command": command, "raw": raw, "frames": frames, "notes": notes})


def _has_thread_headers(lines: list[str]) -> bool:
    """True when the output is sectioned by ``~`` thread lines (``~*k`` seen without prefix)."""
    return any(USER_THREAD_RE.match(line) for line in lines[:4])


def _per_thread(lines: list[str]) -> list[dict[str, Any]]:
    """Frames grouped under the thread line that precedes them."""
    threads: list[dict[str, Any]] = []
    section: list[str] = []
    for line in lines:
        t = USER_THREAD_RE.match(line)
        if t is None:
            if threads:
                section.append(line)
            continue
        if threads:
            threads[-1]["frames"] = frames_from_lines(section)
            section = []
        info = user_thread_fields(t)
        threads.append(
            {
                "index": info["index"],
                "id": info["id"],
                "process_id": info["process_id"],
                "thread_id": info["thread_id"],
                "teb": info["teb"],
                "current": info["current"],
                "header": line.strip(),
                "frames": [],
            }
        )
    if threads:
        threads[-1]["frames"] = frames_from_lines(section)
    return threads
