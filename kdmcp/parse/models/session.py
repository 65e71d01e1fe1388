"""Records of the debugging session: breakpoints (``bl``), the target (``vertarget``), and events
(go/step output, connect banners).
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from kdmcp.parse.models.base import RecordBase, StrictModel
from kdmcp.parse.models.parts import Context, TargetInfo

# --------------------------------------------------------------------------- breakpoints


class Breakpoint(StrictModel):
    """One ``bl`` row."""

    id: int
    enabled: bool
    unresolved: bool = False
    address: str | None = None
    access: str | None = None  # ba: "e" / "r" / "w" / "i"
    size: int | None = None
    pass_count: int | None = None
    initial_pass_count: int | None = None
    thread: str | None = None  # "0:****" (process:thread filter in user mode)
    symbol: str | None = None
    command: str | None = None
    file: str | None = None  # "[file @ line]": the source location, with source line loading on
    line: int | None = None
    group: str | None = None  # a container row: "inline function", "hierarchical breakpoint"
    parent: int | None = None  # the id of the container row this breakpoint is listed under
    inline_function: str | None = None  # "(inline function simple!MoreCalculate)" after the symbol
    partial: bool = False  # a row read only in part (kdmcp/parse/partial.py), whole in ``raw_line``
    raw_line: str | None = None


class BreakpointsRecord(RecordBase):
    """``bl`` (and the few ``bp``/``bm`` outputs that list what they set)."""

    kind: Literal["breakpoints"] = "breakpoints"
    breakpoints: list[Breakpoint] = Field(default_factory=list)


# --------------------------------------------------------------------------- target


class TargetRecord(RecordBase, TargetInfo):
    """``vertarget``, ``version``, ``.time``."""

    kind: Literal["target"] = "target"


# --------------------------------------------------------------------------- events


class Event(StrictModel):
    """Something the debugger reported on its own: a connect banner line, a module load,
    an exception, a breakpoint hit, a bugcheck, a verifier stop..."""

    kind: str
    text: str
    code: str | None = None
    description: str | None = None
    first_chance: bool | None = None
    process_id: str | None = None
    thread_id: str | None = None
    breakpoint_id: int | None = None
    start: str | None = None
    end: str | None = None
    name: str | None = None
    details: dict[str, str] = Field(default_factory=dict)


class EventsRecord(RecordBase):
    """Output of go/step commands, ``.breakin``, and the banner before the first prompt."""

    kind: Literal["events"] = "events"
    events: list[Event] = Field(default_factory=list)
    target: TargetInfo | None = None
    context: Context | None = None
