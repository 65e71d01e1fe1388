"""Served models to ``CallToolResult``: the one place a result's wire form is decided.

A success is the (redacted) model as ``structuredContent`` and the same JSON as its text block.
An error is an ``isError`` result without ``structuredContent`` (it would have to match the
tool's output schema, and clients check that, on error results too): its first text block
reads ``error[category]: message``, a second one holds the other fields set, as JSON
(docs/clients.md) — never a traceback.
"""

from __future__ import annotations

import json
import re
from typing import Any

from mcp_types import CallToolResult, ContentBlock, TextContent
from pydantic import BaseModel

from kdmcp.errors import KdMcpError
from kdmcp.server import models
from kdmcp.server.redaction import Redactor

# An error result's first text block: ``error[<category>]: <message>`` (the message may span lines).
ERROR_TEXT = re.compile(r"error\[([a-z_]+)\]: (.*)", re.DOTALL)


def ok_result(model: BaseModel, redactor: Redactor) -> CallToolResult:
    data = redactor.model(model)
    return CallToolResult(content=[TextContent(type="text", text=json.dumps(data))], structured_content=data)


def error_result(error: models.ErrorResult, redactor: Redactor) -> CallToolResult:
    """An ``isError`` result every client reads: the category and message as text, first; the other
    fields (session_id, state, output_id, partial_output, exit_code: those set) as a JSON block."""
    data = redactor.model(error)
    content: list[ContentBlock] = [TextContent(type="text", text=f"error[{data['category']}]: {data['message']}")]
    details = {name: value for name, value in data.items() if name not in ("category", "message") and value is not None}
    if details:
        content.append(TextContent(type="text", text=json.dumps(details)))
    return CallToolResult(content=content, is_error=True)


def error_of(exc: KdMcpError) -> models.ErrorResult:
    """The served error for ``exc``: its category and the typed fields it carries."""
    output_id = None
    if exc.session_id is not None and exc.output_span is not None:
        output_id = models.output_id(exc.session_id, *exc.output_span)
    return models.ErrorResult(
        category=exc.category,
        message=exc.message,
        session_id=exc.session_id,
        state=exc.state,
        partial_output=exc.partial_output,
        output_id=output_id,
        exit_code=exc.exit_code,
    )


def from_exception(exc: KdMcpError, redactor: Redactor) -> CallToolResult:
    return error_result(error_of(exc), redactor)


def read_error(result: CallToolResult) -> dict[str, Any] | None:
    """An error result as data (``category``, ``message`` and the fields set), or None if it is not one."""
    texts = [block.text for block in result.content if isinstance(block, TextContent)]
    match = ERROR_TEXT.fullmatch(texts[0]) if result.is_error and texts else None
    if match is None:
        return None
    data: dict[str, Any] = {"category": match[1], "message": match[2]}
    if len(texts) > 1:
        data.update(json.loads(texts[1]))
    return data
