"""Session states and the events the debugger reports on its own (not as command output)."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel

from kdmcp.session_state import SessionState

__all__ = ["EVENT_TEXT_LIMIT", "DebuggerEvent", "EventKind", "SessionState"]

EventKind = Literal[
    "connected",
    "client_connected",  # a debugging client joined the session's server (share_session)
    "waiting_for_target",
    "break_in",
    "breakpoint",
    "exception",
    "bugcheck",
    # the target stopped with no reason line: a step (p/t), a return (gu) or g ADDRESS ended
    # there; the text is the new location and its instruction (engine/step_stop.py)
    "step",
    "reboot",
    "reconnecting",
    "transport_lost",
    "dbgprint",
    "exited",
]

EVENT_TEXT_LIMIT = 4096


class DebuggerEvent(BaseModel):
    """Something the target or debugger did, with where its text sits in the session output."""

    seq: int
    kind: EventKind
    text: str
    offset: int
    end_offset: int
    time_unix: float
    during_command: bool = False
    breakpoint: int | None = None
    code: str | None = None  # bugcheck or exception code, "0x..." lower case
    truncated: bool = False
