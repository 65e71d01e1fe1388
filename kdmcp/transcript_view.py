"""``kd-mcp transcript show`` and ``cast``: read a transcript back, for people.

``cast`` writes an asciicast v2 file (replayable with ``asciinema play``): each tool call is
typed at a ``kd-mcp>`` prompt and its result printed, at the pace the calls really took.
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


def _time(record: dict[str, Any]) -> float:
    """A record's ``t``; 0 where a hand-edited or foreign line has none (shown, not fatal)."""
    t = record.get("t")
    return float(t) if isinstance(t, (int, float)) else 0.0


def show_transcript(path: str) -> int:
    records = read_records(path)
    # Text cells, not markup: a result reads "[unknown_session]", which markup would swallow.
    table = Table(title=Text(f"{path} — {len(records)} records"))
    table.add_column("time", justify="right")
    table.add_column("kind")
    table.add_column("what")
    t0 = _time(records[0]) if records else 0.0
    for record in records:
        table.add_row(f"{_time(record) - t0:8.3f}", Text(str(record.get("kind"))), Text(_describe(record)))
    Console().print(table)
    return 0


def cast_transcript(path: str, output: str) -> int:
    records = read_records(path)
    if not records:
        sys.stderr.write(f"kd-mcp: error: {path} holds no transcript records\n")
        return 1
    t0 = _time(records[0])
    header = {"version": 2, "width": 120, "height": 40, "timestamp": int(t0), "title": f"kd-mcp {Path(path).name}"}
    lines = [json.dumps(header)]
    for record in records:
        at = round(_time(record) - t0, 6)
        if record.get("kind") == "request":
            text = f"\x1b[1mkd-mcp>\x1b[0m {_describe(record)}\r\n"
        elif record.get("kind") == "result":
            body = str(record.get("text") or "").replace("\r\n", "\n").replace("\n", "\r\n")
            text = f"{_describe(record)}\r\n{body}\r\n" if body else f"{_describe(record)}\r\n"
        elif record.get("kind") == "event":
            text = f"\x1b[33m[{record.get('event')}] {record.get('session_id')} {record.get('text', '')}\x1b[0m\r\n"
        else:
            continue
        lines.append(json.dumps([at, "o", text]))
    Path(output).write_text("\n".join(lines) + "\n", encoding="utf-8")
    sys.stderr.write(f"kd-mcp: wrote {output} ({len(lines) - 1} frames)\n")
    return 0
