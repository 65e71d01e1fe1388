"""SessionMachine: kd's bytes in, transitions out — every state, event and completion, no process.

The streams below are kd's own words (corpus connect/01, connect/04, misc/05; the simulator's
texts follow the same samples); the machine is fed them in chunks split anywhere.
"""

from __future__ import annotations

import itertools
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kdmcp.engine.events import EVENT_TEXT_LIMIT, SessionState
from kdmcp.engine.machine import SessionMachine, Transition
from kdmcp.secret import Secret
from tests.tiers import examples

CORPUS = Path(__file__).resolve().parents[2] / "fixtures" / "corpus"
S = SessionState

WAITING = b"Using NET for debugging\r\nOpened WinSock 2.0\r\nWaiting to reconnect...\r\n"
CONNECTED = (
    b"Connected to target 169.254.221.237 on port 50000 on local IP 127.0.0.1\r\n"
    b"Connected to Windows 10 19041 x64 target at (Sun Nov 29 12:00:00.000 2026 (UTC + 0:00)), ptr64 TRUE\r\n"
    b"Kernel Debugger connection established.  (Initial Breakpoint requested)\r\n"
    b"Symbol search path is: srv*\r\n"
    b"Executable search path is: \r\n"
    b"Windows 10 Kernel Version 19041 MP (4 procs) Free x64\r\n"
    b"Kernel base = 0xfffff800`62a00000 PsLoadedModuleList = 0xfffff800`6362a2d0\r\n"
    b"System Uptime: 0 days 0:00:20.534\r\n"
)
BREAK_IN = (
    b"Break instruction exception - code 80000003 (first chance)\r\n"
    b"*   You are seeing this message because you pressed either                    *\r\n"
    b"nt!DbgBreakPointWithStatus:\r\n"
    b"fffff800`62a05c20 cc              int     3\r\n"
)
BREAKPOINT = b"Breakpoint 0 hit\r\nnt!NtCreateFile:\r\nfffff800`62c3a1e0 4881ec88000000  sub     rsp,88h\r\n"
BUGCHECK = b"\r\n*** Fatal System Error: 0x000000d1\r\n                       (0x0,0x2,0x0,0x0)\r\n\r\n" + BREAK_IN
EXCEPTION = b"(1a2c.3b4): Access violation - code c0000005 (first chance)\r\nntdll!foo:\r\n"
REBOOT = b"Shutdown occurred at (Sun Nov 29 12:00:00.000 2026 (UTC + 0:00))...unloading all symbol tables.\r\n"
LOST = (
    b"Retry sending the same data packet for 64 times.\r\n"
    b"The transport connection between host kernel debugger and target Windows seems lost.\r\n"
)
PROMPT = b"0: kd> "
MARKER = b"KDMCPTESTN1"


def _machine(**kw: object) -> SessionMachine:
    return SessionMachine(marker_prefix=b"KDMCPTESTN", clock=lambda: 1.5, **kw)  # type: ignore[arg-type]


def _steps(transitions: list[Transition]) -> list[tuple[str, str, str | None]]:
    return [(t.before.value, t.after.value, t.event.kind if t.event else None) for t in transitions]


def _connected_and_broken() -> SessionMachine:
    m = _machine()
    m.feed(WAITING + CONNECTED + BREAK_IN + PROMPT)
    assert m.state == S.broken
    return m


# ------------------------------------------------------------ connect


def test_connect_with_initial_break():
    m = _machine()
    assert m.state == S.starting
    assert _steps(m.feed(WAITING)) == [("starting", "waiting_for_target", "waiting_for_target")]
    assert _steps(m.feed(CONNECTED)) == [("waiting_for_target", "running", "connected")]
    assert _steps(m.feed(BREAK_IN + PROMPT)) == [("running", "running", "break_in"), ("running", "broken", None)]
    assert m.prompt is not None and m.prompt.text == "0: kd> " and m.prompt.processor == 0
    assert m.last_prompt_offset == m.end - len(PROMPT)
    # The connect banner up to "System Uptime:" and the stop's own lines are not DbgPrint.
    assert [e.kind for e in m.events] == ["waiting_for_target", "connected", "break_in"]
    brk = m.events[2]
    assert brk.text == "Break instruction exception - code 80000003 (first chance)"
    assert brk.time_unix == 1.5 and brk.seq == 3 == m.seq


def test_connect_without_initial_break_runs_and_dbgprint_follows_the_banner():
    m = _machine()
    out = m.feed(WAITING + CONNECTED + b"EchoDriver: DriverEntry called\r\n")
    assert _steps(out) == [
        ("starting", "waiting_for_target", "waiting_for_target"),
        ("waiting_for_target", "running", "connected"),
        ("running", "running", "dbgprint"),
    ]
    assert m.state == S.running and m.prompt is None
    dbgprint = out[-1].event
    assert dbgprint is not None and dbgprint.text == "EchoDriver: DriverEntry called\r\n"
    assert dbgprint.end_offset == m.end and dbgprint.offset == m.end - len(dbgprint.text)


def test_the_corpus_connect_banner_is_the_connection_not_dbgprint():
    m = _machine()
    m.feed((CORPUS / "connect" / "04.txt").read_bytes() + PROMPT)  # the sample ends before the prompt
    kinds = [e.kind for e in m.events]
    # "KDTARGET: Refreshing KD connection" after "System Uptime:" is the target's KD transport
    # talking, not DbgPrint (issue 29)
    assert kinds == ["connected", "break_in"]
    assert m.events[1].stopped
    assert m.state == S.broken


def test_waiting_after_a_connection_is_reconnecting():
    m = _connected_and_broken()
    m.go_sent(None)
    assert _steps(m.feed(b"Waiting to reconnect...\r\n")) == [("running", "reconnecting", "reconnecting")]


# ------------------------------------------------------------ running


def test_go_then_dbgprint_then_breakpoint():
    m = _connected_and_broken()
    m.go_sent(None)
    assert m.state == S.running and m.prompt is None
    out = m.feed(b"EchoDriver: DriverEntry called\r\nEchoDriver: AddDevice 0xffffc50e`3a1b2c30\r\n")
    assert [t.event.text for t in out if t.event] == [
        "EchoDriver: DriverEntry called\r\nEchoDriver: AddDevice 0xffffc50e`3a1b2c30\r\n"]
    out = m.feed(b"late line\r\n" + BREAKPOINT + PROMPT)
    assert _steps(out) == [
        ("running", "running", "dbgprint"), ("running", "running", "breakpoint"), ("running", "broken", None)]
    assert out[0].event is not None and out[0].event.text == "late line\r\n"
    bp = out[1].event
    assert bp is not None and bp.breakpoint == 0 and bp.text == "Breakpoint 0 hit"
    assert not any("nt!NtCreateFile" in e.text for e in m.events)  # the stop's lines are not DbgPrint


@pytest.mark.parametrize(
    ("stream", "kind", "code"),
    [(BUGCHECK, "bugcheck", "0x000000d1"), (EXCEPTION, "exception", "0xc0000005"), (BREAK_IN, "break_in", None)],
    ids=["bugcheck", "exception", "break_in"],
)
def test_stops_while_running(stream, kind, code):
    m = _connected_and_broken()
    m.go_sent(None)
    out = m.feed(stream + PROMPT)
    events = [t.event for t in out if t.event]
    assert events[0] is not None and events[0].kind == kind and events[0].code == code
    assert not any(e.kind == "dbgprint" for e in events if e)
    assert m.state == S.broken


def test_reboot_goes_rebooting_then_reconnecting_then_running():
    m = _connected_and_broken()
    m.go_sent(None)
    out = m.feed(REBOOT + b"Waiting to reconnect...\r\n" + CONNECTED + BREAK_IN + PROMPT)
    assert _steps(out) == [
        ("running", "rebooting", "reboot"),
        ("rebooting", "reconnecting", "reconnecting"),
        ("reconnecting", "running", "connected"),
        ("running", "running", "break_in"),
        ("running", "broken", None),
    ]


def test_transport_lost_then_reconnecting():
    m = _connected_and_broken()
    m.go_sent(None)
    out = m.feed(LOST + b"Waiting to reconnect...\r\n")
    assert _steps(out) == [("running", "lost", "transport_lost"), ("lost", "reconnecting", "reconnecting")]
    assert m.events[-2].text == "Retry sending the same data packet for 64 times."


def test_pty_echo_of_ctrl_c_is_neither_dbgprint_nor_a_missed_banner():
    m = _connected_and_broken()
    m.go_sent(None)
    out = m.feed(b"\x03")  # the pty echoes the first ^C at once
    assert out == []
    out = m.feed(b"\x03" + BREAK_IN + PROMPT)  # a second request, then kd's banner
    assert _steps(out) == [("running", "running", "break_in"), ("running", "broken", None)]


def test_the_go_echo_is_not_dbgprint():
    m = _connected_and_broken()
    m.go_sent(b"g\r\n")  # a pty echoes the line as it is written
    assert m.feed(b"g\r\n") == []
    out = m.feed(b"g\r\nnot an echo\r\n")  # only the first "g\r\n" is the echo
    assert [t.event.text for t in out if t.event] == ["g\r\nnot an echo\r\n"]


def test_a_split_prompt_is_not_dbgprint():
    m = _connected_and_broken()
    m.go_sent(None)
    assert m.feed(BREAK_IN + b"0: k") == [Transition(before=S.running, after=S.running, event=m.events[-1])]
    assert _steps(m.feed(b"d> ")) == [("running", "broken", None)]
    assert [e.kind for e in m.events][-1] == "break_in"


def test_long_dbgprint_is_truncated_in_the_event_and_an_overlong_line_is_not_held_back():
    m = _connected_and_broken()
    m.go_sent(None)
    out = m.feed(b"x" * (EVENT_TEXT_LIMIT + 100))  # no newline, but too long to become a prompt
    ev = out[0].event
    assert ev is not None and ev.truncated and len(ev.text) == EVENT_TEXT_LIMIT
    assert ev.end_offset - ev.offset == EVENT_TEXT_LIMIT + 100


def test_a_short_unterminated_line_waits_for_its_end():
    m = _connected_and_broken()
    m.go_sent(None)
    assert m.feed(b"EchoDriver: par") == []
    out = m.feed(b"tial\r\n")
    assert [t.event.text for t in out if t.event] == ["EchoDriver: partial\r\n"]


def test_an_unterminated_line_at_the_end_of_the_stream_is_still_dbgprint():
    m = _connected_and_broken()
    m.go_sent(None)
    assert m.feed(b"EchoDriver: last wo") == []
    assert _steps(m.eof(0)) == [("running", "running", "dbgprint"), ("running", "exited", "exited")]
    assert m.events[-2].text == "EchoDriver: last wo"


def test_event_text_is_redacted():
    m = _machine(secrets=[Secret("c4n4ryk3y0000")])
    m.feed(WAITING + CONNECTED)
    out = m.feed(b"key is c4n4ryk3y0000\r\n")
    assert out[0].event is not None and "c4n4ryk3y0000" not in out[0].event.text


# ------------------------------------------------------------ commands


def _command(m: SessionMachine):
    marker = m.new_marker()
    assert marker == MARKER
    return m.command_sent(marker)


def test_marker_completes_a_command_only_with_a_prompt_after_it():
    m = _connected_and_broken()
    start = m.end
    pending = _command(m)
    assert m.state == S.busy and m.busy_command and m.prompt is None
    assert m.feed(b"rax=0000000000000000\r\n") == []
    assert m.feed(PROMPT + MARKER + b"\r\n") == []  # found, but no prompt after it yet
    assert pending.hit is not None and not pending.done
    assert pending.hit.output_end == start + len(b"rax=0000000000000000\r\n")
    assert _steps(m.feed(PROMPT)) == [("busy", "broken", None)]
    assert pending.done and not m.busy_command and m.state == S.broken


def test_prompt_like_text_and_fake_markers_do_not_end_a_command():
    m = _connected_and_broken()
    pending = _command(m)
    out = b"line one\r\n0: kd> \r\n0: kd> .echo KDMCPDEADBEEF\r\nKDMCPDEADBEEF\r\nkd> lkd> 0:000> \r\nlast line\r\n"
    m.feed(out + PROMPT)  # an intermediate prompt, before .echo runs
    assert m.state == S.busy and not pending.done and m.prompt_since(m.end - len(PROMPT))
    m.feed(b".echo " + MARKER + b"\r\n")  # the marker's echo is not the marker
    assert pending.hit is None
    m.feed(MARKER + b"\r\n" + PROMPT)
    assert pending.done and m.state == S.broken


def test_target_gone_mid_command_releases_the_waiter():
    m = _connected_and_broken()
    pending = _command(m)
    out = m.feed(REBOOT)
    assert _steps(out) == [("busy", "rebooting", "reboot")]
    assert out[0].event is not None and out[0].event.during_command
    assert not m.busy_command and not pending.done
    m.abandon(pending.marker)
    m.feed(b"Waiting to reconnect...\r\n" + CONNECTED + BREAK_IN + PROMPT)
    assert m.state == S.broken and m.events[-1].during_command is False


def test_resync_abandons_the_cancelled_marker():
    m = _connected_and_broken()
    old = _command(m)
    m.feed(b"Scanning pool...\r\n^C\r\n" + PROMPT)
    assert m.state == S.busy
    fresh = m.resync_sent()
    assert fresh != old.marker
    m.feed(old.marker + b"\r\n" + PROMPT)  # a late old marker is just text
    assert m.state == S.busy
    m.feed(fresh + b"\r\n" + PROMPT)
    assert m.state == S.broken


def test_eof_is_exited_with_its_code_once():
    m = _connected_and_broken()
    pending = _command(m)
    m.feed(b"Loading extension...\r\n")
    out = m.eof(3)
    assert _steps(out) == [("busy", "exited", "exited")]
    assert out[0].event is not None and out[0].event.text == "debugger exited with code 3"
    assert out[0].event.offset == m.end and m.exit_code == 3 and pending.done
    assert m.eof(3) == []  # a second end records nothing more
    m.feed(PROMPT)
    assert m.state == S.exited


def test_events_after_and_the_bounded_log():
    m = _machine(event_log_size=3)
    m.feed(WAITING + CONNECTED + BREAK_IN + PROMPT)
    m.go_sent(None)
    m.feed(BREAKPOINT + PROMPT)
    assert [e.seq for e in m.events] == [2, 3, 4]
    assert [e.kind for e in m.events_after(3)] == ["breakpoint"]
    assert m.events_after(4) == []


# ------------------------------------------------------------ chunking

# A whole session as kd prints it; ("go", echo) and ("command", _) mark what the session sent.
SCRIPT: list[tuple[str, bytes]] = [
    ("feed", WAITING + CONNECTED + b"EchoDriver: early\r\n" + BREAK_IN + PROMPT),
    ("command", b""),
    ("feed", b"line one\r\n0: kd> \r\n0: kd> .echo KDMCPDEADBEEF\r\nKDMCPDEADBEEF\r\n" + PROMPT + MARKER + b"\r\n"
     + PROMPT),
    ("go", b"g\r\n"),
    ("feed", b"g\r\nEchoDriver: DriverEntry called\r\nEchoDriver: " + b"y" * 300 + b"\r\n" + BREAKPOINT + PROMPT),
    ("go", b""),
    ("feed", b"\x03" + BUGCHECK + PROMPT),
    ("go", b""),
    ("feed", REBOOT + b"Waiting to reconnect...\r\n" + CONNECTED + EXCEPTION + PROMPT),
    ("go", b""),
    ("feed", LOST + b"Waiting to reconnect...\r\n" + CONNECTED + b"after\r\n" + BREAK_IN + PROMPT),
]


def _run(split) -> tuple[list[tuple[str, str, str | None, str]], str, list[object]]:
    """Steps other than DbgPrint; the DbgPrint text without line ends; each command's completion.

    DbgPrint events are per chunk, not per line (a chunk of only line ends is no event), so
    their text is compared joined, without its line ends.
    """
    m = _machine()
    steps: list[tuple[str, str, str | None, str]] = []
    dbgprint = ""
    hits: list[object] = []
    for action, data in SCRIPT:
        if action == "command":
            hits.append(_command(m))
        elif action == "go":
            m.go_sent(data or None)
        else:
            for chunk in split(data):
                for t in m.feed(chunk):
                    if t.event is not None and t.event.kind == "dbgprint":
                        dbgprint += t.event.text
                    else:
                        text = t.event.text if t.event else ""
                        steps.append((t.before.value, t.after.value, t.event.kind if t.event else None, text))
    steps += [(t.before.value, t.after.value, t.event.kind if t.event else None, "") for t in m.eof(0)]
    done = [(p.done, p.hit) for p in hits]  # type: ignore[attr-defined]
    return steps, dbgprint.replace("\r", "").replace("\n", ""), done


def test_the_script_in_one_piece():
    steps, dbgprint, done = _run(lambda data: [data])
    assert dbgprint == "EchoDriver: earlyEchoDriver: DriverEntry calledEchoDriver: " + "y" * 300 + "after"
    assert [s[2] for s in steps if s[2]] == [
        # the break kd prints after "*** Fatal System Error" is the bugcheck's, no break_in (issue 29)
        "waiting_for_target", "connected", "break_in", "breakpoint", "bugcheck", "reboot", "reconnecting",
        "connected", "exception", "transport_lost", "reconnecting", "connected", "break_in", "exited",
    ]
    assert [s[1] for s in steps if s[2] is None] == ["broken"] * 6
    assert done[0][0]  # type: ignore[index]


@pytest.mark.parametrize("size", [1, 2, 3, 7, 13, 64, 4096])
def test_fixed_chunk_sizes_give_the_same_transitions(size):
    assert _run(lambda data: [data[i : i + size] for i in range(0, len(data), size)]) == WHOLE


WHOLE = _run(lambda data: [data])


@settings(max_examples=examples(50), deadline=None)
@given(st.data())
def test_any_chunking_gives_the_same_transitions(data):

    def split(chunk: bytes) -> list[bytes]:
        cuts = sorted(data.draw(st.sets(st.integers(1, max(1, len(chunk) - 1)), max_size=12)))
        edges = [0, *cuts, len(chunk)]
        return [chunk[a:b] for a, b in itertools.pairwise(edges) if b > a]

    assert _run(split) == WHOLE


# ------------------------------------------------------------ other kinds of start

JOINED = b"LABHOST\\alice (tcp 127.0.0.1:51968) connected at Tue Dec  1 23:53:48 2026\r\n"


def test_a_remote_clients_own_join_is_its_connection_and_a_prompt_follows_when_stopped():
    m = _machine()
    assert _steps(m.feed(JOINED)) == [("starting", "running", "connected")]
    assert _steps(m.feed(PROMPT)) == [("running", "broken", None)]


def test_another_client_joining_a_session_we_are_in_changes_nothing_but_is_reported():
    m = _connected_and_broken()
    out = m.feed(JOINED + PROMPT)
    assert [t.event.kind for t in out if t.event] == ["client_connected"]
    assert m.state == S.broken


def test_cdbs_commandline_line_says_a_launched_program_runs():
    m = _machine()
    out = m.feed(b"Microsoft (R) Windows Debugger Version 10.0.26100.1 AMD64\r\nCommandLine: C:\\app.exe -x\r\n")
    assert ("starting", "running", "connected") in _steps(out) and m.state == S.running
