"""StreamRecognizer: the same findings whatever the chunking."""

from __future__ import annotations

from pathlib import Path

import pytest

from kdmcp.engine.recognizer import _EVENT_RE, _MIDLINE_MODLOAD_RE, StreamRecognizer, _may_hold_event

CORPUS = Path(__file__).resolve().parents[2] / "fixtures" / "corpus"

STREAM = (
    b"Waiting to reconnect...\r\n"
    b"Kernel Debugger connection established.\r\n"
    b"EchoDriver: hello\r\n"
    b"Breakpoint 12 hit\r\n"
    b"0: kd> r\r\n.echo KDMCPAAAA\r\nrax=1\r\n0: kd> KDMCPAAAA\r\n"
    b"*** Fatal System Error: 0x000000d1\r\n"
    b"(1a2c.3b4): Access violation - code c0000005 (first chance)\r\n"
    b"\x03Break instruction exception - code 80000003 (first chance)\r\n"
    b"Shutdown occurred at (Sun Nov 29 12:00:00.000 2026 (UTC + 0:00))...unloading all symbol tables.\r\n"
    b"Retry sending the same data packet for 64 times.\r\n"
    b"1: kd> "
)


def _run(chunks):
    rec = StreamRecognizer()
    rec.add_marker(b"KDMCPAAAA")
    events, markers = [], []
    for c in chunks:
        e, m = rec.feed(c)
        events += e
        markers += m
    return rec, events, markers


@pytest.mark.parametrize("size", [1, 2, 7, 64, len(STREAM)])
def test_chunking_does_not_change_what_is_found(size):
    rec, events, markers = _run([STREAM[i : i + size] for i in range(0, len(STREAM), size)])
    assert [e.kind for e in events] == [
        "waiting", "connected", "breakpoint", "bugcheck", "exception", "break_in", "reboot", "transport_lost",
    ]
    bp = events[2]
    assert bp.number == 12 and STREAM[bp.start : bp.end] == b"Breakpoint 12 hit"
    assert events[3].code == "0x000000d1" and events[4].code == "0xc0000005"
    # Only the marker alone on its line counts, not its echo after ".echo ".
    assert len(markers) == 1
    m = markers[0]
    assert STREAM[m.output_end : m.line_end] == b"0: kd> KDMCPAAAA\r\n"
    assert rec.prompt is not None and rec.prompt.text == "1: kd> " and rec.prompt.processor == 1


def test_marker_after_partial_output_line_on_pipes():
    rec = StreamRecognizer()
    rec.add_marker(b"KDMCPBBBB")
    _, markers = rec.feed(b"no newline at end0: kd> KDMCPBBBB\r\n0: kd> ")
    assert markers and markers[0].output_end == len(b"no newline at end")


def test_event_words_inside_a_line_are_not_events():
    rec = StreamRecognizer()
    events, _ = rec.feed(b"note: Breakpoint 0 hit is printed by kd\r\nx Waiting to reconnect...\r\n")
    assert events == []


def test_overlong_line_is_bounded_and_not_a_prompt():
    rec = StreamRecognizer()
    rec.feed(b"x" * 200_000)
    assert rec.prompt is None
    events, _ = rec.feed(b"Breakpoint 1 hit\r\nBreakpoint 2 hit\r\n0: kd> ")
    # The first "line" began 200 KB earlier, so it is not at line start.
    assert [e.number for e in events] == [2]
    assert rec.prompt is not None


def test_break_banner_from_the_corpus():
    sample = CORPUS / "connect" / "04.txt"
    rec = StreamRecognizer()
    events, _ = rec.feed(sample.read_bytes())
    # kd_own: "Symbol search path is:", "KDTARGET: Refreshing KD connection" (no event, no DbgPrint)
    assert [e.kind for e in events if e.kind != "kd_own"] == ["connected", "break_in"]


def test_open_line_start_is_a_short_unterminated_line_at_line_start():
    rec = StreamRecognizer()
    assert rec.open_line_start is None
    rec.feed(b"done\r\nBreakpo")
    assert rec.open_line_start == len(b"done\r\n")  # may still become "Breakpoint 0 hit"
    rec.feed(b"int 0 hit\r\n")
    assert rec.open_line_start is None
    rec.feed(b"y" * 300)
    assert rec.open_line_start is None  # too long to become a prompt or an event line


def test_lastevents_report_of_a_stop_is_not_an_exception_of_its_own():
    # .lastevent's answer after a break-in names the break already reported (its own stop
    # kind is what the machine drops): before, the kd exception pattern read it as a new one.
    r = StreamRecognizer()
    events, _ = r.feed(b"Last event: 1092.5d0: Break instruction exception - code 80000003 (first chance)\n")
    assert [(e.kind, e.detail) for e in events] == [("last_event", "other")]
    events, _ = r.feed(b"Last event: 18830.55e0: Exit process 0:18830, code 0\n")
    assert [(e.kind, e.detail) for e in events] == [("last_event", "exit_process")]


def test_a_marker_echo_cut_by_kds_answer_is_not_taken_for_a_prompt():
    # ".echo s3-301\r\n" echoed, then "." of the marker line, kd's answer, the echo's rest, and
    # kd's own marker line: the command ends at kd's marker, not at the cut echo.
    r = StreamRecognizer()
    r.add_marker(b"KDMCPX301")
    data = b".echo s3-301\r\n.s3-301\r\necho KDMCPX301\r\nKDMCPX301\r\n"
    _, markers = r.feed(data)
    assert [(m.output_end, m.prompt_text) for m in markers] == [(data.rindex(b"KDMCPX301"), None)]


def test_a_cut_marker_echo_behind_kds_prompt_is_not_taken_for_a_prompt():
    r = StreamRecognizer()
    r.add_marker(b"KDMCPX50")
    data = b".echo s4-49\r\n.ecs4-49\r\n0: kd> ho KDMCPX50\r\nKDMCPX50\r\n"
    _, markers = r.feed(data)
    assert [(m.output_end, m.prompt_text) for m in markers] == [(data.rindex(b"KDMCPX50"), None)]


# One line per alternative of the event pattern, in kd's and cdb's words (the corpus has most).
_EVENT_LINES = [
    b"Break instruction exception - code 80000003 (first chance)",
    b"(1a2c.3b4): Break instruction exception - code 80000003 (first chance)",
    b"Breakpoint 3 hit",
    b"*** Fatal System Error: 0x000000d1",
    b"(1a2c.3b4): Access violation - code c0000005 (first chance)",
    b"Access violation - code c0000005 (!!! second chance !!!)",
    b"Shutdown occurred at (Sun Nov 29 12:00:00.000 2026 (UTC + 0:00))...unloading all symbol tables.",
    b"Waiting to reconnect...",
    b"Kernel Debugger connection established.",
    b"CommandLine: app.exe",
    b"MACHINE\\User (tcp 10.0.0.1:1234) connected at Mon Jan 01 00:00:00 2026",
    b"0: kd> MACHINE\\User (npipe x) connected at Mon Jan 01 00:00:00 2026",
    b"Retry sending the same data packet for 64 times.",
    b"ModLoad: 00007ff9`9cd70000 00007ff9`9cda0000   C:\\WINDOWS\\System32\\IMM32.DLL",
    b"Unload module WUDFRd.sys at fffff803`7fac0000",
    b"Last event: Load module KmdfHelloWorld.sys at fffff806`30580000",
    b"Last event: 18830.55e0: Exit process 0:18830, code 0",
    b"KDTARGET: Refreshing KD connection",
    b"  debugger time: Mon Jan  1 00:00:00.000 2026",
    b"Symbol search path is: srv*",
    b"Executable search path is: ",
    b"************* Path validation summary **************",
    b"************* Symbol Path validation summary **************",
    b"Response                         Time (ms)     Location",
    b"Deferred                                       srv*",
    b"OK                                             C:\\symbols",
    b"Failed      C:\\nowhere",
    b"WARNING: Whitespace at start of path element",
    b"NatVis script successfully loaded from 'C:\\x.natvis'",
    b"+" + b"-" * 70 + b"+",
    b"|" + b" " * 70 + b"|",
    b"bp1 at nt!NtCreateFile failed",
    b"Unable to insert breakpoint 0 at 00da0001, Win32 error 0n998",
    b"No runnable debuggees error in 'g'",
    b"       ^ No runnable debuggees error in 'g'",
]


@pytest.mark.parametrize("line", _EVENT_LINES)
def test_every_kind_of_event_line_passes_the_keyword_test(line: bytes) -> None:
    """The keyword test only skips the event pattern: a line it would let through unmatched must
    hold no event. Each line here is an event (checked), and passes the test."""
    text = line + b"\r\n"
    assert _EVENT_RE.search(text) is not None
    assert _may_hold_event(text)


def test_no_event_line_of_the_fixtures_is_skipped_by_the_keyword_test() -> None:
    """Every line of kd's and cdb's real output kept in fixtures/ that the event patterns match
    passes the keyword test (445 files: transcripts, sessions, command outputs)."""
    fixtures = CORPUS.parent
    seen = 0
    for path in sorted(fixtures.rglob("*")):
        if path.suffix not in (".txt", ".log") or not path.is_file():
            continue
        for line in path.read_bytes().splitlines(keepends=True):
            if _EVENT_RE.search(line) or _MIDLINE_MODLOAD_RE.search(line):
                seen += 1
                assert _may_hold_event(line), (path.name, line)
    assert seen > 100
