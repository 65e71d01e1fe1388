"""The one wrapper every tool call goes through: owner, worker thread, progress, errors, cancellation.

Handlers are async and run the blocking engine calls in worker threads, so a ``break_in`` is
served while a ``kd_command`` waits on a hung debugger. What the work returns or raises leaves
through ``render.py``; a client's cancellation sets ``Call.cancel`` and runs the tool's own
``on_cancel`` (stop the debugger a start waits on, break off a command).
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import anyio
from mcp.server.mcpserver import Context
from mcp_types import CallToolResult
from pydantic import BaseModel, ValidationError

from kdmcp.errors import InvalidArgument, KdMcpError
from kdmcp.server.app import KdMcpApp
from kdmcp.server.mcp_server import KdMcpServer, owner_of
from kdmcp.server.render import from_exception, ok_result
from kdmcp.validation import validation_problems

log = logging.getLogger(__name__)

PROGRESS_EVERY_S = 1.0


@dataclass(frozen=True)
class Call:
    """One tool call as its work sees it: the app, the calling client, and the call's cancel flag."""

    app: KdMcpApp
    owner: str | None
    cancel: threading.Event = field(default_factory=threading.Event)


def app_of(ctx: Context[Any, Any] | None) -> KdMcpApp:
    """The app behind the server this call reached (the SDK hands every tool its context)."""
    server = ctx.mcp_server if ctx is not None else None
    if not isinstance(server, KdMcpServer):
        raise TypeError("kd-mcp tools run on a KdMcpServer (build_server)")
    return server.app


async def run_tool(
    ctx: Context[Any, Any] | None,
    work: Callable[[Call], BaseModel],
    *,
    progress: str | None = None,
    total_s: float | None = None,
    on_cancel: Callable[[Call], None] | None = None,
) -> CallToolResult:
    """Run blocking ``work`` in a thread; send progress meanwhile; map errors; honour cancellation."""
    app = app_of(ctx)
    call = Call(app, owner_of(app.options, ctx.headers if ctx is not None else None))
    outcome: list[BaseModel | KdMcpError] = []

    def target() -> None:
        try:
            outcome.append(work(call))
        except KdMcpError as exc:
            outcome.append(exc)
        except ValidationError as exc:  # a model built from the caller's values refused them
            outcome.append(InvalidArgument("; ".join(validation_problems(exc))))
        except Exception:
            log.exception("tool work failed")
            outcome.append(KdMcpError("the tool failed unexpectedly; see the server log"))

    done = anyio.Event()

    async def runner() -> None:
        try:
            await anyio.to_thread.run_sync(target, abandon_on_cancel=True)
        finally:
            done.set()

    try:
        async with anyio.create_task_group() as tg:
            tg.start_soon(runner)
            if progress is not None and ctx is not None:
                elapsed = 0.0
                while not done.is_set():
                    with anyio.move_on_after(PROGRESS_EVERY_S):
                        await done.wait()
                    if done.is_set():
                        break
                    elapsed += PROGRESS_EVERY_S
                    await ctx.report_progress(elapsed, total_s, app.redactor.text(f"{progress} ({elapsed:.0f}s)"))
    except anyio.get_cancelled_exc_class():
        call.cancel.set()
        if on_cancel is not None:
            with anyio.CancelScope(shield=True):
                await anyio.to_thread.run_sync(on_cancel, call)
        raise
    (result,) = outcome
    if isinstance(result, KdMcpError):
        return from_exception(result, app.redactor)
    return ok_result(result, app.redactor)
