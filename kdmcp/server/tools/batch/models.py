"""What ``debug_batch`` takes and returns (issue 15): the steps, their ``expect``, the result.

The tool's schema types ``steps`` and ``always`` as plain objects (their shape is one line of
its description): the step models here would cost the surface a ``$defs`` block of several
hundred bytes on every turn, for a tool most turns do not call. They validate every batch
all the same, before anything runs, and a refusal names the step and field.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import ConfigDict, Field, model_validator
from typing_extensions import Self

from kdmcp.engine import SessionState
from kdmcp.errors import ErrorCategory
from kdmcp.server import models
from kdmcp.server.args import Address
from kdmcp.server.text import event_lines, header
from kdmcp.validation import LazyModel

__all__ = [
    "MAX_RESTORE_BYTES",
    "MAX_STEPS",
    "BatchRequest",
    "BatchResult",
    "Expect",
    "MemoryRange",
    "Restore",
    "Step",
    "StepError",
    "StepRecord",
    "text",
]

MAX_STEPS = 50
MAX_RESTORE_BYTES = 4096
Outcome = Literal["committed", "failed", "timed_out", "cancelled"]


class Expect(LazyModel):
    """What a step must give for the batch to go on; without one, it must succeed."""

    model_config = ConfigDict(extra="forbid")

    ok: bool | None = None
    error: ErrorCategory | None = Field(default=None, description="an error of this category (implies ok: false)")
    state: SessionState | None = Field(default=None, description="the session's state after the step")
    contains: str | None = Field(
        default=None, min_length=1, max_length=1000, description="text the result's text block (or error message) holds"
    )
    fields: dict[str, Any] | None = Field(
        default=None,
        description="top-level structuredContent fields and "
        "their values (an error's fields: category, message, state…)",
    )

    @model_validator(mode="after")
    def _consistent(self) -> Self:
        if self.error is not None and self.ok:
            raise ValueError("ok: true and error contradict each other")
        return self

    @property
    def wants_ok(self) -> bool:
        return False if self.error is not None else self.ok if self.ok is not None else True


class Step(LazyModel):
    """One step: ``{"tool": NAME, "arguments": {…}}`` or ``{"command": "kd text"}`` (kd_command)."""

    model_config = ConfigDict(extra="forbid")

    tool: str | None = Field(default=None, min_length=1, max_length=64)
    arguments: dict[str, Any] = Field(default_factory=dict)
    command: str | None = Field(default=None, min_length=1, max_length=4000)
    expect: Expect | None = None

    @model_validator(mode="after")
    def _one_kind(self) -> Self:
        if (self.tool is None) == (self.command is None):
            raise ValueError('a step is {"tool": NAME, "arguments": {…}} or {"command": "kd text"}, one of them')
        if self.command is not None and self.arguments:
            raise ValueError('arguments go with "tool"; a "command" step is the command alone')
        return self

    @property
    def tool_name(self) -> str:
        return self.tool if self.tool is not None else "kd_command"

    @property
    def tool_arguments(self) -> dict[str, Any]:
        return dict(self.arguments) if self.command is None else {"command": self.command}

    @property
    def what(self) -> str:
        """How the result names the step: the tool, or the command in backquotes (as kd's docs write one)."""
        return self.tool if self.tool is not None else f"`{self.command}`"


class MemoryRange(LazyModel):
    model_config = ConfigDict(extra="forbid")

    address: Address
    length: int = Field(ge=1, le=MAX_RESTORE_BYTES)


class Restore(LazyModel):
    """What the rollback restores besides the breakpoints and the break-in: only when asked,
    as reading them costs a command each at the start of every batch."""

    model_config = ConfigDict(extra="forbid")

    registers: bool = False
    memory: list[MemoryRange] = Field(default_factory=list, max_length=16)


class BatchRequest(LazyModel):
    """The tool's arguments about steps, validated together before anything runs."""

    model_config = ConfigDict(extra="forbid")

    steps: list[Step] = Field(min_length=1, max_length=MAX_STEPS)
    always: list[Step] = Field(default_factory=list, max_length=MAX_STEPS)
    restore: Restore = Field(default_factory=Restore)


class StepError(LazyModel):
    category: str
    message: str


class StepRecord(LazyModel):
    """What one step did. ``ok``: it met its ``expect`` (a step expected to fail is ok when it fails so)."""

    index: int = Field(description="1-based, within steps (or within always)")
    what: str = Field(description="the tool, or `the command` of a command step")
    always: bool = False
    ok: bool
    error: StepError | None = Field(default=None, description="the error the step's tool returned")
    unmet: str | None = Field(default=None, description="how the result missed the step's expect")
    summary: str = Field(default="", description="the first line the result shows")
    output_id: str | None = None


class BatchResult(models.SessionResult):
    """``debug_batch``: the outcome, each step, what the rollback did, the session's state after."""

    outcome: Outcome
    failed_step: int | None = Field(default=None, description="the step that failed or was running at the end")
    steps: list[StepRecord] = Field(default_factory=list)
    rolled_back: list[str] = Field(default_factory=list, description="the rollback's actions, in order")
    not_rolled_back: list[str] = Field(default_factory=list, description="what the rollback could not undo, and why")

    @classmethod
    def render_text(cls, data: dict[str, Any]) -> str:
        return text(data)


# ------------------------------------------------------------------------ text block


def _step_line(step: dict[str, Any]) -> str:
    where = f"always {step['index']}" if step.get("always") else str(step["index"])
    verdict = "ok" if step["ok"] else "FAILED"
    error = step.get("error")
    said = f"{error['message']}" if error else step.get("summary", "")
    if step.get("unmet"):
        detail = f"{step['unmet']} ({said})" if said else step["unmet"]
    else:
        detail = f"error[{error['category']}]: {said}" if error else said
    return f"{where} {verdict} {step['what']}" + (f": {detail}" if detail else "")


def text(data: dict[str, Any]) -> str:
    """The text block: a header (session, state, prompt, elapsed, outcome), a line per step,
    what was rolled back, then one line per event."""
    outcome = data["outcome"] + (f" at step {data['failed_step']}" if "failed_step" in data else "")
    lines = [header(data, outcome), *(_step_line(s) for s in data.get("steps", ()))]
    if data.get("rolled_back"):
        lines.append("rolled back: " + "; ".join(data["rolled_back"]))
    lines += [f"not rolled back: {n}" for n in data.get("not_rolled_back", ())]
    return "\n".join(lines + event_lines(data))
