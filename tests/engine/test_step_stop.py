"""A stop with no reason line (p, t, gu, g ADDRESS) is a ``step`` event, not DbgPrint (issue 15)."""

from __future__ import annotations

import pytest

from kdmcp.engine.step_stop import held_start, step_location
from kdmcp.parse.register_names import ARM_STATUS_REGISTERS, INTEGER_CONTEXT, IOPL, SEGMENT_REGISTERS
from tests.engine.test_machine import PROMPT, S, _connected_and_broken, _steps

# kd after "p" (corpus misc/08 has the register block; the simulator prints the same).
REGISTERS = (
    b"rax=0000000000000000 rbx=ffffe70f3003e040 rcx=0000000000000000\r\n"
    b"rdx=0000000000000000 rsi=0000000000000000 rdi=ffffe70f2d1d2080\r\n"
    b"rip=fffff80062c3a1e5 rsp=ffffd48f70145e20 rbp=ffffd48f70145ea0\r\n"
    b" r8=0000000000000000  r9=0000000000000000 r10=0000000000000000\r\n"
    b"r11=0000000000000000 r12=0000000000000000 r13=0000000000000000\r\n"
    b"r14=0000000000000000 r15=0000000000000000\r\n"
    b"iopl=0         nv up ei pl zr na pe nc\r\n"
    b"cs=0010  ss=0018  ds=002b  es=002b  fs=0053  gs=002b             efl=00000246\r\n"
)
LOCATION = b"nt!NtCreateFile+0x5:\r\nfffff800`62c3a1e5 57              push    rdi\r\n"


def test_a_step_is_a_step_event_with_the_new_location():
    m = _connected_and_broken()
    m.go_sent(b"p\r\n")
    out = m.feed(b"p\r\n" + REGISTERS + LOCATION + PROMPT)
    assert _steps(out) == [("running", "running", "step"), ("running", "broken", None)]
    event = out[0].event
    assert event is not None
    assert event.text == "nt!NtCreateFile+0x5:\nfffff800`62c3a1e5 57              push    rdi"
    assert [e.kind for e in m.events].count("dbgprint") == 0


@pytest.mark.parametrize("cut", [5, 40, len(REGISTERS), len(REGISTERS) + 10, len(REGISTERS + LOCATION)])
def test_the_stop_is_recognised_however_the_chunks_fall(cut):
    m = _connected_and_broken()
    m.go_sent(None)
    stream = REGISTERS + LOCATION + PROMPT
    assert [t.event for t in m.feed(stream[:cut]) if t.event] == []  # held back: it may be the stop
    out = m.feed(stream[cut:])
    assert [t.event.kind for t in out if t.event] == ["step"] and m.state == S.broken


def test_gu_prints_only_the_location():
    m = _connected_and_broken()
    m.go_sent(None)
    out = m.feed(b"nt!KiSystemServiceCopyEnd+0x25:\r\nfffff800`62a08bb5 41b801000000    mov     r8d,1\r\n" + PROMPT)
    assert [t.event.kind for t in out if t.event] == ["step"]


def test_dbgprint_before_the_stop_stays_dbgprint():
    m = _connected_and_broken()
    m.go_sent(None)
    out = m.feed(b"myfault: IOCTL 0x83362000 received\r\n" + LOCATION + PROMPT)
    assert [(t.event.kind, t.event.text) for t in out if t.event] == [
        ("dbgprint", "myfault: IOCTL 0x83362000 received\r\n"),
        ("step", "nt!NtCreateFile+0x5:\nfffff800`62c3a1e5 57              push    rdi")]


def test_lines_that_only_look_like_a_stop_are_released_as_dbgprint():
    m = _connected_and_broken()
    m.go_sent(None)
    assert [t.event for t in m.feed(b"state:\r\n") if t.event] == []  # held: a location line, maybe
    out = m.feed(b"driver ready\r\n")
    assert [t.event.text for t in out if t.event] == ["state:\r\ndriver ready\r\n"]


def test_held_lines_before_a_break_in_are_dbgprint():
    m = _connected_and_broken()
    m.go_sent(None)
    m.feed(b"rax=1\r\n")
    out = m.feed(b"Break instruction exception - code 80000003 (first chance)\r\n" + PROMPT)
    assert [t.event.kind for t in out if t.event] == ["dbgprint", "break_in"]


def test_a_location_without_an_instruction_is_not_a_step():
    m = _connected_and_broken()
    m.go_sent(None)
    out = m.feed(b"phase:\r\n" + PROMPT)
    assert [t.event.kind for t in out if t.event] == ["dbgprint"]


def test_held_start_and_step_location():
    assert held_start(b"hello\r\n" + LOCATION) == len(b"hello\r\n")
    assert held_start(b"hello\r\n") == len(b"hello\r\n")
    assert step_location(REGISTERS + b"fffff800`62c3a1e5 57              push    rdi\r\n") is not None  # no symbol
    assert step_location(b"fffff800`62c3a1e5 57              push    rdi\r\n") is None


@pytest.mark.parametrize(
    "name", sorted({*INTEGER_CONTEXT, *SEGMENT_REGISTERS, IOPL, *ARM_STATUS_REGISTERS}),
)
def test_every_register_name_kd_prints_opens_a_held_line(name: str):
    """The held-line rule reads a register line by its shape (``name=hex``), not by a list of
    names, so ARM64's ``x0=``/``fp=`` lines hold too; every x86/x64 name the parse layer knows
    (kdmcp/parse/register_names.py) must fit that shape."""
    line = f"{name}=00000246 rbx=0000000000000000\r\n".encode()
    assert held_start(b"hello\r\n" + line) == len(b"hello\r\n"), name


def test_a_counted_step_reports_its_last_location_and_no_dbgprint():
    m = _connected_and_broken()
    m.go_sent(None, step=True)
    later = LOCATION.replace(b"+0x5:", b"+0x6:").replace(b"1e5 57      ", b"1e6 57      ")
    out = m.feed((REGISTERS + LOCATION) * 3 + REGISTERS + later + PROMPT)
    assert [(t.event.kind, t.event.text.split("\n")[0]) for t in out if t.event] == [("step", "nt!NtCreateFile+0x6:")]
    assert m.state == S.broken


def test_a_breakpoint_hit_during_a_step_is_the_breakpoint():
    m = _connected_and_broken()
    m.go_sent(None, step=True)
    out = m.feed(b"Breakpoint 1 hit\r\n" + LOCATION + PROMPT)
    assert [t.event.kind for t in out if t.event] == ["breakpoint"]
