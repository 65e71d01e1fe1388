"""The ``debug_batch`` tool: its arguments, and the batch from validation to result (the steps: ``steps.py``)."""

from __future__ import annotations

from typing import Annotated, Any

import anyio
from pydantic import Field

from kdmcp.engine import SessionState
from kdmcp.server.args import SessionId
from kdmcp.server.call import Call
from kdmcp.server.mcp_server import surface_of
from kdmcp.server.registry import destroys, tool
from kdmcp.server.tools.batch import rollback as batch_rollback
from kdmcp.server.tools.batch.models import MAX_STEPS, BatchResult
from kdmcp.server.tools.batch.steps import Batch, execute, parse_request, plan

__all__ = ["debug_batch"]

DEFAULT_TIMEOUT_S = 120.0


@tool("commands", destroys("Run steps as one batch, rolled back on failure"))
async def debug_batch(
    call: Call,
    steps: Annotated[
        list[dict[str, Any]],
        Field(
            description='[{"tool","arguments"} or {"command"}, optional "expect": '
                        '{"error"|"state"|"contains"|"fields"}]',
            min_length=1,
            max_length=MAX_STEPS,
        ),
    ],
    always: Annotated[
        list[dict[str, Any]] | None,
        Field(description='run last, on every path', max_length=MAX_STEPS),
    ] = None,
    restore: Annotated[
        dict[str, Any] | None,
        Field(description='{"registers","memory":[{"address","length"}]}'),
    ] = None,
    timeout_s: Annotated[float, Field(gt=0, le=3600)] = DEFAULT_TIMEOUT_S,
    session_id: SessionId = None,
) -> BatchResult:
    """Run tool calls and commands in order; roll back on failure."""
    # A coroutine function: the call wrapper runs it on the event loop (call.invoke), where it
    # awaits each step's call as the client's own calls are awaited; its commands run in threads.
    if call.ctx is None:
        raise TypeError("debug_batch's steps are calls of the server (call.invoke): call it through the server")
    app = call.app
    request = parse_request(steps, always, restore)
    session = await anyio.to_thread.run_sync(lambda: app.session(session_id, call.owner))
    surface = surface_of(app.options, call.ctx.headers)
    batch = Batch(
        call,
        session,
        request,
        plan(request, session.session_id, surface),
        timeout_s,
        snapshot=batch_rollback.Snapshot(started_broken=session.state == SessionState.broken),
    )
    await batch.ensure_snapshot()  # a batch that cannot take its snapshot runs nothing
    return await execute(batch)
