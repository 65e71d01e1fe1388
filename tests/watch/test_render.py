"""A frame, rendered to a string on a fixed-width console: what the person beside the agent reads."""

from __future__ import annotations

import io
from pathlib import Path

from rich.console import Console

from kdmcp.watch.render import clean, render, short_command_line
from kdmcp.watch.state import WatchState
from tests.watch.helpers import CONSOLE, a_session_records, record


def text_of(renderable, width: int = 100) -> str:
    console = Console(file=io.StringIO(), width=width, color_system=None, legacy_windows=False)
    console.print(renderable)
    return console.file.getvalue()


def state_of(records=None, console: str = CONSOLE) -> WatchState:
    state = WatchState(Path("/tmp/x/run.jsonl"))
    for r in a_session_records() if records is None else records:
        state.ingest_record(r)
    state.ingest_log("s1", console.encode())
    return state


def test_a_frame_shows_the_server_the_sessions_the_console_and_the_calls():
    out = text_of(render(state_of()))
    assert "/tmp/x/run.jsonl" in out and "server pid 4242" in out and "kd-mcp 0.1.0" in out and "following" in out
    assert "\u25b6 s1" in out and "broken" in out and "kd.exe -b -k net:port=50000,key=***" in out
    assert "s1 console" in out and "nt         (pdb symbols)" in out and "0: kd> lm" in out
    assert "KDMCP" not in out
    assert "0: kd>  \u2026" in out  # the line still being printed says more is coming
    lines = out.splitlines()
    calls = lines[next(i for i, line in enumerate(lines) if "s1 tool calls" in line) :]
    assert any("start_from_state" in line and "ok" in line and "600 ms" in line for line in calls)
    assert any('"lm"' in line and "broken" in line and "7 ms" in line for line in calls)
    assert any('"r\\nk"' in line and "error[invalid_argument]" in line for line in calls)  # text, not markup
    assert all(len(line) <= 100 for line in lines)


def test_a_running_call_and_a_stopped_server_read_as_such():
    out = text_of(render(state_of([*a_session_records(), record("request", 110.0, tool="break_in", args={})])))
    assert "running\u2026" in out and "break_in" in out
    stopped = text_of(render(state_of([*a_session_records(), record("stop", 120.0)])))
    assert "server stopped at" in stopped and "ended (server stopped)" in stopped
    assert "\u2026" not in stopped.split("s1 console", 1)[1].split("tool calls", 1)[0]  # nothing more will come


def test_the_console_shows_its_last_lines_and_fits_the_height():
    state = state_of(console="".join(f"line {i}\r\n" for i in range(200)))
    three = text_of(render(state, lines=3))
    assert "line 197" in three and "line 199" in three and "line 196" not in three and "last 3 of 200" in three
    fitted = text_of(render(state, height=40))
    assert len(fitted.splitlines()) <= 40 and "line 199" in fitted
    assert "last 20 of 200" in text_of(render(state))  # --once without --lines


def test_no_session_or_an_unknown_one_is_said():
    empty = WatchState(Path("run.jsonl"))
    assert "no session yet" in text_of(render(empty)) and "no server run recorded yet" in text_of(render(empty))
    assert "no session s7 (sessions: s1)" in text_of(render(state_of(), "s7"))


def test_guest_output_cannot_drive_the_terminal_or_become_markup():
    state = state_of(console="\x1b[2J\x1b]0;pwned\x07[bold red]x[/] \x9b31m\ttab\r\n")
    out = text_of(render(state))
    assert "\x1b" not in out and "\x07" not in out and "\x9b" not in out
    assert "^[[2J^[]0;pwned^G[bold red]x[/] \\u009b31m       tab" in out
    assert clean("a\x02b\x7f") == "a^Bb^?"


def test_the_debugger_directory_is_left_out_of_the_command_line():
    assert short_command_line('"C:\\Program Files\\kd.exe" -k net:port=1') == "kd.exe -k net:port=1"
    assert short_command_line("/venv/bin/python -m kdmcp.sim cdb -z x.dmp") == "python -m kdmcp.sim cdb -z x.dmp"
    assert short_command_line("kd.exe") == "kd.exe"


def test_the_target_is_the_kind_then_what_it_is_attached_to_or_its_command_line():
    records = [
        record(
            "session",
            1.0,
            event="created",
            session_id="s1",
            command_line="/x/cdb.exe -z c.dmp",
            target_kind="user_dump",
        )
    ]
    assert "user_dump cdb.exe -z c.dmp" in text_of(render(state_of(records)))
