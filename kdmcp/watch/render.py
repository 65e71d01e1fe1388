"""The picture ``kd-mcp watch`` draws from a ``WatchState``: pure, so a test renders it to a string.

Four parts, top to bottom: who is serving (the ``start`` record) and which transcript; every
session; the focused session's console tail; its last tool calls. Everything the guest or the
agent wrote is shown as text, never as markup (a result reads ``error[target_running]``, which
rich markup would swallow) and with control characters made visible: a guest's escape
sequence must not drive the watcher's terminal.
"""

from __future__ import annotations

import json
import time
from typing import Any

from rich import box
from rich.console import Group, RenderableType
from rich.panel import Panel
from rich.table import Table
from rich.text import Text

# A line safe to print: the one inert rendering every transcript reader uses.
from kdmcp.transcript_files import inert as clean
from kdmcp.watch.state import Call, SessionView, WatchState

DEFAULT_LINES = 20  # console lines when the height is not the terminal's (--once, no --lines)
SHOWN_CALLS = 8
MIN_LINES = 3
_ARGS_WIDTH = 60
_DOT = " \u00b7 "
# Rows the frame costs besides the console lines: the header panel (2 lines + border), the
# sessions table (title, head, rule) and the calls table likewise, the console's border.
_HEADER_ROWS, _TABLE_ROWS, _PANEL_ROWS = 4, 3, 2


def short_command_line(command_line: str) -> str:
    """The command line with the debugger's directory left out: the arguments are what differ.

    ``"C:\\Program Files (x86)\\Windows Kits\\10\\Debuggers\\x64\\kd.exe" -k net:...`` reads
    ``kd.exe -k net:...``; a program quoted because of its spaces is unquoted.
    """
    text = command_line.strip()
    if text.startswith('"') and '"' in text[1:]:
        program, rest = text[1:].split('"', 1)
    else:
        program, _, rest = text.partition(" ")
        rest = " " + rest if rest else ""
    name = program.replace("\\", "/").rsplit("/", 1)[-1]
    return name + rest


def _clock(t: float | None) -> str:
    return time.strftime("%H:%M:%S", time.localtime(t)) if t else "--:--:--"


def describe_args(call: Call) -> str:
    """A call's arguments in one short line: the command alone for the command tools."""
    args = {k: v for k, v in call.args.items() if k != "session_id"}
    if set(args) == {"command"}:
        text = json.dumps(args["command"])
    else:
        text = ", ".join(f"{k}={json.dumps(v) if isinstance(v, str) else v}" for k, v in args.items())
    text = clean(text)
    return text if len(text) <= _ARGS_WIDTH else text[: _ARGS_WIDTH - 1] + "\u2026"


def _result(call: Call) -> Text:
    if call.status is None:
        return Text("running\u2026", style="yellow")
    if call.status == "error":
        return Text(f"error[{call.category or '?'}]", style="red")
    return Text(call.status, style="green")


def _target(view: SessionView) -> str:
    """The session's kind (``target_kind`` in its record) and what it is attached to, else its command line."""
    what = view.attached_to or short_command_line(view.command_line)
    return f"{view.kind} {what}".strip() if view.kind else what


def _header(state: WatchState) -> Panel:
    if state.server_pid is None:
        who = "no server run recorded yet"
    else:
        who = _DOT.join(
            (f"server pid {state.server_pid}", f"kd-mcp {state.server_version}", f"started {_clock(state.started_at)}")
        )
    now = f"server stopped at {_clock(state.stopped_at)}" if state.stopped_at else "following"
    body = Text(f"{state.path}\n" + _DOT.join((who, now, f"{state.records} records")))
    return Panel(body, title="kd-mcp watch", title_align="left", box=box.ROUNDED)


def _table(title: str) -> Table:
    return Table(title=title, title_justify="left", box=box.SIMPLE_HEAD, show_edge=False, expand=True, pad_edge=False)


def _sessions(state: WatchState, focus: SessionView | None) -> Table:
    table = _table("sessions")
    table.add_column("session", no_wrap=True)
    table.add_column("state", no_wrap=True)
    table.add_column("target", overflow="ellipsis", no_wrap=True, ratio=3)
    table.add_column("last call", overflow="ellipsis", no_wrap=True, ratio=2)
    table.add_column("output", justify="right", no_wrap=True)
    for view in state.ordered():
        last = view.calls[-1] if view.calls else None
        call = f"{last.tool} {describe_args(last)}".strip() if last else ""
        mark = "\u25b6 " if view is focus else "  "
        table.add_row(
            Text(mark + view.session_id),
            Text(view.state),
            Text(clean(_target(view))),
            Text(call),
            Text(f"{view.log_bytes:,} B"),
            style="bold" if view is focus else None,
        )
    return table


def _console(view: SessionView | None, state: WatchState, wanted: str | None, lines: int) -> Panel:
    if view is None:
        known = ", ".join(view.session_id for view in state.ordered()) or "none yet"
        why = f"no session {wanted} (sessions: {known})" if wanted else "no session yet: the agent has not started one"
        return Panel(Text(why, style="dim"), title="console", title_align="left")
    every = view.console_lines()
    shown = every[-lines:] if lines > 0 else []
    body = Text("\n".join(clean(line) for line in shown), no_wrap=True, overflow="ellipsis")
    if view.partial and shown and not view.ended:
        # An unfinished line: more is on its way. The server also holds a live log's last few
        # bytes back until more output comes, so a key still arriving is never written half
        # masked (docs/transcripts.md): a prompt shows once the next output pushes it out.
        body.append(" \u2026", style="dim")
    if view.log_problem:
        body = Text(f"not reading {view.session_id}'s log: {view.log_problem}", style="red")
    elif not every:
        body = Text("(no console output logged yet)", style="dim")
    title = f"{view.session_id} console \u2014 last {len(shown)} of {view.line_count + bool(view.partial)} lines"
    return Panel(body, title=title, title_align="left", box=box.ROUNDED)


def _calls(view: SessionView | None, state: WatchState, count: int) -> Table:
    calls: list[Call] = list(view.calls) if view is not None else []
    # A request naming no session is attributed when its result says which: show it meanwhile.
    calls += [c for c in state.pending if c.session_id is None]
    shown = calls[-count:]
    title = f"{view.session_id} tool calls" if view is not None else "tool calls"
    table = _table(f"{title} (last {len(shown)} of {len(calls)})")
    table.add_column("time", no_wrap=True)
    table.add_column("tool", no_wrap=True)
    table.add_column("arguments", overflow="ellipsis", no_wrap=True, ratio=1)
    table.add_column("result", no_wrap=True)
    table.add_column("state", no_wrap=True)
    table.add_column("elapsed", justify="right", no_wrap=True)
    for call in shown:
        elapsed = f"{call.elapsed_ms:,.0f} ms" if call.elapsed_ms is not None else ""
        table.add_row(
            _clock(call.t), Text(call.tool), Text(describe_args(call)), _result(call), Text(call.state or ""), elapsed
        )
    return table


def render(
    state: WatchState,
    wanted: str | None = None,
    *,
    lines: int | None = None,
    height: int | None = None,
    calls: int = SHOWN_CALLS,
) -> RenderableType:
    """One frame. ``lines``: console lines to show; else as many as fit ``height`` rows (the
    terminal's), else ``DEFAULT_LINES``."""
    focus = state.focus(wanted)
    shown_calls = len(list(focus.calls) if focus else []) + sum(1 for c in state.pending if c.session_id is None)
    shown_calls = min(calls, shown_calls)
    if lines is None:
        if height is None:
            lines = DEFAULT_LINES
        else:
            used = _HEADER_ROWS + _TABLE_ROWS + len(state.sessions) + _TABLE_ROWS + shown_calls + _PANEL_ROWS
            lines = max(MIN_LINES, height - used)
    parts: list[Any] = [
        _header(state),
        _sessions(state, focus),
        _console(focus, state, wanted, lines),
        _calls(focus, state, calls),
    ]
    return Group(*parts)
