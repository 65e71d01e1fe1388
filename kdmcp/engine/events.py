"""Session states and the events the debugger reports on its own (not as command output)."""

from __future__ import annotations

from enum import Enum
from typing import Literal

from pydantic import BaseModel


class SessionState(str, Enum):
    """design.md's state machine. Every tool result reports the state after the call."""

    starting = "starting"
    waiting_for_target = "waiting_for_target"  # "Waiting to reconnect..." before any connection
    running = "running"  # the target runs; kd reads no commands
    broken = "broken"  # at a prompt, ready for commands
    busy = "busy"  # a command is executing (or timed out and may still be)
    rebooting = "rebooting"  # "Shutdown occurred ..."
    reconnecting = "reconnecting"  # "Waiting to reconnect..." after a connection existed
    lost = "lost"  # KDNET gave up: "Retry sending the same data packet for 64 times"
    exited = "exited"  # the debugger process ended


EventKind = Literal[
    "connected",
    "waiting_for_target",
    "break_in",
    "breakpoint",
    "exception",
    "bugcheck",
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
