"""What the run-control tools return (issue 15): breakpoints, locations, stops.

Each is a ``TypedResult``: the typed fields a program branches on beside the raw output kd
printed. Fields that are usually absent default to ``None``/``False`` so ``structuredContent``
leaves them out (docs/results.md, "Economy").
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field

from kdmcp.server.models import TypedResult
from kdmcp.server.text import count, ids
from kdmcp.validation import LazyModel

__all__ = ["BreakpointKind", "BreakpointRow", "BreakpointsResult", "ClearResult", "Location", "LocationResult",
           "RunToResult", "SetBreakpointResult", "StepResult", "Stop", "WaitResult"]

BreakpointKind = Literal["code", "deferred", "data"]
StopReason = Literal["breakpoint", "exception", "bugcheck", "break_in", "step", "exited", "module_load",
                     "module_unload", "process_exit", "thread_exit"]


class BreakpointRow(LazyModel):
    """One breakpoint as ``bl`` lists it, with what kd-mcp knows of how it was set."""

    id: int
    state: Literal["enabled", "disabled"]
    kind: BreakpointKind = Field(description="code (bp), deferred (bu, or bp on a module not loaded), data (ba)")
    address: str | None = Field(default=None, description="where it is set; absent while unresolved")
    symbol: str | None = Field(default=None, description="the symbol, or the expression a deferred one waits for")
    unresolved: bool = Field(default=False, description="deferred: its module is not loaded yet")
    access: str | None = Field(default=None, description="data breakpoints: e, r, w or i")
    size: int | None = None
    hits: int = Field(default=0, description="'Breakpoint N hit' stops this session has seen since it was set")
    condition: str | None = None
    command: str | None = Field(default=None, description="what kd runs at each hit")
    one_shot: bool = False
    thread: str | None = Field(default=None, description="user mode: bl's process:thread filter, e.g. 0:****")


class Location(LazyModel):
    """Where the target is stopped: who (processor, thread, process) and at which instruction."""

    ip: str = Field(description="the instruction pointer")
    symbol: str | None = Field(default=None, description="symbol+offset of ip, as kd names it")
    instruction: str | None = Field(default=None, description="the instruction at ip: mnemonic and operands")
    bytes: str | None = None
    processor: int | None = Field(default=None, description="kernel: the current processor")
    thread: str | None = Field(default=None, description="kernel: the current ETHREAD; user: the thread's pid.tid")
    process: str | None = Field(default=None, description="kernel: the current EPROCESS; user: the process id")
    thread_index: int | None = Field(default=None, description="user mode: the thread's ~ number")


class Stop(LazyModel):
    """Why the target stopped: the event kd printed for it."""

    reason: StopReason
    breakpoint: int | None = None
    code: str | None = Field(default=None, description="the exception or bugcheck code")
    text: str = Field(description="kd's line for it (the first line of the event)")
    seq: int = Field(description="the event's sequence number in this session")


def _location_line(data: dict[str, Any]) -> list[str]:
    loc = data.get("location")
    if not loc:
        return []
    who = [f"{name} {loc[name]}" for name in ("processor", "thread", "process") if name in loc]
    return [f"at {loc.get('symbol') or loc['ip']}" + (f" ({', '.join(who)})" if who else "")]


def _stop_line(data: dict[str, Any]) -> list[str]:
    stop = data.get("stop")
    return [f"stopped: {stop['reason']}" + (f" {stop['breakpoint']}" if "breakpoint" in stop else "")
            + (f" {stop['code']}" if "code" in stop else "")] if stop else []


class LocationResult(TypedResult):
    location: Location

    @classmethod
    def text_lines(cls, data: dict[str, Any]) -> list[str]:
        return _location_line(data)


class SetBreakpointResult(TypedResult):
    breakpoint: BreakpointRow
    warning: str | None = Field(default=None, description="a deferred one on a module already loaded: why it "
                                "may never resolve")

    @classmethod
    def text_lines(cls, data: dict[str, Any]) -> list[str]:
        bp = data["breakpoint"]
        if bp.get("unresolved"):
            where = f"deferred: {bp.get('symbol')}" + ("" if "warning" in data else " (set when its module loads)")
        else:
            where = f"at {bp.get('address')} {bp.get('symbol', '')}".rstrip()
        return [f"breakpoint #{bp['id']} {where}", *(f"warning: {w}" for w in [data.get("warning")] if w)]


class BreakpointsResult(TypedResult):
    breakpoints: list[BreakpointRow] = Field(default_factory=list)

    @classmethod
    def text_lines(cls, data: dict[str, Any]) -> list[str]:
        return [] if data.get("breakpoints") else ["no breakpoints"]


class ClearResult(TypedResult):
    cleared: list[int] = Field(default_factory=list)
    not_found: list[int] = Field(default_factory=list, description="ids asked for that were not set")
    remaining: list[BreakpointRow] = Field(default_factory=list)

    @classmethod
    def text_lines(cls, data: dict[str, Any]) -> list[str]:
        # ids with '#': "cleared 0" would read as a count
        cleared = data.get("cleared", [])
        said = f"cleared {count(len(cleared), 'breakpoint')}" + (f" ({ids(cleared)})" if cleared else "")
        lines = [f"{said}; {len(data.get('remaining', [])) or 'none'} remaining"]
        if data.get("not_found"):
            lines.append(f"not set: {ids(data['not_found'])}")
        return lines


class StepResult(TypedResult):
    """A step's end: the new location, or ``running`` when it has not ended within the timeout."""

    stop: Stop | None = None
    location: Location | None = None

    @classmethod
    def text_lines(cls, data: dict[str, Any]) -> list[str]:
        if data.get("state") == "running":
            return ["still running: wait_for_stop waits for its end, break_in ends it"]
        stop = data.get("stop")
        return (_stop_line(data) if stop and stop["reason"] != "step" else []) + _location_line(data)


class RunToResult(StepResult):
    outcome: Literal["hit", "stopped_elsewhere", "running"]
    target: str = Field(description="the address run to, as kd evaluated the location")

    @classmethod
    def text_lines(cls, data: dict[str, Any]) -> list[str]:
        head = [f"{data['outcome']} {data['target']}"]
        if data["outcome"] == "running":
            return [*head, "the target runs on; the one-time breakpoint at the target stays until it stops"]
        return head + (_stop_line(data) if data["outcome"] == "stopped_elsewhere" else []) + _location_line(data)


class WaitResult(StepResult):
    waited_s: float

    @classmethod
    def text_lines(cls, data: dict[str, Any]) -> list[str]:
        if data.get("state") == "running":
            return [f"still running after {data['waited_s']} s (not an error: wait again, or break_in)"]
        return _stop_line(data) + _location_line(data)
