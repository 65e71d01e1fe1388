"""What ``kd-mcp watch`` knows, built only from transcript records and log bytes: no I/O here.

Records are those of docs/transcripts.md; a session's log bytes are its console as kd printed
it. Everything is kept bounded (the last ``KEPT_LINES`` lines, ``KEPT_CALLS`` calls per
session), so a day-long session costs the view what a minute does.
"""

from __future__ import annotations

import codecs
import re
from collections import deque
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

KEPT_LINES = 1000  # console lines kept per session (the view shows the last ones that fit)
KEPT_CALLS = 50  # tool calls kept per session
# The engine's completion marker, not the debugger's output: after each command it sends
# ``.echo KDMCP<16 hex>N<n>`` and waits for that line (kdmcp/engine/machine.py, new_marker).
# A person watching kd would never see it, so its line is left out of the console shown.
MARKER_LINE = re.compile(r"^(?:[^>]*> )?(?:\.echo )?KDMCP[0-9A-F]{16}N\d+\s*$")


@dataclass
class Call:
    """One tool call: its request, and its result once it came (``status`` None: still running)."""

    tool: str
    args: dict[str, Any]
    client: str | None
    t: float
    session_id: str | None = None
    status: str | None = None
    category: str | None = None
    state: str | None = None
    elapsed_ms: float | None = None


@dataclass
class SessionView:
    """What the transcript says of one session, and the tail of its console."""

    session_id: str
    command_line: str = ""
    kind: str | None = None
    attached_to: str | None = None
    state: str = "starting"
    ended: bool = False
    last_active: float = 0.0
    calls: deque[Call] = field(default_factory=lambda: deque(maxlen=KEPT_CALLS))
    lines: deque[str] = field(default_factory=lambda: deque(maxlen=KEPT_LINES))
    line_count: int = 0
    partial: str = ""
    log_bytes: int = 0
    log_problem: str | None = None
    decoder: codecs.IncrementalDecoder = field(
        default_factory=lambda: codecs.getincrementaldecoder("utf-8")(errors="replace")
    )

    def console_lines(self) -> list[str]:
        """The complete lines, then the line still being printed (a prompt waits on one)."""
        return [*self.lines, self.partial] if self.partial else list(self.lines)


@dataclass
class WatchState:
    """Everything the view shows, built only from transcript records and log bytes (no I/O)."""

    path: Path
    server_pid: int | None = None
    server_version: str | None = None
    started_at: float | None = None
    stopped_at: float | None = None
    sessions: dict[str, SessionView] = field(default_factory=dict)
    pending: list[Call] = field(default_factory=list)  # requests still waiting for their result
    records: int = 0

    def session(self, session_id: str) -> SessionView:
        if session_id not in self.sessions:
            self.sessions[session_id] = SessionView(session_id)
        return self.sessions[session_id]

    def ordered(self) -> list[SessionView]:
        """The sessions in the order the server numbered them: s1, s2, ..., s10 (not s1, s10, s2)."""
        return sorted(self.sessions.values(), key=lambda v: session_order(v.session_id))

    def ingest_record(self, record: dict[str, Any]) -> None:
        """One transcript record (docs/transcripts.md lists the kinds and their fields)."""
        self.records += 1
        kind = record.get("kind")
        t = record.get("t")
        at = float(t) if isinstance(t, (int, float)) else 0.0
        sid = record.get("session_id")
        sid = sid if isinstance(sid, str) else None
        if kind == "start":  # a new server run appending to the same file: its sessions start again at s1
            self.sessions.clear()
            self.pending.clear()
            pid, version = record.get("pid"), record.get("version")
            self.server_pid = pid if isinstance(pid, int) else None
            self.server_version = str(version) if version is not None else None
            self.started_at, self.stopped_at = at, None
        elif kind == "stop":
            self.stopped_at = at
            for view in self.sessions.values():
                if not view.ended:  # the server stopped every session as it exited
                    view.ended, view.state = True, "ended (server stopped)"
            for call in self.pending:  # asked, never answered: not running any more
                call.status, call.category = "error", "no answer (server stopped)"
            self.pending.clear()
        elif kind == "session" and sid is not None:
            self._session_record(self.session(sid), record, at)
        elif kind == "request":
            self._request(record, at)
        elif kind == "result":
            self._result(record, at, sid)
        elif kind == "event" and sid is not None:
            self.session(sid).last_active = at

    def _session_record(self, view: SessionView, record: dict[str, Any], at: float) -> None:
        view.last_active = at
        if record.get("event") == "created":
            view.command_line = str(record.get("command_line") or "")
            # The session's kind, when the server records it (kdnet, kernel_dump, process, ...).
            for name in ("session_kind", "target_kind"):
                if isinstance(record.get(name), str):
                    view.kind = record[name]
            if isinstance(record.get("attached_to"), str):
                view.attached_to = record["attached_to"]
        elif record.get("event") == "stopped":
            view.ended = True
            code = record.get("exit_code")
            view.state = "ended" + (f" (exit {code})" if code is not None else "")

    def _request(self, record: dict[str, Any], at: float) -> None:
        args = record.get("args")
        call = Call(
            tool=str(record.get("tool")), args=args if isinstance(args, dict) else {}, client=record.get("client"), t=at
        )
        named = call.args.get("session_id")
        if isinstance(named, str) and named in self.sessions:
            call.session_id = named
            self._attach(call, at)
        self.pending.append(call)

    def _result(self, record: dict[str, Any], at: float, sid: str | None) -> None:
        # Results carry no request id: the oldest open request of that tool from that client is
        # the one answered (calls of one client on stdio run one at a time).
        call = next(
            (c for c in self.pending if c.tool == record.get("tool") and c.client == record.get("client")), None
        )
        if call is None:
            call = Call(tool=str(record.get("tool")), args={}, client=record.get("client"), t=at)
        else:
            self.pending.remove(call)
        call.status = str(record.get("status") or "ok")
        call.category = record.get("category")
        call.state = record.get("state")
        elapsed = record.get("elapsed_ms")
        call.elapsed_ms = float(elapsed) if isinstance(elapsed, (int, float)) else None
        target = sid or call.session_id
        # A session is made by its "session" record, or by an answer that names it; an error naming
        # a session (unknown_session for "s99") makes none: it would stay "starting" for ever.
        if target is not None and target not in self.sessions and call.status != "ok":
            target = None
        if target is not None and call.session_id is None:
            call.session_id = target
            self._attach(call, at)
        if target is not None:
            view = self.session(target)
            view.last_active = at
            if isinstance(call.state, str) and not view.ended:
                view.state = call.state

    def _attach(self, call: Call, at: float) -> None:
        if call.session_id is not None:
            view = self.session(call.session_id)
            view.calls.append(call)
            view.last_active = max(view.last_active, at)

    def ingest_log(self, session_id: str, data: bytes, at: float | None = None) -> None:
        """Bytes appended to a session's console log; a line cut at the end is kept until it ends.

        kd ends its lines with CRLF; every CR is dropped (kd does not redraw lines with a bare CR).
        """
        view = self.session(session_id)
        view.log_bytes += len(data)
        if at is not None and data:
            view.last_active = max(view.last_active, at)
        text = view.partial + view.decoder.decode(data).replace("\r", "")
        *complete, view.partial = text.split("\n")
        complete = [line for line in complete if not MARKER_LINE.match(line)]
        view.lines.extend(complete)
        view.line_count += len(complete)

    def focus(self, wanted: str | None) -> SessionView | None:
        """The session to show: the one asked for, else the one most recently active."""
        if wanted is not None:
            return self.sessions.get(wanted)
        if not self.sessions:
            return None
        return max(self.sessions.values(), key=lambda v: (v.last_active, v.session_id))


_SESSION_NUMBER = re.compile(r"(\D*)(\d+)$")


def session_order(session_id: str) -> tuple[str, int, str]:
    """``s2`` before ``s10``: the prefix, then the number, then the id as text for any other shape."""
    found = _SESSION_NUMBER.match(session_id)
    return (found.group(1), int(found.group(2)), "") if found else (session_id, -1, session_id)
