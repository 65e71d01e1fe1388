"""``kd-mcp transcript show`` and ``cast``: read a transcript back, for people.

``cast`` writes an asciicast v2 file (replayable with ``asciinema play``): each tool call is
typed at a ``kd-mcp>`` prompt and its result printed, at the pace the calls really took.

Both are inert: every piece of text a record holds (a guest's DbgPrint, command output, tool
arguments, names) goes through ``transcript_files.inert``, the rendering ``watch`` uses, so an
escape sequence the guest printed (clipboard write, window title, hyperlink, clear screen) is
shown as ``^[]52;…`` and never run by the terminal that plays the recording. The only escape
sequences a ``.cast`` holds are this module's own colours.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table
from rich.text import Text

from kdmcp.server.transcript import read_records
from kdmcp.transcript_files import inert


def _describe(record: dict[str, Any]) -> str:
    kind = record.get("kind")
    if kind == "request":
        args = ", ".join(f"{k}={v!r}" for k, v in (record.get("args") or {}).items())
        return f"{record.get('tool')}({args})"
    if kind == "result":
        head = f"{record.get('tool')}: {record.get('status')}"
        if record.get("category"):
            head += f" [{record['category']}]"
        if record.get("state"):
            head += f" state={record['state']}"
        return head + f" {record.get('elapsed_ms', 0):.0f} ms"
    if kind == "event":
        return f"{record.get('session_id')}: {record.get('event')} {record.get('text', '')!r}"
    if kind == "session":
        detail = record.get("command_line") or record.get("actions") or ""
        return f"{record.get('session_id')} {record.get('event')} {detail}"
    return json.dumps({k: v for k, v in record.items() if k not in ("t", "kind")})


def _lines(text: str, end: str = "\n") -> str:
    """``text`` line by line through ``inert``, each line ended by ``end`` (a cast wants CR LF)."""
    return "".join(inert(line) + end for line in text.splitlines())


def _time(record: dict[str, Any]) -> float:
    """A record's ``t``; 0 where a hand-edited or foreign line has none (shown, not fatal)."""
    t = record.get("t")
    return float(t) if isinstance(t, (int, float)) else 0.0


def show_transcript(path: str) -> int:
    records = read_records(path)
    # Text cells, not markup: a result reads "[unknown_session]", which markup would swallow.
    table = Table(title=Text(inert(f"{path} — {len(records)} records")))
    table.add_column("time", justify="right")
    table.add_column("kind")
    table.add_column("what")
    t0 = _time(records[0]) if records else 0.0
    for record in records:
        table.add_row(f"{_time(record) - t0:8.3f}", Text(inert(str(record.get("kind")))),
                      Text(_lines(_describe(record)).rstrip("\n")))
    Console().print(table)
    return 0


CRLF = "\r\n"


def cast_transcript(path: str, output: str) -> int:
    records = read_records(path)
    if not records:
        sys.stderr.write(f"kd-mcp: error: {path} holds no transcript records\n")
        return 1
    t0 = _time(records[0])
    header = {"version": 2, "width": 120, "height": 40, "timestamp": int(t0),
              "title": inert(f"kd-mcp {Path(path).name}")}
    lines = [json.dumps(header)]
    for record in records:
        at = round(_time(record) - t0, 6)
        if record.get("kind") == "request":
            text = f"\x1b[1mkd-mcp>\x1b[0m {_lines(_describe(record), CRLF)}"
        elif record.get("kind") == "result":
            text = _lines(_describe(record), CRLF) + _lines(str(record.get("text") or ""), CRLF)
        elif record.get("kind") == "event":
            said = _lines(f"[{record.get('event')}] {record.get('session_id')} {record.get('text', '')}", CRLF)
            text = f"\x1b[33m{said.removesuffix(CRLF)}\x1b[0m{CRLF}"
        else:
            continue
        lines.append(json.dumps([at, "o", text]))
    Path(output).write_text("\n".join(lines) + "\n", encoding="utf-8")
    sys.stderr.write(f"kd-mcp: wrote {output} ({len(lines) - 1} frames)\n")
    return 0
