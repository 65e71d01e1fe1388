"""What kd-mcp remembers of the breakpoints it set, per session: ``bl`` does not say it all.

``bl`` lists an id, a state, an address or a deferred expression, a pass count and the command
string; it does not say that ``/1`` made one one-shot, which condition a ``.if`` string
wraps, or how often a breakpoint has hit. The book keeps, per session and id, how the
breakpoint was asked for and the event sequence number when it was set: its hits are the
session's "Breakpoint N hit" events after that. A breakpoint set by hand (kd_command) has
no entry; its hits count from the start of the session.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from typing import Literal

__all__ = ["BreakpointBook", "BreakpointNote"]


@dataclass(frozen=True)
class BreakpointNote:
    kind: Literal["code", "deferred", "data"]
    expression: str  # the location as given
    since_seq: int  # the session's last event seq when it was set
    condition: str | None = None
    command: str | None = None
    one_shot: bool = False


class BreakpointBook:
    """Notes by session and breakpoint id (kd reuses a cleared id: a new note replaces the old)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._notes: dict[str, dict[int, BreakpointNote]] = {}

    def note(self, session_id: str, bp_id: int, note: BreakpointNote) -> None:
        with self._lock:
            self._notes.setdefault(session_id, {})[bp_id] = note

    def get(self, session_id: str, bp_id: int) -> BreakpointNote | None:
        with self._lock:
            return self._notes.get(session_id, {}).get(bp_id)

    def keep_only(self, session_id: str, ids: set[int]) -> None:
        """Forget the notes of breakpoints ``bl`` no longer lists (cleared, or one-shots that hit)."""
        with self._lock:
            notes = self._notes.get(session_id, {})
            for gone in set(notes) - ids:
                del notes[gone]
