"""Served models to ``CallToolResult``: the one place a result's wire form is decided.

A success is one text block for the model, made from one masked dump (docs/results.md): a
header line (session, state, prompt, elapsed, and what was cut and where the rest is, when
something was), what a typed tool adds (decoded, counted, linked), the debugger's own output
(tidied: ``\\n`` line ends, no trailing blanks) unless the typed lines say it all, and one line
per event, a flood cut to its first and last few.

``structuredContent`` is sent only to a server started for programs (``--structured``): the
clients most agents use hand the model ``structuredContent`` *instead of* the text whenever a
result carries both (Claude Code, VS Code; docs/clients.md), so a default result carrying
both would make those models read JSON and the others text — each result is one compact
rendering, shown alike by every client. With ``--structured`` it is the typed result, and
never the raw ``output`` beside a parse of it (a ``record`` of a known kind, a typed tool's
fields): that is in the text block, and all of it one ``read_output`` away.

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
from kdmcp.server.text import cut_events, fallback_text

# An error result's first text block: ``error[<category>]: <message>`` (the message may span lines).
ERROR_TEXT = re.compile(r"error\[([a-z_]+)\]: (.*)", re.DOTALL)


def served_data(model: BaseModel, redactor: Redactor, exclude: set[str] | None = None) -> dict[str, Any]:
    """``model`` as served: dumped (``exclude`` left out) and masked once, a flood of events cut
    (``text.cut_events``)."""
    return cut_events(redactor.model(model, exclude))


def ok_result(model: BaseModel, redactor: Redactor, *, structured: bool = False) -> CallToolResult:
    """One text block (the model's own, ``models.Served.render_text``) from one masked dump; with
    ``structured``, also that dump as ``structuredContent``.
    The dump rides along, unsent, for the transcript (``result_data``)."""
    kind = model.record_kind if type(model) is models.CommandResult else None
    if not structured and kind is not None:
        # kd_command's text reads only its record's kind ("unparsed"): the record, one field of
        # the dump but most of its work, is neither dumped nor masked when it is not sent (nor
        # built, where only its kind was read: ``record_kind``)
        data = served_data(model, redactor, exclude={"record"})
        data["record"] = {"kind": kind}
    else:
        data = served_data(model, redactor)
    content: list[ContentBlock] = [TextContent(type="text", text=text_block(model, data))]
    result = CallToolResult(content=content, structured_content=structured_of(model, data) if structured else None)
    object.__setattr__(result, "_kdmcp_data", data)
    return result


def structured_of(model: BaseModel, data: dict[str, Any]) -> dict[str, Any]:
    """``structuredContent`` for ``--structured``: ``data`` without the raw output where something
    in it is that output parsed (a typed tool's fields, a record of a known kind); an unparsed
    command's output stays, as it is all there is."""
    parsed = isinstance(model, models.TypedResult) or data.get("record", {}).get("kind", "text") != "text"
    return {name: value for name, value in data.items() if name != "output"} if parsed else data


def result_data(result: CallToolResult) -> dict[str, Any] | None:
    """The masked dump a success was rendered from (``ok_result``), whether or not it was sent."""
    data = getattr(result, "_kdmcp_data", None)
    return data if isinstance(data, dict) else result.structured_content


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
