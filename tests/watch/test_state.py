"""WatchState: built from records and log bytes alone; bounded; lines cut at a read's end kept."""

from __future__ import annotations

from pathlib import Path

from kdmcp.watch.state import KEPT_LINES, WatchState
from tests.watch.helpers import CONSOLE, MARKER, a_session_records, record


def ingest(records: list[dict]) -> WatchState:
    state = WatchState(Path("run.jsonl"))
    for r in records:
        state.ingest_record(r)
    return state


def test_records_make_the_server_the_sessions_and_their_calls():
    state = ingest(a_session_records())
    assert (state.server_pid, state.server_version, state.started_at) == (4242, "0.1.0", 100.0)
    assert state.records == 9 and state.stopped_at is None and not state.pending
    view = state.sessions["s1"]
    assert view.state == "broken" and not view.ended
    assert "kd.exe" in view.command_line and "key=***" in view.command_line
    assert [(c.tool, c.status, c.category) for c in view.calls] == [
        ("start_from_state", "ok", None),
        ("kd_command", "ok", None),
        ("kd_command", "error", "invalid_argument"),
    ]
    assert view.calls[1].args == {"command": "lm"} and view.calls[1].elapsed_ms == 7.2
    assert view.last_active == 103.1


def test_a_request_shows_as_running_until_its_result_comes():
    state = ingest(a_session_records()[:6])  # the lm request, no result yet
    assert [(c.tool, c.status, c.session_id) for c in state.pending] == [("kd_command", None, None)]
    named = ingest([*a_session_records(), record("request", 104.0, tool="break_in", args={"session_id": "s1"})])
    assert named.sessions["s1"].calls[-1].tool == "break_in" and named.sessions["s1"].calls[-1].status is None


def test_results_answer_the_oldest_request_of_their_tool_and_client():
    records = [
        record("start", 1.0, pid=1, version="v"),
        record("session", 1.5, event="created", session_id="s1", command_line="kd"),
        record("request", 2.0, tool="kd_command", args={"command": "a"}, client="alice"),
        record("request", 2.1, tool="kd_command", args={"command": "b"}, client="bob"),
        record("result", 2.2, tool="kd_command", client="bob", status="ok", session_id="s1", elapsed_ms=1),
        record("result", 2.3, tool="kd_command", client="alice", status="ok", session_id="s1", elapsed_ms=2),
    ]
    calls = ingest(records).sessions["s1"].calls
    assert [(c.args["command"], c.client, c.elapsed_ms) for c in calls] == [("b", "bob", 1.0), ("a", "alice", 2.0)]


def test_stop_ends_sessions_and_a_new_start_begins_again():
    state = ingest([*a_session_records(), record("session", 104.0, event="stopped", session_id="s1", exit_code=0)])
    assert state.sessions["s1"].state == "ended (exit 0)"
    stopped = ingest([*a_session_records(), record("stop", 105.0)])
    assert stopped.stopped_at == 105.0 and stopped.sessions["s1"].state == "ended (server stopped)"
    again = ingest([*a_session_records(), record("stop", 105.0), record("start", 200.0, pid=7, version="0.2")])
    assert again.sessions == {} and again.server_pid == 7 and again.stopped_at is None


def test_the_session_kind_is_shown_when_the_server_records_it():
    state = ingest(
        [
            record(
                "session",
                1.0,
                event="created",
                session_id="s2",
                command_line="cdb -z x.dmp",
                session_kind="user_dump",
                attached_to="x.dmp",
            )
        ]
    )
    assert (state.sessions["s2"].kind, state.sessions["s2"].attached_to) == ("user_dump", "x.dmp")


def test_log_bytes_become_lines_whatever_the_chunks():
    whole = WatchState(Path("run.jsonl"))
    whole.ingest_log("s1", CONSOLE.encode())
    data = (CONSOLE + "!echo caf\u00e9 \u2014 done\r\n").encode()
    chunked = WatchState(Path("run.jsonl"))
    for i in range(len(data)):  # CRLF and a multi-byte character cut between reads
        chunked.ingest_log("s1", data[i : i + 1])
    view = chunked.sessions["s1"]
    assert view.console_lines()[-1] == "0: kd> !echo caf\u00e9 \u2014 done" and view.partial == ""
    assert view.log_bytes == len(data)
    lines = whole.sessions["s1"].console_lines()
    assert lines[-1] == "0: kd> "  # the prompt waits on an unfinished line: shown
    assert "0: kd> lm" in lines and not any(MARKER in line for line in lines)  # the engine's marker is not kd's
    assert all("\r" not in line for line in lines)


def test_console_lines_are_bounded_and_counted():
    state = WatchState(Path("run.jsonl"))
    state.ingest_log("s1", b"".join(b"line %d\r\n" % i for i in range(KEPT_LINES + 10)))
    view = state.sessions["s1"]
    assert len(view.lines) == KEPT_LINES and view.line_count == KEPT_LINES + 10
    assert view.lines[-1] == f"line {KEPT_LINES + 9}"


def test_the_focus_is_the_session_asked_for_else_the_most_recently_active():
    state = ingest(
        [
            record("session", 1.0, event="created", session_id="s1", command_line="kd"),
            record("session", 2.0, event="created", session_id="s2", command_line="cdb"),
            record("result", 3.0, tool="kd_command", status="ok", session_id="s1"),
        ]
    )
    assert state.focus(None).session_id == "s1"
    state.ingest_log("s2", b"DbgPrint\r\n", at=4.0)  # output while its target runs is activity too
    assert state.focus(None).session_id == "s2"
    assert state.focus("s1").session_id == "s1" and state.focus("s9") is None
    assert WatchState(Path("x")).focus(None) is None


def test_an_error_naming_a_session_that_never_existed_makes_no_session():
    state = ingest([
        *a_session_records(),
        record("request", 104.0, tool="kd_command", args={"command": "r", "session_id": "s99"}, client=None),
        record("result", 104.1, tool="kd_command", client=None, status="error", category="unknown_session",
               session_id="s99", state=None),
    ])
    assert set(state.sessions) == {"s1"}
    assert not state.pending


def test_a_call_that_got_no_answer_is_not_running_for_ever():
    # An unknown tool (a protocol error) is answered by its own result record (kdmcp/server/mcp_server.py).
    answered = ingest([
        *a_session_records(),
        record("request", 104.0, tool="no_such_tool", args={"session_id": "s1"}, client=None),
        record("result", 104.1, tool="no_such_tool", client=None, status="error", category="protocol_error"),
    ])
    call = answered.sessions["s1"].calls[-1]
    assert (call.tool, call.status, call.category) == ("no_such_tool", "error", "protocol_error")
    # And a request the server never answered before it stopped reads as such, not as running.
    stopped = ingest([
        *a_session_records(),
        record("request", 104.0, tool="break_in", args={"session_id": "s1"}, client=None),
        record("stop", 105.0),
    ])
    call = stopped.sessions["s1"].calls[-1]
    assert call.status == "error" and call.category == "no answer (server stopped)"
    assert not stopped.pending


def test_sessions_are_listed_in_numeric_order():
    records = [record("start", 100.0, version="0.1.0", pid=1)]
    records += [record("session", 100.0 + n, event="created", session_id=f"s{n}", command_line="kd")
                for n in (1, 10, 2, 11, 3)]
    assert [view.session_id for view in ingest(records).ordered()] == ["s1", "s2", "s3", "s10", "s11"]
