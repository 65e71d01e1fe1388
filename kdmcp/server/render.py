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
from collections.abc import Callable
from typing import Any

from mcp_types import CallToolResult, ContentBlock, TextContent
from pydantic import BaseModel

from kdmcp.errors import KdMcpError
from kdmcp.server import batch_models, inspect_models, ioctl_models, models
from kdmcp.server.redaction import Redactor

# An error result's first text block: ``error[<category>]: <message>`` (the message may span lines).
ERROR_TEXT = re.compile(r"error\[([a-z_]+)\]: (.*)", re.DOTALL)
# An event's line in the text block shows at most this much of its first line.
EVENT_LINE_CHARS = 200

Data = dict[str, Any]


def ok_result(model: BaseModel, redactor: Redactor) -> CallToolResult:
    """``model`` dumped and masked once; both renderings are made from that one dump."""
    data = redactor.model(model)
    render = _renderer(type(model))
    return CallToolResult(content=[TextContent(type="text", text=render(data))], structured_content=data)


# ------------------------------------------------------------------- the text block

def _ms(value: float) -> str:
    return f"{value:.0f} ms" if value >= 100 else f"{value:.1f} ms"


def header(data: Data, *extra: str) -> str:
    """``[s1 broken "0: kd> " 3.1 ms …]``: the fields a model needs before reading the output."""
    parts = [data.get("session_id", ""), data.get("state", "")]
    if "prompt" in data:
        parts.append(json.dumps(data["prompt"]))
    if "elapsed_ms" in data:
        parts.append(_ms(data["elapsed_ms"]))
    return "[" + " ".join([p for p in parts if p] + [e for e in extra if e]) + "]"


def event_lines(data: Data) -> list[str]:
    """One line per event: its kind and the first line of its text."""
    lines = []
    for event in data.get("events", ()):
        first, _, rest = event["text"].strip("\r\n").partition("\n")
        first = first.rstrip("\r")
        if rest or len(first) > EVENT_LINE_CHARS:
            first = first[:EVENT_LINE_CHARS] + "…"
        lines.append(f"[event {event['kind']}] {first}".rstrip())
    return lines


def _join(head: str, body: str | None, tail: list[str]) -> str:
    pieces = [head]
    if body:
        pieces.append(body.rstrip("\r\n"))
    return "\n".join(pieces + tail)


def _command(data: Data, lines: list[str] | None = None) -> str:
    extra = []
    if data.get("truncated"):
        extra.append(f"truncated, {data['output_bytes']} B in all: read_output output_id={data['output_id']}")
    elif data.get("record_partial"):
        extra.append(f"record partial: read_output output_id={data['output_id']}")
    cut = [f"{name} {c['returned']}/{c['total']}" for name, c in data.get("lists", {}).items()
           if c["returned"] < c["total"]]
    if cut:
        extra.append("lists cut: " + ", ".join(cut))
    if data.get("record", {}).get("kind") == "text":
        extra.append("unparsed")
    body = "\n".join([*(lines or ()), data["output"].rstrip("\r\n")]).strip("\n")
    return _join(header(data, *extra), body, event_lines(data))


def _start(data: Data, *first: str) -> str:
    """A start: the header, ``first`` lines (a kind's own summary), the command line, the banner."""
    extra = [data["kind"]] if "kind" in data else []  # left out: kdnet, the default
    extra += ["banner truncated"] if data.get("truncated") else []
    lines = [*first, f"command line: {data['command_line']}"]
    if "state_file" in data:
        lines.append(f"state file: {data['state_file']}")
    lines += [f"warning: {w}" for w in data.get("warnings", ())]
    return _join(header(data, *extra), "\n".join([*lines, data.get("banner", "")]), event_lines(data))


def _dump(data: Data) -> str:
    """A start, with the dump's summary on one line before the banner."""
    d = data.get("dump", {})
    what = ", ".join(str(v) for v in (d.get("os"), d.get("build_lab")) if v)
    if "bugcheck" in d:
        what += f"; bugcheck {d['bugcheck'].get('code')} ({', '.join(d['bugcheck'].get('args', []))})"
    if "exception" in d:
        e = d["exception"]
        what += f"; exception {e.get('code')} {e.get('description', '')} at {e.get('symbol') or e.get('address')}"
    if "modules" in d:
        what += f"; {d['modules']} modules"
    return _start(data, f"dump: {what.strip('; ')}")


def _share(data: Data) -> str:
    lines = [f"listening on {data['listener']}; join with:", *data["join"]]
    return _join(header(data), "\n".join(lines), event_lines(data))


def _break(data: Data) -> str:
    return _join(header(data, "already broken in" if data["already_broken"] else ""), None, event_lines(data))


def _continue(data: Data) -> str:
    return _join(header(data, f"confirmed {data['confirmed']}"), None, event_lines(data))


def _resume(data: Data) -> str:
    head = header(data, f"confirmed {data['confirmed']}", f"waited {data['waited_s']} s")
    return _join(head, data["hint"], event_lines(data))


def _chunk(data: Data) -> str:
    where = f"bytes {data['offset']}-{data['next_offset']} of {data['total_bytes']}"
    more = "eof" if data["eof"] else f"more at offset {data['next_offset']}"
    return _join(header(data, where, more), data["text"], [])


def _stop(data: Data) -> str:
    code = f"exit code {data['exit_code']}" if "exit_code" in data else ""
    return _join(header(data, code), ", ".join(data["actions"]), [])


def _summary_line(s: Data) -> str:
    live = "live" if s["live"] else "ended"
    pid = f" pid {s['pid']}" if "pid" in s else ""
    shared = f" shared {s['shared']}" if "shared" in s else ""
    # what it is attached to says the target; the full command line is in structuredContent
    return f"{s['session_id']} {s['state']} {live} {s['kind']}{pid} {s['output_bytes']} B: {s['attached_to']}{shared}"


def _sessions(data: Data) -> str:
    sessions = data.get("sessions", [])
    lines = [_summary_line(s) for s in sessions]
    return "\n".join([f"[{len(sessions)} sessions, at most {data['max_sessions']}]", *lines])


def _health(data: Data) -> str:
    lines = [f"[{'ok' if data['ok'] else 'not ok'}{' simulated' if data.get('simulated') else ''}]"]
    for d in data["debuggers"]:
        if d["found"]:
            version = f" {d['version']}" if "version" in d else ""
            lines.append(f"{d['name']}: {d.get('path', '')}{version}")
        else:
            lines.append(f"{d['name']}: not found (looked in: {', '.join(d.get('looked_in', [])) or 'nothing'})")
    config = data.get("config_path", "none")
    lines.append(f"config {config}: " + ("ok" if data["config_ok"] else data.get("config_error", "invalid")))
    state = data.get("state_file", "none")
    lines.append(f"state file {state}: " + ("ok" if data["state_file_ok"] else data.get("state_file_error", "invalid")))
    lines += [f"warning: {w}" for w in data.get("state_file_warnings", ())]
    lines += [f"local kernel: {p}" for p in data.get("local_kernel", ())]
    lines += [_summary_line(s) for s in data.get("sessions", ())]
    return "\n".join(lines)


def _fallback(data: Data) -> str:
    """A model without a rendering of its own (none should be served): compact JSON."""
    return json.dumps(data, separators=(",", ":"))


_TEXT: dict[type[BaseModel], Callable[[Data], str]] = {
    models.CommandResult: _command,
    models.InspectResult: _command,
    models.StartResult: _start,
    models.DumpResult: _dump,
    models.ShareResult: _share,
    models.BreakResult: _break,
    models.ContinueResult: _continue,
    models.ResumeResult: _resume,
    models.OutputChunk: _chunk,
    models.StopResult: _stop,
    models.SessionList: _sessions,
    models.HealthResult: _health,
    batch_models.BatchResult: batch_models.text,
    inspect_models.DecodeErrorResult: inspect_models.decode_error_text,
    ioctl_models.DecodeIoctlResult: ioctl_models.decode_ioctl_text,
}


def _renderer(model: type[BaseModel]) -> Callable[[Data], str]:
    """The text rendering of ``model``: its own, a typed tool's (its ``text_lines``, then the raw
    output), or a base class's."""
    if issubclass(model, models.TypedResult):
        return lambda data: _command(data, model.text_lines(data))
    for base in model.__mro__:
        if base in _TEXT:
            return _TEXT[base]
    return _fallback


# --------------------------------------------------------------------------- errors

def error_result(error: models.ErrorResult, redactor: Redactor) -> CallToolResult:
    """An ``isError`` result every client reads: the category and message as text, first; the other
    fields (session_id, state, output_id, partial_output, exit_code: those set) as a JSON block."""
    data = redactor.model(error)
    content: list[ContentBlock] = [TextContent(type="text", text=f"error[{data['category']}]: {data['message']}")]
    details = {name: value for name, value in data.items() if name not in ("category", "message")}
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
