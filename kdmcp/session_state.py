"""The states a debugger session is in: the one type the engine, its errors and every result share.

It lives below the engine (which re-exports it from ``kdmcp.engine.events``) so that
``kdmcp.errors`` can carry a typed state without importing the engine.
"""

from __future__ import annotations

from enum import Enum

__all__ = ["SessionState"]


class SessionState(str, Enum):
    """docs/architecture.md, "State machine". Every tool result reports the state after the call."""

    starting = "starting"
    waiting_for_target = "waiting_for_target"  # "Waiting to reconnect..." before any connection
    running = "running"  # the target runs; kd reads no commands
    broken = "broken"  # at a prompt, ready for commands
    busy = "busy"  # a command is executing (or timed out and may still be)
    rebooting = "rebooting"  # "Shutdown occurred ..."
    reconnecting = "reconnecting"  # "Waiting to reconnect..." after a connection existed
    lost = "lost"  # KDNET gave up: "Retry sending the same data packet for 64 times"
    exited = "exited"  # the debugger process ended
