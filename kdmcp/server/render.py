"""Served models to ``CallToolResult``: the one place a result's wire form is decided.

A success has two renderings of one masked dump (docs/results.md):

* ``structuredContent``, for programs: the typed result with nulls, defaults and empty lists
  left out — the raw ``output`` always beside its parsed ``record``;
* one text block, for the model: a header line (session, state, prompt, elapsed, and what was
  cut and where the rest is, when something was), the debugger's own output as it printed
  it, and one line per event. Never the JSON again: the spec's SHOULD (serialised JSON in a
  text block, for clients that predate ``structuredContent``) would double what a model pays
  for every result, and the raw output is what a model reads best.

An error is an ``isError`` result without ``structuredContent``: its first text block reads
``error[category]: message``, a second one holds the other fields set, as JSON
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
from kdmcp.server.text import fallback_text

# An error result's first text block: ``error[<category>]: <message>`` (the message may span lines).
ERROR_TEXT = re.compile(r"error\[([a-z_]+)\]: (.*)", re.DOTALL)


def ok_result(model: BaseModel, redactor: Redactor) -> CallToolResult:
    """``model`` dumped and masked once; both renderings are made from that one dump: the text
    block is the model's own (``models.Served.render_text``)."""
    data = redactor.model(model)
    return CallToolResult(content=[TextContent(type="text", text=text_block(model, data))], structured_content=data)


def text_block(model: BaseModel, data: dict[str, Any]) -> str:
    """The text block of ``model`` from its masked dump ``data``: the model's own rendering."""
    return model.render_text(data) if isinstance(model, models.Served) else fallback_text(data)


# --------------------------------------------------------------------------- errors

def error_result(error: models.ErrorResult, redactor: Redactor) -> CallToolResult:
    """An ``isError`` result every client reads: the category and message as text, first; the other
    fields (session_id, state, output_id, partial_output, exit_code: those set) as a JSON block."""
    data = redactor.model(error)
    content: list[ContentBlock] = [TextContent(type="text", text=error_text(data))]
    details = {name: value for name, value in data.items() if name not in ("category", "message")}
    if details:
        content.append(TextContent(type="text", text=json.dumps(details)))
    return CallToolResult(content=content, is_error=True)


def error_text(data: dict[str, Any]) -> str:
    """An error's first text block, from its masked dump: ``error[category]: message``."""
    return f"error[{data['category']}]: {data['message']}"


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
