"""What engine calls return: pydantic models the server serves by field name.

Events are not among their fields: a session's events reach a reader one way, by sequence
number (``DebuggerSession.events_since``), so the server's per-caller cursor also sees what
happened between calls (DbgPrint while the target ran) and nothing is delivered twice.
"""

from __future__ import annotations

from kdmcp.engine.commands import CommandKind
from kdmcp.engine.events import SessionState
from kdmcp.engine.kinds import SessionKind
from kdmcp.parse.prompt import Prompt
from kdmcp.validation import LazyModel


class StartResult(LazyModel):
    session_id: str
    state: SessionState
    prompt: Prompt | None
    command_line: str  # redacted: key=***
    banner: str
    exit_code: int | None
    elapsed_ms: float


class CommandOutput(LazyModel):
    """One command's output (capped inline; ``output_offset``/``output_end`` address all of it)."""

    command: str
    kind: CommandKind
    state: SessionState
    prompt: Prompt | None
    output: str
    truncated: bool
    output_offset: int
    output_end: int
    elapsed_ms: float


class ContinueResult(LazyModel):
    state: SessionState
    # "running" (kd read the g and did not stop), "stopped" (it stopped again at once) or
    # "unread" (kd has not read the g: frozen or hung; the target may still be at its break)
    confirmed: str
    prompt: Prompt | None
    output_offset: int
    elapsed_ms: float


class BreakResult(LazyModel):
    state: SessionState
    already_broken: bool
    prompt: Prompt | None
    elapsed_ms: float


class StopResult(LazyModel):
    actions: list[str]
    state: SessionState
    exit_code: int | None
    elapsed_ms: float
    left: str = ""  # what the target was left doing, claimed only on the debugger's evidence


class SessionInfo(LazyModel):
    session_id: str
    state: SessionState
    kind: SessionKind
    attached_to: str
    command_line: str
    pid: int | None
    output_bytes: int
    started_at_unix: float
