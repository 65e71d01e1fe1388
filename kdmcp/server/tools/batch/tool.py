"""The ``debug_batch`` tool: its arguments and schema; the batch itself is ``batch.py``."""

from __future__ import annotations

from typing import Annotated, Any

from mcp_types import CallToolResult
from pydantic import Field

from kdmcp.server.args import SessionId
from kdmcp.server.call import Ctx
from kdmcp.server.registry import destroys, tool
from kdmcp.server.tools.batch import steps as batch
from kdmcp.server.tools.batch.models import MAX_STEPS, BatchResult

__all__ = ["debug_batch"]

DEFAULT_TIMEOUT_S = 120.0


@tool("commands", destroys("Run steps as one batch, rolled back on failure"))
async def debug_batch(
    steps: Annotated[
        list[dict[str, Any]],
        Field(
            description='in order: {"tool": NAME, "arguments": {...}} or {"command": "kd text"}, each with optional '
            '"expect": {"ok"|"error": CATEGORY|"state"|"contains": TEXT|"fields": {...}} (default: ok)',
            min_length=1,
            max_length=MAX_STEPS,
        ),
    ],
    always: Annotated[
        list[dict[str, Any]] | None,
        Field(description="steps run after the others on every path, before the rollback", max_length=MAX_STEPS),
    ] = None,
    restore: Annotated[
        dict[str, Any] | None,
        Field(description='also roll back: {"registers": true, "memory": [{"address": A, "length": N<=4096}]}'),
    ] = None,
    timeout_s: Annotated[float, Field(description="bound on the steps", gt=0, le=3600)] = DEFAULT_TIMEOUT_S,
    session_id: SessionId = None,
    ctx: Ctx = None,
) -> Annotated[CallToolResult, BatchResult]:
    """Run tool calls and commands on one session in order; stop at the first that misses its expect.

    On failure, timeout or cancellation the batch rolls back: breaks in again if it was broken
    in, clears the breakpoints it added, restores what restore names. outcome: committed | failed
    | timed_out | cancelled. Session tools are not steps.
    """
    return await batch.run_batch(ctx, steps, always, restore, timeout_s, session_id)
