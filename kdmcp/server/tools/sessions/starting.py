"""What every start tool does around the core's bounded start (``KdMcpApp.start_session``).

A start waits for the debugger to reach its target, which may take the whole timeout: the
client is told what it waits for and for how long, and a client that gives up stops the
debugger the start waits on (none is left behind waiting for a target). A plain start is
served as a ``StartResult``; ``open_dump`` serves its own model from the same bounded start.
"""

from __future__ import annotations

from kdmcp.engine.launch import Target
from kdmcp.server import models
from kdmcp.server.call import Call

__all__ = ["started", "waiting"]


def waiting(call: Call, doing: str, timeout_s: float | None) -> None:
    """Report ``doing`` while the start waits (its bound: the timeout, else ``timeouts.startup``),
    and stop the debugger it waits on if the client cancels the call."""
    call.progress(doing, timeout_s or call.app.options.config.timeouts.startup)
    call.on_cancel(lambda: call.app.abort_start(call.cancel))


def started(call: Call, target: Target, *, initial_break: bool, timeout_s: float | None,
            state_file: str | None = None, warnings: list[str] | None = None) -> models.StartResult:
    """Start a debugger on ``target`` (bounded, cancelled with the call) and serve its ``StartResult``."""
    session, result = call.app.start_session(target, initial_break=initial_break, timeout_s=timeout_s,
                                             cancel=call.cancel, owner=call.owner)
    return call.app.served_start(session, result, models.StartResult, state_file=state_file, warnings=warnings)
