"""Transitional: a step on a tool still written the old way (an ``async def`` taking ``ctx``, which
serves its own ``CallToolResult``), read back from what it served.

It goes once every family is converted: delete this module and the lines of ``steps.py``
marked ``transitional``.
"""

from __future__ import annotations

import inspect
from typing import Any

from mcp.server.mcpserver import Context
from mcp_types import TextContent

from kdmcp.engine import DebuggerEvent, DebuggerSession
from kdmcp.server import models
from kdmcp.server.registry import Tool
from kdmcp.server.render import error_text, read_error
from kdmcp.server.tools.batch.expect import Observed

__all__ = ["observe_old_style", "old_style"]


def old_style(entry: Tool) -> bool:
    return "ctx" in inspect.signature(entry.fn).parameters


async def observe_old_style(entry: Tool, kwargs: dict[str, Any], ctx: Context[Any, Any] | None,
                            session: DebuggerSession) -> Observed:
    result = await entry.fn(**kwargs, ctx=ctx)
    state_now = session.state
    text = "\n".join(block.text for block in result.content if isinstance(block, TextContent))
    if result.is_error:
        data = read_error(result) or {"category": "internal", "message": text}
        return Observed(ok=False, data=data, text=error_text(data),
                        state=data.get("state") or state_now.value)
    data = dict(result.structured_content or {})
    model = entry.result_model
    return Observed(
        ok=True, data=data, text=text, state=data.get("state") or state_now.value,
        extras=tuple(model.header_extras(data)) if issubclass(model, models.Served) else (),
        events=tuple(DebuggerEvent.model_validate(e) for e in data.get("events", ())),
    )
