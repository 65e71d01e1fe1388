"""What engine calls return: pydantic models the server turns into ``structuredContent``."""

from __future__ import annotations

from pydantic import BaseModel

from kdmcp.engine.commands import CommandKind
from kdmcp.engine.events import DebuggerEvent, SessionState
from kdmcp.parse.prompt import Prompt


class StartResult(BaseModel):
    session_id: str
    state: SessionState
    prompt: Prompt | None
    command_line: str  # redacted: key=***
    banner: str
    events: list[DebuggerEvent]
    exit_code: int | None
    elapsed_ms: float


class CommandResult(BaseModel):
    """One command's output (capped inline; ``output_offset``/``output_end`` address all of it)."""

    command: str
    kind: CommandKind
    state: SessionState
    prompt: Prompt | None
    output: str
    truncated: bool
    output_offset: int
    output_end: int
    events: list[DebuggerEvent]
    elapsed_ms: float


class ContinueResult(BaseModel):
    state: SessionState
    confirmed: str  # "running" or "stopped" (the target stopped again at once)
    prompt: Prompt | None
    events: list[DebuggerEvent]
    output_offset: int
    elapsed_ms: float


class BreakResult(BaseModel):
    state: SessionState
    already_broken: bool
    prompt: Prompt | None
    events: list[DebuggerEvent]
    elapsed_ms: float


class StopResult(BaseModel):
    actions: list[str]
    state: SessionState
    exit_code: int | None
    elapsed_ms: float


class SessionInfo(BaseModel):
    session_id: str
    state: SessionState
    command_line: str
    pid: int | None
    output_bytes: int
    started_at_unix: float
