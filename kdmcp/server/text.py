"""The text block's pieces: the header line, the event lines, a command's output under its header.

Every result model renders its own text block from its masked dump (``models.Served``) with
these; nothing here knows a model. The text block is for the model reading the result
(docs/results.md): a header (session, state, prompt, elapsed, and what was cut and where the
rest is), the debugger's own output as it printed it, and one line per event.
"""

from __future__ import annotations

import json
from typing import Any

__all__ = ["EVENT_LINE_CHARS", "Data", "command_extras", "command_text", "event_lines", "fallback_text", "header",
           "join", "ms"]

# An event's line in the text block shows at most this much of its first line.
EVENT_LINE_CHARS = 200

Data = dict[str, Any]


def ms(value: float) -> str:
    return f"{value:.0f} ms" if value >= 100 else f"{value:.1f} ms"


def header(data: Data, *extra: str) -> str:
    """``[s1 broken "0: kd> " 3.1 ms …]``: the fields a model needs before reading the output."""
    parts = [data.get("session_id", ""), data.get("state", "")]
    if "prompt" in data:
        parts.append(json.dumps(data["prompt"]))
    if "elapsed_ms" in data:
        parts.append(ms(data["elapsed_ms"]))
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


def join(head: str, body: str | None, tail: list[str]) -> str:
    pieces = [head]
    if body:
        pieces.append(body.rstrip("\r\n"))
    return "\n".join(pieces + tail)


def command_extras(data: Data) -> list[str]:
    """What a command's header says after the session, state, prompt and elapsed time: what was cut
    and where the rest is, and ``unparsed`` when no parser knew the command."""
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
    return extra


def command_text(data: Data, lines: list[str] | None = None) -> str:
    body = "\n".join([*(lines or ()), data["output"].rstrip("\r\n")]).strip("\n")
    return join(header(data, *command_extras(data)), body, event_lines(data))


def fallback_text(data: Data) -> str:
    """A model without a rendering of its own (none should be served): compact JSON."""
    return json.dumps(data, separators=(",", ":"))
