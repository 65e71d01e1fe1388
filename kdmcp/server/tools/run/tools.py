"""The run-control tools as clients see them (issue 15): breakpoints, steps, run_to, waits, location.

Their logic is ``run_control.py``; each argument that reaches kd's command line is checked
here (``toolkit.Address``; a condition or command string cannot close its quotes).
"""

from __future__ import annotations

from typing import Annotated, Literal

from mcp_types import CallToolResult
from pydantic import Field

from kdmcp.server.args import Address, SessionId
from kdmcp.server.call import Ctx, run_tool
from kdmcp.server.registry import controls, reads, tool
from kdmcp.server.tools.run import control as run_control
from kdmcp.server.tools.run.models import (
    BreakpointsResult,
    ClearResult,
    LocationResult,
    RunToResult,
    SetBreakpointResult,
    StepResult,
    WaitResult,
)

__all__ = ["breakpoints", "clear_breakpoints", "location", "run_to", "set_breakpoint", "step", "wait_for_stop"]

WaitS = Annotated[float, Field(description="seconds to wait for the stop; then the result says running", gt=0,
                               le=3600)]


@tool("control", controls("Set a breakpoint"))
async def set_breakpoint(
    location: Address,
    kind: Annotated[Literal["code", "deferred", "data"],
                    Field(description="code: bp; deferred: bu (set when its module loads); data: ba")] = "code",
    access: Annotated[Literal["e", "r", "w", "i"], Field(description="data: execute, read/write, write, I/O")] = "w",
    size: Annotated[Literal[1, 2, 4, 8], Field(description="data: bytes watched")] = 1,
    condition: Annotated[str | None, Field(description="stop only if nonzero, e.g. @rcx==0", max_length=512)] = None,
    command: Annotated[str | None, Field(description="kd commands run at each hit", max_length=1024)] = None,
    one_shot: Annotated[bool, Field(description="delete after the first hit")] = False,
    process: Annotated[str | None, Field(description="kernel: only in this EPROCESS", max_length=24)] = None,
    session_id: SessionId = None,
    ctx: Ctx = None,
) -> Annotated[CallToolResult, SetBreakpointResult]:
    """Set a breakpoint (bp/bu/ba); returns it as bl lists it (id, address or deferred, symbol)."""
    return await run_tool(ctx, lambda c: run_control.set_breakpoint(
        c.app, session_id, location, kind, access, size, condition, command, one_shot, process, owner=c.owner))


@tool("inspect", reads("List breakpoints"))
async def breakpoints(session_id: SessionId = None, ctx: Ctx = None) -> Annotated[CallToolResult, BreakpointsResult]:
    """Every breakpoint (bl) as records: id, state, kind, address, symbol, hits, condition."""
    return await run_tool(ctx, lambda c: run_control.breakpoints(c.app, session_id, owner=c.owner))


@tool("control", controls("Clear breakpoints", idempotent=True))
async def clear_breakpoints(
    ids: Annotated[list[Annotated[int, Field(ge=0, le=65535)]] | None,
                   Field(description="breakpoint ids to clear", min_length=1, max_length=256)] = None,
    all: Annotated[bool, Field(description="clear every breakpoint (bc *)")] = False,  # the issue names it "all"
    session_id: SessionId = None,
    ctx: Ctx = None,
) -> Annotated[CallToolResult, ClearResult]:
    """Clear breakpoints by id, or all of them (bc); returns what was cleared and what remains."""
    return await run_tool(ctx, lambda c: run_control.clear_breakpoints(c.app, session_id, ids, all, owner=c.owner))


@tool("control", controls("Step"))
async def step(
    mode: Annotated[Literal["over", "into", "out"], Field(description="over: p; into: t; out: gu (run to the "
                                                          "return)")] = "over",
    count: Annotated[int, Field(description="how many steps", ge=1, le=1000)] = 1,
    timeout_s: WaitS = 30.0,
    session_id: SessionId = None,
    ctx: Ctx = None,
) -> Annotated[CallToolResult, StepResult]:
    """Step and return the new location; a step that has not ended by timeout_s returns running."""
    return await run_tool(ctx, lambda c: run_control.step(c.app, session_id, mode, count, timeout_s, c.cancel,
                                                           owner=c.owner),
                          progress=f"step {mode}", total_s=timeout_s)


@tool("control", controls("Run to a location"))
async def run_to(
    location: Address,
    timeout_s: WaitS = 30.0,
    session_id: SessionId = None,
    ctx: Ctx = None,
) -> Annotated[CallToolResult, RunToResult]:
    """Run until location (g ADDRESS): hit, stopped_elsewhere (breakpoint, exception…) or running."""
    return await run_tool(ctx, lambda c: run_control.run_to(c.app, session_id, location, timeout_s, c.cancel,
                                                             owner=c.owner),
                          progress=f"running to {location}", total_s=timeout_s)


@tool("control", controls("Wait for the target to stop", idempotent=True))
async def wait_for_stop(
    timeout_s: WaitS = 30.0,
    session_id: SessionId = None,
    ctx: Ctx = None,
) -> Annotated[CallToolResult, WaitResult]:
    """Wait for a running target to stop: the stop (breakpoint, exception, bugcheck…), its location
    and the events since. A timeout returns running; it is not an error."""
    return await run_tool(ctx, lambda c: run_control.wait_for_stop(c.app, session_id, timeout_s, c.cancel,
                                                                    owner=c.owner),
                          progress="waiting for a stop", total_s=timeout_s)


@tool("inspect", reads("Where the target is stopped"))
async def location(session_id: SessionId = None, ctx: Ctx = None) -> Annotated[CallToolResult, LocationResult]:
    """Processor, thread and process, instruction pointer, symbol+offset and the instruction."""
    return await run_tool(ctx, lambda c: run_control.location(c.app, session_id, owner=c.owner))
