"""Fast tier: the run-control tools' argument checks, what bl does not say, and their text lines."""

from __future__ import annotations

import pytest

from kdmcp.errors import InvalidArgument
from kdmcp.server.tools.run.bp_book import BreakpointBook, BreakpointNote
from kdmcp.server.tools.run.control import _CONDITIONAL_RE, _check_strings
from kdmcp.server.tools.run.models import RunToResult, SetBreakpointResult, StepResult, WaitResult


@pytest.mark.parametrize(("condition", "command", "process"), [
    ('a"b', None, None), (None, 'k"; .shell x; "', None), ("x\ny", None, None), (None, "r\rk", None),
    ("{x}", None, None), (None, "{.echo a", None), (None, None, "zz"), (None, None, "1234 5678"), (" ", None, None),
])
def test_strings_that_would_leave_kds_quoted_string_are_refused(condition, command, process):
    with pytest.raises(InvalidArgument):
        _check_strings(condition, command, process)


def test_good_strings_pass():
    _check_strings("@rcx==0 and poi(@rdx)!=0", ".if (1) {r rax}; gc", "ffffe70f`2d1d2080")
    _check_strings(None, None, "0xffffe70f2d1d2080")


def test_a_condition_is_read_back_from_kds_conditional_form():
    m = _CONDITIONAL_RE.fullmatch(".if (@rcx==0) {r rcx; k} .else {gc}")
    assert m is not None and m["cond"] == "@rcx==0" and m["cmd"] == "r rcx; k"
    assert _CONDITIONAL_RE.fullmatch("r rcx; gc") is None


def test_the_book_forgets_what_bl_no_longer_lists():
    book = BreakpointBook()
    book.note("s1", 0, BreakpointNote(kind="code", expression="nt!X", since_seq=3, one_shot=True))
    book.note("s1", 1, BreakpointNote(kind="deferred", expression="d!E", since_seq=3))
    book.keep_only("s1", {1})
    assert book.get("s1", 0) is None and book.get("s1", 1) is not None and book.get("s2", 1) is None


BASE = {"session_id": "s1", "state": "broken", "command": "", "output": "", "output_id": "s1:0-0",
        "output_bytes": 0, "elapsed_ms": 1.0}


def test_text_lines_say_what_the_raw_output_does_not():
    assert SetBreakpointResult.text_lines({**BASE, "breakpoint": {"id": 1, "unresolved": True, "symbol": "d!E"}}) == [
        "breakpoint 1 deferred: d!E (set when its module loads)"]
    running = {**BASE, "state": "running", "waited_s": 0.2}
    assert WaitResult.text_lines(running)[0].startswith("still running after 0.2 s (not an error")
    assert StepResult.text_lines({**BASE, "state": "running"})[0].startswith("still running")
    hit = {**BASE, "outcome": "hit", "target": "0x1", "location": {"ip": "0x1", "symbol": "nt!X", "processor": 2}}
    assert RunToResult.text_lines(hit) == ["hit 0x1", "at nt!X (processor 2)"]
    elsewhere = {**hit, "outcome": "stopped_elsewhere", "stop": {"reason": "breakpoint", "breakpoint": 3}}
    assert RunToResult.text_lines(elsewhere)[1] == "stopped: breakpoint 3"
