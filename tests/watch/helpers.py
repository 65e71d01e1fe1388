"""Synthetic transcripts for the watch tests: the records a server writes (docs/transcripts.md)."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

MARKER = "KDMCP70CB1998AB66FC2EN1"


def record(kind: str, t: float, **fields: Any) -> dict[str, Any]:
    return {"t": t, "kind": kind, **fields}


def a_session_records() -> list[dict[str, Any]]:
    """A server run: start kd with an initial break, run ``lm``, one error, all on session s1."""
    return [
        record("start", 100.0, version="0.1.0", pid=4242),
        record(
            "request",
            101.0,
            tool="start_from_state",
            args={"state_file": "/x/kd-session.json", "initial_break": True},
            client=None,
        ),
        record(
            "session",
            101.1,
            event="created",
            session_id="s1",
            owner=None,
            command_line='"C:\\Program Files (x86)\\Windows Kits\\10\\Debuggers\\x64\\kd.exe" -b -k '
            "net:port=50000,key=*** -noshell",
        ),
        record("event", 101.5, session_id="s1", event="connected", text="Kernel Debugger connection established."),
        record(
            "result",
            101.6,
            tool="start_from_state",
            client=None,
            status="ok",
            category=None,
            session_id="s1",
            state="broken",
            output_id=None,
            elapsed_ms=600.4,
            text=None,
        ),
        record("request", 102.0, tool="kd_command", args={"command": "lm"}, client=None),
        record(
            "result",
            102.1,
            tool="kd_command",
            client=None,
            status="ok",
            category=None,
            session_id="s1",
            state="broken",
            output_id="s1:10-20",
            elapsed_ms=7.2,
            text="start end module name",
        ),
        record("request", 103.0, tool="kd_command", args={"command": "r\nk", "session_id": "s1"}, client=None),
        record(
            "result",
            103.1,
            tool="kd_command",
            client=None,
            status="error",
            category="invalid_argument",
            session_id=None,
            state=None,
            output_id=None,
            elapsed_ms=1.3,
            text="one command per call",
        ),
    ]


CONSOLE = (
    "Microsoft (R) Windows Debugger Version 10.0.26100.1 AMD64\r\n"
    "Kernel Debugger connection established.  (Initial Breakpoint requested)\r\n"
    "0: kd> lm\r\n"
    "start             end                 module name\r\n"
    "fffff800`62600000 fffff800`63646000   nt         (pdb symbols)\r\n"
    f"0: kd> {MARKER}\r\n"
    "0: kd> "
)


def write_private(path: Path, text: str) -> Path:
    """A file as the server leaves it: owner-only (open_private)."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
    with open(fd, "a", encoding="utf-8", newline="") as handle:
        handle.write(text)
    path.chmod(0o600)
    return path


def write_transcript(
    directory: Path, records: list[dict[str, Any]] | None = None, console: str | None = CONSOLE
) -> Path:
    """``run.jsonl`` with ``records`` and session s1's console log beside it, both 0600."""
    path = directory / "run.jsonl"
    lines = "".join(json.dumps(r) + "\n" for r in (a_session_records() if records is None else records))
    write_private(path, lines)
    if console is not None:
        write_private(directory / "run.jsonl.s1.log", console)
    return path
